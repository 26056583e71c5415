/**
 * The client transport (web/realtime/transport.ts) against a real stack server: the WebSocket
 * path in order and once, the WebSocket and then SSE cut mid-stream with every event still
 * delivered exactly once and in order, a token refreshed without dropping the subscription on
 * each transport, a refused topic, and the climb back to the WebSocket.
 */
import assert from "node:assert/strict";
import {
  expectJson,
  signAsApp,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import {
  createTransport,
  type RealtimeEnvelope,
  type TransportError,
  type TransportKind,
} from "../../web/realtime/transport.ts";

const t = testApp({ AGORA_SSE_HEARTBEAT_MS: "500" });
const server = startStackServer(t.deps, { port: 0 });
await server.gateway.ready;
const base = `http://127.0.0.1:${server.port}`;
const anonKey = await t.deps.tokens.apiKey("anon");

/** A port nothing listens on: connecting there is refused, as when the path is gone. */
const deadPort = (() => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
})();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function conversation(creator: SignedIn, others: SignedIn[]): Promise<string> {
  const response = await t.request("POST", "/api/conversations", {
    token: creator.accessToken,
    body: { type: "group", participantIds: others.map((o) => o.user.id), title: "Transport" },
  });
  return (await expectJson(response, 201)).id;
}

async function post(sender: SignedIn, conversationId: string, content: string): Promise<void> {
  const response = await t.request("POST", `/api/conversations/${conversationId}/messages`, {
    token: sender.accessToken,
    body: { content },
  });
  assert.equal(response.status, 201, await response.text());
}

/** The log's cursor of "now", as the reader sees it. */
async function cursorNow(reader: SignedIn, topic: string): Promise<string> {
  const response = await fetch(`${base}/api/realtime/poll?topics=${topic}&timeout=0`, {
    headers: { authorization: `Bearer ${reader.accessToken}` },
  });
  return (await expectJson(response, 200)).cursor;
}

/** The topic's durable events after `after`, in cursor order, straight from app.events. */
async function logIds(topic: string, after: string): Promise<string[]> {
  const [xid, id] = after.split(".");
  const rows = await t.deps.sql<{ id: string }[]>`
    select xid::text || '.' || id::text as id from app.events
    where topic = ${topic} and (xid, id) > (${xid}::text::xid8, ${id}::bigint)
    order by xid, id`;
  return rows.map((r) => r.id);
}

const durable = (events: RealtimeEnvelope[]) =>
  events.filter((e) => !e.id.startsWith("ephemeral.")).map((e) => e.id);

/** A WebSocket the test can cut: live sockets close, new ones are refused. */
function switchableWebSocket() {
  const state = { on: true, opened: 0, live: new Set<WebSocket>(), sent: [] as string[] };
  class Switchable extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(state.on ? url : `ws://127.0.0.1:${deadPort}/realtime/v1/websocket`, protocols);
      state.opened++;
      state.live.add(this);
      this.addEventListener("close", () => state.live.delete(this));
    }
    override send(data: string | ArrayBufferLike | Blob | ArrayBufferView) {
      if (typeof data === "string") state.sent.push(data);
      super.send(data);
    }
  }
  return {
    state,
    WebSocket: Switchable as typeof WebSocket,
    cut() {
      state.on = false;
      for (const socket of state.live) socket.close(4000, "path cut by the test");
    },
  };
}

/** A fetch that records what it sends and can cut SSE: open streams error, new ones fail. */
function switchableFetch() {
  const state = {
    sseOn: true,
    requests: [] as { path: string; token: string; status: number; at: number }[],
  };
  const open = new Map<ReadableStreamDefaultController<Uint8Array>, () => void>();
  const wrapped: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const path = url.pathname.split("/").pop()!;
    const token = new Headers(init?.headers).get("authorization")?.slice("Bearer ".length) ?? "";
    if (path === "sse" && !state.sseOn) throw new TypeError("the SSE path is cut by the test");
    const at = Date.now();
    const response = await fetch(input, init);
    state.requests.push({ path, token, status: response.status, at });
    if (path !== "sse" || !response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        open.set(controller, () => reader.cancel().catch(() => {}));
      },
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            open.delete(controller);
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          open.delete(controller);
          controller.error(err);
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return {
    state,
    fetch: wrapped,
    cutSse() {
      state.sseOn = false;
      for (const [controller, cancel] of open) {
        controller.error(new TypeError("the SSE path is cut by the test"));
        cancel();
      }
      open.clear();
    },
  };
}

