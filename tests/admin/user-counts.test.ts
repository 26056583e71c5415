/**
 * The counts by role and status of GET /api/admin/users and the analytics come from
 * app_private.user_counts, kept by statement-level triggers on app.users. Here 20 writers on
 * connections of their own insert users, change their roles and statuses (one by one and many
 * in one statement) and delete them, all at once; afterwards every counter equals the count of
 * its users, read in the same snapshot. A counter that read its value and wrote it back, or one
 * a bulk update moved once instead of per row, would be off.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  createUser,
  expectJson,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";

const t = testApp();
const url = Deno.env.get("AGORA_TEST_DB_URL")!;
const ROLES = ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL"] as const;

interface Drift {
  role: string;
  status: string;
  counted: number;
  counter: number;
}

/** Every (role, status) whose counter differs from its users, in one snapshot. */
async function drift(sql: postgres.Sql): Promise<Drift[]> {
  const rows = await sql<Drift[]>`
    select r.role::text, s.status::text,
           (select count(*)::int from app.users u where u.role = r.role and u.status = s.status)
             as counted,
           (coalesce((select c.n from app_private.user_counts c
                      where c.role = r.role and c.status = s.status), 0)
            + coalesce((select sum(d.delta) from app_private.user_count_deltas d
                        where d.role = r.role and d.status = s.status), 0))::int as counter
    from unnest(enum_range(null::app.user_role)) r(role)
    cross join unnest(enum_range(null::app.user_status)) s(status)`;
  return rows.filter((r) => r.counted !== r.counter);
}

test("[races] 20 writers insert, re-role, suspend and delete users at once: every counter equals its users", async () => {
  const writers = Array.from({ length: 20 }, () => postgres(url, { max: 1, onnotice: () => {} }));
  try {
    const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)];
    await Promise.all(writers.map(async (sql, w) => {
      const mine: string[] = [];
      for (let i = 0; i < 15; i++) {
        const [row] = await sql<{ id: string }[]>`
          insert into app.users (email, name, role)
          values (${uniqueEmail(`count-${w}`)}, ${`Counted ${w}.${i}`}, ${
          pick(ROLES)
        }::app.user_role)
          returning id`;
        mine.push(row.id);
        if (i % 3 === 1) {
          await sql`update app.users set role = ${pick(ROLES)}::app.user_role
                    where id = ${pick(mine)}`;
        }
        if (i % 4 === 2) {
          await sql`update app.users set status = 'suspended' where id = ${pick(mine)}`;
        }
        if (i % 5 === 4) {
          // Many rows in one statement, in a transaction with a delete.
          await sql.begin(async (tx) => {
            await tx`update app.users
                     set role = case role when 'MEMBER' then 'SUBSCRIBER'::app.user_role
                                          else 'MEMBER'::app.user_role end,
                         status = 'active'
                     where id = any(${mine}::uuid[])`;
            await tx`delete from app.users where id = ${mine.shift()!}`;
          });
        }
      }
      // The every-minute fold, racing the writers.
      if (w % 5 === 0) await sql`select app_private.compact_counters()`;
      // Half of what is left goes in one statement.
      await sql`delete from app.users where id = any(${mine.slice(0, 5)}::uuid[])`;
    }));
    assert.deepEqual(await drift(t.deps.sql), [], "every (role, status) counter equals its users");
    await t.deps.sql`select app_private.compact_counters()`;
    assert.deepEqual(await drift(t.deps.sql), [], "and still does once the deltas are folded in");
  } finally {
    await Promise.all(writers.map((sql) => sql.end()));
  }
});

test("GET /api/admin/users counts from the counters: a new MEMBER and a suspension show at once", async () => {
  const admin = await signInAs(t, "ADMIN");
  const counts = async (query = "") =>
    (await expectJson<{ counts: { byRole: Record<string, number>; total: number } }>(
      await t.request("GET", `/api/admin/users?limit=1${query}`, { token: admin.accessToken }),
      200,
    )).counts;
  const before = await counts();
  const member = await createUser(t.deps, "MEMBER");
  const after = await counts();
  assert.equal(after.byRole.MEMBER, before.byRole.MEMBER + 1);
  assert.equal(after.total, before.total + 1);

  const suspendedBefore = await counts("&status=suspended");
  const activeBefore = await counts("&status=active");
  await t.deps.sql`update app.users set status = 'suspended' where id = ${member.id}`;
  const suspendedAfter = await counts("&status=suspended");
  assert.equal(suspendedAfter.byRole.MEMBER, suspendedBefore.byRole.MEMBER + 1);
  assert.equal((await counts("&status=active")).byRole.MEMBER, activeBefore.byRole.MEMBER - 1);
  assert.deepEqual(await drift(t.deps.sql), []);
});

test("GET /api/admin/users?search= finds by a part of the e-mail or name, counts only the matches, and a search matching nobody is empty", async () => {
  const admin = await signInAs(t, "ADMIN");
  const tag = crypto.randomUUID().slice(0, 8);
  const made: string[] = [];
  for (const [i, role] of (["MEMBER", "MEMBER", "SUBSCRIBER"] as const).entries()) {
    made.push((await createUser(t.deps, role, `find-${tag}-${i}@example.test`)).id);
  }
  const page = await expectJson<
    { items: { id: string }[]; nextCursor: string | null; counts: Any }
  >(
    await t.request("GET", `/api/admin/users?search=${tag}&limit=2`, { token: admin.accessToken }),
    200,
  );
  // Newest first: the last made comes first.
  assert.deepEqual(page.items.map((u) => u.id), [made[2], made[1]]);
  assert.ok(page.nextCursor);
  assert.equal(page.counts.total, 3);
  assert.equal(page.counts.byRole.MEMBER, 2);
  assert.equal(page.counts.byRole.SUBSCRIBER, 1);
  const rest = await expectJson<{ items: { id: string }[]; nextCursor: string | null }>(
    await t.request(
      "GET",
      `/api/admin/users?search=${tag}&limit=2&cursor=${page.nextCursor}`,
      { token: admin.accessToken },
    ),
    200,
  );
  assert.deepEqual(rest.items.map((u) => u.id), [made[0]]);
  assert.equal(rest.nextCursor, null);

  const members = await expectJson<{ items: { id: string }[]; counts: Any }>(
    await t.request("GET", `/api/admin/users?search=${tag}&role=MEMBER`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.deepEqual(members.items.map((u) => u.id), [made[1], made[0]]);
  assert.equal(members.counts.total, 2);

  const none = await expectJson<{ items: unknown[]; nextCursor: string | null; counts: Any }>(
    await t.request("GET", `/api/admin/users?search=zz${tag}qq`, { token: admin.accessToken }),
    200,
  );
  assert.deepEqual(none.items, []);
  assert.equal(none.nextCursor, null);
  assert.equal(none.counts.total, 0);
});

// deno-lint-ignore no-explicit-any
type Any = any;
