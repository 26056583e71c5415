/**
 * Postgres restarted under load, as an operator (or a hosted failover) does it: `pg_ctl restart`
 * in fast mode, then in immediate mode (a crash: no checkpoint, recovery on start), while people
 * send messages, check out and pay. The server runs in this process (the app and its job
 * worker, on a database of its own so the rest of the run keeps its database): if the driver's
 * write-after-close fault ended the process, this test would end with it.
 *
 * Clients behave as the contract tells them: a 503 (or a dropped connection) is tried again with
 * the same Idempotency-Key. What must hold after each restart:
 * - the API answers 2xx within 2 s of Postgres accepting connections again, without a restart;
 * - every failure during the outage was a 503 `unavailable` with Retry-After, never a 500;
 * - every acknowledged message exists once (one row per Idempotency-Key), numbered without gaps;
 * - every acknowledged checkout exists once, and the stock was never oversold;
 * - every paid order is paid once (one `paid` step in its history), and no job is left running;
 * - a subscriber of the conversation (SSE, resuming from its last event after every break)
 *   received every event of the conversation once, in order.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { throwawayCluster } from "../../stack/database.ts";
import { PG_BIN, run } from "../../stack/postgres.ts";
import { startJobWorker } from "../../functions/api/jobs/worker.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { devPayments } from "../../stack/dev-payments.ts";
import { closeDeps } from "../../functions/api/deps.ts";
import { freePort } from "../../stack/postgres.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse, topicEventsAfter } from "../realtime/sse-client.ts";
import { expectJson, type SignedIn, signInAs, test, testApp } from "../support/helpers.ts";
import { approvedVendor, product } from "../support/store.ts";

const { cluster, dispose } = await throwawayCluster();
// The throwaway cluster trades durability for speed (synchronous_commit off: a commit is
// acknowledged before its WAL is written). An immediate stop is a crash, so here a commit must be
// durable when it is acknowledged, as on any real database; fsync stays off (a crash of Postgres,
// not of the machine, keeps what the kernel was given).
await cluster.psql("alter system set synchronous_commit = on");
await cluster.psql("select pg_reload_conf()");
const t = testApp({ AGORA_DB_URL: cluster.url(), AGORA_DB_POOL_SIZE: "10" });
const worker = startJobWorker(t.deps, { registry: appJobs(), idleMs: 500 });
// The same app over HTTP, for the Realtime subscriber (SSE); it installs the server's guard
// against the driver's faults in this process, which plays the server.
const server = startStackServer(t.deps, { port: freePort(), jobs: false, follower: false });
const base = `http://127.0.0.1:${server.port}`;

const admin = await signInAs(t, "ADMIN");
const alice = await signInAs(t, "MEMBER");
const bob = await signInAs(t, "MEMBER");
const vendor = await approvedVendor(t, admin);
/** Per round: enough for the buyers to sell it out before or during the restart. */
const STOCK = 30;
const buyers = await Promise.all(Array.from({ length: 4 }, () => signInAs(t, "MEMBER")));
const conversation = await expectJson(
  await t.request("POST", "/api/conversations", {
    token: alice.accessToken,
    body: { type: "group", participantIds: [bob.user.id], title: "Through restarts" },
  }),
  201,
);

/** Statuses of every failed attempt, to show none was a 500. */
const failures: number[] = [];
const unavailableWithoutRetryAfter: number[] = [];

/**
 * A client's request with its retries: on a 503 (or a response the server could not give) the
 * same request again, after a short pause, until it is answered otherwise (at most `limitMs`).
 */
