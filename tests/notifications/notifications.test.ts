/**
 * /api/notifications over the real app and database: the inbox (list with its filters, create,
 * read, read-all, delete) with its denials (anonymous, another user, below ADMIN), preferences
 * and their validation, devices, the platform's own sources (conversations, messages, read
 * marks, role changes) including a race of concurrent sends, bulk sends (idempotent, exactly
 * one notification per recipient across a crashed and resumed drain, preferences obeyed,
 * suspended users left out) and analytics from the data.
 */
import assert from "node:assert/strict";
import {
  browserSignIn,
  createUser,
  expectError,
  expectJson,
  setCookies,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { drain } from "../../functions/api/core/job-queue.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

const get = (path: string, who: SignedIn) => t.request("GET", path, { token: who.accessToken });
const put = (path: string, who: SignedIn, body?: unknown) =>
  t.request("PUT", path, { token: who.accessToken, body });
const post = (path: string, who: SignedIn, body: unknown, headers?: Record<string, string>) =>
  t.request("POST", path, { token: who.accessToken, body, headers });

async function notify(
  who: SignedIn,
  body: Record<string, unknown>,
  as: SignedIn = who,
): Promise<{ id: string; readAt: string | null; inbox: boolean; [k: string]: unknown }> {
  return await expectJson(
    await post("/api/notifications", as, { type: "SYSTEM", title: "Hello", body: "", ...body }),
    201,
  );
}

async function inbox(who: SignedIn, query = "") {
  return await expectJson(await get(`/api/notifications${query}`, who), 200);
}

async function countRows(userId: string): Promise<number> {
  const [row] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.notifications where user_id = ${userId}`;
  return row.n;
}

const runJobs = () => drain(t.deps, { registry: appJobs(), maxJobs: 10_000, batch: 50 });

// --- the inbox -------------------------------------------------------------------------------

test("[notifications] POST /api/notifications creates one for oneself; GET lists it with the unread count", async () => {
  const me = await signInAs(t, "MEMBER");
  const created = await notify(me, {
    type: "ENTITY",
    title: "  Your listing is live  ",
    body: "Listing 42 is visible now.",
    data: { listingId: 42 },
  });
  assert.equal(created.type, "ENTITY");
  assert.equal(created.title, "Your listing is live", "the title is trimmed");
  assert.equal(created.priority, "normal", "priority defaults to normal");
  assert.deepEqual(created.data, { listingId: 42 });
  assert.equal(created.readAt, null);
  assert.equal(created.userId, me.user.id);
  assert.equal(created.inbox, true);
  assert.ok(!Number.isNaN(Date.parse(created.createdAt as string)));

  const page = await inbox(me);
  assert.equal(page.unreadCount, 1);
  assert.equal(page.nextCursor, null);
  assert.deepEqual(
    page.items.map((n: { id: string }) => n.id),
    [created.id],
  );
  const { userId: _userId, inbox: _inbox, ...shown } = created;
  assert.deepEqual(page.items[0], shown, "the list shows it exactly as it was created");
  assert.match(String(page.items[0].createdAt), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  assert.deepEqual(Object.keys(page.items[0]).sort(), [
    "body",
    "createdAt",
    "data",
    "id",
    "priority",
    "readAt",
    "title",
    "type",
  ]);
  const own = await notify(me, { userId: me.user.id, title: "Self, by id" });
  assert.equal(own.userId, me.user.id, "one's own userId is allowed below ADMIN");
});

test("[notifications] GET /api/notifications writes every character and timestamp as app.notification_json does (the list shapes its rows in TypeScript)", async () => {
  const me = await signInAs(t, "MEMBER");
  const texts = [
    'quote " backslash \\ slash / and \\u0041 as text',
    "new\nline, tab\t, return\r, backspace\b, form feed\f, bell \u0007, unit \u001f",
    "accents é, CJK 漢字, emoji 👋🏽, separators \u2028\u2029, DEL \u007f",
  ];
  // Fractions as Postgres prints them: none, trimmed, full; read and unread.
  const times = [
    ["2026-01-02 03:04:05+00", null],
    ["2026-01-02 03:04:05.1+00", "2026-01-03 00:00:00.000001+00"],
    ["2026-01-02 03:04:05.123456+00", "2026-01-03 23:59:59.99+00"],
  ];
  for (const [i, text] of texts.entries()) {
    await t.deps.sql`
      insert into app.notifications (user_id, type, title, body, data, created_at, read_at)
      values (${me.user.id}, 'SYSTEM', ${text}, ${texts[(i + 1) % 3]},
              ${t.deps.sql.json({ text, nested: [{ n: i }, null, true] })},
              ${times[i][0]}::timestamptz, ${times[i][1]}::timestamptz)`;
  }
  const expected = await t.deps.sql<{ json: Record<string, unknown> }[]>`
    select app.notification_json(n) as json from app.notifications n
    where n.user_id = ${me.user.id} order by n.created_at desc, n.id desc`;
  const page = await inbox(me);
  assert.deepEqual(page.items, expected.map((r) => r.json));
  assert.deepEqual(page.items.map((n: { createdAt: string }) => n.createdAt), [
    "2026-01-02T03:04:05.123456Z",
    "2026-01-02T03:04:05.100000Z",
    "2026-01-02T03:04:05.000000Z",
  ]);
  assert.equal(page.unreadCount, 1);
  // A page of one after another, through the cursor, and the empty page after the last.
  const first = await inbox(me, "?limit=2");
  assert.equal(first.items.length, 2);
  const second = await inbox(me, `?limit=2&cursor=${first.nextCursor}`);
  assert.deepEqual(second, { items: [page.items[2]], nextCursor: null, unreadCount: 1 });
  const none = await inbox(me, `?since=${encodeURIComponent("2030-01-01T00:00:00Z")}`);
  assert.deepEqual(none, { items: [], nextCursor: null, unreadCount: 1 });
  // `since` keeps its microseconds: a notification 56 µs before it is not "since" it.
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body, created_at, read_at)
    values (${me.user.id}, 'SYSTEM', 'just before', '', '2026-01-02 03:04:05.1234+00', now())`;
  const since = await inbox(me, `?since=${encodeURIComponent("2026-01-02T03:04:05.123456Z")}`);
  assert.deepEqual(since.items.map((n: { id: string }) => n.id), [page.items[0].id]);
});

