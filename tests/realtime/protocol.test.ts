/**
 * The Realtime gateway on the wire, frame by frame, held to what supabase/realtime (Phoenix
 * channels) sends: refusals before the upgrade, both protocol versions, heartbeats, join and leave
 * and their errors, duplicate joins and stale join refs, token refresh, public and private
 * channels, database broadcasts, binary frames, the write policy, limits, presence shapes and
 * several gateway processes.
 *
 * Negative checks ("X does not arrive") need no sleeps: a client's frames are handled in order, so
 * once a heartbeat sent after X is answered, X was handled; a heartbeat round trip on the receiver
 * then proves that whatever X would have caused has arrived (frames on one socket keep order).
 */
import assert from "node:assert/strict";
import { decodeJwt, SignJWT } from "jose";
import { expectJson, type SignedIn, signIn, signInAs, test, testApp } from "../support/helpers.ts";
import { type StackServer, startStackServer } from "../../stack/server.ts";
import type { GatewayLimits } from "../../stack/realtime/settings.ts";
import { RawClient, type RawFrame } from "./raw-client.ts";

type Vsn = "1.0.0" | "2.0.0";
const VERSIONS: Vsn[] = ["1.0.0", "2.0.0"];

const GENEROUS: GatewayLimits = {
  connectionsPerIp: 10_000,
  channelsPerConnection: 100,
  joinsPerSecond: 100,
  payloadBytes: 262_144,
  idleTimeoutMs: 60_000,
};

const t = testApp();
const server = startStackServer(t.deps, { port: 0, realtimeLimits: GENEROUS });
await server.gateway.ready;
const anonKey = await t.deps.tokens.apiKey("anon");
const serviceKey = await t.deps.tokens.apiKey("service_role");
const secret = new TextEncoder().encode(t.deps.settings.jwtSecret);
const foreignSecret = new TextEncoder().encode("another-project-entirely-with-its-own-jwt-secret");
const encoder = new TextEncoder();

// --- clients ---------------------------------------------------------------------------------

const clients: RawClient[] = [];
/** Every frame each client received, as sent (text or bytes). */
const wire = new Map<RawClient, (string | Uint8Array)[]>();

function socketUrl(port: number, params: Record<string, string | undefined>): string {
  const url = new URL(`ws://127.0.0.1:${port}/realtime/v1/websocket`);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(key, value);
  }
  return url.toString();
}

async function connect(
  vsn: Vsn,
  opts: { apikey?: string; port?: number; omitVsn?: boolean } = {},
): Promise<RawClient> {
  const url = socketUrl(opts.port ?? server.port, {
    apikey: opts.apikey ?? anonKey,
    vsn: opts.omitVsn ? undefined : vsn,
  });
  const client = await RawClient.open(url, vsn);
  const log: (string | Uint8Array)[] = [];
  client.ws.addEventListener("message", (e) => {
    log.push(typeof e.data === "string" ? e.data : new Uint8Array(e.data as ArrayBuffer));
  });
  wire.set(client, log);
  clients.push(client);
  return client;
}

function closeAll() {
  for (const c of clients.splice(0)) c.close();
}

/** A test's own server with the given limits, shut down afterwards. */
async function withServer(
  limits: Partial<GatewayLimits>,
  fn: (s: StackServer) => Promise<void>,
): Promise<void> {
  const s = startStackServer(t.deps, { port: 0, realtimeLimits: { ...GENEROUS, ...limits } });
  await s.gateway.ready;
  try {
    await fn(s);
  } finally {
    closeAll();
    await s.shutdown();
  }
}

/** The answer to a WebSocket upgrade request that the gateway refuses. */
async function refusedUpgrade(
  params: Record<string, string | undefined>,
  headers: Record<string, string> = {},
  port = server.port,
): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(socketUrl(port, params).replace(/^ws:/, "http:"), {
    headers: {
      upgrade: "websocket",
      connection: "Upgrade",
      "sec-websocket-key": btoa("0123456789abcdef"),
      "sec-websocket-version": "13",
      ...headers,
    },
  });
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: await response.text(),
  };
}

// --- frames ----------------------------------------------------------------------------------

let refCounter = 0;
const newRef = () => String(++refCounter);
const uid = () => crypto.randomUUID().slice(0, 8);

const isReply = (ref: string) => (f: RawFrame) => f.event === "phx_reply" && f.ref === ref;
const isClose = (topic: string) => (f: RawFrame) => f.event === "phx_close" && f.topic === topic;
const isSystem = (topic: string) => (f: RawFrame) => f.event === "system" && f.topic === topic;
const isBroadcast = (sub: string, event?: string) => (f: RawFrame) =>
  f.event === "broadcast" && f.topic === `realtime:${sub}` &&
  (event === undefined || f.payload.event === event);
const isPresence = (sub: string, event: string) => (f: RawFrame) =>
  f.event === event && f.topic === `realtime:${sub}`;

interface Wire {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: unknown;
}

/**
 * The last text frame `c` received for (topic, event, ref) is exactly what the real server sends:
 * `[join_ref, ref, topic, event, payload]` on 2.0.0, `{ topic, event, payload, ref }` on 1.0.0
 * (Phoenix's V1 serializer never sends join_ref).
 */
function assertWire(c: RawClient, expected: Wire) {
  const frames = wire.get(c)!.filter((m): m is string => typeof m === "string").map((m) =>
    JSON.parse(m)
  );
  const matching = frames.filter((m) =>
    c.vsn === "2.0.0"
      ? m[1] === expected.ref && m[2] === expected.topic && m[3] === expected.event
      : m.ref === expected.ref && m.topic === expected.topic && m.event === expected.event
  );
  assert.ok(
    matching.length,
    `a ${expected.event} frame on ${expected.topic} (ref ${expected.ref})`,
  );
  assert.deepEqual(
    matching.at(-1),
    c.vsn === "2.0.0"
      ? [expected.joinRef, expected.ref, expected.topic, expected.event, expected.payload]
      : {
        topic: expected.topic,
        event: expected.event,
        payload: expected.payload,
        ref: expected.ref,
      },
  );
}

/** Index in the wire log of the last text frame matching (event, ref) on topic. */
function wireIndex(c: RawClient, topic: string, event: string, ref: string | null): number {
  return wire.get(c)!.findLastIndex((m) => {
    if (typeof m !== "string") return false;
    const f = JSON.parse(m);
    return c.vsn === "2.0.0"
      ? f[1] === ref && f[2] === topic && f[3] === event
      : f.ref === ref && f.topic === topic && f.event === event;
  });
}

async function heartbeat(c: RawClient): Promise<RawFrame> {
  const ref = newRef();
  c.send(null, ref, "phoenix", "heartbeat", {});
  const reply = await c.take((f) => f.topic === "phoenix" && isReply(ref)(f), 3_000);
  assert.ok(reply, "the heartbeat was answered");
  return reply;
}

/** Everything these clients sent so far was handled and its effects on them have arrived. */
async function settle(...cs: RawClient[]) {
  for (const c of cs) await heartbeat(c);
}

interface JoinOptions {
  private?: boolean;
  self?: boolean;
  ack?: boolean;
  presence?: boolean;
  presenceKey?: string;
  token?: string;
}

/** The join payload realtime-js sends. */
function joinPayload(o: JoinOptions = {}) {
  return {
    config: {
      broadcast: { self: o.self ?? false, ack: o.ack ?? false },
      presence: { key: o.presenceKey ?? "", enabled: o.presence ?? false },
      postgres_changes: [],
      private: o.private ?? false,
    },
    ...(o.token === undefined ? {} : { access_token: o.token }),
  };
}

async function join(c: RawClient, sub: string, o: JoinOptions = {}) {
  const ref = newRef();
  c.send(ref, ref, `realtime:${sub}`, "phx_join", joinPayload(o));
  const reply = await c.take(isReply(ref), 3_000);
  assert.ok(reply, `the join of ${sub} was answered`);
  return { joinRef: ref, reply };
}

/** Joins and expects `ok`; returns the join_ref. */
async function joined(c: RawClient, sub: string, o: JoinOptions = {}): Promise<string> {
  const { joinRef, reply } = await join(c, sub, o);
  assert.deepEqual(reply.payload, { status: "ok", response: { postgres_changes: [] } }, sub);
  return joinRef;
}

/** Joins and expects an error; returns its reason. */
async function refused(c: RawClient, sub: string, o: JoinOptions = {}): Promise<string> {
  const { reply } = await join(c, sub, o);
  assert.equal(reply.payload.status, "error", JSON.stringify(reply.payload));
  return (reply.payload.response as { reason: string }).reason;
}

function broadcast(
  c: RawClient,
  sub: string,
  joinRef: string | null,
  event: string,
  payload: unknown,
): string {
  const ref = newRef();
  c.send(joinRef, ref, `realtime:${sub}`, "broadcast", { type: "broadcast", event, payload });
  return ref;
}

