/**
 * Notifications at a year's size (issue 30): the unread counter kept exact by racing writers on
 * connections of their own; read-all touching only the unread rows and emitting one event; a
 * filtered inbox page past the rows it walks (the search index's half) in the same order as the
 * whole inbox filtered; a bulk send committed per chunk, killed mid-chunk (its backend
 * terminated before the commit) and rerun: every recipient once, progress from the counters; the
 * batch job rerun while a chunk is being written, without waiting for it.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createUser, expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { drain } from "../../functions/api/core/job-queue.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const runJobs = () => drain(t.deps, { registry: appJobs(), maxJobs: 10_000, batch: 50 });

async function counted(userId: string): Promise<{ counter: number; rows: number }> {
  const [row] = await t.deps.sql<{ counter: number; rows: number }[]>`
    select coalesce((select unread from app.notification_counters where user_id = ${userId}), 0)
             as counter,
           (select count(*)::int from app.notifications
             where user_id = ${userId} and inbox and read_at is null) as rows`;
  return row;
}

test("[notifications] the unread counter stays exact under 20 racing writers on their own connections (sends, reads, read-all, deletes)", async () => {
  const user = await createUser(t.deps, "MEMBER");
  const claims = JSON.stringify({ sub: user.id, role: "authenticated" });
  // Twenty connections, one per writer, so the statements really run at the same time.
  const writers = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 20, onnotice: () => {} });
  try {
    await writers`select app_private.notify_many(${[user.id]}::uuid[], 'SYSTEM', 'seed ' || i, '')
                  from generate_series(1, 60) i`;
    const asUser = (fn: (tx: postgres.TransactionSql) => Promise<unknown>) =>
      writers.begin(async (tx) => {
        await tx`select set_config('role', 'authenticated', true),
                        set_config('request.jwt.claims', ${claims}, true)`;
        return await fn(tx);
      });
    for (let round = 0; round < 5; round++) {
      const ids = (await t.deps.sql<{ id: string }[]>`
        select id from app.notifications where user_id = ${user.id} order by random()`)
        .map((r) => r.id);
      await Promise.all(Array.from({ length: 20 }, (_, i) => {
        const id = ids[i % ids.length];
        switch (i % 5) {
          case 0: // a send of three
            return writers`select app_private.notify_many(${[user.id]}::uuid[], 'WALLET',
                             'race ' || g, '') from generate_series(1, 3) g`;
          case 1: // two readers of the same row
          case 2:
            return asUser((tx) =>
              tx`update app.notifications set read_at = now() where id = ${id} and read_at is null`
            );
          case 3: // read-all
            return asUser((tx) =>
              tx`update app.notifications set read_at = now()
                 where user_id = ${user.id} and inbox and read_at is null`
            );
          default: // a delete of a row another writer reads
            return asUser((tx) => tx`select app.delete_notification(${ids[(i + 1) % ids.length]})`)
              .catch(() => {}); // already deleted by an earlier round: 404
        }
      }));
      const now = await counted(user.id);
      assert.equal(
        now.counter,
        now.rows,
        `round ${round}: the counter is the count of unread rows`,
      );
    }
    // The check can fail: a read that bypasses the trigger leaves the counter one too high.
    await t.deps.sql.begin(async (tx) => {
      await tx`select app_private.notify(${user.id}, 'SYSTEM', 'unseen', '')`;
      await tx`alter table app.notifications disable trigger notifications_read_events`;
      await tx`update app.notifications set read_at = now() where user_id = ${user.id} and read_at is null`;
      const [row] = await tx<{ counter: number; rows: number }[]>`
        select (select unread from app.notification_counters where user_id = ${user.id}) as counter,
               (select count(*)::int from app.notifications
                 where user_id = ${user.id} and inbox and read_at is null) as rows`;
      assert.notEqual(row.counter, row.rows, "without the trigger the counter drifts");
      throw new Error("rollback");
    }).catch((err) => {
      if ((err as Error).message !== "rollback") throw err;
    });
  } finally {
    await writers.end();
  }
});

test("[notifications] read-all reads only the unread rows and emits one notification.read_all; one read is one notification.read", async () => {
  const me = await signInAs(t, "MEMBER");
  await t.deps.sql`select app_private.notify_many(${[me.user.id]}::uuid[], 'SYSTEM', 'n' || i, '')
                   from generate_series(1, 300) i`;
  // A third of them read already: read-all must not touch them (their read time stays).
  await t.deps.sql`
    update app.notifications set read_at = now() - interval '1 hour'
    where id in (select id from app.notifications where user_id = ${me.user.id}
                 order by created_at limit 100)`;
  const [{ mark }] = await t.deps.sql<{ mark: string }[]>`
    select coalesce(max(id), 0)::text as mark from app.events where topic = ${
    "user:" + me.user.id
  }`;
  const one = (await t.deps.sql<{ id: string }[]>`
    select id from app.notifications where user_id = ${me.user.id} and read_at is null limit 1`)[0];
  const read = await expectJson(
    await t.request("PUT", `/api/notifications/${one.id}/read`, { token: me.accessToken }),
    200,
  );
  assert.equal(read.unreadCount, 199);
  const all = await expectJson(
    await t.request("PUT", "/api/notifications/read-all", { token: me.accessToken }),
    200,
  );
  assert.deepEqual(all, { updated: 199, unreadCount: 0 });
  const events = await t.deps.sql<{ event: string; payload: Record<string, unknown> }[]>`
    select event, payload from app.events
    where topic = ${"user:" + me.user.id} and event like 'notification.read%' and id > ${mark}
    order by id`;
  assert.deepEqual(events.map((e) => e.event), ["notification.read", "notification.read_all"]);
  assert.equal(events[0].payload.id, one.id);
  const payload = events[1].payload;
  assert.equal(payload.count, 199);
  assert.equal(payload.unreadCount, 0);
  assert.match(String(payload.readAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  const [newest] = await t.deps.sql<{ at: string }[]>`
    select to_char(max(created_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
    from app.notifications where user_id = ${me.user.id}`;
  assert.equal(payload.upTo, newest.at);
  const [kept] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.notifications
    where user_id = ${me.user.id} and read_at < now() - interval '30 minutes'`;
  assert.equal(kept.n, 100, "rows read before keep their read time");
  // Nothing left: read-all again reads nothing and says nothing.
  assert.deepEqual(
    await expectJson(
      await t.request("PUT", "/api/notifications/read-all", { token: me.accessToken }),
      200,
    ),
    { updated: 0, unreadCount: 0 },
  );
  const [after] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.events
    where topic = ${"user:" + me.user.id} and event like 'notification.read%' and id > ${mark}`;
  assert.equal(after.n, 2);
});

test("[notifications] a filtered inbox past the rows a page walks (search, type, unread) lists what the whole inbox filtered lists, in order, page by page", async () => {
  const me = await signInAs(t, "MEMBER");
  // 1,500 rows, oldest first; a rare word in three of them far down, a rare type, unread few.
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body, read_at, created_at)
    select ${me.user.id},
           (case when i in (3, 700, 1100) then 'WALLET' else 'SYSTEM' end)::app.notification_type,
           'Note ' || i, case when i in (5, 400, 1200) then 'about a Zephyr%_ wind' else 'plain' end,
           case when i % 400 = 7 then null else now() end,
           now() - (1500 - i) * interval '1 minute'
    from generate_series(1, 1500) i`;
  async function all(query: string, limit: number): Promise<string[]> {
    const titles: string[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 50; guard++) {
      const page: { items: { title: string }[]; nextCursor: string | null } = await expectJson(
        await t.request(
          "GET",
          `/api/notifications?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
          { token: me.accessToken },
        ),
        200,
      );
      titles.push(...page.items.map((n) => n.title));
      cursor = page.nextCursor;
      if (!cursor) return titles;
    }
    throw new Error("too many pages");
  }
  assert.deepEqual(await all("search=zephyr%25_", 2), ["Note 1200", "Note 400", "Note 5"]);
  assert.deepEqual(await all("search=ZEPHYR", 20), ["Note 1200", "Note 400", "Note 5"]);
  assert.deepEqual(await all("search=no-such-word", 20), []);
  assert.deepEqual(await all("type=WALLET", 1), ["Note 1100", "Note 700", "Note 3"]);
  assert.deepEqual(await all("unread=true&type=WALLET", 20), []);
  assert.deepEqual(await all("unread=true", 2), ["Note 1207", "Note 807", "Note 407", "Note 7"]);
  assert.deepEqual(await all("unread=false&search=zephyr", 20), [
    "Note 1200",
    "Note 400",
    "Note 5",
  ]);
  // A common filter: the first page from the walk, the same as the whole list filtered.
  const common = await all("search=note%201", 20);
  const [expected] = await t.deps.sql<{ titles: string[] }[]>`
    select array_agg(title order by created_at desc, id desc) as titles from app.notifications
    where user_id = ${me.user.id} and lower(title) like '%note 1%'`;
  assert.deepEqual(common, expected.titles);
});

test("[notifications] bulk send: each chunk commits on its own; a chunk killed before its commit writes nothing and its rerun writes it whole; progress is the chunks' counters", async () => {
  const tag = crypto.randomUUID().slice(0, 8);
  await Promise.all(
    Array.from(
      { length: 12 },
      (_, i) => createUser(t.deps, "MEMBER", `chunk-${tag}-${i}@test.example`),
    ),
  );
  const accepted = await expectJson(
    await t.request("POST", "/api/notifications/bulk", {
      token: admin.accessToken,
      body: {
        audience: { all: true },
        notification: { type: "SYSTEM", title: `Chunked ${tag}`, body: "" },
        channels: ["inApp"],
      },
    }),
    202,
  );
  // The plan: ranges of 5 recipients, nothing written yet.
  await t.deps
    .sql`delete from app_private.jobs where kind = 'notifications.batch' and payload ->> 'batchId' = ${accepted.id}`;
  const [{ chunks }] = await t.deps.sql<{ chunks: number }[]>`
    select app_private.write_notification_batch(${accepted.id}::uuid, 5) as chunks`;
  assert.equal(chunks, Math.ceil(accepted.recipients / 5));
  assert.equal(await written(), 0);

  // Chunk 0 commits on its own.
  await t.deps.sql`select app_private.write_batch_chunk(${accepted.id}::uuid, 0)`;
  assert.equal(await written(), 5);

  // Chunk 1 is killed mid-transaction: its backend terminated before the commit.
  const doomed = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 1, onnotice: () => {} });
  try {
    const killed = doomed.begin(async (tx) => {
      await tx`select app_private.write_batch_chunk(${accepted.id}::uuid, 1)`;
      const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await t.deps.sql`select pg_terminate_backend(${pid})`;
      await tx`select 1`;
    });
    await assert.rejects(killed);
  } finally {
    await doomed.end().catch(() => {});
  }
  assert.equal(await written(), 5, "the killed chunk wrote nothing");
  const mid = await expectJson(
    await t.request("GET", `/api/notifications/bulk/${accepted.id}`, { token: admin.accessToken }),
    200,
  );
  assert.equal(mid.status, "sending");
  assert.equal(mid.created, 5);

  // The jobs run (chunk 0 again among them): every recipient exactly once.
  await runJobs();
  const [counts] = await t.deps.sql<{ rows: number; users: number; chunks: number }[]>`
    select count(*)::int as rows, count(distinct user_id)::int as users,
           (select count(*)::int from app_private.notification_batch_chunks
             where batch_id = ${accepted.id} and written_at is not null and done_at is not null)
             as chunks
    from app.notifications where batch_id = ${accepted.id}`;
  assert.deepEqual(counts, { rows: accepted.recipients, users: accepted.recipients, chunks });
  const done = await expectJson(
    await t.request("GET", `/api/notifications/bulk/${accepted.id}`, { token: admin.accessToken }),
    200,
  );
  assert.equal(done.status, "done");
  assert.equal(done.created, accepted.recipients);

  async function written(): Promise<number> {
    const [row] = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.notifications where batch_id = ${accepted.id}`;
    return row.n;
  }
});

test("[notifications] bulk send: a rerun of the batch job while a chunk is being written neither waits for it nor deadlocks with it", async () => {
  const users = await Promise.all(Array.from({ length: 3 }, () => createUser(t.deps, "MEMBER")));
  const accepted = await expectJson(
    await t.request("POST", "/api/notifications/bulk", {
      token: admin.accessToken,
      body: {
        audience: { userIds: users.map((u) => u.id) },
        notification: { type: "SYSTEM", title: "Rerun", body: "" },
        channels: ["inApp"],
      },
    }),
    202,
  );
  // The batch job's first run: one chunk per recipient, a job each.
  await t.deps
    .sql`delete from app_private.jobs where kind = 'notifications.batch' and payload ->> 'batchId' = ${accepted.id}`;
  await t.deps.sql`select app_private.write_notification_batch(${accepted.id}::uuid, 1)`;

  // A chunk's writer is mid-transaction: its chunk row updated, the batch row (the written
  // counter) still ahead of it. The batch job runs again meanwhile (its process died after its
  // commit): it must finish without waiting for the writer, who then takes the batch row.
  const writer = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 1, onnotice: () => {} });
  try {
    await writer.begin(async (tx) => {
      await tx`update app_private.notification_batch_chunks set written_at = written_at
               where batch_id = ${accepted.id} and chunk = 0`;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const rerun = t.deps.sql<{ chunks: number }[]>`
        select app_private.write_notification_batch(${accepted.id}::uuid, 1) as chunks`;
      const first = await Promise.race([
        rerun.then(([row]) => row.chunks),
        new Promise<"waiting">((resolve) => timer = setTimeout(() => resolve("waiting"), 5_000)),
      ]).finally(() => clearTimeout(timer));
      assert.equal(first, 3, "the rerun returned the planned chunks while the writer was open");
      await tx`select app_private.write_batch_chunk(${accepted.id}::uuid, 0)`;
    });
  } finally {
    await writer.end().catch(() => {});
  }

  await runJobs();
  const failed = await t.deps.sql`
    select kind, last_error from app_private.jobs
    where payload ->> 'batchId' = ${accepted.id} and last_error is not null`;
  assert.equal(failed.length, 0, `no job of the batch failed: ${JSON.stringify(failed)}`);
  const [counts] = await t.deps.sql<{ rows: number; users: number }[]>`
    select count(*)::int as rows, count(distinct user_id)::int as users
    from app.notifications where batch_id = ${accepted.id}`;
  assert.deepEqual(counts, { rows: 3, users: 3 });
  const done = await expectJson(
    await t.request("GET", `/api/notifications/bulk/${accepted.id}`, { token: admin.accessToken }),
    200,
  );
  assert.equal(done.status, "done");
});

test("[notifications] bulk progress counts pushes and e-mails from the deliveries' outcomes (the counters equal counting the rows)", async () => {
  const user = await createUser(t.deps, "MEMBER");
  await t.deps.sql`insert into app.push_devices (user_id, token, platform)
                   values (${user.id}, ${"tok-" + crypto.randomUUID()}, 'web')`;
  const accepted = await expectJson(
    await t.request("POST", "/api/notifications/bulk", {
      token: admin.accessToken,
      body: {
        audience: { userIds: [user.id] },
        notification: { type: "SYSTEM", title: "Counted", body: "" },
        channels: ["inApp", "push", "email"],
      },
    }),
    202,
  );
  await runJobs();
  const progress = await expectJson(
    await t.request("GET", `/api/notifications/bulk/${accepted.id}`, { token: admin.accessToken }),
    200,
  );
  const [rows] = await t.deps.sql<{ push_sent: number; push_failed: number; email_sent: number }[]>`
    select count(*) filter (where d.channel = 'push' and d.status = 'sent')::int as push_sent,
           count(*) filter (where d.channel = 'push' and d.status in ('failed', 'pruned'))::int
             as push_failed,
           count(*) filter (where d.channel = 'email' and d.status = 'sent')::int as email_sent
    from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
    where n.batch_id = ${accepted.id}`;
  assert.equal(progress.pushSent, rows.push_sent);
  assert.equal(progress.pushFailed, rows.push_failed);
  assert.equal(progress.emailSent, rows.email_sent);
  assert.equal(progress.pushSent + progress.pushFailed, 1, "the push left the queue and counted");
  assert.equal(progress.created, 1);
});
