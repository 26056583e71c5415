/**
 * The wallet (a chunk of its own): balances and the live history, sending with a separate confirm
 * step, NFTs, adding a token, and exporting the key.
 *
 * What it shows is in the query cache (lib/query.ts): the wallet, the balances, the history (and,
 * in their sections, the tokens and NFTs). Live: `wallet.transaction.updated` on `user:<id>`
 * carries the transaction at each status change (and for incoming transfers); it is merged into
 * the cached history and the balances are read again, whichever section is open.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";
import { setTitle } from "../../lib/config.ts";
import { userEvents } from "../../lib/user-events.ts";
import { Area } from "../../components/SubNav.tsx";
import type { PageProps } from "../../lib/page.ts";
import {
  BALANCE_KEY,
  type Transaction,
  TRANSACTIONS_KEY,
  type Wallet,
  WALLET_KEY,
} from "./types.ts";
import { Overview } from "./Overview.tsx";
import { Send } from "./Send.tsx";
import { Receive } from "./Receive.tsx";
import { Nfts } from "./Nfts.tsx";
import { Tokens } from "./Tokens.tsx";
import { Export } from "./Export.tsx";
import type { WalletState } from "./wallet-state.ts";

const SECTIONS = [
  { id: "overview", label: "Balances and history" },
  { id: "send", label: "Send" },
  { id: "receive", label: "Receive" },
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

/** The history as read, with what came live merged in (newest first). */
interface History {
  items: Transaction[];
  nextCursor: string | null;
}

let balanceTimer: ReturnType<typeof setTimeout> | undefined;
/** Reads the balances again shortly, once for a burst of changes. */
function reloadBalances(): void {
  clearTimeout(balanceTimer);
  balanceTimer = setTimeout(
    () => void queryClient.invalidateQueries({ queryKey: BALANCE_KEY }),
    150,
  );
}

/** A transaction merged into the cached history. */
function upsert(t: Transaction): void {
  queryClient.setQueryData<History>(TRANSACTIONS_KEY, (was) => ({
    items: upsertInto(was?.items ?? null, t),
    nextCursor: was?.nextCursor ?? null,
  }));
}

userEvents.on((e) => {
  if (e.event !== "wallet.transaction.updated") return;
  upsert(e.payload as Transaction);
  reloadBalances();
});

export function WalletPage({ params }: PageProps) {
  const section = SECTIONS.find((s) => s.id === (params.section ?? "overview"));
  const walletQuery = useQuery({
    queryKey: WALLET_KEY,
    queryFn: () =>
      client.GET("/api/wallet", FRESH).then(
        (r) => data(r).wallet as Wallet | null,
        (err) => {
          if (err instanceof ApiError && err.status === 404) return null;
          throw err;
        },
      ),
  });
  const wallet = walletQuery.data;
  const error = walletQuery.error ? describeError(walletQuery.error) : null;
  const balance = useQuery({
    queryKey: BALANCE_KEY,
    queryFn: async () => data(await client.GET("/api/wallet/balance", FRESH)),
    enabled: !!wallet,
    staleTime: 0,
  });
  // The history is written by its reads and by live events: no fetch of its own.
  const history = useQuery<History>({ queryKey: TRANSACTIONS_KEY, enabled: false });
  const transactions = history.data?.items ?? null;
  const nextCursor = history.data?.nextCursor ?? null;

  useEffect(() => setTitle(section ? `${section.label} · Wallet` : "Wallet"), [section]);

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
    return (
      <NoWallet
        onCreated={(w) => queryClient.setQueryData<Wallet | null>(WALLET_KEY, w)}
      />
    );
  }

  const state: WalletState = {
    wallet,
    balances: balance.data?.balances ?? null,
    blockNumber: balance.data?.blockNumber ?? null,
    balanceError: balance.error ? describeError(balance.error) : null,
    transactions,
    nextCursor,
    reloadBalances,
    async loadTransactions(filters, more) {
      const page = data(
        await client.GET("/api/wallet/transactions", {
          params: {
            query: { ...filters, limit: 25, ...(more && nextCursor ? { cursor: nextCursor } : {}) },
          },
          ...FRESH,
        }),
      );
      queryClient.setQueryData<History>(TRANSACTIONS_KEY, (was) => {
        const list = was?.items ?? null;
        let next = more ? [...(list ?? [])] : [];
        // What arrived live while the page was read stays (upsertInto keeps the further status).
        if (!more && list) next = list.filter((t) => !page.items.some((x) => x.id === t.id));
        for (const t of page.items) next = upsertInto(next, t);
        return { items: next, nextCursor: page.nextCursor };
      });
    },
    upsert(t) {
      upsert(t);
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
      {section?.id === "receive" && <Receive wallet={wallet} />}
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
            onCreated(data(await client.POST("/api/wallet/create")).wallet);
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
