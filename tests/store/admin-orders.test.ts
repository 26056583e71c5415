/**
 * Issue 27: who ordered, and the ADMIN's view of orders, payments and refunds.
 * - Every order answer names its buyer by profile name (`buyer: { id, name }`, never an e-mail),
 *   so a shop's owner sees who ordered; null once the buyer's account is deleted.
 * - GET /api/admin/orders: every order with its checkout's payment and its refund, filtered by
 *   status, payment status, refund status, vendor and buyer, in keyset pages; ADMIN only.
 * - GET /api/auth/session says whether the user has a shop (`user.vendor`), so a client asks
 *   GET /api/store/vendors/me (404 without a shop) only when there is one.
 */
import assert from "node:assert/strict";
import { expectError, expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { approvedVendor, checkout, deliver, devPay, move, product } from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

const get = async (token: string, path: string, status = 200) =>
  await expectJson(await t.request("GET", path, { token }), status);

test("[store] an order names its buyer by profile name for the shop's owner, the buyer and ADMINs; never by e-mail", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor);
  const buyer = await signInAs(t, "SUBSCRIBER");
  await t.deps.sql`update app.users set name = 'Grace Buyer' where id = ${buyer.user.id}`;
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const orderId = made.orders[0].id;
  assert.deepEqual(made.orders[0].buyer, { id: buyer.user.id, name: "Grace Buyer" });

  const page = await get(vendor.owner.accessToken, "/api/store/orders?as=vendor");
  const seen = page.items.find((o: { id: string }) => o.id === orderId);
  assert.deepEqual(seen.buyer, { id: buyer.user.id, name: "Grace Buyer" });
  assert.ok(!JSON.stringify(page).includes(buyer.user.email), "no e-mail in the vendor's list");
  for (const who of [vendor.owner, buyer, admin]) {
    const order = await get(who.accessToken, `/api/store/orders/${orderId}`);
    assert.deepEqual(order.buyer, { id: buyer.user.id, name: "Grace Buyer" });
  }
  // The shop's live event carries the buyer too (the order as GET shows it).
  const [event] = await t.deps.sql<{ payload: { buyer: unknown } }[]>`
    select payload from app.events
    where topic = ${`vendor:${vendor.id}`} and event = 'order.created'
      and payload ->> 'id' = ${orderId}`;
  assert.deepEqual(event.payload.buyer, { id: buyer.user.id, name: "Grace Buyer" });
  // A made-up order row learns no one's name; the real one does.
  const [names] = await t.deps.sql<{ made_up: string | null; real: string | null }[]>`
    select app.order_buyer_name(jsonb_populate_record(null::app.orders,
             jsonb_build_object('id', gen_random_uuid(), 'buyer_id', ${buyer.user.id}::uuid)))
             as made_up,
           app.order_buyer_name(o) as real
    from app.orders o where o.id = ${orderId}`;
  assert.deepEqual(names, { made_up: null, real: "Grace Buyer" });
});

test("[admin] GET /api/admin/orders: ADMIN only; each order with its payment and refund, filtered by status, payment, refund, vendor and buyer, in keyset pages", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 1500, stock: 20 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const orders: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
    orders.push(made.orders[0].id);
    if (i < 2) await devPay(t, made.payment.paymentIntentId);
  }
  // The first paid order is delivered and refunded by an ADMIN; the third stays unpaid.
  await deliver(t, vendor, orders[0]);
  await move(t, admin, orders[0], { status: "refunded", reason: "arrived broken" });

  // Who may ask.
  await expectError(await t.request("GET", "/api/admin/orders"), 401, "unauthenticated");
  await expectError(
    await t.request("GET", "/api/admin/orders", { token: vendor.owner.accessToken }),
    403,
    "forbidden",
  );

  const mine = `/api/admin/orders?vendorId=${vendor.id}`;
  const all = await get(admin.accessToken, mine);
  assert.deepEqual(all.items.map((o: { id: string }) => o.id), [...orders].reverse());
  const [unpaid, paid, refunded] = all.items;
  assert.equal(unpaid.status, "pending_payment");
  assert.equal(unpaid.checkout.provider, "dev");
  assert.equal(unpaid.checkout.paymentStatus, "pending");
  assert.match(unpaid.checkout.paymentIntentId, /^pi_/);
  assert.equal(unpaid.refund, null);
  assert.equal(paid.status, "paid");
  assert.equal(paid.checkout.paymentStatus, "succeeded");
  assert.deepEqual(paid.checkout.total, { amount: 1500, currency: "USD" });
  assert.equal(refunded.status, "refunded");
  assert.equal(refunded.refund.reason, "arrived broken");
  assert.deepEqual(refunded.refund.amount, { amount: 1500, currency: "USD" });
  assert.ok(["pending", "succeeded"].includes(refunded.refund.status));
  assert.equal(refunded.buyer.id, buyer.user.id);

  // Filters.
  const ids = async (query: string) =>
    (await get(admin.accessToken, `${mine}&${query}`)).items.map((o: { id: string }) => o.id);
  assert.deepEqual(await ids("status=paid"), [orders[1]]);
  assert.deepEqual(await ids("paymentStatus=pending"), [orders[2]]);
  assert.deepEqual(await ids("paymentStatus=refunded"), [orders[0]]);
  assert.deepEqual(await ids(`refundStatus=${refunded.refund.status}`), [orders[0]]);
  assert.deepEqual(await ids(`buyerId=${buyer.user.id}`), [...orders].reverse());
  assert.deepEqual(await ids(`buyerId=${admin.user.id}`), []);
  await expectError(
    await t.request("GET", "/api/admin/orders?status=lost", { token: admin.accessToken }),
    400,
    "invalid_request",
  );

  // Keyset pages reach every order once, also with an order made between two pages.
  const first = await get(admin.accessToken, `${mine}&limit=2`);
  assert.equal(first.items.length, 2);
  assert.ok(first.nextCursor);
  await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const second = await get(
    admin.accessToken,
    `${mine}&limit=2&cursor=${encodeURIComponent(first.nextCursor)}`,
  );
  assert.deepEqual(
    [...first.items, ...second.items].map((o: { id: string }) => o.id),
    [...orders].reverse(),
  );
  assert.equal(second.nextCursor, null);
});

test("[store] GET /api/auth/session says whether the user has a shop: null without one, its id and status with one", async () => {
  const nobody = await signInAs(t, "SUBSCRIBER");
  const without = await get(nobody.accessToken, "/api/auth/session");
  assert.equal(without.user.vendor, null);
  const vendor = await approvedVendor(t, admin);
  const withShop = await get(vendor.owner.accessToken, "/api/auth/session");
  assert.deepEqual(withShop.user.vendor, { id: vendor.id, status: "approved" });
  const signedOut = await expectJson(await t.request("GET", "/api/auth/session"), 200);
  assert.equal(signedOut.user, null);
});
