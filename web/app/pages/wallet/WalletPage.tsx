/**
 * The wallet (a chunk of its own): balances and the live history, sending with a separate confirm
 * step, NFTs, adding a token, and exporting the key.
 *
 * Live: `wallet.transaction.updated` on `user:<id>` carries the transaction at each status change
 * (and for incoming transfers); the history merges it in and the balances are read again.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, describeError } from "../../lib/api.ts";
import { setTitle } from "../../lib/config.ts";
import { userEvents } from "../../lib/user-events.ts";
import { Area } from "../../components/SubNav.tsx";
import type { PageProps } from "../../lib/page.ts";
import { type Balance, type Transaction, type Wallet, walletApi } from "./api.ts";
import { Overview } from "./Overview.tsx";
import { Send } from "./Send.tsx";
import { Nfts } from "./Nfts.tsx";
import { Tokens } from "./Tokens.tsx";
import { Export } from "./Export.tsx";
import type { WalletState } from "./wallet-state.ts";

const SECTIONS = [
  { id: "overview", label: "Balances and history" },
  { id: "send", label: "Send" },
  { id: "nfts", label: "NFTs" },
  { id: "tokens", label: "Tokens" },
  { id: "export", label: "Export key" },
] as const;

/** The transaction merged in (newest first), unless ours is further along. */
function upsertInto(list: Transaction[] | null, t: Transaction): Transaction[] {
  const current = list ?? [];
  const rank = (s: Transaction["status"]) =>
    ({ pending: 0, submitted: 1, confirmed: 2, failed: 2, expired: 2, cancelled: 2 })[s];
  const index = current.findIndex((x) => x.id === t.id);
  if (index < 0) {
    return [t, ...current].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  }
  const mine = current[index];
  // Confirmations keep growing once confirmed; a late copy of an earlier status is ignored.
  if (rank(mine.status) > rank(t.status)) return current;
  const next = current.slice();
  next[index] = t;
  return next;
}

export function WalletPage({ params }: PageProps) {
  const section = SECTIONS.find((s) => s.id === (params.section ?? "overview"));
  const [wallet, setWallet] = useState<Wallet | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [balances, setBalances] = useState<Balance[] | null>(null);
  const [blockNumber, setBlockNumber] = useState<number | null>(null);
  const [balanceError, setBalanceError] = useState<string | null>(null);
  const [transactions, setTransactions] = useState<Transaction[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);

  const reloadBalances = () => {
    if (timer.current !== null) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      timer.current = null;
      walletApi.balance().then((b) => {
        setBalances(b.balances);
        setBlockNumber(b.blockNumber);
        setBalanceError(null);
      }).catch((err) => setBalanceError(describeError(err)));
    }, 150);
  };

  useEffect(() => setTitle(section ? `${section.label} · Wallet` : "Wallet"), [section]);

  useEffect(() => {
    walletApi.wallet().then(({ wallet }) => {
      setWallet(wallet);
      reloadBalances();
    }).catch((err) => {
      if (err instanceof ApiError && err.status === 404) setWallet(null);
      else setError(describeError(err));
    });
    const off = userEvents.on((e) => {
      if (e.event !== "wallet.transaction.updated") return;
      setTransactions((list) => upsertInto(list, e.payload as Transaction));
      reloadBalances();
    });
    return () => {
      off();
      if (timer.current !== null) clearTimeout(timer.current);
    };
  }, []);

  if (wallet === undefined) {
    return (
      <div class="page">
        {error
          ? <p class="error" role="alert">{error}</p>
          : <p class="muted" role="status">Loading…</p>}
      </div>
    );
  }
  if (wallet === null) {
    return <NoWallet onCreated={setWallet} />;
  }

  const state: WalletState = {
    wallet,
    balances,
    blockNumber,
    balanceError,
    transactions,
    nextCursor,
    reloadBalances,
    async loadTransactions(filters, more) {
      const page = await walletApi.transactions({
        ...filters,
        limit: 25,
        cursor: more ? nextCursor : undefined,
      });
      setTransactions((list) => {
        let next = more ? [...(list ?? [])] : [];
        // What arrived live while the page was read stays (upsertInto keeps the further status).
        if (!more && list) next = list.filter((t) => !page.items.some((x) => x.id === t.id));
        for (const t of page.items) next = upsertInto(next, t);
        return next;
      });
      setNextCursor(page.nextCursor);
    },
    upsert(t) {
      setTransactions((list) => upsertInto(list, t));
      reloadBalances();
    },
  };

  return (
    <Area
      label="Wallet"
      current={section?.id}
      sections={SECTIONS.map((s) => ({ id: s.id, label: s.label, href: `/wallet/${s.id}` }))}
    >
      {section?.id === "overview" && <Overview state={state} />}
      {section?.id === "send" && <Send state={state} />}
      {section?.id === "nfts" && <Nfts />}
      {section?.id === "tokens" && <Tokens state={state} />}
      {section?.id === "export" && <Export wallet={wallet} />}
      {!section && (
        <>
          <h1>Not found</h1>
          <p>There is no section {params.section}.</p>
        </>
      )}
    </Area>
  );
}

function NoWallet({ onCreated }: { onCreated: (w: Wallet) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <div class="page narrow">
      <h1>Wallet</h1>
      <p>
        You have no wallet yet. The platform keeps its key for you, sealed, and signs only what you
        confirm.
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          try {
            onCreated((await walletApi.create()).wallet);
          } catch (err) {
            setError(describeError(err));
            setBusy(false);
          }
        }}
      >
        Create my wallet
      </button>
    </div>
  );
}
