/**
 * Security monitoring: /api/admin/security-events and /api/admin/access-logs, newest first,
 * keyset-paginated, filterable by type (or route), user, ip and time. ADMIN only (see app.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  decodeCursor,
  encodeCursor,
  errors,
  json,
  limitParam,
  router,
  signedIn,
} from "../../openapi.ts";
import { withUser } from "../../../_shared/db.ts";
import { claimsOf } from "../../session-claims.ts";

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

const page = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

const securityEvent = z.object({
  id: z.string(),
  type: z.string(),
  severity: z.enum(["info", "warning", "critical"]),
  userId: z.uuid().nullable(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  createdAt: z.iso.datetime(),
}).openapi("SecurityEvent");

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
      200: json(page(securityEvent), "A page of events"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const before = q.cursor ? String(decodeCursor(q.cursor, ["string"])[0]) : null;
    const rows = await withUser(c.get("deps").sql, claimsOf(c.get("user")!), (tx) =>
      tx<{
        id: string;
        type: string;
        severity: "info" | "warning" | "critical";
        user_id: string | null;
        ip: string | null;
        user_agent: string | null;
        details: Record<string, unknown>;
        created_at: Date;
      }[]>`
        select id::text, type, severity, user_id, host(ip) as ip, user_agent, details, created_at
        from app.security_events
        where (${q.type ?? null}::text is null or type = ${q.type ?? null})
          and (${q.severity ?? null}::app.security_severity is null or severity = ${
        q.severity ?? null
      })
          and (${q.userId ?? null}::uuid is null or user_id = ${q.userId ?? null})
          and (${q.ip ?? null}::inet is null or ip = ${q.ip ?? null}::inet)
          and (${q.from ?? null}::timestamptz is null or created_at >= ${q.from ?? null})
          and (${q.to ?? null}::timestamptz is null or created_at < ${q.to ?? null})
          and (${before}::bigint is null or id < ${before}::bigint)
        order by id desc
        limit ${q.limit + 1}`);
    const items = rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      type: r.type,
      severity: r.severity,
      userId: r.user_id,
      ip: r.ip,
      userAgent: r.user_agent,
      details: r.details,
      createdAt: r.created_at.toISOString(),
    }));
    const nextCursor = rows.length > q.limit ? encodeCursor([items[items.length - 1].id]) : null;
    return c.json({ items, nextCursor }, 200);
  },
);

const accessLog = z.object({
  id: z.string(),
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
    description: "`route` is the matched route pattern, e.g. `/api/admin/users/:id/role`.",
    security: signedIn,
    request: {
      query: z.object({
        route: z.string().max(200).optional(),
        method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]).optional(),
        status: z.coerce.number().int().min(100).max(599).optional(),
        ...commonFilters,
      }),
    },
    responses: {
      200: json(page(accessLog), "A page of log entries"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const before = q.cursor ? String(decodeCursor(q.cursor, ["string"])[0]) : null;
    const rows = await withUser(c.get("deps").sql, claimsOf(c.get("user")!), (tx) =>
      tx<{
        id: string;
        request_id: string;
        user_id: string | null;
        method: string;
        route: string;
        status: number;
        duration_ms: number;
        ip: string | null;
        created_at: Date;
      }[]>`
        select id::text, request_id, user_id, method, route, status, duration_ms, host(ip) as ip, created_at
        from app.access_logs
        where (${q.route ?? null}::text is null or route = ${q.route ?? null})
          and (${q.method ?? null}::text is null or method = ${q.method ?? null})
          and (${q.status ?? null}::int is null or status = ${q.status ?? null})
          and (${q.userId ?? null}::uuid is null or user_id = ${q.userId ?? null})
          and (${q.ip ?? null}::inet is null or ip = ${q.ip ?? null}::inet)
          and (${q.from ?? null}::timestamptz is null or created_at >= ${q.from ?? null})
          and (${q.to ?? null}::timestamptz is null or created_at < ${q.to ?? null})
          and (${before}::bigint is null or id < ${before}::bigint)
        order by id desc
        limit ${q.limit + 1}`);
    const items = rows.slice(0, q.limit).map((r) => ({
      id: r.id,
      requestId: r.request_id,
      userId: r.user_id,
      method: r.method,
      route: r.route,
      status: r.status,
      durationMs: r.duration_ms,
      ip: r.ip,
      createdAt: r.created_at.toISOString(),
    }));
    const nextCursor = rows.length > q.limit ? encodeCursor([items[items.length - 1].id]) : null;
    return c.json({ items, nextCursor }, 200);
  },
);
