/**
 * /api/admin/reports: the moderation queue and the resolution of a report. ADMIN only (the gate
 * is on the admin router, admin/admin.routes.ts). Queries: admin/reports.queries.ts; the rules
 * of a resolution are app.resolve_report's.
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
import { listReports, resolveReport } from "./reports.queries.ts";
import {
  ACTIONS,
  adminReportSchema,
  REPORT_STATUSES,
  SUBJECT_TYPES,
} from "../moderation/reports.schemas.ts";

export const adminReports = router();

adminReports.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listReports",
    summary: "The moderation queue: reports of one status, oldest first",
    description: "`status` defaults to `open`. Each report carries the subject's snapshot (as " +
      "it was when first reported) and `reportCount`, the open reports on the same subject.",
    security: signedIn,
    request: {
      query: z.object({
        status: z.enum(REPORT_STATUSES).default("open"),
        type: z.enum(SUBJECT_TYPES).optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(pageOf(adminReportSchema), "A page of reports"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const page = await asUser(c, (tx) => listReports(tx, { ...q, after }));
    return c.json(page, 200);
  },
);

adminReports.openapi(
  createRoute({
    method: "put",
    path: "/{id}",
    operationId: "resolveReport",
    summary: "Resolve a report: dismiss it, or act on it",
    description: "Resolves every open report on the same subject. `action` needs `status: " +
      "actioned` and must fit the subject (`delete_message` a message, `suspend_user` a user " +
      "or a message's sender, `hide_product` a product; 422 otherwise); the domain's own rules " +
      "apply (an ADMIN cannot suspend themselves: 422). The action, the security event " +
      "`moderation.report_resolved` and each reporter's SYSTEM notification commit with the " +
      "resolution or not at all. A report already resolved is 409.",
    security: signedIn,
    request: {
      params: z.object({ id: z.uuid() }),
      body: jsonBody(z.object({
        status: z.enum(["dismissed", "actioned"]),
        action: z.enum(ACTIONS).optional(),
        note: z.string().trim().min(1).max(1000),
      })),
    },
    responses: {
      200: json(adminReportSchema, "The resolved report"),
      ...errors(400, 401, 403, 404, 409, 422, 429),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const report = await asUser(
      c,
      (tx) => resolveReport(tx, id, body, { ip: c.get("ip"), userAgent: c.get("userAgent") }),
    );
    return c.json(report, 200);
  },
);