test("[transport] over the WebSocket, concurrent senders' events arrive in cursor order, once; typing too", async () => {
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "MEMBER");
  const carol = await signInAs(t, "MEMBER");
  const conv = await conversation(alice, [bob, carol]);
  const topic = `conversation:${conv}`;
  const before = await cursorNow(bob, topic);
  const ws = switchableWebSocket();
  const changes: TransportKind[] = [];
  const received: RealtimeEnvelope[] = [];
  const transport = createTransport({
    baseUrl: base,
    anonKey,
    getAccessToken: () => Promise.resolve(bob.accessToken),
    WebSocket: ws.WebSocket,
    onTransportChange: (kind) => changes.push(kind),
  });
  const subscription = transport.subscribe(topic, (e) => received.push(e));
  try {
    await waitUntil(() => changes.includes("websocket"), "the WebSocket join");
    // As fast as they can: their broadcasts then reach the WebSocket in commit order, which
    // is not cursor order (a few in a hundred arrive after a later cursor).
    await Promise.all([alice, bob, carol].map(async (sender, k) => {
      for (let i = 0; i < 40; i++) await post(sender, conv, `${k}:${i}`);
    }));
    const typing = await t.request("POST", `/api/conversations/${conv}/typing`, {
      token: alice.accessToken,
      body: { isTyping: true },
    });
    assert.equal((await expectJson(typing, 202)).sent, true);
    const expected = await logIds(topic, before);
    assert.equal(expected.length, 120);
    await waitUntil(
      () => durable(received).length >= 120 && received.some((e) => e.event === "typing"),
      "every event",
      5_000,
    );
    await sleep(300);
    assert.deepEqual(durable(received), expected, "the log, in order, once");
    assert.equal(received.filter((e) => e.event === "typing").length, 1, "typing once");
    assert.ok(received.every((e) => e.topic === topic));
    assert.deepEqual(changes, ["websocket"]);
    assert.equal(ws.state.opened, 1, "one socket all along");
  } finally {
    subscription.unsubscribe();
    transport.close();
  }
});

test("[transport] the WebSocket, then SSE, cut mid-stream: every event still arrives, in order, once", async () => {
  const senders = [
    await signInAs(t, "MEMBER"),
    await signInAs(t, "MEMBER"),
    await signInAs(t, "MEMBER"),
  ];
  const watcher = await signInAs(t, "MEMBER");
  const conv = await conversation(senders[0], [...senders.slice(1), watcher]);
  const topic = `conversation:${conv}`;
  const start = await cursorNow(watcher, topic);
  const ws = switchableWebSocket();
  const net = switchableFetch();
  const changes: TransportKind[] = [];
  const errors: TransportError[] = [];
  const received: { event: RealtimeEnvelope; over: TransportKind | undefined }[] = [];
  const transport = createTransport({
    baseUrl: base,
    anonKey,
    getAccessToken: () => Promise.resolve(watcher.accessToken),
    startCursor: start,
    backoffMs: 100,
    pollTimeoutSeconds: 5,
    fetch: net.fetch,
    WebSocket: ws.WebSocket,
    onTransportChange: (kind) => changes.push(kind),
    onError: (error) => errors.push(error),
  });
  const subscription = transport.subscribe(
    topic,
    (event) => received.push({ event, over: changes.at(-1) }),
  );
  try {
    await waitUntil(() => changes.includes("websocket"), "the WebSocket join");
    let sent = 0;
    // 150 messages from 3 concurrent senders. They keep posting while each path is cut and the
    // transport switches; they only hold (at 60 and 110) if the next transport is not up yet,
    // so that every transport carries part of the stream.
    const posting = Promise.all(senders.map(async (sender, k) => {
      for (let i = 0; i < 50; i++) {
        if (sent >= 60) await waitUntil(() => changes.includes("sse"), "SSE");
        if (sent >= 110) await waitUntil(() => changes.includes("poll"), "long-poll");
        await post(sender, conv, `${k}:${i}`);
        sent++;
        await sleep(25);
      }
    }));
    await waitUntil(() => received.length >= 30, "30 events over the WebSocket");
    ws.cut();
    await waitUntil(() => changes.includes("sse"), "the fallback to SSE");
    const atSse = received.length;
    await waitUntil(() => received.length >= atSse + 20, "20 events over SSE");
    net.cutSse();
    await waitUntil(() => changes.includes("poll"), "the fallback to long-poll");
    await posting;
    const expected = await logIds(topic, start);
    assert.equal(expected.length, 150);
    await waitUntil(() => received.length >= expected.length, "every event");
    await sleep(500);
    assert.deepEqual(
      received.map((r) => r.event.id),
      expected,
      "exactly the log's events, in order, once",
    );
    assert.deepEqual(changes, ["websocket", "sse", "poll"]);
    for (const kind of ["websocket", "sse", "poll"] as const) {
      assert.ok(received.some((r) => r.over === kind), `some events arrived over ${kind}`);
    }
    assert.deepEqual(errors, []);
  } finally {
    subscription.unsubscribe();
    transport.close();
  }
});

