/**
 * Queries of /api/admin/analytics (admin/analytics.routes.ts): platform figures from real data,
 * run as the ADMIN (RLS lets an ADMIN read users, sessions, security events and the access log;
 * messaging goes through the ADMIN-checked `app.admin_messaging_stats`).
 */
import type { Tx } from "../../_shared/db.ts";
import { ROLES } from "../core/context.ts";

export type Interval = "day" | "week" | "month";
type Point = { t: string; value: number };

/**
 * A gap-free series: one point per bucket from the one holding `from` to `to`, zero where nothing
 * happened, from the rollups the writes keep (`app.analytics_series`): a row per bucket, however
 * many users, sessions, sign-ins and requests there are.
 */
async function bucketed(
  tx: Tx,
  interval: Interval,
  from: Date,
  to: Date,
  source: "signups" | "active" | "signins",
): Promise<Point[]> {
  const rows = await tx<{ t: Date; value: number }[]>`
    select t, value::int as value from app.analytics_series(${source}, ${interval}, ${from}, ${to})`;
  return rows.map((r) => ({ t: r.t.toISOString(), value: r.value }));
}

/** Counts across every conversation, through the ADMIN-checked aggregate function. */
async function messagingStats(tx: Tx, interval: Interval, from: Date, to: Date) {
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

/**
 * The wallet section, through the ADMIN-checked `app.admin_wallet_stats`: totals, transactions by
 * status and direction, wallets created per interval and confirmed outgoing volume per token
 * (base units as decimal strings).
 */
export async function walletStats(tx: Tx, interval: Interval, from: Date, to: Date) {
  const [row] = await tx<{ stats: Record<string, unknown> }[]>`
    select app.admin_wallet_stats(${interval}, ${from}, ${to}) as stats`;
  const stats = row.stats as {
    totals: { wallets: number; exported: number; transactions: number };
    transactionsByStatus: Record<string, number>;
    transactionsByDirection: Record<string, number>;
    walletsCreated: { t: string; value: number }[];
    volume: {
      token: {
        kind: string;
        symbol: string;
        address: string | null;
        decimals: number;
        chainId: number;
      };
      series: { t: string; amount: string; transfers: number }[];
    }[];
  };
  const iso = (t: string) => new Date(t).toISOString();
  return {
    totals: stats.totals,
    transactionsByStatus: stats.transactionsByStatus,
    transactionsByDirection: stats.transactionsByDirection,
    walletsCreated: stats.walletsCreated.map((p) => ({ t: iso(p.t), value: p.value })),
    volume: stats.volume.map((v) => ({
      token: v.token,
      series: v.series.map((p) => ({ t: iso(p.t), amount: p.amount, transfers: p.transfers })),
    })),
  };
}

/**
 * Users by role and status, every role and status present (zero when none), from the maintained
 * counters (`app.user_counts()`), not a count of every user.
 */
async function userCounts(tx: Tx) {
  const rows = await tx<{ role: string; status: string; n: number }[]>`
    select role::text, status::text, n::int as n from app.user_counts()`;
  const byRole: Record<string, number> = Object.fromEntries(ROLES.map((r) => [r, 0]));
  const byStatus: Record<string, number> = { active: 0, suspended: 0 };
  for (const r of rows) {
    byRole[r.role] += r.n;
    byStatus[r.status] += r.n;
  }
  return { byRole, byStatus };
}

/** The users, activity and messaging sections of the analytics answer. */
export async function platformAnalytics(tx: Tx, interval: Interval, from: Date, to: Date) {
  const { byRole, byStatus } = await userCounts(tx);
  return {
    users: {
      total: Object.values(byStatus).reduce((a, b) => a + b, 0),
      byRole,
      byStatus,
      signups: await bucketed(tx, interval, from, to, "signups"),
    },
    activity: {
      activeUsers: await bucketed(tx, interval, from, to, "active"),
      signIns: await bucketed(tx, interval, from, to, "signins"),
    },
    messaging: await messagingStats(tx, interval, from, to),
    wallet: await walletStats(tx, interval, from, to),
  };
}

/**
 * The store section, as the ADMIN (RLS: the admin policies on orders and vendors): sales (the
 * totals of orders paid in each interval, refunds not deducted), orders created per interval,
 * orders by status now, and the top vendors by sales in the range.
 */
export async function storeStats(tx: Tx, interval: Interval, from: Date, to: Date) {
  const series = async (metric: "sales" | "orders") => {
    const rows = await tx<{ t: Date; value: string }[]>`
      with buckets as (
        select generate_series(date_trunc(${interval}, ${from}::timestamptz, 'UTC'),
                               ${to}::timestamptz, ('1 ' || ${interval})::interval) as t
      ), facts as (
        select date_trunc(${interval}, o.paid_at, 'UTC') as t, sum(o.total) as value
          from app.orders o
          where ${metric} = 'sales' and o.paid_at >= ${from} and o.paid_at < ${to}
          group by 1
        union all
        select date_trunc(${interval}, o.created_at, 'UTC'), count(*)
          from app.orders o
          where ${metric} = 'orders' and o.created_at >= ${from} and o.created_at < ${to}
          group by 1
      )
      select b.t, coalesce(sum(f.value), 0)::text as value
      from buckets b left join facts f on f.t = b.t
      group by b.t order by b.t`;
    return rows.map((r) => ({ t: r.t.toISOString(), value: Number(r.value) }));
  };
  const byStatusRows = await tx<{ status: string; count: number }[]>`
    select status::text, count(*)::int as count from app.orders group by status`;
  const ordersByStatus: Record<string, number> = Object.fromEntries(
    [
      "pending_payment",
      "paid",
      "processing",
      "shipped",
      "delivered",
      "completed",
      "cancelled",
      "refunded",
    ].map((s) => [s, 0]),
  );
  for (const r of byStatusRows) ordersByStatus[r.status] = r.count;
  const top = await tx<{ id: string; name: string; sales: string; orders: number }[]>`
    select o.vendor_id as id, max(o.vendor_name) as name, sum(o.total)::text as sales,
           count(*)::int as orders
    from app.orders o
    where o.paid_at >= ${from} and o.paid_at < ${to}
    group by o.vendor_id
    order by sum(o.total) desc, o.vendor_id
    limit 10`;
  const [totals] = await tx<{ sales: string; orders: number }[]>`
    select coalesce(sum(o.total), 0)::text as sales, count(*)::int as orders
    from app.orders o where o.paid_at >= ${from} and o.paid_at < ${to}`;
  return {
    totals: { sales: Number(totals.sales), paidOrders: totals.orders },
    sales: await series("sales"),
    orders: await series("orders"),
    ordersByStatus,
    topVendors: top.map((v) => ({
      id: v.id,
      name: v.name,
      sales: Number(v.sales),
      orders: v.orders,
    })),
  };
}
