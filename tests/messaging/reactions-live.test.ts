/**
 * The live `message.reactions` events under races, as a client receives them: over a real HTTP
 * server, one participant follows the conversation over SSE and another by long-polling while
 * everyone reacts at once, and the LAST event each one receives for the message must hold the
 * counts the database holds at the end (docs/messaging.md, "Storage, and why the counts are exact
 * under races"). Bursts: 50 people adding the same emoji at once, then 99 people toggling five
 * emoji as fast as they can for a few rounds (adds and removals mixed, as the benchmark does).
 */
import assert from "node:assert/strict";
import { expectJson, type SignedIn, signInAs, test, testApp } from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse, type SseStream } from "../realtime/sse-client.ts";

const t = testApp({ AGORA_SSE_HEARTBEAT_MS: "500" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;
const owner = await signInAs(t, "MEMBER");

const auth = (s: SignedIn) => ({ authorization: `Bearer ${s.accessToken}` });
type Counts = { emoji: string; count: number }[];
const sorted = (rs: Counts) =>
  JSON.stringify(
    rs.map((r) => ({ emoji: r.emoji, count: r.count })).sort((a, b) =>
      a.emoji < b.emoji ? -1 : a.emoji > b.emoji ? 1 : 0
    ),
  );

/** How many single changes (one person's add or removal) lead from one set of counts to another. */
function distance(a: Counts, b: Counts): number {
  const counts = new Map<string, number>();
  for (const r of a) counts.set(r.emoji, r.count);
  for (const r of b) counts.set(r.emoji, (counts.get(r.emoji) ?? 0) - r.count);
  return [...counts.values()].reduce((n, d) => n + Math.abs(d), 0);
}

async function dbCounts(messageId: string): Promise<Counts> {
  return await t.deps.sql<Counts>`
    select emoji, count(*)::int as count from app.message_reactions
    where message_id = ${messageId} group by emoji`;
}

/** The cursor of the newest `message.reactions` event of the message, in the clients' order. */
async function lastEventId(messageId: string): Promise<string> {
  const [row] = await t.deps.sql<{ id: string }[]>`
    select xid::text || '.' || id::text as id from app.events
    where event = 'message.reactions' and payload ->> 'messageId' = ${messageId}
    order by xid desc, id desc limit 1`;
  return row.id;
}

async function react(who: SignedIn, messageId: string, emoji: string, present: boolean) {
  const response = await fetch(
    `${base}/api/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`,
    { method: present ? "PUT" : "DELETE", headers: auth(who) },
  );
  await expectJson(response, 200);
}

/** Follows a topic over SSE, keeping the last `message.reactions` event per message. */
function followSse(stream: SseStream) {
  const last = new Map<string, { id: string; reactions: Counts }>();
  let ids: string[] = [];
  /** Every event of every message, in the order received. */
  const all = new Map<string, Counts[]>();
  const done = (async () => {
    while (true) {
      const frame = await stream.next(60_000);
      if (!frame) return;
      if (frame.event !== "message.reactions") continue;
      const event = JSON.parse(frame.data);
      last.set(event.payload.messageId, { id: frame.id!, reactions: event.payload.reactions });
      ids.push(frame.id!);
      all.set(event.payload.messageId, [
        ...(all.get(event.payload.messageId) ?? []),
        event.payload.reactions,
      ]);
    }
  })();
  return {
    last,
    all,
    takeIds: () => [ids, ids = []][0],
    done,
  };
}

/** Follows a topic by long-polling, keeping the last `message.reactions` event per message. */
function followPoll(who: SignedIn, topic: string, cursor: string) {
  const last = new Map<string, { id: string; reactions: Counts }>();
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const response = await fetch(
        `${base}/api/realtime/poll?topics=${topic}&cursor=${cursor}&timeout=1`,
        { headers: auth(who) },
      );
      const page = await expectJson(response, 200);
      for (const e of page.events) {
        if (e.event === "message.reactions") {
          last.set(e.payload.messageId, { id: e.id, reactions: e.payload.reactions });
        }
      }
      cursor = page.cursor;
    }
  })();
  return {
    last,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("[messaging] reactions live: after 50 simultaneous adds and 99 people toggling, the last event an SSE and a long-poll client receive holds the database's counts", async () => {
  const people = await Promise.all(Array.from({ length: 99 }, () => signInAs(t, "SUBSCRIBER")));
  const conversation = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: owner.accessToken,
      body: { type: "group", participantIds: people.map((p) => p.user.id), title: "Live race" },
    }),
    201,
  );
  const topic = `conversation:${conversation.id}`;
  const message = await expectJson(
    await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
      token: owner.accessToken,
      body: { content: "react, all of you" },
    }),
    201,
  );
  const stream = await openSse(`${base}/api/realtime/sse?topics=${topic}`, auth(people[0]));
  const ready = await stream.next();
  assert.equal(ready?.event, "ready");
  const sse = followSse(stream);
  const poll = followPoll(people[1], topic, ready.id!);
  try {
    // The events the checks have looked at, and the counts of the last of them.
    let seen = 0;
    let last: Counts = [];
    const check = async (burst: string, direction: "up" | "down" | "mixed", changes: number) => {
      const finalId = await lastEventId(message.id);
      await until(
        `${burst}: the SSE client to receive ${finalId}`,
        () => sse.last.get(message.id)?.id === finalId,
      );
      await until(
        `${burst}: the long-poll client to receive ${finalId}`,
        () => poll.last.get(message.id)?.id === finalId,
      );
      // Anything still in flight would come now.
      await new Promise((r) => setTimeout(r, 300));
      const exact = sorted(await dbCounts(message.id));
      assert.equal(sorted(sse.last.get(message.id)!.reactions), exact, `${burst}: SSE`);
      assert.equal(sorted(poll.last.get(message.id)!.reactions), exact, `${burst}: long-poll`);
      // Delivered in the order of the log, each once.
      const ids = sse.takeIds();
      const [{ ordered }] = await t.deps.sql<{ ordered: string[] }[]>`
        select coalesce(array_agg(xid::text || '.' || id::text order by xid, id), '{}') as ordered
        from app.events
        where event = 'message.reactions' and payload ->> 'messageId' = ${message.id}
          and (xid::text || '.' || id::text) = any(${ids}::text[])`;
      assert.deepEqual(ids, ordered, `${burst}: SSE order`);
      // Reactions arriving together are applied in one batch with one event, so an event may be
      // several changes after the one before it, but never behind it: events out of commit
      // order, or counted in a snapshot missing an earlier commit, would take counts back. In a
      // burst of adds no count ever goes down (of removals, up), and between consecutive events
      // there are never more changes than the burst made.
      const received = sse.all.get(message.id)!;
      const history = [last, ...received.slice(seen)];
      let steps = 0;
      for (let i = 1; i < history.length; i++) {
        steps += distance(history[i - 1], history[i]);
        if (direction === "mixed") continue;
        for (const r of direction === "up" ? history[i - 1] : history[i]) {
          const other = (direction === "up" ? history[i] : history[i - 1])
            .find((x) => x.emoji === r.emoji)?.count ?? 0;
          assert.ok(
            other >= r.count,
            `${burst}: event ${i} (${sorted(history[i])}) goes back from ${sorted(history[i - 1])}`,
          );
        }
      }
      assert.ok(steps <= changes, `${burst}: ${steps} steps between events, ${changes} changes`);
      seen = received.length;
      last = history[history.length - 1];
    };

    await Promise.all(people.slice(0, 50).map((p) => react(p, message.id, "🔥", true)));
    assert.equal(sorted(await dbCounts(message.id)), sorted([{ emoji: "🔥", count: 50 }]));
    await check("50 adds of one emoji", "up", 50);

    const emoji = ["👍", "❤️", "😂", "🎉", "🔥"];
    const mine = people.map((_, i) => new Set(i < 50 ? ["🔥"] : []));
    for (let round = 0; round < 3; round++) {
      let changes = 0;
      await Promise.all(people.map(async (p, i) => {
        for (let k = 0; k < 8; k++) {
          const e = emoji[(i * 7 + k * 3 + round) % emoji.length];
          const present = !mine[i].has(e);
          await react(p, message.id, e, present);
          changes++;
          if (present) mine[i].add(e);
          else mine[i].delete(e);
        }
      }));
      const expected = emoji.map((e) => ({ emoji: e, count: mine.filter((s) => s.has(e)).length }))
        .filter((r) => r.count > 0);
      assert.equal(sorted(await dbCounts(message.id)), sorted(expected), `round ${round}: rows`);
      await check(`round ${round} of 99 people toggling`, "mixed", changes);
    }

    // Everyone takes back everything at once: no count ever goes up, and nothing is left.
    const removals = mine.flatMap((set, i) => [...set].map((e) => ({ who: people[i], e })));
    await Promise.all(people.map(async (p, i) => {
      for (const e of [...mine[i]]) await react(p, message.id, e, false);
    }));
    assert.equal(sorted(await dbCounts(message.id)), sorted([]));
    await check("everyone taking everything back", "down", removals.length);
    assert.equal(sorted(sse.last.get(message.id)!.reactions), sorted([]));
  } finally {
    stream.close();
    await poll.stop();
    await sse.done;
  }
});
