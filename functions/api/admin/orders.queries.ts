/**
 * Queries of /api/admin/orders (admin/orders.routes.ts), run as the ADMIN: RLS shows every order
 * (`orders_select_buyer_vendor_or_admin`), checkout (`checkouts_select_buyer_or_admin`) and refund
 * (`refunds_select_visible`) through their ADMIN branches.
 */
import type { Tx } from "../../_shared/db.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";
import type { AdminOrderJson } from "./orders.routes.ts";

export type OrderStatus = AdminOrderJson["status"];
export type PaymentStatus = AdminOrderJson["checkout"]["paymentStatus"];
export type RefundStatus = NonNullable<AdminOrderJson["refund"]>["status"];

const UTC = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

/**
 * Every order, newest first (keyset on created_at, id), each as GET /api/store/orders/{id} shows
 * it with its checkout's payment (provider, PaymentIntent, status) and its refund in full.
 */
export async function listAdminOrders(
  tx: Tx,
  q: {
    status?: OrderStatus;
    paymentStatus?: PaymentStatus;
    refundStatus?: RefundStatus;
    vendorId?: string;
    buyerId?: string;
    after: [string, string] | null;
    limit: number;
  },
) {
  const rows = await tx<{ id: string; item: AdminOrderJson; created_at_key: string }[]>`
    select o.id, o.created_at::text as created_at_key,
           app.order_json(o) || jsonb_build_object(
             'checkout', jsonb_build_object(
               'id', c.id,
               'provider', c.provider,
               'paymentIntentId', c.payment_intent_id,
               'paymentStatus', c.payment_status,
               'total', jsonb_build_object('amount', c.total, 'currency', c.currency),
               'reservedUntil', to_char(c.reserved_until at time zone 'UTC', ${UTC})
             ),
             'refund', (
               select jsonb_build_object(
                 'id', r.id,
                 'status', r.status,
                 'amount', jsonb_build_object('amount', r.amount, 'currency', r.currency),
                 'reason', r.reason,
                 'providerRefundId', r.provider_refund_id,
                 'failureReason', r.failure_reason,
                 'createdAt', to_char(r.created_at at time zone 'UTC', ${UTC}),
                 'succeededAt', to_char(r.succeeded_at at time zone 'UTC', ${UTC})
               )
               from app.refunds r where r.order_id = o.id
             )
           ) as item
    from app.orders o
    join app.checkouts c on c.id = o.checkout_id
    ${
    where(tx, [
      ifGiven(q.status, (status) => tx`o.status = ${status}::app.order_status`),
      ifGiven(q.paymentStatus, (status) => tx`o.payment_status = ${status}::app.payment_status`),
      ifGiven(q.refundStatus, (status) =>
        tx`exists (select 1 from app.refunds r
                   where r.order_id = o.id and r.status = ${status}::app.refund_status)`),
      ifGiven(q.vendorId, (id) => tx`o.vendor_id = ${id}::uuid`),
      ifGiven(q.buyerId, (id) => tx`o.buyer_id = ${id}::uuid`),
      ifGiven(q.after, ([time, id]) =>
        tx`(o.created_at, o.id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
    order by o.created_at desc, o.id desc
    limit ${pageLimit(q.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  return { items: page.map((r) => r.item), nextCursor };
}
