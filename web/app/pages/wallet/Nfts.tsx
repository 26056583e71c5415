/**
 * NFTs of the platform's collections. Their pictures are usually `data:` URIs inside the token's
 * metadata (the demo collections' SVGs); the page's policy allows `data:` images, and an SVG in an
 * <img> runs no script.
 *
 * NFTs arriving are not announced live (the chain follower indexes them without an event): the
 * list is read again when the tab comes back into view, on a wallet event, and with "Refresh".
 */
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../../lib/api.ts";
import { shortHex } from "../../lib/format.ts";
import { userEvents } from "../../lib/user-events.ts";
import { type Nft, walletApi } from "./api.ts";

export function Nfts() {
  const [items, setItems] = useState<Nft[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = () => {
    setBusy(true);
    return walletApi.nfts({ limit: 48 }).then((page) => {
      setItems(page.items);
      setCursor(page.nextCursor);
      setError(null);
    }).catch((err) => setError(describeError(err))).finally(() => setBusy(false));
  };
  useEffect(() => {
    void load();
    const visible = () => document.visibilityState === "visible" && void load();
    document.addEventListener("visibilitychange", visible);
    const off = userEvents.on((e) => {
      if (e.event === "wallet.transaction.updated") void load();
    });
    return () => {
      document.removeEventListener("visibilitychange", visible);
      off();
    };
  }, []);
  return (
    <section>
      <div class="card-head">
        <h1>NFTs</h1>
        <button type="button" class="secondary small" disabled={busy} onClick={load}>
          Refresh
        </button>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? (!error && <p class="muted" role="status">Loading…</p>)
        : items.length === 0
        ? <p>No NFTs of the platform's collections yet.</p>
        : (
          <ul class="nft-grid" data-testid="nfts">
            {items.map((n) => (
              <li key={`${n.contract}:${n.tokenId}`} class="nft">
                {n.image
                  ? <img src={n.image} alt={n.name ?? `Token ${n.tokenId}`} loading="lazy" />
                  : <span class="nft-placeholder" aria-hidden="true">#{n.tokenId}</span>}
                <div>
                  <strong>{n.name ?? `#${n.tokenId}`}</strong>
                  <br />
                  <span class="muted small">
                    {n.collection.name ?? shortHex(n.contract)} · {n.standard}
                    {n.standard === "ERC1155" ? ` · × ${n.balance}` : ""}
                  </span>
                </div>
              </li>
            ))}
          </ul>
        )}
      {cursor && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            try {
              const page = await walletApi.nfts({ limit: 48, cursor });
              setItems([...(items ?? []), ...page.items]);
              setCursor(page.nextCursor);
            } catch (err) {
              setError(describeError(err));
            }
          }}
        >
          Load more
        </button>
      )}
    </section>
  );
}
