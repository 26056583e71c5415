/**
 * The store live, over a real stack server: order events on `user:<buyerId>` and
 * `vendor:<vendorId>` carrying the order as GET returns it, the vendor topic refused to anyone but
 * its owner (SSE and long-poll), and the local `dev` payment provider end to end over HTTP:
 * `POST /_dev/payments/<id>/succeed|fail` and `/_dev/accounts/<id>/onboard` send signed events
 * through the webhook, and the server's own job worker applies them.
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
import { openSse, type SseStream } from "./sse-client.ts";
import { approvedVendor, checkout, product } from "../support/store.ts";

const t = testApp({ AGORA_SSE_HEARTBEAT_MS: "500" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;
const admin = await signInAs(t, "ADMIN");

const auth = (s: SignedIn) => ({ authorization: `Bearer ${s.accessToken}` });

/** The next frame with this event name (skipping others), or null. */
async function nextEvent(stream: SseStream, name: string, timeoutMs = 3_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const frame = await stream.next(deadline - Date.now());
    if (!frame) return null;
    if (frame.event === name) return JSON.parse(frame.data);
  }
  return null;
}

/** Waits until `check` passes (the server's worker runs the queued jobs). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!check(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}

test("[realtime] order events reach the vendor's owner on vendor:<id> and the buyer on user:<id>, carrying the order as GET returns it", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 1500, stock: 4 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const vendorStream = await openSse(
    `${base}/api/realtime/sse?topics=vendor:${vendor.id}`,
    auth(vendor.owner),
  );
  const buyerStream = await openSse(
    `${base}/api/realtime/sse?topics=user:${buyer.user.id}`,
    auth(buyer),
  );
  try {
    assert.equal(vendorStream.response.status, 200);
    assert.equal((await vendorStream.next())?.event, "ready");
    assert.equal((await buyerStream.next())?.event, "ready");
    const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
    const orderId = made.orders[0].id;
    const toVendor = await nextEvent(vendorStream, "order.created");
    const toBuyer = await nextEvent(buyerStream, "order.created");
    const got = await expectJson(
      await t.request("GET", `/api/store/orders/${orderId}`, { token: buyer.accessToken }),
      200,
    );
    assert.equal(toVendor?.topic, `vendor:${vendor.id}`);
    assert.deepEqual(
      toVendor?.payload,
      got,
      "the vendor's event carries the order as GET returns it",
    );
    assert.deepEqual(toBuyer?.payload, got, "so does the buyer's");

    // The dev provider over HTTP: the customer pays, the webhook's job (the server's worker) applies it.
    const paid = await fetch(`${base}/_dev/payments/${made.payment.paymentIntentId}/succeed`, {
      method: "POST",
    });
    const answer = await expectJson(paid, 200);
    assert.match(answer.eventId, /^evt_dev_/);
    // The job runs behind whatever the queue holds (other files' jobs, in a full run): up to 15 s
    // (a CI run under load once took longer than 3).
    const changed = await nextEvent(vendorStream, "order.status_changed", 15_000);
    assert.equal(changed?.payload.status, "paid");
    assert.equal(changed?.payload.payment.status, "succeeded");
    assert.equal(
      (await nextEvent(buyerStream, "order.status_changed", 15_000))?.payload.status,
      "paid",
    );
  } finally {
    vendorStream.close();
    buyerStream.close();
  }
});

test("[realtime] vendor:<id> is refused to anyone but its owner (SSE and long-poll 403)", async () => {
  const vendor = await approvedVendor(t, admin);
  const stranger = await signInAs(t, "MEMBER");
  const sse = await openSse(`${base}/api/realtime/sse?topics=vendor:${vendor.id}`, auth(stranger));
  assert.equal(sse.response.status, 403);
  sse.close();
  await expectError(
    await fetch(`${base}/api/realtime/poll?topics=vendor:${vendor.id}&timeout=0`, {
      headers: auth(admin),
    }),
    403,
    "forbidden",
  );
  await expectJson(
    await fetch(`${base}/api/realtime/poll?topics=vendor:${vendor.id}&timeout=0`, {
      headers: auth(vendor.owner),
    }),
    200,
  );
});

test("[realtime] /_dev/payments: a failed attempt, then success; a second success the same event, a failure after it 409, unknown intents 404, GET 405", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 2 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const id = made.payment.paymentIntentId;
  const order = () =>
    t.request("GET", `/api/store/orders/${made.orders[0].id}`, { token: buyer.accessToken })
      .then((r) => expectJson(r, 200));
  await expectJson(await fetch(`${base}/_dev/payments/${id}/fail`, { method: "POST" }), 200);
  const failed = await eventually(order, (o) => o.payment.status === "failed");
  assert.equal(failed.status, "pending_payment");
  const paid = await expectJson(
    await fetch(`${base}/_dev/payments/${id}/succeed`, { method: "POST" }),
    200,
  );
  assert.equal(paid.delivered, true);
  assert.equal((await eventually(order, (o) => o.status === "paid")).status, "paid");
  assert.deepEqual(
    await expectJson(await fetch(`${base}/_dev/payments/${id}/succeed`, { method: "POST" }), 200),
    { eventId: paid.eventId, delivered: true },
    "a retried success answers the same event",
  );
  await expectError(
    await fetch(`${base}/_dev/payments/${id}/fail`, { method: "POST" }),
    409,
    "conflict",
  );
  await expectError(
    await fetch(`${base}/_dev/payments/pi_dev_nothing/succeed`, { method: "POST" }),
    404,
    "not_found",
  );
  await expectError(await fetch(`${base}/_dev/payments/${id}/succeed`), 405, "invalid_request");
});

test("[realtime] /_dev/accounts/<id>/onboard completes the dev payout account through an account.updated event", async () => {
  const vendor = await approvedVendor(t, admin);
  const link = await expectJson(
    await t.request("POST", "/api/store/vendors/me/payouts", { token: vendor.owner.accessToken }),
    200,
  );
  const path = new URL(link.url).pathname;
  assert.match(path, /^\/_dev\/accounts\/acct_dev_[A-Za-z0-9]+\/onboard$/);
  await expectJson(await fetch(`${base}${path}`), 200);
  const me = await eventually(
    () =>
      t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken })
        .then((r) => expectJson(r, 200)),
    (v) => v.payouts.status === "active",
  );
  assert.deepEqual(me.payouts, { status: "active" });
});

test("[realtime] /_dev/payments is not served outside local mode", async () => {
  const hosted = testApp({ AGORA_LOCAL_MODE: "false", AGORA_SMTP_URL: "smtp://127.0.0.1:1" });
  const other = startStackServer(hosted.deps, { port: 0, jobs: false });
  try {
    await expectError(
      await fetch(`http://127.0.0.1:${other.port}/_dev/payments/pi_dev_x/succeed`, {
        method: "POST",
      }),
      404,
      "not_found",
    );
  } finally {
    await other.shutdown();
  }
});

globalThis.addEventListener("unload", () => void server.shutdown());
