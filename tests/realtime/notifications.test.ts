/**
 * Notifications live, over a real HTTP server: notification.created, .read and .deleted reach
 * the inbox's owner on user:<id> through the event log, over SSE within 1 s and over
 * long-polling; another user cannot subscribe to someone else's inbox.
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
const admin = await signInAs(t, "ADMIN");
const auth = (s: SignedIn) => ({ authorization: `Bearer ${s.accessToken}` });

test("[notifications live] SSE delivers notification.created, .read and .deleted to the inbox within 1 s", async () => {
  const me = await signInAs(t, "MEMBER");
  const stream = await openSse(`${base}/api/realtime/sse?topics=user:${me.user.id}`, auth(me));
  try {
    assert.equal((await stream.next())?.event, "ready");

    let sentAt = performance.now();
    const created = await expectJson(
      await t.request("POST", "/api/notifications", {
        token: admin.accessToken,
        body: { userId: me.user.id, type: "SYSTEM", title: "Live one", body: "hello" },
      }),
      201,
    );
    let frame = await stream.next(1_000);
    assert.ok(frame, "a frame within 1 s");
    assert.ok(performance.now() - sentAt < 1_000);
    assert.equal(frame.event, "notification.created");
    const event = JSON.parse(frame.data);
    assert.equal(event.topic, `user:${me.user.id}`);
    assert.deepEqual(event.payload, {
      id: created.id,
      type: "SYSTEM",
      title: "Live one",
      body: "hello",
      data: {},
      priority: "normal",
      readAt: null,
      createdAt: created.createdAt,
    });

    sentAt = performance.now();
    const read = await expectJson(
      await t.request("PUT", `/api/notifications/${created.id}/read`, { token: me.accessToken }),
      200,
    );
    frame = await stream.next(1_000);
    assert.ok(performance.now() - sentAt < 1_000);
    assert.equal(frame?.event, "notification.read");
    assert.equal(JSON.parse(frame!.data).payload.readAt, read.readAt);

    sentAt = performance.now();
    await expectJson(
      await t.request("DELETE", `/api/notifications/${created.id}`, { token: me.accessToken }),
      200,
    );
    frame = await stream.next(1_000);
    assert.ok(performance.now() - sentAt < 1_000);
    assert.equal(frame?.event, "notification.deleted");
    assert.equal(JSON.parse(frame!.data).payload.id, created.id);
  } finally {
    stream.close();
  }
});

/** Waits until the digest job (run by the server's own worker) covered message `seq`. */
async function waitForDigest(conversationId: string, seq: number) {
  for (let waited = 0; waited < 5_000; waited += 50) {
    const [row] = await t.deps.sql<{ seq: number }[]>`
      select digested_seq::int as seq from app_private.message_digests
      where conversation_id = ${conversationId}`;
    if (row && row.seq >= seq) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no digest covered message ${seq} within 5 s`);
}

test("[notifications live] a conversation reaches the other participant's inbox live; its messages fold in silently (the digest, within seconds) until it is read", async () => {
  const ann = await signInAs(t, "MEMBER");
  const bo = await signInAs(t, "MEMBER");
  const stream = await openSse(`${base}/api/realtime/sse?topics=user:${bo.user.id}`, auth(bo));
  const drainFrames = async () => {
    const frames: { event: string; payload: Record<string, unknown> }[] = [];
    for (let frame = await stream.next(1_000); frame; frame = await stream.next(300)) {
      frames.push({ event: frame.event, payload: JSON.parse(frame.data).payload });
    }
    return frames;
  };
  const send = async (content: string) =>
    await expectJson(
      await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
        token: ann.accessToken,
        body: { content },
      }),
      201,
    );
  let conversation = { id: "" };
  try {
    await stream.next();
    conversation = await expectJson(
      await t.request("POST", "/api/conversations", {
        token: ann.accessToken,
        body: { type: "direct", participantIds: [bo.user.id] },
      }),
      201,
    );
    const joined = await drainFrames();
    assert.deepEqual(joined.map((f) => f.event), ["conversation.joined", "notification.created"]);
    assert.equal(joined[1].payload.type, "MESSAGE");
    assert.deepEqual(joined[1].payload.data, {
      conversationId: conversation.id,
      messageId: null,
      count: 0,
    });

    await send("first");
    const last = await send("second");
    // The digest (the server's worker runs it a second after the first send) folds them into
    // the unread notification: silently.
    await waitForDigest(conversation.id, last.seq);
    assert.deepEqual(
      await drainFrames(),
      [],
      "messages fold into the unread notification silently",
    );

    await expectJson(
      await t.request("PUT", `/api/messages/${last.id}/read`, { token: bo.accessToken }),
      200,
    );
    const read = await drainFrames();
    assert.deepEqual(read.map((f) => f.event), ["notification.read"]);
    assert.equal((read[0].payload.data as { count: number }).count, 2);

    const third = await send("third");
    await waitForDigest(conversation.id, third.seq);
    const fresh = await drainFrames();
    assert.deepEqual(fresh.map((f) => f.event), ["notification.created"]);
    assert.deepEqual(fresh[0].payload.data, {
      conversationId: conversation.id,
      messageId: third.id,
      count: 1,
    });
  } finally {
    stream.close();
  }
});

test("[notifications live] long-polling delivers notification events too; another user's inbox topic is refused", async () => {
  const me = await signInAs(t, "MEMBER");
  const other = await signInAs(t, "MEMBER");
  const first = await expectJson(
    await fetch(`${base}/api/realtime/poll?topics=user:${me.user.id}&timeout=0`, {
      headers: auth(me),
    }),
    200,
  );
  const waiting = fetch(
    `${base}/api/realtime/poll?topics=user:${me.user.id}&cursor=${first.cursor}&timeout=10`,
    { headers: auth(me) },
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  const created = await expectJson(
    await t.request("POST", "/api/notifications", {
      token: me.accessToken,
      body: { type: "ENTITY", title: "Polled", body: "" },
    }),
    201,
  );
  const answer = await expectJson(await waiting, 200);
  assert.deepEqual(
    answer.events.map((e: { event: string; payload: { id: string } }) => [e.event, e.payload.id]),
    [["notification.created", created.id]],
  );
  await expectError(
    await fetch(`${base}/api/realtime/poll?topics=user:${me.user.id}&timeout=0`, {
      headers: auth(other),
    }),
    403,
  );
});

globalThis.addEventListener("unload", () => server.shutdown());
