import assert from "node:assert/strict";
import {
  createUser,
  expectError,
  expectJson,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";

const t = testApp();
const alice = await signInAs(t, "MEMBER");
const bob = await signInAs(t, "SUBSCRIBER");
const carol = await signInAs(t, "MEMBER");
const stranger = await signInAs(t, "MEMBER");
const admin = await signInAs(t, "ADMIN");
const visitorUser = await createUser(t.deps, "VISITOR");
const visitor = await signIn(t, visitorUser.email);

async function direct(a: SignedIn, b: SignedIn) {
  const response = await t.request("POST", "/api/conversations", {
    token: a.accessToken,
    body: { type: "direct", participantIds: [b.user.id] },
  });
  return await expectJson(response, [200, 201]);
}

async function group(creator: SignedIn, others: SignedIn[], title = "Team") {
  const response = await t.request("POST", "/api/conversations", {
    token: creator.accessToken,
    body: { type: "group", participantIds: others.map((o) => o.user.id), title },
  });
  return await expectJson(response, 201);
}

async function send(
  who: SignedIn,
  conversationId: string,
  content: string,
  extra: Record<string, unknown> = {},
) {
  const response = await t.request("POST", `/api/conversations/${conversationId}/messages`, {
    token: who.accessToken,
    body: { content, ...extra },
  });
  return await expectJson(response, 201);
}

// --- conversations ----------------------------------------------------------------------------

test("[messaging] POST /api/conversations creates a direct conversation once per pair, from either side", async () => {
  const a = await signInAs(t, "MEMBER");
  const b = await signInAs(t, "MEMBER");
  const first = await t.request("POST", "/api/conversations", {
    token: a.accessToken,
    body: { type: "direct", participantIds: [b.user.id] },
  });
  const created = await expectJson(first, 201);
  assert.equal(created.type, "direct");
  assert.equal(created.title, null);
  assert.deepEqual(
    created.participants.map((p: { userId: string }) => p.userId).sort(),
    [a.user.id, b.user.id].sort(),
  );
  assert.ok(
    created.participants.every((p: Record<string, unknown>) => !("email" in p)),
    "no emails leak",
  );
  const again = await t.request("POST", "/api/conversations", {
    token: b.accessToken,
    body: { type: "direct", participantIds: [a.user.id] },
  });
  assert.equal((await expectJson(again, 200)).id, created.id);
});

test("[messaging] concurrent direct creations of the same pair give one conversation", async () => {
  const a = await signInAs(t, "MEMBER");
  const b = await signInAs(t, "MEMBER");
  const responses = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      t.request("POST", "/api/conversations", {
        token: (i % 2 ? a : b).accessToken,
        body: { type: "direct", participantIds: [(i % 2 ? b : a).user.id] },
      })),
  );
  const ids = new Set(
    await Promise.all(responses.map(async (r) => (await expectJson(r, [200, 201])).id)),
  );
  assert.equal(ids.size, 1);
  assert.equal(responses.filter((r) => r.status === 201).length, 1);
});

test("[messaging] conversation creation is validated", async () => {
  const token = alice.accessToken;
  await expectError(
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "direct", participantIds: [bob.user.id, carol.user.id] },
    }),
    400,
  );
  await expectError(
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "direct", participantIds: [alice.user.id] },
    }),
    400,
  );
  await expectError(
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "group", participantIds: [bob.user.id] },
    }),
    400,
  );
  await expectError(
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "direct", participantIds: [crypto.randomUUID()] },
    }),
    422,
  );
  await expectError(
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "direct", participantIds: [visitorUser.id] },
    }),
    422,
  );
  await expectError(
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "channel", participantIds: [bob.user.id] },
    }),
    400,
  );
});

