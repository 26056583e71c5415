/** Queries of /api/admin/users (admin/users.routes.ts), run as the ADMIN (RLS: users_select_self_or_admin). */
import { forbidden } from "../../_shared/errors.ts";
import type { Tx } from "../../_shared/db.ts";
import { type Role, ROLES } from "../core/context.ts";
import { ifGiven, likePattern, pageLimit, setClient, slicePage, where } from "../core/paging.ts";

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
 *
 * Without a search the counts are the maintained counters (`app.user_counts()`), and a role or
 * status filter reads its own index in created_at order: the cost of a page does not grow with
 * the users. With a search, the matching users are found first through the trigram index
 * (`users_search_idx`) and only they are counted and sorted: a search that matches nobody costs
 * a few index pages instead of a walk of every user in created_at order looking for a first
 * match. (A search's counts need every match anyway, so its page costs what its counts cost.)
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
  const byRole = Object.fromEntries(ROLES.map((r) => [r, 0]));
  let rows: UserRow[];
  if (pattern === null) {
    rows = await tx<UserRow[]>`
      select id, email, name, role, status, created_at, last_sign_in_at,
             created_at::text as created_at_key
      from app.users
      ${
      where(tx, [
        ifGiven(q.status, (status) => tx`status = ${status}::app.user_status`),
        ifGiven(q.role, (role) => tx`role = ${role}::app.user_role`),
        ifGiven(
          q.after,
          ([time, id]) => tx`(created_at, id) < (${time}::timestamptz, ${id}::uuid)`,
        ),
      ])
    }
      order by created_at desc, id desc
      limit ${pageLimit(q.limit)}`;
    const counts = await tx<{ role: Role; count: number }[]>`
      select c.role::text, sum(c.n)::int as count from app.user_counts() c
      ${where(tx, [ifGiven(q.status, (status) => tx`c.status = ${status}::app.user_status`)])}
      group by c.role`;
    for (const row of counts) byRole[row.role] = row.count;
  } else {
    // The matches come from app.admin_user_matches, which reads them through the trigram index
    // (under the caller's RLS, LIKE is not leakproof and was tested on every user after the
    // policy); `materialized`: they are found before anything is sorted or counted.
    const matched = await tx<
      (UserRow & { ord: number; count: number | null; role_total: Role | null })[]
    >`
      with matching as materialized (
        select u.id, u.email, u.name, u.role, u.status, u.created_at, u.last_sign_in_at
        from app.admin_user_matches(${pattern}, ${q.status ?? null}::app.user_status) m
        join app.users u on u.id = m.id
      ), page as (
        select m.*, m.created_at::text as created_at_key,
               row_number() over (order by m.created_at desc, m.id desc)::int as ord,
               null::int as count, null::text as role_total
        from matching m
        ${
      where(tx, [
        ifGiven(q.role, (role) => tx`m.role = ${role}::app.user_role`),
        ifGiven(
          q.after,
          ([time, id]) => tx`(m.created_at, m.id) < (${time}::timestamptz, ${id}::uuid)`,
        ),
      ])
    }
        order by m.created_at desc, m.id desc
        limit ${pageLimit(q.limit)}
      )
      select * from page
      union all
      select null, null, null, null, null, null, null, null, null, count(*)::int, m.role::text
      from matching m group by m.role`;
    for (const row of matched) if (row.role_total !== null) byRole[row.role_total] = row.count ?? 0;
    rows = matched.filter((row) => row.role_total === null).sort((a, b) => a.ord - b.ord);
  }

  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
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
