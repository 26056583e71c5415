/**
 * SSE and long-poll over a real HTTP server: delivery to the other participant within 1 s,
 * refusals, resume, typing, and closing a stream when access ends.
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
import { startStackServer } from "../../stack/server.ts";
import { openSse } from "./sse-client.ts";

const t = testApp({ AGORA_SSE_HEARTBEAT_MS: "500" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;
const alice = await signInAs(t, "MEMBER");
const bob = await signInAs(t, "MEMBER");
const stranger = await signInAs(t, "MEMBER");

async function conversationOf(a: SignedIn, b: SignedIn, type: "direct" | "group" = "direct") {
  const response = await t.request("POST", "/api/conversations", {
    token: a.accessToken,
    body: type === "direct"
      ? { type, participantIds: [b.user.id] }
      : { type, participantIds: [b.user.id], title: "Live" },
  });
  return (await expectJson(response, [200, 201])).id as string;
}

const auth = (s: SignedIn) => ({ authorization: `Bearer ${s.accessToken}` });

async function post(s: SignedIn, conversationId: string, content: string) {
  const response = await t.request("POST", `/api/conversations/${conversationId}/messages`, {
    token: s.accessToken,
    body: { content },
  });
  return await expectJson(response, 201);
}

test("[realtime] SSE delivers a new message to the other participant within 1 s", async () => {
  const conv = await conversationOf(alice, bob);
  const stream = await openSse(`${base}/api/realtime/sse?topics=conversation:${conv}`, auth(bob));
  try {
    assert.equal(stream.response.status, 200);
    assert.match(stream.response.headers.get("content-type") ?? "", /^text\/event-stream/);
    const ready = await stream.next();
    assert.equal(ready?.event, "ready");
    assert.ok(ready?.id, "the ready frame sets the resume cursor");
    const sentAt = performance.now();
    const message = await post(alice, conv, "live hello");
    const frame = await stream.next(1_000);
    const elapsed = performance.now() - sentAt;
    assert.ok(frame, "a frame arrived within 1 s");
    assert.equal(frame.event, "message.created");
    const event = JSON.parse(frame.data);
    assert.equal(event.id, frame.id);
    assert.equal(event.topic, `conversation:${conv}`);
    assert.equal(event.payload.id, message.id);
    assert.equal(event.payload.content, "live hello");
    assert.ok(elapsed < 1_000, `${elapsed} ms`);
  } finally {
    stream.close();
  }
});

test("[realtime] long-poll delivers a new message to the other participant within 1 s", async () => {
  const conv = await conversationOf(alice, bob);
  const first = await expectJson(
    await fetch(`${base}/api/realtime/poll?topics=conversation:${conv}&timeout=0`, {
      headers: auth(bob),
    }),
    200,
  );
  assert.deepEqual(first.events, []);
  assert.ok(first.cursor);
  const waiting = fetch(
    `${base}/api/realtime/poll?topics=conversation:${conv}&cursor=${first.cursor}&timeout=10`,
    { headers: auth(bob) },
  );
  await new Promise((r) => setTimeout(r, 100));
  const sentAt = performance.now();
  const message = await post(alice, conv, "poll hello");
  const answer = await expectJson(await waiting, 200);
  const elapsed = performance.now() - sentAt;
  assert.ok(elapsed < 1_000, `${elapsed} ms`);
  assert.equal(answer.events.length, 1);
  assert.equal(answer.events[0].event, "message.created");
  assert.equal(answer.events[0].payload.id, message.id);
  assert.equal(answer.cursor, answer.events[0].id);
  const again = await expectJson(
    await fetch(
      `${base}/api/realtime/poll?topics=conversation:${conv}&cursor=${answer.cursor}&timeout=0`,
      { headers: auth(bob) },
    ),
    200,
  );
  assert.deepEqual(again.events, [], "nothing is delivered twice");
});

test("[realtime] long-poll answers at once when events wait after the cursor", async () => {
  const conv = await conversationOf(alice, bob, "group");
  const start = await expectJson(
    await fetch(`${base}/api/realtime/poll?topics=conversation:${conv}&timeout=0`, {
      headers: auth(bob),
    }),
    200,
  );
  await post(alice, conv, "one");
  await post(alice, conv, "two");
  const began = performance.now();
  const answer = await expectJson(
    await fetch(
      `${base}/api/realtime/poll?topics=conversation:${conv}&cursor=${start.cursor}&timeout=30`,
      { headers: auth(bob) },
    ),
    200,
  );
  assert.ok(performance.now() - began < 1_000);
  assert.deepEqual(answer.events.map((e: { payload: { content: string } }) => e.payload.content), [
    "one",
    "two",
  ]);
});

test("[realtime] a topic the caller may not read is 403 on SSE and long-poll; anonymous is 401; bad input 400", async () => {
  const conv = await conversationOf(alice, bob);
  for (const path of ["sse", "poll"]) {
    await expectError(
      await fetch(`${base}/api/realtime/${path}?topics=conversation:${conv}&timeout=0`, {
        headers: auth(stranger),
      }),
      403,
      "forbidden",
    );
    await expectError(
      await fetch(`${base}/api/realtime/${path}?topics=user:${bob.user.id}&timeout=0`, {
        headers: auth(alice),
      }),
      403,
    );
    await expectError(
      await fetch(`${base}/api/realtime/${path}?topics=admin&timeout=0`, { headers: auth(alice) }),
      403,
    );
    await expectError(
      await fetch(`${base}/api/realtime/${path}?topics=conversation:${conv},nonsense&timeout=0`, {
        headers: auth(alice),
      }),
      403,
    );
    await expectError(
      await fetch(`${base}/api/realtime/${path}?topics=conversation:${conv}&timeout=0`),
      401,
    );
    await expectError(
      await fetch(`${base}/api/realtime/${path}?topics=&timeout=0`, { headers: auth(alice) }),
      400,
    );
  }
  await expectError(
    await fetch(`${base}/api/realtime/sse?topics=conversation:${conv}`, {
      headers: { ...auth(alice), "last-event-id": "garbage" },
    }),
    400,
  );
  await expectError(
    await fetch(`${base}/api/realtime/poll?topics=conversation:${conv}&cursor=garbage`, {
      headers: auth(alice),
    }),
    400,
  );
  await expectError(
    await fetch(`${base}/api/realtime/poll?topics=conversation:${conv}&timeout=31`, {
      headers: auth(alice),
    }),
    400,
  );
  const own = await fetch(`${base}/api/realtime/poll?topics=user:${alice.user.id}&timeout=0`, {
    headers: auth(alice),
  });
  assert.equal(own.status, 200);
  await own.body?.cancel();
});

test("[realtime] SSE resumes from Last-Event-ID with exactly the missed events", async () => {
  const conv = await conversationOf(alice, bob, "group");
  let stream = await openSse(`${base}/api/realtime/sse?topics=conversation:${conv}`, auth(bob));
  await stream.next();
  await post(alice, conv, "seen");
  const seen = await stream.next(2_000);
  assert.equal(JSON.parse(seen!.data).payload.content, "seen");
  stream.close();
  await post(alice, conv, "missed 1");
  await post(alice, conv, "missed 2");
  stream = await openSse(`${base}/api/realtime/sse?topics=conversation:${conv}`, {
    ...auth(bob),
    "last-event-id": seen!.id!,
  });
  try {
    const ready = await stream.next();
    assert.equal(ready?.event, "ready");
    const a = await stream.next(2_000);
    const b = await stream.next(2_000);
    assert.deepEqual([a, b].map((f) => JSON.parse(f!.data).payload.content), [
      "missed 1",
      "missed 2",
    ]);
    assert.equal(await stream.next(300), null, "nothing else, nothing twice");
  } finally {
    stream.close();
  }
});

test("[realtime] typing reaches live subscribers without an id and is never stored", async () => {
  const typer = await signInAs(t, "MEMBER");
  const watcher = await signInAs(t, "MEMBER");
  const conv = await conversationOf(typer, watcher);
  const stream = await openSse(
    `${base}/api/realtime/sse?topics=conversation:${conv}`,
    auth(watcher),
  );
  try {
    await stream.next();
    const response = await t.request("POST", `/api/conversations/${conv}/typing`, {
      token: typer.accessToken,
      body: { isTyping: true },
    });
    assert.equal((await expectJson(response, 202)).sent, true);
    let frame = await stream.next(1_000);
    while (frame && frame.event !== "typing") frame = await stream.next(1_000);
    assert.ok(frame, "the typing event arrived");
    assert.equal(frame.id, undefined, "no resume id");
    const event = JSON.parse(frame.data);
    assert.equal(event.payload.userId, typer.user.id);
    assert.equal(event.payload.isTyping, true);
    assert.ok(Date.parse(event.payload.expiresAt) > Date.now());
    const [{ n }] = await t.deps
      .sql`select count(*)::int as n from app.events where topic = ${`conversation:${conv}`} and event = 'typing'`;
    assert.equal(n, 0);
  } finally {
    stream.close();
  }
});

test("[realtime] a participant removed from a group has their stream closed", async () => {
  const carol = await signInAs(t, "MEMBER");
  const g = await conversationOf(alice, carol, "group");
  const stream = await openSse(`${base}/api/realtime/sse?topics=conversation:${g}`, auth(carol));
  await stream.next();
  const removed = await t.request(
    "DELETE",
    `/api/conversations/${g}/participants/${carol.user.id}`,
    { token: alice.accessToken },
  );
  assert.equal(removed.status, 200);
  let frame = await stream.next(2_000);
  assert.equal(frame?.event, "participant.removed");
  await post(alice, g, "after removal");
  frame = await stream.next(2_000);
  assert.equal(frame, null, "the stream ended and nothing more arrives");
  stream.close();
});

test("[realtime] signing out ends the SSE stream at the next heartbeat", async () => {
  const dave = await signInAs(t, "MEMBER");
  const stream = await openSse(`${base}/api/realtime/sse?topics=user:${dave.user.id}`, auth(dave));
  await stream.next();
  await t.request("POST", "/api/auth/signout", { token: dave.accessToken });
  assert.equal(await stream.next(3_000), null);
  stream.close();
});

test("[realtime] a new conversation notifies each participant on user:<id>", async () => {
  const erin = await signInAs(t, "MEMBER");
  const frank = await signInAs(t, "MEMBER");
  const stream = await openSse(
    `${base}/api/realtime/sse?topics=user:${frank.user.id}`,
    auth(frank),
  );
  try {
    await stream.next();
    const conv = await conversationOf(erin, frank);
    const frame = await stream.next(2_000);
    assert.equal(frame?.event, "conversation.joined");
    assert.equal(JSON.parse(frame!.data).payload.conversationId, conv);
  } finally {
    stream.close();
  }
});