test("[messaging] VISITOR may not message (403) and anonymous is 401", async () => {
  await expectError(
    await t.request("GET", "/api/conversations", { token: visitor.accessToken }),
    403,
    "forbidden",
  );
  await expectError(
    await t.request("POST", "/api/conversations", {
      token: visitor.accessToken,
      body: { type: "direct", participantIds: [bob.user.id] },
    }),
    403,
  );
  await expectError(await t.request("GET", "/api/conversations"), 401);
});

test("[messaging] GET /api/conversations lists newest activity first with previews and unread counts", async () => {
  const me = await signInAs(t, "MEMBER");
  const x = await signInAs(t, "MEMBER");
  const y = await signInAs(t, "MEMBER");
  const dx = await direct(me, x);
  const gy = await group(me, [x, y], "Planning");
  await send(x, dx.id, "first to me");
  await send(y, gy.id, "hello group");
  await send(y, gy.id, "second in group");
  const list = await expectJson(
    await t.request("GET", "/api/conversations", { token: me.accessToken }),
    200,
  );
  assert.deepEqual(list.items.map((c: { id: string }) => c.id), [gy.id, dx.id]);
  assert.equal(list.items[0].lastMessage.content, "second in group");
  assert.equal(list.items[0].unreadCount, 2);
  assert.equal(list.items[1].unreadCount, 1);
  assert.equal(list.items[0].participants.length, 3);
  const mine = await send(me, dx.id, "my reply");
  const after = await expectJson(
    await t.request("GET", "/api/conversations", { token: me.accessToken }),
    200,
  );
  assert.equal(after.items[0].id, dx.id, "activity moves a conversation to the top");
  assert.equal(after.items[0].unreadCount, 1, "one's own messages are never unread");
  assert.equal(after.items[0].lastMessage.id, mine.id);
  const groups = await expectJson(
    await t.request("GET", "/api/conversations?type=group", { token: me.accessToken }),
    200,
  );
  assert.deepEqual(groups.items.map((c: { id: string }) => c.id), [gy.id]);
  const byTitle = await expectJson(
    await t.request("GET", "/api/conversations?search=plann", { token: me.accessToken }),
    200,
  );
  assert.deepEqual(byTitle.items.map((c: { id: string }) => c.id), [gy.id]);
  const [{ name }] = await t.deps.sql`select name from app.users where id = ${x.user.id}`;
  const byName = await expectJson(
    await t.request("GET", `/api/conversations?search=${encodeURIComponent(name)}`, {
      token: me.accessToken,
    }),
    200,
  );
  assert.deepEqual(new Set(byName.items.map((c: { id: string }) => c.id)), new Set([dx.id, gy.id]));
  const paged = await expectJson(
    await t.request("GET", "/api/conversations?limit=1", { token: me.accessToken }),
    200,
  );
  assert.equal(paged.items.length, 1);
  const next = await expectJson(
    await t.request("GET", `/api/conversations?limit=1&cursor=${paged.nextCursor}`, {
      token: me.accessToken,
    }),
    200,
  );
  assert.equal(next.items[0].id, gy.id);
  assert.equal(next.nextCursor, null);
});

// --- messages ---------------------------------------------------------------------------------