async function received(c: RawClient, sub: string, event: string): Promise<RawFrame> {
  const frame = await c.take(isBroadcast(sub, event), 3_000);
  assert.ok(frame, `${event} on ${sub} arrived`);
  return frame;
}

/**
 * The payloads of the broadcasts on `sub` (of `event`) that arrived and were not taken yet, now
 * taken. Conversation topics also carry the server's own events (participant.added, ...), whose
 * database broadcasts may arrive after a join: checks there name their event.
 */
function takeBroadcasts(c: RawClient, sub: string, event?: string): unknown[] {
  const out: unknown[] = [];
  for (const f of c.pending().filter(isBroadcast(sub, event))) {
    out.push(f.binary ?? f.payload.payload);
    void c.take((x) => x === f, 0);
  }
  return out;
}

function track(c: RawClient, sub: string, joinRef: string, meta: unknown): string {
  const ref = newRef();
  c.send(joinRef, ref, `realtime:${sub}`, "presence", {
    type: "presence",
    event: "track",
    payload: meta,
  });
  return ref;
}

function sendAccessToken(c: RawClient, sub: string, joinRef: string, token: string | null) {
  c.send(joinRef, newRef(), `realtime:${sub}`, "access_token", { access_token: token });
}

/** A kind-3 frame ("user broadcast push"), laid out as realtime-js's serializer does. */
function userBroadcastPush(f: {
  joinRef: string;
  ref: string;
  topic: string;
  event: string;
  encoding: "binary" | "json";
  data: Uint8Array;
  metadata?: string;
}): Uint8Array {
  const fields = [f.joinRef, f.ref, f.topic, f.event, f.metadata ?? ""].map((s) =>
    encoder.encode(s)
  );
  const header = [3, ...fields.map((b) => b.length), f.encoding === "binary" ? 0 : 1];
  const out = new Uint8Array(
    header.length + fields.reduce((n, b) => n + b.length, 0) + f.data.length,
  );
  out.set(header, 0);
  let offset = header.length;
  for (const part of [...fields, f.data]) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** A kind-4 frame ("user broadcast") as the real server's V2 serializer lays it out. */
function userBroadcast(
  topic: string,
  event: string,
  encoding: "binary" | "json",
  data: Uint8Array,
  meta = "",
): Uint8Array {
  const fields = [topic, event, meta].map((s) => encoder.encode(s));
  const header = [4, ...fields.map((b) => b.length), encoding === "binary" ? 0 : 1];
  const out = new Uint8Array(
    header.length + fields.reduce((n, b) => n + b.length, 0) + data.length,
  );
  out.set(header, 0);
  let offset = header.length;
  for (const part of [...fields, data]) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const binaryFrames = (c: RawClient) =>
  wire.get(c)!.filter((m): m is Uint8Array => typeof m !== "string");

// --- tokens and conversations ----------------------------------------------------------------

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function signed(claims: Record<string, unknown>, key = secret): Promise<string> {
  return await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" }).sign(key);
}

/** The same claims as `token`, expired `secondsAgo` seconds ago. */
async function expiredCopy(token: string, secondsAgo: number): Promise<string> {
  return await signed({ ...decodeJwt(token), exp: nowSeconds() - secondsAgo });
}

async function conversation(creator: SignedIn, ...others: SignedIn[]): Promise<string> {
  const response = await t.request("POST", "/api/conversations", {
    token: creator.accessToken,
    body: { type: "group", participantIds: others.map((o) => o.user.id), title: "Protocol" },
  });
  const body = await expectJson(response, 201);
  return body.id;
}

async function removeParticipant(creator: SignedIn, conversationId: string, userId: string) {
  const response = await t.request(
    "DELETE",
    `/api/conversations/${conversationId}/participants/${userId}`,
    { token: creator.accessToken },
  );
  assert.equal(response.status, 200, await response.text());
}

// --- 1. before the upgrade -------------------------------------------------------------------

test("[gateway] the upgrade refuses a missing, malformed, expired or foreign-signed apikey with 401 and the server's message", async () => {
  const valid = { role: "anon", iss: "supabase", iat: nowSeconds() };
  const cases: [string | undefined, string][] = [
    [undefined, "API key is missing"],
    ["not-a-jwt", "The token provided is not a valid JWT"],
    ["a.b.c", "The token provided is not a valid JWT"],
    [await signed({ ...valid, exp: nowSeconds() - 60 }), "Token has expired"],
    [
      await signed({ ...valid, exp: nowSeconds() + 3_600 }, foreignSecret),
      "Failed to validate JWT signature",
    ],
    [await signed(valid), "Fields `role` and `exp` are required in JWT"],
  ];
  for (const vsn of VERSIONS) {
    for (const [apikey, error] of cases) {
      const answer = await refusedUpgrade({ apikey, vsn });
      assert.equal(answer.status, 401, `${vsn} ${error}`);
      assert.match(answer.type ?? "", /^application\/json/);
      assert.deepEqual(JSON.parse(answer.body), { error });
    }
  }
  // The x-api-key header is read before the query string, as the real server does.
  const header = await refusedUpgrade({ apikey: anonKey, vsn: "2.0.0" }, {
    "x-api-key": "not-a-jwt",
  });
  assert.equal(header.status, 401);
  assert.deepEqual(JSON.parse(header.body), { error: "The token provided is not a valid JWT" });
  // A WebSocket client sees a refused upgrade as a failed connection.
  await assert.rejects(
    RawClient.open(socketUrl(server.port, { apikey: "not-a-jwt", vsn: "2.0.0" }), "2.0.0"),
  );
});

test("[gateway] an unsupported vsn is refused before the upgrade (and before the apikey is looked at)", async () => {
  for (const vsn of ["3.0.0", "0.9.0", "two"]) {
    assert.equal((await refusedUpgrade({ apikey: anonKey, vsn })).status, 403, vsn);
    assert.equal((await refusedUpgrade({ vsn })).status, 403, `${vsn} without an apikey`);
  }
});

// --- 2. and 3. protocol versions and heartbeats ------------------------------------------------

test("[gateway] without vsn the socket speaks 1.0.0: JSON objects, never join_ref", async () => {
  try {
    const c = await connect("1.0.0", { omitVsn: true });
    const ref = newRef();
    c.send(null, ref, "phoenix", "heartbeat", {});
    assert.ok(await c.take(isReply(ref)));
    assertWire(c, {
      joinRef: null,
      ref,
      topic: "phoenix",
      event: "phx_reply",
      payload: { status: "ok", response: {} },
    });
    // A 2.0.0 array is not a 1.0.0 frame: no answer, and the socket carries on.
    c.ws.send(JSON.stringify([null, "v2-frame", "phoenix", "heartbeat", {}]));
    await heartbeat(c);
    assert.ok(!wire.get(c)!.some((m) => typeof m === "string" && m.includes("v2-frame")));
    const sub = `v1-${uid()}`;
    const joinRef = await joined(c, sub);
    assertWire(c, {
      joinRef: null,
      ref: joinRef,
      topic: `realtime:${sub}`,
      event: "phx_reply",
      payload: { status: "ok", response: { postgres_changes: [] } },
    });
    assert.ok(
      wire.get(c)!.every((m) => typeof m === "string" && !Array.isArray(JSON.parse(m))),
      "only JSON objects",
    );
  } finally {
    closeAll();
  }
});

for (const vsn of VERSIONS) {
  test(`[gateway] heartbeats on "phoenix" are answered ok {} with the same ref (${vsn})`, async () => {
    try {
      const c = await connect(vsn);
      for (let i = 0; i < 3; i++) {
        const ref = newRef();
        c.send(null, ref, "phoenix", "heartbeat", {});
        const reply = await c.take(isReply(ref));
        assert.ok(reply);
        assertWire(c, {
          joinRef: null,
          ref,
          topic: "phoenix",
          event: "phx_reply",
          payload: { status: "ok", response: {} },
        });
      }
    } finally {
      closeAll();
    }
  });

  // --- 4. join and leave -----------------------------------------------------------------------

  test(`[gateway] join, leave, unmatched topics and the topic name (${vsn})`, async () => {
    try {
      const c = await connect(vsn);
      const sub = `room-${uid()}`;
      const topic = `realtime:${sub}`;
      const joinRef = await joined(c, sub);
      assertWire(c, {
        joinRef,
        ref: joinRef,
        topic,
        event: "phx_reply",
        payload: { status: "ok", response: { postgres_changes: [] } },
      });

      const leave = newRef();
      c.send(joinRef, leave, topic, "phx_leave", {});
      const left = await c.take(isReply(leave));
      assert.deepEqual(left?.payload, { status: "ok", response: {} });
      assert.ok(await c.take(isClose(topic)), "phx_close after the leave");
      assertWire(c, {
        joinRef,
        ref: leave,
        topic,
        event: "phx_reply",
        payload: { status: "ok", response: {} },
      });
      assertWire(c, { joinRef, ref: joinRef, topic, event: "phx_close", payload: {} });
      assert.ok(
        wireIndex(c, topic, "phx_reply", leave) < wireIndex(c, topic, "phx_close", joinRef),
        "the reply comes before phx_close",
      );

      // The topic is no longer joined: messages on it are unmatched.
      const late = broadcast(c, sub, joinRef, "late", {});
      assert.deepEqual((await c.take(isReply(late)))?.payload, {
        status: "error",
        response: { reason: "unmatched topic" },
      });
      const never = `never-${uid()}`;
      for (const event of ["broadcast", "presence", "access_token"]) {
        const ref = newRef();
        c.send(null, ref, `realtime:${never}`, event, {});
        assert.deepEqual((await c.take(isReply(ref)))?.payload, {
          status: "error",
          response: { reason: "unmatched topic" },
        }, event);
      }
      // A leave for a topic not joined is answered ok (Phoenix replies to it directly).
      const stray = newRef();
      c.send(null, stray, `realtime:${never}`, "phx_leave", {});
      assert.deepEqual((await c.take(isReply(stray)))?.payload, { status: "ok", response: {} });

      const bare = newRef();
      c.send(bare, bare, "realtime:", "phx_join", joinPayload());
      assert.ok(await c.take(isReply(bare)));
      assertWire(c, {
        joinRef: bare,
        ref: bare,
        topic: "realtime:",
        event: "phx_reply",
        payload: {
          status: "error",
          response: { reason: "TopicNameRequired: You must provide a topic name" },
        },
      });
      const other = newRef();
      c.send(other, other, `room:${uid()}`, "phx_join", joinPayload());
      assert.deepEqual((await c.take(isReply(other)))?.payload, {
        status: "error",
        response: { reason: "unmatched topic" },
      });
      await heartbeat(c);
      assert.ok(!c.closed, "errors never close the socket");
    } finally {
      closeAll();
    }
  });
}

test("[gateway] an unmatched-topic reply carries no join_ref (2.0.0)", async () => {
  try {
    const c = await connect("2.0.0");
    const topic = `room:${uid()}`;
    const ref = newRef();
    c.send("j-1", ref, topic, "phx_join", joinPayload());
    assert.ok(await c.take(isReply(ref)));
    assertWire(c, {
      joinRef: null,
      ref,
      topic,
      event: "phx_reply",
      payload: { status: "error", response: { reason: "unmatched topic" } },
    });
    const binaryRef = newRef();
    c.sendBinary(userBroadcastPush({
      joinRef: "j-3",
      ref: binaryRef,
      topic: `realtime:never-${uid()}`,
      event: "x",
      encoding: "json",
      data: encoder.encode("{}"),
    }));
    const binaryReply = await c.take(isReply(binaryRef));
    assert.equal(binaryReply?.joinRef, null, "kind 3 too");
    const notJoined = `realtime:never-${uid()}`;
    const ref2 = newRef();
    c.send("j-2", ref2, notJoined, "broadcast", { type: "broadcast", event: "x", payload: {} });
    assert.ok(await c.take(isReply(ref2)));
    assertWire(c, {
      joinRef: null,
      ref: ref2,
      topic: notJoined,
      event: "phx_reply",
      payload: { status: "error", response: { reason: "unmatched topic" } },
    });
  } finally {
    closeAll();
  }
});

// --- 5. and 6. duplicate joins and stale refs ---------------------------------------------------

for (const vsn of VERSIONS) {
  test(`[gateway] a duplicate join closes the first join, then answers the new one (${vsn})`, async () => {
    try {
      const c = await connect(vsn);
      const sender = await connect(vsn);
      const sub = `dup-${uid()}`;
      const topic = `realtime:${sub}`;
      const first = await joined(c, sub);
      const second = newRef();
      c.send(second, second, topic, "phx_join", joinPayload());
      const closeFrame = await c.next((f) => f.topic === topic);
      assert.equal(closeFrame?.event, "phx_close", "first: phx_close for the old join");
      assertWire(c, { joinRef: first, ref: first, topic, event: "phx_close", payload: {} });
      const replyFrame = await c.next((f) => f.topic === topic);
      assert.equal(replyFrame?.event, "phx_reply");
      assert.equal(replyFrame?.ref, second);
      assert.deepEqual(replyFrame?.payload, {
        status: "ok",
        response: { postgres_changes: [] },
      });

      // Only one channel is in place: each broadcast arrives once.
      const s = await joined(sender, sub);
      broadcast(sender, sub, s, "m", { n: 1 });
      broadcast(sender, sub, s, "m", { n: 2 });
      await settle(sender, c);
      assert.deepEqual(takeBroadcasts(c, sub), [{ n: 1 }, { n: 2 }]);

      // A duplicate join that is refused still closes the channel in place.
      const third = newRef();
      c.send(third, third, topic, "phx_join", joinPayload({ private: true }));
      assert.equal((await c.next((f) => f.topic === topic))?.event, "phx_close");
      assertWire(c, { joinRef: second, ref: second, topic, event: "phx_close", payload: {} });
      const refusal = await c.next((f) => f.topic === topic);
      assert.equal(refusal?.ref, third);
      assert.equal(refusal?.payload.status, "error");
      broadcast(sender, sub, s, "m", { n: 3 });
      await settle(sender, c);
      assert.deepEqual(takeBroadcasts(c, sub), [], "nothing reaches the closed channel");
      const orphan = broadcast(c, sub, second, "m", {});
      assert.deepEqual((await c.take(isReply(orphan)))?.payload, {
        status: "error",
        response: { reason: "unmatched topic" },
      });
    } finally {
      closeAll();
    }
  });

  test(`[gateway] a phx_leave with an earlier join_ref is not answered and leaves the current join (${vsn})`, async () => {
    try {
      const c = await connect(vsn);
      const sender = await connect(vsn);
      const sub = `stale-${uid()}`;
      const topic = `realtime:${sub}`;
      const first = await joined(c, sub);
      const second = await joined(c, sub);
      assert.ok(await c.take(isClose(topic)));
      const staleLeave = newRef();
      c.send(first, staleLeave, topic, "phx_leave", {});
      await settle(c);
      assert.deepEqual(
        c.pending().filter((f) => f.topic === topic),
        [],
        "no reply and no phx_close for a stale leave",
      );
      const s = await joined(sender, sub);
      broadcast(sender, sub, s, "still", { here: true });
      assert.deepEqual((await received(c, sub, "still")).payload.payload, { here: true });

      const leave = newRef();
      c.send(second, leave, topic, "phx_leave", {});
      assert.deepEqual((await c.take(isReply(leave)))?.payload, { status: "ok", response: {} });
      assert.ok(await c.take(isClose(topic)));
      assertWire(c, { joinRef: second, ref: second, topic, event: "phx_close", payload: {} });
    } finally {
      closeAll();
    }
  });
}

for (const vsn of VERSIONS) {
  test(`[gateway] broadcasts and tracks with an earlier or no join_ref still reach the channel, as hosted (${vsn})`, async () => {
    // Hosted runs a Phoenix fork without 1.8.3's drop of such messages (supabase/realtime#2111);
    // only phx_leave looks at the join_ref.
    try {
      const c = await connect(vsn);
      const receiver = await connect(vsn);
      const sub = `lenient-${uid()}`;
      const topic = `realtime:${sub}`;
      await joined(receiver, sub, { presence: true });
      const first = await joined(c, sub, { ack: true });
      await joined(c, sub, { ack: true, presence: true });
      assert.ok(await c.take(isClose(topic)));
      for (const [joinRef, event] of [[first, "stale"], [null, "missing"]] as const) {
        const ref = broadcast(c, sub, joinRef, event, { joinRef });
        assert.deepEqual((await c.take(isReply(ref)))?.payload, { status: "ok", response: {} });
        assert.deepEqual((await received(receiver, sub, event)).payload.payload, { joinRef });
      }
      const tracked = newRef();
      c.send(first, tracked, topic, "presence", {
        type: "presence",
        event: "track",
        payload: { via: "stale join_ref" },
      });
      assert.deepEqual((await c.take(isReply(tracked)))?.payload, { status: "ok", response: {} });
      assert.ok(await receiver.take(isPresence(sub, "presence_diff")));
    } finally {
      closeAll();
    }
  });
}

test("[gateway] replies carry the channel's join_ref, not the message's (2.0.0)", async () => {
  try {
    const c = await connect("2.0.0");
    const sub = `reply-ref-${uid()}`;
    const topic = `realtime:${sub}`;
    const first = await joined(c, sub, { ack: true });
    const second = await joined(c, sub, { ack: true });
    assert.ok(await c.take(isClose(topic)));
    for (const joinRef of [first, null]) {
      const ref = broadcast(c, sub, joinRef, "x", {});
      assert.ok(await c.take(isReply(ref)));
      assertWire(c, {
        joinRef: second,
        ref,
        topic,
        event: "phx_reply",
        payload: { status: "ok", response: {} },
      });
    }
  } finally {
    closeAll();
  }
});

for (const vsn of VERSIONS) {
  test(`[gateway] a phx_leave without join_ref is not answered when the join had one (${vsn})`, async () => {
    try {
      const c = await connect(vsn);
      const sub = `leave-null-${uid()}`;
      const topic = `realtime:${sub}`;
      const joinRef = await joined(c, sub, { self: true });
      const leave = newRef();
      c.send(null, leave, topic, "phx_leave", {});
      await settle(c);
      assert.deepEqual(c.pending().filter((f) => f.topic === topic), [], "no reply, no phx_close");
      broadcast(c, sub, joinRef, "still", {});
      assert.ok(await received(c, sub, "still"));
    } finally {
      closeAll();
    }
  });
}

// --- 7. join errors --------------------------------------------------------------------------

for (const vsn of VERSIONS) {
  test(`[gateway] private joins: a participant is in, everyone else gets the server's reason (${vsn})`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const stranger = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const sub = `conversation:${conv}`;
      const topic = `realtime:${sub}`;
      const member = await connect(vsn);
      await joined(member, sub, { private: true, token: bob.accessToken });

      const c = await connect(vsn);
      const unauthorized =
        `Unauthorized: You do not have permissions to read from this Channel topic: ${sub}`;
      const { joinRef, reply } = await join(c, sub, {
        private: true,
        token: stranger.accessToken,
      });
      assert.equal(reply.payload.status, "error");
      assertWire(c, {
        joinRef,
        ref: joinRef,
        topic,
        event: "phx_reply",
        payload: { status: "error", response: { reason: unauthorized } },
      });
      assert.equal(await refused(c, sub, { private: true }), unauthorized, "the anon key alone");

      const expired = await refused(c, sub, {
        private: true,
        token: await expiredCopy(bob.accessToken, 30),
      });
      const seconds = Number(
        /^InvalidJWTToken: Token has expired (\d+) seconds ago$/.exec(
          expired,
        )?.[1],
      );
      assert.ok(seconds >= 29 && seconds <= 33, expired);
      assert.equal(
        await refused(c, sub, { private: true, token: "not-a-jwt" }),
        "MalformedJWT: The token provided is not a valid JWT",
      );
      assert.equal(
        await refused(c, sub, {
          private: true,
          token: await signed(decodeJwt(bob.accessToken), foreignSecret),
        }),
        "JwtSignatureError: Failed to validate JWT signature",
      );
      const { exp: _exp, ...noExp } = decodeJwt(bob.accessToken);
      assert.equal(
        await refused(c, sub, { private: true, token: await signed(noExp) }),
        "InvalidJWTToken: Fields `role` and `exp` are required in JWT",
      );
      // Public channels check the token too.
      assert.match(
        await refused(c, `public-${uid()}`, { token: await expiredCopy(bob.accessToken, 5) }),
        /^InvalidJWTToken: Token has expired \d+ seconds ago$/,
      );
      // An `sb_` key is not a JWT: the socket's apikey stands in for it.
      assert.equal(
        await refused(c, sub, { private: true, token: "sb_publishable_abcdefghijklmnop" }),
        unauthorized,
        "anon apikey: refused by the policy, not as a malformed JWT",
      );
      const service = await connect(vsn, { apikey: serviceKey });
      await joined(service, sub, { private: true, token: "sb_secret_abcdefghijklmnop" });
      await heartbeat(c);
      assert.ok(!c.closed);
    } finally {
      closeAll();
    }
  });
}

