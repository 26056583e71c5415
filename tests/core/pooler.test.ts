/**
 * The API through a transaction-mode pooler, as a hosted project runs it through Supavisor's port
 * 6543: a real PgBouncer (stack/pgbouncer.ts) with `pool_mode = transaction` and three server
 * connections in front of the run's database, the app's pool of twenty connections pointed at it
 * (`AGORA_DB_POOL_MODE=transaction`: no named prepared statements), and its one session connection
 * (`AGORA_DB_SESSION_URL`, LISTEN) straight to Postgres. Every transaction may land on another
 * server connection, between other clients' transactions: sign-in, messages, a checkout and its
 * payment, notifications, a configuration change, live events over SSE, and twenty requests at
 * once, with each answer belonging to its caller.
 */
import assert from "node:assert/strict";
import { closeDeps } from "../../functions/api/deps.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";
import { startPgBouncer } from "../../stack/pgbouncer.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse } from "../realtime/sse-client.ts";
import { expectJson, type SignedIn, signInAs, test, testApp, testEnv } from "../support/helpers.ts";
import { approvedVendor, checkout, devPay, product } from "../support/store.ts";

/** PgBouncer's server connections (`default_pool_size`): fewer than the app's clients. */
const SERVER_CONNECTIONS = 3;
/** The run's database itself (under `npm test -- --pooler` testEnv points the API elsewhere). */
const direct = Deno.env.get("AGORA_TEST_DB_URL")!;
/** The test environment as a direct connection sees it: no pooler settings of the run's own. */
function directEnv(): Record<string, string> {
  const { AGORA_DB_POOL_MODE: _mode, AGORA_DB_SESSION_URL: _session, ...env } = testEnv();
  return { ...env, AGORA_DB_URL: direct };
}
const bouncer = await startPgBouncer({
  target: direct,
  poolMode: "transaction",
  poolSize: SERVER_CONNECTIONS,
});
const t = testApp({
  AGORA_DB_URL: bouncer.url,
  AGORA_DB_POOL_MODE: "transaction",
  AGORA_DB_SESSION_URL: direct,
  AGORA_DB_POOL_SIZE: "20",
});
// Over HTTP for SSE; the local stack's Realtime gateway listens on the session connection too.
const server = startStackServer(t.deps, { port: 0, jobs: false, follower: false });
const base = `http://127.0.0.1:${server.port}`;

const post = (who: SignedIn, path: string, body: unknown, headers?: Record<string, string>) =>
  t.request("POST", path, { token: who.accessToken, body, headers });
const get = (who: SignedIn, path: string) => t.request("GET", path, { token: who.accessToken });

/** PgBouncer's own count of the server connections it holds to the database. */
async function serverConnections(): Promise<number> {
  const servers = await bouncer.admin("show servers");
  return servers.filter((s) => s.database === "postgres").length;
}

test("[core] settings: a transaction-mode pooler turns statement preparation off and needs a session URL for LISTEN", () => {
  const env = directEnv();
  const pooled = "postgresql://postgres:pw@pooler.example.test:6543/postgres";
  const session = "postgresql://postgres:pw@db.example.test:5432/postgres";
  assert.throws(
    () => loadSettings({ ...env, AGORA_DB_URL: pooled }),
    /AGORA_DB_SESSION_URL/,
    "Supavisor's transaction port without a session URL: refused at start",
  );
  const hosted = loadSettings({ ...env, AGORA_DB_URL: pooled, AGORA_DB_SESSION_URL: session });
  assert.equal(hosted.dbPoolMode, "transaction", "port 6543 is taken as transaction mode");
  assert.equal(hosted.sessionDatabaseUrl, session);
  const plain = loadSettings({ ...env, AGORA_DB_URL: session });
  assert.equal(plain.dbPoolMode, "session");
  assert.equal(plain.sessionDatabaseUrl, session, "unset, the session URL is the pool's");
  assert.throws(() =>
    loadSettings({ ...env, AGORA_DB_URL: session, AGORA_DB_POOL_MODE: "transaction" })
  );
  assert.equal(t.deps.settings.dbPoolMode, "transaction");
});

