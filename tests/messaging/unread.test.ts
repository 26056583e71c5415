/**
 * Unread counts as maintained counters (app.conversation_participants.unread_count, issue 30) and
 * PUT /api/conversations/:id/unread (issue 29). The counter must always equal today's
 * definition, counted: the messages after the participant's read mark that are not tombstones
 * and not their own; racing sends, deletions and read marks included.
 */
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

async function group(creator: SignedIn, others: SignedIn[], title = "Unread") {
  return await expectJson(
    await t.request("POST", "/api/conversations", {
      token: creator.accessToken,
      body: { type: "group", participantIds: others.map((o) => o.user.id), title },
    }),
    201,
  );
}

async function send(who: SignedIn, conversationId: string, content: string) {
  return await expectJson(
    await t.request("POST", `/api/conversations/${conversationId}/messages`, {
      token: who.accessToken,
      body: { content },
    }),
    201,
  );
}

/** Every participant's counter next to the count by today's definition. */
async function countersAndCounts(conversationId: string) {
  return await t.deps.sql<{ user_id: string; counter: number; counted: number }[]>`
    select p.user_id, p.unread_count as counter,
           (select count(*)::int from app.messages m
             where m.conversation_id = p.conversation_id and m.seq > p.last_read_seq
               and m.deleted_at is null and m.sender_id is distinct from p.user_id) as counted
    from app.conversation_participants p where p.conversation_id = ${conversationId}
    order by p.user_id`;
}

async function listed(who: SignedIn, conversationId: string) {
  const page = await expectJson(
    await t.request("GET", "/api/conversations?limit=200", { token: who.accessToken }),
    200,
  );
  return page.items.find((c: { id: string }) => c.id === conversationId);
}

/**
 * Three rounds of 20 racing requests: sends, authors deleting their own earlier messages, read
 * marks and unread marks to messages of `sent` (spread over the history); then every counter
 * must equal its count and the list show it.
 */
async function raceAndCheck(
  people: SignedIn[],
  conv: { id: string },
  sent: { id: string; by: SignedIn }[],
) {
  for (let round = 0; round < 3; round++) {
    const work: Promise<Response>[] = [];
    for (let i = 0; i < 20; i++) {
      const who = people[(i + round) % 4];
      if (i % 4 === 0) {
        work.push(t.request("POST", `/api/conversations/${conv.id}/messages`, {
          token: who.accessToken,
          body: { content: `race ${round}.${i}` },
        }));
      } else if (i % 4 === 1) {
        // Authors delete their own earlier messages (each at most once across rounds).
        const mine = sent.filter((s) => s.by === who);
        const target = mine[round * 2 + (i % 2)] ?? mine[0];
        work.push(t.request("DELETE", `/api/messages/${target.id}`, { token: who.accessToken }));
      } else if (i % 4 === 2) {
        const target = sent[(i * 7 + round * 5) % sent.length];
        work.push(t.request("PUT", `/api/messages/${target.id}/read`, { token: who.accessToken }));
      } else {
        const target = sent[(i * 3 + round) % sent.length];
        work.push(t.request("PUT", `/api/conversations/${conv.id}/unread`, {
          token: who.accessToken,
          body: { fromMessageId: target.id },
        }));
      }
    }
    const answers = await Promise.all(work);
    for (const answer of answers) {
      assert.ok([200, 201].includes(answer.status), `answered ${answer.status}`);
      await answer.body?.cancel();
    }
  }
  const rows = await countersAndCounts(conv.id);
  assert.equal(rows.length, 4);
  for (const row of rows) {
    assert.equal(row.counter, row.counted, `the counter of ${row.user_id} is its count`);
  }
  assert.ok(rows.some((r) => r.counted > 0), "the race left something unread");
  for (const person of people) {
    const item = await listed(person, conv.id);
    const row = rows.find((r) => r.user_id === person.user.id)!;
    assert.equal(item.unreadCount, row.counted, "the list shows the counter");
  }
}

test("[messaging] racing sends, deletions, read marks and unread marks keep every unread counter exact", async () => {
  const people = await Promise.all(Array.from({ length: 4 }, () => signInAs(t, "MEMBER")));
  const conv = await group(people[0], people.slice(1), "Race for unread");
  const sent: { id: string; by: SignedIn }[] = [];
  for (let i = 0; i < 24; i++) {
    const by = people[i % 4];
    sent.push({ id: (await send(by, conv.id, `before ${i}`)).id, by });
  }
  await raceAndCheck(people, conv, sent);
});

