/**
 * /api/store/orders: checkout (one order per vendor, server prices, stock reserved, a payment
 * intent), the caller's orders as buyer or vendor, one order, and the state machine's moves.
 * SUBSCRIBER and above (the gate below); RLS shows an order to its buyer, its vendor's owner and
 * ADMINs (404 for everyone else). Queries: store/orders.queries.ts; the checkout around the
 * payment provider: store/checkout.ts. /api/store/checkouts (the `checkouts` router below): the
 * payment of the caller's own checkout, to pay it from any tab or device.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  errors,
  errorSchema,
  json,
  jsonBody,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { sha256Hex } from "../../_shared/crypto.ts";
import { asUser, callerClaims } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { changeOrderStatus, getOrder, listOrders } from "./orders.queries.ts";
import { checkout, resumePayment } from "./checkout.ts";
import { addressSchema, checkoutSchema, orderSchema, orderStatus } from "./store.schemas.ts";

export const orders = router();

orders.use("*", requireRole("SUBSCRIBER"));

// GET /api/store/orders ------------------------------------------------------------------------

orders.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listOrders",
    summary: "The caller's orders, newest first",
    description: "`as=buyer` (default): the caller's purchases; `as=vendor`: the orders of the " +
      "caller's vendor (403 without one).",
    security: signedIn,
    request: {
      query: z.object({
        as: z.enum(["buyer", "vendor"]).default("buyer"),
        status: orderStatus.optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: { 200: json(pageOf(orderSchema), "A page of orders"), ...errors(400, 401, 403) },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    return c.json(await asUser(c, (tx) => listOrders(tx, { ...q, after })), 200);
  },
);

// GET /api/store/orders/:id --------------------------------------------------------------------

orders.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getOrder",
    summary: "One order",
    description: "Its buyer, its vendor's owner and ADMINs; 404 for everyone else.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: { 200: json(orderSchema, "The order"), ...errors(400, 401, 403, 404) },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => getOrder(tx, id)), 200);
  },
);

// POST /api/store/orders -----------------------------------------------------------------------

const checkoutBody = z.object({
  items: z.array(z.object({
    productId: z.uuid(),
    quantity: z.number().int().min(1).max(1000),
  })).min(1).max(50),
  shipping: z.object({ address: addressSchema.optional() }).optional(),
}).openapi({
  description: "Prices and totals sent by a client are ignored: the server's prices are used.",
});

orders.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "checkOut",
    summary: "Check out: one order per vendor, stock reserved, a payment intent",
    description: "Prices come from the server. Stock is reserved for `store.reservationMinutes`; " +
      "pay with the PaymentIntent's client secret (Stripe), or locally with " +
      "`POST /_dev/payments/<paymentIntentId>/succeed` (the `dev` provider). 422 " +
      "`insufficient_stock` (details: the items short), 422 for a product that is not an " +
      "active product of an approved vendor. With `Idempotency-Key`, the same key and body " +
      "replay the first answer; another body is 409. 503 `payment_provider_unavailable` when " +
      "the provider does not answer (nothing is ordered then).",
    security: signedIn,
    request: {
      headers: z.object({ "idempotency-key": z.string().min(1).max(255).optional() }),
      body: jsonBody(checkoutBody),
    },
    responses: {
      201: json(checkoutSchema, "The checkout"),
      ...errors(400, 401, 403, 409, 413, 415, 422),
      503: json(errorSchema, "payment_provider_unavailable: the provider does not answer"),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const key = c.req.valid("header")["idempotency-key"] ?? null;
    const items = body.items.map((i) => ({ productId: i.productId, quantity: i.quantity }));
    const address = body.shipping?.address ?? null;
    const hash = key ? await sha256Hex(JSON.stringify([items, address])) : null;
    const answer = await checkout(c.get("deps"), callerClaims(c), (fn) => asUser(c, fn), {
      buyerId: c.get("user")!.id,
      items,
      address,
      idempotencyKey: key,
      requestHash: hash,
    });
    return c.json(answer, 201);
  },
);

// PUT /api/store/orders/:id/status -------------------------------------------------------------

orders.openapi(
  createRoute({
    method: "put",
    path: "/{id}/status",
    operationId: "changeOrderStatus",
    summary: "Move an order",
    description: "The contract's state machine: an order the caller cannot see is 404; a status " +
      "the caller may never set is 403 (a buyer shipping); a move the current status does not " +
      "allow is 422 `invalid_transition` (details: `allowed`); shipping needs `trackingNumber` " +
      "(400). Cancelling an unpaid order cancels its whole checkout; cancelling a paid one and " +
      "refunding refund the payment and put the stock back.",
    security: signedIn,
    request: {
      params: z.object({ id: z.uuid() }),
      body: jsonBody(z.object({
        status: orderStatus,
        reason: z.string().trim().max(1000).optional(),
        trackingNumber: z.string().trim().min(1).max(100).optional(),
        carrier: z.string().trim().min(1).max(100).optional(),
      })),
    },
    responses: {
      200: json(orderSchema, "The order"),
      ...errors(400, 401, 403, 404, 413, 415, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return c.json(await asUser(c, (tx) => changeOrderStatus(tx, id, body)), 200);
  },
);

// POST /api/store/checkouts/:id/payment -------------------------------------------------------

export const checkouts = router();

checkouts.use("*", requireRole("SUBSCRIBER"));

checkouts.openapi(
  createRoute({
    method: "post",
    path: "/{id}/payment",
    operationId: "resumeCheckoutPayment",
    summary: "The payment of one's own unpaid checkout, to pay it from anywhere",
    description: "For the buyer of a checkout whose orders await payment, while its " +
      "reservation lasts (`reservedUntil`): the checkout as `POST /api/store/orders` answered " +
      "it, with the payment's client secret (Stripe) or its intent id (the `dev` provider), so " +
      "another tab or device, or the same after the tab closed, can pay it. A declined " +
      "payment can be tried again. When the checkout has no PaymentIntent yet (its first " +
      "request died before it), it is made now with the same provider idempotency key " +
      "(`checkout:<id>`): asking again, or concurrently, answers the same intent. 404 for " +
      "another person's checkout; 422 `invalid_transition` once it is paid, cancelled or its " +
      "reservation ran out; 503 `payment_provider_unavailable` when the provider does not " +
      "answer.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(checkoutSchema, "The checkout with its payment"),
      ...errors(400, 401, 403, 404, 422),
      503: json(errorSchema, "payment_provider_unavailable: the provider does not answer"),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const answer = await resumePayment(c.get("deps"), (fn) => asUser(c, fn), {
      buyerId: c.get("user")!.id,
      checkoutId: id,
    });
    c.header("Cache-Control", "no-store");
    return c.json(answer, 200);
  },
);
