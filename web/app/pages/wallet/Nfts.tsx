/**
 * NFTs of the platform's collections. Their pictures are usually `data:` URIs inside the token's
 * metadata (the demo collections' SVGs); the page's policy allows `data:` images, and an SVG in an
 * <img> runs no script.
 *
 * NFTs arriving are not announced live (the chain follower indexes them without an event): the
 * list is read again when the tab comes back into view, on a wallet event, and with "Refresh".
 */
import { useEffect, useState } from "preact/hooks";
import { client, data, describeError, FRESH } from "../../lib/client.ts";
import { shortHex } from "../../lib/format.ts";
import { queryClient, refreshPages, useInfiniteQuery } from "../../lib/query.ts";
import { userEvents } from "../../lib/user-events.ts";
import type { Nft } from "./types.ts";

const NFTS_KEY = ["wallet", "nfts"] as const;

// A transfer may have moved an NFT: read them again.
userEvents.on((e) => {
  if (e.event === "wallet.transaction.updated") {
    void refreshPages(NFTS_KEY);
  }
});

export function Nfts() {
  const nfts = useInfiniteQuery({
    queryKey: NFTS_KEY,
    queryFn: async ({ pageParam }) =>
      data(
        await client.GET("/api/wallet/nfts", {
          params: { query: { limit: 48, ...(pageParam ? { cursor: pageParam } : {}) } },
          ...FRESH,
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    staleTime: 0,
  });
  const items: Nft[] | null = nfts.data?.pages.flatMap((page) => page.items) ?? null;
  const [moreError, setError] = useState<string | null>(null);
  const error = moreError ?? (nfts.error ? describeError(nfts.error) : null);
  const busy = nfts.isFetching;
  const load = () => {
    setError(null);
    return queryClient.invalidateQueries({ queryKey: NFTS_KEY });
  };
  useEffect(() => {
    const visible = () => document.visibilityState === "visible" && void load();
    document.addEventListener("visibilitychange", visible);
    return () => document.removeEventListener("visibilitychange", visible);
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
      {nfts.hasNextPage && (
        <button
          type="button"
          class="secondary"
          disabled={nfts.isFetchingNextPage}
          onClick={async () => {
            const next = await nfts.fetchNextPage();
            if (next.error) setError(describeError(next.error));
          }}
        >
          Load more
        </button>
      )}
    </section>
  );
}
