/**
 * The cart and the start of a checkout: lines grouped by shop (each shop makes an order of its
 * own), the shipping address, then POST /api/store/orders with an Idempotency-Key. The server
 * prices the checkout and reserves the stock; a line it cannot fill comes back as 422
 * `insufficient_stock` with the lines short, shown next to them. The checkout's answer goes to the
 * payment step (Checkout.tsx).
 */
import { ApiError, client, data, describeError } from "../../lib/client.ts";
import { useId, useRef, useState } from "preact/hooks";
import { money } from "../../lib/format.ts";
import { cart, type CartLine, clearCart, setQuantity } from "../../lib/cart.ts";
import { Link, navigate } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import type { Address } from "./types.ts";
import { ProductImage, StoreFrame } from "./common.tsx";
import { rememberCheckout } from "./checkouts.ts";
import { forgetRetryKey, retryKey } from "../../lib/retry-key.ts";
import { recallAddress, rememberAddress } from "./address.ts";
import { likelyCountry } from "../../lib/countries.ts";
import { CountrySelect } from "../../components/CountrySelect.tsx";

function groupByVendor(lines: CartLine[]): [string, CartLine[]][] {
  const groups = new Map<string, CartLine[]>();
  for (const line of lines) {
    groups.set(line.vendor.name, [...(groups.get(line.vendor.name) ?? []), line]);
  }
  return [...groups.entries()];
}

const EMPTY_ADDRESS: Address = {
  name: "",
  line1: "",
  line2: "",
  city: "",
  postalCode: "",
  country: "",
};

type Field = keyof Address;
const REQUIRED: [Field, string][] = [
  ["name", "Enter the name of the person who receives the parcel."],
  ["line1", "Enter the street and number."],
  ["city", "Enter the city."],
  ["postalCode", "Enter the postal code."],
  ["country", "Choose the country."],
];