test("[notifications] POST /api/notifications: below ADMIN only to oneself (403, nothing written); an ADMIN to anyone; an unknown user is 404", async () => {
  const me = await signInAs(t, "CONFIDENTIAL");
  const other = await signInAs(t, "MEMBER");
  const before = await countRows(other.user.id);
  await expectError(
    await post("/api/notifications", me, {
      userId: other.user.id,
      type: "SYSTEM",
      title: "Spoof",
      body: "",
    }),
    403,
    "forbidden",
  );
  assert.equal(await countRows(other.user.id), before, "nothing written for the other user");

  const byAdmin = await notify(other, { userId: other.user.id, title: "From the team" }, admin);
  assert.equal(byAdmin.userId, other.user.id);
  assert.deepEqual(
    (await inbox(other)).items.map((n: { id: string }) => n.id),
    [byAdmin.id],
  );
  assert.equal((await inbox(admin, "?search=From%20the%20team")).items.length, 0);

  await expectError(
    await post("/api/notifications", admin, {
      userId: crypto.randomUUID(),
      type: "SYSTEM",
      title: "Nobody",
      body: "",
    }),
    404,
    "not_found",
  );
});

test("[notifications] bad input is 400 and writes nothing", async () => {
  const me = await signInAs(t, "MEMBER");
  const bad = [
    { type: "NOPE", title: "x", body: "" },
    { type: "SYSTEM", title: "", body: "" },
    { type: "SYSTEM", title: "   ", body: "" },
    { type: "SYSTEM", title: "t".repeat(201), body: "" },
    { type: "SYSTEM", title: "x", body: "b".repeat(2001) },
    { type: "SYSTEM", title: "x", priority: "urgent" },
    { type: "SYSTEM", title: "x", data: [1, 2] },
    { type: "SYSTEM", title: "x", data: { pad: "p".repeat(3000) } },
    { type: "SYSTEM", title: "x", userId: "not-a-uuid" },
    { type: "SYSTEM", title: "x" }, // no body: the contract requires it
  ];
  for (const body of bad) {
    await expectError(await post("/api/notifications", me, body), 400, "invalid_request");
  }
  assert.equal(await countRows(me.user.id), 0);
});

test("[notifications] GET /api/notifications filters by type, unread, search (title and body) and since (inclusive)", async () => {
  const me = await signInAs(t, "MEMBER");
  const a = await notify(me, { type: "WALLET", title: "Received 5 USDC", body: "from Ann" });
  const b = await notify(me, { type: "SYSTEM", title: "Maintenance", body: "Sunday 50% off_peak" });
  const c = await notify(me, { type: "WALLET", title: "Sent 2 USDC", body: "to Bo" });
  await expectJson(await put(`/api/notifications/${a.id}/read`, me), 200);
  const ids = (page: { items: { id: string }[] }) => page.items.map((n) => n.id);

  assert.deepEqual(ids(await inbox(me)), [c.id, b.id, a.id], "newest first");
  assert.deepEqual(ids(await inbox(me, "?type=WALLET")), [c.id, a.id]);
  assert.deepEqual(ids(await inbox(me, "?unread=true")), [c.id, b.id]);
  assert.deepEqual(ids(await inbox(me, "?unread=false")), [a.id]);
  assert.deepEqual(ids(await inbox(me, "?search=usdc")), [c.id, a.id], "case-insensitive, title");
  assert.deepEqual(ids(await inbox(me, "?search=ANN")), [a.id], "the body too");
  assert.deepEqual(ids(await inbox(me, "?search=50%25%20off_")), [b.id], "% and _ are literal");
  assert.deepEqual(ids(await inbox(me, "?search=50%25x")), []);
  const since = await inbox(me, `?since=${encodeURIComponent(b.createdAt as string)}`);
  assert.deepEqual(ids(since), [c.id, b.id], "since includes its own instant");
  const filtered = await inbox(me, "?type=SYSTEM&unread=false");
  assert.deepEqual(ids(filtered), []);
  assert.equal(
    filtered.unreadCount,
    2,
    "unreadCount counts every unread one, whatever the filters",
  );
  await expectError(await get("/api/notifications?type=NEWS", me), 400, "invalid_request");
  await expectError(await get("/api/notifications?unread=yes", me), 400, "invalid_request");
  await expectError(await get("/api/notifications?since=yesterday", me), 400, "invalid_request");
  await expectError(await get("/api/notifications?cursor=garbage", me), 400, "invalid_request");
});