// --- 8. access_token refresh -----------------------------------------------------------------

/** Waits for the system error and phx_close that end a channel; returns the system payload. */
async function shutDown(c: RawClient, sub: string, joinRef: string) {
  const topic = `realtime:${sub}`;
  const system = await c.take(isSystem(topic), 3_000);
  assert.ok(system, "a system message");
  assert.ok(await c.take(isClose(topic), 3_000), "then phx_close");
  assert.ok(
    wireIndex(c, topic, "system", null) < wireIndex(c, topic, "phx_close", joinRef),
    "system before phx_close",
  );
  assertWire(c, { joinRef, ref: joinRef, topic, event: "phx_close", payload: {} });
  const payload = system.payload as {
    extension: string;
    status: string;
    message: string;
    channel: string;
  };
  assert.equal(payload.extension, "system");
  assert.equal(payload.status, "error");
  assert.equal(payload.channel, sub);
  return payload;
}

for (const vsn of VERSIONS) {
  test(`[gateway] access_token: a fresh token keeps the channel; sb_ and the same token are ignored (${vsn})`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const sub = `conversation:${conv}`;
      const c = await connect(vsn);
      const joinRef = await joined(c, sub, { private: true, token: bob.accessToken });
      const publicSub = `public-${uid()}`;
      const publicRef = await joined(c, publicSub, { token: bob.accessToken });
      const fresh = await signIn(t, bob.user.email);
      sendAccessToken(c, sub, joinRef, fresh.accessToken);
      sendAccessToken(c, sub, joinRef, fresh.accessToken);
      sendAccessToken(c, sub, joinRef, "sb_publishable_abcdefghijklmnop");
      sendAccessToken(c, sub, joinRef, null);
      // A stranger's token on a public channel: nothing to re-check.
      sendAccessToken(c, publicSub, publicRef, (await signInAs(t, "MEMBER")).accessToken);
      await settle(c);
      assert.deepEqual(
        c.pending().filter((f) => ["phx_reply", "system", "phx_close"].includes(f.event)),
        [],
        "no reply, no system message, no phx_close",
      );
      const a = await connect(vsn);
      const aliceRef = await joined(a, sub, { private: true, token: alice.accessToken });
      broadcast(a, sub, aliceRef, "after-refresh", { ok: 1 });
      assert.deepEqual((await received(c, sub, "after-refresh")).payload.payload, { ok: 1 });
      const other = await connect(vsn);
      const otherRef = await joined(other, publicSub);
      broadcast(other, publicSub, otherRef, "public", { ok: 2 });
      assert.deepEqual((await received(c, publicSub, "public")).payload.payload, { ok: 2 });
    } finally {
      closeAll();
    }
  });

  test(`[gateway] access_token: a removed participant's or signed-out session's token closes the channel (${vsn})`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const carol = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob, carol);
      const sub = `conversation:${conv}`;
      const ending = `to read from this Channel topic: ${sub}`;

      const c = await connect(vsn);
      const bobRef = await joined(c, sub, { private: true, token: bob.accessToken });
      await removeParticipant(alice, conv, bob.user.id);
      sendAccessToken(c, sub, bobRef, (await signIn(t, bob.user.email)).accessToken);
      const removed = await shutDown(c, sub, bobRef);
      assert.ok(removed.message.endsWith(ending), removed.message);

      const d = await connect(vsn);
      const carolRef = await joined(d, sub, { private: true, token: carol.accessToken });
      const later = await signIn(t, carol.user.email);
      const signout = await t.request("POST", "/api/auth/signout", { token: later.accessToken });
      assert.equal(signout.status, 200);
      sendAccessToken(d, sub, carolRef, later.accessToken);
      const signedOut = await shutDown(d, sub, carolRef);
      assert.ok(signedOut.message.endsWith(ending), signedOut.message);

      // The connection survives; only the channel closed.
      await heartbeat(c);
      await heartbeat(d);
      const leftover = broadcast(c, sub, bobRef, "x", {});
      assert.equal((await c.take(isReply(leftover)))?.payload.status, "error");
    } finally {
      closeAll();
    }
  });

  test(`[gateway] access_token: an expired or malformed token closes the channel with the token's error (${vsn})`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const sub = `conversation:${conv}`;
      const publicSub = `public-${uid()}`;
      const c = await connect(vsn);
      const privateRef = await joined(c, sub, { private: true, token: bob.accessToken });
      const publicRef = await joined(c, publicSub, { token: bob.accessToken });
      const keepSub = `keep-${uid()}`;
      const keep = await joined(c, keepSub, { self: true });

      sendAccessToken(c, sub, privateRef, await expiredCopy(bob.accessToken, 20));
      const expired = await shutDown(c, sub, privateRef);
      const seconds = Number(/^Token has expired (\d+) seconds ago$/.exec(expired.message)?.[1]);
      assert.ok(seconds >= 19 && seconds <= 23, expired.message);

      sendAccessToken(c, publicSub, publicRef, "not-a-jwt");
      const malformed = await shutDown(c, publicSub, publicRef);
      assert.equal(malformed.message, "The token provided is not a valid JWT");

      assert.ok(!c.closed, "the socket stays");
      broadcast(c, keepSub, keep, "still-open", { n: 1 });
      assert.deepEqual((await received(c, keepSub, "still-open")).payload.payload, { n: 1 });
    } finally {
      closeAll();
    }
  });
}

