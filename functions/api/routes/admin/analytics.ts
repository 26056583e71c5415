/** /api/admin/analytics: platform figures from real data. ADMIN only (see app.ts). */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, router, signedIn } from "../../openapi.ts";
import { type Tx, withUser } from "../../../_shared/db.ts";
import { badRequest } from "../../../_shared/errors.ts";
import { claimsOf } from "../../session-claims.ts";

export const adminAnalytics = router();

const MAX_POINTS = 400;
const DAY = 86_400_000;
const series = z.array(z.object({ t: z.iso.datetime(), value: z.number() }));

const query = z.object({
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  interval: z.enum(["day", "week", "month"]).default("day"),
});

type Point = { t: string; value: number };

/** A gap-free series: one point per bucket from `from` to `to`, zero where nothing happened. */
async function bucketed(
  tx: Tx,
  interval: string,
  from: Date,
  to: Date,
  source: "signups" | "active" | "signins",
): Promise<Point[]> {
  const rows = await tx<{ t: Date; value: number }[]>`
    with buckets as (
      select generate_series(date_trunc(${interval}, ${from}::timestamptz, 'UTC'),
                             ${to}::timestamptz, ('1 ' || ${interval})::interval) as t
    ), facts as (
      select date_trunc(${interval}, created_at, 'UTC') as t, count(*)::int as value
        from app.users where ${source} = 'signups' and created_at >= ${from} and created_at < ${to}
        group by 1
      union all
      select date_trunc(${interval}, created_at, 'UTC'), count(*)::int
        from app.security_events
        where ${source} = 'signins' and type = 'auth.signin' and created_at >= ${from} and created_at < ${to}
        group by 1
      union all
      select t, count(distinct user_id)::int from (
        select date_trunc(${interval}, created_at, 'UTC') as t, user_id from app.sessions
          where created_at >= ${from} and created_at < ${to}
        union all
        select date_trunc(${interval}, refreshed_at, 'UTC'), user_id from app.sessions
          where refreshed_at >= ${from} and refreshed_at < ${to}
        union all
        select date_trunc(${interval}, created_at, 'UTC'), user_id from app.access_logs
          where user_id is not null and created_at >= ${from} and created_at < ${to}
      ) activity where ${source} = 'active' group by t
    )
    select b.t, coalesce(sum(f.value), 0)::int as value
    from buckets b left join facts f on f.t = b.t
    group by b.t order by b.t`;
  return rows.map((r) => ({ t: r.t.toISOString(), value: r.value }));
}

/** Counts across every conversation, through the ADMIN-checked aggregate function. */
async function messagingStats(tx: Tx, interval: string, from: Date, to: Date) {
  const [row] = await tx<
    { stats: { totals: { conversations: number; messages: number }; [k: string]: unknown } }[]
  >`
    select app.admin_messaging_stats(${interval}, ${from}, ${to}) as stats`;
  const series = (name: string) =>
    (row.stats[name] as { t: string; value: number }[]).map((p) => ({
      t: new Date(p.t).toISOString(),
      value: p.value,
    }));
  return {
    totals: row.stats.totals,
    messages: series("messages"),
    activeSenders: series("activeSenders"),
    conversationsCreated: series("conversationsCreated"),
  };
}

adminAnalytics.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "getAnalytics",
    summary: "Platform analytics over a time range",
    description: "Defaults: the last 30 days by day. Series are `[{ t, value }]`, one point per " +
      "interval, zero-filled. Active users are distinct users who signed in, refreshed or made " +
      "a request in the interval. Messaging counts messages (deleted ones included in the series), " +
      "active senders and new conversations across the platform; store, wallet and " +
      "notifications fill in as those domains land.",
    security: signedIn,
    request: { query },
    responses: {
      200: json(
        z.object({
          range: z.object({ from: z.iso.datetime(), to: z.iso.datetime(), interval: z.string() }),
          users: z.object({
            total: z.number(),
            byRole: z.record(z.string(), z.number()),
            byStatus: z.record(z.string(), z.number()),
            signups: series,
          }),
          activity: z.object({ activeUsers: series, signIns: series }),
          messaging: z.object({
            totals: z.object({ conversations: z.number(), messages: z.number() }),
            messages: series,
            activeSenders: series,
            conversationsCreated: series,
          }),
          store: z.record(z.string(), z.unknown()),
          wallet: z.record(z.string(), z.unknown()),
          notifications: z.record(z.string(), z.unknown()),
        }),
        "Analytics",
      ),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const to = q.to ? new Date(q.to) : new Date();
    const from = q.from ? new Date(q.from) : new Date(to.getTime() - 30 * DAY);
    const stepDays = { day: 1, week: 7, month: 28 }[q.interval];
    if (from >= to) {
      throw badRequest("`from` must be before `to`.", [{ path: "from", message: "after to" }]);
    }
    if ((to.getTime() - from.getTime()) / (stepDays * DAY) > MAX_POINTS) {
      throw badRequest(`The range has more than ${MAX_POINTS} ${q.interval}s.`, [
        { path: "interval", message: "use a longer interval or a shorter range" },
      ]);
    }
    const user = c.get("user")!;
    const body = await withUser(c.get("deps").sql, claimsOf(user), async (tx) => {
      const byRoleRows = await tx<{ key: string; value: number }[]>`
        select role::text as key, count(*)::int as value from app.users group by role`;
      const byStatusRows = await tx<{ key: string; value: number }[]>`
        select status::text as key, count(*)::int as value from app.users group by status`;
      const byRole = Object.fromEntries(
        ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"].map((r) => [r, 0]),
      );
      for (const r of byRoleRows) byRole[r.key] = r.value;
      const byStatus: Record<string, number> = { active: 0, suspended: 0 };
      for (const r of byStatusRows) byStatus[r.key] = r.value;
      return {
        range: { from: from.toISOString(), to: to.toISOString(), interval: q.interval },
        users: {
          total: Object.values(byStatus).reduce((a, b) => a + b, 0),
          byRole,
          byStatus,
          signups: await bucketed(tx, q.interval, from, to, "signups"),
        },
        activity: {
          activeUsers: await bucketed(tx, q.interval, from, to, "active"),
          signIns: await bucketed(tx, q.interval, from, to, "signins"),
        },
        messaging: await messagingStats(tx, q.interval, from, to),
        store: {},
        wallet: {},
        notifications: {},
      };
    });
    return c.json(body, 200);
  },
);