test("[core] through PgBouncer in transaction mode: sign-in, messages, SSE, a paid checkout, notifications, the configuration", async () => {
  const admin = await signInAs(t, "ADMIN");
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "MEMBER");
  const me = await expectJson(await get(alice, "/api/auth/session"), 200);
  assert.equal(me.user.id, alice.user.id);

  // Messages, and bob's live stream of the conversation (the hub's LISTEN, on the session URL).
  const conversation = await expectJson(
    await post(alice, "/api/conversations", {
      type: "group",
      participantIds: [bob.user.id],
      title: "Through the pooler",
    }),
    201,
  );
  let sentId = "";
  const stream = await openSse(
    `${base}/api/realtime/sse?topics=conversation:${conversation.id}`,
    { authorization: `Bearer ${bob.accessToken}` },
  );
  try {
    assert.equal(stream.response.status, 200);
    assert.equal((await stream.next())?.event, "ready");
    const sent = await expectJson(
      await post(alice, `/api/conversations/${conversation.id}/messages`, { content: "hello" }, {
        "idempotency-key": crypto.randomUUID(),
      }),
      201,
    );
    sentId = sent.id;
    const frame = await stream.next(2_000);
    assert.equal(frame?.event, "message.created", "the event arrived live");
    assert.equal(JSON.parse(frame!.data).payload.id, sent.id);
  } finally {
    stream.close();
  }
  const listed = await expectJson(
    await get(bob, `/api/conversations/${conversation.id}/messages`),
    200,
  );
  assert.deepEqual(listed.items.map((m: { id: string }) => m.id), [sentId]);

  // A checkout, paid through the dev provider (its webhook job drained through the pool).
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 1500, stock: 5 });
  const bought = await checkout(t, alice, [{ productId: item.id, quantity: 2 }], {
    "idempotency-key": crypto.randomUUID(),
  });
  await devPay(t, bought.checkout.payment.paymentIntentId);
  const orders = await expectJson(await get(alice, "/api/store/orders"), 200);
  const order = orders.items.find((o: { checkoutId: string }) =>
    o.checkoutId === bought.checkout.id
  );
  assert.equal(order?.status, "paid");

  // Notifications: create, list, read all.
  const created = await expectJson(
    await post(alice, "/api/notifications", { type: "SYSTEM", title: "Pooled", body: "" }),
    201,
  );
  const inbox = await expectJson(await get(alice, "/api/notifications"), 200);
  assert.ok(inbox.items.some((n: { id: string }) => n.id === created.id));
  assert.ok(inbox.unreadCount >= 1);
  await expectJson(
    await t.request("PUT", "/api/notifications/read-all", { token: alice.accessToken }),
    200,
  );
  assert.equal((await expectJson(await get(alice, "/api/notifications"), 200)).unreadCount, 0);

  // An ADMIN changes the configuration; the public configuration shows it.
  const current = await expectJson(await get(admin, "/api/admin/config"), 200);
  const brand = `Pooled ${crypto.randomUUID().slice(0, 6)}`;
  const changed = await expectJson(
    await t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      body: {
        config: { whiteLabel: { brandName: brand } },
        reason: "through the pooler",
        expectedVersion: current.version,
      },
    }),
    200,
  );
  assert.equal(changed.version, current.version + 1);
  t.deps.config.invalidate();
  const pub = await expectJson(await t.request("GET", "/api/config/public"), 200);
  assert.equal(pub.whiteLabel.brandName, brand);

  assert.ok(
    await serverConnections() <= SERVER_CONNECTIONS,
    "PgBouncer held at most its pool of server connections",
  );
});

test("[core] through PgBouncer in transaction mode: twenty requests at once on three server connections, each answer its caller's", async () => {
  const people = await Promise.all(Array.from({ length: 4 }, () => signInAs(t, "MEMBER")));
  const [host, ...guests] = people;
  const conversation = await expectJson(
    await post(host, "/api/conversations", {
      type: "group",
      participantIds: guests.map((g) => g.user.id),
      title: "Crowded",
    }),
    201,
  );
  const path = `/api/conversations/${conversation.id}/messages`;
  const ROUNDS = 5;
  const PARALLEL = 20;
  const statuses: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all(Array.from({ length: PARALLEL }, async (_, i) => {
      const who = people[i % people.length];
      let response: Response;
      switch (i % 5) {
        case 0:
          response = await post(who, path, { content: `r${round}-${i}` }, {
            "idempotency-key": crypto.randomUUID(),
          });
          break;
        case 1:
          response = await get(who, path);
          break;
        case 2:
          response = await post(who, "/api/notifications", {
            type: "SYSTEM",
            title: `for ${who.user.id}`,
            body: "",
          });
          break;
        case 3: {
          // Each caller sees only their own inbox: claims never cross between transactions.
          response = await get(who, "/api/notifications");
          const body = await response.clone().json();
          for (const n of body.items ?? []) {
            if (n.title.startsWith("for ")) assert.equal(n.title, `for ${who.user.id}`);
          }
          break;
        }
        default: {
          response = await get(who, "/api/auth/session");
          const body = await response.clone().json();
          assert.equal(body.user?.id, who.user.id, "the session is the caller's");
        }
      }
      statuses.push(response.status);
      await response.body?.cancel();
    }));
    // A new sign-in in every round, while the others' transactions run.
    await signInAs(t, "SUBSCRIBER");
  }
  const failed = statuses.filter((s) => s >= 300);
  assert.deepEqual(failed, [], `every request succeeded (${statuses.length})`);

  const [sent] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.messages where conversation_id = ${conversation.id}`;
  assert.equal(sent.n, ROUNDS * (PARALLEL / 5), "every message was stored once");
  const clients = (await bouncer.admin("show clients")).filter((c) => c.database === "postgres");
  assert.ok(
    clients.length > SERVER_CONNECTIONS,
    `more clients (${clients.length}) than server connections shared them`,
  );
  assert.ok(await serverConnections() <= SERVER_CONNECTIONS);
});

test("[core] pooler test: stop the server, the app and PgBouncer", async () => {
  await server.shutdown();
  await closeDeps(t.deps);
  await bouncer.stop();
});