test("[gateway] access_token: a removed participant's token gets the server's text (2.0.0)", async () => {
  try {
    const alice = await signInAs(t, "MEMBER");
    const bob = await signInAs(t, "MEMBER");
    const conv = await conversation(alice, bob);
    const sub = `conversation:${conv}`;
    const c = await connect("2.0.0");
    const bobRef = await joined(c, sub, { private: true, token: bob.accessToken });
    await removeParticipant(alice, conv, bob.user.id);
    sendAccessToken(c, sub, bobRef, (await signIn(t, bob.user.email)).accessToken);
    assert.equal(
      (await shutDown(c, sub, bobRef)).message,
      `You do not have permissions to read from this Channel topic: ${sub}`,
    );
  } finally {
    closeAll();
  }
});

// --- 9. public and private channels ------------------------------------------------------------

async function databaseSend(payload: unknown, event: string, topic: string, isPrivate: boolean) {
  await t.deps.sql`select realtime.send(${
    t.deps.sql.json(payload as never)
  }, ${event}, ${topic}, ${isPrivate})`;
}

for (const vsn of VERSIONS) {
  test(`[gateway] Agora's topics are private only (a public join is refused with the reason); public and private broadcasts never mix, for client and database broadcasts (${vsn})`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const sub = `conversation:${conv}`;
      const open = `lobby-${uid()}`; // a public topic of a client's own
      const pub = await connect(vsn);
      for (const reserved of [sub, `user:${bob.user.id}`, `vendor:${uid()}`, "admin"]) {
        assert.equal(
          await refused(pub, reserved),
          `Unauthorized: ${reserved} is a private topic; join it with config.private set to true`,
        );
      }
      await joined(pub, open);
      const pubSender = await connect(vsn);
      const pubSenderRef = await joined(pubSender, open);
      const priv = await connect(vsn);
      await joined(priv, sub, { private: true, token: bob.accessToken });
      const privSender = await connect(vsn);
      const privSenderRef = await joined(privSender, sub, {
        private: true,
        token: alice.accessToken,
      });

      broadcast(pubSender, open, pubSenderRef, "client", { from: "public" });
      broadcast(privSender, sub, privSenderRef, "client", { from: "private" });
      await settle(pubSender, privSender, pub, priv);
      assert.deepEqual(takeBroadcasts(pub, open, "client"), [{ from: "public" }]);
      assert.deepEqual(takeBroadcasts(priv, sub, "client"), [{ from: "private" }]);
      assert.deepEqual(takeBroadcasts(pubSender, open, "client"), [], "self is off");
      assert.deepEqual(takeBroadcasts(privSender, sub, "client"), [], "self is off");

      // Database broadcasts, committed in this order: private ones to the conversation are odd,
      // public ones to it even (no channel may hear those), then public ones to the lobby.
      for (let n = 1; n <= 6; n++) await databaseSend({ n }, "db", sub, n % 2 === 1);
      for (const n of [7, 8]) await databaseSend({ n }, "db", open, false);
      const rows = await t.deps.sql<{ id: string; n: number }[]>`
        select id::text, (payload ->> 'n')::int as n from realtime.messages
        where topic in (${sub}, ${open}) and event = 'db'`;
      const idOf = new Map(rows.map((r) => [r.n, r.id]));
      for (
        const [client, topic, expected] of [[priv, sub, [1, 3, 5]], [pub, open, [7, 8]]] as const
      ) {
        for (const n of expected) {
          const frame = await received(client, topic, "db");
          assert.deepEqual(
            frame.payload.payload,
            { n },
            `${client === priv ? "private" : "public"}`,
          );
          assert.deepEqual(frame.payload.meta, { id: idOf.get(n) }, "meta.id is the row id");
          if (vsn === "2.0.0") {
            assert.equal(frame.payload.kind, 4, "a kind-4 binary frame");
            assert.equal(frame.binary, undefined, "with a JSON payload");
          }
        }
      }
      await settle(priv, pub);
      assert.deepEqual(
        takeBroadcasts(priv, sub, "db"),
        [],
        "no public broadcast on a private channel",
      );
      if (vsn === "1.0.0") {
        assertWire(pub, {
          joinRef: null,
          ref: null,
          topic: `realtime:${open}`,
          event: "broadcast",
          payload: { type: "broadcast", event: "db", payload: { n: 8 }, meta: { id: idOf.get(8) } },
        });
      }
    } finally {
      closeAll();
    }
  });
}

