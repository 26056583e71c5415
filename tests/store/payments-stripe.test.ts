/**
 * Payments with Stripe: the real `stripe` SDK pointed at a stand-in of Stripe's API
 * (tests/support/stripe-stand-in.ts), webhook events signed with the SDK's own test helper. The
 * PaymentIntent of a checkout, the signed webhook (bad signatures, replays, events out of order),
 * Stripe being down, refunds, Connect onboarding, settlements run twice and concurrently, payouts
 * held and released, a refund after settlement, and a replayed webhook that never credits twice.
 */
import assert from "node:assert/strict";
import Stripe from "stripe";
import {
  expectError,
  expectJson,
  type SignedIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { startStripeStandIn } from "../support/stripe-stand-in.ts";
import {
  approvedVendor,
  checkout,
  deliver as deliverOrder,
  drainJobs,
  move,
  product,
  type VendorFixture,
} from "../support/store.ts";

const stripe = startStripeStandIn();
const t = testApp({
  AGORA_STRIPE_SECRET_KEY: stripe.secretKey,
  AGORA_STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
  AGORA_STRIPE_API_URL: stripe.url,
});
const admin = await signInAs(t, "ADMIN");

/** Sends a signed event about `object` to the webhook, as Stripe would. */
async function sendEvent(type: string, object: Record<string, unknown>) {
  const event = await stripe.event(type, object);
  const response = await t.request("POST", "/api/store/webhooks/stripe", {
    headers: { "content-type": "application/json", "stripe-signature": event.signature },
    rawBody: event.body,
  });
  return { event, response };
}

/** The customer pays the checkout on Stripe's side; Stripe tells the webhook; the job runs. */
async function pay(paymentIntentId: string) {
  const pi = stripe.confirm(paymentIntentId);
  const { response } = await sendEvent("payment_intent.succeeded", pi);
  await expectJson(response, 200);
  await drainJobs(t.deps);
}

const getOrder = async (who: SignedIn, id: string) =>
  await expectJson(
    await t.request("GET", `/api/store/orders/${id}`, { token: who.accessToken }),
    200,
  );

async function paidOrder(vendor: VendorFixture, buyer: SignedIn, price = 2000) {
  const item = await product(t, vendor, { price, stock: 20 });
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  await pay(made.payment.paymentIntentId);
  return { made, order: await getOrder(buyer, made.orders[0].id) };
}

/** A vendor whose Connect account is onboarded (through the API and an account.updated event). */
async function onboardedVendor(): Promise<VendorFixture & { account: string }> {
  const vendor = await approvedVendor(t, admin);
  await expectJson(
    await t.request("POST", "/api/store/vendors/me/payouts", { token: vendor.owner.accessToken }),
    200,
  );
  const [{ account }] = await t.deps.sql<{ account: string }[]>`
    select payout_account_id as account from app.vendors where id = ${vendor.id}`;
  const { response } = await sendEvent("account.updated", stripe.completeOnboarding(account));
  await expectJson(response, 200);
  await drainJobs(t.deps);
  return { ...vendor, account };
}

const requestsTo = (path: string) => stripe.requests.filter((r) => r.path === path);

test("[stripe] a checkout makes its PaymentIntent through the SDK: the amount, transfer_group = checkout, key checkout:<id>", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 1234, stock: 5 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 2 }]);
  assert.equal(made.payment.provider, "stripe");
  assert.match(made.payment.paymentIntentId, /^pi_/);
  const request = stripe.requests.findLast((r) =>
    r.path === "/v1/payment_intents" && r.idempotencyKey === `checkout:${made.id}`
  );
  assert.ok(request, "created with the idempotency key checkout:<id>");
  assert.deepEqual(request.params.amount, "2468");
  assert.equal(request.params.currency, "usd");
  assert.equal(request.params.transfer_group, made.id);
  assert.deepEqual(request.params.metadata, { checkoutId: made.id, buyerId: buyer.user.id });
  const pi = stripe.objects.get(made.payment.paymentIntentId)!;
  assert.equal(made.payment.clientSecret, pi.client_secret);
});

