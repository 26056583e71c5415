/**
 * The catalog: full-text search, filters (category, vendor, price, in stock), sorts, facets with
 * their counts (each facet counts every filter but its own, as the API computes them), and
 * "Load more" through the keyset cursor. The filters live in the address (`/store?q=…`), so the
 * back button and a shared link keep them.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { describeError } from "../../lib/client.ts";
import { money, toMinor } from "../../lib/format.ts";
import { addToCart } from "../../lib/cart.ts";
import { currentLocation, Link, navigate } from "../../lib/router.tsx";
import { useStore } from "../../lib/store.ts";
import { useInfiniteQuery } from "../../lib/query.ts";
import { type Product, type ProductPage, searchProducts } from "./types.ts";
import { ProductImage, StoreFrame } from "./common.tsx";

const SORTS = [
  ["relevance", "Best match"],
  ["newest", "Newest"],
  ["price_asc", "Price, low to high"],
  ["price_desc", "Price, high to low"],
] as const;

const FILTERS = ["q", "category", "vendorId", "minPrice", "maxPrice", "inStock", "sort"] as const;

/** The filters from the address. */
function filtersOf(q: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of FILTERS) {
    const value = q.get(key);
    if (value) out[key] = value;
  }
  return out;
}

function setFilters(next: Record<string, string | undefined>) {
  const q = new URLSearchParams();
  for (const key of FILTERS) {
    const value = next[key];
    if (value) q.set(key, value);
  }
  const text = q.toString();
  navigate(text ? `/store?${text}` : "/store", { replace: true });
}