async function untilAnswered(
  send: () => Promise<Response>,
  opts: { api: boolean } = { api: true },
  limitMs = 30_000,
): Promise<Response> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const response = await send();
    if (response.status !== 503 && response.status < 500) return response;
    if (opts.api) failures.push(response.status);
    if (opts.api && response.status === 503 && !response.headers.get("retry-after")) {
      unavailableWithoutRetryAfter.push(response.status);
    }
    await response.body?.cancel();
    if (Date.now() > deadline) throw new Error(`still ${response.status} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Load {
  stop(): Promise<void>;
  messages: Map<string, string>;
  checkouts: Map<string, { id: string; paymentIntentId: string }>;
}

/** Senders and buyers, each one request after the other, until stopped. */
function startLoad(round: string, item: { id: string }): Load {
  let stopping = false;
  const messages = new Map<string, string>();
  const checkouts = new Map<string, { id: string; paymentIntentId: string }>();
  const sender = async (who: SignedIn, n: number) => {
    for (let i = 0; !stopping; i++) {
      const key = `${round}-${who.user.id}-${n}-${i}`;
      const response = await untilAnswered(() =>
        t.request("POST", `/api/conversations/${conversation.id}/messages`, {
          token: who.accessToken,
          body: { content: key },
          headers: { "idempotency-key": key },
        })
      );
      const body = await expectJson(response, 201);
      messages.set(key, body.id);
    }
  };
  const buyer = async (who: SignedIn) => {
    for (let i = 0; !stopping; i++) {
      const key = `${round}-${who.user.id}-${i}`;
      const response = await untilAnswered(() =>
        t.request("POST", "/api/store/orders", {
          token: who.accessToken,
          body: { items: [{ productId: item.id, quantity: 1 }] },
          headers: { "idempotency-key": key },
        })
      );
      if (response.status === 422 || response.status === 409) {
        await response.body?.cancel(); // sold out: the stock held
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const body = await expectJson(response, 201);
      checkouts.set(key, {
        id: body.checkout.id,
        paymentIntentId: body.checkout.payment.paymentIntentId,
      });
    }
  };
  // A client that gives up ends the load; its error is the test's, at `stop`.
  let failed: unknown = null;
  const running = [sender(alice, 1), sender(alice, 2), sender(bob, 1), ...buyers.map(buyer)]
    .map((p) =>
      p.catch((err) => {
        failed ??= err;
        stopping = true;
      })
    );
  return {
    messages,
    checkouts,
    async stop() {
      stopping = true;
      await Promise.all(running);
      if (failed) throw failed;
    },
  };
}

async function restartPostgres(mode: "fast" | "immediate"): Promise<number> {
  await run(join(PG_BIN, "pg_ctl"), [
    "-D",
    cluster.dataDir,
    "-m",
    mode,
    "-w",
    "-t",
    "60",
    "-l",
    join(cluster.dir, "postgres.log"),
    "restart",
  ], { asPostgres: true });
  return performance.now();
}

/**
 * Milliseconds from `since` until an authenticated read answers 200: a new request every 50 ms,
 * as clients keep arriving, without waiting for the earlier ones. (On this machine a TCP flow to
 * Postgres opened during a restart sometimes has its packets dropped for seconds; a request on
 * such a connection waits for the pool's connect timeout, while the next ones are answered.)
 */
function recoveredAfter(since: number, who: SignedIn): Promise<number> {
  return new Promise((resolve, reject) => {
    let done = false;
    const probe = async () => {
      if (done) return;
      if (performance.now() - since > 30_000) {
        done = true;
        return reject(new Error("the API did not recover in 30 s"));
      }
      setTimeout(probe, 50);
      const response = await t.request("GET", "/api/conversations", { token: who.accessToken });
      await response.body?.cancel();
      if (response.status === 200 && !done) {
        done = true;
        resolve(performance.now() - since);
      }
    };
    probe();
  });
}

/**
 * Pays a checkout through the dev provider (the local stand-in for the customer paying: not an
 * API route, so its 502s are not counted), again until it is answered.
 */
async function pay(paymentIntentId: string): Promise<void> {
  const response = await untilAnswered(
    async () =>
      (await devPayments(
        t.deps,
        new Request(`http://localhost:54321/_dev/payments/${paymentIntentId}/succeed`, {
          method: "POST",
        }),
      ).catch(() => new Response(null, { status: 503 })))!,
    { api: false },
  );
  // 202: the change is made and its event not yet acknowledged; the provider delivers it again.
  await expectJson(response, [200, 202]);
}