test("[messaging] messages page newest first, older by cursor, newer with after=", async () => {
  const conv = await direct(alice, carol);
  const sent: { id: string; seq: number }[] = [];
  for (let i = 0; i < 5; i++) sent.push(await send(i % 2 ? carol : alice, conv.id, `m${i}`));
  const first = await expectJson(
    await t.request("GET", `/api/conversations/${conv.id}/messages?limit=2`, {
      token: alice.accessToken,
    }),
    200,
  );
  assert.deepEqual(first.items.map((m: { content: string }) => m.content), ["m4", "m3"]);
  const second = await expectJson(
    await t.request(
      "GET",
      `/api/conversations/${conv.id}/messages?limit=2&cursor=${first.nextCursor}`,
      { token: alice.accessToken },
    ),
    200,
  );
  assert.deepEqual(second.items.map((m: { content: string }) => m.content), ["m2", "m1"]);
  const third = await expectJson(
    await t.request(
      "GET",
      `/api/conversations/${conv.id}/messages?limit=2&cursor=${second.nextCursor}`,
      { token: alice.accessToken },
    ),
    200,
  );
  assert.deepEqual(third.items.map((m: { content: string }) => m.content), ["m0"]);
  assert.equal(third.nextCursor, null);
  const after = await expectJson(
    await t.request(
      "GET",
      `/api/conversations/${conv.id}/messages?after=${sent[1].id}&limit=2`,
      { token: carol.accessToken },
    ),
    200,
  );
  assert.deepEqual(after.items.map((m: { content: string }) => m.content), ["m2", "m3"]);
  const rest = await expectJson(
    await t.request(
      "GET",
      `/api/conversations/${conv.id}/messages?limit=2&cursor=${after.nextCursor}`,
      { token: carol.accessToken },
    ),
    200,
  );
  assert.deepEqual(rest.items.map((m: { content: string }) => m.content), ["m4"]);
  assert.deepEqual(sent.map((m) => m.seq), [1, 2, 3, 4, 5].map((n) => n + sent[0].seq - 1));
});

test("[messaging] the message limit defaults to 50 and is capped at 200", async () => {
  const conv = await direct(alice, await signInAs(t, "MEMBER"));
  await t.deps.sql`
    insert into app.messages (conversation_id, sender_id, content)
    select ${conv.id}, ${alice.user.id}, 'bulk ' || n from generate_series(1, 60) n`;
  const page = await expectJson(
    await t.request("GET", `/api/conversations/${conv.id}/messages`, {
      token: alice.accessToken,
    }),
    200,
  );
  assert.equal(page.items.length, 50);
  await expectError(
    await t.request("GET", `/api/conversations/${conv.id}/messages?limit=201`, {
      token: alice.accessToken,
    }),
    400,
  );
});

test("[messaging] POST .../messages returns the message; content length is checked", async () => {
  const conv = await direct(alice, bob);
  const message = await send(alice, conv.id, "hello bob");
  assert.equal(message.conversationId, conv.id);
  assert.equal(message.senderId, alice.user.id);
  assert.equal(message.content, "hello bob");
  assert.deepEqual(message.attachments, []);
  assert.equal(message.editedAt, null);
  assert.equal(message.deletedAt, null);
  assert.ok(!Number.isNaN(Date.parse(message.createdAt)));
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token: alice.accessToken,
      body: { content: "" },
    }),
    400,
  );
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token: alice.accessToken,
      body: { content: "x".repeat(10_001) },
    }),
    400,
  );
  const long = await send(alice, conv.id, "x".repeat(10_000));
  assert.equal(long.content.length, 10_000);
});

test("[messaging] replies must point into the same conversation", async () => {
  const conv = await direct(alice, bob);
  const other = await direct(alice, carol);
  const original = await send(bob, conv.id, "question?");
  const reply = await send(alice, conv.id, "answer", { replyToId: original.id });
  assert.equal(reply.replyToId, original.id);
  const foreign = await send(carol, other.id, "elsewhere");
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token: alice.accessToken,
      body: { content: "x", replyToId: foreign.id },
    }),
    422,
  );
});

