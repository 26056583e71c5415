/**
 * /api/admin/analytics: platform figures from real data. ADMIN only (the gate is on the admin
 * router, admin/admin.routes.ts). Queries: admin/analytics.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, router, signedIn } from "../core/openapi.ts";
import { badRequest } from "../../_shared/errors.ts";
import { asUser } from "../core/doors.ts";
import { platformAnalytics, storeStats } from "./analytics.queries.ts";
import { notificationAnalytics } from "../notifications/notifications.queries.ts";
import { notificationAnalyticsSchema } from "../notifications/notifications.routes.ts";

export const adminAnalytics = router();

const MAX_POINTS = 400;
const DAY = 86_400_000;
const series = z.array(z.object({ t: z.iso.datetime(), value: z.number() }));

const query = z.object({
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  interval: z.enum(["day", "week", "month"]).default("day"),
});

adminAnalytics.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "getAnalytics",
    summary: "Platform analytics over a time range",
    description: "Defaults: the last 30 days by day. Series are `[{ t, value }]`, one point per " +
      "interval (UTC day, ISO week, month), zero-filled; each point is the whole interval, the " +
      "first one too when `from` falls inside it, and the range's totals are those of its " +
      "points. The figures come from rollups the writes keep, exact at the moment of the " +
      "request. Active users are distinct users who signed in, refreshed or made " +
      "a request in the interval. Messaging counts messages (deleted ones included in the series), " +
      "active senders (users who sent a message in the interval) and new conversations across " +
      "the platform; its totals are the conversations and the messages not deleted now. Store: " +
      "sales (totals of orders paid in each interval, minor units), paid orders, orders " +
      "created, orders by status now, the top vendors by sales in the range's intervals (named " +
      "as they are now). Wallet: wallets (total, exported, created per " +
      "interval), transactions by status and direction, and the confirmed outgoing volume per " +
      "token per interval in base units (decimal strings). Notifications: the figures of " +
      "GET /api/notifications/analytics for the same range and interval.",
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
          store: z.object({
            currency: z.string(),
            totals: z.object({ sales: z.number(), paidOrders: z.number() }),
            sales: series.openapi({ description: "Totals of orders paid, minor units" }),
            orders: series.openapi({ description: "Orders created" }),
            ordersByStatus: z.record(z.string(), z.number()),
            topVendors: z.array(z.object({
              id: z.uuid(),
              name: z.string(),
              sales: z.number(),
              orders: z.number(),
            })),
          }),
          wallet: z.object({
            totals: z.object({
              wallets: z.number(),
              exported: z.number(),
              transactions: z.number(),
            }),
            transactionsByStatus: z.record(z.string(), z.number()),
            transactionsByDirection: z.record(z.string(), z.number()),
            walletsCreated: series,
            volume: z.array(z.object({
              token: z.object({
                kind: z.string(),
                symbol: z.string(),
                address: z.string().nullable(),
                decimals: z.number(),
                chainId: z.number(),
              }),
              series: z.array(z.object({
                t: z.iso.datetime(),
                amount: z.string(),
                transfers: z.number(),
              })),
            })),
          }),
          notifications: notificationAnalyticsSchema,
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
    const [figures, store, notifications] = await asUser(c, async (tx) =>
      [
        await platformAnalytics(tx, q.interval, from, to),
        await storeStats(tx, q.interval, from, to),
        await notificationAnalytics(tx, { from, to, interval: q.interval }),
      ] as const);
    const currency = (await c.get("deps").config.get()).store.currency;
    const body = {
      range: { from: from.toISOString(), to: to.toISOString(), interval: q.interval },
      ...figures,
      store: { currency, ...store },
      notifications,
    };
    return c.json(body, 200);
  },
);