test("[notifications] PUT /api/notifications/:id/read marks once; another user's or an unknown one is 404", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const other = await signInAs(t, "SUBSCRIBER");
  const mine = await notify(me, { title: "Read me" });
  await notify(me, { title: "Leave me" });
  const theirs = await notify(other, { title: "Not yours" });

  const read = await expectJson(await put(`/api/notifications/${mine.id}/read`, me), 200);
  assert.equal(read.id, mine.id);
  assert.ok(!Number.isNaN(Date.parse(read.readAt)));
  assert.equal(read.unreadCount, 1);
  const again = await expectJson(await put(`/api/notifications/${mine.id}/read`, me), 200);
  assert.equal(again.readAt, read.readAt, "marking again keeps the first time");

  await expectError(await put(`/api/notifications/${theirs.id}/read`, me), 404, "not_found");
  const [row] = await t.deps.sql`select read_at from app.notifications where id = ${theirs.id}`;
  assert.equal(row.read_at, null, "the other user's notification stays unread");
  await expectError(await put(`/api/notifications/${crypto.randomUUID()}/read`, me), 404);
  await expectError(await put("/api/notifications/nope/read", me), 400, "invalid_request");
  await expectError(
    await t.request("PUT", `/api/notifications/${mine.id}/read`),
    401,
    "unauthenticated",
  );
});

test("[notifications] PUT /api/notifications/read-all marks every unread one of the caller only", async () => {
  const me = await signInAs(t, "MEMBER");
  const other = await signInAs(t, "MEMBER");
  for (let i = 0; i < 3; i++) await notify(me, { title: `n${i}` });
  await notify(other, { title: "theirs" });
  const result = await expectJson(await put("/api/notifications/read-all", me), 200);
  assert.deepEqual(result, { updated: 3, unreadCount: 0 });
  assert.deepEqual(await expectJson(await put("/api/notifications/read-all", me), 200), {
    updated: 0,
    unreadCount: 0,
  });
  assert.equal((await inbox(other)).unreadCount, 1, "another user's inbox is untouched");
});

test("[notifications] DELETE /api/notifications/:id deletes one's own; another user's is 404 and stays", async () => {
  const me = await signInAs(t, "MEMBER");
  const other = await signInAs(t, "MEMBER");
  const mine = await notify(me, { title: "Delete me" });
  const theirs = await notify(other, { title: "Keep me" });
  assert.deepEqual(
    await expectJson(
      await t.request("DELETE", `/api/notifications/${mine.id}`, { token: me.accessToken }),
      200,
    ),
    { id: mine.id, deleted: true },
  );
  assert.equal((await inbox(me)).items.length, 0);
  await expectError(
    await t.request("DELETE", `/api/notifications/${mine.id}`, { token: me.accessToken }),
    404,
  );
  await expectError(
    await t.request("DELETE", `/api/notifications/${theirs.id}`, { token: me.accessToken }),
    404,
    "not_found",
  );
  assert.equal(
    (await inbox(other)).items.length,
    1,
    "the other user's notification is still there",
  );
  await expectError(await t.request("DELETE", `/api/notifications/${theirs.id}`), 401);
});

test("[notifications] a VISITOR has an inbox too (their own role change lands there)", async () => {
  const user = await createUser(t.deps, "VISITOR");
  const visitor = await signIn(t, user.email);
  await notify(visitor, { title: "Visitor note" });
  assert.equal((await inbox(visitor)).items.length, 1);
});

test("[notifications] GET /api/notifications checks the session in its own statement: a session ended by signout or suspension, or another user's, reads nothing (401), by bearer or by cookie (then cleared); the access log names the caller", async () => {
  const member = await signInAs(t, "MEMBER");
  await notify(member, { title: "Before the end" });

  // A signed-in caller's page carries the request id the access log keeps with the user.
  const ok = await get("/api/notifications", member);
  assert.equal((await expectJson(ok, 200)).items.length, 1);
  const requestId = ok.headers.get("x-request-id");
  await t.deps.accessLog.flush();
  const [logged] = await t.deps.sql<{ user_id: string | null; status: number }[]>`
    select user_id, status from app.access_logs where request_id = ${requestId}`;
  assert.deepEqual(logged, { user_id: member.user.id, status: 200 });

  // An empty inbox answers its count without a second statement.
  const empty = await signInAs(t, "SUBSCRIBER");
  assert.deepEqual(await inbox(empty), { items: [], nextCursor: null, unreadCount: 0 });
  assert.deepEqual(await inbox(member, "?type=MESSAGE"), {
    items: [],
    nextCursor: null,
    unreadCount: 1,
  });

  // Signed out: the token is still unexpired and correctly signed, the session is not live.
  const signedOut = await signInAs(t, "MEMBER");
  await expectJson(await post("/api/auth/signout", signedOut, {}), 200);
  const refused = await get("/api/notifications", signedOut);
  await expectError(refused, 401, "unauthenticated");
  await t.deps.accessLog.flush();
  const [refusedLog] = await t.deps.sql<{ user_id: string | null; status: number }[]>`
    select user_id, status from app.access_logs where request_id = ${
    refused.headers.get("x-request-id")
  }`;
  assert.deepEqual(refusedLog, { user_id: null, status: 401 }, "a refused caller is nobody");

  // Suspended by an ADMIN: every session ends; the same for a direct status change.
  await expectJson(
    await put(`/api/admin/users/${member.user.id}/status`, admin, {
      status: "suspended",
      reason: "test",
    }),
    200,
  );
  await expectError(await get("/api/notifications", member), 401, "unauthenticated");

  // By cookie the statement checks the session too; an ended session's cookies are cleared.
  const email = uniqueEmail("inbox-cookie");
  const { cookies } = await browserSignIn(t, email);
  const byCookie = await expectJson(await t.request("GET", "/api/notifications", { cookies }), 200);
  assert.equal(byCookie.unreadCount, 0);
  await t.deps.sql`
    update app.sessions s set revoked_at = now(), revoked_reason = 'signout'
    from app.users u where u.id = s.user_id and u.email = ${email}`;
  const ended = await t.request("GET", "/api/notifications", { cookies });
  assert.match(setCookies(ended)["agora-access-token"]?.attributes ?? "", /Max-Age=0/i);
  await expectError(ended, 401, "unauthenticated");

  // Tokens we sign ourselves, naming any ids: the statement answers 401 to every one that names no
  // live session of its user.
  const expectTokenRefused = async (userId: string, sessionId: string) => {
    const { token } = await t.deps.tokens.issue({
      userId,
      sessionId,
      email: null,
      userRole: "SUBSCRIBER",
      authTime: Math.floor(Date.now() / 1000),
      provider: "email",
    });
    await expectError(
      await t.request("GET", "/api/notifications", { token }),
      401,
      "unauthenticated",
    );
  };
  // One user with another user's session (as only a forged token could).
  const other = await signInAs(t, "MEMBER");
  const [session] = await t.deps.sql<{ id: string }[]>`
    select id from app.sessions where user_id = ${other.user.id} and revoked_at is null limit 1`;
  await expectTokenRefused(empty.user.id, session.id);
  // Ids that are not UUIDs name no session: 401, not a failed cast.
  await expectTokenRefused(empty.user.id, "x");
  await expectTokenRefused("x", session.id);
  // Bad input is still a 400 before any statement.
  await expectError(await get("/api/notifications?limit=0", other), 400, "invalid_request");
});