test("[messaging] a stranger gets 404 for the conversation, its messages, sends, reads and typing", async () => {
  const conv = await direct(alice, bob);
  const message = await send(alice, conv.id, "private");
  const before = await t.deps
    .sql`select count(*)::int as n from app.messages where conversation_id = ${conv.id}`;
  const token = stranger.accessToken;
  await expectError(
    await t.request("GET", `/api/conversations/${conv.id}/messages`, { token }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token,
      body: { content: "intrusion" },
    }),
    404,
  );
  await expectError(
    await t.request("PUT", `/api/messages/${message.id}`, { token, body: { content: "edited" } }),
    404,
  );
  await expectError(await t.request("DELETE", `/api/messages/${message.id}`, { token }), 404);
  await expectError(await t.request("PUT", `/api/messages/${message.id}/read`, { token }), 404);
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/typing`, {
      token,
      body: { isTyping: true },
    }),
    404,
  );
  await expectError(
    await t.request("GET", `/api/conversations/${conv.id}/messages?after=${message.id}`, { token }),
    404,
  );
  const list = await expectJson(await t.request("GET", "/api/conversations", { token }), 200);
  assert.ok(!list.items.some((c: { id: string }) => c.id === conv.id));
  const after = await t.deps
    .sql`select count(*)::int as n from app.messages where conversation_id = ${conv.id}`;
  assert.deepEqual(after, before);
  const [row] = await t.deps.sql`select content from app.messages where id = ${message.id}`;
  assert.equal(row.content, "private");
});

// --- edits and deletes ------------------------------------------------------------------------

test("[messaging] PUT /api/messages/:id edits by the author, sets editedAt and keeps the earlier version", async () => {
  const conv = await direct(alice, bob);
  const message = await send(alice, conv.id, "draft");
  const response = await t.request("PUT", `/api/messages/${message.id}`, {
    token: alice.accessToken,
    body: { content: "final" },
  });
  const edited = await expectJson(response, 200);
  assert.equal(edited.content, "final");
  assert.ok(edited.editedAt);
  const versions = await t.deps
    .sql`select content from app.message_versions where message_id = ${message.id}`;
  assert.deepEqual(versions.map((v) => v.content), ["draft"]);
});

test("[messaging] PUT /api/messages/:id refuses a non-author and a closed edit window", async () => {
  const conv = await direct(alice, bob);
  const message = await send(alice, conv.id, "mine");
  await expectError(
    await t.request("PUT", `/api/messages/${message.id}`, {
      token: bob.accessToken,
      body: { content: "bob's" },
    }),
    403,
    "forbidden",
  );
  // Past the window as configured now (another test may have changed it from the default 15).
  await t.deps.sql`
    update app.messages
    set created_at = now() - make_interval(mins => app.config_int('limits', 'messageEditWindowMinutes') + 1)
    where id = ${message.id}`;
  await expectError(
    await t.request("PUT", `/api/messages/${message.id}`, {
      token: alice.accessToken,
      body: { content: "late" },
    }),
    422,
    "unprocessable",
  );
  const [row] = await t.deps
    .sql`select content, edited_at from app.messages where id = ${message.id}`;
  assert.equal(row.content, "mine");
  assert.equal(row.edited_at, null);
});

test("[messaging] DELETE /api/messages/:id leaves a tombstone that cannot be edited", async () => {
  const conv = await direct(alice, bob);
  const message = await send(alice, conv.id, "oops");
  await expectError(
    await t.request("DELETE", `/api/messages/${message.id}`, { token: bob.accessToken }),
    403,
  );
  const response = await t.request("DELETE", `/api/messages/${message.id}`, {
    token: alice.accessToken,
  });
  const body = await expectJson(response, 200);
  assert.equal(body.id, message.id);
  assert.ok(body.deletedAt);
  const page = await expectJson(
    await t.request("GET", `/api/conversations/${conv.id}/messages`, {
      token: bob.accessToken,
    }),
    200,
  );
  const tombstone = page.items.find((m: { id: string }) => m.id === message.id);
  assert.equal(tombstone.content, "");
  assert.deepEqual(tombstone.attachments, []);
  assert.ok(tombstone.deletedAt);
  assert.equal(tombstone.seq, message.seq, "it keeps its place");
  await expectError(
    await t.request("PUT", `/api/messages/${message.id}`, {
      token: alice.accessToken,
      body: { content: "undo" },
    }),
    422,
  );
});

test("[messaging] the group's creator and an ADMIN may delete others' messages", async () => {
  const g = await group(alice, [bob, carol]);
  const byBob = await send(bob, g.id, "spam");
  const byCarol = await send(carol, g.id, "more spam");
  await expectError(
    await t.request("DELETE", `/api/messages/${byBob.id}`, { token: carol.accessToken }),
    403,
  );
  assert.equal(
    (await t.request("DELETE", `/api/messages/${byBob.id}`, { token: alice.accessToken })).status,
    200,
  );
  assert.equal(
    (await t.request("DELETE", `/api/messages/${byCarol.id}`, { token: admin.accessToken })).status,
    200,
  );
  await expectError(
    await t.request("GET", `/api/conversations/${g.id}/messages`, { token: admin.accessToken }),
    404,
    "not_found",
  );
});

// --- read marks -------------------------------------------------------------------------------

test("[messaging] PUT /api/messages/:id/read moves the watermark forward only and updates unread counts", async () => {
  const conv = await direct(alice, carol);
  const m1 = await send(carol, conv.id, "one");
  const m2 = await send(carol, conv.id, "two");
  const m3 = await send(carol, conv.id, "three");
  const read2 = await expectJson(
    await t.request("PUT", `/api/messages/${m2.id}/read`, { token: alice.accessToken }),
    200,
  );
  assert.deepEqual(read2, { conversationId: conv.id, lastReadMessageId: m2.id, unreadCount: 1 });
  const back = await expectJson(
    await t.request("PUT", `/api/messages/${m1.id}/read`, { token: alice.accessToken }),
    200,
  );
  assert.deepEqual(
    back,
    { conversationId: conv.id, lastReadMessageId: m2.id, unreadCount: 1 },
    "never backward",
  );
  const read3 = await expectJson(
    await t.request("PUT", `/api/messages/${m3.id}/read`, { token: alice.accessToken }),
    200,
  );
  assert.equal(read3.unreadCount, 0);
  const list = await expectJson(
    await t.request("GET", "/api/conversations", { token: alice.accessToken }),
    200,
  );
  assert.equal(list.items.find((c: { id: string }) => c.id === conv.id).unreadCount, 0);
});

// --- typing -----------------------------------------------------------------------------------

test("[messaging] POST .../typing answers 202 with an expiry and is throttled per user and conversation", async () => {
  const conv = await direct(alice, bob);
  const first = await t.request("POST", `/api/conversations/${conv.id}/typing`, {
    token: alice.accessToken,
    body: { isTyping: true },
  });
  const body = await expectJson(first, 202);
  assert.equal(body.sent, true);
  const expires = Date.parse(body.expiresAt) - Date.now();
  assert.ok(expires > 3_000 && expires <= 5_000, `expires in ${expires} ms`);
  const second = await expectJson(
    await t.request("POST", `/api/conversations/${conv.id}/typing`, {
      token: alice.accessToken,
      body: { isTyping: true },
    }),
    202,
  );
  assert.equal(second.sent, false, "throttled");
  const bobs = await expectJson(
    await t.request("POST", `/api/conversations/${conv.id}/typing`, {
      token: bob.accessToken,
      body: { isTyping: true },
    }),
    202,
  );
  assert.equal(bobs.sent, true, "the throttle is per user");
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app.events where topic = ${`conversation:${conv.id}`} and event = 'typing'`;
  assert.equal(n, 0, "typing is never stored in the event log");
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/typing`, {
      token: alice.accessToken,
      body: { isTyping: "yes" },
    }),
    400,
  );
});

// --- idempotency ------------------------------------------------------------------------------

test("[messaging] the same Idempotency-Key and body give back the first message; another body is 409", async () => {
  const conv = await direct(alice, await signInAs(t, "MEMBER"));
  const key = crypto.randomUUID();
  const post = (content: string) =>
    t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token: alice.accessToken,
      body: { content },
      headers: { "idempotency-key": key },
    });
  const first = await post("once");
  const firstBody = await expectJson(first, 201);
  const replay = await post("once");
  assert.deepEqual(await expectJson(replay, 201), firstBody);
  await expectError(await post("different"), 409, "conflict");
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app.messages where conversation_id = ${conv.id}`;
  assert.equal(n, 1);
  await expectError(
    await t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token: alice.accessToken,
      body: { content: "x" },
      headers: { "idempotency-key": "k".repeat(256) },
    }),
    400,
  );
});