export function CatalogPage() {
  const where = useStore(currentLocation);
  const filters = filtersOf(where.query);
  // One list per set of filters, under the store's key; "Load more" is its next page.
  const search = useInfiniteQuery({
    queryKey: ["store", "catalog", filters],
    queryFn: ({ pageParam }) =>
      searchProducts({ ...filters, limit: 24, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    // The last results stay on screen while another search is read.
    placeholderData: (previous) => previous,
  });
  const pages = search.data?.pages;
  // The first page's facets and correction, every page's products, the last page's cursor.
  const page: ProductPage | null = pages?.length
    ? {
      ...pages[0],
      items: pages.flatMap((p) => p.items),
      nextCursor: pages[pages.length - 1].nextCursor,
    }
    : null;
  const error = search.error ? describeError(search.error) : null;
  const loadingMore = search.isFetchingNextPage;
  const qId = useId();
  const sortId = useId();
  const minId = useId();
  const maxId = useId();
  const [text, setText] = useState(filters.q ?? "");
  const currency = page?.items[0]?.price.currency ?? "USD";
  const [min, setMin] = useState("");
  const [max, setMax] = useState("");
  // On a phone the filters start folded, so the products come first.
  const [narrow] = useState(() => matchMedia("(max-width: 720px)").matches);

  useEffect(() => setText(filters.q ?? ""), [filters.q]);

  const more = () => void search.fetchNextPage();

  const toggle = (name: string, value: string) =>
    setFilters({ ...filters, [name]: filters[name] === value ? undefined : value });

  return (
    <StoreFrame wide>
      <h1 class="visually-hidden">Store</h1>
      <form
        class="store-search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters({ ...filters, q: text.trim() || undefined });
        }}
      >
        <div class="grow">
          <label for={qId}>Search the store</label>
          <input
            id={qId}
            type="search"
            value={text}
            placeholder="honey, walnut, mug…"
            onInput={(e) => setText(e.currentTarget.value)}
          />
        </div>
        <button type="submit">Search</button>
        <div>
          <label for={sortId}>Sort by</label>
          <select
            id={sortId}
            value={filters.sort ?? "relevance"}
            onChange={(e) => setFilters({ ...filters, sort: e.currentTarget.value })}
          >
            {SORTS.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </div>
      </form>
      <div class="catalog">
        <details class="facets" open={!narrow}>
          <summary>Filters</summary>
          <div class="facets-body">
            <label class="check">
              <input
                type="checkbox"
                checked={filters.inStock === "true"}
                onChange={(e) =>
                  setFilters({ ...filters, inStock: e.currentTarget.checked ? "true" : undefined })}
              />{" "}
              In stock only
            </label>
            <fieldset>
              <legend>Category</legend>
              <ul class="facet-list">
                {page?.facets.categories.map((c) => (
                  <li key={c.value}>
                    <button
                      type="button"
                      class="facet"
                      aria-pressed={filters.category === c.value}
                      onClick={() => toggle("category", c.value)}
                    >
                      <span>{c.value}</span> <span class="count">{c.count}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </fieldset>
            <fieldset>
              <legend>Shop</legend>
              <ul class="facet-list">
                {page?.facets.vendors.map((v) => (
                  <li key={v.id}>
                    <button
                      type="button"
                      class="facet"
                      aria-pressed={filters.vendorId === v.id}
                      onClick={() => toggle("vendorId", v.id)}
                    >
                      <span>{v.name}</span> <span class="count">{v.count}</span>
                    </button>
                  </li>
                ))}
              </ul>
            </fieldset>
            <fieldset>
              <legend>Price</legend>
              {page && page.facets.price.min !== null && (
                <p class="muted small">
                  {money({ amount: page.facets.price.min, currency })} to{" "}
                  {money({ amount: page.facets.price.max ?? 0, currency })}
                </p>
              )}
              <form
                class="price-range"
                onSubmit={(e) => {
                  e.preventDefault();
                  const lo = min ? toMinor(min, currency) : null;
                  const hi = max ? toMinor(max, currency) : null;
                  setFilters({
                    ...filters,
                    minPrice: lo === null ? undefined : String(lo),
                    maxPrice: hi === null ? undefined : String(hi),
                  });
                }}
              >
                <div>
                  <label for={minId}>From</label>
                  <input
                    id={minId}
                    inputMode="decimal"
                    value={min}
                    onInput={(e) => setMin(e.currentTarget.value)}
                  />
                </div>
                <div>
                  <label for={maxId}>To</label>
                  <input
                    id={maxId}
                    inputMode="decimal"
                    value={max}
                    onInput={(e) => setMax(e.currentTarget.value)}
                  />
                </div>
                <button type="submit" class="secondary small">Apply</button>
              </form>
            </fieldset>
            {Object.keys(filters).some((k) => k !== "sort") && (
              <button
                type="button"
                class="link"
                onClick={() => {
                  setMin("");
                  setMax("");
                  setFilters({ sort: filters.sort });
                }}
              >
                Clear filters
              </button>
            )}
          </div>
        </details>
        <section class="results" aria-labelledby="results-h">
          <h2 id="results-h" class="results-head" aria-live="polite">
            {page
              ? `${page.items.length}${page.nextCursor ? "+" : ""} product${
                page.items.length === 1 ? "" : "s"
              }${filters.q ? ` for “${page.correctedQuery ?? filters.q}”` : ""}`
              : "Products"}
          </h2>
          {page?.correctedQuery && (
            <p class="muted">
              No match for “{filters.q}”; showing results for “{page.correctedQuery}”.
            </p>
          )}
          {error && <p class="error" role="alert">{error}</p>}
          {page === null
            ? <p class="muted" role="status">Loading…</p>
            : page.items.length === 0
            ? <p>No product matches. Try fewer filters.</p>
            : (
              <ul class="product-grid" data-testid="products">
                {page.items.map((p) => (
                  <ProductCard
                    key={p.id}
                    product={p}
                    // The header's toast and cart count say it was added (Shell.tsx).
                    onAdd={() => addToCart(cartLine(p), 1)}
                  />
                ))}
              </ul>
            )}
          {page?.nextCursor && (
            <button type="button" class="secondary" disabled={loadingMore} onClick={more}>
              {loadingMore ? "Loading…" : "Load more"}
            </button>
          )}
        </section>
      </div>
    </StoreFrame>
  );
}

export function cartLine(p: Product) {
  return {
    productId: p.id,
    title: p.title,
    vendor: { id: p.vendor.id, name: p.vendor.name },
    unitPrice: p.price,
    available: p.stock.available,
    image: p.images[0] ?? null,
  };
}

function ProductCard({ product: p, onAdd }: { product: Product; onAdd: () => void }) {
  const out = p.stock.available <= 0;
  return (
    <li class="product-card" data-product-id={p.id}>
      <ProductImage title={p.title} images={p.images} />
      <div class="product-card-body">
        <h3>
          <Link href={`/store/products/${p.id}`}>{p.title}</Link>
        </h3>
        <p class="muted small">{p.vendor.name} · {p.category}</p>
        <p class="price">{money(p.price)}</p>
        <p class={out ? "stock out" : "stock"}>
          {out ? "Out of stock" : `${p.stock.available} available`}
        </p>
        <button
          type="button"
          class="secondary small"
          disabled={out}
          onClick={onAdd}
        >
          Add to cart<span class="visually-hidden">: {p.title}</span>
        </button>
      </div>
    </li>
  );
}
