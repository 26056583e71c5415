/**
 * Sending, in two steps the API keeps apart: POST /api/wallet/transfer prepares a `pending`
 * transfer (after the funds check; nothing is signed), the page shows what will happen, and only
 * "Confirm and send" (POST /api/wallet/transactions/:id/confirm) signs and broadcasts it. The
 * transfer then moves live: submitted, confirmed (or failed). "Don't send"
 * (POST /api/wallet/transactions/:id/cancel) cancels it, so its funds are free again at once; an
 * unconfirmed transfer otherwise expires.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { ApiError, client, data, describeError } from "../../lib/client.ts";
import { fullTime, shortHex } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { forgetRetryKey, retryKey } from "../../lib/retry-key.ts";
import { Pill } from "../../components/Pill.tsx";
import { statusTone } from "../store/types.ts";
import { type Balance, tokenRef, type Transaction } from "./types.ts";
import { networkName } from "./network.ts";
import { displayAmount, parseUnits } from "./units.ts";
import type { WalletState } from "./wallet-state.ts";

interface Person {
  id: string;
  name: string;
}

function PersonPicker(
  { value, onChange }: { value: Person | null; onChange: (p: Person | null) => void },
) {
  const id = useId();
  const [search, setSearch] = useState("");
  const [people, setPeople] = useState<Person[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!search.trim()) return setPeople([]);
    const timer = setTimeout(() => {
      client.GET("/api/users", { params: { query: { search: search.trim(), limit: 8 } } })
        .then(data)
        .then((r) => {
          setPeople(r.items);
          setError(null);
        })
        .catch((err) => setError(describeError(err)));
    }, 200);
    return () => clearTimeout(timer);
  }, [search]);
  if (value) {
    return (
      <p class="picked">
        To <strong data-testid="recipient">{value.name}</strong>{" "}
        <button type="button" class="link" onClick={() => onChange(null)}>Change</button>
      </p>
    );
  }
  return (
    <div>
      <label for={id}>Find a person by name</label>
      <input
        id={id}
        type="search"
        value={search}
        onInput={(e) => setSearch(e.currentTarget.value)}
      />
      {error && <p class="error small" role="alert">{error}</p>}
      {people.length > 0 && (
        <ul class="people" aria-label="Matching people">
          {people.map((p) => (
            <li key={p.id}>
              <button type="button" class="person-choice" onClick={() => onChange(p)}>
                {p.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Send({ state }: { state: WalletState }) {
  const [mode, setMode] = useState<"person" | "address">("person");
  const [person, setPerson] = useState<Person | null>(null);
  const [address, setAddress] = useState("");
  const [tokenKey, setTokenKey] = useState("native");
  const [amount, setAmount] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<{ t: Transaction; to: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const ids = { address: useId(), token: useId(), amount: useId() };
  const balances = state.balances ?? [];
  const chosen: Balance | undefined = balances.find((b) => tokenRef(b.token) === tokenKey) ??
    balances[0];
  // The live copy of the transfer being confirmed.
  const native = balances.find((b) => b.token.kind === "native")?.token;
  const nativeSymbol = native?.symbol ?? "ETH";
  const live = pending ? state.transactions?.find((t) => t.id === pending.t.id) ?? pending.t : null;

  async function review(e: Event) {
    e.preventDefault();
    setError(null);
    setNotice(null);
    if (!chosen) return setError("The balances are not loaded yet.");
    const to = mode === "person" ? (person ? { userId: person.id } : null) : address.trim();
    if (!to) return setError(mode === "person" ? "Choose who to send to." : "Enter an address.");
    if (typeof to === "string" && !/^0x[0-9a-fA-F]{40}$/.test(to)) {
      return setError("An address is 0x followed by 40 hexadecimal characters.");
    }
    const base = parseUnits(amount, chosen.token.decimals);
    if (base === null || BigInt(base) <= 0n) {
      return setError(`Enter an amount of ${chosen.token.symbol}, more than zero.`);
    }
    setBusy(true);
    const body = { to, token: tokenRef(chosen.token), amount: base };
    // Kept while this same transfer is reviewed again: a lost answer must not make a second one.
    const retry = `transfer:${state.wallet.address}`;
    try {
      const { transaction: t } = data(
        await client.POST("/api/wallet/transfer", {
          body,
          headers: { "idempotency-key": retryKey(retry, body) },
        }),
      );
      forgetRetryKey(retry);
      setPending({ t, to: mode === "person" ? person!.name : address.trim() });
      state.upsert(t);
    } catch (err) {
      // Refused for good (a 4xx): nothing was made. Unknown (no answer, a 5xx): the same key.
      if (err instanceof ApiError && err.status < 500) forgetRetryKey(retry);
      if (err instanceof ApiError && err.code === "insufficient_funds") {
        setError(
          `Not enough ${chosen.token.symbol}: the balance less what is on its way` +
            (chosen.token.kind === "native" ? " and the network fee" : "") + " is too low.",
        );
      } else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  async function confirm() {
    if (!pending) return;
    setBusy(true);
    setError(null);
    try {
      state.upsert(
        data(
          await client.POST("/api/wallet/transactions/{id}/confirm", {
            params: { path: { id: pending.t.id } },
          }),
        ).transaction,
      );
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  async function dontSend() {
    if (!pending) return;
    setBusy(true);
    setError(null);
    try {
      state.upsert(
        data(
          await client.POST("/api/wallet/transactions/{id}/cancel", {
            params: { path: { id: pending.t.id } },
          }),
        ).transaction,
      );
      state.reloadBalances();
      setPending(null);
      setNotice("Not sent: the transfer is cancelled and its funds are free again.");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  if (pending && live) {
    const done = live.status !== "pending";
    return (
      <section>
        <h1>{done ? "Sending" : "Confirm the transfer"}</h1>
        <div class="card confirm-card" data-transaction-id={live.id}>
          <p class="big">
            Send{" "}
            <strong>
              {displayAmount(live.amount, live.token.decimals, 18)} {live.token.symbol}
            </strong>{" "}
            to <strong>{pending.to}</strong>
          </p>
          <p class="muted small">
            To address <span class="mono break">{live.to}</span>
          </p>
          {live.maxFee !== null && (
            <p data-testid="network-fee">
              Network fee: at most{" "}
              <strong>
                {displayAmount(live.maxFee, native?.decimals ?? 18, 8)} {nativeSymbol}
              </strong>, paid from your {nativeSymbol} balance on{" "}
              {networkName(state.wallet.chainId)}.
            </p>
          )}
          <p>
            Status:{" "}
            <Pill
              tone={live.status === "confirmed" ? "done" : statusTone(live.status)}
              testId="transfer-status"
            >
              {live.status}
            </Pill>
            {live.hash && (
              <span class="muted small">
                {` · tx `}
                <span class="mono" title={live.hash}>{shortHex(live.hash)}</span>
              </span>
            )}
          </p>
          {!done && (
            <>
              <p>
                Nothing has been signed yet. Check the recipient and the amount: a transfer on the
                chain cannot be taken back.
                {live.expiresAt && ` Unconfirmed, it expires ${fullTime(live.expiresAt)}.`}
              </p>
              <div class="actions">
                <button type="button" disabled={busy} onClick={confirm}>
                  {busy ? "Signing…" : "Confirm and send"}
                </button>
                <button
                  type="button"
                  class="secondary"
                  disabled={busy}
                  onClick={dontSend}
                >
                  Don't send
                </button>
              </div>
            </>
          )}
          {live.status === "submitted" && (
            <p role="status">Sent to the network; waiting for it to be confirmed…</p>
          )}
          {live.status === "confirmed" && (
            <p class="success" role="status">
              Confirmed in block {live.blockNumber}.{" "}
              <Link href="/wallet/overview">Back to the wallet</Link>
            </p>
          )}
          {live.status === "failed" && (
            <p class="error" role="alert">The transfer failed: {live.error ?? "unknown reason"}.</p>
          )}
          {live.status === "expired" && (
            <p class="error" role="alert">It expired before it was confirmed. Nothing was sent.</p>
          )}
          {live.status === "cancelled" && <p role="status">Cancelled. Nothing was sent.</p>}
          {error && <p class="error" role="alert">{error}</p>}
          {done && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setPending(null);
                setAmount("");
              }}
            >
              Send another
            </button>
          )}
        </div>
      </section>
    );
  }

  return (
    <section>
      <h1>Send</h1>
      {notice && <p class="notice" role="status" data-testid="send-notice">{notice}</p>}
      <form class="card send-form" onSubmit={review} noValidate>
        <fieldset class="choice">
          <legend>Send to</legend>
          <label class="check">
            <input
              type="radio"
              name="to-mode"
              checked={mode === "person"}
              onChange={() => setMode("person")}
            />{" "}
            A person on this platform
          </label>
          <label class="check">
            <input
              type="radio"
              name="to-mode"
              checked={mode === "address"}
              onChange={() => setMode("address")}
            />{" "}
            An address
          </label>
        </fieldset>
        {mode === "person" ? <PersonPicker value={person} onChange={setPerson} /> : (
          <div>
            <label for={ids.address}>Recipient address</label>
            <input
              id={ids.address}
              class="mono"
              spellcheck={false}
              autocomplete="off"
              placeholder="0x…"
              value={address}
              onInput={(e) => setAddress(e.currentTarget.value)}
            />
          </div>
        )}
        <div class="fields-grid">
          <div>
            <label for={ids.token}>Token</label>
            <select
              id={ids.token}
              value={chosen ? tokenRef(chosen.token) : ""}
              onChange={(e) => setTokenKey(e.currentTarget.value)}
            >
              {balances.map((b) => (
                <option key={tokenRef(b.token)} value={tokenRef(b.token)}>
                  {b.token.symbol} ({b.balance === null
                    ? "balance unknown"
                    : displayAmount(b.balance, b.token.decimals)} available)
                </option>
              ))}
            </select>
          </div>
          <div>
            <label for={ids.amount}>Amount{chosen ? ` (${chosen.token.symbol})` : ""}</label>
            <input
              id={ids.amount}
              inputMode="decimal"
              autocomplete="off"
              value={amount}
              onInput={(e) => setAmount(e.currentTarget.value)}
            />
          </div>
        </div>
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" disabled={busy || !balances.length}>
            {busy ? "Checking…" : "Review"}
          </button>
        </div>
        <p class="hint">
          Nothing is sent until you confirm on the next step.
        </p>
      </form>
    </section>
  );
}