test("[stripe] resuming a checkout's payment elsewhere answers its intent and client secret; a lost intent is found again by its key", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 700, stock: 5 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const resume = () =>
    t.request("POST", `/api/store/checkouts/${made.id}/payment`, { token: buyer.accessToken });
  const { checkout: resumed } = await expectJson(await resume(), 200);
  assert.equal(resumed.payment.provider, "stripe");
  assert.equal(resumed.payment.paymentIntentId, made.payment.paymentIntentId);
  assert.equal(resumed.payment.clientSecret, made.payment.clientSecret);
  assert.equal(
    resumed.payment.clientSecret,
    stripe.objects.get(made.payment.paymentIntentId)!.client_secret,
  );

  // The intent made but never attached (the request died in between): Stripe answers the same
  // intent for the same key, and it is attached now.
  await t.deps.sql`update app.checkouts set payment_intent_id = null where id = ${made.id}`;
  await t.deps.sql`delete from app_private.checkout_secrets where checkout_id = ${made.id}`;
  const { checkout: found } = await expectJson(await resume(), 200);
  assert.equal(found.payment.paymentIntentId, made.payment.paymentIntentId);
  assert.equal(found.payment.clientSecret, made.payment.clientSecret);
  const replayed = stripe.requests.findLast((r) =>
    r.path === "/v1/payment_intents" && r.idempotencyKey === `checkout:${made.id}`
  );
  assert.equal(replayed?.replayed, true, "the same key replayed the first intent");

  await pay(made.payment.paymentIntentId);
  await expectError(await resume(), 422, "invalid_transition");
  const stranger = await signInAs(t, "SUBSCRIBER");
  await expectError(
    await t.request("POST", `/api/store/checkouts/${made.id}/payment`, {
      token: stranger.accessToken,
    }),
    404,
    "not_found",
  );
});

test("[stripe] POST /api/store/webhooks/stripe: a bad or missing signature is 400 and stores nothing", async () => {
  const [before] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app_private.stripe_events`;
  const event = await stripe.event("payment_intent.succeeded", {
    id: "pi_forged",
    object: "payment_intent",
  });
  const tampered = event.body.replace("pi_forged", "pi_forget");
  for (
    const [headers, body] of [
      [{ "stripe-signature": event.signature }, tampered],
      [{ "stripe-signature": "t=1,v1=deadbeef" }, event.body],
      [{}, event.body],
      [{ "stripe-signature": await signedWith("whsec_someone_else", event.body) }, event.body],
    ] as const
  ) {
    await expectError(
      await t.request("POST", "/api/store/webhooks/stripe", {
        headers: { "content-type": "application/json", ...headers },
        rawBody: body,
      }),
      400,
      "invalid_request",
    );
  }
  const [after] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app_private.stripe_events`;
  assert.equal(after.n, before.n);
});

test("[stripe] POST /api/store/webhooks/stripe: a correctly signed body that is not an event is 400 and stores nothing", async () => {
  const [before] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app_private.stripe_events`;
  const bodies = [
    "null",
    "[]",
    '"payment_intent.succeeded"',
    JSON.stringify({ type: "payment_intent.succeeded", data: { object: { id: "pi_x" } } }),
    JSON.stringify({ id: null, type: "payment_intent.succeeded" }),
    JSON.stringify({ id: "evt_no_type", data: null }),
    // Text Postgres cannot store: the event would be lost whole when recorded.
    '{"id":"evt_nul","type":"payment_intent.succeeded","data":{"object":{"id":"pi_\\u0000"}}}',
    '{"id":"evt_surrogate","type":"payment_intent.succeeded","data":{"object":{"id":"pi_\\ud800"}}}',
  ];
  for (const body of bodies) {
    const response = await t.request("POST", "/api/store/webhooks/stripe", {
      headers: {
        "content-type": "application/json",
        "stripe-signature": await signedWith(stripe.webhookSecret, body),
      },
      rawBody: body,
    });
    await expectError(response, 400, "invalid_request");
  }
  const [after] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app_private.stripe_events`;
  assert.equal(after.n, before.n, "nothing stored");
});

