/**
 * The administration rows of the growth benchmark (issue 30, "A year of data"): the users list
 * (its counts by role and a page), a user search matching nobody and one matching one person,
 * the access log's first page and its route filter, the analytics page, and a claim of the job
 * queue holding done jobs.
 *
 * The seed is the review's large size divided by ten at scale 10: 1,000,000 access-log rows over
 * the last 30 days (100,000 × scale; one route in 5,000 is the rare `/api/admin/config`), 100,000
 * security events (10,000 × scale), a session per user made in the last 30 days, and the job
 * queue's done jobs at the review's own count at scale 10 (100,000 × scale: 1,000,000) with 20
 * due jobs to claim. After every seed, the analytics rollups are recounted from what the seeds
 * wrote (`settle`): the analytics sections read them at both sizes.
 */
import { listUsers } from "../../../functions/api/admin/users.queries.ts";
import { listAccessLogs } from "../../../functions/api/admin/monitoring.queries.ts";
import {
  messagingStats,
  platformAnalytics,
  storeStats,
  userStats,
  walletStats,
} from "../../../functions/api/admin/analytics.queries.ts";
import type { Tx } from "../../../functions/_shared/db.ts";
import { notificationAnalytics } from "../../../functions/api/notifications/notifications.queries.ts";
import { claimJobs } from "../../../functions/api/core/job-queue.ts";
import { personId } from "./people.ts";
import type { GrowthContext, GrowthDomain, GrowthOperation } from "./types.ts";

const RARE_ROUTE = "/api/admin/config";
const BENCH_KIND = "growth.bench";
const DAY = 86_400_000;

function expect(condition: boolean, what: string): void {
  if (!condition) throw new Error(`unexpected result: ${what}`);
}

async function seed(ctx: GrowthContext): Promise<void> {
  const { sql, scale, people } = ctx;
  const logs = 100_000 * scale;
  const users = people.count;
  // The days the rows fall in get their partitions first (the hourly job makes them ahead).
  await sql`
    select app_private.ensure_daily_partitions('app.access_logs',
      ((now() - interval '31 days') at time zone 'UTC')::date,
      ((now() + interval '7 days') at time zone 'UTC')::date)`;
  await sql.unsafe(`
    insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
    select 'growth-' || i,
      case when i % 10 < 7 then ${personId(`(i::bigint * 7919) % ${users}`)} end,
      case when i % 5 = 0 then 'POST' else 'GET' end,
      case when i % 5000 = 0 then '${RARE_ROUTE}' else '/api/route-' || (i % 40) end,
      case when i % 100 = 0 then 500 when i % 20 = 0 then 404 else 200 end,
      (i % 300)::real / 10,
      ('10.' || (i % 250) || '.' || (i % 200) || '.1')::inet,
      now() - (i::float / ${logs}) * interval '30 days'
    from generate_series(1, ${logs}) i`);
  await sql.unsafe(`
    insert into app.security_events (type, severity, user_id, ip, details, created_at)
    select case when i % 10 < 8 then 'auth.signin' else 'auth.refresh_reuse' end,
      (case when i % 10 < 8 then 'info' else 'warning' end)::app.security_severity,
      ${personId(`(i::bigint * 104729) % ${users}`)}, '10.0.0.1'::inet, '{}'::jsonb,
      now() - (i::float / ${10_000 * scale}) * interval '365 days'
    from generate_series(1, ${10_000 * scale}) i`);
  await sql.unsafe(`
    insert into app.sessions (user_id, provider, created_at, refreshed_at, expires_at)
    select ${personId("i")}, 'email',
      now() - ((i * 7) % 30) * interval '1 day',
      case when i % 3 = 0 then now() - ((i * 7) % 30) * interval '1 day' + interval '2 hours' end,
      now() + interval '7 days'
    from generate_series(3, ${users - 1}) i`);
  await sql.unsafe(`
    insert into app_private.jobs (kind, payload, state, run_at, attempts, created_at, started_at, finished_at)
    select 'growth.done.' || (i % 8), '{}'::jsonb, 'done', t, 1, t, t, t + interval '1 second'
    from generate_series(1, ${100_000 * scale}) i,
         lateral (select now() - interval '2 days' * (i::float / ${100_000 * scale}) as t) x`);
  await sql`
    insert into app_private.jobs (kind, payload, run_at)
    select ${BENCH_KIND}, '{}'::jsonb, now() - interval '1 minute' from generate_series(1, 20)`;
  await sql`select app_private.recount_users()`;
  // What agora-compact-counters does every minute.
  await sql`select app_private.compact_counters()`;
  for (
    const table of ["app.access_logs", "app.security_events", "app.sessions", "app_private.jobs"]
  ) {
    await sql.unsafe(`analyze ${table}`);
  }
}

