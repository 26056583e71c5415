/**
 * /api/notifications: the caller's inbox (list, create, read, read-all, delete), preferences,
 * push devices; bulk sends and analytics for ADMINs. Any signed-in user has an inbox (the gate
 * below: a VISITOR too, who is told of their own role change there); bulk and analytics are
 * ADMIN only (the admin gate on their routers). Everything runs as the caller: RLS and the SQL
 * functions decide, and another user's notification is a 404. Queries: notifications/notifications.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../core/context.ts";
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
import { badRequest } from "../../_shared/errors.ts";
import { sha256Hex } from "../../_shared/crypto.ts";
import { asSessionOf, asUser, serverSql } from "../core/doors.ts";
import { sessionCheckedInStatement } from "../auth/session.middleware.ts";
import { adminGate, requireRole } from "../core/middleware/roles.ts";
import {
  batchProgress,
  createBatch,
  createNotification,
  deleteNotification,
  listNotifications,
  markAllRead,
  markRead,
  notificationAnalytics,
  readPreferences,
  registerDevice,
  unregisterDevice,
  updatePreferences,
} from "./notifications.queries.ts";

export const notifications = router();

notifications.use("*", requireRole("VISITOR"));

export const NOTIFICATION_TYPES = ["OPPORTUNITY", "MESSAGE", "ENTITY", "SYSTEM", "WALLET"] as const;
const PRIORITIES = ["low", "normal", "high", "critical"] as const;
const type = z.enum(NOTIFICATION_TYPES);
const priority = z.enum(PRIORITIES);
const idParam = z.object({ id: z.uuid() });

/** Free-form data of a notification: an object of at most 2048 bytes as JSON (it rides in pushes). */
const data = z.record(z.string(), z.unknown()).refine(
  (value) => new TextEncoder().encode(JSON.stringify(value)).length <= 2048,
  "at most 2048 bytes as JSON",
);

export const notificationSchema = z.object({
  id: z.uuid(),
  type,
  title: z.string(),
  body: z.string(),
  data: z.record(z.string(), z.unknown()),
  priority,
  readAt: z.string().nullable(),
  createdAt: z.string(),
}).openapi("Notification");

const content = {
  type,
  title: z.string().trim().min(1).max(200),
  body: z.string().max(2000).default(""),
  data: data.optional(),
  priority: priority.default("normal"),
};

// GET /api/notifications ------------------------------------------------------------------------