// --- 10. binary frames -------------------------------------------------------------------------

test("[gateway] a kind-3 binary broadcast reaches 2.0.0 as kind 4 with the same bytes; 1.0.0 only gets JSON payloads", async () => {
  try {
    const sub = `binary-${uid()}`;
    const topic = `realtime:${sub}`;
    const sender = await connect("2.0.0");
    const senderRef = await joined(sender, sub, { ack: true });
    const v2 = await connect("2.0.0");
    const v2Ref = await joined(v2, sub);
    const v1 = await connect("1.0.0");
    const v1Ref = await joined(v1, sub);

    const bytes = new Uint8Array([0, 1, 2, 3, 127, 128, 200, 254, 255]);
    const binaryRef = newRef();
    sender.sendBinary(userBroadcastPush({
      joinRef: senderRef,
      ref: binaryRef,
      topic,
      event: "bytes",
      encoding: "binary",
      data: bytes,
    }));
    assert.ok(await sender.take(isReply(binaryRef)), "acknowledged");
    assertWire(sender, {
      joinRef: senderRef,
      ref: binaryRef,
      topic,
      event: "phx_reply",
      payload: { status: "ok", response: {} },
    });
    const got = await received(v2, sub, "bytes");
    assert.deepEqual(got.binary, bytes);
    assert.deepEqual(binaryFrames(v2).at(-1), userBroadcast(topic, "bytes", "binary", bytes));

    const json = { x: 1, text: "héllo", list: [true, null] };
    const jsonBytes = encoder.encode(JSON.stringify(json));
    const jsonRef = newRef();
    sender.sendBinary(userBroadcastPush({
      joinRef: senderRef,
      ref: jsonRef,
      topic,
      event: "json",
      encoding: "json",
      data: jsonBytes,
      metadata: JSON.stringify({ client: "metadata" }),
    }));
    assert.ok(await sender.take(isReply(jsonRef)));
    assert.deepEqual((await received(v2, sub, "json")).payload.payload, json);
    assert.deepEqual(
      binaryFrames(v2).at(-1),
      userBroadcast(topic, "json", "json", jsonBytes),
      "same bytes; the client's metadata is not passed on",
    );
    assert.deepEqual((await received(v1, sub, "json")).payload.payload, json);
    assertWire(v1, {
      joinRef: null,
      ref: null,
      topic,
      event: "broadcast",
      payload: { type: "broadcast", event: "json", payload: json },
    });
    await settle(sender, v1);
    assert.deepEqual(takeBroadcasts(v1, sub), [], "the binary payload never reached 1.0.0");
    assert.equal(binaryFrames(v1).length, 0);

    // A text broadcast from 1.0.0 reaches 2.0.0 as a text frame.
    broadcast(v1, sub, v1Ref, "text", { t: 1 });
    assert.deepEqual((await received(v2, sub, "text")).payload.payload, { t: 1 });
    assertWire(v2, {
      joinRef: null,
      ref: null,
      topic,
      event: "broadcast",
      payload: { type: "broadcast", event: "text", payload: { t: 1 } },
    });
    // Binary frames mean nothing on 1.0.0: ignored, and the socket carries on.
    v1.sendBinary(userBroadcastPush({
      joinRef: v1Ref,
      ref: newRef(),
      topic,
      event: "nope",
      encoding: "json",
      data: encoder.encode("{}"),
    }));
    await settle(v1, v2);
    assert.deepEqual(takeBroadcasts(v2, sub), []);
    // A kind-3 frame for a topic not joined is unmatched, like any other message.
    const strayRef = newRef();
    v2.sendBinary(userBroadcastPush({
      joinRef: v2Ref,
      ref: strayRef,
      topic: `realtime:not-joined-${uid()}`,
      event: "stray",
      encoding: "json",
      data: encoder.encode("{}"),
    }));
    assert.deepEqual((await v2.take(isReply(strayRef)))?.payload, {
      status: "error",
      response: { reason: "unmatched topic" },
    });
  } finally {
    closeAll();
  }
});

