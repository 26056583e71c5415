/**
 * Queries of /api/admin/analytics (admin/analytics.routes.ts): platform figures from the rollups
 * the writes keep (docs/admin.md, "Analytics"), each section through an ADMIN-checked function
 * (`app.user_counts`, `app.analytics_series`, `app.admin_messaging_stats`,
 * `app.admin_wallet_stats`, `app.admin_store_stats`): a row per bucket, whatever the tables hold.
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
export async function messagingStats(tx: Tx, interval: Interval, from: Date, to: Date) {
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

/** The users and activity sections of the analytics answer. */
export async function userStats(tx: Tx, interval: Interval, from: Date, to: Date) {
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
  };
}

/** The users, activity, messaging and wallet sections of the analytics answer. */
export async function platformAnalytics(tx: Tx, interval: Interval, from: Date, to: Date) {
  return {
    ...await userStats(tx, interval, from, to),
    messaging: await messagingStats(tx, interval, from, to),
    wallet: await walletStats(tx, interval, from, to),
  };
}

/**
 * The store section, through the ADMIN-checked `app.admin_store_stats` (the rollups kept by the
 * orders' writes): sales (the totals of orders paid in each interval, refunds not deducted),
 * orders created per interval, orders by status now, and the top vendors by sales in the range.
 */
export async function storeStats(tx: Tx, interval: Interval, from: Date, to: Date) {
  const [row] = await tx<{ stats: Record<string, unknown> }[]>`
    select app.admin_store_stats(${interval}, ${from}, ${to}) as stats`;
  const stats = row.stats as {
    totals: { sales: number; paidOrders: number };
    sales: { t: string; value: number }[];
    orders: { t: string; value: number }[];
    ordersByStatus: Record<string, number>;
    topVendors: { id: string; name: string; sales: number; orders: number }[];
  };
  const points = (series: { t: string; value: number }[]) =>
    series.map((p) => ({ t: new Date(p.t).toISOString(), value: Number(p.value) }));
  return {
    totals: { sales: Number(stats.totals.sales), paidOrders: Number(stats.totals.paidOrders) },
    sales: points(stats.sales),
    orders: points(stats.orders),
    ordersByStatus: stats.ordersByStatus,
    topVendors: stats.topVendors.map((v) => ({
      id: v.id,
      name: v.name,
      sales: Number(v.sales),
      orders: Number(v.orders),
    })),
  };
}
