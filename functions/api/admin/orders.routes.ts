/**
 * /api/admin/orders: every order with its payment and refund, for the ADMIN's view of orders,
 * payments and refunds (web: /admin/orders). ADMIN only (the gate of admin/admin.routes.ts).
 * Queries: admin/orders.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  errors,
  json,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { money, orderSchema, orderStatus } from "../store/store.schemas.ts";
import { listAdminOrders } from "./orders.queries.ts";

const time = z.string().openapi({ format: "date-time" });
const paymentStatus = z.enum(["pending", "succeeded", "failed", "refunded"]);
const refundStatus = z.enum(["pending", "succeeded", "failed"]);

export const adminOrderSchema = orderSchema.extend({
  checkout: z.object({
    id: z.uuid(),
    provider: z.enum(["stripe", "dev"]),
    paymentIntentId: z.string().nullable(),
    paymentStatus,
    total: money,
    reservedUntil: time,
  }).openapi({ description: "The checkout the order was paid in, with its payment" }),
  refund: z.object({
    id: z.uuid(),
    status: refundStatus,
    amount: money,
    reason: z.string().nullable(),
    providerRefundId: z.string().nullable(),
    failureReason: z.string().nullable(),
    createdAt: time,
    succeededAt: time.nullable(),
  }).nullable().openapi({ description: "The refund owed for the order, if any" }),
}).openapi("AdminOrder");

export type AdminOrderJson = z.infer<typeof adminOrderSchema>;

export const adminOrders = router();

adminOrders.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listAdminOrders",
    summary: "Every order with its payment and refund, newest first",
    description: "Filters: the order's `status`, its `paymentStatus`, its refund's " +
      "`refundStatus` (`failed`: a refund the provider refused, which an operator must look " +
      "at), `vendorId`, `buyerId`. Keyset pages (`cursor`), stable under new orders.",
    security: signedIn,
    request: {
      query: z.object({
        status: orderStatus.optional(),
        paymentStatus: paymentStatus.optional(),
        refundStatus: refundStatus.optional(),
        vendorId: z.uuid().optional(),
        buyerId: z.uuid().optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(pageOf(adminOrderSchema), "A page of orders"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    return c.json(await asUser(c, (tx) => listAdminOrders(tx, { ...q, after })), 200);
  },
);