test("[gateway] a topic or event over 255 bytes still reaches every subscriber (2.0.0 in the JSON form)", async () => {
  try {
    // The binary user-broadcast frame has one byte for each length: these do not fit in it.
    const sub = `long-${uid()}-${"t".repeat(260)}`;
    const longEvent = `e${"v".repeat(300)}`;
    const v2 = await connect("2.0.0");
    await joined(v2, sub);
    const v1 = await connect("1.0.0");
    await joined(v1, sub);

    await databaseSend({ n: 1 }, "db", sub, false);
    await databaseSend({ n: 2 }, longEvent, sub, false);
    const http = await fetch(
      `http://127.0.0.1:${server.port}/realtime/v1/api/broadcast/${sub}/events/${longEvent}`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${serviceKey}`, "content-type": "application/json" },
        body: JSON.stringify({ n: 3 }),
      },
    );
    assert.equal(http.status, 202, await http.text());
    for (const c of [v2, v1]) {
      const first = await received(c, sub, "db");
      assert.deepEqual(first.payload.payload, { n: 1 }, `${c.vsn}: a long topic`);
      assert.ok((first.payload.meta as { id?: string })?.id, "meta.id is the row id");
      // The database's broadcast (through NOTIFY) and the HTTP one race: either may come first.
      const long = [
        (await received(c, sub, longEvent)).payload.payload as { n: number },
        (await received(c, sub, longEvent)).payload.payload as { n: number },
      ].sort((a, b) => a.n - b.n);
      assert.deepEqual(long, [{ n: 2 }, { n: 3 }], `${c.vsn}: a long event, both ways`);
    }
    // The HTTP broadcast's JSON frame, wherever it came among the others.
    const frames = wire.get(v2)!.filter((m): m is string => typeof m === "string").map((m) =>
      JSON.parse(m)
    );
    assert.ok(
      frames.some((f) =>
        JSON.stringify(f) === JSON.stringify([null, null, `realtime:${sub}`, "broadcast", {
          type: "broadcast",
          event: longEvent,
          payload: { n: 3 },
        }])
      ),
      "2.0.0 got the long event as a JSON broadcast frame",
    );

    // A binary payload has no JSON form: it reaches neither (as for 1.0.0 always), and the
    // sockets carry on.
    const binary = await fetch(
      `http://127.0.0.1:${server.port}/realtime/v1/api/broadcast/${sub}/events/${longEvent}`,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${serviceKey}`,
          "content-type": "application/octet-stream",
        },
        body: new Uint8Array([1, 2, 3]),
      },
    );
    assert.equal(binary.status, 202, await binary.text());
    await databaseSend({ n: 4 }, "after", sub, false);
    for (const c of [v2, v1]) {
      assert.deepEqual((await received(c, sub, "after")).payload.payload, { n: 4 });
      assert.deepEqual(takeBroadcasts(c, sub), [], `${c.vsn}: nothing else arrived`);
    }
  } finally {
    closeAll();
  }
});

// --- 11. the write policy ----------------------------------------------------------------------

for (const vsn of VERSIONS) {
  test(`[gateway] private broadcasts follow the write policy; refused ones are dropped without a reply (${vsn})`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const carol = await signInAs(t, "MEMBER");
      const dave = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob, carol, dave);
      const sub = `conversation:${conv}`;
      const topic = `realtime:${sub}`;
      const a = await connect(vsn);
      const aRef = await joined(a, sub, { private: true, token: alice.accessToken, ack: true });
      const b = await connect(vsn);
      const bRef = await joined(b, sub, {
        private: true,
        token: bob.accessToken,
        ack: true,
        self: true,
      });

      const hi = broadcast(a, sub, aRef, "hi", { from: "alice" });
      assert.ok(await a.take(isReply(hi)));
      assertWire(a, {
        joinRef: aRef,
        ref: hi,
        topic,
        event: "phx_reply",
        payload: { status: "ok", response: {} },
      });
      assert.deepEqual(a.pending().filter(isBroadcast(sub, "hi")), [], "self: false: not to alice");
      assert.deepEqual((await received(b, sub, "hi")).payload.payload, { from: "alice" });
      const echo = broadcast(b, sub, bRef, "echo", { from: "bob" });
      assert.deepEqual((await b.take(isReply(echo)))?.payload, { status: "ok", response: {} });
      assert.deepEqual((await received(b, sub, "echo")).payload.payload, { from: "bob" }, "self");
      assert.deepEqual((await received(a, sub, "echo")).payload.payload, { from: "bob" });

      // Carol is demoted and Dave removed before their first broadcast.
      const c = await connect(vsn);
      const cRef = await joined(c, sub, { private: true, token: carol.accessToken, ack: true });
      const d = await connect(vsn);
      const dRef = await joined(d, sub, { private: true, token: dave.accessToken, ack: true });
      await t.deps.sql`update app.users set role = 'VISITOR' where id = ${carol.user.id}`;
      await removeParticipant(alice, conv, dave.user.id);
      const visitor = broadcast(c, sub, cRef, "visitor", {});
      const removed = broadcast(d, sub, dRef, "removed", {});
      await settle(c, d, a, b);
      assert.equal(c.pending().find(isReply(visitor)), undefined, "no ack");
      assert.equal(d.pending().find(isReply(removed)), undefined, "no ack");
      for (const x of [a, b]) {
        assert.equal(x.pending().find(isBroadcast(sub, "visitor")), undefined);
        assert.equal(x.pending().find(isBroadcast(sub, "removed")), undefined);
      }

      // The write decision is made once per token, on first use (as hosted): Bob, removed after
      // his first broadcast, still broadcasts until he sends a new token.
      await removeParticipant(alice, conv, bob.user.id);
      const cached = broadcast(b, sub, bRef, "cached", { n: 1 });
      assert.deepEqual((await b.take(isReply(cached)))?.payload, { status: "ok", response: {} });
      assert.deepEqual((await received(a, sub, "cached")).payload.payload, { n: 1 });

      // user:<id> is readable by its user but written by the server only.
      const own = await connect(vsn);
      const ownSub = `user:${alice.user.id}`;
      const ownRef = await joined(own, ownSub, {
        private: true,
        token: alice.accessToken,
        ack: true,
        self: true,
      });
      const note = broadcast(own, ownSub, ownRef, "note", {});
      const tracked = track(own, ownSub, ownRef, { online: true });
      await settle(own);
      assert.equal(own.pending().find(isReply(note)), undefined, "a refused broadcast: no reply");
      assert.deepEqual(takeBroadcasts(own, ownSub, "note"), []);
      assert.deepEqual((await own.take(isReply(tracked)))?.payload, {
        status: "error",
        response: {},
      }, "a refused track: error");
    } finally {
      closeAll();
    }
  });
}

// --- 12. limits ----------------------------------------------------------------------------------

async function leave(c: RawClient, sub: string, joinRef: string) {
  const ref = newRef();
  c.send(joinRef, ref, `realtime:${sub}`, "phx_leave", {});
  assert.deepEqual((await c.take(isReply(ref)))?.payload, { status: "ok", response: {} });
  assert.ok(await c.take(isClose(`realtime:${sub}`)));
}

/** Resolves once the server closed `c` (false if it is still open after `ms`). */
async function closedByServer(c: RawClient, ms = 3_000): Promise<boolean> {
  await c.next(() => false, ms);
  return c.closed;
}

test("[gateway] over the channels per connection: ChannelRateLimitReached, and the connection and its channels stay", async () => {
  await withServer({ channelsPerConnection: 2 }, async (s) => {
    for (const vsn of VERSIONS) {
      const c = await connect(vsn, { port: s.port });
      const one = `one-${uid()}`;
      const oneRef = await joined(c, one, { self: true });
      const two = `two-${uid()}`;
      const twoRef = await joined(c, two);
      const three = `three-${uid()}`;
      assert.equal(await refused(c, three), "ChannelRateLimitReached: Too many channels");
      await heartbeat(c);
      assert.ok(!c.closed, "the connection stays");
      broadcast(c, one, oneRef, "works", { n: 1 });
      assert.deepEqual((await received(c, one, "works")).payload.payload, { n: 1 });
      await leave(c, two, twoRef);
      await joined(c, three);
    }
  });
});

test("[gateway] over the joins per second: ClientJoinRateLimitReached, then the connection closes", async () => {
  await withServer({ joinsPerSecond: 3 }, async (s) => {
    for (const vsn of VERSIONS) {
      const bystander = await connect(vsn, { port: s.port });
      const c = await connect(vsn, { port: s.port });
      for (let i = 0; i < 3; i++) await joined(c, `burst-${i}-${uid()}`);
      assert.equal(
        await refused(c, `burst-3-${uid()}`),
        "ClientJoinRateLimitReached: Too many joins per second",
      );
      assert.ok(await closedByServer(c), "the connection is closed");
      await heartbeat(bystander);
      await joined(bystander, `calm-${uid()}`);
    }
  });
});

