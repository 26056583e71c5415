/**
 * Security monitoring: /api/admin/security-events and /api/admin/access-logs, newest first by
 * `createdAt` (then `id`), keyset-paginated, filterable by type, user, ip and time (the access
 * log's type is the class of its status; it also filters by route, method and status).
 * ADMIN only (the gate is on the admin router, admin/admin.routes.ts). Queries:
 * admin/monitoring.queries.ts.
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
import {
  ACCESS_LOG_TYPES,
  listAccessLogs,
  listSecurityEvents,
  listSecurityEventTypes,
} from "./monitoring.queries.ts";

export const adminMonitoring = router();

const ipParam = z.union([z.ipv4(), z.ipv6()]).openapi({
  // Written out: the generator gives both branches the same non-standard format "ip".
  type: "string",
  anyOf: [{ format: "ipv4" }, { format: "ipv6" }],
  description: "An IPv4 or IPv6 address",
});
const commonFilters = {
  userId: z.uuid().optional(),
  ip: ipParam.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  limit: limitParam,
  cursor: z.string().max(200).optional(),
};

const securityEvent = z.object({
  id: z.string(),
  type: z.string(),
  severity: z.enum(["info", "warning", "critical"]),
  userId: z.uuid().nullable(),
  user: z.object({ id: z.uuid(), name: z.string().nullable() }).nullable().openapi({
    description: "The user the event is about, with their profile name (null: no user; a null " +
      "name: the account was deleted)",
  }),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime(),
}).openapi("SecurityEvent");

adminMonitoring.openapi(
  createRoute({
    method: "get",
    path: "/security-events/types",
    operationId: "listSecurityEventTypes",
    summary: "The security event types the log holds",
    description: "Every distinct `type` of the stored events, alphabetically: the values the " +
      "`type` filter of the list can match.",
    security: signedIn,
    responses: {
      200: json(z.object({ types: z.array(z.string()) }), "The types"),
      ...errors(401, 403, 429),
    },
  }),
  async (c) => {
    const types = await asUser(c, (tx) => listSecurityEventTypes(tx));
    return c.json({ types }, 200);
  },
);

adminMonitoring.openapi(
  createRoute({
    method: "get",
    path: "/security-events",
    operationId: "listSecurityEvents",
    summary: "Security events, newest first",
    security: signedIn,
    request: {
      query: z.object({
        type: z.string().max(100).optional(),
        severity: z.enum(["info", "warning", "critical"]).optional(),
        ...commonFilters,
      }),
    },
    responses: {
      200: json(pageOf(securityEvent), "A page of events"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const page = await asUser(
      c,
      (tx) => listSecurityEvents(tx, { ...q, after: timeIdCursor(q.cursor) }),
    );
    return c.json(page, 200);
  },
);

/** An access log entry's type: the class of its status. */
const accessLogType = z.enum(ACCESS_LOG_TYPES);

const accessLog = z.object({
  id: z.string(),
  type: accessLogType.openapi({
    description: "The class of `status`: success 1xx-2xx, redirect 3xx, client_error 4xx, " +
      "server_error 5xx",
  }),
  requestId: z.string(),
  userId: z.uuid().nullable(),
  method: z.string(),
  route: z.string(),
  status: z.number().int(),
  durationMs: z.number(),
  ip: z.string().nullable(),
  createdAt: z.iso.datetime(),
}).openapi("AccessLog");

adminMonitoring.openapi(
  createRoute({
    method: "get",
    path: "/access-logs",
    operationId: "listAccessLogs",
    summary: "Access log of /api requests, newest first",
    description: "`route` is the matched route pattern, e.g. `/api/admin/users/:id/role`; " +
      "`type` the class of the status (`success`, `redirect`, `client_error`, `server_error`).",
    security: signedIn,
    request: {
      query: z.object({
        type: accessLogType.optional(),
        route: z.string().max(200).optional(),
        method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]).optional(),
        status: z.coerce.number().int().min(100).max(599).optional(),
        ...commonFilters,
      }),
    },
    responses: {
      200: json(pageOf(accessLog), "A page of log entries"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const page = await asUser(
      c,
      (tx) => listAccessLogs(tx, { ...q, after: timeIdCursor(q.cursor) }),
    );
    return c.json(page, 200);
  },
);
