/** Queries of /api/admin/users (admin/users.routes.ts), run as the ADMIN (RLS: users_select_self_or_admin). */
import { forbidden } from "../../_shared/errors.ts";
import type { Tx } from "../../_shared/db.ts";
import { type Role, ROLES } from "../core/context.ts";
import {
  type Fragment,
  ifGiven,
  likePattern,
  pageLimit,
  setClient,
  slicePage,
  where,
} from "../core/paging.ts";

export interface UserRow {
  id: string;
  email: string | null;
  name: string;
  role: Role;
  status: "active" | "suspended";
  created_at: Date;
  last_sign_in_at: Date | null;
  /** created_at with full microsecond precision (a JS Date would truncate it), for cursors. */
  created_at_key?: string;
}

/** A user as the admin API shows it. */
export const toAdminUser = (row: UserRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  status: row.status,
  createdAt: row.created_at.toISOString(),
  lastSignInAt: row.last_sign_in_at?.toISOString() ?? null,
});

/**
 * A page of users, newest first, and the counts by role of those matching `search` and
 * `status` (`total`: those matching every filter).
 */
export async function listUsers(
  tx: Tx,
  q: {
    search?: string;
    role?: Role;
    status?: "active" | "suspended";
    after: [string, string] | null;
    limit: number;
  },
) {
  const pattern = likePattern(q.search);
  const matching = (extra: (Fragment | null)[]) =>
    where(tx, [
      // The expression of users_search_idx (an account without an address is found by name).
      ifGiven(pattern, (p) => tx`coalesce(lower(email), '') || ' ' || lower(name) like ${p}`),
      ifGiven(q.status, (status) => tx`status = ${status}::app.user_status`),
      ...extra,
    ]);
  const rows = await tx<UserRow[]>`
    select id, email, name, role, status, created_at, last_sign_in_at,
           created_at::text as created_at_key
    from app.users
    ${
    matching([
      ifGiven(q.role, (role) => tx`role = ${role}::app.user_role`),
      ifGiven(q.after, ([time, id]) => tx`(created_at, id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
    order by created_at desc, id desc
    limit ${pageLimit(q.limit)}`;
  const counts = await tx<{ role: Role; count: number }[]>`
    select role::text, count(*)::int as count from app.users ${matching([])} group by role`;

  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  const byRole = Object.fromEntries(ROLES.map((r) => [r, 0]));
  for (const row of counts) byRole[row.role] = row.count;
  const total = q.role ? byRole[q.role] : Object.values(byRole).reduce((a, b) => a + b, 0);
  return { items: page.map(toAdminUser), nextCursor, counts: { byRole, total } };
}

export interface RoleChangeRow {
  previous_role: Role;
  new_role: Role;
  changed_by: string;
  changed_at: Date;
  reason: string;
}

/** Changes a user's role through `app.change_user_role` (which checks the rules and records it). */
export async function changeUserRole(
  tx: Tx,
  userId: string,
  role: Role,
  reason: string,
  client: { ip: string | null; userAgent: string | null },
) {
  // The security event is written by the role-change trigger, with the client's address.
  await setClient(tx, client);
  const [change] = await tx<RoleChangeRow[]>`
    select * from app.change_user_role(${userId}, ${role}, ${reason})`;
  const [row] = await tx<UserRow[]>`
    select id, email, name, role, status, created_at, last_sign_in_at
    from app.users where id = ${userId}`;
  // Cannot happen while app.change_user_role holds the caller's row; should it, nothing commits.
  if (!row) throw forbidden("You are not allowed to do this.");
  return { change, row };
}

export interface StatusChangeRow {
  previous_status: "active" | "suspended";
  new_status: "active" | "suspended";
  changed_by: string;
  changed_at: Date;
  reason: string;
  sessions_revoked: number;
}

/**
 * Suspends or reactivates a user through `app.change_user_status` (which checks the rules, ends
 * the sessions of a suspended user and records the change and its security event).
 */
export async function changeUserStatus(
  tx: Tx,
  userId: string,
  status: "active" | "suspended",
  reason: string,
  client: { ip: string | null; userAgent: string | null },
) {
  await setClient(tx, client);
  const [change] = await tx<StatusChangeRow[]>`
    select * from app.change_user_status(${userId}, ${status}, ${reason})`;
  const [row] = await tx<UserRow[]>`
    select id, email, name, role, status, created_at, last_sign_in_at
    from app.users where id = ${userId}`;
  if (!row) throw forbidden("You are not allowed to do this.");
  return { change, row };
}

/** Ends every session of a user through `app.sign_out_user`; how many ended. */
export async function signOutUser(
  tx: Tx,
  userId: string,
  client: { ip: string | null; userAgent: string | null },
): Promise<number> {
  await setClient(tx, client);
  const [row] = await tx<{ revoked: number }[]>`select app.sign_out_user(${userId}) as revoked`;
  return row.revoked;
}
