/** Balances (one multicall at one block) and the history, out and in, live. */
import { useEffect, useId, useState } from "preact/hooks";
import { describeError } from "../../lib/client.ts";
import { fullTime, shortHex } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { CopyButton } from "../../components/CopyButton.tsx";
import { Pill } from "../../components/Pill.tsx";
import { statusTone } from "../store/types.ts";
import type { Transaction } from "./types.ts";
import { displayAmount } from "./units.ts";
import { counterpartyLabel, networkName } from "./network.ts";
import { LookAlikeBadge } from "./TokenBadge.tsx";
import type { WalletState } from "./wallet-state.ts";

export function Overview({ state }: { state: WalletState }) {
  const { wallet, balances } = state;
  return (
    <section>
      <h1>Wallet</h1>
      <p class="address-line">
        <span class="muted">Your address</span>{" "}
        <span class="mono break" data-testid="wallet-address">{wallet.address}</span>{" "}
        <CopyButton text={wallet.address} label="Copy address" />
      </p>
      <p class="muted small">
        <span data-testid="network-name">{networkName(wallet.chainId)}</span>
        {state.blockNumber !== null ? ` · balances at block ${state.blockNumber}` : ""}
      </p>
      {state.balanceError && <p class="error" role="alert">{state.balanceError}</p>}
      {balances === null
        ? <p class="muted" role="status">Loading balances…</p>
        : (
          <ul class="balances" data-testid="balances">
            {balances.map((b) => (
              <li key={b.token.address ?? b.token.symbol} data-symbol={b.token.symbol}>
                <span class="token-symbol">{b.token.symbol}</span>
                <span class="token-name muted small">
                  {b.token.name}
                  <LookAlikeBadge
                    token={b.token}
                    all={balances.map((x) =>
                      x.token
                    )}
                  />
                </span>
                <span class="token-balance" data-testid={`balance-${b.token.symbol}`}>
                  {b.balance === null ? "—" : displayAmount(b.balance, b.token.decimals)}
                </span>
              </li>
            ))}
          </ul>
        )}
      <p>
        <Link class="button" href="/wallet/send">Send</Link>{" "}
        <Link class="button secondary" href="/wallet/receive">Receive</Link>
      </p>
      <History state={state} />
    </section>
  );
}

const DIRECTION = { out: "Sent", in: "Received" };

function History({ state }: { state: WalletState }) {
  const [direction, setDirection] = useState("");
  const [status, setStatus] = useState("");
  const [error, setError] = useState<string | null>(null);
  const dirId = useId();
  const statusId = useId();
  useEffect(() => {
    state.loadTransactions({ direction, status }).catch((err) => setError(describeError(err)));
  }, [direction, status]);
  const shown =
    state.transactions?.filter((t) =>
      (!direction || t.direction === direction) && (!status || t.status === status)
    ) ?? null;
  return (
    <section aria-labelledby="history-h">
      <h2 id="history-h">History</h2>
      <div class="filters">
        <div>
          <label for={dirId}>Direction</label>
          <select
            id={dirId}
            value={direction}
            onChange={(e) => setDirection(e.currentTarget.value)}
          >
            <option value="">Both</option>
            <option value="out">Sent</option>
            <option value="in">Received</option>
          </select>
        </div>
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            {["pending", "submitted", "confirmed", "failed", "expired", "cancelled"].map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
          </select>
        </div>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {shown === null
        ? <p class="muted" role="status">Loading history…</p>
        : shown.length === 0
        ? <p>No transactions yet.</p>
        : (
          <ul class="plain-list tx-list" data-testid="transactions" aria-live="polite">
            {shown.map((t) => <TransactionRow key={t.id} t={t} />)}
          </ul>
        )}
      {state.nextCursor && (
        <button
          type="button"
          class="secondary"
          onClick={() =>
            state.loadTransactions({ direction, status }, true).catch((err) =>
              setError(describeError(err))
            )}
        >
          Load more
        </button>
      )}
    </section>
  );
}

export function TransactionRow({ t }: { t: Transaction }) {
  const other = t.direction === "out" ? t.to : t.from;
  const amount = `${displayAmount(t.amount, t.token.decimals)} ${t.token.symbol}`;
  const c = t.counterparty;
  return (
    <li class="row-item tx" data-transaction-id={t.id} data-status={t.status}>
      <span>
        {c?.type === "mint"
          ? (
            <strong>
              {t.direction === "in" ? "Funding" : "Minted"}: {amount}
            </strong>
          )
          : (
            <>
              <strong>{DIRECTION[t.direction]} {amount}</strong>{" "}
              <span class="muted">{t.direction === "out" ? "to" : "from"}</span> {c?.type === "user"
                ? <strong data-testid="tx-counterparty" title={other}>{c.name}</strong>
                : (
                  <span class="mono" data-testid="tx-counterparty" title={other}>
                    {counterpartyLabel(t)}
                  </span>
                )}
            </>
          )}
        <br />
        <span class="muted small">
          {fullTime(t.createdAt)}
          {t.hash && (
            <>
              {" "}· tx <span class="mono" title={t.hash}>{shortHex(t.hash)}</span>
            </>
          )}
          {t.confirmations !== null && t.status === "confirmed"
            ? ` · ${t.confirmations} confirmation${t.confirmations === 1 ? "" : "s"}`
            : ""}
          {t.error ? ` · ${t.error}` : ""}
        </span>
      </span>
      <Pill tone={t.status === "confirmed" ? "done" : statusTone(t.status)} testId="tx-status">
        {t.status}
      </Pill>
    </li>
  );
}