test("[messaging] the same race in a group of 3,500 messages, where marks move across whole buckets of 1,000", async () => {
  const people = await Promise.all(Array.from({ length: 4 }, () => signInAs(t, "MEMBER")));
  const conv = await group(people[0], people.slice(1), "Long race for unread");
  // The history through the real triggers (they keep the counters and the buckets), 100 rows a
  // statement rather than 3,500 requests (one statement of them all would update the same
  // participant rows thousands of times in one transaction, each update slower than the last).
  const ids = people.map((p) => p.user.id);
  for (let from = 1; from <= 3500; from += 100) {
    await t.deps.sql`
      insert into app.messages (conversation_id, sender_id, content)
      select ${conv.id}, (${ids}::uuid[])[1 + g % 4], 'history ' || g
      from generate_series(${from}::int, ${from + 99}::int) g`;
  }
  // Targets far apart: four in a row every 125 messages (one of each author), with their author.
  const rows = await t.deps.sql<{ id: string; sender_id: string }[]>`
    select id, sender_id from app.messages
    where conversation_id = ${conv.id} and seq % 125 < 4 order by seq`;
  const sent = rows.map((r) => ({ id: r.id, by: people[ids.indexOf(r.sender_id)] }));
  await raceAndCheck(people, conv, sent);
});

test("[messaging] the list's unreadCount leaves out one's own messages and tombstones, and follows read marks", async () => {
  const [a, b, c] = await Promise.all([
    signInAs(t, "MEMBER"),
    signInAs(t, "SUBSCRIBER"),
    signInAs(t, "MEMBER"),
  ]);
  const conv = await group(a, [b], "Counting");
  const m1 = await send(b, conv.id, "one");
  await send(a, conv.id, "two, a's own");
  const m3 = await send(b, conv.id, "three");
  const m4 = await send(b, conv.id, "four");
  assert.equal((await listed(a, conv.id)).unreadCount, 3);
  assert.equal((await listed(b, conv.id)).unreadCount, 1);
  await expectJson(
    await t.request("DELETE", `/api/messages/${m3.id}`, { token: b.accessToken }),
    200,
  );
  assert.equal((await listed(a, conv.id)).unreadCount, 2, "a tombstone is not unread");
  const read = await expectJson(
    await t.request("PUT", `/api/messages/${m1.id}/read`, { token: a.accessToken }),
    200,
  );
  assert.equal(read.unreadCount, 1);
  assert.equal((await listed(a, conv.id)).unreadCount, 1);
  // Someone added later starts with every live message of the others unread.
  await expectJson(
    await t.request("POST", `/api/conversations/${conv.id}/participants`, {
      token: a.accessToken,
      body: { userIds: [c.user.id] },
    }),
    200,
  );
  assert.equal((await listed(c, conv.id)).unreadCount, 3);
  const back = await expectJson(
    await t.request("PUT", `/api/messages/${m4.id}/read`, { token: c.accessToken }),
    200,
  );
  assert.equal(back.unreadCount, 0);
});

test("[messaging] PUT /api/conversations/:id/unread moves the read mark back to just before a message", async () => {
  const [a, b] = await Promise.all([signInAs(t, "MEMBER"), signInAs(t, "SUBSCRIBER")]);
  const conv = await group(a, [b], "Back");
  const m1 = await send(b, conv.id, "one");
  const m2 = await send(b, conv.id, "two");
  await send(a, conv.id, "three, a's own");
  const m4 = await send(b, conv.id, "four");
  await expectJson(
    await t.request("PUT", `/api/messages/${m4.id}/read`, { token: a.accessToken }),
    200,
  );

  const fromTwo = await expectJson(
    await t.request("PUT", `/api/conversations/${conv.id}/unread`, {
      token: a.accessToken,
      body: { fromMessageId: m2.id },
    }),
    200,
  );
  assert.deepEqual(fromTwo, { conversationId: conv.id, lastReadMessageId: m1.id, unreadCount: 2 });
  assert.equal((await listed(a, conv.id)).unreadCount, 2);

  // A message after the mark is unread already: the mark stays.
  const again = await expectJson(
    await t.request("PUT", `/api/conversations/${conv.id}/unread`, {
      token: a.accessToken,
      body: { fromMessageId: m4.id },
    }),
    200,
  );
  assert.deepEqual(again, fromTwo);

  // From the first message: no mark at all.
  const fromFirst = await expectJson(
    await t.request("PUT", `/api/conversations/${conv.id}/unread`, {
      token: a.accessToken,
      body: { fromMessageId: m1.id },
    }),
    200,
  );
  assert.deepEqual(fromFirst, { conversationId: conv.id, lastReadMessageId: null, unreadCount: 3 });

  // Reading forward again works as before.
  const forward = await expectJson(
    await t.request("PUT", `/api/messages/${m2.id}/read`, { token: a.accessToken }),
    200,
  );
  assert.deepEqual(forward, { conversationId: conv.id, lastReadMessageId: m2.id, unreadCount: 1 });
  const [row] = await countersAndCounts(conv.id).then((rows) =>
    rows.filter((r) => r.user_id === a.user.id)
  );
  assert.equal(row.counter, row.counted);
});

