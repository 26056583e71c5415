/**
 * The local `dev` payment provider delivers its events like Stripe: each event is recorded with
 * the state change it reports (app_private.dev_payment_events) and re-delivered with backoff (a
 * store.dev_event_delivery job) until the webhook acknowledges it with 2xx. The faults are real:
 * the webhook's one write, `app_private.record_stripe_event`, renamed away for a moment (the route
 * then answers 500, as it does while Postgres restarts), and the intent marked succeeded without
 * any delivery (a process that died in between). Each payment is applied exactly once: one move
 * to `paid` per order, one stored event, one store.stripe_event job.
 */
import assert from "node:assert/strict";
import { expectError, expectJson, signInAs, SITE, test, testApp } from "../support/helpers.ts";
import { approvedVendor, checkout, drainJobs, product, uniqueName } from "../support/store.ts";
import { devPayments } from "../../stack/dev-payments.ts";
import { startStackServer } from "../../stack/server.ts";
import type { DevPaymentProvider } from "../../functions/api/store/dev-provider.ts";
import { signWebhook } from "../../functions/api/store/payments.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const provider = t.deps.payments as DevPaymentProvider;

/** `POST /_dev/payments/<id>/<outcome>`, as the stack server serves it. */
async function devPost(paymentIntentId: string, outcome: "succeed" | "fail" = "succeed") {
  const response = await devPayments(
    t.deps,
    new Request(`${SITE}/_dev/payments/${paymentIntentId}/${outcome}`, { method: "POST" }),
  );
  return response!;
}