// --- preferences -----------------------------------------------------------------------------

test("[notifications] preferences: defaults from the configuration, partial updates, the whole document back", async () => {
  const me = await signInAs(t, "MEMBER");
  const first = await expectJson(await get("/api/notifications/preferences", me), 200);
  assert.deepEqual(first.types.SYSTEM, { inApp: true, push: true, email: true });
  assert.deepEqual(first.types.MESSAGE, { inApp: true, push: true, email: false });
  assert.equal(Object.keys(first.types).length, 5);
  assert.equal(first.quietHours, null);
  assert.equal(first.updatedAt, null);

  const changed = await expectJson(
    await put("/api/notifications/preferences", me, {
      types: { MESSAGE: { push: false }, WALLET: { email: true } },
      quietHours: { start: "22:30", end: "07:00", timeZone: "Europe/Berlin" },
    }),
    200,
  );
  assert.deepEqual(changed.types.MESSAGE, { inApp: true, push: false, email: false });
  assert.deepEqual(changed.types.WALLET, { inApp: true, push: true, email: true });
  assert.deepEqual(changed.quietHours, { start: "22:30", end: "07:00", timeZone: "Europe/Berlin" });
  assert.ok(changed.updatedAt);

  const again = await expectJson(
    await put("/api/notifications/preferences", me, { types: { MESSAGE: { inApp: false } } }),
    200,
  );
  assert.deepEqual(again.types.MESSAGE, { inApp: false, push: false, email: false }, "merged");
  assert.deepEqual(again.quietHours, changed.quietHours, "quiet hours kept when not given");
  const cleared = await expectJson(
    await put("/api/notifications/preferences", me, { quietHours: null }),
    200,
  );
  assert.equal(cleared.quietHours, null);
  assert.deepEqual(await expectJson(await get("/api/notifications/preferences", me), 200), cleared);
});

test("[notifications] preferences: unknown types, bad times and unknown time zones are 400 and change nothing", async () => {
  const me = await signInAs(t, "MEMBER");
  const set = await expectJson(
    await put("/api/notifications/preferences", me, {
      quietHours: { start: "23:00", end: "06:00", timeZone: "UTC" },
    }),
    200,
  );
  const bad = [
    { types: { NEWS: { push: false } } },
    { types: { MESSAGE: { sms: true } } },
    { types: { MESSAGE: { push: "no" } } },
    { quietHours: { start: "25:00", end: "06:00", timeZone: "UTC" } },
    { quietHours: { start: "7:00", end: "06:00", timeZone: "UTC" } },
    { quietHours: { start: "22:00", end: "06:00:30", timeZone: "UTC" } },
    { quietHours: { start: "22:00", end: "22:00", timeZone: "UTC" } },
    { quietHours: { start: "22:00", end: "06:00", timeZone: "Mars/Olympus_Mons" } },
    { quietHours: { start: "22:00", end: "06:00", timeZone: "EST5EDT-nope" } },
    { quietHours: { start: "22:00", end: "06:00" } },
    { other: true },
  ];
  for (const body of bad) {
    await expectError(
      await put("/api/notifications/preferences", me, body),
      400,
      "invalid_request",
    );
  }
  assert.deepEqual(await expectJson(await get("/api/notifications/preferences", me), 200), set);
});

test("[notifications] a type whose in-app channel is off is not stored in the inbox; critical always is", async () => {
  const me = await signInAs(t, "MEMBER");
  await expectJson(
    await put("/api/notifications/preferences", me, { types: { ENTITY: { inApp: false } } }),
    200,
  );
  const hidden = await notify(me, { type: "ENTITY", title: "Quietly" });
  assert.equal(hidden.inbox, false);
  const critical = await notify(me, { type: "ENTITY", title: "Loudly", priority: "critical" });
  assert.equal(critical.inbox, true);
  const page = await inbox(me);
  assert.deepEqual(page.items.map((n: { title: string }) => n.title), ["Loudly"]);
  assert.equal(page.unreadCount, 1);
  await expectError(await put(`/api/notifications/${hidden.id}/read`, me), 404);
});

