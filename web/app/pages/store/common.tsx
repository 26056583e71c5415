/** What the store's pages share: their tabs (catalog, cart, orders) and a product's picture. */
import type { ComponentChildren } from "preact";
import { apiOrigin } from "../../lib/client.ts";
import { cart, cartCount } from "../../lib/cart.ts";
import { currentLocation, Link } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";

export function StoreFrame({ children, wide }: { children: ComponentChildren; wide?: boolean }) {
  const lines = useStore(cart);
  const where = useStore(currentLocation);
  const signedIn = useStore(session).status === "signed-in";
  const count = cartCount(lines);
  const tab = (href: string, label: string, match: (p: string) => boolean, extra?: string) => (
    <li>
      <Link href={href} aria-current={match(where.path) ? "page" : undefined}>
        {label}
        {extra && <span class="nav-badge" data-testid="cart-count">{extra}</span>}
      </Link>
    </li>
  );
  return (
    <div class={wide ? "page store wide" : "page store"}>
      <nav class="tabs" aria-label="Store">
        <ul>
          {tab("/store", "Catalog", (p) => p === "/store" || p.startsWith("/store/products"))}
          {tab(
            "/store/cart",
            "Cart",
            (p) => p === "/store/cart" || p.startsWith("/store/checkout"),
            count ? String(count) : undefined,
          )}
          {signedIn && tab("/store/orders", "Your orders", (p) => p.startsWith("/store/orders"))}
        </ul>
      </nav>
      {children}
    </div>
  );
}

/**
 * The product's first image, or a tile with its initial (images come from vendors: https URLs,
 * or pictures they uploaded, served by the API).
 */
export function ProductImage(
  { title, images, size = "card" }: { title: string; images: string[]; size?: "card" | "large" },
) {
  // A picture the vendor uploaded is an API path (/api/store/images/<id>): on the API's origin.
  const first = images[0];
  const src = first?.startsWith("/") ? `${apiOrigin}${first}` : first;
  if (src) {
    return <img class={`product-image ${size}`} src={src} alt="" loading="lazy" />;
  }
  let hash = 0;
  for (const ch of title) hash = (hash * 31 + ch.charCodeAt(0)) | 0;
  return (
    <span
      class={`product-image ${size} placeholder`}
      style={{ background: `hsl(${Math.abs(hash) % 360} 35% 88%)` }}
      aria-hidden="true"
    >
      {title.slice(0, 1)}
    </span>
  );
}
