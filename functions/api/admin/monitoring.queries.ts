/**
 * Queries of /api/admin/security-events and /api/admin/access-logs (admin/monitoring.routes.ts).
 * Both lists are newest first by `created_at`, then `id` (the index `<table>_created_at_idx` is
 * on exactly that), and the cursor is that pair, so paging reaches every row once. The order
 * names the table's columns (`e.id`): a bare `id` there would be the `id::text` of the select
 * list, sorting "9" after "47" while the cursor compares numbers.
 */
import type { Tx } from "../../_shared/db.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";

/** Filters both lists take. */
export interface MonitoringFilters {
  userId?: string;
  ip?: string;
  from?: string;
  to?: string;
  /** The last row of the previous page: [created_at as text, id as text]. */
  after: [string, string] | null;
  limit: number;
}

interface SecurityEventRow {
  id: string;
  type: string;
  severity: "info" | "warning" | "critical";
  user_id: string | null;
  /** The user's profile name (null when the event names no user, or the account is gone). */
  user_name: string | null;
  ip: string | null;
  user_agent: string | null;
  details: Record<string, unknown>;
  created_at: Date;
  /** created_at with its microseconds (a JS Date drops them), for the cursor. */
  created_at_key: string;
}

/** Conditions both lists share; `tx` is the transaction they run in. */
function common(tx: Tx, f: MonitoringFilters) {
  return [
    ifGiven(f.userId, (id) => tx`user_id = ${id}::uuid`),
    ifGiven(f.ip, (ip) => tx`ip = ${ip}::inet`),
    ifGiven(f.from, (from) => tx`created_at >= ${from}::timestamptz`),
    ifGiven(f.to, (to) => tx`created_at < ${to}::timestamptz`),
    ifGiven(
      f.after,
      ([time, id]) => tx`(created_at, id) < (${time}::timestamptz, ${id}::bigint)`,
    ),
  ];
}

/** A page of security events, newest first. */
export async function listSecurityEvents(
  tx: Tx,
  f: MonitoringFilters & { type?: string; severity?: "info" | "warning" | "critical" },
) {
  const rows = await tx<SecurityEventRow[]>`
    select id::text, type, severity, user_id,
           (select u.name from app.users u where u.id = e.user_id) as user_name,
           host(ip) as ip, user_agent, details, created_at, created_at::text as created_at_key
    from app.security_events e
    ${
    where(tx, [
      ifGiven(f.type, (type) => tx`type = ${type}`),
      ifGiven(f.severity, (severity) => tx`severity = ${severity}::app.security_severity`),
      ...common(tx, f),
    ])
  }
    order by e.created_at desc, e.id desc
    limit ${pageLimit(f.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, f.limit, (r) => [r.created_at_key, r.id]);
  return {
    items: page.map((r) => ({
      id: r.id,
      type: r.type,
      severity: r.severity,
      userId: r.user_id,
      user: r.user_id ? { id: r.user_id, name: r.user_name } : null,
      ip: r.ip,
      userAgent: r.user_agent,
      details: r.details,
      createdAt: r.created_at.toISOString(),
    })),
    nextCursor,
  };
}

/**
 * The event types the log holds, alphabetically: one index probe per type (a loose index scan
 * over `security_events_type_idx`), however many events there are, so the admin's filter offers
 * exactly the types that can match, including ones written by SQL functions the server code
 * never names.
 */
export async function listSecurityEventTypes(tx: Tx): Promise<string[]> {
  const rows = await tx<{ type: string }[]>`
    with recursive types as (
      (select e.type from app.security_events e order by e.type limit 1)
      union all
      select (select e.type from app.security_events e
              where e.type > types.type order by e.type limit 1)
      from types where types.type is not null
    )
    select type from types where type is not null`;
  return rows.map((r) => r.type);
}

interface AccessLogRow {
  id: string;
  request_id: string;
  user_id: string | null;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  ip: string | null;
  created_at: Date;
  created_at_key: string;
}

/** An access log entry's type, the class of its status: the statuses each covers. */
const STATUS_RANGES = {
  success: [100, 299],
  redirect: [300, 399],
  client_error: [400, 499],
  server_error: [500, 599],
} as const satisfies Record<string, readonly [number, number]>;
export type AccessLogType = keyof typeof STATUS_RANGES;
export const ACCESS_LOG_TYPES = Object.keys(STATUS_RANGES) as [AccessLogType, ...AccessLogType[]];
const typeOfStatus = (status: number): AccessLogType =>
  ACCESS_LOG_TYPES.find((t) => status <= STATUS_RANGES[t][1]) ?? "server_error";

/** A page of the access log, newest first. */
export async function listAccessLogs(
  tx: Tx,
  f: MonitoringFilters & {
    type?: AccessLogType;
    route?: string;
    method?: string;
    status?: number;
  },
) {
  const rows = await tx<AccessLogRow[]>`
    select id::text, request_id, user_id, method, route, status, duration_ms, host(ip) as ip,
           created_at, created_at::text as created_at_key
    from app.access_logs e
    ${
    where(tx, [
      ifGiven(f.type, (type) => {
        const [low, high] = STATUS_RANGES[type];
        return tx`status between ${low}::int and ${high}::int`;
      }),
      ifGiven(f.route, (route) => tx`route = ${route}`),
      ifGiven(f.method, (method) => tx`method = ${method}`),
      ifGiven(f.status, (status) => tx`status = ${status}::int`),
      ...common(tx, f),
    ])
  }
    order by e.created_at desc, e.id desc
    limit ${pageLimit(f.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, f.limit, (r) => [r.created_at_key, r.id]);
  return {
    items: page.map((r) => ({
      id: r.id,
      type: typeOfStatus(r.status),
      requestId: r.request_id,
      userId: r.user_id,
      method: r.method,
      route: r.route,
      status: r.status,
      durationMs: r.duration_ms,
      ip: r.ip,
      createdAt: r.created_at.toISOString(),
    })),
    nextCursor,
  };
}
