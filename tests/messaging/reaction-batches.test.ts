/**
 * Reactions in batches (functions/api/messaging/reaction-batches.ts): the reactions that reach
 * the server for one message while its batch is in flight are applied in one transaction. Here a
 * batch is made to form for certain: the message's lock (the one app_private.set_reactions_as
 * takes) is held from another connection, so the first request's batch waits on it while the
 * others queue up behind it; then the lock is let go. What must hold: every caller gets their own
 * answer (the counts after the batch, their own `me`) or their own error (404 for a
 * non-participant, 422 for the 21st emoji) while the others' changes stand; one
 * `message.reactions` event per batch, with the counts after it; a person's second reaction waits
 * for the next batch.
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
import { reactionBatches, takeBatch } from "../../functions/api/messaging/reaction-batches.ts";

const t = testApp();
const ann = await signInAs(t, "MEMBER");
const stranger = await signInAs(t, "SUBSCRIBER");

async function group(others: SignedIn[], title: string) {
  return await expectJson(
    await t.request("POST", "/api/conversations", {
      token: ann.accessToken,
      body: { type: "group", participantIds: others.map((o) => o.user.id), title },
    }),
    201,
  );
}

async function send(conversationId: string, content: string) {
  return await expectJson(
    await t.request("POST", `/api/conversations/${conversationId}/messages`, {
      token: ann.accessToken,
      body: { content },
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

async function events(messageId: string) {
  return await t.deps.sql<{ payload: { reactions: { emoji: string; count: number }[] } }[]>`
    select payload from app.events
    where event = 'message.reactions' and payload ->> 'messageId' = ${messageId}
    order by xid, id`;
}

/**
 * Holds the message's reaction lock from another connection while `first` starts a batch (which
 * then waits on the lock) and `rest` queue up behind it in the coalescer; then lets go.
 */
async function behindOneBatch<T>(
  messageId: string,
  first: () => Promise<T>,
  rest: () => Promise<T>[],
): Promise<[T, T[]]> {
  const held = await t.deps.sql.reserve();
  const until = async (what: string, check: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 20_000;
    while (!await check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    await held`select pg_advisory_lock(hashtext('app.message_reactions'), hashtext(${messageId}))`;
    const firstAnswer = first();
    await until("the first batch to wait on the lock", async () => {
      const [{ n }] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and wait_event = 'advisory'
          and query like '%set_reactions_as%'`;
      return n === 1;
    });
    const requests = rest();
    await until(
      "the others to queue up",
      () => reactionBatches(t.deps.sql).waiting(messageId) === requests.length,
    );
    await held`select pg_advisory_unlock(hashtext('app.message_reactions'), hashtext(${messageId}))`;
    return [await firstAnswer, await Promise.all(requests)];
  } finally {
    held.release();
  }
}

type Reaction = { emoji: string; count: number; me: boolean };
const counts = (rs: { emoji: string; count: number }[]) =>
  rs.map(({ emoji, count }) => ({ emoji, count }))
    .sort((a, b) => a.emoji < b.emoji ? -1 : a.emoji > b.emoji ? 1 : 0);
const mine = (rs: Reaction[]) => rs.filter((r) => r.me).map((r) => r.emoji);

test("[messaging] reaction batches: under one batch every caller gets their own answer or their own 404/422, the others' changes stand, one event with the counts after it", async () => {
  const people = await Promise.all(Array.from({ length: 12 }, () => signInAs(t, "SUBSCRIBER")));
  const conversation = await group(people, "Batch");
  const message = await send(conversation.id, "one batch");
  // 17 fruit and 👍 already, 🔥 from the first batch: the second holds a 20th and a 21st.
  const fruit = [..."🍏🍎🍐🍊🍋🍌🍉🍇🍓🫐🍈🍒🍑🥭🍍🥥🥝🍅🍆"];
  for (const emoji of [...fruit.slice(0, 17), "👍"]) {
    await expectJson(await react(ann, message.id, emoji), 200);
  }
  const before = (await events(message.id)).length;

  const [firstAnswer, answers] = await behindOneBatch(
    message.id,
    () => react(people[0], message.id, "🔥"),
    () => [
      ...people.slice(1, 10).map((p) => react(p, message.id, "👍")),
      react(stranger, message.id, "👍"), // not a participant: 404
      react(people[10], message.id, fruit[17]), // one of these two is the 20th distinct emoji,
      react(people[11], message.id, fruit[18]), // the other the 21st: 422
    ],
  );

  // The first batch: the first person alone.
  const first = await expectJson(firstAnswer, 200);
  assert.deepEqual(
    counts(first.reactions),
    counts([
      ...fruit.slice(0, 17).map((emoji) => ({ emoji, count: 1 })),
      { emoji: "👍", count: 1 },
      { emoji: "🔥", count: 1 },
    ]),
  );
  assert.deepEqual(mine(first.reactions), ["🔥"]);

  // The second batch: nine more 👍, the stranger's 404, one fruit taken and the other's 422.
  await expectError(answers[9], 404, "not_found");
  const [taken, refused] = answers[10].status === 200 ? [10, 11] : [11, 10];
  await expectError(answers[refused], 422, "unprocessable");
  const bodies = await Promise.all(
    [...answers.slice(0, 9), answers[taken]].map((a) => expectJson(a, 200)),
  );
  const expected = counts([
    ...fruit.slice(0, 17).map((emoji) => ({ emoji, count: 1 })),
    { emoji: fruit[taken + 7], count: 1 },
    { emoji: "🔥", count: 1 },
    { emoji: "👍", count: 10 },
  ]);
  for (const body of bodies) {
    assert.equal(body.messageId, message.id);
    assert.deepEqual(counts(body.reactions), expected, "every answer: the counts after the batch");
  }
  // `me` is each caller's own.
  for (const body of bodies.slice(0, 9)) assert.deepEqual(mine(body.reactions), ["👍"]);
  assert.deepEqual(mine(bodies[9].reactions), [fruit[taken + 7]]);

  // Two batches, two events, each with the counts after its batch; the last is the final.
  const log = (await events(message.id)).slice(before);
  assert.equal(log.length, 2, "one event per batch");
  assert.deepEqual(counts(log[0].payload.reactions), counts(first.reactions));
  assert.deepEqual(counts(log[1].payload.reactions), expected);
  const rows = await t.deps.sql<{ emoji: string; count: number }[]>`
    select emoji, count(*)::int as count from app.message_reactions
    where message_id = ${message.id} group by emoji`;
  assert.deepEqual(counts(rows), expected, "the rows: the refused fruit left none");
});

test("[messaging] reaction batches: a batch holds one reaction per person and at most its maximum, in arrival order", () => {
  const item = (sub: string, n: number) => ({
    claims: { sub, role: "authenticated" as const, session_id: "s" },
    n,
  });
  const queue = [
    item("a", 1),
    item("b", 2),
    item("a", 3),
    item("c", 4),
    item("d", 5),
    item("b", 6),
  ];
  assert.deepEqual(takeBatch(queue, 3).map((i) => i.n), [1, 2, 4]);
  assert.deepEqual(queue.map((i) => i.n), [3, 5, 6]);
  assert.deepEqual(takeBatch(queue, 3).map((i) => i.n), [3, 5, 6]);
  assert.deepEqual(queue, []);
});
