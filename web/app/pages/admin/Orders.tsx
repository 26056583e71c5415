/**
 * Orders, payments and refunds (GET /api/admin/orders): every order, newest first, with its
 * checkout's payment (provider, PaymentIntent, status) and its refund (status, amount, the
 * provider's id or why it failed); filters by the order's status, the payment's and the refund's
 * ("Refund failed" lists what an operator must look at); "Load more" through the keyset cursor.
 * Each order opens on its page (/store/orders/<id>, which an ADMIN may read).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { client, data, describeError, FRESH, type Query } from "../../lib/client.ts";
import { queryClient, useInfiniteQuery } from "../../lib/query.ts";
import { fullTime, money } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { Pill } from "../../components/Pill.tsx";
import { ORDER_STATUS, orderNumber, statusTone } from "../store/types.ts";
import { ADMIN_KEY, type AdminOrder } from "./types.ts";

const ORDERS_KEY = [...ADMIN_KEY, "orders"] as const;
const PAYMENT = ["pending", "succeeded", "failed", "refunded"];
const REFUND = ["pending", "succeeded", "failed"];

export function OrdersSection({ refresh }: { refresh: number }) {
  const [filters, setFilters] = useState({ status: "", paymentStatus: "", refundStatus: "" });
  const [moreError, setError] = useState<string | null>(null);
  const ids = { status: useId(), payment: useId(), refund: useId() };
  const orders = useInfiniteQuery({
    queryKey: [...ORDERS_KEY, filters],
    queryFn: async ({ pageParam }) =>
      data(
        await client.GET("/api/admin/orders", {
          params: {
            query: { ...filters, limit: 50, ...(pageParam ? { cursor: pageParam } : {}) } as Query<
              "/api/admin/orders",
              "get"
            >,
          },
          ...FRESH,
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    // Read at each visit, as before the cache: payments and refunds move behind the page.
    staleTime: 0,
  });
  // The section's `refresh` reads the lists again.
  useEffect(() => {
    if (refresh) void queryClient.invalidateQueries({ queryKey: ORDERS_KEY });
  }, [refresh]);
  const items: AdminOrder[] | null = orders.data?.pages.flatMap((page) => page.items) ?? null;
  const error = moreError ?? (orders.error ? describeError(orders.error) : null);
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
      {orders.hasNextPage && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            setError(null);
            const next = await orders.fetchNextPage();
            if (next.error) setError(describeError(next.error));
          }}
        >
          Load more
        </button>
      )}
    </section>
  );
}
