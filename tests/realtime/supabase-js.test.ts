/**
 * The local gateway through an unmodified @supabase/supabase-js client, over both protocol
 * versions: private channel joins authorized by RLS, database broadcasts from /api activity,
 * presence, client broadcast with ack, token expiry and the HTTP broadcast endpoint.
 */
import assert from "node:assert/strict";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import {
  expectJson,
  signAsApp,
  type SignedIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { freePort } from "../../stack/postgres.ts";

const t = testApp();
const server = startStackServer(t.deps, { port: 0 });
await server.gateway.ready;
const base = `http://127.0.0.1:${server.port}`;
const anonKey = await t.deps.tokens.apiKey("anon");
const serviceKey = await t.deps.tokens.apiKey("service_role");

const clients: SupabaseClient[] = [];
/** A supabase-js client; with a token, signed in before any channel joins (as an app would). */
async function client(vsn: string, token?: string): Promise<SupabaseClient> {
  const c = createClient(base, anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { vsn, heartbeatIntervalMs: 5_000 } as Record<string, unknown>,
  });
  if (token) await c.realtime.setAuth(token);
  clients.push(c);
  return c;
}

async function closeAll() {
  for (const c of clients.splice(0)) await c.removeAllChannels();
}

function subscribed(channel: RealtimeChannel): Promise<{ status: string; err?: Error }> {
  return new Promise((resolve) => {
    channel.subscribe((status, err) => {
      if (status !== "SUBSCRIBED" && status !== "CHANNEL_ERROR" && status !== "TIMED_OUT") return;
      resolve({ status, err });
    });
  });
}

function waitFor<T>(
  register: (resolve: (value: T) => void) => void,
  ms = 2_000,
): Promise<T | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

async function conversation(a: SignedIn, b: SignedIn): Promise<string> {
  const response = await t.request("POST", "/api/conversations", {
    token: a.accessToken,
    body: { type: "group", participantIds: [b.user.id], title: "Realtime" },
  });
  return (await expectJson(response, 201)).id;
}