test("[messaging] concurrent sends with one Idempotency-Key create one message", async () => {
  const conv = await direct(alice, await signInAs(t, "MEMBER"));
  const key = crypto.randomUUID();
  const responses = await Promise.all(
    Array.from({ length: 8 }, () =>
      t.request("POST", `/api/conversations/${conv.id}/messages`, {
        token: alice.accessToken,
        body: { content: "racy" },
        headers: { "idempotency-key": key },
      })),
  );
  const ids = new Set(await Promise.all(responses.map(async (r) => (await expectJson(r, 201)).id)));
  assert.equal(ids.size, 1);
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app.messages where conversation_id = ${conv.id}`;
  assert.equal(n, 1);
});

test("[messaging] concurrent senders in one conversation lose nothing and number messages without gaps", async () => {
  const conv = await group(alice, [bob, carol], "Race");
  const senders = [alice, bob, carol];
  const responses = await Promise.all(
    Array.from(
      { length: 60 },
      (_, i) =>
        t.request("POST", `/api/conversations/${conv.id}/messages`, {
          token: senders[i % 3].accessToken,
          body: { content: `race ${i}` },
        }),
    ),
  );
  assert.ok(responses.every((r) => r.status === 201));
  const rows = await t.deps.sql<{ seq: number; content: string }[]>`
    select seq::int, content from app.messages where conversation_id = ${conv.id} order by seq`;
  assert.equal(rows.length, 60);
  assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 60 }, (_, i) => i + 1));
  assert.equal(new Set(rows.map((r) => r.content)).size, 60);
});

// --- participants -----------------------------------------------------------------------------

test("[messaging] the group's creator adds and removes people; others may only leave", async () => {
  const dave = await signInAs(t, "SUBSCRIBER");
  const g = await group(alice, [bob], "Club");
  await expectError(
    await t.request("POST", `/api/conversations/${g.id}/participants`, {
      token: bob.accessToken,
      body: { userIds: [dave.user.id] },
    }),
    403,
  );
  const added = await expectJson(
    await t.request("POST", `/api/conversations/${g.id}/participants`, {
      token: alice.accessToken,
      body: { userIds: [dave.user.id, bob.user.id] },
    }),
    200,
  );
  assert.deepEqual(added.added, [dave.user.id]);
  assert.equal(
    (await t.request("GET", `/api/conversations/${g.id}/messages`, { token: dave.accessToken }))
      .status,
    200,
  );
  await expectError(
    await t.request("DELETE", `/api/conversations/${g.id}/participants/${dave.user.id}`, {
      token: bob.accessToken,
    }),
    403,
  );
  assert.equal(
    (await t.request("DELETE", `/api/conversations/${g.id}/participants/${dave.user.id}`, {
      token: alice.accessToken,
    })).status,
    200,
  );
  await expectError(
    await t.request("GET", `/api/conversations/${g.id}/messages`, { token: dave.accessToken }),
    404,
  );
  assert.equal(
    (await t.request("DELETE", `/api/conversations/${g.id}/participants/${bob.user.id}`, {
      token: bob.accessToken,
    })).status,
    200,
    "anyone may leave",
  );
  const d = await direct(alice, carol);
  await expectError(
    await t.request("DELETE", `/api/conversations/${d.id}/participants/${carol.user.id}`, {
      token: alice.accessToken,
    }),
    422,
  );
});
