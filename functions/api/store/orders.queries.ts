/**
 * Queries of /api/store/orders (store/orders.routes.ts), run as the caller: RLS shows an order
 * to its buyer, its vendor's owner and ADMINs; every change goes through a function that checks
 * its own rules (`app.create_checkout`, `app.attach_payment_intent`, `app.abandon_checkout`,
 * `app.change_order_status`); the checkout itself is one statement with the caller's claims
 * (`createCheckoutAs`). The checkout's orchestration around the payment provider is in
 * store/checkout.ts.
 */
import type { DbClaims, Sql, Tx } from "../../_shared/db.ts";
import { forbidden, notFound } from "../../_shared/errors.ts";
import type { CheckoutJson, OrderJson } from "./store.schemas.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";

export type OrderStatus = OrderJson["status"];

/** The caller's orders as buyer, or as its vendor's owner (403 without a vendor), newest first. */
export async function listOrders(
  tx: Tx,
  q: {
    as: "buyer" | "vendor";
    status?: OrderStatus;
    after: [string, string] | null;
    limit: number;
  },
) {
  if (q.as === "vendor") {
    const [mine] = await tx<{ has: boolean }[]>`
      select exists (select 1 from app.my_vendor_ids()) as has`;
    if (!mine.has) throw forbidden("You have no vendor.");
  }
  const conditions = [
    ifGiven(q.status, (status) => tx`o.status = ${status}::app.order_status`),
    ifGiven(
      q.after,
      ([time, id]) => tx`(o.created_at, o.id) < (${time}::timestamptz, ${id}::uuid)`,
    ),
  ];
  const limit = pageLimit(q.limit);
  // A vendor's orders: a page of each of the caller's vendors (one, or a few with rejected
  // ones), each read down orders_vendor_idx with the vendor's id as a value, then merged. A
  // semi-join with `vendor_id in (select app.my_vendor_ids())` made the planner walk the
  // global index of every vendor's orders instead (issue 30).
  const rows = q.as === "buyer"
    ? await tx<{ id: string; order: OrderJson; created_at_key: string }[]>`
      select o.id, app.order_json(o) as order, o.created_at::text as created_at_key
      from app.orders o
      ${where(tx, [tx`o.buyer_id = (select auth.uid())`, ...conditions])}
      order by o.created_at desc, o.id desc
      limit ${limit}`
    : await tx<{ id: string; order: OrderJson; created_at_key: string }[]>`
      select (x.o).id, app.order_json(x.o) as order, (x.o).created_at::text as created_at_key
      from app.my_vendor_ids() as mine (vendor_id)
      cross join lateral (
        select o from app.orders o
        ${where(tx, [tx`o.vendor_id = mine.vendor_id`, ...conditions])}
        order by o.created_at desc, o.id desc
        limit ${limit}
      ) x
      order by (x.o).created_at desc, (x.o).id desc
      limit ${limit}`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  return { items: page.map((r) => r.order), nextCursor };
}

/** An order the caller may see (buyer, vendor owner, ADMIN), else 404. */
export async function getOrder(tx: Tx, id: string): Promise<OrderJson> {
  const [row] = await tx<{ order: OrderJson }[]>`
    select app.order_json(o) as order from app.orders o where o.id = ${id}::uuid`;
  if (!row) throw notFound("No such order.");
  return row.order;
}

/** A move of the state machine by the caller (404, 403, 422, 400 decided in SQL, in that order). */
export async function changeOrderStatus(
  tx: Tx,
  id: string,
  change: { status: OrderStatus; reason?: string; trackingNumber?: string; carrier?: string },
): Promise<OrderJson> {
  const [row] = await tx<{ order: OrderJson }[]>`
    select app.change_order_status(
      ${id}::uuid, ${change.status}::app.order_status, ${change.reason ?? null},
      ${change.trackingNumber ?? null}, ${change.carrier ?? null}
    ) as order`;
  return row.order;
}

export type CheckoutStart =
  | { replay: CheckoutJson }
  | { resume: string; total: number; currency: string }
  | { created: string; total: number; currency: string };

/**
 * The checkout's transaction (app.create_checkout: the orders, the events, the reservation) as
 * one statement sent on its own (`app_private.create_checkout_as`, with the caller's claims):
 * its commit follows on the server, so the product locks it takes last are never held across a
 * round trip to the API. Takes the pool, like the one-statement send of messages.
 */
export async function createCheckoutAs(
  sql: Sql,
  claims: DbClaims,
  input: {
    items: { productId: string; quantity: number }[];
    address: unknown;
    idempotencyKey: string | null;
    requestHash: string | null;
    provider: "stripe" | "dev";
  },
): Promise<CheckoutStart> {
  const [row] = await sql<{ result: CheckoutStart }[]>`
    select app_private.create_checkout_as(
      ${JSON.stringify(claims)},
      ${sql.json(input.items as never)}::jsonb,
      ${input.address === null ? null : sql.json(input.address as never)}::jsonb,
      ${input.idempotencyKey}, ${input.requestHash}, ${input.provider}
    ) as result`;
  return row.result;
}

/** Attaches the payment intent and returns the checkout answer (stored for the key). */
export async function attachPaymentIntent(
  tx: Tx,
  checkoutId: string,
  intent: { id: string; clientSecret: string | null },
  idempotencyKey: string | null,
): Promise<CheckoutJson> {
  const [row] = await tx<{ answer: CheckoutJson }[]>`
    select app.attach_payment_intent(
      ${checkoutId}::uuid, ${intent.id}, ${intent.clientSecret ?? ""}, ${idempotencyKey}
    ) as answer`;
  return row.answer;
}

/** The provider did not make the intent: cancel the checkout and free the key. */
export async function abandonCheckout(
  tx: Tx,
  checkoutId: string,
  idempotencyKey: string | null,
): Promise<void> {
  await tx`select app.abandon_checkout(${checkoutId}::uuid, ${idempotencyKey})`;
}

/**
 * The caller's own checkout awaiting payment, with its client secret (`app.checkout_payment`:
 * 404 for another's, 422 once paid, cancelled or past its reservation); `needsIntent` when no
 * PaymentIntent is attached yet.
 */
export async function checkoutPayment(tx: Tx, checkoutId: string): Promise<
  {
    checkout: CheckoutJson["checkout"];
    needsIntent: boolean;
    amount: number;
    currency: string;
  }
> {
  const [row] = await tx<
    { answer: CheckoutJson & { needsIntent: boolean; amount: number; currency: string } }[]
  >`select app.checkout_payment(${checkoutId}::uuid) as answer`;
  const { checkout, needsIntent, amount, currency } = row.answer;
  return { checkout, needsIntent, amount: Number(amount), currency };
}
