/** /api/admin/users: the user list with counts, and role changes. ADMIN only (see app.ts). */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../../context.ts";
import {
  decodeCursor,
  encodeCursor,
  errors,
  json,
  jsonBody,
  limitParam,
  router,
  signedIn,
} from "../../openapi.ts";
import { withUser } from "../../../_shared/db.ts";
import { forbidden } from "../../../_shared/errors.ts";
import { claimsOf } from "../../session-claims.ts";

export const adminUsers = router();

const adminUserSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string(),
  role: z.enum(ROLES),
  status: z.enum(["active", "suspended"]),
  createdAt: z.iso.datetime(),
  lastSignInAt: z.iso.datetime().nullable(),
}).openapi("AdminUser");

interface UserRow {
  id: string;
  email: string;
  name: string;
  role: (typeof ROLES)[number];
  status: "active" | "suspended";
  created_at: Date;
  last_sign_in_at: Date | null;
  /** created_at with full microsecond precision (a JS Date would truncate it), for cursors. */
  created_at_key?: string;
}

const toAdminUser = (row: UserRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  status: row.status,
  createdAt: row.created_at.toISOString(),
  lastSignInAt: row.last_sign_in_at?.toISOString() ?? null,
});

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
        z.object({
          items: z.array(adminUserSchema),
          nextCursor: z.string().nullable(),
          counts: z.object({ byRole: z.record(z.string(), z.number()), total: z.number() }),
        }),
        "A page of users",
      ),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const user = c.get("user")!;
    const after = q.cursor
      ? decodeCursor(q.cursor, ["string", "string"]) as [string, string]
      : null;
    const [afterTime, afterId] = after ?? [null, null];
    const pattern = q.search ? `%${q.search.toLowerCase().replace(/[\\%_]/g, "\\$&")}%` : null;
    const { rows, counts } = await withUser(c.get("deps").sql, claimsOf(user), async (tx) => {
      const rows = await tx<UserRow[]>`
        select id, email, name, role, status, created_at, last_sign_in_at, created_at::text as created_at_key
        from app.users
        where (${pattern}::text is null or lower(email) || ' ' || lower(name) like ${pattern})
          and (${q.role ?? null}::app.user_role is null or role = ${q.role ?? null})
          and (${q.status ?? null}::app.user_status is null or status = ${q.status ?? null})
          -- ::text first: postgres.js would serialize a timestamptz parameter through a JS Date,
          -- dropping the microseconds the keyset needs.
          and (${afterTime}::text is null
               or (created_at, id) < (${afterTime}::text::timestamptz, ${afterId}::uuid))
        order by created_at desc, id desc
        limit ${q.limit + 1}`;
      const counts = await tx<{ role: string; count: number }[]>`
        select role::text, count(*)::int as count from app.users
        where (${pattern}::text is null or lower(email) || ' ' || lower(name) like ${pattern})
          and (${q.status ?? null}::app.user_status is null or status = ${q.status ?? null})
        group by role`;
      return { rows, counts };
    });
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    const byRole = Object.fromEntries(ROLES.map((r) => [r, 0]));
    for (const row of counts) byRole[row.role] = row.count;
    const total = q.role ? byRole[q.role] : Object.values(byRole).reduce((a, b) => a + b, 0);
    return c.json({
      items: page.map(toAdminUser),
      nextCursor: rows.length > q.limit && last
        ? encodeCursor([last.created_at_key, last.id])
        : null,
      counts: { byRole, total },
    }, 200);
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
    const admin = c.get("user")!;
    const deps = c.get("deps");
    // One transaction: the change, its record and security event (written by SQL, with this
    // request's address and user agent), and the read-back, all as the ADMIN the function checked.
    const { change, row } = await withUser(deps.sql, claimsOf(admin), async (tx) => {
      await tx`select set_config('agora.client_ip', ${c.get("ip") ?? ""}, true),
                      set_config('agora.user_agent', ${c.get("userAgent") ?? ""}, true)`;
      const [change] = await tx<{
        previous_role: (typeof ROLES)[number];
        new_role: (typeof ROLES)[number];
        changed_by: string;
        changed_at: Date;
        reason: string;
      }[]>`select * from app.change_user_role(${id}, ${role}, ${reason})`;
      const [row] = await tx<UserRow[]>`
        select id, email, name, role, status, created_at, last_sign_in_at from app.users where id = ${id}`;
      // Cannot happen while the function holds the caller's row; should it, nothing commits.
      if (!row) throw forbidden("You are not allowed to do this.");
      return { change, row };
    });
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
