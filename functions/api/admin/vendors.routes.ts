/**
 * /api/admin/vendors: every vendor application and vendor, and the ADMIN's decisions (approve,
 * reject, suspend, reinstate, commission). ADMIN only (the gate of admin/admin.routes.ts).
 * Queries: admin/vendors.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  errors,
  json,
  jsonBody,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { listAdminVendors, setVendorStatus } from "./vendors.queries.ts";
import { vendorSchema } from "../store/store.schemas.ts";

export const adminVendors = router();

adminVendors.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listAllVendors",
    summary: "Vendors and applications, newest first",
    description: "With the owner's fields and the decision history. `search` matches the name " +
      "or the contact e-mail.",
    security: signedIn,
    request: {
      query: z.object({
        status: z.enum(["pending", "approved", "rejected", "suspended"]).optional(),
        search: z.string().trim().min(1).max(200).optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(pageOf(vendorSchema), "A page of vendors"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    return c.json(await asUser(c, (tx) => listAdminVendors(tx, { ...q, after })), 200);
  },
);

adminVendors.openapi(
  createRoute({
    method: "put",
    path: "/{id}/status",
    operationId: "setVendorStatus",
    summary: "Decide on a vendor",
    description: "approve (a pending or suspended vendor), reject (a pending one), suspend (an " +
      "approved one), always with a reason, recorded in the vendor's history; `commissionBps` " +
      "sets the vendor's own commission (with the same status, it changes only that). A move " +
      "the vendor's status does not allow is 422 `invalid_transition`. A suspended vendor's " +
      "products leave the catalog and it cannot sell. The owner gets `vendor.status_changed`.",
    security: signedIn,
    request: {
      params: z.object({ id: z.uuid() }),
      body: jsonBody(z.object({
        status: z.enum(["approved", "rejected", "suspended"]),
        reason: z.string().trim().min(1).max(1000),
        commissionBps: z.number().int().min(0).max(10_000).optional(),
      })),
    },
    responses: {
      200: json(vendorSchema, "The vendor"),
      ...errors(400, 401, 403, 404, 413, 415, 422, 429),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return c.json(await asUser(c, (tx) => setVendorStatus(tx, id, body)), 200);
  },
);