export function CartPage() {
  const lines = useStore(cart);
  const me = useStore(session).user;
  // The last address used here, else the person's name and the browser's country.
  const [address, setAddress] = useState<Address>(() =>
    (me && recallAddress(me.id)) ??
      { ...EMPTY_ADDRESS, name: me?.name ?? "", country: likelyCountry() }
  );
  const [invalid, setInvalid] = useState<Partial<Record<Field, string>>>({});
  const form = useRef<HTMLFormElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [short, setShort] = useState<Record<string, number>>({});
  const [busy, setBusy] = useState(false);
  const ids = {
    name: useId(),
    line1: useId(),
    line2: useId(),
    city: useId(),
    postalCode: useId(),
    country: useId(),
  };
  const currency = lines[0]?.unitPrice.currency ?? "USD";
  const total = lines.reduce((n, l) => n + l.unitPrice.amount * l.quantity, 0);

  async function checkOut(e: Event) {
    e.preventDefault();
    if (!me) {
      navigate(`/signin?next=${encodeURIComponent("/store/cart")}`);
      return;
    }
    // Each missing field is marked and says what it needs; the first one gets the focus.
    const missing = Object.fromEntries(
      REQUIRED.filter(([k]) => !address[k]?.trim()),
    ) as Partial<Record<Field, string>>;
    setInvalid(missing);
    const first = REQUIRED.find(([k]) => missing[k]);
    if (first) {
      setError(null);
      form.current?.querySelector<HTMLElement>(`#${CSS.escape(ids[first[0]])}`)?.focus();
      return;
    }
    const country = address.country.trim().toUpperCase();
    setBusy(true);
    setError(null);
    setShort({});
    const body = {
      items: lines.map((l) => ({ productId: l.productId, quantity: l.quantity })),
      shipping: {
        address: {
          name: address.name.trim(),
          line1: address.line1.trim(),
          ...(address.line2?.trim() ? { line2: address.line2.trim() } : {}),
          city: address.city.trim(),
          postalCode: address.postalCode.trim(),
          country,
        },
      },
    };
    // Kept while this same checkout is tried again: an answer lost on the way must not make two.
    const retry = `checkout:${me.id}`;
    const key = retryKey(retry, body);
    try {
      const { checkout } = data(
        await client.POST("/api/store/orders", {
          params: { header: { "idempotency-key": key } },
          body,
        }),
      );
      forgetRetryKey(retry);
      rememberCheckout(checkout);
      rememberAddress(me.id, body.shipping.address);
      clearCart();
      navigate(`/store/checkout/${checkout.id}`);
    } catch (err) {
      // Refused for good (a 4xx): nothing was made, so trying again is a new checkout. Unknown (no
      // answer, a 5xx): the same key, so a checkout the server did make is answered again.
      if (err instanceof ApiError && err.status < 500) forgetRetryKey(retry);
      if (err instanceof ApiError && err.code === "insufficient_stock") {
        const items = (err.details as { items?: { productId: string; available: number }[] })
          ?.items ?? [];
        setShort(Object.fromEntries(items.map((i) => [i.productId, i.available])));
        setError("Some items do not have enough stock left. Change the quantities marked below.");
      } else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  const edit = (key: Field, value: string) => {
    setAddress({ ...address, [key]: value });
    if (invalid[key] && value.trim()) setInvalid({ ...invalid, [key]: undefined });
  };
  const problem = (key: Field) =>
    invalid[key] && <p id={`${ids[key]}-error`} class="field-error">{invalid[key]}</p>;
  const marks = (key: Field) => ({
    "aria-invalid": invalid[key] ? "true" as const : undefined,
    "aria-describedby": invalid[key] ? `${ids[key]}-error` : undefined,
  });
  const field = (key: Field, label: string, extra: Record<string, string> = {}) => (
    <div>
      <label for={ids[key]}>{label}</label>
      <input
        id={ids[key]}
        value={address[key] ?? ""}
        onInput={(e) => edit(key, e.currentTarget.value)}
        {...(key === "line2" ? {} : { "aria-required": "true" })}
        {...marks(key)}
        {...extra}
      />
      {problem(key)}
    </div>
  );

  return (
    <StoreFrame>
      <h1>Your cart</h1>
      {lines.length === 0
        ? (
          <p>
            Your cart is empty. <Link href="/store">Browse the store</Link>.
          </p>
        )
        : (
          <form onSubmit={checkOut} class="cart" noValidate ref={form}>
            {groupByVendor(lines).map(([vendor, group]) => (
              <section key={vendor} class="card" aria-label={`From ${vendor}`}>
                <h2>From {vendor}</h2>
                <ul class="plain-list">
                  {group.map((l) => (
                    <li key={l.productId} class="cart-line" data-product-id={l.productId}>
                      <ProductImage title={l.title} images={l.image ? [l.image] : []} />
                      <div class="grow">
                        <Link href={`/store/products/${l.productId}`}>{l.title}</Link>
                        <p class="muted small">{money(l.unitPrice)} each</p>
                        {short[l.productId] !== undefined && (
                          <p class="error small">Only {short[l.productId]} left.</p>
                        )}
                      </div>
                      <label class="qty">
                        <span class="visually-hidden">Quantity of {l.title}</span>
                        <input
                          type="number"
                          min={0}
                          value={l.quantity}
                          onChange={(e) =>
                            setQuantity(l.productId, Math.max(0, Number(e.currentTarget.value)))}
                        />
                      </label>
                      <span class="line-total">
                        {money({ ...l.unitPrice, amount: l.unitPrice.amount * l.quantity })}
                      </span>
                      <button
                        type="button"
                        class="icon"
                        aria-label={`Remove ${l.title}`}
                        onClick={() =>
                          setQuantity(l.productId, 0)}
                      >
                        ×
                      </button>
                    </li>
                  ))}
                </ul>
              </section>
            ))}
            <p class="cart-total">
              Total <strong data-testid="cart-total">{money({ amount: total, currency })}</strong>
              <span class="muted small">
                {" "}(the server prices the order again when you check out)
              </span>
            </p>
            <fieldset class="card address">
              <legend>Shipping address</legend>
              <div class="fields-grid">
                {field("name", "Full name", { autocomplete: "name" })}
                {field("line1", "Address", { autocomplete: "address-line1" })}
                {field("line2", "Address, line 2 (optional)", { autocomplete: "address-line2" })}
                {field("city", "City", { autocomplete: "address-level2" })}
                {field("postalCode", "Postal code", { autocomplete: "postal-code" })}
                <div>
                  <label for={ids.country}>Country</label>
                  <CountrySelect
                    id={ids.country}
                    value={address.country}
                    {...marks("country")}
                    onChange={(code) => edit("country", code)}
                  />
                  {problem("country")}
                </div>
              </div>
            </fieldset>
            {error && <p class="error" role="alert">{error}</p>}
            <div class="actions">
              <button type="submit" disabled={busy}>
                {busy ? "Reserving your items…" : me ? "Check out" : "Sign in to check out"}
              </button>
            </div>
          </form>
        )}
    </StoreFrame>
  );
}