notifications.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listNotifications",
    summary: "The caller's notifications, newest first",
    description: "`unread=true` lists unread only, `unread=false` read only; `since` (inclusive) " +
      "and `search` (title and body) narrow it. `unreadCount` counts every unread notification " +
      "of the caller, whatever the filters.",
    security: signedIn,
    // Its one statement checks the session (asSessionOf below): one round trip for a bearer call.
    middleware: [sessionCheckedInStatement] as const,
    request: {
      query: z.object({
        type: type.optional(),
        unread: z.enum(["true", "false"]).optional(),
        search: z.string().trim().min(1).max(200).optional(),
        since: z.iso.datetime({ offset: true }).optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(
        pageOf(notificationSchema).extend({
          unreadCount: z.number().int(),
        }),
        "A page",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const sql = serverSql(c.get("deps"), "inbox page");
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    // The hot path: one statement, session check included (notifications/notifications.queries.ts says why).
    const page = await asSessionOf(c, (caller) =>
      listNotifications(sql, caller, {
        type: q.type,
        unread: q.unread === undefined ? undefined : q.unread === "true",
        search: q.search,
        since: q.since,
        after,
        limit: q.limit,
      }));
    return c.json(page, 200);
  },
);

// POST /api/notifications -----------------------------------------------------------------------

notifications.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createNotification",
    summary: "Create a notification (for oneself; an ADMIN for anyone)",
    description: "Below ADMIN, `userId` is absent or the caller's own (403 otherwise); an " +
      "unknown `userId` is 404. The recipient's preferences apply: `inbox: false` says the " +
      "type's in-app channel is off for them (it may still be pushed or mailed).",
    security: signedIn,
    request: {
      // `body` is required here, as the contract says (it may be empty).
      body: jsonBody(
        z.object({ userId: z.uuid().optional(), ...content, body: z.string().max(2000) }),
      ),
    },
    responses: {
      201: json(
        notificationSchema.extend({ userId: z.uuid(), inbox: z.boolean() }),
        "The notification",
      ),
      ...errors(400, 401, 403, 404, 413, 415),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const created = await asUser(c, (tx) =>
      createNotification(tx, {
        userId: body.userId ?? null,
        type: body.type,
        title: body.title,
        body: body.body,
        data: body.data ?? {},
        priority: body.priority,
      }));
    return c.json(created, 201);
  },
);

// PUT /api/notifications/read-all ---------------------------------------------------------------

notifications.openapi(
  createRoute({
    method: "put",
    path: "/read-all",
    operationId: "markAllNotificationsRead",
    summary: "Mark every notification of the caller read",
    description:
      "Every unread inbox notification of the caller is read from this response on: in the list, " +
      "its `unread` filter, search and the unread count, with this request's time as `readAt`. " +
      "The cost does not grow with the inbox: beyond a few hundred unread the server records one " +
      "mark and writes the notifications down in the background. Subscribers of `user:<id>` get " +
      "one `notification.read_all` event (`notification.read` when exactly one was unread).",
    security: signedIn,
    responses: {
      200: json(
        z.object({ updated: z.number().int(), unreadCount: z.number().int() }),
        "How many were marked",
      ),
      ...errors(401, 403),
    },
  }),
  async (c) => c.json(await asUser(c, markAllRead), 200),
);

// PUT /api/notifications/:id/read ---------------------------------------------------------------

notifications.openapi(
  createRoute({
    method: "put",
    path: "/{id}/read",
    operationId: "markNotificationRead",
    summary: "Mark one notification read",
    description: "Marking a read notification again keeps its first `readAt`. Another user's " +
      "notification is 404.",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(
        z.object({ id: z.uuid(), readAt: z.string(), unreadCount: z.number().int() }),
        "Read",
      ),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => markRead(tx, id)), 200);
  },
);

// DELETE /api/notifications/:id -----------------------------------------------------------------

notifications.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    operationId: "deleteNotification",
    summary: "Delete one notification",
    description: "Another user's notification is 404.",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(z.object({ id: z.uuid(), deleted: z.literal(true) }), "Deleted"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => deleteNotification(tx, id)), 200);
  },
);

// Preferences -----------------------------------------------------------------------------------

const channels = z.object({ inApp: z.boolean(), push: z.boolean(), email: z.boolean() });
const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, "a time like 22:00 (HH:MM)")
  .openapi({ example: "22:00" });
const quietHours = z.strictObject({
  start: hhmm,
  end: hhmm,
  timeZone: z.string().min(1).max(100).openapi({ example: "Europe/Berlin" }),
});
const preferencesSchema = z.object({
  types: z.object(Object.fromEntries(NOTIFICATION_TYPES.map((t) => [t, channels]))),
  quietHours: quietHours.nullable(),
  updatedAt: z.string().nullable(),
}).openapi("NotificationPreferences");

const channelsPatch = z.strictObject({
  inApp: z.boolean().optional(),
  push: z.boolean().optional(),
  email: z.boolean().optional(),
});
const preferencesPatch = z.strictObject({
  types: z.strictObject(
    Object.fromEntries(NOTIFICATION_TYPES.map((t) => [t, channelsPatch.optional()])),
  ).optional(),
  quietHours: quietHours.nullable().optional(),
});

notifications.openapi(
  createRoute({
    method: "get",
    path: "/preferences",
    operationId: "getNotificationPreferences",
    summary: "The caller's notification preferences",
    description: "Every type and channel (the caller's choice, else the configured default), " +
      "quiet hours or null, and when they last changed (null before any change).",
    security: signedIn,
    responses: { 200: json(preferencesSchema, "The preferences"), ...errors(401, 403) },
  }),
  async (c) => c.json(await asUser(c, readPreferences), 200),
);

