/**
 * NFTs of the platform's collections. Their pictures are usually `data:` URIs inside the token's
 * metadata (the demo collections' SVGs); the page's policy allows `data:` images, and an SVG in an
 * <img> runs no script.
 */
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../../lib/api.ts";
import { shortHex } from "../../lib/format.ts";
import { type Nft, walletApi } from "./api.ts";

export function Nfts() {
  const [items, setItems] = useState<Nft[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    walletApi.nfts({ limit: 48 }).then((page) => {
      setItems(page.items);
      setCursor(page.nextCursor);
    }).catch((err) => setError(describeError(err)));
  }, []);
  return (
    <section>
      <h1>NFTs</h1>
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