// --- devices ---------------------------------------------------------------------------------

test("[notifications] devices: register (201, then 200), a token moves to a new owner, unregister (200, then 404)", async () => {
  const me = await signInAs(t, "MEMBER");
  const other = await signInAs(t, "MEMBER");
  const token = `fcm-${crypto.randomUUID()}`;
  const path = "/api/notifications/fcm/register";
  const created = await expectJson(
    await post(path, me, { token, platform: "android", deviceName: "Pixel" }),
    201,
  );
  assert.equal(created.platform, "android");
  assert.ok(created.id && created.createdAt);
  assert.equal(Object.keys(created).includes("token"), false, "the token is never returned");
  const known = await expectJson(await post(path, me, { token, platform: "android" }), 200);
  assert.equal(known.id, created.id);

  const moved = await expectJson(await post(path, other, { token, platform: "web" }), 201);
  assert.notEqual(moved.id, created.id, "a moved token is a new device of its new owner");
  const owners = await t.deps.sql`select user_id from app.push_devices where token = ${token}`;
  assert.deepEqual(owners.map((r) => r.user_id), [other.user.id]);

  const remove = (who: SignedIn) =>
    t.request("DELETE", path, { token: who.accessToken, body: { token } });
  await expectError(await remove(me), 404, "not_found");
  assert.deepEqual(await expectJson(await remove(other), 200), { unregistered: true });
  await expectError(await remove(other), 404);
  await expectError(await post(path, me, { token, platform: "blackberry" }), 400);
  await expectError(await post(path, me, { token: "", platform: "web" }), 400);
  await expectError(await post(path, me, { token: "x".repeat(1025), platform: "web" }), 400);
});

// --- sources ---------------------------------------------------------------------------------

async function conversation(creator: SignedIn, others: SignedIn[], title?: string) {
  return await expectJson(
    await post(
      "/api/conversations",
      creator,
      title
        ? { type: "group", participantIds: others.map((o) => o.user.id), title }
        : { type: "direct", participantIds: [others[0].user.id] },
    ),
    [200, 201],
  );
}

async function send(who: SignedIn, conversationId: string, content: string) {
  return await expectJson(
    await post(`/api/conversations/${conversationId}/messages`, who, { content }),
    201,
  );
}

/**
 * A send only marks its conversation; the MESSAGE notifications come from its digest job, due a
 * second after the first send. This makes it due now and runs it.
 */
async function digestNow() {
  await t.deps.sql`
    update app_private.jobs set run_at = now()
    where kind = 'notifications.digest' and state = 'queued'`;
  await runJobs();
}

async function messageNotifications(who: SignedIn) {
  return (await inbox(who, "?type=MESSAGE")).items as {
    id: string;
    title: string;
    body: string;
    data: { conversationId: string; messageId: string | null; count: number };
    readAt: string | null;
  }[];
}

