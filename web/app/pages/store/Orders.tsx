/**
 * The buyer's orders and one order's detail: status, items, payment, shipping (carrier and
 * tracking number once shipped) and the history of moves. Live: `order.created` and
 * `order.status_changed` on `user:<id>` carry the whole order, merged in as they arrive, so a
 * vendor's "shipped" shows here without a reload. The buyer's own moves: cancel an unpaid order,
 * confirm a delivered one as completed.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useState } from "preact/hooks";
import { describeError } from "../../lib/client.ts";
import { fullTime, money } from "../../lib/format.ts";
import { Link, navigate } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { Pill } from "../../components/Pill.tsx";
import type { PageProps } from "../../lib/page.ts";
import { type Order, ORDER_STATUS, orderNumber, type OrderStatus, statusTone } from "./types.ts";
import { StoreFrame } from "./common.tsx";
import { countryName } from "../../lib/countries.ts";
import { moveOrder, useOrder, useOrderList } from "./live-orders.ts";

export function OrdersPage({ params }: PageProps) {
  return params.orderId ? <OrderDetail id={params.orderId} /> : <OrderList />;
}

function OrderList() {
  const [status, setStatus] = useState("");
  const list = useOrderList("buyer", status);
  const [moreError, setError] = useState<string | null>(null);
  const error = moreError ?? (list.error ? describeError(list.error) : null);
  const orders = list.data?.pages.flatMap((page) => page.items) ?? null;
  const statusId = useId();
  const shown = orders?.filter((o) => !status || o.status === status) ?? null;
  return (
    <StoreFrame>
      <h1>Your orders</h1>
      <div class="filters">
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            {Object.entries(ORDER_STATUS).map(([value, label]) => (
              <option key={value} value={value}>{label}</option>
            ))}
          </select>
        </div>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {shown === null ? <p class="muted" role="status">Loading…</p> : shown.length === 0
        ? (
          <p>
            No orders yet. <Link href="/store">Browse the store</Link>.
          </p>
        )
        : (
          <ul class="plain-list order-list" data-testid="orders">
            {shown.map((o) => (
              <li key={o.id} class="row-item order-row" data-order-id={o.id}>
                <span>
                  <Link href={`/store/orders/${o.id}`}>
                    {o.vendor.name}: {o.items.map((i) => `${i.quantity} × ${i.title}`).join(", ")}
                  </Link>
                  <br />
                  <span class="muted small">
                    {fullTime(o.createdAt)} · {money(o.total)}
                    {o.shipping.trackingNumber
                      ? ` · ${o.shipping.carrier ?? "tracking"} ${o.shipping.trackingNumber}`
                      : ""}
                  </span>
                </span>
                <Pill tone={statusTone(o.status)} testId="order-status">
                  {ORDER_STATUS[o.status]}
                </Pill>
              </li>
            ))}
          </ul>
        )}
      {list.hasNextPage && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            setError(null);
            const next = await list.fetchNextPage();
            if (next.error) setError(describeError(next.error));
          }}
        >
          Load more
        </button>
      )}
    </StoreFrame>
  );
}

function OrderDetail({ id }: { id: string }) {
  const me = useStore(session).user;
  const read = useOrder(id);
  const [moveError, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const order = read.data ?? null;
  const error = moveError ?? (read.error ? describeError(read.error) : null);
  // Order e-mails link here for everyone they go to: the shop's owner (who sees the order but did
  // not buy it) is taken to the order in their shop's orders.
  const elsewhere = !!order && !!me && order.buyerId !== me.id && me.role !== "ADMIN";
  useEffect(() => {
    if (elsewhere) navigate(`/vendor/orders/${id}`, { replace: true });
  }, [elsewhere]);
  const mine = order !== null && order.buyerId === me?.id;
  const move = async (status: OrderStatus, reason: string) => {
    setBusy(true);
    try {
      await moveOrder(id, { status, reason });
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <StoreFrame>
      <p>
        <Link href="/store/orders">← Your orders</Link>
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      {!order || elsewhere
        ? (!error && <p class="muted" role="status">Loading…</p>)
        : (
          <OrderView order={order}>
            {mine && order.status === "pending_payment" && (
              <div class="actions">
                <Link class="button" href={`/store/checkout/${order.checkoutId}`}>Pay</Link>
                <button
                  type="button"
                  class="secondary"
                  disabled={busy}
                  onClick={() => move("cancelled", "Cancelled by the buyer")}
                >
                  Cancel the order
                </button>
              </div>
            )}
            {mine && order.status === "delivered" && (
              <div class="actions">
                <button
                  type="button"
                  disabled={busy}
                  onClick={() => move("completed", "Received in good order")}
                >
                  I received it
                </button>
              </div>
            )}
          </OrderView>
        )}
    </StoreFrame>
  );
}

/** An order in full (the buyer's page and the vendor's). */
export function OrderView(
  { order, children, heading = "h1" }: {
    order: Order;
    children?: ComponentChildren;
    heading?: "h1" | "h2";
  },
) {
  const H = heading;
  const address = order.shipping.address;
  return (
    <article class="order" data-order-id={order.id}>
      <div class="card-head">
        <H>Order from {order.vendor.name}</H>
        <Pill tone={statusTone(order.status)} testId="order-status">
          {ORDER_STATUS[order.status]}
        </Pill>
      </div>
      <p class="muted small">
        Order <span class="mono">{orderNumber(order)}</span>
        {order.buyer?.name ? ` by ${order.buyer.name}` : ""} · placed {fullTime(order.createdAt)}
        {" "}
        · payment {order.payment.status}
      </p>
      <ul class="plain-list items">
        {order.items.map((i) => (
          <li key={i.productId} class="row-item">
            <span>
              {i.quantity} × <Link href={`/store/products/${i.productId}`}>{i.title}</Link>
            </span>
            <span>{money(i.total)}</span>
          </li>
        ))}
        <li class="row-item total">
          <strong>Total</strong>
          <strong>{money(order.total)}</strong>
        </li>
      </ul>
      {children}
      <div class="order-columns">
        <section aria-label="Shipping">
          <h3>Shipping</h3>
          {address
            ? (
              <address data-testid="shipping-address">
                {address.name}
                <br />
                {address.line1}
                {address.line2 && (
                  <>
                    <br />
                    {address.line2}
                  </>
                )}
                <br />
                {address.postalCode} {address.city}
                <br />
                {countryName(address.country)}
              </address>
            )
            : <p class="muted">No address.</p>}
          {order.shipping.trackingNumber && (
            <p data-testid="tracking">
              {order.shipping.carrier ?? "Carrier"} tracking number:{" "}
              <strong class="mono">{order.shipping.trackingNumber}</strong>
            </p>
          )}
        </section>
        <section aria-label="History">
          <h3>History</h3>
          <ol class="history">
            {order.history.map((h, i) => (
              <li key={i}>
                <strong>{ORDER_STATUS[h.to]}</strong>{" "}
                <span class="muted small">
                  {fullTime(h.at)} · by {h.actor}
                  {h.reason ? ` · “${h.reason}”` : ""}
                </span>
              </li>
            ))}
          </ol>
        </section>
      </div>
    </article>
  );
}