for (const kind of ["websocket", "sse", "poll"] as const) {
  test(`[transport] a refreshed token keeps the ${kind} subscription alive past the old token's expiry and session`, async () => {
    const alice = await signInAs(t, "MEMBER");
    const bob = await signInAs(t, "MEMBER");
    const conv = await conversation(alice, [bob]);
    const topic = `conversation:${conv}`;
    const start = await cursorNow(bob, topic);
    // The first token dies in 3 s; the next comes from a second sign-in (another session).
    const claims = JSON.parse(
      atob(bob.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
    );
    const expiresAt = Math.floor(Date.now() / 1000) + 3;
    const shortLived = await signAsApp(t, { ...claims, exp: expiresAt });
    const second = await signIn(t, bob.user.email);
    let calls = 0;
    let refreshedAt = 0;
    const ws = switchableWebSocket();
    const net = switchableFetch();
    const changes: TransportKind[] = [];
    const errors: TransportError[] = [];
    const received: RealtimeEnvelope[] = [];
    const transport = createTransport({
      baseUrl: base,
      anonKey,
      getAccessToken: () => {
        if (calls++ === 0) return Promise.resolve(shortLived);
        refreshedAt ||= Date.now();
        return Promise.resolve(second.accessToken);
      },
      startCursor: start,
      transports: [kind],
      pollTimeoutSeconds: 2,
      fetch: net.fetch,
      WebSocket: ws.WebSocket,
      onTransportChange: (k) => changes.push(k),
      onError: (error) => errors.push(error),
    });
    const subscription = transport.subscribe(topic, (e) => received.push(e));
    try {
      await waitUntil(() => changes.includes(kind), kind);
      for (let i = 0; i < 3; i++) await post(alice, conv, `before ${i}`);
      await waitUntil(() => received.length >= 3, "the first events");
      await waitUntil(() => calls >= 2, "the refresh ahead of expiry", 5_000);
      // Past the first token's expiry: a channel still holding it would be closed now.
      await sleep(Math.max(0, expiresAt * 1000 + 1_000 - Date.now()));
      // The first session ends; only the refreshed token can still read the topic.
      const signout = await t.request("POST", "/api/auth/signout", { token: bob.accessToken });
      assert.equal(signout.status, 200);
      await sleep(1_000);
      for (let i = 0; i < 3; i++) await post(alice, conv, `after ${i}`);
      await waitUntil(() => received.length >= 6, "the events after the refresh");
      await sleep(300);
      assert.deepEqual(durable(received), await logIds(topic, start));
      assert.equal(received.length, 6);
      assert.deepEqual(changes, [kind]);
      assert.deepEqual(errors, []);
      assert.ok(net.state.requests.every((r) => r.status === 200), "no request was refused");
      const later = net.state.requests.filter((r) => r.at > refreshedAt + 100);
      assert.ok(later.every((r) => r.token === second.accessToken), "the new token is used");
      if (kind === "websocket") {
        const frames = ws.state.sent.map((text) => JSON.parse(text));
        const joins = frames.filter((f) => f[3] === "phx_join");
        const tokens = frames.filter((f) => f[3] === "access_token");
        assert.equal(ws.state.opened, 1, "one socket");
        assert.equal(joins.length, 1, "joined once: the channel was never dropped");
        assert.ok(tokens.some((f) => f[4].access_token === second.accessToken));
      } else {
        assert.ok(later.length > 0, "requests were made with the new token");
      }
    } finally {
      subscription.unsubscribe();
      transport.close();
    }
  });
}

test("[transport] a topic the user may not read is reported once through onError (403)", async () => {
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "MEMBER");
  const stranger = await signInAs(t, "MEMBER");
  const conv = await conversation(alice, [bob]);
  const errors: TransportError[] = [];
  const changes: TransportKind[] = [];
  const net = switchableFetch();
  const transport = createTransport({
    baseUrl: base,
    anonKey,
    getAccessToken: () => Promise.resolve(stranger.accessToken),
    backoffMs: 50,
    fetch: net.fetch,
    onTransportChange: (kind) => changes.push(kind),
    onError: (error) => errors.push(error),
  });
  const subscription = transport.subscribe(`conversation:${conv}`, () => {
    throw new Error("no event expected");
  });
  try {
    await waitUntil(() => errors.length > 0, "the error");
    const requests = net.state.requests.length;
    await sleep(500);
    assert.equal(errors.length, 1);
    assert.equal(errors[0].status, 403);
    assert.deepEqual(changes, []);
    assert.equal(net.state.requests.length, requests, "the feed stopped");
  } finally {
    subscription.unsubscribe();
    transport.close();
  }
});