async function signedWith(secret: string, payload: string) {
  return await new Stripe("sk_test_x").webhooks.generateTestHeaderStringAsync({ payload, secret });
}

test("[stripe] a verified event answers at once with the work queued; the job pays the order; a replay does nothing", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 5000, stock: 3 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const pi = stripe.confirm(made.payment.paymentIntentId);
  const { event, response } = await sendEvent("payment_intent.succeeded", pi);
  assert.deepEqual(await expectJson(response, 200), { received: true, duplicate: false });
  assert.equal(
    (await getOrder(buyer, made.orders[0].id)).status,
    "pending_payment",
    "queued, not done inline",
  );
  await drainJobs(t.deps);
  const paid = await getOrder(buyer, made.orders[0].id);
  assert.equal(paid.status, "paid");
  // The same delivery again: nothing stored, nothing queued, nothing moved.
  const replay = await t.request("POST", "/api/store/webhooks/stripe", {
    headers: { "content-type": "application/json", "stripe-signature": event.signature },
    rawBody: event.body,
  });
  assert.deepEqual(await expectJson(replay, 200), { received: true, duplicate: true });
  await drainJobs(t.deps);
  const [jobs] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app_private.jobs where dedupe_key = ${
    "stripe-event:" + event.id
  }`;
  assert.equal(jobs.n, 1, "one job for the event");
  assert.deepEqual(await getOrder(buyer, made.orders[0].id), paid, "the replay changed nothing");
  const [product_] = await t.deps.sql<
    { stock: number }[]
  >`select stock from app.products where id = ${item.id}`;
  assert.equal(product_.stock, 2, "the unit was sold once");
});

test("[stripe] events out of order: the job applies the PaymentIntent as Stripe has it now", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 900, stock: 3 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const id = made.payment.paymentIntentId;
  // The decline happened first, then the success; Stripe delivers the success first.
  const declined = structuredClone(stripe.decline(id));
  const succeeded = stripe.confirm(id);
  await expectJson((await sendEvent("payment_intent.succeeded", succeeded)).response, 200);
  await expectJson((await sendEvent("payment_intent.payment_failed", declined)).response, 200);
  await drainJobs(t.deps);
  const order = await getOrder(buyer, made.orders[0].id);
  assert.equal(order.status, "paid");
  assert.equal(order.payment.status, "succeeded", "the late failure did not undo the payment");

  // An event whose copy says succeeded, for an intent Stripe has not charged: nothing is paid.
  const other = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const claim: Record<string, unknown> = {
    ...stripe.objects.get(other.checkout.payment.paymentIntentId)!,
    status: "succeeded",
  };
  await expectJson((await sendEvent("payment_intent.succeeded", claim)).response, 200);
  await drainJobs(t.deps);
  assert.equal((await getOrder(buyer, other.checkout.orders[0].id)).status, "pending_payment");
  assert.ok(
    stripe.requests.some((r) => r.method === "GET" && r.path === `/v1/payment_intents/${claim.id}`),
    "the job read the intent from Stripe",
  );
});

test("[stripe] Stripe down: POST /api/store/orders is 503 payment_provider_unavailable, nothing is held, the key works again", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 700, stock: 2 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const headers = { "idempotency-key": `down-${crypto.randomUUID()}` };
  stripe.setDown(true);
  try {
    const response = await t.request("POST", "/api/store/orders", {
      token: buyer.accessToken,
      headers,
      body: { items: [{ productId: item.id, quantity: 2 }] },
    });
    await expectError(response, 503, "payment_provider_unavailable");
  } finally {
    stripe.setDown(false);
  }
  const [held] = await t.deps.sql<{ stock: number; reserved: number }[]>`
    select stock, reserved from app.products where id = ${item.id}`;
  assert.deepEqual({ ...held }, { stock: 2, reserved: 0 }, "the reservation was released");
  const retried = await checkout(t, buyer, [{ productId: item.id, quantity: 2 }], headers);
  assert.equal(retried.checkout.orders[0].status, "pending_payment");
});

test("[stripe] a vendor's cancellation refunds through Stripe once (key refund:<orderId>), however often the job runs", async () => {
  const vendor = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { order, made } = await paidOrder(vendor, buyer, 4200);
  await move(t, vendor.owner, order.id, { status: "cancelled", reason: "cannot ship" });
  await drainJobs(t.deps);
  // A second run of the same job (a crash after Stripe answered): Stripe replays the refund.
  await t.deps.sql`
    select app_private.enqueue_job('store.refund', ${
    t.deps.sql.json({ orderId: order.id })
  }::jsonb)`;
  await t.deps.sql`update app.refunds set status = 'pending' where order_id = ${order.id}`;
  await drainJobs(t.deps);
  const refunds = requestsTo("/v1/refunds").filter((r) =>
    r.idempotencyKey === `refund:${order.id}`
  );
  assert.equal(refunds.length, 2, "asked twice");
  assert.deepEqual(refunds.map((r) => r.replayed), [false, true], "Stripe replayed the second");
  const made_ = [...stripe.objects.values()].filter((o) =>
    o.object === "refund" && o.payment_intent === made.payment.paymentIntentId
  );
  assert.equal(made_.length, 1, "one refund at Stripe");
  assert.equal(made_[0].amount, 4200);
  const after = await getOrder(buyer, order.id);
  assert.equal(after.payment.status, "refunded");
  assert.equal(after.payment.refund.status, "succeeded");
});

test("[stripe] POST /api/store/vendors/me/payouts: a Connect account and an onboarding link; account.updated (re-read) makes payouts active", async () => {
  const vendor = await approvedVendor(t, admin);
  const first = await expectJson(
    await t.request("POST", "/api/store/vendors/me/payouts", { token: vendor.owner.accessToken }),
    200,
  );
  assert.match(first.url, /^https:\/\/connect\.stripe\.com\/setup\//);
  const second = await expectJson(
    await t.request("POST", "/api/store/vendors/me/payouts", { token: vendor.owner.accessToken }),
    200,
  );
  assert.notEqual(second.url, first.url, "a fresh link each time");
  const accounts = requestsTo("/v1/accounts").filter((r) =>
    r.idempotencyKey === `vendor-account:${vendor.id}`
  );
  assert.equal(accounts.length, 1, "one account per vendor");
  assert.equal(accounts[0].params.type, "express");
  const me = await expectJson(
    await t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken }),
    200,
  );
  assert.deepEqual(me.payouts, { status: "pending" });
  const [{ account }] = await t.deps.sql<{ account: string }[]>`
    select payout_account_id as account from app.vendors where id = ${vendor.id}`;
  // An event claiming activation for an account Stripe has not enabled changes nothing.
  await expectJson(
    (await sendEvent("account.updated", {
      ...stripe.objects.get(account)!,
      payouts_enabled: true,
    })).response,
    200,
  );
  await drainJobs(t.deps);
  const still = await expectJson(
    await t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken }),
    200,
  );
  assert.notEqual(still.payouts.status, "active");
  await expectJson(
    (await sendEvent("account.updated", stripe.completeOnboarding(account))).response,
    200,
  );
  await drainJobs(t.deps);
  const active = await expectJson(
    await t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken }),
    200,
  );
  assert.deepEqual(active.payouts, { status: "active" });
  const nobody = await signInAs(t, "SUBSCRIBER");
  await expectError(
    await t.request("POST", "/api/store/vendors/me/payouts", { token: nobody.accessToken }),
    404,
    "not_found",
  );
});

/** The sale lines of some orders, by order. */
async function saleLines(orderIds: string[]) {
  return await t.deps.sql<{ order_id: string; settlement_id: string }[]>`
    select order_id, settlement_id from app.settlement_lines
    where kind = 'sale' and order_id = any(${orderIds}::uuid[])`;
}

test("[stripe] settlements: run twice and concurrently, each order settled once, one transfer with key settlement:<id>; a replayed webhook never credits twice", async () => {
  const vendor = await onboardedVendor();
  const buyer = await signInAs(t, "SUBSCRIBER");
  const orders: string[] = [];
  let replay: { body: string; signature: string } | null = null;
  for (const price of [1010, 2999]) {
    const item = await product(t, vendor, { price, stock: 5 });
    const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
    const pi = stripe.confirm(made.payment.paymentIntentId);
    const { event, response } = await sendEvent("payment_intent.succeeded", pi);
    await expectJson(response, 200);
    replay ??= event;
    await drainJobs(t.deps);
    await deliverOrder(t, vendor, made.orders[0].id);
    orders.push(made.orders[0].id);
  }
  // The first payment's webhook again, after delivery: nothing is paid or credited twice.
  await expectJson(
    await t.request("POST", "/api/store/webhooks/stripe", {
      headers: { "content-type": "application/json", "stripe-signature": replay!.signature },
      rawBody: replay!.body,
    }),
    200,
  );
  const run = () =>
    t.request("POST", "/api/admin/settlements/run", { token: admin.accessToken, body: {} });
  const concurrent = await Promise.all([run(), run(), run()]);
  for (const response of concurrent) await expectJson(response, [200, 409]);
  const again = await expectJson(await run(), 200);
  assert.equal(
    again.settlements.filter((s: { vendorId: string }) => s.vendorId === vendor.id).length,
    0,
    "running again settles nothing of this vendor",
  );
  const lines = await saleLines(orders);
  assert.equal(lines.length, 2, "each order settled exactly once");
  assert.equal(new Set(lines.map((l) => l.settlement_id)).size, 1, "in one settlement");
  await drainJobs(t.deps);
  const listed = await expectJson(
    await t.request("GET", `/api/admin/settlements?vendorId=${vendor.id}`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.equal(listed.items.length, 1);
  const settlement = listed.items[0];
  // 5% of 1010 = 50.5 -> 51; of 2999 = 149.95 -> 150.
  assert.deepEqual(
    [
      settlement.gross.amount,
      settlement.commission.amount,
      settlement.refunds.amount,
      settlement.net.amount,
    ],
    [4009, 201, 0, 3808],
  );
  assert.equal(settlement.status, "paid");
  const transfers = requestsTo("/v1/transfers").filter((r) =>
    r.idempotencyKey === `settlement:${settlement.id}`
  );
  assert.equal(transfers.length, 1, "one transfer request");
  assert.equal(transfers[0].params.destination, vendor.account);
  assert.equal(transfers[0].params.amount, "3808");
  assert.equal(
    stripe.objects.get(settlement.transferId)?.amount,
    3808,
    "the transfer exists at Stripe",
  );
  const own = await expectJson(
    await t.request("GET", "/api/store/vendors/me/settlements", {
      token: vendor.owner.accessToken,
    }),
    200,
  );
  assert.deepEqual(own.items.map((s: { id: string }) => s.id), [settlement.id]);
  const me = await expectJson(
    await t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken }),
    200,
  );
  assert.deepEqual(me.balances.settled, { amount: 3808, currency: "USD" });
});

test("[stripe] a vendor whose payout account is not active is held, and paid once it is", async () => {
  const vendor = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { order } = await paidOrder(vendor, buyer, 3000);
  await deliverOrder(t, vendor, order.id);
  await expectJson(
    await t.request("POST", "/api/admin/settlements/run", { token: admin.accessToken, body: {} }),
    200,
  );
  await drainJobs(t.deps);
  const held = await expectJson(
    await t.request("GET", `/api/admin/settlements?vendorId=${vendor.id}&status=held`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.equal(held.items.length, 1, "held, not lost");
  await expectJson(
    await t.request("POST", "/api/store/vendors/me/payouts", { token: vendor.owner.accessToken }),
    200,
  );
  const [{ account }] = await t.deps.sql<{ account: string }[]>`
    select payout_account_id as account from app.vendors where id = ${vendor.id}`;
  await expectJson(
    (await sendEvent("account.updated", stripe.completeOnboarding(account))).response,
    200,
  );
  await drainJobs(t.deps);
  const paid = await expectJson(
    await t.request("GET", `/api/admin/settlements?vendorId=${vendor.id}`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.equal(paid.items[0].status, "paid");
  assert.equal(paid.items[0].net.amount, 2850);
  assert.equal(stripe.objects.get(paid.items[0].transferId)?.destination, account);
});

test("[stripe] a refund after settlement is deducted from the vendor's next settlement", async () => {
  const vendor = await onboardedVendor();
  const buyer = await signInAs(t, "SUBSCRIBER");
  const first = await paidOrder(vendor, buyer, 2000);
  await deliverOrder(t, vendor, first.order.id);
  const run1 = await expectJson(
    await t.request("POST", "/api/admin/settlements/run", { token: admin.accessToken, body: {} }),
    200,
  );
  assert.ok(run1.settlements.some((s: { vendorId: string }) => s.vendorId === vendor.id));
  await drainJobs(t.deps);
  await move(t, admin, first.order.id, { status: "refunded", reason: "returned" });
  await drainJobs(t.deps);
  const second = await paidOrder(vendor, buyer, 5000);
  await deliverOrder(t, vendor, second.order.id);
  const run2 = await expectJson(
    await t.request("POST", "/api/admin/settlements/run", {
      token: admin.accessToken,
      body: { asOf: new Date().toISOString() },
    }),
    200,
  );
  const next = run2.settlements.find((s: { vendorId: string }) => s.vendorId === vendor.id);
  assert.deepEqual(
    [
      next.orderCount,
      next.gross.amount,
      next.commission.amount,
      next.refunds.amount,
      next.net.amount,
    ],
    [1, 5000, 250, 2000, 2750],
  );
  await drainJobs(t.deps);
  const transfers = requestsTo("/v1/transfers").filter((r) =>
    r.params.destination === vendor.account
  );
  assert.deepEqual(transfers.map((r) => r.params.amount), ["1900", "2750"]);
});

test("[stripe] the stand-in answers as Stripe: its key, unknown parameters, missing objects, idempotency conflicts", async () => {
  const client = new Stripe(stripe.secretKey, {
    host: "127.0.0.1",
    port: Number(new URL(stripe.url).port),
    protocol: "http",
    maxNetworkRetries: 0,
  });
  const wrongKey = new Stripe("sk_test_wrong", {
    host: "127.0.0.1",
    port: Number(new URL(stripe.url).port),
    protocol: "http",
    maxNetworkRetries: 0,
  });
  await assert.rejects(
    wrongKey.paymentIntents.retrieve("pi_x"),
    (err: Stripe.errors.StripeError) => {
      assert.equal(err.type, "StripeAuthenticationError");
      assert.equal(err.statusCode, 401);
      return true;
    },
  );
  await assert.rejects(
    client.paymentIntents.retrieve("pi_missing"),
    (err: Stripe.errors.StripeError) => {
      assert.equal(err.statusCode, 404);
      assert.equal(err.code, "resource_missing");
      return true;
    },
  );
  await assert.rejects(
    client.paymentIntents.create({ amount: 10, currency: "usd" }),
    (err: Stripe.errors.StripeError) => err.code === "amount_too_small",
  );
  await assert.rejects(
    client.paymentIntents.create({ amount: 100, currency: "usd", color: "red" } as never),
    (err: Stripe.errors.StripeError) => err.code === "parameter_unknown" && err.param === "color",
  );
  const key = `standin-${crypto.randomUUID()}`;
  const a = await client.paymentIntents.create({ amount: 100, currency: "usd" }, {
    idempotencyKey: key,
  });
  const b = await client.paymentIntents.create({ amount: 100, currency: "usd" }, {
    idempotencyKey: key,
  });
  assert.equal(b.id, a.id, "the same key and parameters replay the first object");
  await assert.rejects(
    client.paymentIntents.create({ amount: 200, currency: "usd" }, { idempotencyKey: key }),
    (err: Stripe.errors.StripeError) => err.type === "StripeIdempotencyError",
  );
  await assert.rejects(
    client.refunds.create({ payment_intent: a.id }),
    (err: Stripe.errors.StripeError) => err.statusCode === 400,
    "an unpaid intent has nothing to refund",
  );
});

globalThis.addEventListener("unload", () => void stripe.close());