for (const vsn of ["1.0.0", "2.0.0"]) {
  test(`[gateway ${vsn}] a participant joins conversation:<id> and gets a message posted through /api within 1 s`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const channel = (await client(vsn, bob.accessToken)).channel(`conversation:${conv}`, {
        config: { private: true },
      });
      const received = waitFor<{ payload: Record<string, unknown>; meta?: { id: string } }>((
        resolve,
      ) =>
        channel.on(
          "broadcast",
          { event: "message.created" },
          (message) => resolve(message as never),
        )
      );
      const joined = await subscribed(channel);
      assert.equal(joined.status, "SUBSCRIBED", joined.err?.message);
      const sentAt = performance.now();
      const post = await t.request("POST", `/api/conversations/${conv}/messages`, {
        token: alice.accessToken,
        body: { content: `hello over ${vsn}` },
      });
      const message = await expectJson(post, 201);
      const got = await received;
      assert.ok(got, "the broadcast arrived");
      assert.ok(performance.now() - sentAt < 1_000);
      const envelope = got.payload as {
        id: string;
        event: string;
        payload: { id: string; content: string };
      };
      assert.equal(envelope.event, "message.created");
      assert.equal(envelope.payload.id, message.id);
      assert.equal(envelope.payload.content, `hello over ${vsn}`);
      assert.match(envelope.id, /^\d+\.\d+$/, "the event id is the SSE/long-poll cursor");
      assert.match(got.meta?.id ?? "", /^[0-9a-f-]{36}$/, "database broadcasts carry meta.id");
    } finally {
      await closeAll();
    }
  });

  test(`[gateway ${vsn}] a non-participant's join is refused with the server's reason`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const stranger = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const channel = (await client(vsn, stranger.accessToken)).channel(`conversation:${conv}`, {
        config: { private: true },
      });
      const result = await subscribed(channel);
      assert.equal(result.status, "CHANNEL_ERROR");
      assert.equal(
        result.err?.message,
        `Unauthorized: You do not have permissions to read from this Channel topic: conversation:${conv}`,
      );
      const anonymous = (await client(vsn)).channel(`conversation:${conv}`, {
        config: { private: true },
      });
      assert.equal(
        (await subscribed(anonymous)).status,
        "CHANNEL_ERROR",
        "the anon key alone is refused too",
      );
    } finally {
      await closeAll();
    }
  });

  test(`[gateway ${vsn}] presence syncs between two clients`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const topic = `conversation:${conv}`;
      const a = (await client(vsn, alice.accessToken)).channel(topic, {
        config: { private: true, presence: { key: alice.user.id } },
      });
      const b = (await client(vsn, bob.accessToken)).channel(topic, {
        config: { private: true, presence: { key: bob.user.id } },
      });
      const bothOnline = (channel: RealtimeChannel) =>
        waitFor<string[]>((resolve) =>
          channel.on("presence", { event: "sync" }, () => {
            const keys = Object.keys(channel.presenceState()).sort();
            if (keys.length === 2) resolve(keys);
          }), 3_000);
      const aSees = bothOnline(a);
      const bSees = bothOnline(b);
      const bLeaves = waitFor<string>(
        (resolve) => b.on("presence", { event: "leave" }, ({ key }) => resolve(key)),
        3_000,
      );
      assert.equal((await subscribed(a)).status, "SUBSCRIBED");
      assert.equal((await subscribed(b)).status, "SUBSCRIBED");
      assert.equal(await a.track({ online_at: "now", name: "alice" }), "ok");
      assert.equal(await b.track({ online_at: "now", name: "bob" }), "ok");
      const expected = [alice.user.id, bob.user.id].sort();
      assert.deepEqual(await aSees, expected);
      assert.deepEqual(await bSees, expected);
      const meta = (b.presenceState()[alice.user.id] as unknown as { name: string }[])[0];
      assert.equal(meta.name, "alice");
      await a.unsubscribe();
      assert.equal(await bLeaves, alice.user.id, "leaving the channel leaves presence");
    } finally {
      await closeAll();
    }
  });

  test(`[gateway ${vsn}] client broadcast reaches the other participant, with ack and self`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const topic = `conversation:${conv}`;
      const sender = (await client(vsn, alice.accessToken)).channel(topic, {
        config: { private: true, broadcast: { ack: true, self: true } },
      });
      const receiver = (await client(vsn, bob.accessToken)).channel(topic, {
        config: { private: true },
      });
      const bobGets = waitFor<Record<string, unknown>>((resolve) =>
        receiver.on("broadcast", { event: "cursor" }, ({ payload }) => resolve(payload))
      );
      const aliceGets = waitFor<Record<string, unknown>>((resolve) =>
        sender.on("broadcast", { event: "cursor" }, ({ payload }) => resolve(payload))
      );
      assert.equal((await subscribed(sender)).status, "SUBSCRIBED");
      assert.equal((await subscribed(receiver)).status, "SUBSCRIBED");
      const ack = await sender.send({
        type: "broadcast",
        event: "cursor",
        payload: { x: 1, y: 2, who: "alice" },
      });
      assert.equal(ack, "ok", "the server acknowledged");
      assert.deepEqual(await bobGets, { x: 1, y: 2, who: "alice" });
      assert.deepEqual(
        await aliceGets,
        { x: 1, y: 2, who: "alice" },
        "self: true echoes to the sender",
      );
    } finally {
      await closeAll();
    }
  });

  test(`[gateway ${vsn}] an expired token closes the channel with a system error`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const claims = JSON.parse(
        atob(bob.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
      );
      const shortLived = await signAsApp(t, { ...claims, exp: Math.floor(Date.now() / 1000) + 2 });
      const channel = (await client(vsn, shortLived)).channel(`conversation:${conv}`, {
        config: { private: true },
      });
      const system = waitFor<{ status: string; message: string; extension: string }>(
        (resolve) =>
          channel.on(
            "system",
            {},
            (payload) => payload.status === "error" && resolve(payload as never),
          ),
        5_000,
      );
      const closed = waitFor<boolean>((resolve) =>
        channel.subscribe((status) => {
          if (status === "CLOSED") resolve(true);
        }), 6_000);
      const error = await system;
      assert.ok(error, "a system error arrived");
      assert.equal(error.extension, "system");
      assert.match(error.message, /^Token has expired \d+ seconds ago$/);
      assert.equal(await closed, true, "the channel closed");
    } finally {
      await closeAll();
    }
  });

  test(`[gateway ${vsn}] the HTTP broadcast endpoint reaches subscribers`, async () => {
    try {
      const alice = await signInAs(t, "MEMBER");
      const bob = await signInAs(t, "MEMBER");
      const conv = await conversation(alice, bob);
      const privateChannel = (await client(vsn, bob.accessToken)).channel(`conversation:${conv}`, {
        config: { private: true },
      });
      const publicChannel = (await client(vsn)).channel("lobby");
      const privateGets = waitFor<Record<string, unknown>>((resolve) =>
        privateChannel.on("broadcast", { event: "notice" }, ({ payload }) => resolve(payload))
      );
      const publicGets = waitFor<Record<string, unknown>>((resolve) =>
        publicChannel.on("broadcast", { event: "notice" }, ({ payload }) => resolve(payload))
      );
      assert.equal((await subscribed(privateChannel)).status, "SUBSCRIBED");
      assert.equal((await subscribed(publicChannel)).status, "SUBSCRIBED");
      const response = await fetch(`${base}/realtime/v1/api/broadcast`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          apikey: anonKey,
          authorization: `Bearer ${alice.accessToken}`,
        },
        body: JSON.stringify({
          messages: [
            {
              topic: `conversation:${conv}`,
              event: "notice",
              payload: { from: "http", private: true },
              private: true,
            },
            { topic: "lobby", event: "notice", payload: { from: "http", private: false } },
          ],
        }),
      });
      assert.equal(response.status, 202);
      assert.deepEqual(await privateGets, { from: "http", private: true });
      assert.deepEqual(await publicGets, { from: "http", private: false });
    } finally {
      await closeAll();
    }
  });
}