/** A subscriber over SSE that resumes from its last event after any break or quiet second. */
async function subscribe(who: SignedIn, topic: string) {
  const url = `${base}/api/realtime/sse?topics=${topic}`;
  const headers = { authorization: `Bearer ${who.accessToken}` };
  const first = await openSse(url, headers);
  const ready = await first.next();
  first.close();
  const start = ready!.id!;
  const received: string[] = [];
  let last = start;
  let stopping = false;
  const running = (async () => {
    while (!stopping) {
      const stream = await openSse(url, { ...headers, "last-event-id": last }).catch(() => null);
      if (!stream || stream.response.status !== 200) {
        await stream?.response.body?.cancel().catch(() => {});
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      for (;;) {
        const frame = await stream.next(1_000);
        if (!frame) break; // ended, or quiet: open it again from the last event
        if (frame.event === "ready" || !frame.id) continue;
        received.push(frame.id);
        last = frame.id;
      }
      stream.close();
    }
  })();
  return {
    start,
    received,
    async stop() {
      stopping = true;
      await running;
    },
  };
}

async function until(what: string, check: () => Promise<boolean>, limitMs = 30_000) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function assertInvariants(load: Load, item: { id: string }): Promise<void> {
  const sql = t.deps.sql;
  // Messages: one row per acknowledged key, the same one the client was given.
  const keys = [...load.messages.keys()];
  const rows = await sql<{ content: string; id: string; n: number }[]>`
    select content, min(id::text) as id, count(*)::int as n from app.messages
    where conversation_id = ${conversation.id} and content = any(${keys})
    group by content`;
  assert.equal(rows.length, keys.length, "every acknowledged message exists");
  for (const row of rows) {
    assert.equal(row.n, 1, `message ${row.content} exists once`);
    assert.equal(row.id, load.messages.get(row.content), "the message the client was given");
  }
  const [gaps] = await sql<{ n: number; max: number }[]>`
    select count(*)::int as n, coalesce(max(seq), 0)::int as max from app.messages
    where conversation_id = ${conversation.id}`;
  assert.equal(gaps.n, gaps.max, "messages are numbered without gaps");
  // Checkouts: one per acknowledged key; the stock never oversold.
  const checkoutKeys = [...load.checkouts.keys()];
  const [made] = await sql<{ n: number }[]>`
    select count(*)::int as n from app.checkouts where idempotency_key = any(${checkoutKeys})`;
  assert.equal(made.n, checkoutKeys.length, "one checkout per acknowledged key");
  const [stock] = await sql<{ stock: number; reserved: number; sold: number }[]>`
    select p.stock, p.reserved,
           (select coalesce(sum(i.quantity), 0)::int from app.order_items i
            join app.orders o on o.id = i.order_id
            where i.product_id = p.id and o.status <> 'cancelled') as sold
    from app.products p where p.id = ${item.id}`;
  assert.ok(stock.reserved <= stock.stock, "no more held than in stock");
  assert.ok(stock.sold <= STOCK, `not oversold: ${stock.sold} of ${STOCK}`);
}

test("[faults] Postgres restarted (fast, then immediate) under sends, checkouts and payments: nothing lost, nothing twice, 2xx within 2 s", async () => {
  try {
    const topic = `conversation:${conversation.id}`;
    const subscriber = await subscribe(bob, topic);
    const recoveries: Record<string, number> = {};
    const paidIntents: string[] = [];
    for (const mode of ["fast", "immediate"] as const) {
      const item = await product(t, vendor, { stock: STOCK, price: 500 });
      const load = startLoad(mode, item);
      await new Promise((r) => setTimeout(r, 700));
      const back = await restartPostgres(mode);
      recoveries[mode] = await recoveredAfter(back, alice);
      await new Promise((r) => setTimeout(r, 500));
      // Payments while the database restarts once more.
      const toPay = [...load.checkouts.values()].slice(0, 6);
      const paying = Promise.all(toPay.map((c) => pay(c.paymentIntentId)));
      await restartPostgres(mode);
      await paying;
      paidIntents.push(...toPay.map((c) => c.paymentIntentId));
      await load.stop();
      assert.ok(load.messages.size > 0 && load.checkouts.size > 0, "the load did something");
      await assertInvariants(load, item);
    }
    // The subscriber caught up: every event of the conversation once, in order.
    await new Promise((r) => setTimeout(r, 1_500));
    await subscriber.stop();
    const expected = await topicEventsAfter(t.deps.sql, topic, subscriber.start);
    assert.ok(expected.length > 0);
    assert.deepEqual(
      subscriber.received,
      expected,
      "the subscriber got every event once, in order",
    );
    assert.deepEqual(failures.filter((s) => s !== 503), [], "no failure other than 503");
    assert.deepEqual(unavailableWithoutRetryAfter, [], "every 503 says Retry-After");
    for (const [mode, ms] of Object.entries(recoveries)) {
      assert.ok(ms < 2_000, `2xx ${Math.round(ms)} ms after the ${mode} restart (at most 2 s)`);
    }
    // Every paid checkout's orders turn paid, once; no job is left running or dead.
    await until("the payments applied", async () => {
      const [row] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from app.orders o join app.checkouts c on c.id = o.checkout_id
        where c.payment_intent_id = any(${paidIntents}) and o.payment_status <> 'succeeded'`;
      return row.n === 0;
    });
    const [twice] = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from (
        select h.order_id from app.order_history h
        join app.orders o on o.id = h.order_id join app.checkouts c on c.id = o.checkout_id
        where c.payment_intent_id = any(${paidIntents}) and h.to_status = 'paid'
        group by h.order_id having count(*) > 1) x`;
    assert.equal(twice.n, 0, "no order paid twice");
    await until("no job left running", async () => {
      const [row] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from app_private.jobs where state in ('running', 'dead')`;
      return row.n === 0;
    });
  } finally {
    await worker.stop();
    await server.shutdown();
    await closeDeps(t.deps).catch(() => {});
    await dispose();
  }
});