test("[notifications] a new conversation and its messages give the others one MESSAGE notification, updated by the digest; never for one's own", async () => {
  const ann = await signInAs(t, "MEMBER");
  const bo = await signInAs(t, "MEMBER");
  const cy = await signInAs(t, "MEMBER");
  const group = await conversation(ann, [bo, cy], "Garden club");
  const [invited] = await messageNotifications(bo);
  assert.equal(invited.title, "Garden club");
  assert.deepEqual(invited.data, { conversationId: group.id, messageId: null, count: 0 });
  assert.equal((await messageNotifications(ann)).length, 0, "the creator is not notified");

  const m1 = await send(ann, group.id, "Seeds are in");
  const m2 = await send(cy, group.id, "Great, I'll come by");
  assert.equal((await messageNotifications(bo))[0].data.count, 0, "the sends wrote nothing yet");
  await digestNow();
  const [forBo] = await messageNotifications(bo);
  assert.equal(forBo.id, invited.id, "still the one notification");
  assert.deepEqual(forBo.data, { conversationId: group.id, messageId: m2.id, count: 2 });
  assert.match(forBo.body, /Great, I'll come by/, "the latest preview");
  const [forAnn] = await messageNotifications(ann);
  assert.deepEqual(forAnn.data, { conversationId: group.id, messageId: m2.id, count: 1 });
  const [forCy] = await messageNotifications(cy);
  assert.deepEqual(
    forCy.data,
    { conversationId: group.id, messageId: m1.id, count: 1 },
    "Cy's own message did not count for Cy",
  );
  assert.equal((await inbox(bo)).unreadCount, 1);
});

test("[notifications] reading a conversation up to its latest message marks its MESSAGE notification read; reading less does not", async () => {
  const ann = await signInAs(t, "MEMBER");
  const bo = await signInAs(t, "MEMBER");
  const direct = await conversation(ann, [bo]);
  const m1 = await send(ann, direct.id, "one");
  const m2 = await send(ann, direct.id, "two");
  await digestNow();
  await expectJson(await put(`/api/messages/${m1.id}/read`, bo), 200);
  assert.equal((await messageNotifications(bo))[0].readAt, null, "read up to m1 only: unread");
  await expectJson(await put(`/api/messages/${m2.id}/read`, bo), 200);
  const [read] = await messageNotifications(bo);
  assert.ok(read.readAt, "read up to the latest: read");
  assert.equal((await inbox(bo)).unreadCount, 0);

  const m3 = await send(ann, direct.id, "three");
  await digestNow();
  const fresh = await messageNotifications(bo);
  assert.equal(fresh.length, 2, "a message after reading starts a new notification");
  assert.deepEqual(fresh[0].data, { conversationId: direct.id, messageId: m3.id, count: 1 });
});

test("[notifications] concurrent sends and digests lose no count: one unread notification holds every message of the others", async () => {
  const ann = await signInAs(t, "MEMBER");
  const bo = await signInAs(t, "MEMBER");
  const cy = await signInAs(t, "MEMBER");
  const group = await conversation(ann, [bo, cy], "Race");
  const senders = [ann, bo, ann, bo, ann, bo];
  // A digest runs in the middle of the race too: no message is told twice or left out.
  await Promise.all([
    ...Array.from({ length: 30 }, (_, i) => send(senders[i % senders.length], group.id, `m${i}`)),
    (async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await digestNow();
    })(),
  ]);
  await digestNow();
  const [forCy] = await messageNotifications(cy);
  assert.equal(forCy.data.count, 30, "Cy counts all 30");
  assert.equal((await messageNotifications(ann))[0].data.count, 15, "Ann counts Bo's 15");
  assert.equal((await messageNotifications(bo))[0].data.count, 15, "Bo counts Ann's 15");
  const [row] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.notifications
    where collapse_key = ${"conversation:" + group.id} and read_at is null`;
  assert.equal(row.n, 3, "exactly one unread notification per participant");
});

test("[notifications] a role change gives the user a SYSTEM notification", async () => {
  const member = await signInAs(t, "SUBSCRIBER");
  await expectJson(
    await put(`/api/admin/users/${member.user.id}/role`, admin, {
      role: "MEMBER",
      reason: "active contributor",
    }),
    200,
  );
  const [note] = (await inbox(member, "?type=SYSTEM")).items;
  assert.equal(note.title, "Your role changed");
  assert.deepEqual(note.data, {
    kind: "role.changed",
    previousRole: "SUBSCRIBER",
    newRole: "MEMBER",
  });
  assert.ok(!JSON.stringify(note).includes("active contributor"), "the admin's reason stays out");
});

// --- bulk ------------------------------------------------------------------------------------

test("[notifications] POST /api/notifications/bulk: 202 at once, progress, one notification per recipient, suspended users left out, preferences obeyed", async () => {
  const tag = crypto.randomUUID().slice(0, 8);
  const users = await Promise.all(
    Array.from(
      { length: 6 },
      (_, i) => createUser(t.deps, "MEMBER", `bulk-${tag}-${i}@test.example`),
    ),
  );
  await t.deps.sql`update app.users set status = 'suspended' where id = ${users[5].id}`;
  // One recipient turned this type's in-app channel off: the row is kept out of their inbox.
  await t.deps.sql`
    insert into app.notification_preferences (user_id, types)
    values (${users[4].id}, '{"OPPORTUNITY": {"inApp": false}}')`;
  const body = {
    audience: { userIds: users.map((u) => u.id) },
    notification: {
      type: "OPPORTUNITY",
      title: `Call for papers ${tag}`,
      body: "Submit by Friday",
    },
  };
  const accepted = await expectJson(await post("/api/notifications/bulk", admin, body), 202);
  assert.equal(accepted.status, "queued");
  assert.equal(accepted.recipients, 5, "the suspended user is not a recipient");
  const queued = await expectJson(await get(`/api/notifications/bulk/${accepted.id}`, admin), 200);
  assert.deepEqual(
    [queued.status, queued.recipients, queued.created],
    ["queued", 5, 0],
    "nothing is written before the drain",
  );

  await runJobs();
  const done = await expectJson(await get(`/api/notifications/bulk/${accepted.id}`, admin), 200);
  assert.equal(done.status, "done");
  assert.equal(done.created, 4, "four inbox rows: one recipient has the type's in-app channel off");
  const rows = await t.deps.sql<{ user_id: string; inbox: boolean }[]>`
    select user_id, inbox from app.notifications where batch_id = ${accepted.id} order by user_id`;
  assert.equal(rows.length, 5, "one row per recipient");
  assert.ok(!rows.some((r) => r.user_id === users[5].id), "none for the suspended user");
  assert.equal(rows.find((r) => r.user_id === users[4].id)?.inbox, false);
  const events = await t.deps.sql`
    select count(*)::int as n from app.events
    where event = 'notification.created' and payload ->> 'title' = ${`Call for papers ${tag}`}`;
  assert.equal(events[0].n, 4, "each inbox recipient got the live event once");
});

test("[notifications] bulk by role and to everyone; the drain crashing and resuming still writes each recipient once", async () => {
  const [before] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.users where status = 'active' and role = 'CONFIDENTIAL'`;
  const byRole = await expectJson(
    await post("/api/notifications/bulk", admin, {
      audience: { roles: ["CONFIDENTIAL"] },
      notification: { type: "SYSTEM", title: "Confidential briefing", body: "" },
      channels: ["inApp"],
    }),
    202,
  );
  assert.equal(byRole.recipients, before.n);

  const everyone = await expectJson(
    await post("/api/notifications/bulk", admin, {
      audience: { all: true },
      notification: { type: "SYSTEM", title: "Everyone", body: "", priority: "high" },
      channels: ["inApp"],
    }),
    202,
  );
  // A crash after the batch's inbox was written and before its job was marked done: the job
  // runs again (here, its SQL twice), and nothing is written twice.
  await t.deps.sql`select app_private.write_notification_batch(${everyone.id}::uuid, 7)`;
  await t.deps.sql`select app_private.write_notification_batch(${everyone.id}::uuid, 7)`;
  const drained = await runJobs();
  const [counts] = await t.deps.sql<{ rows: number; users: number; events: number }[]>`
    select count(*)::int as rows, count(distinct user_id)::int as users,
           (select count(*)::int from app.events e
             where e.event = 'notification.created' and e.payload ->> 'id' in (
               select id::text from app.notifications where batch_id = ${everyone.id})) as events
    from app.notifications where batch_id = ${everyone.id}`;
  assert.equal(counts.rows, everyone.recipients);
  assert.equal(counts.users, everyone.recipients, "each recipient exactly once");
  assert.equal(
    counts.events,
    everyone.recipients,
    "each live event once, however often chunks ran",
  );
  const progress = await expectJson(
    await get(`/api/notifications/bulk/${everyone.id}`, admin),
    200,
  );
  const failed = await t.deps.sql`
    select kind, state, attempts, last_error from app_private.jobs
    where payload ->> 'batchId' = ${everyone.id} and last_error is not null`;
  assert.equal(progress.status, "done", JSON.stringify({ drained, failed }));
});