test("[gateway] httpSend and the HTTP endpoint refuse bad credentials; private writes need the write policy", async () => {
  try {
    const alice = await signInAs(t, "MEMBER");
    const bob = await signInAs(t, "MEMBER");
    const stranger = await signInAs(t, "MEMBER");
    const conv = await conversation(alice, bob);
    const listener = (await client("2.0.0", bob.accessToken)).channel(`conversation:${conv}`, {
      config: { private: true },
    });
    const got: unknown[] = [];
    listener.on("broadcast", { event: "poke" }, ({ payload }) => got.push(payload));
    assert.equal((await subscribed(listener)).status, "SUBSCRIBED");
    const unauth = await fetch(`${base}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ topic: "lobby", event: "x", payload: {} }] }),
    });
    assert.equal(unauth.status, 401);
    await unauth.body?.cancel();
    const strangerSends = await fetch(`${base}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${stranger.accessToken}`,
      },
      body: JSON.stringify({
        messages: [{
          topic: `conversation:${conv}`,
          event: "poke",
          payload: { by: "stranger" },
          private: true,
        }],
      }),
    });
    assert.equal(strangerSends.status, 202, "accepted, as hosted does, but not delivered");
    await strangerSends.body?.cancel();
    const sender = (await client("2.0.0", alice.accessToken)).channel(`conversation:${conv}`, {
      config: { private: true },
    });
    assert.equal(await sender.httpSend("poke", { by: "alice" }).then((r) => r.success), true);
    const invalid = await fetch(`${base}/realtime/v1/api/broadcast`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${serviceKey}` },
      body: JSON.stringify({ messages: [{ topic: "lobby" }] }),
    });
    assert.equal(invalid.status, 422);
    await invalid.body?.cancel();
    const badPath = await fetch(`${base}/realtime/v1/api/broadcast/%E0%A4/events/poke`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${serviceKey}` },
      body: JSON.stringify({ payload: {} }),
    });
    assert.equal(badPath.status, 400, "bad percent-encoding in the path is 400, not 500");
    await badPath.body?.cancel();
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(got, [{ by: "alice" }]);
  } finally {
    await closeAll();
  }
});

test("[gateway] createClient(realtime.url, realtime.anonKey) from GET /api/config/public connects to the gateway", async () => {
  // A stack whose site URL is where it really listens, as `npm start` runs it.
  const port = freePort();
  const own = testApp({ AGORA_SITE_URL: `http://localhost:${port}`, AGORA_ANON_KEY: anonKey });
  const stack = startStackServer(own.deps, { port });
  await stack.gateway.ready;
  let c: SupabaseClient | null = null;
  try {
    const response = await fetch(`http://localhost:${port}/api/config/public`);
    assert.equal(response.status, 200);
    const { realtime } = await response.json();
    assert.equal(realtime.url, `http://localhost:${port}`, "the project URL createClient takes");
    c = createClient(realtime.url, realtime.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false },
    });
    const topic = `lobby-${crypto.randomUUID().slice(0, 8)}`;
    const got: unknown[] = [];
    const channel = c.channel(topic, { config: { broadcast: { self: true, ack: true } } })
      .on("broadcast", { event: "hello" }, (m) => void got.push(m.payload));
    const joined = await subscribed(channel);
    assert.equal(joined.status, "SUBSCRIBED", String(joined.err));
    assert.equal(
      await channel.send({ type: "broadcast", event: "hello", payload: { n: 1 } }),
      "ok",
    );
    await waitFor<void>((done) => {
      const check = setInterval(() => {
        if (got.length) {
          clearInterval(check);
          done();
        }
      }, 10);
    });
    assert.deepEqual(got, [{ n: 1 }]);
  } finally {
    await c?.removeAllChannels();
    await stack.shutdown();
  }
});
