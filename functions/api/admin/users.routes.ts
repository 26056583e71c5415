/**
 * /api/admin/users: the user list with counts, role changes, suspension and reactivation, and
 * ending every session of a user. ADMIN only (the gate is on the admin router,
 * admin/admin.routes.ts). Queries: admin/users.queries.ts.
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
import { asUser } from "../core/doors.ts";
import {
  changeUserRole,
  changeUserStatus,
  listUsers,
  signOutUser,
  toAdminUser,
} from "./users.queries.ts";

export const adminUsers = router();

const adminUserSchema = z.object({
  id: z.uuid(),
  email: z.string().nullable(),
  name: z.string(),
  role: z.enum(ROLES),
  status: z.enum(["active", "suspended"]),
  createdAt: z.iso.datetime(),
  lastSignInAt: z.iso.datetime().nullable(),
}).openapi("AdminUser");

const listUsersQuery = z.object({
  search: z.string().trim().max(200).optional(),
  role: z.enum(ROLES).optional(),
  status: z.enum(["active", "suspended"]).optional(),
  limit: limitParam,
  cursor: z.string().max(500).optional(),
});

adminUsers.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listUsers",
    summary: "List users, newest first, with counts by role",
    description: "`search` matches email or name (case-insensitive, substring). " +
      "`counts.byRole` counts the users matching `search` and `status` per role; " +
      "`counts.total` counts those matching every filter.",
    security: signedIn,
    request: { query: listUsersQuery },
    responses: {
      200: json(
        pageOf(adminUserSchema).extend({
          counts: z.object({ byRole: z.record(z.string(), z.number()), total: z.number() }),
        }),
        "A page of users",
      ),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const page = await asUser(c, (tx) => listUsers(tx, { ...q, after }));
    return c.json(page, 200);
  },
);

adminUsers.openapi(
  createRoute({
    method: "put",
    path: "/{id}/role",
    operationId: "changeUserRole",
    summary: "Change a user's role",
    description: "Recorded with the reason, before and after. Refused (422) for one's own role " +
      "and for demoting the last active ADMIN. Effective on the user's next request.",
    security: signedIn,
    request: {
      params: z.object({ id: z.uuid() }),
      body: jsonBody(z.object({ role: z.enum(ROLES), reason: z.string().trim().min(1).max(500) })),
    },
    responses: {
      200: json(
        z.object({
          user: adminUserSchema,
          change: z.object({
            previousRole: z.enum(ROLES),
            newRole: z.enum(ROLES),
            changedBy: z.uuid(),
            changedAt: z.iso.datetime(),
            reason: z.string(),
          }),
        }),
        "The user and the recorded change",
      ),
      ...errors(400, 401, 403, 404, 422, 429),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { role, reason } = c.req.valid("json");
    // One transaction: the change, its record and security event (written by SQL, with this
    // request's address and user agent), and the read-back, all as the ADMIN the function checked.
    const { change, row } = await asUser(
      c,
      (tx) =>
        changeUserRole(tx, id, role, reason, { ip: c.get("ip"), userAgent: c.get("userAgent") }),
    );
    return c.json({
      user: toAdminUser(row),
      change: {
        previousRole: change.previous_role,
        newRole: change.new_role,
        changedBy: change.changed_by,
        changedAt: change.changed_at.toISOString(),
        reason: change.reason,
      },
    }, 200);
  },
);

adminUsers.openapi(
  createRoute({
    method: "put",
    path: "/{id}/status",
    operationId: "changeUserStatus",
    summary: "Suspend or reactivate a user",
    description: "A suspension ends every session of the user at once (their access tokens " +
      "are refused from the next request on, their realtime subscriptions end). Recorded with " +
      "the reason in the user's status history and as `admin.user_suspended` or " +
      "`admin.user_reactivated`, in the same transaction. Refused (422) for one's own status " +
      "and for suspending the last active ADMIN.",
    security: signedIn,
    request: {
      params: z.object({ id: z.uuid() }),
      body: jsonBody(z.object({
        status: z.enum(["active", "suspended"]),
        reason: z.string().trim().min(1).max(500),
      })),
    },
    responses: {
      200: json(
        z.object({
          user: adminUserSchema,
          change: z.object({
            previousStatus: z.enum(["active", "suspended"]),
            newStatus: z.enum(["active", "suspended"]),
            changedBy: z.uuid(),
            changedAt: z.iso.datetime(),
            reason: z.string(),
            sessionsRevoked: z.number().int().min(0),
          }),
        }),
        "The user and the recorded change",
      ),
      ...errors(400, 401, 403, 404, 422, 429),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { status, reason } = c.req.valid("json");
    const { change, row } = await asUser(
      c,
      (tx) =>
        changeUserStatus(tx, id, status, reason, {
          ip: c.get("ip"),
          userAgent: c.get("userAgent"),
        }),
    );
    return c.json({
      user: toAdminUser(row),
      change: {
        previousStatus: change.previous_status,
        newStatus: change.new_status,
        changedBy: change.changed_by,
        changedAt: change.changed_at.toISOString(),
        reason: change.reason,
        sessionsRevoked: change.sessions_revoked,
      },
    }, 200);
  },
);

adminUsers.openapi(
  createRoute({
    method: "post",
    path: "/{id}/signout",
    operationId: "signOutUser",
    summary: "End every session of a user",
    description: "Every live session of the user ends at once; they may sign in again. " +
      "Recorded as `admin.sessions_revoked`.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(z.object({ revoked: z.number().int().min(0) }), "How many sessions ended"),
      ...errors(400, 401, 403, 404, 429),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const revoked = await asUser(
      c,
      (tx) => signOutUser(tx, id, { ip: c.get("ip"), userAgent: c.get("userAgent") }),
    );
    return c.json({ revoked }, 200);
  },
);
