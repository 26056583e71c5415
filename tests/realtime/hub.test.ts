/**
 * The event hub (functions/api/realtime/hub.ts) when its database connection fails: a LISTEN
 * refused once must not leave the hub broken. The hub talks to the real database through a TCP
 * relay in this test that refuses one connection on demand, as a restarting database or a full
 * connection table would.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { createEventHub } from "../../functions/api/realtime/hub.ts";
import type { RealtimeEvent } from "../../functions/api/realtime/events.ts";

const t = testApp();

/**
 * A Postgres server's refusal of a new connection when it is full: FATAL 53300 in answer to the
 * startup message (what a server at `max_connections` sends).
 */
function tooManyClients(): Uint8Array {
  const encoder = new TextEncoder();
  const fields = [["S", "FATAL"], ["V", "FATAL"], ["C", "53300"], [
    "M",
    "sorry, too many clients already",
  ]];
  const body = [...fields.flatMap(([k, v]) => [...encoder.encode(k + v), 0]), 0];
  const out = new Uint8Array(5 + body.length);
  out[0] = "E".charCodeAt(0);
  new DataView(out.buffer).setInt32(1, 4 + body.length);
  out.set(body, 5);
  return out;
}

/** A TCP relay to the test database; `refuseNext` refuses the next connections as a full server. */
function relay(target: URL) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const state = { refuseNext: 0, connections: 0 };
  const open = new Set<Deno.Conn>();
  (async () => {
    for await (const conn of listener) {
      state.connections++;
      if (state.refuseNext > 0) {
        state.refuseNext--;
        try {
          await conn.read(new Uint8Array(1024)); // the startup message
          await conn.write(tooManyClients());
        } finally {
          conn.close();
        }
        continue;
      }
      open.add(conn);
      const upstream = await Deno.connect({
        hostname: target.hostname,
        port: Number(target.port),
      });
      open.add(upstream);
      const pipe = (from: Deno.Conn, to: Deno.Conn) =>
        from.readable.pipeTo(to.writable).catch(() => {}).finally(() => {
          for (const c of [from, to]) {
            try {
              c.close();
            } catch {
              // closed
            }
            open.delete(c);
          }
        });
      void pipe(conn, upstream);
      void pipe(upstream, conn);
    }
  })().catch(() => {});
  const url = new URL(target);
  url.port = String((listener.addr as Deno.NetAddr).port);
  return {
    url: url.toString(),
    state,
    close() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch {
          // closed
        }
      }
    },
  };
}

test("[realtime] the event hub retries on the next subscribe after a LISTEN failed once", async () => {
  const proxy = relay(new URL(Deno.env.get("AGORA_TEST_DB_URL")!));
  const sql = postgres(proxy.url, { max: 1, onnotice: () => {} });
  const hub = createEventHub(sql, sql, () => {});
  const topic = `user:${crypto.randomUUID()}`;
  const received: RealtimeEvent[] = [];
  const subscriber = {
    topics: new Set([topic]),
    durable: (e: RealtimeEvent) => void received.push(e),
    ephemeral: () => {},
  };
  try {
    // The pool's one connection is up; the LISTEN connection the hub opens next is refused.
    await sql`select 1`;
    proxy.state.refuseNext = 1;
    await assert.rejects(hub.subscribe(subscriber), "the first subscribe fails with the LISTEN");
    assert.equal(proxy.state.refuseNext, 0, "the refused connection was the LISTEN's");

    // The next subscribe starts the hub afresh, and events arrive.
    const unsubscribe = await hub.subscribe(subscriber);
    await t.deps.sql`select app_private.emit_event(${topic}, 'test.after_retry', '{"n":1}'::jsonb)`;
    const deadline = Date.now() + 5_000;
    while (!received.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      received.map((e) => [e.topic, e.event]),
      [[topic, "test.after_retry"]],
      "the event committed after the retry is delivered, once",
    );
    unsubscribe();
  } finally {
    await hub.close();
    await sql.end({ timeout: 1 });
    proxy.close();
  }
});

test("[realtime] a long-poll that arrives while the process is stopping (its hub closed) is told 503 unavailable with Retry-After, not a 500", async () => {
  const stopping = testApp();
  const me = await signInAs(stopping, "MEMBER");
  await stopping.deps.hub.close();
  const response = await stopping.request(
    "GET",
    `/api/realtime/poll?topics=user:${me.user.id}&timeout=1`,
    { token: me.accessToken },
  );
  const body = await expectJson(response, 503);
  assert.equal(body.error.code, "unavailable");
  assert.equal(response.headers.get("retry-after"), "1");
});
