/**
 * Orders, payments and refunds (GET /api/admin/orders): every order, newest first, with its
 * checkout's payment (provider, PaymentIntent, status) and its refund (status, amount, the
 * provider's id or why it failed); filters by the order's status, the payment's and the refund's
 * ("Refund failed" lists what an operator must look at); "Load more" through the keyset cursor.
 * Each order opens on its page (/store/orders/<id>, which an ADMIN may read).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { api, describeError, query } from "../../lib/api.ts";
import { fullTime, money } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { Pill } from "../../components/Pill.tsx";
import { type Money, type Order, ORDER_STATUS, orderNumber, statusTone } from "../store/types.ts";

interface AdminOrder extends Order {
  checkout: {
    id: string;
    provider: "stripe" | "dev";
    paymentIntentId: string | null;
    paymentStatus: "pending" | "succeeded" | "failed" | "refunded";
    total: Money;
    reservedUntil: string;
  };
  refund: {
    id: string;
    status: "pending" | "succeeded" | "failed";
    amount: Money;
    reason: string | null;
    providerRefundId: string | null;
    failureReason: string | null;
    createdAt: string;
    succeededAt: string | null;
  } | null;
}

const PAYMENT = ["pending", "succeeded", "failed", "refunded"];
const REFUND = ["pending", "succeeded", "failed"];

export function OrdersSection({ refresh }: { refresh: number }) {
  const [filters, setFilters] = useState({ status: "", paymentStatus: "", refundStatus: "" });
  const [items, setItems] = useState<AdminOrder[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const ids = { status: useId(), payment: useId(), refund: useId() };
  const list = (cursor?: string) =>
    api.get<{ items: AdminOrder[]; nextCursor: string | null }>(
      `/api/admin/orders${query({ ...filters, limit: 50, cursor })}`,
      { fresh: true },
    );
  useEffect(() => {
    let live = true;
    list().then((page) => {
      if (!live) return;
      setItems(page.items);
      setCursor(page.nextCursor);
      setError(null);
    }).catch((err) => live && setError(describeError(err)));
    return () => {
      live = false;
    };
  }, [filters.status, filters.paymentStatus, filters.refundStatus, refresh]);
  const set = (key: keyof typeof filters) => (e: Event) =>
    setFilters({ ...filters, [key]: (e.currentTarget as HTMLSelectElement).value });
  return (
    <section>
      <h1>Orders, payments and refunds</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for={ids.status}>Order status</label>
          <select id={ids.status} value={filters.status} onChange={set("status")}>
            <option value="">Any</option>
            {Object.entries(ORDER_STATUS).map(([value, label]) => (
              <option key={value} value={value}>{label}</option>
            ))}
          </select>
        </div>
        <div>
          <label for={ids.payment}>Payment</label>
          <select id={ids.payment} value={filters.paymentStatus} onChange={set("paymentStatus")}>
            <option value="">Any</option>
            {PAYMENT.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
        <div>
          <label for={ids.refund}>Refund</label>
          <select id={ids.refund} value={filters.refundStatus} onChange={set("refundStatus")}>
            <option value="">Any</option>
            {REFUND.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading…</p>
        : items.length === 0
        ? <p>No orders.</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Orders table">
            <table data-testid="admin-orders">
              <caption class="visually-hidden">Orders with their payment and refund</caption>
              <thead>
                <tr>
                  <th scope="col">Order</th>
                  <th scope="col">Shop and buyer</th>
                  <th scope="col">Total</th>
                  <th scope="col">Status</th>
                  <th scope="col">Payment</th>
                  <th scope="col">Refund</th>
                </tr>
              </thead>
              <tbody>
                {items.map((o) => (
                  <tr key={o.id} data-order-id={o.id}>
                    <td>
                      <Link href={`/store/orders/${o.id}`} class="mono">{orderNumber(o)}</Link>
                      <br />
                      <span class="muted small">{fullTime(o.createdAt)}</span>
                    </td>
                    <td>
                      {o.vendor.name}
                      <br />
                      <span class="muted small">
                        {o.buyer ? o.buyer.name ?? "a member" : "a deleted account"}
                      </span>
                    </td>
                    <td>{money(o.total)}</td>
                    <td>
                      <Pill tone={statusTone(o.status)}>{ORDER_STATUS[o.status]}</Pill>
                    </td>
                    <td data-testid="payment">
                      <Pill tone={statusTone(o.checkout.paymentStatus)}>
                        {o.checkout.paymentStatus}
                      </Pill>
                      <br />
                      <span class="muted small">
                        {o.checkout.provider}
                        {o.checkout.paymentIntentId ? ` · ${o.checkout.paymentIntentId}` : ""}
                      </span>
                    </td>
                    <td data-testid="refund">
                      {o.refund
                        ? (
                          <>
                            <Pill tone={statusTone(o.refund.status)}>{o.refund.status}</Pill>{" "}
                            {money(o.refund.amount)}
                            <br />
                            <span class="muted small">
                              {o.refund.failureReason ?? o.refund.reason ?? ""}
                              {o.refund.providerRefundId ? ` · ${o.refund.providerRefundId}` : ""}
                            </span>
                          </>
                        )
                        : <span class="muted">none</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      {cursor && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            try {
              const page = await list(cursor);
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