/** The analytics page's default range: the last 30 days, by day. */
function lastMonth(): [Date, Date] {
  const to = new Date();
  return [new Date(to.getTime() - 30 * DAY), to];
}

/** Each section of GET /api/admin/analytics, measured on its own (the page is their sum). */
const analyticsSections: [string, (tx: Tx, from: Date, to: Date) => Promise<unknown>][] = [
  ["users and activity", (tx, from, to) => userStats(tx, "day", from, to)],
  ["messaging", (tx, from, to) => messagingStats(tx, "day", from, to)],
  ["wallet", (tx, from, to) => walletStats(tx, "day", from, to)],
  ["store", (tx, from, to) => storeStats(tx, "day", from, to)],
  [
    "notifications",
    (tx, from, to) => notificationAnalytics(tx, { from, to, interval: "day" }),
  ],
];

function operations(ctx: GrowthContext): Promise<GrowthOperation[]> {
  const admin = ctx.people.admin;
  const page = { after: null, limit: 20 } as const;
  return Promise.resolve([
    {
      name: "users list: counts by role + first page",
      endpoint: "GET /api/admin/users",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const r = await listUsers(tx, page);
        expect(r.items.length === 20 && r.counts.total >= ctx.people.count, "20, of every user");
      },
    },
    {
      name: "users list: role=VISITOR, first page",
      endpoint: "GET /api/admin/users?role=VISITOR",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const r = await listUsers(tx, { ...page, role: "VISITOR" });
        expect(r.items.length === 20 && r.items.every((u) => u.role === "VISITOR"), "visitors");
      },
    },
    {
      name: "user search, no match",
      endpoint: "GET /api/admin/users?search=",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const r = await listUsers(tx, { ...page, search: "nobody-zqxj" });
        expect(r.items.length === 0 && r.counts.total === 0, "no match");
      },
    },
    {
      name: "user search, one match",
      endpoint: "GET /api/admin/users?search=",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const r = await listUsers(tx, { ...page, search: "person4242@growth" });
        expect(r.items.length === 1, "one person");
      },
    },
    {
      name: "access log: first page",
      endpoint: "GET /api/admin/access-logs",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const r = await listAccessLogs(tx, { after: null, limit: 50 });
        expect(r.items.length === 50, "50 entries");
      },
    },
    {
      name: "access log: route filter (1 request in 5,000)",
      endpoint: "GET /api/admin/access-logs?route=",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const r = await listAccessLogs(tx, { after: null, limit: 50, route: RARE_ROUTE });
        expect(r.items.length > 0 && r.items.every((e) => e.route === RARE_ROUTE), "the route");
      },
    },
    ...analyticsSections.map(([section, run]) => ({
      name: `analytics, ${section}, 30 days by day`,
      endpoint: "GET /api/admin/analytics",
      as: admin,
      kind: "page" as const,
      run: (tx: Tx) => run(tx, ...lastMonth()),
    })),
    {
      name: "analytics page (sum of its statements), 30 days by day",
      endpoint: "GET /api/admin/analytics",
      as: admin,
      kind: "page",
      run: async (tx) => {
        const [from, to] = lastMonth();
        const figures = await platformAnalytics(tx, "day", from, to);
        await storeStats(tx, "day", from, to);
        await notificationAnalytics(tx, { from, to, interval: "day" });
        expect(figures.users.total >= ctx.people.count, "every user counted");
        expect(figures.activity.activeUsers.some((p) => p.value > 0), "active users");
      },
    },
    {
      name: "job queue claim, 100,000 done jobs per scale unit",
      endpoint: "job queue drain (claim_jobs)",
      as: null,
      kind: "page",
      run: async (tx) => {
        const rows = await claimJobs(tx, [BENCH_KIND], "growth-bench", 10, ["60 seconds"]);
        expect(rows.length === 10, "10 jobs claimed");
      },
    },
  ]);
}

/**
 * The analytics facts of what every seed wrote (the messaging and store seeds write with their
 * triggers off), recounted from the tables, then folded as agora-compact-counters does.
 */
async function settle(ctx: GrowthContext): Promise<void> {
  await ctx.sql`select app_private.recount_analytics_facts()`;
  await ctx.sql`select app_private.compact_counters()`;
  await ctx.sql`analyze app_private.analytics_facts`;
}

export const growth: GrowthDomain = { domain: "admin", seed, settle, operations };
