/**
 * Read-all by a mark (issue 30; docs/notifications.md, "Read-all"): beyond a few hundred unread,
 * PUT /api/notifications/read-all writes one row (app.notification_read_marks) instead of every
 * notification; every reader treats the covered rows as read at once, and the
 * notifications.read_marks job writes them down afterwards without a second count or event. The
 * mark covers creation times, so writers racing a read-all must never leave a notification the
 * read-all did not see under its mark: counted unread but shown read, or the reverse.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createUser, expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { drain } from "../../functions/api/core/job-queue.ts";

const t = testApp();
const runJobs = () => drain(t.deps, { registry: appJobs(), maxJobs: 10_000, batch: 50 });

/** The counter, the unread rows as readers see them, and the rows whose read_at is still null. */
async function state(userId: string) {
  const [row] = await t.deps.sql<
    { counter: number; unread: number; unwritten: number; marks: number }[]
  >`
    select coalesce((select unread from app.notification_counters where user_id = ${userId}), 0) as counter,
           (select count(*)::int from app.notifications n
             where n.user_id = ${userId} and n.inbox and app.notification_read_at(n) is null) as unread,
           (select count(*)::int from app.notifications n
             where n.user_id = ${userId} and n.inbox and n.read_at is null) as unwritten,
           (select count(*)::int from app.notification_read_marks where user_id = ${userId}) as marks`;
  return row;
}

/** After the job: the same counter and unread rows, every covered row written down, no mark. */
async function writtenDown(userId: string, before: Awaited<ReturnType<typeof state>>) {
  await runJobs();
  assert.deepEqual(await state(userId), {
    counter: before.counter,
    unread: before.unread,
    unwritten: before.unread,
    marks: 0,
  });
}

test("[notifications] read-all of 600 unread writes one mark: the list, its unread filter and the count say read at once; the job writes the rows down and sends nothing more", async () => {
  const me = await signInAs(t, "MEMBER");
  await t.deps.sql`select app_private.notify_many(${[me.user.id]}::uuid[], 'SYSTEM', 'm' || i, '')
                   from generate_series(1, 600) i`;
  const topic = "user:" + me.user.id;
  const [{ mark }] = await t.deps.sql<{ mark: string }[]>`
    select coalesce(max(id), 0)::text as mark from app.events where topic = ${topic}`;

  const all = await expectJson(
    await t.request("PUT", "/api/notifications/read-all", { token: me.accessToken }),
    200,
  );
  assert.deepEqual(all, { updated: 600, unreadCount: 0 });
  assert.deepEqual(await state(me.user.id), { counter: 0, unread: 0, unwritten: 600, marks: 1 });

  const events = await t.deps.sql<{ event: string; payload: Record<string, unknown> }[]>`
    select event, payload from app.events
    where topic = ${topic} and event like 'notification.read%' and id > ${mark} order by id`;
  assert.deepEqual(events.map((e) => e.event), ["notification.read_all"]);
  assert.equal(events[0].payload.count, 600);
  const readAt = String(events[0].payload.readAt);

  const unread = await expectJson(
    await t.request("GET", "/api/notifications?unread=true", { token: me.accessToken }),
    200,
  );
  assert.deepEqual([unread.items, unread.unreadCount], [[], 0]);
  const page = await expectJson(
    await t.request("GET", "/api/notifications?limit=20", { token: me.accessToken }),
    200,
  );
  assert.equal(page.items.length, 20);
  assert.deepEqual(new Set(page.items.map((n: { readAt: string }) => n.readAt)), new Set([readAt]));
  const one = page.items[7];
  const marked = await expectJson(
    await t.request("PUT", `/api/notifications/${one.id}/read`, { token: me.accessToken }),
    200,
  );
  assert.deepEqual(marked, { id: one.id, readAt, unreadCount: 0 });

  await runJobs();
  assert.deepEqual(await state(me.user.id), { counter: 0, unread: 0, unwritten: 0, marks: 0 });
  const [written] = await t.deps.sql<{ times: string[] }[]>`
    select array_agg(distinct to_char(read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) as times
    from app.notifications where user_id = ${me.user.id}`;
  assert.deepEqual(written.times, [readAt], "every row carries the read-all's time");
  const [after] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.events
    where topic = ${topic} and event like 'notification.read%' and id > ${mark}`;
  assert.equal(after.n, 1, "the job sends no event");
});

test("[races] read-alls by mark racing eight writers whose transactions start before them: no notification is lost under a mark, none counted twice", async () => {
  const user = await createUser(t.deps, "MEMBER");
  const url = Deno.env.get("AGORA_TEST_DB_URL")!;
  const writers = postgres(url, { max: 8, onnotice: () => {} });
  const reader = postgres(url, { max: 1, onnotice: () => {} });
  const claims = JSON.stringify({ sub: user.id, role: "authenticated" });
  let written = 0;
  let read = 0;
  let racing = true;
  try {
    // Each writer's transaction starts, waits, then notifies and waits again before its commit:
    // a row stamped with its transaction's start would be older than a read-all that ran
    // meanwhile and saw nothing of it.
    const writer = async (w: number) => {
      for (let i = 0; racing; i++) {
        await writers.begin(async (tx) => {
          await tx`select pg_sleep(${(w % 4) * 0.004})`;
          await tx`select app_private.notify(${user.id}, 'SYSTEM', ${`race ${w}.${i}`}, '')`;
          await tx`select pg_sleep(0.003)`;
        });
        written += 1;
      }
    };
    const readAlls = async () => {
      for (let round = 0; round < 40; round++) {
        const [row] = await reader.begin(async (tx) => {
          await tx`select set_config('role', 'authenticated', true),
                          set_config('request.jwt.claims', ${claims}, true)`;
          // Direct limit 0: every read-all that finds something writes a mark.
          return await tx<{ updated: number }[]>`
            select updated from app.mark_all_notifications_read(0)`;
        });
        read += row.updated;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      racing = false;
    };
    await Promise.all([readAlls(), ...Array.from({ length: 8 }, (_, w) => writer(w))]);
  } finally {
    await writers.end();
    await reader.end();
  }
  const before = await state(user.id);
  assert.ok(before.marks > 5, `the read-alls wrote marks (${before.marks})`);
  assert.equal(before.counter, before.unread, "the counter is the unread rows as readers see them");
  assert.equal(read + before.counter, written, "every notification was read once or is unread");
  await writtenDown(user.id, before);
});

test("[races] a collapse key folding new messages, the user reading that notification and read-alls of both ways, all at once: no deadlock, and the counter stays the unread rows", async () => {
  const user = await createUser(t.deps, "MEMBER");
  const url = Deno.env.get("AGORA_TEST_DB_URL")!;
  const db = postgres(url, { max: 6, onnotice: () => {} });
  const claims = JSON.stringify({ sub: user.id, role: "authenticated" });
  const asUser = <T>(fn: (tx: postgres.TransactionSql) => Promise<T>) =>
    db.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true),
                      set_config('request.jwt.claims', ${claims}, true)`;
      return await fn(tx);
    });
  const rounds = 60;
  try {
    await Promise.all([
      // Two "digests" folding into the conversation's unread notification (or making a new one).
      ...[0, 1].map(async (w) => {
        for (let i = 0; i < rounds; i++) {
          await db`select app_private.notify(${user.id}, 'MESSAGE', ${`chat ${w}.${i}`}, '', '{}',
                                             'normal', 'conversation:race')`;
        }
      }),
      // Plain notifications, so that there is something to read all.
      (async () => {
        for (let i = 0; i < rounds; i++) {
          await db`select app_private.notify(${user.id}, 'SYSTEM', ${`plain ${i}`}, '')`;
        }
      })(),
      // The user reading the conversation's notification (the row, then the counter).
      (async () => {
        for (let i = 0; i < rounds; i++) {
          await asUser((tx) =>
            tx`update app.notifications set read_at = now()
               where user_id = ${user.id} and collapse_key = 'conversation:race' and read_at is null`
          );
        }
      })(),
      // Read-all both ways: directly (rows, then the counter) and by a mark (the write gate, then
      // the counter; no row).
      ...[500, 0].map(async (limit) => {
        for (let i = 0; i < rounds / 2; i++) {
          await asUser((tx) => tx`select * from app.mark_all_notifications_read(${limit})`);
        }
      }),
    ]);
  } finally {
    await db.end();
  }
  const before = await state(user.id);
  assert.equal(before.counter, before.unread, "the counter is the unread rows as readers see them");
  await writtenDown(user.id, before);
  const [{ open }] = await t.deps.sql<{ open: number }[]>`
    select count(*)::int as open from app.notifications
    where user_id = ${user.id} and collapse_key = 'conversation:race' and read_at is null`;
  assert.ok(open <= 1, "at most one unread notification per collapse key");
});

