/**
 * GET /api/messages/search: words, prefixes and substrings in any language, only what the caller
 * can read now (a stranger, someone who left, tombstones), best match first, keyset pages, and
 * highlights with every character but `<mark>` HTML-escaped.
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

async function group(creator: SignedIn, others: SignedIn[], title = "Search team") {
  const response = await t.request("POST", "/api/conversations", {
    token: creator.accessToken,
    body: { type: "group", participantIds: others.map((o) => o.user.id), title },
  });
  return await expectJson(response, 201);
}

async function send(who: SignedIn, conversationId: string, content: string) {
  const response = await t.request("POST", `/api/conversations/${conversationId}/messages`, {
    token: who.accessToken,
    body: { content },
  });
  return await expectJson(response, 201);
}

interface Result {
  message: {
    id: string;
    content: string;
    conversationId: string;
    deletedAt: string | null;
    threadId?: string | null;
  };
  conversation: { id: string; type: string; title: string | null };
  highlight: string;
}

function searchPath(q: string, extra: Record<string, string | number> = {}) {
  const params = new URLSearchParams({ q });
  for (const [k, v] of Object.entries(extra)) params.set(k, String(v));
  return `/api/messages/search?${params}`;
}

async function search(
  who: SignedIn,
  q: string,
  extra: Record<string, string | number> = {},
): Promise<{ items: Result[]; nextCursor: string | null }> {
  return await expectJson(
    await t.request("GET", searchPath(q, extra), { token: who.accessToken }),
    200,
  );
}

const contents = (page: { items: Result[] }) => page.items.map((i) => i.message.content);

/** Two people in a fresh group. */
async function pair() {
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "SUBSCRIBER");
  const conversation = await group(alice, [bob]);
  return { alice, bob, conversation };
}

test("[messaging] GET /api/messages/search finds words, prefixes and substrings, case-insensitively, whole words first", async () => {
  const { alice, bob, conversation } = await pair();
  await send(alice, conversation.id, "Inside: premeetingroom booked");
  await send(alice, conversation.id, "Prefix: MEETINGS all day");
  await send(bob, conversation.id, "Word: the meeting is at noon");
  await send(bob, conversation.id, "Nothing to see here");
  const page = await search(bob, "Meeting");
  assert.deepEqual(contents(page), [
    "Word: the meeting is at noon",
    "Prefix: MEETINGS all day",
    "Inside: premeetingroom booked",
  ]);
  assert.equal(page.nextCursor, null);
  const first = page.items[0];
  assert.equal(first.conversation.id, conversation.id);
  assert.equal(first.conversation.type, "group");
  assert.equal(first.conversation.title, "Search team");
  assert.equal(first.message.conversationId, conversation.id);
  assert.equal(first.highlight, "Word: the <mark>meeting</mark> is at noon");
  assert.equal(page.items[1].highlight, "Prefix: <mark>MEETING</mark>S all day");
  // A prefix and a substring of three characters.
  assert.deepEqual(contents(await search(alice, "noo")), ["Word: the meeting is at noon"]);
  assert.deepEqual(contents(await search(alice, "ETI")).length, 3);
  // Every word must occur; words under three characters are left out.
  assert.deepEqual(contents(await search(alice, "meeting at noon")), [
    "Word: the meeting is at noon",
  ]);
  // Same score: newest first.
  await send(alice, conversation.id, "Word: another meeting later");
  assert.deepEqual(contents(await search(alice, "meeting")).slice(0, 2), [
    "Word: another meeting later",
    "Word: the meeting is at noon",
  ]);
});

test("[messaging] GET /api/messages/search finds German with umlauts, Japanese and Chinese without spaces", async () => {
  const { alice, bob, conversation } = await pair();
  await send(alice, conversation.id, "Viele Grüße aus MÜNCHEN, die Größe passt");
  await send(alice, conversation.id, "東京タワーに行きました");
  await send(alice, conversation.id, "我们明天在北京开会");
  assert.deepEqual(contents(await search(bob, "münchen")), [
    "Viele Grüße aus MÜNCHEN, die Größe passt",
  ]);
  const umlaut = await search(bob, "GRÖßE");
  assert.equal(umlaut.items.length, 1);
  assert.equal(umlaut.items[0].highlight, "Viele Grüße aus MÜNCHEN, die <mark>Größe</mark> passt");
  assert.equal(contents(await search(bob, "üße")).length, 1);
  const japanese = await search(bob, "タワー");
  assert.deepEqual(contents(japanese), ["東京タワーに行きました"]);
  assert.equal(japanese.items[0].highlight, "東京<mark>タワー</mark>に行きました");
  const chinese = await search(bob, "北京开");
  assert.deepEqual(contents(chinese), ["我们明天在北京开会"]);
  assert.equal(chinese.items[0].highlight, "我们明天在<mark>北京开</mark>会");
  assert.deepEqual(contents(await search(bob, "大阪市")), []);
});

