/**
 * The coalesced session check (functions/api/auth/session-lookup.ts): many checks at once get
 * each their own right answer, and a change committed before a check is always seen by it.
 */
import assert from "node:assert/strict";
import { createSessionLookup } from "../../functions/api/auth/session-lookup.ts";
import { createSession } from "../../functions/api/auth/sessions.ts";
import { createUser, test, testApp } from "../support/helpers.ts";

const t = testApp();

async function newSession(role: "SUBSCRIBER" | "ADMIN" = "SUBSCRIBER") {
  const user = await createUser(t.deps, role);
  const session = await createSession(t.deps, {
    userId: user.id,
    provider: "email",
    ip: null,
    userAgent: null,
  });
  return { userId: user.id, sessionId: session.user.sessionId };
}

test("[session-lookup] 200 checks at once, over live, revoked, suspended, expired and mismatched sessions: each gets its own answer", async () => {
  const lookup = createSessionLookup(t.deps.sql, 2);
  const live = await Promise.all(Array.from({ length: 6 }, () => newSession()));
  const revoked = await newSession();
  const suspended = await newSession();
  const expired = await newSession();
  await t.deps.sql`update app.sessions set revoked_at = now() where id = ${revoked.sessionId}`;
  await t.deps.sql`update app.users set status = 'suspended' where id = ${suspended.userId}`;
  await t.deps.sql`
    update app.sessions set expires_at = now() - interval '1 second' where id = ${expired.sessionId}`;
  // A session presented with someone else's user id (as a forged pairing would be).
  const mismatched = { sessionId: live[0].sessionId, userId: live[1].userId };

  const asked = Array.from({ length: 200 }, (_, i) => {
    const pick = [...live, revoked, suspended, expired, mismatched][i % 10];
    return { ...pick, expectLive: i % 10 < 6 };
  });
  const answers = await Promise.all(asked.map((a) => lookup(a.sessionId, a.userId)));
  answers.forEach((user, i) => {
    if (asked[i].expectLive) {
      assert.equal(user?.id, asked[i].userId, `check ${i}`);
      assert.equal(user?.sessionId, asked[i].sessionId, `check ${i}`);
      assert.equal(user?.role, "SUBSCRIBER");
    } else {
      assert.equal(user, null, `check ${i}`);
    }
  });
});

test("[session-lookup] a signout committed before a check is seen by it, even while other checks are running", async () => {
  const lookup = createSessionLookup(t.deps.sql, 1);
  const others = await Promise.all(Array.from({ length: 5 }, () => newSession()));
  const target = await newSession();
  for (let round = 0; round < 20; round++) {
    // Keep the one query slot busy so later checks wait and travel in a batch.
    const busy = others.map((s) => lookup(s.sessionId, s.userId));
    assert.ok(await lookup(target.sessionId, target.userId), `round ${round}: live`);
    await t.deps.sql`update app.sessions set revoked_at = now() where id = ${target.sessionId}`;
    const afterRevoke = lookup(target.sessionId, target.userId);
    busy.push(...others.map((s) => lookup(s.sessionId, s.userId)));
    assert.equal(await afterRevoke, null, `round ${round}: revoked`);
    for (const user of await Promise.all(busy)) assert.ok(user);
    await t.deps.sql`update app.sessions set revoked_at = null where id = ${target.sessionId}`;
  }
});

test("[session-lookup] a role change committed before a check is in its answer", async () => {
  const lookup = createSessionLookup(t.deps.sql, 2);
  const session = await newSession();
  assert.equal((await lookup(session.sessionId, session.userId))?.role, "SUBSCRIBER");
  await t.deps.sql`update app.users set role = 'MEMBER' where id = ${session.userId}`;
  assert.equal((await lookup(session.sessionId, session.userId))?.role, "MEMBER");
});

