/**
 * The notifications analytics read rollups (app_private.analytics_facts, its deltas and the
 * notifications and deliveries above the fold's marks; docs/notifications.md, Analytics).
 * Marking a folded notification read appends deltas from a statement trigger, an insert and
 * never an update of a shared row: here two sessions mark different notifications of the same
 * hour read at the same instant, round after round (one of them ends with read-all), with the
 * fold racing them, and the hour's read figure is exact afterwards.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createUser, expectJson, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();
const url = Deno.env.get("AGORA_TEST_DB_URL")!;

/** Resolves once `parties` callers have arrived at the same round. */
function barrier(parties: number) {
  const rounds = new Map<number, { n: number; open: () => void; done: Promise<void> }>();
  return (round: number): Promise<void> => {
    let r = rounds.get(round);
    if (!r) {
      let open = () => {};
      const done = new Promise<void>((resolve) => (open = resolve));
      r = { n: 0, open, done };
      rounds.set(round, r);
    }
    r.n += 1;
    if (r.n === parties) r.open();
    return r.done;
  };
}

test("[races] two sessions mark different notifications of the same hour read at once (one ends with read-all), the fold racing them: the hour's read figure is exact", async () => {
  const sql = t.deps.sql;
  const admin = await signInAs(t, "ADMIN");
  const a = (await createUser(t.deps, "MEMBER")).id;
  const b = (await createUser(t.deps, "MEMBER")).id;
  // 20 each, in one statement: one created_at, one hour bucket.
  const rows = await sql<{ id: string; user_id: string; created_at: Date }[]>`
    insert into app.notifications (user_id, type, title, body)
    select u, 'OPPORTUNITY', 'race ' || g, '' from unnest(${[
    a,
    b,
  ]}::uuid[]) u, generate_series(1, 20) g
    returning id, user_id, created_at`;
  const ids = rows.map((r) => r.id);
  const mine = (user: string) => rows.filter((r) => r.user_id === user).map((r) => r.id);
  // Folded: marking them read is a change below the mark (deltas), not the live tail.
  await sql`select app_private.fold_analytics_facts(interval '0')`;
  const [below] = await sql<{ n: number }[]>`
    select count(*)::int as n from app.notifications n, app_private.analytics_fold_marks k
    where k.source = 'app.notifications' and n.id = any(${ids}::uuid[]) and n.created_at < k.folded_before`;
  assert.equal(below.n, 40, "the 40 notifications are below the mark");

  const at = rows[0].created_at;
  const range = `from=${encodeURIComponent(at.toISOString())}&to=${
    encodeURIComponent(new Date(at.getTime() + 1).toISOString())
  }&interval=hour&type=OPPORTUNITY`;
  const figures = async () =>
    (await expectJson(
      await t.request("GET", `/api/notifications/analytics?${range}`, {
        token: admin.accessToken,
      }),
      200,
    )) as { totals: { created: number; read: number } };
  const before = await figures();
  assert.ok(before.totals.created >= 40);

  const one = postgres(url, { max: 1, onnotice: () => {} });
  const two = postgres(url, { max: 1, onnotice: () => {} });
  const folder = postgres(url, { max: 1, onnotice: () => {} });
  const meet = barrier(2);
  let racing = true;
  try {
    const marker = async (db: postgres.Sql, list: string[], user: string, readAllAfter: number) => {
      for (let i = 0; i < 20; i++) {
        await db.begin(async (tx) => {
          if (i < readAllAfter) {
            await tx`update app.notifications set read_at = now() where id = ${list[i]}`;
          } else if (i === readAllAfter) {
            await tx`update app.notifications set read_at = now()
                     where user_id = ${user} and read_at is null`;
          }
          // Both transactions have written; they commit together.
          await meet(i);
        });
      }
    };
    const folding = (async () => {
      let runs = 0;
      while (racing) {
        await folder`select app_private.fold_analytics_facts(interval '0')`;
        runs += 1;
      }
      return runs;
    })();
    await Promise.all([marker(one, mine(a), a, 20), marker(two, mine(b), b, 10)]);
    racing = false;
    assert.ok((await folding) >= 1, "the fold ran during the race");
  } finally {
    racing = false;
    await Promise.all([one.end(), two.end(), folder.end()]);
  }

  const [truth] = await sql<{ read: number; hour: number }[]>`
    select count(*) filter (where id = any(${ids}::uuid[]) and read_at is not null)::int as read,
           count(*) filter (where read_at is not null)::int as hour
    from app.notifications
    where inbox and type = 'OPPORTUNITY'
      and created_at >= date_trunc('hour', ${at}::timestamptz)
      and created_at < date_trunc('hour', ${at}::timestamptz) + interval '1 hour'`;
  assert.equal(truth.read, 40, "all 40 are read");
  const after = await figures();
  assert.equal(after.totals.read - before.totals.read, 40, "the hour's read figure moved by 40");
  assert.equal(after.totals.read, truth.hour, "and equals the table's count of the hour");
  assert.equal(after.totals.created, before.totals.created, "created did not move");

  // The same once the deltas are compacted.
  await sql`select app_private.compact_counters()`;
  assert.equal((await figures()).totals.read, truth.hour, "after the compaction too");
});