test("[races] a notification read while the read-all by mark covering it commits is taken off the counter once, whatever was counted meanwhile", async () => {
  const user = await createUser(t.deps, "MEMBER");
  const url = Deno.env.get("AGORA_TEST_DB_URL")!;
  const claims = JSON.stringify({ sub: user.id, role: "authenticated" });
  const readAll = postgres(url, { max: 1, onnotice: () => {} });
  const reader = postgres(url, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: `read-race-${user.id}` },
  });
  const [{ id }] = await t.deps.sql<{ id: string }[]>`
    select app_private.notify(${user.id}, 'SYSTEM', 'covered by the read-all', '') as id`;
  let commit!: () => void;
  const held = new Promise<void>((resolve) => commit = resolve);
  let ready!: () => void;
  const marked = new Promise<void>((resolve) => ready = resolve);
  try {
    // The read-all by mark (it covers the notification and sets the counter to 0), then a new
    // notification counted after it, in one transaction held open.
    const first = readAll.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true),
                      set_config('request.jwt.claims', ${claims}, true)`;
      await tx`select * from app.mark_all_notifications_read(0)`;
      await tx`reset role`;
      await tx`select app_private.notify(${user.id}, 'SYSTEM', 'after the read-all', '')`;
      ready();
      await held;
    });
    await marked;
    // The person reads the covered notification: its update waits for the read-all's counter.
    const second = reader.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true),
                      set_config('request.jwt.claims', ${claims}, true)`;
      await tx`update app.notifications set read_at = now() where id = ${id}`;
    });
    for (let waited = 0;; waited += 20) {
      const [waiting] = await t.deps.sql`
        select 1 from pg_stat_activity
        where application_name = ${`read-race-${user.id}`} and wait_event_type = 'Lock'`;
      if (waiting) break;
      if (waited > 5_000) throw new Error("the reader never waited for the read-all");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    commit();
    await first;
    await second;
  } finally {
    commit();
    await readAll.end();
    await reader.end();
  }
  const now = await state(user.id);
  assert.equal(now.unread, 1, "the notification after the read-all is unread");
  assert.equal(now.counter, now.unread, "the covered one was taken off once (by the read-all)");
  await writtenDown(user.id, now);
});
