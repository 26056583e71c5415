/**
 * Every list endpoint, paged to the end with small limits: each row the list holds comes exactly
 * once, in the list's order, against what the database holds. Each list has more than ten rows,
 * some with the same sort time (the id breaks the tie) and some whose ids run against their
 * times (the order is by time, not by id).
 */
import assert from "node:assert/strict";
import { createUser, expectJson, signInAs, test, testApp } from "../helpers.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

interface Page {
  items: { id: string }[];
  nextCursor: string | null;
}

/**
 * Follows `nextCursor` from the first page to the last and returns the ids in the order served.
 * Every page before the last is full; more pages than `expected` rows need is a failure (a
 * cursor that does not move on).
 */
async function pageThrough(
  path: string,
  token: string,
  limit: number,
  expected: number,
): Promise<string[]> {
  const ids: string[] = [];
  const maxPages = Math.ceil(expected / limit) + 1;
  let cursor: string | null = null;
  for (let pages = 1;; pages++) {
    const url: string = `${path}${path.includes("?") ? "&" : "?"}limit=${limit}` +
      (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
    const page: Page = await expectJson(await t.request("GET", url, { token }), 200);
    assert.ok(page.items.length <= limit, `${url}: at most ${limit} items`);
    ids.push(...page.items.map((item) => item.id));
    if (page.nextCursor === null) return ids;
    assert.equal(page.items.length, limit, `${url}: a page before the last is full`);
    assert.ok(pages < maxPages, `${path}: more pages than ${expected} rows need`);
    cursor = page.nextCursor;
  }
}

/** The same ids in the same order, each once; on a mismatch, says where the two part. */
function assertServedInOrder(served: string[], expected: string[], list: string): void {
  assert.ok(expected.length > 10, `${list}: more than ten rows to page through`);
  assert.equal(new Set(served).size, served.length, `${list}: no row served twice`);
  const firstDifference = expected.findIndex((id, i) => served[i] !== id);
  assert.ok(
    served.length === expected.length && firstDifference === -1,
    `${list}: served ${served.length} of ${expected.length} rows; ` +
      `first difference at position ${firstDifference}`,
  );
}

/**
 * The ids of rows as the database orders them. The queries name their columns with the table's
 * alias in `order by`: a bare `id` there would sort the `id::text` of the select list.
 */
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

test("[lists] GET /api/admin/users pages to the end: every user once, newest first", async () => {
  const tag = `lists-${crypto.randomUUID().slice(0, 8)}`;
  for (let i = 0; i < 6; i++) await createUser(t.deps, "MEMBER", `${tag}-a${i}@test.example`);
  // Twelve users made by one statement share their created_at: the id orders them.
  await t.deps.sql`
    insert into app.users (email, name, role)
    select ${tag} || '-b' || g || '@test.example', ${tag} || '-b' || g, 'SUBSCRIBER'
    from generate_series(1, 12) g`;

  const tagged = ids(
    await t.deps.sql<{ id: string }[]>`
      select u.id::text from app.users u where u.email like ${tag + "%"}
      order by u.created_at desc, u.id desc`,
  );
  const first = await expectJson(
    await t.request("GET", `/api/admin/users?search=${tag}&limit=4`, { token: admin.accessToken }),
    200,
  );
  assert.equal(first.counts.total, tagged.length, "the count matches the rows");
  assertServedInOrder(
    await pageThrough(`/api/admin/users?search=${tag}`, admin.accessToken, 4, tagged.length),
    tagged,
    "admin users, searched",
  );

  const all = ids(
    await t.deps.sql<{ id: string }[]>`
      select u.id::text from app.users u order by u.created_at desc, u.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/admin/users", admin.accessToken, 9, all.length),
    all,
    "admin users",
  );
});

test("[lists] GET /api/admin/security-events pages to the end: every event once, newest first by createdAt", async () => {
  const user = await createUser(t.deps, "MEMBER");
  // Twelve events at one time, six at earlier times; then five with later ids but earlier
  // times: the list orders by time, so these come last.
  await t.deps.sql`
    insert into app.security_events (type, user_id, ip, created_at)
    select 'test.paging', ${user.id}, '192.0.2.77',
           now() - interval '1 hour' - case when g <= 12 then interval '0' else g * interval '1 s' end
    from generate_series(1, 18) g`;
  await t.deps.sql`
    insert into app.security_events (type, user_id, ip, created_at)
    select 'test.paging', ${user.id}, '192.0.2.77', now() - interval '2 hours' - g * interval '1 s'
    from generate_series(1, 5) g`;

  const own = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.security_events e where e.user_id = ${user.id}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/security-events?userId=${user.id}&type=test.paging&ip=192.0.2.77`,
      admin.accessToken,
      4,
      own.length,
    ),
    own,
    "security events of one user",
  );

  // Every event up to now (`to` holds the set still while the walk adds rows of its own).
  const to = new Date(Date.now() - 1).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const all = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.security_events e where e.created_at < ${to}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/security-events?to=${encodeURIComponent(to)}`,
      admin.accessToken,
      7,
      all.length,
    ),
    all,
    "security events",
  );
});

test("[lists] GET /api/admin/access-logs pages to the end: every entry once, newest first by createdAt", async () => {
  const user = await createUser(t.deps, "MEMBER");
  await t.deps.sql`
    insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
    select 'paging-' || g, ${user.id}, 'GET', '/api/test/paging', 200, 1, '192.0.2.78',
           now() - interval '1 hour' - case when g <= 12 then interval '0' else g * interval '1 s' end
    from generate_series(1, 18) g`;
  await t.deps.sql`
    insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
    select 'paging-late-' || g, ${user.id}, 'GET', '/api/test/paging', 200, 1, '192.0.2.78',
           now() - interval '2 hours' - g * interval '1 s'
    from generate_series(1, 5) g`;

  const own = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.access_logs e where e.user_id = ${user.id}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/access-logs?userId=${user.id}&route=/api/test/paging&ip=192.0.2.78`,
      admin.accessToken,
      4,
      own.length,
    ),
    own,
    "access log of one user",
  );

  // The log of every request so far is written; the walk's own requests come after `to`.
  await t.deps.accessLog.flush();
  const to = new Date(Date.now() - 1).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const all = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.access_logs e where e.created_at < ${to}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/access-logs?to=${encodeURIComponent(to)}`,
      admin.accessToken,
      7,
      all.length,
    ),
    all,
    "access log",
  );
});

test("[lists] GET /api/conversations pages to the end: every conversation once, newest activity first", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const other = await createUser(t.deps, "SUBSCRIBER");
  const made: string[] = [];
  for (let i = 0; i < 16; i++) {
    const created = await expectJson(
      await t.request("POST", "/api/conversations", {
        token: me.accessToken,
        body: { type: "group", participantIds: [other.id], title: `Paging ${i}` },
      }),
      201,
    );
    made.push(created.id);
  }
  // Eight with the same latest activity: the id orders them.
  await t.deps.sql`
    update app.conversations set last_activity_at = now() - interval '1 minute'
    where id = any(${made.slice(0, 8)}::uuid[])`;

  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select c.id::text from app.conversations c
      join app.conversation_participants p on p.conversation_id = c.id
      where p.user_id = ${me.user.id}
      order by c.last_activity_at desc, c.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/conversations", me.accessToken, 3, expected.length),
    expected,
    "conversations",
  );
  assertServedInOrder(
    await pageThrough("/api/conversations?type=group&search=paging", me.accessToken, 5, 16),
    expected,
    "conversations, filtered",
  );
});

test("[lists] GET /api/conversations/:id/messages pages to the end both ways: older by cursor, newer with after=", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const other = await createUser(t.deps, "SUBSCRIBER");
  const conversation = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: me.accessToken,
      body: { type: "direct", participantIds: [other.id] },
    }),
    201,
  );
  for (let i = 0; i < 17; i++) {
    await expectJson(
      await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
        token: me.accessToken,
        body: { content: `message ${i}` },
      }),
      201,
    );
  }
  const newestFirst = ids(
    await t.deps.sql<{ id: string }[]>`
      select m.id::text from app.messages m where m.conversation_id = ${conversation.id}
      order by m.seq desc`,
  );
  const path = `/api/conversations/${conversation.id}/messages`;
  assertServedInOrder(
    await pageThrough(path, me.accessToken, 4, newestFirst.length),
    newestFirst,
    "messages, older pages",
  );
  const oldest = newestFirst[newestFirst.length - 1];
  const newer = newestFirst.slice(0, -1).reverse();
  assertServedInOrder(
    await pageThrough(`${path}?after=${oldest}`, me.accessToken, 4, newer.length),
    newer,
    "messages, catching up with after=",
  );
});

test("[lists] GET /api/notifications pages to the end: every notification once, newest first by createdAt", async () => {
  const me = await signInAs(t, "MEMBER");
  // Twelve written by one statement share their created_at (the id orders them); six more at
  // earlier times whose ids run against their times.
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body)
    select ${me.user.id}, 'SYSTEM', 'same time ' || g, '' from generate_series(1, 12) g`;
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body, created_at)
    select ${me.user.id}, case when g % 2 = 0 then 'WALLET' else 'SYSTEM' end::app.notification_type,
           'earlier ' || g, '', now() - g * interval '1 minute'
    from generate_series(1, 6) g`;
  // A hidden row (in-app off) and another user's never show.
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body, inbox)
    values (${me.user.id}, 'SYSTEM', 'hidden', '', false)`;
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select n.id::text from app.notifications n where n.user_id = ${me.user.id} and n.inbox
      order by n.created_at desc, n.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/notifications", me.accessToken, 5, expected.length),
    expected,
    "notifications",
  );
  await t.deps
    .sql`update app.notifications set read_at = now() where user_id = ${me.user.id} and title like 'same time 1%'`;
  const unread = ids(
    await t.deps.sql<{ id: string }[]>`
      select n.id::text from app.notifications n
      where n.user_id = ${me.user.id} and n.inbox and n.read_at is null and n.type = 'SYSTEM'
      order by n.created_at desc, n.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      "/api/notifications?unread=true&type=SYSTEM",
      me.accessToken,
      3,
      unread.length,
    ),
    unread,
    "notifications, unread SYSTEM",
  );
});