test("[gateway] over the connections per address: 429 before the upgrade; the others carry on", async () => {
  await withServer({ connectionsPerIp: 2 }, async (s) => {
    const a = await connect("2.0.0", { port: s.port });
    const b = await connect("1.0.0", { port: s.port });
    for (const vsn of VERSIONS) {
      const answer = await refusedUpgrade({ apikey: anonKey, vsn }, {}, s.port);
      assert.equal(answer.status, 429);
      assert.deepEqual(JSON.parse(answer.body), { error: "Too many connected users" });
    }
    await assert.rejects(
      RawClient.open(socketUrl(s.port, { apikey: anonKey, vsn: "2.0.0" }), "2.0.0"),
    );
    assert.equal(
      (await refusedUpgrade({ apikey: "not-a-jwt", vsn: "2.0.0" }, {}, s.port)).status,
      401,
    );
    await heartbeat(a);
    await heartbeat(b);
    // A closed connection frees its place.
    b.close();
    const deadline = Date.now() + 3_000;
    let again: RawClient | null = null;
    while (!again && Date.now() < deadline) {
      again = await connect("2.0.0", { port: s.port }).catch(() => null);
      if (!again) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(again, "a new connection once one closed");
    await heartbeat(again);
    await heartbeat(a);
  });
});

test("[gateway] over the payload size: an acked broadcast gets an error, others are dropped; an oversized track closes its channel only", async () => {
  await withServer({ payloadBytes: 200 }, async (s) => {
    const big = { blob: "x".repeat(400) };
    for (const vsn of VERSIONS) {
      const sub = `size-${uid()}`;
      const topic = `realtime:${sub}`;
      const acked = await connect(vsn, { port: s.port });
      const ackedRef = await joined(acked, sub, { ack: true });
      const quiet = await connect(vsn, { port: s.port });
      const quietRef = await joined(quiet, sub);
      const receiver = await connect(vsn, { port: s.port });
      await joined(receiver, sub);

      const over = broadcast(acked, sub, ackedRef, "big", big);
      const answer = await acked.take(isReply(over));
      assert.equal(answer?.payload.status, "error", JSON.stringify(answer?.payload));
      const dropped = broadcast(quiet, sub, quietRef, "big", big);
      if (vsn === "2.0.0") {
        const binaryRef = newRef();
        acked.sendBinary(userBroadcastPush({
          joinRef: ackedRef,
          ref: binaryRef,
          topic,
          event: "big",
          encoding: "binary",
          data: new Uint8Array(400),
        }));
        assert.equal((await acked.take(isReply(binaryRef)))?.payload.status, "error");
      }
      await settle(acked, quiet, receiver);
      assert.equal(quiet.pending().find(isReply(dropped)), undefined);
      assert.deepEqual(takeBroadcasts(receiver, sub), [], "nothing oversized is delivered");
      broadcast(quiet, sub, quietRef, "small", { n: 1 });
      assert.deepEqual((await received(receiver, sub, "small")).payload.payload, { n: 1 });
      const fine = broadcast(acked, sub, ackedRef, "small", { n: 2 });
      assert.deepEqual((await acked.take(isReply(fine)))?.payload, { status: "ok", response: {} });

      // Presence: the oversized track ends that channel (system error, phx_close), no reply.
      const presenceSub = `size-presence-${uid()}`;
      const tracker = await connect(vsn, { port: s.port });
      const presenceRef = await joined(tracker, presenceSub, { presence: true, presenceKey: "me" });
      assert.ok(await tracker.take(isPresence(presenceSub, "presence_state")));
      const otherSub = `size-other-${uid()}`;
      const otherRef = await joined(tracker, otherSub, { self: true });
      const watcher = await connect(vsn, { port: s.port });
      await joined(watcher, presenceSub, { presence: true });
      const trackRef = track(tracker, presenceSub, presenceRef, big);
      const system = await shutDown(tracker, presenceSub, presenceRef);
      assert.equal(system.message, "Track message size exceeded");
      await settle(tracker, watcher);
      assert.equal(tracker.pending().find(isReply(trackRef)), undefined, "no reply to the track");
      assert.equal(watcher.pending().find(isPresence(presenceSub, "presence_diff")), undefined);
      broadcast(tracker, otherSub, otherRef, "alive", { n: 3 });
      assert.deepEqual((await received(tracker, otherSub, "alive")).payload.payload, { n: 3 });
    }
  });
});

test("[gateway] a silent connection is closed after the idle timeout; a talking one is not", async () => {
  await withServer({ idleTimeoutMs: 300 }, async (s) => {
    const silent = await connect("2.0.0", { port: s.port });
    await joined(silent, `idle-${uid()}`);
    const talking = await connect("1.0.0", { port: s.port });
    const deadline = Date.now() + 3_000;
    while (!silent.closed && Date.now() < deadline) {
      await heartbeat(talking);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(silent.closed, "the silent connection was closed");
    assert.ok(!talking.closed, "the talking one stays");
    await heartbeat(talking);
  });
});

test("[gateway] an oversized acked broadcast gets the server's exact reply", async () => {
  await withServer({ payloadBytes: 200 }, async (s) => {
    for (const vsn of VERSIONS) {
      const sub = `size-exact-${uid()}`;
      const c = await connect(vsn, { port: s.port });
      const joinRef = await joined(c, sub, { ack: true });
      const ref = broadcast(c, sub, joinRef, "big", { blob: "x".repeat(400) });
      assert.ok(await c.take(isReply(ref)));
      assertWire(c, {
        joinRef,
        ref,
        topic: `realtime:${sub}`,
        event: "phx_reply",
        payload: { status: "error", response: "payload_size_exceeded" },
      });
    }
  });
});

// --- 13. presence ------------------------------------------------------------------------------

interface Metas {
  [key: string]: { metas: Record<string, unknown>[] };
}

for (const vsn of VERSIONS) {
  test(`[gateway] presence frames: state on join, diffs on track, update, untrack and disconnect (${vsn})`, async () => {
    try {
      const sub = `presence-${uid()}`;
      const topic = `realtime:${sub}`;
      const a = await connect(vsn);
      const aRef = await joined(a, sub, { presence: true, presenceKey: "alice" });
      assert.deepEqual((await a.take(isPresence(sub, "presence_state")))?.payload, {});
      assertWire(a, { joinRef: aRef, ref: null, topic, event: "presence_state", payload: {} });
      const b = await connect(vsn);
      const bRef = await joined(b, sub, { presence: true, presenceKey: "bob" });
      assert.deepEqual((await b.take(isPresence(sub, "presence_state")))?.payload, {});

      const diffs = async () => {
        const fromA = await a.take(isPresence(sub, "presence_diff"), 3_000);
        const fromB = await b.take(isPresence(sub, "presence_diff"), 3_000);
        assert.ok(fromA && fromB, "both clients get the diff");
        assert.deepEqual(fromA.payload, fromB.payload);
        return fromB.payload as { joins: Metas; leaves: Metas };
      };

      const first = track(a, sub, aRef, { name: "alice", n: 1 });
      assert.deepEqual((await a.take(isReply(first)))?.payload, { status: "ok", response: {} });
      const joinedDiff = await diffs();
      const ref1 = joinedDiff.joins.alice?.metas[0]?.phx_ref;
      assert.equal(typeof ref1, "string");
      assert.deepEqual(joinedDiff, {
        joins: { alice: { metas: [{ phx_ref: ref1, name: "alice", n: 1 }] } },
        leaves: {},
      });
      assertWire(b, {
        joinRef: null,
        ref: null,
        topic,
        event: "presence_diff",
        payload: joinedDiff,
      });

      // The same meta again changes nothing.
      const same = track(a, sub, aRef, { name: "alice", n: 1 });
      assert.deepEqual((await a.take(isReply(same)))?.payload, { status: "ok", response: {} });
      await settle(a, b);
      assert.equal(a.pending().find(isPresence(sub, "presence_diff")), undefined);
      assert.equal(b.pending().find(isPresence(sub, "presence_diff")), undefined);

      // Another meta replaces it: joins the new one (phx_ref_prev), leaves the old one.
      const second = track(a, sub, aRef, { name: "alice", n: 2 });
      assert.deepEqual((await a.take(isReply(second)))?.payload, { status: "ok", response: {} });
      const updated = await diffs();
      const ref2 = updated.joins.alice?.metas[0]?.phx_ref;
      assert.equal(typeof ref2, "string");
      assert.notEqual(ref2, ref1);
      assert.deepEqual(updated, {
        joins: { alice: { metas: [{ phx_ref: ref2, phx_ref_prev: ref1, name: "alice", n: 2 }] } },
        leaves: { alice: { metas: [{ phx_ref: ref1, name: "alice", n: 1 }] } },
      });

      // A late joiner gets the state.
      const c = await connect(vsn);
      await joined(c, sub, { presence: true, presenceKey: "carol" });
      const state = (await c.take(isPresence(sub, "presence_state")))?.payload as Metas;
      assert.deepEqual(Object.keys(state), ["alice"]);
      assert.equal(state.alice.metas.length, 1);
      assert.equal(state.alice.metas[0].phx_ref, ref2);
      assert.equal(state.alice.metas[0].n, 2);

      const untrack = newRef();
      a.send(aRef, untrack, topic, "presence", { type: "presence", event: "untrack" });
      assert.deepEqual((await a.take(isReply(untrack)))?.payload, { status: "ok", response: {} });
      const untracked = await diffs();
      assert.deepEqual(Object.keys(untracked.joins), []);
      assert.deepEqual(Object.keys(untracked.leaves), ["alice"]);
      assert.equal(untracked.leaves.alice.metas[0].phx_ref, ref2);
      assert.equal(untracked.leaves.alice.metas[0].n, 2);

      const bobTrack = track(b, sub, bRef, { name: "bob" });
      assert.ok(await b.take(isReply(bobTrack)));
      const bobJoined = await diffs();
      const bobRef = bobJoined.joins.bob?.metas[0]?.phx_ref;
      b.close();
      const gone = await a.take(isPresence(sub, "presence_diff"), 3_000);
      assert.deepEqual(gone?.payload, {
        joins: {},
        leaves: { bob: { metas: [{ phx_ref: bobRef, name: "bob" }] } },
      }, "a disconnect is a leave");
      assert.ok(
        await c.take((f) => f.event === "presence_diff" && !!(f.payload.leaves as Metas).bob),
      );
    } finally {
      closeAll();
    }
  });
}

test("[gateway] presence on a private channel: state and diffs for readers only; no public channel of the same name", async () => {
  try {
    const alice = await signInAs(t, "MEMBER");
    const bob = await signInAs(t, "MEMBER");
    const conv = await conversation(alice, bob);
    const sub = `conversation:${conv}`;
    const b = await connect("2.0.0");
    const bRef = await joined(b, sub, {
      private: true,
      token: bob.accessToken,
      presence: true,
      presenceKey: bob.user.id,
    });
    assert.ok(await b.take(isPresence(sub, "presence_state")));
    assertWire(b, {
      joinRef: bRef,
      ref: null,
      topic: `realtime:${sub}`,
      event: "presence_state",
      payload: {},
    });
    const outsider = await connect("1.0.0");
    assert.match(
      await refused(outsider, sub, { presence: true }),
      /^Unauthorized: .* is a private topic/,
      "no public channel under a private topic's name to watch from",
    );
    const a = await connect("1.0.0");
    const aRef = await joined(a, sub, {
      private: true,
      token: alice.accessToken,
      presence: true,
      presenceKey: alice.user.id,
    });
    assert.ok(await a.take(isPresence(sub, "presence_state")));
    const ref = track(a, sub, aRef, { name: "alice" });
    assert.deepEqual((await a.take(isReply(ref)))?.payload, { status: "ok", response: {} });
    for (const c of [a, b]) {
      const diff = await c.take(isPresence(sub, "presence_diff"), 3_000);
      assert.deepEqual(Object.keys((diff?.payload.joins ?? {}) as Metas), [alice.user.id]);
    }
    await settle(a, outsider);
    assert.equal(
      outsider.pending().find(isPresence(sub, "presence_diff")),
      undefined,
      "the refused client sees nothing",
    );
  } finally {
    closeAll();
  }
});

test("[gateway] a replaced meta keeps phx_ref_prev in presence_state and in its leave (2.0.0)", async () => {
  try {
    const sub = `presence-prev-${uid()}`;
    const a = await connect("2.0.0");
    const aRef = await joined(a, sub, { presence: true, presenceKey: "alice" });
    await a.take(isPresence(sub, "presence_state"));
    track(a, sub, aRef, { n: 1 });
    const first = await a.take(isPresence(sub, "presence_diff"));
    const ref1 = (first?.payload.joins as Metas).alice.metas[0].phx_ref;
    track(a, sub, aRef, { n: 2 });
    const second = await a.take(isPresence(sub, "presence_diff"));
    const ref2 = (second?.payload.joins as Metas).alice.metas[0].phx_ref;
    const meta = { phx_ref: ref2, phx_ref_prev: ref1, n: 2 };
    const c = await connect("2.0.0");
    await joined(c, sub, { presence: true });
    assert.deepEqual((await c.take(isPresence(sub, "presence_state")))?.payload, {
      alice: { metas: [meta] },
    });
    const untrack = newRef();
    a.send(aRef, untrack, `realtime:${sub}`, "presence", { type: "presence", event: "untrack" });
    assert.deepEqual((await c.take(isPresence(sub, "presence_diff")))?.payload, {
      joins: {},
      leaves: { alice: { metas: [meta] } },
    });
  } finally {
    closeAll();
  }
});

// --- 14. several gateway processes -------------------------------------------------------------

test("[gateway] several gateway processes: database broadcasts reach both, client broadcasts cross over", async () => {
  const t2 = testApp();
  const server2 = startStackServer(t2.deps, { port: 0, realtimeLimits: GENEROUS });
  await server2.gateway.ready;
  try {
    const sub = `multi-${uid()}`;
    const topic = `realtime:${sub}`;
    const one = await connect("2.0.0");
    const oneRef = await joined(one, sub);
    const two = await connect("2.0.0", { port: server2.port });
    const twoRef = await joined(two, sub);
    const twoV1 = await connect("1.0.0", { port: server2.port });
    await joined(twoV1, sub);

    await databaseSend({ hello: "both" }, "db", sub, false);
    const ids = [];
    for (const c of [one, two, twoV1]) {
      const frame = await received(c, sub, "db");
      assert.deepEqual(frame.payload.payload, { hello: "both" });
      ids.push((frame.payload.meta as { id: string }).id);
    }
    assert.equal(new Set(ids).size, 1, "the same meta.id everywhere");

    broadcast(one, sub, oneRef, "text", { from: "one" });
    assert.deepEqual((await received(two, sub, "text")).payload.payload, { from: "one" });
    assert.deepEqual((await received(twoV1, sub, "text")).payload.payload, { from: "one" });

    const bytes = new Uint8Array([9, 8, 7, 0, 255]);
    one.sendBinary(userBroadcastPush({
      joinRef: oneRef,
      ref: newRef(),
      topic,
      event: "bytes",
      encoding: "binary",
      data: bytes,
    }));
    assert.deepEqual((await received(two, sub, "bytes")).binary, bytes);
    assert.deepEqual(binaryFrames(two).at(-1), userBroadcast(topic, "bytes", "binary", bytes));
    const json = encoder.encode(JSON.stringify({ via: "binary json" }));
    one.sendBinary(userBroadcastPush({
      joinRef: oneRef,
      ref: newRef(),
      topic,
      event: "json",
      encoding: "json",
      data: json,
    }));
    assert.deepEqual((await received(twoV1, sub, "json")).payload.payload, { via: "binary json" });
    assert.deepEqual((await received(two, sub, "json")).payload.payload, { via: "binary json" });

    // Too large for a NOTIFY: it crosses through realtime.local_fanout.
    const big = { blob: "y".repeat(20_000) };
    broadcast(one, sub, oneRef, "big", big);
    assert.deepEqual((await received(two, sub, "big")).payload.payload, big);
    assert.deepEqual((await received(twoV1, sub, "big")).payload.payload, big);

    broadcast(two, sub, twoRef, "back", { from: "two" });
    assert.deepEqual((await received(one, sub, "back")).payload.payload, { from: "two" });
    assert.equal(binaryFrames(twoV1).length, 0, "nothing binary reached 1.0.0");
    assert.equal(twoV1.pending().find(isBroadcast(sub, "bytes")), undefined);

    // Private channels too, with the write policy applied where the broadcast was sent.
    const alice = await signInAs(t, "MEMBER");
    const bob = await signInAs(t, "MEMBER");
    const conv = await conversation(alice, bob);
    const privateSub = `conversation:${conv}`;
    const bobConn = await connect("1.0.0", { port: server2.port });
    await joined(bobConn, privateSub, { private: true, token: bob.accessToken });
    const aliceConn = await connect("2.0.0");
    const aliceRef = await joined(aliceConn, privateSub, {
      private: true,
      token: alice.accessToken,
    });
    broadcast(aliceConn, privateSub, aliceRef, "private", { to: "bob" });
    assert.deepEqual((await received(bobConn, privateSub, "private")).payload.payload, {
      to: "bob",
    });
  } finally {
    closeAll();
    await server2.shutdown();
    await t2.deps.sql.end({ timeout: 1 });
    await t2.deps.listener.end({ timeout: 1 });
  }
});