test("[notifications] bulk: the same Idempotency-Key gives the same batch (concurrently too); another body with it is 409", async () => {
  const user = await createUser(t.deps, "MEMBER");
  const key = `bulk-${crypto.randomUUID()}`;
  const body = {
    audience: { userIds: [user.id] },
    notification: { type: "SYSTEM", title: "Once", body: "" },
  };
  const answers = await Promise.all(
    Array.from(
      { length: 4 },
      () => post("/api/notifications/bulk", admin, body, { "idempotency-key": key }),
    ),
  );
  const batches = await Promise.all(answers.map((a) => expectJson(a, 202)));
  assert.equal(new Set(batches.map((b) => b.id)).size, 1, "one batch");
  const [rows] = await t.deps.sql`
    select count(*)::int as n from app.notification_batches where idempotency_key = ${key}`;
  assert.equal(rows.n, 1);
  await expectError(
    await post("/api/notifications/bulk", admin, {
      ...body,
      notification: { ...body.notification, title: "Twice" },
    }, { "idempotency-key": key }),
    409,
    "conflict",
  );
  await runJobs();
  assert.equal(await countRows(user.id), 1, "one notification");
});

test("[notifications] bulk: below ADMIN is 403; bad audiences and bodies are 400; an unknown batch is 404", async () => {
  const member = await signInAs(t, "MEMBER");
  const body = { audience: { all: true }, notification: { type: "SYSTEM", title: "x", body: "" } };
  await expectError(await post("/api/notifications/bulk", member, body), 403, "forbidden");
  await expectError(await t.request("POST", "/api/notifications/bulk", { body }), 401);
  const [before] = await t.deps.sql`select count(*)::int as n from app.notification_batches`;
  for (
    const bad of [
      { ...body, audience: {} },
      { ...body, audience: { all: false } },
      { ...body, audience: { roles: ["OWNER"] } },
      { ...body, audience: { userIds: ["nope"] } },
      { ...body, channels: ["sms"] },
      { ...body, channels: [] },
      { ...body, notification: { type: "SYSTEM", title: "", body: "" } },
    ]
  ) {
    await expectError(await post("/api/notifications/bulk", admin, bad), 400, "invalid_request");
  }
  const [after] = await t.deps.sql`select count(*)::int as n from app.notification_batches`;
  assert.equal(after.n, before.n, "nothing written");
  await expectError(await get(`/api/notifications/bulk/${crypto.randomUUID()}`, admin), 404);
  await expectError(await get(`/api/notifications/bulk/${crypto.randomUUID()}`, member), 403);
});

// --- analytics -------------------------------------------------------------------------------

