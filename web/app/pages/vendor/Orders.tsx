/**
 * Orders to fulfil: the shop's orders (`GET /api/store/orders?as=vendor`), live from
 * `vendor:<id>` (VendorPage follows it and writes each order into the query cache), with the
 * vendor's moves:
 * paid → processing, processing → shipped (carrier and tracking number), shipped → delivered,
 * and cancelling a paid or processing order (which refunds the buyer).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { useFormReset } from "../../lib/form-reset.ts";
import { describeError } from "../../lib/client.ts";
import { fullTime, money } from "../../lib/format.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { Pill } from "../../components/Pill.tsx";
import {
  type Order,
  ORDER_STATUS,
  orderNumber,
  type OrderStatus,
  statusTone,
} from "../store/types.ts";
import { moveOrder, useOrder, useOrderList } from "../store/live-orders.ts";
import { OrderView } from "../store/Orders.tsx";

const FILTERS: [string, string][] = [
  ["open", "To fulfil"],
  ["", "All"],
  ...Object.entries(ORDER_STATUS),
];
const OPEN: OrderStatus[] = ["paid", "processing", "shipped"];

export function VendorOrders(
  { focus }: {
    /** An order to open (`/vendor/orders/<id>`, where order e-mails lead the shop's owner). */
    focus?: string;
  },
) {
  const [filter, setFilter] = useState(focus ? "" : "open");
  const list = useOrderList("vendor", filter === "open" ? "" : filter);
  const [moveError, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(focus ?? null);
  const [shipping, setShipping] = useState<Order | null>(null);
  const [cancelling, setCancelling] = useState<Order | null>(null);
  const filterId = useId();
  // The order a link named: read on its own (it may be older than the first page), opened and
  // scrolled to.
  const focused = useOrder(focus);
  const error = moveError ??
    (list.error ? describeError(list.error) : focused.error ? describeError(focused.error) : null);
  const listed = list.data?.pages.flatMap((page) => page.items) ?? null;
  const orders = listed && focused.data && !listed.some((o) => o.id === focus)
    ? [focused.data, ...listed]
    : listed;
  useEffect(() => {
    if (!focus || !focused.data) return;
    setOpen(focus);
    requestAnimationFrame(() =>
      document.querySelector(`[data-order-id="${focus}"]`)?.scrollIntoView({ block: "start" })
    );
  }, [focus, !!focused.data]);

  const shown =
    orders?.filter((o) =>
      filter === "open" ? OPEN.includes(o.status) || o.status === "pending_payment" : !filter ||
        o.status === filter
    ) ?? null;
  /** Moves the order; what went wrong, or null. A dialog shows it in itself. */
  const tryMove = async (order: Order, body: Parameters<typeof moveOrder>[1]) => {
    try {
      await moveOrder(order.id, body);
      setError(null);
      return null;
    } catch (err) {
      return describeError(err);
    }
  };
  /** A move from the list's buttons: what went wrong is shown above the list. */
  const move = async (order: Order, body: Parameters<typeof moveOrder>[1]) =>
    setError(await tryMove(order, body));
  const detail = shown?.find((o) => o.id === open) ?? null;

  return (
    <section>
      <h1>Orders</h1>
      <div class="filters">
        <div>
          <label for={filterId}>Show</label>
          <select id={filterId} value={filter} onChange={(e) => setFilter(e.currentTarget.value)}>
            {FILTERS.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </div>
      </div>
      {error && <p class="error" role="alert">{error}</p>}
      {shown === null
        ? <p class="muted" role="status">Loading…</p>
        : shown.length === 0
        ? <p>No orders here.</p>
        : (
          <ul class="plain-list order-list" data-testid="vendor-orders" aria-live="polite">
            {shown.map((o) => (
              <li key={o.id} class="vendor-order" data-order-id={o.id}>
                <div class="row-item">
                  <span>
                    <span class="order-ref" data-testid="order-number">
                      Order <span class="mono">{orderNumber(o)}</span>
                    </span>{" "}
                    <span data-testid="order-buyer">
                      from {o.buyer ? (o.buyer.name ?? "a member") : "a deleted account"}
                    </span>
                    <br />
                    <button
                      type="button"
                      class="link"
                      aria-expanded={open === o.id}
                      onClick={() => setOpen(open === o.id ? null : o.id)}
                    >
                      {o.items.map((i) => `${i.quantity} × ${i.title}`).join(", ")}
                    </button>
                    <br />
                    <span class="muted small">
                      {fullTime(o.createdAt)} · {money(o.total)}
                      {o.shipping.address ? ` · to ${o.shipping.address.city}` : ""}
                    </span>
                  </span>
                  <Pill tone={statusTone(o.status)} testId="order-status">
                    {ORDER_STATUS[o.status]}
                  </Pill>
                </div>
                <div class="actions">
                  {o.status === "paid" && (
                    <button
                      type="button"
                      class="small"
                      onClick={() => move(o, { status: "processing", reason: "Preparing" })}
                    >
                      Start preparing
                    </button>
                  )}
                  {o.status === "processing" && (
                    <button
                      type="button"
                      class="small"
                      onClick={() => setShipping(o)}
                    >
                      Mark shipped…
                    </button>
                  )}
                  {o.status === "shipped" && (
                    <button
                      type="button"
                      class="small"
                      onClick={() => move(o, { status: "delivered", reason: "Delivered" })}
                    >
                      Mark delivered
                    </button>
                  )}
                  {(o.status === "paid" || o.status === "processing") && (
                    <button
                      type="button"
                      class="secondary small"
                      onClick={() => setCancelling(o)}
                    >
                      Cancel and refund…
                    </button>
                  )}
                </div>
                {detail?.id === o.id && <OrderView order={o} heading="h2" />}
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
      <ShipDialog
        order={shipping}
        onClose={() => setShipping(null)}
        onShip={async (carrier, trackingNumber) => {
          if (!shipping) return null;
          const problem = await tryMove(shipping, {
            status: "shipped",
            carrier,
            trackingNumber,
            reason: "Shipped",
          });
          if (!problem) setShipping(null);
          return problem;
        }}
      />
      <CancelDialog
        order={cancelling}
        onClose={() => setCancelling(null)}
        onCancel={async (reason) => {
          if (!cancelling) return null;
          const problem = await tryMove(cancelling, { status: "cancelled", reason });
          if (!problem) setCancelling(null);
          return problem;
        }}
      />
    </section>
  );
}

function ShipDialog(
  { order, onClose, onShip }: {
    order: Order | null;
    onClose: () => void;
    /** What went wrong, shown in the dialog, or null once shipped. */
    onShip: (carrier: string, trackingNumber: string) => Promise<string | null>;
  },
) {
  const carrierId = useId();
  const trackingId = useId();
  const [carrier, setCarrier] = useState("");
  const [tracking, setTracking] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useFormReset(() => {
    setCarrier("");
    setTracking("");
    setError(null);
  }, [order?.id]);
  return (
    <Dialog open={order !== null} title="Mark the order shipped" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!tracking.trim()) return setError("The tracking number is required.");
          setBusy(true);
          setError(null);
          setError(await onShip(carrier.trim() || "Carrier", tracking.trim()));
          setBusy(false);
        }}
      >
        <p>The buyer sees the carrier and tracking number at once.</p>
        <label for={carrierId}>Carrier</label>
        <input
          id={carrierId}
          value={carrier}
          placeholder="UPS, DHL, Royal Mail…"
          onInput={(e) => setCarrier(e.currentTarget.value)}
        />
        <label for={trackingId}>Tracking number</label>
        <input
          id={trackingId}
          value={tracking}
          aria-required="true"
          onInput={(e) => setTracking(e.currentTarget.value)}
        />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
          <button type="submit" disabled={busy}>Mark shipped</button>
        </div>
      </form>
    </Dialog>
  );
}

function CancelDialog(
  { order, onClose, onCancel }: {
    order: Order | null;
    onClose: () => void;
    /** What went wrong, shown in the dialog, or null once cancelled. */
    onCancel: (reason: string) => Promise<string | null>;
  },
) {
  const reasonId = useId();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  useFormReset(() => {
    setReason("");
    setError(null);
  }, [order?.id]);
  return (
    <Dialog open={order !== null} title="Cancel the order and refund" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!reason.trim()) return setError("Say why: the buyer is told.");
          setError(null);
          setError(await onCancel(reason.trim()));
        }}
      >
        <p>
          The buyer is refunded {order ? money(order.total) : ""} and the items go back in stock.
        </p>
        <label for={reasonId}>Reason (the buyer sees it)</label>
        <textarea id={reasonId} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={onClose}>Keep the order</button>
          <button type="submit" class="danger">Cancel and refund</button>
        </div>
      </form>
    </Dialog>
  );
}