notifications.openapi(
  createRoute({
    method: "put",
    path: "/preferences",
    operationId: "updateNotificationPreferences",
    summary: "Change some notification preferences",
    description: "A partial document: the types and channels given, and `quietHours` " +
      "(`{ start, end, timeZone }` with HH:MM times in an IANA time zone, the period may cross " +
      "midnight; null clears them). Quiet hours hold push and e-mail until they end; critical " +
      "notifications ignore them and the preferences. Unknown types, bad times or time zones " +
      "are 400.",
    security: signedIn,
    request: { body: jsonBody(preferencesPatch) },
    responses: {
      200: json(preferencesSchema, "The whole document"),
      ...errors(400, 401, 403, 413, 415),
    },
  }),
  async (c) => {
    const patch = c.req.valid("json");
    return c.json(await asUser(c, (tx) => updatePreferences(tx, patch)), 200);
  },
);

// Devices ---------------------------------------------------------------------------------------

const deviceToken = z.string().min(1).max(1024);

notifications.openapi(
  createRoute({
    method: "post",
    path: "/fcm/register",
    operationId: "registerPushDevice",
    summary: "Register an FCM device token",
    description: "201 for a token new to the caller, 200 when the caller already had it. A " +
      "token registered by another user moves to the caller.",
    security: signedIn,
    request: {
      body: jsonBody(z.object({
        token: deviceToken,
        platform: z.enum(["web", "ios", "android"]),
        deviceName: z.string().trim().min(1).max(200).optional(),
      })),
    },
    responses: {
      200: json(z.object({ id: z.uuid(), platform: z.string(), createdAt: z.string() }), "Known"),
      201: json(
        z.object({ id: z.uuid(), platform: z.string(), createdAt: z.string() }),
        "Registered",
      ),
      ...errors(400, 401, 403, 409, 413, 415),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const { device, created } = await asUser(c, (tx) =>
      registerDevice(tx, {
        token: body.token,
        platform: body.platform,
        deviceName: body.deviceName ?? null,
      }));
    return c.json(device, created ? 201 : 200);
  },
);

notifications.openapi(
  createRoute({
    method: "delete",
    path: "/fcm/register",
    operationId: "unregisterPushDevice",
    summary: "Unregister an FCM device token",
    description: "A token that is not the caller's is 404.",
    security: signedIn,
    request: { body: jsonBody(z.object({ token: deviceToken })) },
    responses: {
      200: json(z.object({ unregistered: z.literal(true) }), "Unregistered"),
      ...errors(400, 401, 403, 404, 413, 415),
    },
  }),
  async (c) => {
    const { token } = c.req.valid("json");
    return c.json(await asUser(c, (tx) => unregisterDevice(tx, token)), 200);
  },
);

// Bulk (ADMIN) ----------------------------------------------------------------------------------

const bulk = router();
bulk.use("*", adminGate());

const bulkBody = z.object({
  audience: z.object({
    userIds: z.array(z.uuid()).min(1).max(10_000).optional(),
    roles: z.array(z.enum(ROLES)).min(1).max(5).optional(),
    all: z.boolean().optional(),
  }).refine(
    (a) => a.userIds !== undefined || a.roles !== undefined || a.all === true,
    "name userIds, roles or all: true",
  ).openapi({ example: { roles: ["MEMBER"] } }),
  notification: z.object(content),
  channels: z.array(z.enum(["inApp", "push", "email"])).min(1).max(3).default(["inApp", "push"]),
});

const batchSchema = z.object({
  id: z.uuid(),
  status: z.enum(["queued", "sending", "done"]),
  recipients: z.number().int(),
});

bulk.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createNotificationBatch",
    summary: "Send a notification to many users (ADMIN)",
    description: "Answers 202 at once with the batch and its recipient count (active users " +
      "named by `userIds`, `roles` or `all`; suspended users never); the inboxes are written by " +
      "a background job, pushes and e-mails go out in chunks, each recipient's preferences " +
      "apply. `channels` defaults to in-app and push. The same `Idempotency-Key` with the same " +
      "body returns the same batch; with another body it is 409.",
    security: signedIn,
    request: {
      headers: z.object({ "idempotency-key": z.string().min(1).max(255).optional() }),
      body: jsonBody(bulkBody),
    },
    responses: {
      202: json(batchSchema, "Accepted"),
      ...errors(400, 401, 403, 409, 413, 415, 422, 429),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const key = c.req.valid("header")["idempotency-key"] ?? null;
    const hash = key ? await sha256Hex(JSON.stringify(body)) : null;
    const batch = await asUser(c, (tx) =>
      createBatch(tx, {
        audience: body.audience,
        notification: { ...body.notification, data: body.notification.data ?? {} },
        channels: [...new Set(body.channels)],
        idempotencyKey: key,
        requestHash: hash,
      }));
    return c.json({ id: batch.id, status: batch.status, recipients: batch.recipients }, 202);
  },
);

bulk.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getNotificationBatch",
    summary: "A bulk send's progress (ADMIN)",
    description: "Counted from the data: inbox notifications written, pushes sent and failed, " +
      "e-mails sent.",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(
        batchSchema.extend({
          created: z.number().int(),
          pushSent: z.number().int(),
          pushFailed: z.number().int(),
          emailSent: z.number().int(),
          createdAt: z.string(),
          finishedAt: z.string().nullable(),
        }),
        "Progress",
      ),
      ...errors(400, 401, 403, 404, 429),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => batchProgress(tx, id)) as never, 200);
  },
);

