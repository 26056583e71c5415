/**
 * /api/reports: a person reports a message, user, product or vendor to the moderators.
 * SUBSCRIBER and up; rate-limited per user (`AGORA_RATE_REPORTS_USER`, 10 an hour). What the
 * moderators do with it: /api/admin/reports (admin/reports.routes.ts). Queries:
 * moderation/reports.queries.ts; the rules are app.create_report's.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { enforceRateLimit } from "../core/rate-limits.ts";
import { rateRecorder } from "../core/rate-headers.ts";
import { createReport } from "./reports.queries.ts";
import { createdReportSchema, REASONS, subjectSchema } from "./reports.schemas.ts";

export const reports = router();

reports.use("*", requireRole("SUBSCRIBER"));

reports.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createReport",
    summary: "Report a message, user, product or vendor",
    description: "The subject must be one the caller can see (a message of a conversation " +
      "they are in, an active user, a catalog product or one of their own vendor's, an approved " +
      "vendor or their own); anything else is 404, like one that does not exist. One open " +
      "report per person and subject (409); nobody reports themselves (422). " +
      "10 reports per user per hour (429 beyond, `AGORA_RATE_REPORTS_USER`).",
    security: signedIn,
    request: {
      body: jsonBody(z.object({
        subject: subjectSchema,
        reason: z.enum(REASONS),
        note: z.string().trim().max(1000).optional(),
      })),
    },
    responses: {
      201: json(createdReportSchema, "The report, open"),
      ...errors(400, 401, 403, 404, 409, 422, 429),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const user = c.get("user")!;
    await enforceRateLimit(
      c.get("deps"),
      { ip: c.get("ip"), userAgent: c.get("userAgent"), rate: rateRecorder(c) },
      {
        bucket: `reports:user:${user.id}`,
        rule: c.get("deps").settings.rateLimits.reportsPerUser,
        group: "reports",
        userId: user.id,
      },
    );
    const created = await asUser(c, (tx) => createReport(tx, body));
    return c.json(created, 201);
  },
);
