/**
 * Reactions (PUT/DELETE /api/messages/:id/reactions/:emoji) and threads (threadId on a send,
 * GET /api/messages/:id/thread), with the races the issue names: 50 people reacting with the same
 * emoji at once leave an exact count (in the database and in the last live event), and a
 * thread's reply count and last reply time stay exact while replies, edits and deletions race.
 */
import assert from "node:assert/strict";
import {
  expectError,
  expectJson,
  type SignedIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";

const t = testApp();
const ann = await signInAs(t, "MEMBER");
const ben = await signInAs(t, "SUBSCRIBER");
const stranger = await signInAs(t, "MEMBER");
const admin = await signInAs(t, "ADMIN");

async function group(creator: SignedIn, others: SignedIn[], title = "Reactions") {
  return await expectJson(
    await t.request("POST", "/api/conversations", {
      token: creator.accessToken,
      body: { type: "group", participantIds: others.map((o) => o.user.id), title },
    }),
    201,
  );
}

async function send(who: SignedIn, conversationId: string, content: string, threadId?: string) {
  return await expectJson(
    await t.request("POST", `/api/conversations/${conversationId}/messages`, {
      token: who.accessToken,
      body: threadId ? { content, threadId } : { content },
    }),
    201,
  );
}

function react(who: SignedIn, messageId: string, emoji: string, present = true) {
  return t.request(
    present ? "PUT" : "DELETE",
    `/api/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`,
    { token: who.accessToken },
  );
}

async function lastReactionsEvent(conversationId: string, messageId: string) {
  const [row] = await t.deps.sql<{ payload: { messageId: string; reactions: unknown[] } }[]>`
    select payload from app.events
    where topic = ${"conversation:" + conversationId} and event = 'message.reactions'
      and payload ->> 'messageId' = ${messageId}
    order by xid desc, id desc limit 1`;
  return row?.payload;
}

async function readMessage(who: SignedIn, conversationId: string, messageId: string) {
  const page = await expectJson(
    await t.request("GET", `/api/conversations/${conversationId}/messages?limit=200`, {
      token: who.accessToken,
    }),
    200,
  );
  return page.items.find((m: { id: string }) => m.id === messageId);
}

// --- reactions --------------------------------------------------------------------------------

test("[messaging] reactions: add, idempotent, `me` per caller, remove one never added, live counts without `me`", async () => {
  const conversation = await group(ann, [ben]);
  const message = await send(ann, conversation.id, "react to me");
  assert.deepEqual(message.reactions, []);
  assert.equal(message.threadId, null);
  assert.equal(message.thread, null);

  const first = await expectJson(await react(ann, message.id, "👍"), 200);
  assert.deepEqual(first, {
    messageId: message.id,
    reactions: [{ emoji: "👍", count: 1, me: true }],
  });
  const again = await expectJson(await react(ann, message.id, "👍"), 200);
  assert.deepEqual(again.reactions, [{ emoji: "👍", count: 1, me: true }], "idempotent");
  const benSees = await expectJson(await react(ben, message.id, "🎉"), 200);
  assert.deepEqual(benSees.reactions, [
    { emoji: "👍", count: 1, me: false },
    { emoji: "🎉", count: 1, me: true },
  ]);
  const nothing = await expectJson(await react(ben, message.id, "❤️", false), 200);
  assert.deepEqual(nothing.reactions, benSees.reactions, "removing one never added is no error");
  assert.deepEqual(await lastReactionsEvent(conversation.id, message.id), {
    messageId: message.id,
    reactions: [{ emoji: "👍", count: 1 }, { emoji: "🎉", count: 1 }],
  });
  const listed = await readMessage(ann, conversation.id, message.id);
  assert.deepEqual(listed.reactions, [
    { emoji: "👍", count: 1, me: true },
    { emoji: "🎉", count: 1, me: false },
  ]);
  const removed = await expectJson(await react(ann, message.id, "👍", false), 200);
  assert.deepEqual(removed.reactions, [{ emoji: "🎉", count: 1, me: false }]);
  // Skin tones, flags, keycaps and family sequences are one emoji each.
  for (const emoji of ["👍🏽", "🇩🇪", "1️⃣", "👨‍👩‍👧"]) {
    await expectJson(await react(ann, message.id, emoji), 200);
  }
});

test("[messaging] reactions: one emoji only (400), 20 distinct at most (422), participants only (404), never on a tombstone (422)", async () => {
  const conversation = await group(ann, [ben]);
  const message = await send(ann, conversation.id, "limits");
  for (const bad of ["a", "👍👍", "👍 ", "🇩", ":)", "x".repeat(70)]) {
    await expectError(await react(ann, message.id, bad), 400, "invalid_request");
  }
  const emoji = [..."😀😁😂🤣😃😄😅😆😉😊😋😎😍😘🥰😗😙😚🙂🤗"];
  assert.equal(emoji.length, 20);
  for (const e of emoji) await expectJson(await react(ann, message.id, e), 200);
  await expectError(await react(ben, message.id, "🤔"), 422, "unprocessable");
  const stillOk = await expectJson(await react(ben, message.id, "😀"), 200);
  assert.equal(stillOk.reactions.length, 20);
  assert.deepEqual(stillOk.reactions[0], { emoji: "😀", count: 2, me: true });

  await expectError(await react(stranger, message.id, "👍"), 404, "not_found");
  await expectError(await react(admin, message.id, "👍"), 404, "not_found");
  await expectError(await react(stranger, message.id, "👍", false), 404, "not_found");
  await expectError(await react(ann, crypto.randomUUID(), "👍"), 404, "not_found");

  await expectJson(
    await t.request("DELETE", `/api/messages/${message.id}`, { token: ann.accessToken }),
    200,
  );
  await expectError(await react(ben, message.id, "👍"), 422, "unprocessable");
  const gone = await expectJson(await react(ben, message.id, "😀", false), 200);
  assert.deepEqual(gone.reactions, []);
  const tombstone = await readMessage(ann, conversation.id, message.id);
  assert.deepEqual(tombstone.reactions, [], "a tombstone shows no reactions");
});

test("[messaging] reactions race: 50 people adding the same emoji at once leave exactly 50, and the last live event says 50", async () => {
  const people = await Promise.all(Array.from({ length: 50 }, () => signInAs(t, "SUBSCRIBER")));
  const conversation = await group(ann, people, "Hot message");
  const message = await send(ann, conversation.id, "everyone react now");
  const answers = await Promise.all(people.map((p) => react(p, message.id, "🔥")));
  for (const answer of answers) await expectJson(answer, 200);
  const listed = await readMessage(ann, conversation.id, message.id);
  assert.deepEqual(listed.reactions, [{ emoji: "🔥", count: 50, me: false }]);
  assert.deepEqual((await lastReactionsEvent(conversation.id, message.id))?.reactions, [
    { emoji: "🔥", count: 50 },
  ]);
  // Half take theirs back while the other half add a second emoji and the first half's
  // repeated adds of the first one race them: still exact.
  const half = people.slice(0, 25);
  const rest = people.slice(25);
  const mixed = await Promise.all([
    ...half.map((p) => react(p, message.id, "🔥", false)),
    ...rest.map((p) => react(p, message.id, "🔥")),
    ...rest.map((p) => react(p, message.id, "💯")),
  ]);
  for (const answer of mixed) await expectJson(answer, 200);
  const after = await readMessage(ann, conversation.id, message.id);
  assert.deepEqual(after.reactions, [
    { emoji: "🔥", count: 25, me: false },
    { emoji: "💯", count: 25, me: false },
  ]);
  assert.deepEqual((await lastReactionsEvent(conversation.id, message.id))?.reactions, [
    { emoji: "🔥", count: 25 },
    { emoji: "💯", count: 25 },
  ]);
});

test("[messaging] reactions race: 21 people adding 21 different emoji at once leave exactly 20", async () => {
  const people = await Promise.all(Array.from({ length: 21 }, () => signInAs(t, "SUBSCRIBER")));
  const conversation = await group(ann, people, "Limit race");
  const message = await send(ann, conversation.id, "twenty at most");
  const emoji = [..."🍏🍎🍐🍊🍋🍌🍉🍇🍓🫐🍈🍒🍑🥭🍍🥥🥝🍅🍆🥑🥦"];
  assert.equal(emoji.length, 21);
  const answers = await Promise.all(people.map((p, i) => react(p, message.id, emoji[i])));
  const statuses = answers.map((a) => a.status).sort();
  await Promise.all(answers.map((a) => a.body?.cancel()));
  assert.deepEqual(statuses, [...Array(20).fill(200), 422]);
  const listed = await readMessage(ann, conversation.id, message.id);
  assert.equal(listed.reactions.length, 20);
});

// --- threads ----------------------------------------------------------------------------------

test("[messaging] threads: replies carry threadId, stay out of the conversation's list, are listed by /thread oldest first, page to the end; bad roots 422", async () => {
  const conversation = await group(ann, [ben], "Threads");
  const other = await group(ann, [ben], "Elsewhere");
  const root = await send(ann, conversation.id, "a root");
  const replies = [];
  for (let i = 0; i < 5; i++) {
    replies.push(await send(i % 2 ? ann : ben, conversation.id, `reply ${i}`, root.id));
  }
  assert.equal(replies[0].threadId, root.id);
  const after = await send(ben, conversation.id, "outside the thread");

  const page = await expectJson(
    await t.request("GET", `/api/conversations/${conversation.id}/messages`, {
      token: ann.accessToken,
    }),
    200,
  );
  assert.deepEqual(page.items.map((m: { id: string }) => m.id), [after.id, root.id]);
  const listedRoot = page.items[1];
  assert.equal(listedRoot.thread.replyCount, 5);
  assert.equal(listedRoot.thread.lastReplyAt, replies[4].createdAt);

  const seen: string[] = [];
  let cursor: string | null = null;
  let rootSeen = null;
  do {
    const query: string = cursor ? `?limit=2&cursor=${cursor}` : "?limit=2";
    const thread: { root: { id: string }; items: { id: string }[]; nextCursor: string | null } =
      await expectJson(
        await t.request("GET", `/api/messages/${root.id}/thread${query}`, {
          token: ben.accessToken,
        }),
        200,
      );
    rootSeen = thread.root;
    seen.push(...thread.items.map((m) => m.id));
    cursor = thread.nextCursor;
  } while (cursor);
  assert.equal(rootSeen.id, root.id);
  assert.deepEqual(seen, replies.map((r) => r.id), "oldest first, every reply once");

  const [created] = await t.deps.sql<{ payload: { threadId: string } }[]>`
    select payload from app.events where event = 'message.created' and payload ->> 'id' = ${
    replies[0].id
  }`;
  assert.equal(created.payload.threadId, root.id, "message.created carries threadId");

  for (
    const threadId of [replies[0].id, (await send(ann, other.id, "x")).id, crypto.randomUUID()]
  ) {
    await expectError(
      await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
        token: ann.accessToken,
        body: { content: "nope", threadId },
      }),
      422,
      "unprocessable",
    );
  }
  await expectError(
    await t.request("GET", `/api/messages/${replies[0].id}/thread`, { token: ann.accessToken }),
    422,
    "unprocessable",
  );
  await expectError(
    await t.request("GET", `/api/messages/${root.id}/thread`, { token: stranger.accessToken }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("GET", `/api/messages/${root.id}/thread`, { token: admin.accessToken }),
    404,
    "not_found",
  );

  // A tombstone root keeps its place and its thread counts; a deleted reply keeps its place.
  await expectJson(
    await t.request("DELETE", `/api/messages/${root.id}`, { token: ann.accessToken }),
    200,
  );
  await expectJson(
    await t.request("DELETE", `/api/messages/${replies[1].id}`, { token: ann.accessToken }),
    200,
  );
  const tomb = await readMessage(ann, conversation.id, root.id);
  assert.equal(tomb.deletedAt !== null, true);
  assert.equal(tomb.thread.replyCount, 4);
  const thread = await expectJson(
    await t.request("GET", `/api/messages/${root.id}/thread`, { token: ann.accessToken }),
    200,
  );
  assert.equal(thread.items.length, 5);
  assert.equal(thread.items[1].deletedAt !== null, true);
  assert.equal(thread.items[1].threadId, root.id);
});

