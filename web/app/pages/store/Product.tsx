/** One product: pictures, description, price, what is available, "Add to cart" and "Report". */
import { client, data, describeError, FRESH } from "../../lib/client.ts";
import { useEffect, useId, useState } from "preact/hooks";
import { money } from "../../lib/format.ts";
import { useQuery } from "../../lib/query.ts";
import { addToCart } from "../../lib/cart.ts";
import { setTitle } from "../../lib/config.ts";
import { Link } from "../../lib/router.tsx";
import type { PageProps } from "../../lib/page.ts";
import type { Product } from "./types.ts";
import { cartLine } from "./Catalog.tsx";
import { ProductImage, StoreFrame } from "./common.tsx";
import { useStore } from "../../lib/store.ts";
import { session } from "../../lib/session.ts";
import { ReportDialog } from "../../components/ReportDialog.tsx";

export function ProductPage({ params }: PageProps) {
  // In the query cache: read at each visit (stock moves), shown from the cache meanwhile.
  const read = useQuery({
    queryKey: ["store", "products", params.productId],
    queryFn: async ({ signal }) =>
      data(
        await client.GET("/api/store/products/{id}", {
          params: { path: { id: params.productId } },
          signal,
          ...FRESH,
        }),
      ),
    staleTime: 0,
  });
  const product: Product | null = read.data ?? null;
  const error = read.error ? describeError(read.error) : null;
  const [quantity, setQuantity] = useState(1);
  const [added, setAdded] = useState<string | null>(null);
  const qtyId = useId();
  const me = useStore(session).user;
  const [reporting, setReporting] = useState(false);
  const [reported, setReported] = useState(false);
  useEffect(() => {
    if (product) setTitle(product.title);
  }, [product?.title]);

  if (error) {
    return (
      <StoreFrame>
        <h1>Product not found</h1>
        <p class="error" role="alert">{error}</p>
        <Link href="/store">Back to the store</Link>
      </StoreFrame>
    );
  }
  if (!product) {
    return (
      <StoreFrame>
        <p class="muted" role="status">Loading…</p>
      </StoreFrame>
    );
  }
  const p = product;
  const out = p.stock.available <= 0;
  return (
    <StoreFrame>
      <p>
        <Link href="/store">← All products</Link>
      </p>
      <article class="product" data-product-id={p.id}>
        <div class="product-pictures">
          <ProductImage title={p.title} images={p.images} size="large" />
          {p.images.length > 1 && (
            <ul class="thumbs">
              {p.images.slice(1).map((src) => (
                <li key={src}>
                  <img src={src} alt="" loading="lazy" />
                </li>
              ))}
            </ul>
          )}
        </div>
        <div class="product-info">
          <h1>{p.title}</h1>
          <p class="muted">
            by <Link href={`/store?vendorId=${p.vendor.id}`}>{p.vendor.name}</Link> ·{" "}
            <Link href={`/store?category=${encodeURIComponent(p.category)}`}>{p.category}</Link>
          </p>
          {p.status !== "active" && (
            <p class="notice">This product is {p.status}: only its shop sees it.</p>
          )}
          <p class="price large">{money(p.price)}</p>
          <p class={out ? "stock out" : "stock"} data-testid="available">
            {out ? "Out of stock" : `${p.stock.available} available`}
          </p>
          <p class="description">{p.description}</p>
          {p.tags.length > 0 && (
            <ul class="tags" aria-label="Tags">
              {p.tags.map((t) => <li key={t}>{t}</li>)}
            </ul>
          )}
          <form
            class="add-to-cart"
            onSubmit={(e) => {
              e.preventDefault();
              addToCart(cartLine(p), quantity);
              setAdded(`Added ${quantity} × ${p.title} to your cart.`);
            }}
          >
            <div>
              <label for={qtyId}>Quantity</label>
              <input
                id={qtyId}
                type="number"
                min={1}
                max={Math.max(1, p.stock.available)}
                value={quantity}
                onInput={(e) => setQuantity(Math.max(1, Number(e.currentTarget.value) || 1))}
              />
            </div>
            <button type="submit" disabled={out || p.status !== "active"}>Add to cart</button>
          </form>
          {added && (
            <p class="success" role="status">
              {added} <Link href="/store/cart">Go to the cart</Link>
            </p>
          )}
          {me && me.role !== "VISITOR" && (
            <p>
              <button type="button" class="link" onClick={() => setReporting(true)}>
                Report this product
              </button>
            </p>
          )}
          {reported && <p class="success" role="status">Thank you: the product was reported.</p>}
          <ReportDialog
            subject={reporting ? { type: "product", id: p.id } : null}
            what="this product"
            onClose={(sent) => {
              setReporting(false);
              if (sent) setReported(true);
            }}
          />
        </div>
      </article>
    </StoreFrame>
  );
}