test("[notifications] GET /api/notifications/analytics counts from the rollups (whole buckets, what happened seconds ago included); the admin analytics section has the same figures", async () => {
  // Other tests of this file write notifications with past times (below the fold's mark, so
  // not counted until a recount, as a backfill): a recount first, then rows of this test that
  // are counted from the live tail.
  await t.deps.sql`select app_private.recount_analytics_facts()`;
  const from = new Date(Date.now() - 1000).toISOString();
  const me = await signInAs(t, "MEMBER");
  const a = await notify(me, { type: "WALLET", title: "a" });
  const b = await notify(me, { type: "WALLET", title: "b" });
  await notify(me, { type: "ENTITY", title: "c" });
  // Read 10 s and 30 s after creation: a median of 20 s.
  await t.deps
    .sql`update app.notifications set read_at = created_at + interval '10 seconds' where id = ${a.id}`;
  await t.deps
    .sql`update app.notifications set read_at = created_at + interval '30 seconds' where id = ${b.id}`;
  // Delivery outcomes: two pushes sent, one pruned, one e-mail sent.
  await t.deps.sql`
    insert into app_private.notification_deliveries (notification_id, channel, status, finished_at)
    values (${a.id}, 'push', 'sent', now()), (${b.id}, 'push', 'sent', now()),
           (${b.id}, 'push', 'pruned', now()), (${a.id}, 'email', 'sent', now())`;
  const to = new Date(Date.now() + 60_000).toISOString();
  const q = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&interval=hour`;
  const figures = await expectJson(await get(`/api/notifications/analytics?${q}`, admin), 200);
  // Other tests of this file may write in the same window: compare against the database, over
  // the range's whole hours (the figures are whole buckets).
  const [truth] = await t.deps.sql<{ created: number; read: number }[]>`
    select count(*)::int as created, count(read_at)::int as read from app.notifications
    where inbox and created_at >= date_trunc('hour', ${from}::timestamptz)
      and created_at < date_trunc('hour', ${to}::timestamptz) + interval '1 hour'`;
  assert.equal(figures.totals.created, truth.created);
  assert.equal(figures.totals.read, truth.read);
  assert.ok(figures.totals.created >= 3 && figures.totals.read >= 2);
  assert.ok(figures.totals.pushSent >= 2 && figures.totals.pushFailed >= 1);
  assert.equal(figures.totals.pushDelivered, figures.totals.pushSent);
  assert.ok(figures.totals.emailSent >= 1);
  assert.ok(figures.readRate > 0 && figures.readRate <= 1);
  assert.ok(
    Math.abs(figures.readRate - truth.read / truth.created) < 0.0001,
    "readRate = read / created",
  );
  const wallet = figures.byType.find((x: { type: string }) => x.type === "WALLET");
  assert.ok(wallet.created >= 2 && wallet.read >= 2 && wallet.pushSent >= 2);
  assert.deepEqual(figures.byChannel.map((c: { channel: string }) => c.channel), [
    "inApp",
    "push",
    "email",
  ]);
  const sum = (key: string) =>
    figures.series.reduce((n: number, p: Record<string, number>) => n + p[key], 0);
  assert.equal(sum("created"), figures.totals.created, "the series adds up to the totals");
  assert.equal(sum("pushSent"), figures.totals.pushSent);

  const walletOnly = await expectJson(
    await get(`/api/notifications/analytics?${q}&type=WALLET`, admin),
    200,
  );
  assert.deepEqual(walletOnly.byType.map((x: { type: string }) => x.type), ["WALLET"]);
  const [median] = await t.deps.sql<{ m: number }[]>`
    select percentile_cont(0.5) within group (order by extract(epoch from read_at - created_at))::float8 as m
    from app.notifications where inbox and type = 'WALLET' and read_at is not null
      and created_at >= date_trunc('hour', ${from}::timestamptz)
      and created_at < date_trunc('hour', ${to}::timestamptz) + interval '1 hour'`;
  // From a histogram of seconds to read: within 1 s + 9.1 % (2^(1/8) - 1) of the exact median.
  assert.ok(
    Math.abs(walletOnly.medianSecondsToRead - median.m) <= 1 + (2 ** (1 / 8) - 1) * median.m,
    `median ${walletOnly.medianSecondsToRead} within its bound of ${median.m}`,
  );

  const adminSection = await expectJson(
    await get(
      `/api/admin/analytics?from=${encodeURIComponent(from)}&to=${
        encodeURIComponent(to)
      }&interval=day`,
      admin,
    ),
    200,
  );
  const sameRange = await expectJson(
    await get(
      `/api/notifications/analytics?from=${encodeURIComponent(from)}&to=${
        encodeURIComponent(to)
      }&interval=day`,
      admin,
    ),
    200,
  );
  assert.deepEqual(
    adminSection.notifications,
    sameRange,
    "the admin section uses the same figures",
  );

  await expectError(await get("/api/notifications/analytics", me), 403, "forbidden");
  await expectError(await t.request("GET", "/api/notifications/analytics"), 401);
  await expectError(await get("/api/notifications/analytics?interval=year", admin), 400);
  await expectError(
    await get(
      "/api/notifications/analytics?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z",
      admin,
    ),
    400,
  );
  await expectError(
    await get("/api/notifications/analytics?from=2020-01-01T00:00:00Z&interval=hour", admin),
    400,
    "invalid_request",
  );
});

test("[notifications] every route is closed to anonymous callers (401)", async () => {
  const id = crypto.randomUUID();
  for (
    const [method, path] of [
      ["GET", "/api/notifications"],
      ["POST", "/api/notifications"],
      ["PUT", "/api/notifications/read-all"],
      ["PUT", `/api/notifications/${id}/read`],
      ["DELETE", `/api/notifications/${id}`],
      ["GET", "/api/notifications/preferences"],
      ["PUT", "/api/notifications/preferences"],
      ["POST", "/api/notifications/fcm/register"],
      ["DELETE", "/api/notifications/fcm/register"],
      ["POST", "/api/notifications/bulk"],
      ["GET", `/api/notifications/bulk/${id}`],
      ["GET", "/api/notifications/analytics"],
    ]
  ) {
    await expectError(await t.request(method, path), 401, "unauthenticated");
  }
});

test("[notifications] with features.notifications off the routes answer 403", async () => {
  const me = await signInAs(t, "MEMBER");
  await expectJson(
    await put("/api/admin/config", admin, {
      config: { features: { notifications: false } },
      reason: "test: notifications off",
    }),
    200,
  );
  try {
    await expectError(await get("/api/notifications", me), 403, "forbidden");
    await expectError(await post("/api/notifications", me, { type: "SYSTEM", title: "x" }), 403);
  } finally {
    await expectJson(
      await put("/api/admin/config", admin, {
        config: { features: { notifications: true } },
        reason: "test: notifications on",
      }),
      200,
    );
  }
  assert.equal((await get("/api/notifications", me)).status, 200, "and they come back");
});
