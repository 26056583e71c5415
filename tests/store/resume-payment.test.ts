/**
 * Resuming the payment of one's own unpaid checkout from anywhere (POST
 * /api/store/checkouts/{id}/payment), with the `dev` provider: the same intent and client secret
 * the checkout answered, so another tab or device can pay it; another person's (an ADMIN's too)
 * 404; 422 once paid, cancelled or past its reservation; a checkout whose intent was never attached
 * gets it, once, even asked concurrently. (The Stripe stand-in's case: payments-stripe.test.ts.)
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
import { approvedVendor, checkout, devPay, move, product } from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const vendor = await approvedVendor(t, admin);

const resume = (who: SignedIn, checkoutId: string) =>
  t.request("POST", `/api/store/checkouts/${checkoutId}/payment`, { token: who.accessToken });

async function unpaid(buyer: SignedIn) {
  const item = await product(t, vendor, { price: 1500, stock: 5 });
  return (await checkout(t, buyer, [{ productId: item.id, quantity: 2 }])).checkout;
}

test("[store] resume payment: the buyer gets the checkout's payment anywhere; a stranger or an ADMIN 404; paid 422", async () => {
  const buyer = await signInAs(t, "SUBSCRIBER");
  const made = await unpaid(buyer);
  const { checkout: resumed } = await expectJson(await resume(buyer, made.id), 200);
  assert.equal(resumed.id, made.id);
  assert.deepEqual(resumed.payment, made.payment);
  assert.deepEqual(resumed.total, { amount: 3000, currency: "USD" });
  assert.equal(resumed.reservedUntil, made.reservedUntil);
  assert.deepEqual(
    resumed.orders.map((o: { id: string }) => o.id),
    made.orders.map((o: { id: string }) => o.id),
  );

  const stranger = await signInAs(t, "SUBSCRIBER");
  await expectError(await resume(stranger, made.id), 404, "not_found");
  await expectError(await resume(admin, made.id), 404, "not_found");
  await expectError(await resume(vendor.owner, made.id), 404, "not_found");
  await expectError(await resume(buyer, crypto.randomUUID()), 404, "not_found");
  await expectError(
    await t.request("POST", `/api/store/checkouts/${made.id}/payment`),
    401,
    "unauthenticated",
  );

  // A declined attempt can be tried again; paid, it is 422.
  await devPay(t, resumed.payment.paymentIntentId, "fail");
  await expectJson(await resume(buyer, made.id), 200);
  await devPay(t, resumed.payment.paymentIntentId, "succeed");
  const [order] = await t.deps.sql<{ status: string }[]>`
    select status::text from app.orders where checkout_id = ${made.id}`;
  assert.equal(order.status, "paid");
  await expectError(await resume(buyer, made.id), 422, "invalid_transition");
});

test("[store] resume payment: 422 once the reservation ran out, or the checkout was cancelled", async () => {
  const buyer = await signInAs(t, "SUBSCRIBER");
  const expiring = await unpaid(buyer);
  await t.deps.sql`
    update app.checkouts set reserved_until = now() - interval '1 second' where id = ${expiring.id}`;
  const expired = await expectError(await resume(buyer, expiring.id), 422, "invalid_transition");
  assert.match(expired.error.message, /reservation/);

  const cancelled = await unpaid(buyer);
  await move(t, buyer, cancelled.orders[0].id, { status: "cancelled", reason: "changed my mind" });
  await expectError(await resume(buyer, cancelled.id), 422, "invalid_transition");
});

test("[store] resume payment: a checkout whose intent was never attached gets one, the same for concurrent asks", async () => {
  const buyer = await signInAs(t, "SUBSCRIBER");
  const made = await unpaid(buyer);
  // As if the checkout's request died between the orders and the payment intent.
  await t.deps.sql`update app.checkouts set payment_intent_id = null where id = ${made.id}`;
  await t.deps.sql`delete from app_private.checkout_secrets where checkout_id = ${made.id}`;
  const answers = await Promise.all(
    [1, 2, 3].map(async () => (await expectJson(await resume(buyer, made.id), 200)).checkout),
  );
  for (const answer of answers) {
    assert.equal(answer.payment.paymentIntentId, made.payment.paymentIntentId, "the same intent");
    assert.equal(answer.payment.provider, "dev");
  }
  const [row] = await t.deps.sql<{ payment_intent_id: string }[]>`
    select payment_intent_id from app.checkouts where id = ${made.id}`;
  assert.equal(row.payment_intent_id, made.payment.paymentIntentId);
  await devPay(t, made.payment.paymentIntentId, "succeed");
  await expectError(await resume(buyer, made.id), 422, "invalid_transition");
});