test("[messaging] PUT /api/conversations/:id/unread: 404 outside the conversation or for a message out of sight, 422 for another conversation's message, 400, 401, 403", async () => {
  const [a, b, stranger] = await Promise.all([
    signInAs(t, "MEMBER"),
    signInAs(t, "SUBSCRIBER"),
    signInAs(t, "MEMBER"),
  ]);
  const conv = await group(a, [b], "Guarded");
  const other = await group(a, [stranger], "Other of a's");
  const elsewhere = await group(b, [stranger], "Not a's");
  const m = await send(b, conv.id, "here");
  const mOther = await send(stranger, other.id, "there");
  const mElsewhere = await send(stranger, elsewhere.id, "out of a's sight");
  const put = (who: SignedIn | null, id: string, body: unknown) =>
    t.request("PUT", `/api/conversations/${id}/unread`, { token: who?.accessToken, body });

  await expectError(await put(stranger, conv.id, { fromMessageId: m.id }), 404, "not_found");
  await expectError(await put(a, conv.id, { fromMessageId: mOther.id }), 422, "unprocessable");
  await expectError(await put(a, conv.id, { fromMessageId: mElsewhere.id }), 404, "not_found");
  await expectError(
    await put(a, conv.id, { fromMessageId: crypto.randomUUID() }),
    404,
    "not_found",
  );
  await expectError(await put(a, crypto.randomUUID(), { fromMessageId: m.id }), 404, "not_found");
  await expectError(await put(a, conv.id, { fromMessageId: "nope" }), 400, "invalid_request");
  await expectError(await put(a, conv.id, {}), 400, "invalid_request");
  await expectError(await put(null, conv.id, { fromMessageId: m.id }), 401);
  const visitor = await signIn(t, (await createUser(t.deps, "VISITOR")).email);
  await expectError(await put(visitor, conv.id, { fromMessageId: m.id }), 403);
  const [row] = await t.deps.sql<{ last_read_seq: number }[]>`
    select last_read_seq::int from app.conversation_participants
    where conversation_id = ${conv.id} and user_id = ${a.user.id}`;
  assert.equal(row.last_read_seq, 0, "no refused call moved the mark");
});

test("[messaging] the conversation search finds names and titles (rare terms through the indexes) and pages by activity", async () => {
  const me = await signInAs(t, "MEMBER");
  const tag = crypto.randomUUID().slice(0, 8);
  const friends = await Promise.all(Array.from({ length: 3 }, () => signInAs(t, "MEMBER")));
  await t.deps.sql`update app.users set name = ${"Zed " + tag} where id = ${friends[0].user.id}`;
  const byName = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: me.accessToken,
      body: { type: "direct", participantIds: [friends[0].user.id] },
    }),
    201,
  );
  const byTitle1 = await group(me, [friends[1]], `Title ${tag} one`);
  const byTitle2 = await group(me, [friends[2]], `Title ${tag} two`);
  await group(me, [friends[1], friends[2]], "Unrelated");
  const search = async (q: string, extra = "") =>
    await expectJson(
      await t.request("GET", `/api/conversations?search=${encodeURIComponent(q)}${extra}`, {
        token: me.accessToken,
      }),
      200,
    );
  const all = await search(tag);
  assert.deepEqual(
    all.items.map((c: { id: string }) => c.id),
    [byTitle2.id, byTitle1.id, byName.id],
  );
  const first = await search(tag, "&limit=2");
  assert.equal(first.items.length, 2);
  const second = await search(tag, `&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`);
  assert.deepEqual(second.items.map((c: { id: string }) => c.id), [byName.id]);
  assert.equal(second.nextCursor, null);
  assert.deepEqual((await search(tag, "&type=direct")).items.map((c: { id: string }) => c.id), [
    byName.id,
  ]);
  assert.deepEqual((await search(`nothing ${tag}`)).items, []);
  // Someone else's conversation with a matching title is not found.
  const [x, y] = await Promise.all([signInAs(t, "MEMBER"), signInAs(t, "MEMBER")]);
  await group(x, [y], `Title ${tag} three`);
  assert.equal((await search(tag)).items.length, 3);
});