test("[transport] after a fallback it climbs back to the WebSocket once that works again", async () => {
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "MEMBER");
  const conv = await conversation(alice, [bob]);
  const topic = `conversation:${conv}`;
  const start = await cursorNow(bob, topic);
  const ws = switchableWebSocket();
  ws.cut();
  const changes: TransportKind[] = [];
  const received: RealtimeEnvelope[] = [];
  const transport = createTransport({
    baseUrl: base,
    anonKey,
    getAccessToken: () => Promise.resolve(bob.accessToken),
    startCursor: start,
    backoffMs: 50,
    retryWebSocketAfterMs: 1_000,
    WebSocket: ws.WebSocket,
    onTransportChange: (kind) => changes.push(kind),
  });
  const subscription = transport.subscribe(topic, (e) => received.push(e));
  try {
    await waitUntil(() => changes.includes("sse"), "SSE");
    await post(alice, conv, "over SSE");
    // A probe while the WebSocket is still down goes straight back to SSE.
    await sleep(1_500);
    assert.deepEqual(changes, ["sse"]);
    ws.state.on = true;
    await post(alice, conv, "while climbing");
    await waitUntil(() => changes.includes("websocket"), "the climb back", 5_000);
    await post(alice, conv, "over the WebSocket");
    await waitUntil(() => received.length >= 3, "every event");
    await sleep(300);
    assert.deepEqual(durable(received), await logIds(topic, start));
    assert.deepEqual(changes, ["sse", "websocket"]);
  } finally {
    subscription.unsubscribe();
    transport.close();
  }
});

test("[transport] a topic subscribed with transports: [websocket] never falls back; the others on the same transport do", async () => {
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "MEMBER");
  const open = await conversation(alice, [bob]);
  const side = await conversation(alice, [bob]);
  const ws = switchableWebSocket();
  ws.cut();
  const changes: { kind: TransportKind; topic: string }[] = [];
  const received: RealtimeEnvelope[] = [];
  const transport = createTransport({
    baseUrl: base,
    anonKey,
    getAccessToken: () => Promise.resolve(bob.accessToken),
    backoffMs: 50,
    retryWebSocketAfterMs: 0,
    WebSocket: ws.WebSocket,
    onTransportChange: (kind, topic) => changes.push({ kind, topic }),
  });
  const full = transport.subscribe(`conversation:${open}`, (e) => received.push(e));
  const wsOnly = transport.subscribe(`conversation:${side}`, (e) => received.push(e), {
    transports: ["websocket"],
  });
  try {
    await waitUntil(
      () => changes.some((c) => c.topic === `conversation:${open}` && c.kind === "sse"),
      "the full feed's fallback to SSE",
    );
    // Well past the three failures that moved the other feed down.
    await waitUntil(() => ws.state.opened >= 8, "the ws-only feed's retries");
    assert.ok(
      !changes.some((c) => c.topic === `conversation:${side}`),
      "the ws-only feed reported no transport while the socket is down",
    );
    ws.state.on = true;
    await waitUntil(
      () => changes.some((c) => c.topic === `conversation:${side}` && c.kind === "websocket"),
      "the ws-only feed on the WebSocket once it works",
    );
    await post(alice, side, "to the side");
    await waitUntil(() => received.some((e) => e.topic === `conversation:${side}`), "its event");
  } finally {
    full.unsubscribe();
    wsOnly.unsubscribe();
    transport.close();
  }
});
