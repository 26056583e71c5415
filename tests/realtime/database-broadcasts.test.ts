/**
 * The local gateway's feed of database broadcasts (stack/realtime/database-broadcasts.ts) when
 * its session connection was down while rows were committed, as after a Postgres restart: the
 * listener here forwards the real notifications of `realtime_messages` except while "down", and
 * a re-listen is what postgres.js does once it has reconnected (it calls `onlisten` again).
 */
import assert from "node:assert/strict";
import { test, testApp } from "../support/helpers.ts";
import { type BroadcastRow, databaseBroadcasts } from "../../stack/realtime/database-broadcasts.ts";
import type { Listener } from "../../functions/_shared/db.ts";

const t = testApp();

/**
 * A feed over the real listener, whose notifications are dropped while `state.down`, with the
 * re-listen in hand; `got` holds what it delivered of `topic`.
 */
function flakyFeed(topic: string) {
  const { listener, state } = flakyListener();
  const got: BroadcastRow[] = [];
  const feed = databaseBroadcasts({
    sql: t.deps.sql,
    listener,
    log: () => {},
    deliver: (row) => row.topic === topic && got.push(row),
  });
  return { feed, state, got };
}

/** The real listener, with notifications dropped while `down` and the re-listen in hand. */
function flakyListener() {
  const state = { down: false, relisten: (): void => {} };
  const listener: Pick<Listener, "listen"> = {
    listen: ((channel: string, fn: (text: string) => void, onlisten?: () => void) => {
      state.relisten = () => onlisten?.();
      return t.deps.listener.listen(channel, (text) => {
        if (!state.down) fn(text);
      }, onlisten);
    }) as Listener["listen"],
  };
  return { listener, state };
}

async function until(what: string, check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const send = (topic: string, n: number, filler = "") =>
  t.deps.sql`select realtime.send(jsonb_build_object('n', ${n}::int, 'filler', ${filler}::text),
                                   'test.event', ${topic}, true)`;

test("[gateway] database broadcasts committed while the listen connection was down go out once it listens again: once each, in order, none twice", async () => {
  const topic = `test:${crypto.randomUUID()}`;
  const { feed, state, got } = flakyFeed(topic);
  try {
    await feed.ready;
    const numbers = () => got.map((r) => (r.payload as { n: number }).n);
    await send(topic, 1);
    await until("the first row", () => got.length === 1);

    state.down = true;
    await send(topic, 2);
    // Over NOTIFY's 8,000 bytes: only its id would have been announced.
    await send(topic, 3, "x".repeat(9_000));
    await send(topic, 4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(numbers(), [1], "nothing arrives while nobody listens");

    state.down = false;
    state.relisten();
    await until("the rows committed meanwhile", () => got.length === 4);
    assert.deepEqual(numbers(), [1, 2, 3, 4]);
    assert.equal((got[2].payload as { filler: string }).filler.length, 9_000);
    assert.ok(got.every((r) => r.event === "test.event" && r.private === true));

    // Listening again with nothing missed delivers nothing again; live rows still come once.
    state.relisten();
    await send(topic, 5);
    await until("the next live row", () => got.length === 5);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(numbers(), [1, 2, 3, 4, 5]);
    assert.equal(new Set(got.map((r) => r.id)).size, 5, "no row twice");
  } finally {
    await feed.close();
  }
});

test("[gateway] a first re-listen before any row was heard delivers what was committed since the feed started, not older rows", async () => {
  const topic = `test:${crypto.randomUUID()}`;
  await send(topic, 0); // before the feed: not this process's to deliver (more than the margin ago)
  await t.deps.sql`
    update realtime.messages set inserted_at = inserted_at - interval '1 minute'
    where topic = ${topic}`;
  const { feed, state, got } = flakyFeed(topic);
  try {
    await feed.ready;
    await new Promise((resolve) => setTimeout(resolve, 100)); // the first listen's clock is read
    state.down = true;
    await send(topic, 1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // its notification, dropped
    assert.equal(got.length, 0);
    state.down = false;
    state.relisten();
    await until("the missed row", () => got.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(got.map((r) => (r.payload as { n: number }).n), [1]);
  } finally {
    await feed.close();
  }
});