notifications.route("/bulk", bulk);

// Analytics (ADMIN) -----------------------------------------------------------------------------

const analytics = router();
analytics.use("*", adminGate());

const MAX_POINTS = 1000;
const STEP_MS = { hour: 3_600_000, day: 86_400_000, week: 604_800_000, month: 2_419_200_000 };

const counts = {
  created: z.number().int(),
  read: z.number().int(),
  pushSent: z.number().int(),
  pushFailed: z.number().int(),
};
export const notificationAnalyticsSchema = z.object({
  totals: z.object({ ...counts, pushDelivered: z.number().int(), emailSent: z.number().int() }),
  byType: z.array(z.object({ type, ...counts })),
  byChannel: z.array(z.object({
    channel: z.enum(["inApp", "push", "email"]),
    sent: z.number().int(),
    failed: z.number().int(),
  })),
  series: z.array(z.object({ t: z.string(), ...counts })),
  readRate: z.number().min(0).max(1),
  medianSecondsToRead: z.number().nullable().openapi({
    description: "Estimated from a histogram of seconds to read (bins 2^(1/8) wide): within " +
      "1 s + 9.1 % of the exact median of the notifications read; null when none was read.",
  }),
}).openapi("NotificationAnalytics");

analytics.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "getNotificationAnalytics",
    summary: "Notification figures (ADMIN)",
    description: "From the analytics rollups, over whole buckets: the hours, days, weeks or " +
      "months from the one holding `from` to the one holding `to` (default: the last 30 days, " +
      "by day; UTC); what happened seconds ago included. `created` and `read` count inbox " +
      "notifications created in those buckets (`read`: those read since; `readRate` = read / " +
      "created); push and e-mail count deliveries by the time of their outcome (`pushFailed` " +
      "includes pruned tokens; `pushDelivered` equals `pushSent`: FCM reports acceptance, not " +
      "receipt). Analytics are history: notifications deleted and deliveries pruned later stay " +
      "counted. `medianSecondsToRead` (over the notifications read) is estimated from a " +
      "histogram of seconds to read with bins 2^(1/8) wide: within 1 s + 9.1 % of the exact " +
      "median; null when none was read.",
    security: signedIn,
    request: {
      query: z.object({
        from: z.iso.datetime({ offset: true }).optional(),
        to: z.iso.datetime({ offset: true }).optional(),
        interval: z.enum(["hour", "day", "week", "month"]).default("day"),
        type: type.optional(),
      }),
    },
    responses: {
      200: json(notificationAnalyticsSchema, "Figures"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const to = q.to ? new Date(q.to) : new Date();
    const from = q.from ? new Date(q.from) : new Date(to.getTime() - 30 * STEP_MS.day);
    if (from >= to) {
      throw badRequest("`from` must be before `to`.", [{ path: "from", message: "after to" }]);
    }
    if ((to.getTime() - from.getTime()) / STEP_MS[q.interval] > MAX_POINTS) {
      throw badRequest(`The range has more than ${MAX_POINTS} ${q.interval}s.`, [
        { path: "interval", message: "use a longer interval or a shorter range" },
      ]);
    }
    const figures = await asUser(
      c,
      (tx) => notificationAnalytics(tx, { from, to, interval: q.interval, type: q.type }),
    );
    return c.json(figures, 200);
  },
);

notifications.route("/analytics", analytics);
