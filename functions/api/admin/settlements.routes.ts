/**
 * /api/admin/settlements: every settlement, and the daily settlement run now. ADMIN only (the
 * gate of admin/admin.routes.ts). Queries: admin/settlements.queries.ts.
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
import { listSettlements, runSettlements } from "./settlements.queries.ts";
import { settlementSchema } from "../store/store.schemas.ts";

export const adminSettlements = router();

adminSettlements.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listSettlements",
    summary: "Settlements, newest first",
    security: signedIn,
    request: {
      query: z.object({
        vendorId: z.uuid().optional(),
        status: z.enum(["pending", "paid", "held", "failed"]).optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(pageOf(settlementSchema), "A page of settlements"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    return c.json(await asUser(c, (tx) => listSettlements(tx, { ...q, after })), 200);
  },
);

adminSettlements.openapi(
  createRoute({
    method: "post",
    path: "/run",
    operationId: "runSettlements",
    summary: "Run the daily settlement now",
    description: "Settles, per vendor, the orders delivered or completed (and paid) at or before " +
      "`asOf` (default now; later is taken as now) that no run settled yet, deducts refunds of " +
      "orders settled earlier, and queues the payouts. Running it again settles nothing twice; " +
      "a run while another is in progress is 409.",
    security: signedIn,
    request: {
      body: {
        required: false,
        content: {
          "application/json": {
            schema: z.object({ asOf: z.iso.datetime({ offset: true }).optional() }),
          },
        },
      },
    },
    responses: {
      200: json(
        z.object({
          runId: z.uuid(),
          settlements: z.array(settlementSchema),
          orders: z.number().int(),
        }),
        "What the run settled",
      ),
      ...errors(400, 401, 403, 409, 413, 415, 429),
    },
  }),
  async (c) => {
    const body = c.req.valid("json") ?? {};
    return c.json(await asUser(c, (tx) => runSettlements(tx, body.asOf ?? null)), 200);
  },
);
