/**
 * No event lost or repeated across reconnects, with concurrent writers. Many senders post at
 * once (their transactions commit in an order unrelated to when their events were numbered)
 * while a client disconnects and resumes over and over; what it received, in order, must equal
 * the log in the database.
 */
import assert from "node:assert/strict";
import { expectJson, type SignedIn, signInAs, test, testApp } from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse, topicEventsAfter } from "./sse-client.ts";

const t = testApp({ AGORA_DB_POOL_SIZE: "12" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;

const SENDERS = 12;
const PER_SENDER = 25;
/** Reconnects (SSE) or requests given up (long-poll) to see while the senders are at work. */
const MIN_RECONNECTS = 8;

async function setup() {
  const members: SignedIn[] = [];
  for (let i = 0; i < SENDERS; i++) members.push(await signInAs(t, "MEMBER"));
  const reader = await signInAs(t, "MEMBER");
  const response = await t.request("POST", "/api/conversations", {
    token: members[0].accessToken,
    body: {
      type: "group",
      participantIds: [...members.slice(1), reader].map((m) => m.user.id),
      title: "Storm",
    },
  });
  const conversationId = (await expectJson(response, 201)).id as string;
  return { members, reader, conversationId, topic: `conversation:${conversationId}` };
}

/**
 * Every sender posts as fast as it can: at least PER_SENDER messages each, and on until
 * `enough()` says the client has been through its reconnects (so they happen during the storm
 * however fast the server is). Resolves with the number of messages sent once all are in.
 */
async function storm(members: SignedIn[], conversationId: string, enough: () => boolean) {
  let sent = 0;
  await Promise.all(members.map(async (m, i) => {
    for (let n = 0; n < PER_SENDER || !enough(); n++) {
      const r = await t.request("POST", `/api/conversations/${conversationId}/messages`, {
        token: m.accessToken,
        body: { content: `sender ${i} message ${n}` },
      });
      assert.equal(r.status, 201);
      await r.body?.cancel();
      sent++;
    }
  }));
  return sent;
}

test("[realtime] SSE: a client that keeps disconnecting and resuming receives every event once, in order", async () => {
  const { members, reader, conversationId, topic } = await setup();
  const headers = { authorization: `Bearer ${reader.accessToken}` };
  const first = await openSse(`${base}/api/realtime/sse?topics=${topic}`, headers);
  const ready = await first.next();
  first.close();
  const start = ready!.id!;
  const received: string[] = [];
  let last = start;
  let done = false;
  let reconnects = 0;
  const sending = storm(members, conversationId, () => reconnects >= MIN_RECONNECTS)
    .finally(() => (done = true));
  while (true) {
    const finished = done;
    const stream = await openSse(`${base}/api/realtime/sse?topics=${topic}`, {
      ...headers,
      "last-event-id": last,
    });
    assert.equal(stream.response.status, 200);
    reconnects++;
    const until = Date.now() + (finished ? 60_000 : 10 + Math.random() * 120);
    while (Date.now() < until) {
      const frame = await stream.next(finished ? 1_000 : Math.max(1, until - Date.now()));
      if (!frame) break;
      if (frame.event === "ready" || !frame.id) continue;
      received.push(frame.id);
      last = frame.id;
    }
    stream.close();
    if (finished) break;
  }
  const sent = await sending;
  const expected = await topicEventsAfter(t.deps.sql, topic, start);
  assert.ok(sent >= SENDERS * PER_SENDER);
  assert.equal(expected.length, sent, "every message produced one event");
  assert.ok(reconnects > MIN_RECONNECTS, `the client reconnected ${reconnects} times`);
  assert.deepEqual(received, expected);
});

test("[realtime] long-poll: a client that keeps abandoning requests receives every event once, in order", async () => {
  const { members, reader, conversationId, topic } = await setup();
  const headers = { authorization: `Bearer ${reader.accessToken}` };
  const initial = await expectJson(
    await fetch(`${base}/api/realtime/poll?topics=${topic}&timeout=0`, { headers }),
    200,
  );
  const start = initial.cursor as string;
  let cursor = start;
  const received: string[] = [];
  let done = false;
  let abandoned = 0;
  // One request is surely given up while it waits (nothing has been sent yet): the server must
  // not count what that request would have carried as delivered.
  const waiting = new AbortController();
  setTimeout(() => waiting.abort(), 100);
  await fetch(`${base}/api/realtime/poll?topics=${topic}&cursor=${cursor}&timeout=5`, {
    headers,
    signal: waiting.signal,
  }).then((r) => r.body?.cancel()).catch(() => abandoned++);
  let polls = 0;
  const sending = storm(members, conversationId, () => polls >= MIN_RECONNECTS)
    .finally(() => (done = true));
  let quiet = 0;
  while (quiet < 2) {
    const finished = done;
    const abort = new AbortController();
    // Now and then give up on a request mid-wait, as a flaky network would.
    const giveUp = !finished && Math.random() < 0.3;
    if (!finished) polls++;
    const timer = giveUp ? setTimeout(() => abort.abort(), Math.random() * 30) : undefined;
    try {
      const response = await fetch(
        `${base}/api/realtime/poll?topics=${topic}&cursor=${cursor}&timeout=${finished ? 1 : 5}`,
        {
          headers,
          signal: abort.signal,
        },
      );
      const body = await expectJson(response, 200);
      for (const event of body.events) received.push(event.id);
      cursor = body.cursor;
      quiet = finished && body.events.length === 0 ? quiet + 1 : 0;
    } catch (err) {
      // Only a request given up on may fail; any other failure is the server's.
      if (!abort.signal.aborted) throw err;
      abandoned++;
    } finally {
      clearTimeout(timer);
    }
  }
  const sent = await sending;
  const expected = await topicEventsAfter(t.deps.sql, topic, start);
  assert.ok(sent >= SENDERS * PER_SENDER);
  assert.equal(expected.length, sent);
  assert.deepEqual(received, expected);
  assert.ok(abandoned >= 1, `requests given up mid-wait: ${abandoned}`);
});
