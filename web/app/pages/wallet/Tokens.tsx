/** The wallet's tokens and adding an ERC-20 by its address (checked on the chain by the API). */
import { useId, useState } from "preact/hooks";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";
import { type Token, TOKENS_KEY } from "./types.ts";
import { LookAlikeBadge } from "./TokenBadge.tsx";
import type { WalletState } from "./wallet-state.ts";

const KINDS: Record<Token["kind"], string> = {
  native: "Native currency",
  utility: "Platform utility token",
  governance: "Platform governance token",
  staking: "Platform staking rewards",
  custom: "Added by you",
};

export function Tokens({ state }: { state: WalletState }) {
  const tokens = useQuery({
    queryKey: TOKENS_KEY,
    queryFn: async () => data(await client.GET("/api/wallet/tokens", FRESH)).items,
  });
  const items = tokens.data ?? null;
  const [address, setAddress] = useState("");
  const [formError, setError] = useState<string | null>(null);
  const error = formError ?? (tokens.error ? describeError(tokens.error) : null);
  const [added, setAdded] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const load = () => queryClient.invalidateQueries({ queryKey: TOKENS_KEY });
  return (
    <section>
      <h1>Tokens</h1>
      {items === null
        ? <p class="muted" role="status">Loading…</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Tokens table">
            <table data-testid="tokens">
              <caption class="visually-hidden">Your tokens</caption>
              <thead>
                <tr>
                  <th scope="col">Symbol</th>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Contract</th>
                </tr>
              </thead>
              <tbody>
                {items.map((t) => (
                  <tr key={t.address ?? t.symbol}>
                    <td>
                      <strong>{t.symbol}</strong>
                    </td>
                    <td>
                      {t.name}
                      <LookAlikeBadge token={t} all={items} />
                    </td>
                    <td>{KINDS[t.kind]}</td>
                    <td class="mono break">{t.address ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      <form
        class="card"
        onSubmit={async (e) => {
          e.preventDefault();
          setError(null);
          setAdded(null);
          const value = address.trim();
          if (!/^0x[0-9a-fA-F]{40}$/.test(value)) {
            return setError("An address is 0x followed by 40 hexadecimal characters.");
          }
          setBusy(true);
          try {
            const token = data(
              await client.POST("/api/wallet/tokens/add", { body: { address: value } }),
            );
            setAdded(`Added ${token.name} (${token.symbol}).`);
            setAddress("");
            await load();
            state.reloadBalances();
          } catch (err) {
            if (err instanceof ApiError && err.code === "not_erc20") {
              setError("That contract does not behave as an ERC-20 token.");
            } else if (err instanceof ApiError && err.status === 409) {
              setError("That token is already in your list.");
            } else setError(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <h2>Add a token</h2>
        <label for={id}>Token contract address</label>
        <input
          id={id}
          class="mono"
          spellcheck={false}
          autocomplete="off"
          placeholder="0x…"
          value={address}
          onInput={(e) => setAddress(e.currentTarget.value)}
        />
        {error && <p class="error" role="alert">{error}</p>}
        {added && <p class="success" role="status">{added}</p>}
        <div class="actions">
          <button type="submit" disabled={busy}>
            {busy ? "Checking the chain…" : "Add token"}
          </button>
        </div>
      </form>
    </section>
  );
}