test("[messaging] GET /api/messages/search refuses a query without a word of 3 characters (400)", async () => {
  const { bob } = await pair();
  for (const q of ["ab", "北京", "  ", "", "ab cd é"]) {
    const response = await t.request("GET", searchPath(q), { token: bob.accessToken });
    const body = await expectError(response, 400, "invalid_request");
    const details = body.error.details as { path: string }[];
    assert.equal(details[0]?.path, "q", q);
  }
  const missing = await t.request("GET", "/api/messages/search", { token: bob.accessToken });
  await expectError(missing, 400, "invalid_request");
  const nine = "alpha bravo charlie delta echo foxtrot golf hotel india";
  await expectError(
    await t.request("GET", searchPath(nine), { token: bob.accessToken }),
    400,
    "invalid_request",
  );
  for (const cursor of ["nope", btoa('[1,"x","y"]'), btoa('["a","b","c"]')]) {
    await expectError(
      await t.request("GET", searchPath("meeting", { cursor }), { token: bob.accessToken }),
      400,
      "invalid_request",
    );
  }
});

test("[messaging] GET /api/messages/search escapes every character of the highlight but <mark>", async () => {
  const { alice, bob, conversation } = await pair();
  await send(alice, conversation.id, `<script>alert("x")</script> & the R&D budget's 'meeting'`);
  const page = await search(bob, "meeting");
  assert.equal(
    page.items[0].highlight,
    "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; the R&amp;D budget&#39;s " +
      "&#39;<mark>meeting</mark>&#39;",
  );
  // The message itself is the plain text.
  assert.ok(page.items[0].message.content.startsWith("<script>"));
  const script = await search(bob, "<script>");
  assert.equal(script.items.length, 1);
  assert.ok(script.items[0].highlight.startsWith("<mark>&lt;script&gt;</mark>alert"));
  const rd = await search(bob, "r&d");
  assert.ok(rd.items[0].highlight.includes("the <mark>R&amp;D</mark> budget"));
  const withoutMarks = rd.items[0].highlight.replace(/<\/?mark>/g, "");
  assert.ok(!/[<>"]/.test(withoutMarks), withoutMarks);
  // `%` and `_` are taken literally.
  await send(alice, conversation.id, "save 100% now");
  await send(alice, conversation.id, "save 1000 now");
  assert.deepEqual(contents(await search(bob, "100%")), ["save 100% now"]);
  assert.deepEqual(contents(await search(bob, "a_b")), []);
});

test("[messaging] GET /api/messages/search shows a long message as an excerpt around the match", async () => {
  const { alice, bob, conversation } = await pair();
  const long = "x".repeat(300) + " needle " + "y".repeat(300);
  await send(alice, conversation.id, long);
  const [item] = (await search(bob, "needle")).items;
  assert.ok(item.highlight.startsWith("…x"));
  assert.ok(item.highlight.endsWith("y…"));
  assert.ok(item.highlight.includes(" <mark>needle</mark> "));
  assert.ok([...item.highlight.replace(/<\/?mark>/g, "")].length <= 162);
  assert.equal(item.message.content, long);
});

test("[messaging] GET /api/messages/search never finds another conversation's messages (conversationId: 404)", async () => {
  const { alice, conversation } = await pair();
  const stranger = await signInAs(t, "MEMBER");
  const admin = await signInAs(t, "ADMIN");
  await send(alice, conversation.id, "secret zanzibarplan here");
  assert.equal((await search(alice, "zanzibarplan")).items.length, 1);
  for (const who of [stranger, admin]) {
    assert.deepEqual((await search(who, "zanzibarplan")).items, []);
    const scoped = await t.request(
      "GET",
      searchPath("zanzibarplan", { conversationId: conversation.id }),
      { token: who.accessToken },
    );
    await expectError(scoped, 404, "not_found");
  }
  const unknown = await t.request(
    "GET",
    searchPath("zanzibarplan", { conversationId: crypto.randomUUID() }),
    { token: alice.accessToken },
  );
  await expectError(unknown, 404, "not_found");
  const anonymous = await t.request("GET", searchPath("zanzibarplan"));
  await expectError(anonymous, 401, "unauthenticated");
});

test("[messaging] GET /api/messages/search with conversationId searches that conversation only", async () => {
  const { alice, bob, conversation } = await pair();
  const other = await group(alice, [bob], "Other");
  await send(alice, conversation.id, "kumquat in the first");
  await send(alice, other.id, "kumquat in the other");
  assert.equal((await search(bob, "kumquat")).items.length, 2);
  const scoped = await search(bob, "kumquat", { conversationId: other.id });
  assert.deepEqual(contents(scoped), ["kumquat in the other"]);
  assert.equal(scoped.items[0].conversation.title, "Other");
});

test("[messaging] GET /api/messages/search: a participant who left finds nothing of that conversation", async () => {
  const { alice, bob, conversation } = await pair();
  await send(alice, conversation.id, "farewell quokka party");
  assert.equal((await search(bob, "quokka")).items.length, 1);
  const left = await t.request(
    "DELETE",
    `/api/conversations/${conversation.id}/participants/${bob.user.id}`,
    { token: bob.accessToken },
  );
  assert.ok(left.status === 200 || left.status === 204, `leaving answered ${left.status}`);
  await left.body?.cancel();
  assert.deepEqual((await search(bob, "quokka")).items, []);
  await expectError(
    await t.request("GET", searchPath("quokka", { conversationId: conversation.id }), {
      token: bob.accessToken,
    }),
    404,
    "not_found",
  );
  assert.equal((await search(alice, "quokka")).items.length, 1);
});

test("[messaging] GET /api/messages/search never finds a tombstone", async () => {
  const { alice, bob, conversation } = await pair();
  const gone = await send(alice, conversation.id, "platypus to be deleted");
  await send(alice, conversation.id, "platypus that stays");
  await expectJson(
    await t.request("DELETE", `/api/messages/${gone.id}`, { token: alice.accessToken }),
    200,
  );
  for (const who of [alice, bob]) {
    assert.deepEqual(contents(await search(who, "platypus")), ["platypus that stays"]);
  }
});

test("[messaging] GET /api/messages/search finds replies in threads too (a message the caller can read), with their threadId", async () => {
  const { alice, bob, conversation } = await pair();
  const root = await send(alice, conversation.id, "wombat thread root");
  const reply = await expectJson(
    await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
      token: bob.accessToken,
      body: { content: "wombat reply in the thread", threadId: root.id },
    }),
    201,
  );
  const page = await search(alice, "wombat");
  assert.deepEqual(contents(page).sort(), ["wombat reply in the thread", "wombat thread root"]);
  const found = page.items.find((i: Result) => i.message.id === reply.id);
  assert.equal(found?.message.threadId, root.id);
});

test("[messaging] GET /api/messages/search pages with a keyset cursor, each result once, stable under inserts", async () => {
  const { alice, bob, conversation } = await pair();
  for (let i = 0; i < 5; i++) await send(alice, conversation.id, `wombat number ${i}`);
  await send(alice, conversation.id, "wombats prefix only");
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: { items: Result[]; nextCursor: string | null } = await search(
      bob,
      "wombat",
      cursor ? { limit: 2, cursor } : { limit: 2 },
    );
    seen.push(...contents(page));
    cursor = page.nextCursor;
    pages++;
    // A new match arriving meanwhile (newer, so before the cursor) changes no later page.
    if (pages === 1) await send(alice, conversation.id, "wombat arriving late");
  } while (cursor);
  assert.deepEqual(seen, [
    "wombat number 4",
    "wombat number 3",
    "wombat number 2",
    "wombat number 1",
    "wombat number 0",
    "wombats prefix only",
  ]);
  assert.equal(pages, 3);
});