/** A checkout of one order, not paid yet. */
async function unpaid() {
  const vendor = await approvedVendor(t, admin, uniqueName("Redelivery"));
  const item = await product(t, vendor, { price: 2500, stock: 5 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const orderId: string = made.orders[0].id;
  const order = async () =>
    await expectJson(
      await t.request("GET", `/api/store/orders/${orderId}`, { token: buyer.accessToken }),
      200,
    );
  return { intent: made.payment.paymentIntentId as string, orderId, order };
}

/** How often the payment was applied: moves to `paid`, stored events, their jobs. */
async function applied(orderId: string, intent: string) {
  const [row] = await t.deps.sql<{ paidMoves: number; events: number; eventJobs: number }[]>`
    select
      (select count(*) from app.order_history h
       where h.order_id = ${orderId} and h.to_status = 'paid')::int as "paidMoves",
      (select count(*) from app_private.stripe_events e
       where e.type = 'payment_intent.succeeded'
         and e.payload -> 'data' -> 'object' ->> 'id' = ${intent})::int as events,
      (select count(*) from app_private.jobs j
       where j.kind = 'store.stripe_event' and j.payload ->> 'eventId' in (
         select e.id from app_private.stripe_events e
         where e.payload -> 'data' -> 'object' ->> 'id' = ${intent}
           and e.type = 'payment_intent.succeeded'))::int as "eventJobs"`;
  return row;
}

/** The queued redeliveries made due now (the schedule's waits skipped), then every due job. */
async function redeliverNow() {
  await t.deps.sql`
    update app_private.jobs set run_at = now()
    where kind = 'store.dev_event_delivery' and state = 'queued'`;
  await drainJobs(t.deps);
}

/** The fault: the webhook's one write is gone, so the route answers 500 (nothing stored). */
async function breakWebhook() {
  await t.deps.sql`
    alter function app_private.record_stripe_event(text, text, boolean, jsonb)
    rename to record_stripe_event_away`;
}
async function repairWebhook() {
  await t.deps.sql`
    alter function app_private.record_stripe_event_away(text, text, boolean, jsonb)
    rename to record_stripe_event`;
}

test("[store] dev payments: a webhook that answers 5xx gets the event again with backoff; the payment is applied once", async () => {
  const { intent, orderId, order } = await unpaid();
  await breakWebhook();
  let first: { eventId: string; delivered: boolean };
  try {
    first = await expectJson(await devPost(intent), 202);
    assert.equal(first.delivered, false, "the webhook did not acknowledge the event");
    await redeliverNow();
    assert.equal((await order()).status, "pending_payment", "still failing: not paid yet");
  } finally {
    await repairWebhook();
  }
  const [kept] = await t.deps.sql<{ attempts: number; delivered: boolean; result: string }[]>`
    select attempts, delivered_at is not null as delivered, last_result as result
    from app_private.dev_payment_events where id = ${first.eventId}`;
  assert.deepEqual(kept, { attempts: 2, delivered: false, result: "HTTP 500" });
  const [job] = await t.deps.sql<{ due: boolean }[]>`
    select run_at <= now() + interval '20 seconds' as due from app_private.jobs
    where kind = 'store.dev_event_delivery' and payload ->> 'eventId' = ${first.eventId}
      and state = 'queued'`;
  assert.ok(job?.due, "the next redelivery is queued within seconds");

  await redeliverNow();
  const paid = await order();
  assert.equal(paid.status, "paid");
  assert.equal(paid.payment.status, "succeeded");
  assert.deepEqual(await applied(orderId, intent), { paidMoves: 1, events: 1, eventJobs: 1 });
  const [done] = await t.deps.sql<{ attempts: number; delivered: boolean }[]>`
    select attempts, delivered_at is not null as delivered
    from app_private.dev_payment_events where id = ${first.eventId}`;
  assert.deepEqual(done, { attempts: 3, delivered: true });
  await redeliverNow();
  assert.deepEqual(
    await applied(orderId, intent),
    { paidMoves: 1, events: 1, eventJobs: 1 },
    "nothing is delivered again once acknowledged",
  );
});

test("[store] dev payments: an intent marked succeeded whose event was never sent (the process died) is delivered by the local stack's worker within seconds", async () => {
  const { intent, orderId, order } = await unpaid();
  // The state change and its recorded event, and then nothing: no delivery by the request.
  const event = await provider.settleIntent(intent, "succeed");
  assert.equal((await order()).status, "pending_payment");
  const server = startStackServer(t.deps, { port: 0, follower: false });
  try {
    const deadline = Date.now() + 20_000;
    let current = await order();
    while (current.status !== "paid" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      current = await order();
    }
    assert.equal(current.status, "paid", "the stack's job worker delivered the event");
  } finally {
    await server.shutdown();
  }
  assert.deepEqual(await applied(orderId, intent), { paidMoves: 1, events: 1, eventJobs: 1 });
  const [kept] = await t.deps.sql<{ delivered: boolean }[]>`
    select delivered_at is not null as delivered from app_private.dev_payment_events
    where id = ${event.id as string}`;
  assert.equal(kept.delivered, true);
});

test("[store] dev payments: the same event delivered twice, and /succeed retried, apply the payment once", async () => {
  const { intent, orderId, order } = await unpaid();
  const first = await expectJson(await devPost(intent), 200);
  assert.equal(first.delivered, true);
  await drainJobs(t.deps);
  assert.equal((await order()).status, "paid");

  // The stored event, sent again by hand as Stripe's redelivery would: a duplicate.
  const [stored] = await t.deps.sql<{ payload: Record<string, unknown> }[]>`
    select payload from app_private.dev_payment_events where id = ${first.eventId}`;
  const body = JSON.stringify(stored.payload);
  const again = await expectJson(
    await t.request("POST", "/api/store/webhooks/stripe", {
      headers: {
        "content-type": "application/json",
        "stripe-signature": await signWebhook(body, await provider.webhookSecret()),
      },
      rawBody: body,
    }),
    200,
  );
  assert.deepEqual(again, { received: true, duplicate: true });

  // The client retries /succeed: the same event, delivered again, 200.
  const retried = await expectJson(await devPost(intent), 200);
  assert.deepEqual(retried, { eventId: first.eventId, delivered: true });
  await redeliverNow();
  assert.deepEqual(await applied(orderId, intent), { paidMoves: 1, events: 1, eventJobs: 1 });
  assert.equal((await order()).status, "paid");

  // A declined attempt on a paid intent cannot be: 409; an unknown intent 404.
  await expectError(await devPost(intent, "fail"), 409, "conflict");
  await expectError(await devPost("pi_dev_nothing"), 404, "not_found");
});

test("[store] dev payments: /succeed retried while the webhook is down answers 202 with the same event, which lands once the webhook is back", async () => {
  const { intent, orderId, order } = await unpaid();
  await breakWebhook();
  let first: { eventId: string };
  try {
    first = await expectJson(await devPost(intent), 202);
    const retried = await expectJson(await devPost(intent), 202);
    assert.deepEqual(retried, { eventId: first.eventId, delivered: false });
  } finally {
    await repairWebhook();
  }
  // The client's next retry delivers it itself.
  assert.deepEqual(await expectJson(await devPost(intent), 200), {
    eventId: first.eventId,
    delivered: true,
  });
  await drainJobs(t.deps);
  assert.equal((await order()).status, "paid");
  await redeliverNow();
  assert.deepEqual(await applied(orderId, intent), { paidMoves: 1, events: 1, eventJobs: 1 });
  const [{ events }] = await t.deps.sql<{ events: number }[]>`
    select count(*)::int as events from app_private.dev_payment_events
    where object_id = ${intent} and type = 'payment_intent.succeeded'`;
  assert.equal(events, 1, "one succeeded event for the intent, however often /succeed ran");
});

test("[store] dev payments: /fail twice is two declined attempts (each its own event); the intent stays payable", async () => {
  const { intent, order } = await unpaid();
  const one = await expectJson(await devPost(intent, "fail"), 200);
  const two = await expectJson(await devPost(intent, "fail"), 200);
  assert.notEqual(one.eventId, two.eventId);
  await drainJobs(t.deps);
  const failed = await order();
  assert.equal(failed.status, "pending_payment");
  assert.equal(failed.payment.status, "failed");
  await expectJson(await devPost(intent), 200);
  await drainJobs(t.deps);
  assert.equal((await order()).status, "paid");
});