test("[messaging] threads race: the reply count and last reply time stay exact while replies, edits and deletions race", async () => {
  const people = await Promise.all(Array.from({ length: 10 }, () => signInAs(t, "SUBSCRIBER")));
  const conversation = await group(ann, people, "Racing thread");
  const root = await send(ann, conversation.id, "the root");
  const early = [];
  for (let i = 0; i < 20; i++) {
    early.push(await send(people[i % 10], conversation.id, `early ${i}`, root.id));
  }
  const deleted = early.filter((_, i) => i % 2 === 0);
  const edited = early.filter((_, i) => i % 2 === 1);
  const answers = await Promise.all([
    ...Array.from(
      { length: 30 },
      (_, i) =>
        t.request("POST", `/api/conversations/${conversation.id}/messages`, {
          token: people[i % 10].accessToken,
          body: { content: `late ${i}`, threadId: root.id },
        }),
    ),
    ...deleted.map((m) =>
      t.request("DELETE", `/api/messages/${m.id}`, {
        token: people.find((p) => p.user.id === m.senderId)!.accessToken,
      })
    ),
    ...edited.map((m) =>
      t.request("PUT", `/api/messages/${m.id}`, {
        token: people.find((p) => p.user.id === m.senderId)!.accessToken,
        body: { content: `${m.content}, edited` },
      })
    ),
  ]);
  for (const answer of answers) await expectJson(answer, [200, 201]);

  const [truth] = await t.deps.sql<{ live: number; newest: string }[]>`
    select count(*)::int as live,
           to_char((array_agg(created_at order by seq desc))[1] at time zone 'UTC',
                   'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as newest
    from app.messages where thread_id = ${root.id} and deleted_at is null`;
  assert.equal(truth.live, 40);
  const listed = await readMessage(ann, conversation.id, root.id);
  assert.deepEqual(listed.thread, { replyCount: 40, lastReplyAt: truth.newest });

  // Delete the newest replies at once, racing: lastReplyAt falls back to the newest live one.
  const thread = await expectJson(
    await t.request("GET", `/api/messages/${root.id}/thread?limit=200`, { token: ann.accessToken }),
    200,
  );
  const live = thread.items.filter((m: { deletedAt: string | null }) => m.deletedAt === null);
  const newestFive = live.slice(-5);
  const removals = await Promise.all(
    newestFive.map((m: { id: string; senderId: string }) =>
      t.request("DELETE", `/api/messages/${m.id}`, {
        token: people.find((p) => p.user.id === m.senderId)!.accessToken,
      })
    ),
  );
  for (const answer of removals) await expectJson(answer, 200);
  const final = await readMessage(ann, conversation.id, root.id);
  assert.deepEqual(final.thread, {
    replyCount: 35,
    lastReplyAt: live[live.length - 6].createdAt,
  });
});