test("[session-lookup] ids in capitals are the same ids; a live session with another user's id is none", async () => {
  const lookup = createSessionLookup(t.deps.sql, 1);
  const [a, b] = await Promise.all([newSession(), newSession()]);
  const [upper, swapped, own] = await Promise.all([
    lookup(a.sessionId.toUpperCase(), a.userId.toUpperCase()),
    lookup(a.sessionId, b.userId),
    lookup(b.sessionId, b.userId),
  ]);
  assert.equal(upper?.id, a.userId);
  assert.equal(swapped, null);
  assert.equal(own?.id, b.userId);
});

test("[session-lookup] ids that are not UUIDs are no session, without a query", async () => {
  let queries = 0;
  const counting = new Proxy(t.deps.sql, {
    apply(target, self, args) {
      queries++;
      return Reflect.apply(target, self, args);
    },
  });
  const lookup = createSessionLookup(counting, 2);
  assert.equal(await lookup("not-a-uuid", crypto.randomUUID()), null);
  assert.equal(await lookup(crypto.randomUUID(), "x'; drop table app.users; --"), null);
  assert.equal(queries, 0);
});

test("[session-lookup] a failed query fails the checks it carried; the checks waiting behind it still get answers", async () => {
  let failNext = true;
  const flaky = new Proxy(t.deps.sql, {
    apply(target, self, args) {
      if (!failNext) return Reflect.apply(target, self, args);
      failNext = false;
      return Promise.reject(new Error("connection lost"));
    },
  });
  const lookup = createSessionLookup(flaky, 1);
  const [a, b, c] = await Promise.all([newSession(), newSession(), newSession()]);
  const first = lookup(a.sessionId, a.userId); // sent at once, and fails
  const behind = [lookup(b.sessionId, b.userId), lookup(c.sessionId, c.userId)]; // wait, then go
  await assert.rejects(first, /connection lost/);
  assert.deepEqual((await Promise.all(behind)).map((u) => u?.id), [b.userId, c.userId]);
});

/** The lookup's sql with its first query held until `release()`; counts the sessions per query. */
function holdingFirstQuery() {
  const sessionsPerQuery: number[] = [];
  let release!: () => void;
  const sql = new Proxy(t.deps.sql, {
    apply(target, self, args) {
      const ids = args.slice(1).find(Array.isArray) as string[];
      sessionsPerQuery.push(ids.length);
      const run = () => Reflect.apply(target, self, args);
      if (sessionsPerQuery.length > 1) return run();
      return new Promise((resolve) => release = () => resolve(run()));
    },
  });
  return { sql, sessionsPerQuery, release: () => release() };
}

test("[session-lookup] checks that arrive while a query runs go together in a query of their own, without waiting for its answer", async () => {
  const [first, ...rest] = await Promise.all(Array.from({ length: 6 }, () => newSession()));
  const held = holdingFirstQuery();
  const lookup = createSessionLookup(held.sql, 2);
  const firstAnswer = lookup(first.sessionId, first.userId); // sent at once, held
  const restAnswers = await Promise.all(rest.map((s) => lookup(s.sessionId, s.userId)));
  assert.deepEqual(restAnswers.map((u) => u?.id), rest.map((s) => s.userId));
  assert.deepEqual(held.sessionsPerQuery, [1, 5], "one query for the five, beside the held one");
  held.release();
  assert.equal((await firstAnswer)?.id, first.userId);
});

test("[session-lookup] with every query slot taken, checks wait for an answer and then go together", async () => {
  const [first, ...rest] = await Promise.all(Array.from({ length: 6 }, () => newSession()));
  const held = holdingFirstQuery();
  const lookup = createSessionLookup(held.sql, 1);
  const firstAnswer = lookup(first.sessionId, first.userId);
  const restAnswers = Promise.all(rest.map((s) => lookup(s.sessionId, s.userId)));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(held.sessionsPerQuery, [1], "nothing sent while the one slot is taken");
  held.release();
  assert.equal((await firstAnswer)?.id, first.userId);
  assert.deepEqual((await restAnswers).map((u) => u?.id), rest.map((s) => s.userId));
  assert.deepEqual(held.sessionsPerQuery, [1, 5]);
});
