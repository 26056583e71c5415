/**
 * Orders through the API with the `dev` payment provider (no Stripe key, as locally): checkout at
 * the server's prices, one order per vendor, idempotent replays, refusals that write nothing,
 * who sees an order, every move of the state machine and its denials, payment through
 * `/_dev/payments`, expiry, and the race: 40 buyers for 10 units.
 */
import assert from "node:assert/strict";
import {
  createUser,
  expectError,
  expectJson,
  type SignedIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import {
  approvedVendor,
  checkout,
  deliver,
  devPay,
  drainJobs,
  move,
  product,
  type VendorFixture,
} from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

async function stockOf(productId: string) {
  const [row] = await t.deps.sql<{ stock: number; reserved: number }[]>`
    select stock, reserved from app.products where id = ${productId}`;
  return row;
}

async function counts() {
  const [row] = await t.deps.sql`
    select (select count(*) from app.checkouts)::int as checkouts,
           (select count(*) from app.orders)::int as orders,
           (select count(*) from app.order_items)::int as items,
           (select coalesce(sum(reserved), 0) from app.products)::int as reserved,
           (select count(*) from app_private.dev_payment_objects)::int as intents`;
  return row;
}

const getOrder = async (who: SignedIn, id: string, status = 200) =>
  await expectJson(
    await t.request("GET", `/api/store/orders/${id}`, { token: who.accessToken }),
    status,
  );

test("[store] POST /api/store/orders needs a session (401) and SUBSCRIBER (403)", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor);
  const body = { items: [{ productId: item.id, quantity: 1 }] };
  await expectError(await t.request("POST", "/api/store/orders", { body }), 401, "unauthenticated");
  const visitor = await signInAs(t, "VISITOR");
  await expectError(
    await t.request("POST", "/api/store/orders", { token: visitor.accessToken, body }),
    403,
    "forbidden",
  );
});

test("[store] POST /api/store/orders: one order per vendor at the server's prices; client prices are ignored", async () => {
  const one = await approvedVendor(t, admin);
  const two = await approvedVendor(t, admin);
  const kettle = await product(t, one, { price: 3000, stock: 5 });
  const cup = await product(t, two, { price: 450, stock: 20 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const response = await t.request("POST", "/api/store/orders", {
    token: buyer.accessToken,
    body: {
      items: [
        { productId: kettle.id, quantity: 2, price: { amount: 1, currency: "USD" }, unitPrice: 1 },
        { productId: cup.id, quantity: 3, total: 1 },
      ],
      total: { amount: 1, currency: "USD" },
      shipping: {
        address: {
          name: "Bo Buyer",
          line1: "1 Main St",
          city: "Springfield",
          postalCode: "12345",
          country: "US",
        },
      },
    },
  });
  const { checkout: made } = await expectJson(response, 201);
  assert.deepEqual(made.total, { amount: 2 * 3000 + 3 * 450, currency: "USD" });
  assert.equal(made.orders.length, 2, "one order per vendor");
  const kettleOrder = made.orders.find((o: { vendor: { id: string } }) => o.vendor.id === one.id);
  assert.deepEqual(kettleOrder.items[0].unitPrice, { amount: 3000, currency: "USD" });
  assert.deepEqual(kettleOrder.total, { amount: 6000, currency: "USD" });
  assert.equal(kettleOrder.status, "pending_payment");
  assert.equal(kettleOrder.shipping.address.city, "Springfield");
  assert.deepEqual(kettleOrder.history.map((h: { to: string }) => h.to), ["pending_payment"]);
  assert.equal(made.payment.provider, "dev");
  assert.match(made.payment.paymentIntentId, /^pi_dev_/);
  assert.ok(made.payment.clientSecret?.startsWith(made.payment.paymentIntentId));
  assert.equal(made.payment.status, "pending");
  assert.deepEqual(await stockOf(kettle.id), { stock: 5, reserved: 2 });
  // The catalog shows what is left to buy.
  const shown = await expectJson(await t.request("GET", `/api/store/products/${kettle.id}`), 200);
  assert.equal(shown.stock.available, 3);
  // The dev intent is for the server's total.
  const [intent] = await t.deps.sql<{ amount: number; transfer_group: string }[]>`
    select (data ->> 'amount')::int as amount, data ->> 'transfer_group' as transfer_group
    from app_private.dev_payment_objects where id = ${made.payment.paymentIntentId}`;
  assert.equal(intent.amount, 7350);
  assert.equal(intent.transfer_group, made.id);
});

test("[store] POST /api/store/orders: 422 insufficient_stock with the items short, and nothing written", async () => {
  const vendor = await approvedVendor(t, admin);
  const scarce = await product(t, vendor, { stock: 2 });
  const plenty = await product(t, vendor, { stock: 50 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const before = await counts();
  const body = await expectError(
    await t.request("POST", "/api/store/orders", {
      token: buyer.accessToken,
      body: {
        items: [{ productId: scarce.id, quantity: 3 }, { productId: plenty.id, quantity: 1 }],
      },
    }),
    422,
    "insufficient_stock",
  );
  assert.deepEqual(body.error.details, {
    items: [{ productId: scarce.id, requested: 3, available: 2 }],
  });
  assert.deepEqual(await counts(), before, "nothing was written");
});

test("[store] POST /api/store/orders: only active products of approved vendors (422), nothing written", async () => {
  const vendor = await approvedVendor(t, admin);
  const draft = await product(t, vendor, { status: "draft" });
  const suspended = await approvedVendor(t, admin);
  const gone = await product(t, suspended);
  await expectJson(
    await t.request("PUT", `/api/admin/vendors/${suspended.id}/status`, {
      token: admin.accessToken,
      body: { status: "suspended", reason: "test" },
    }),
    200,
  );
  const buyer = await signInAs(t, "SUBSCRIBER");
  const before = await counts();
  for (const productId of [draft.id, gone.id, crypto.randomUUID()]) {
    const body = await expectError(
      await t.request("POST", "/api/store/orders", {
        token: buyer.accessToken,
        body: { items: [{ productId, quantity: 1 }] },
      }),
      422,
      "unprocessable",
    );
    assert.equal(
      (body.error.details as { items: { productId: string }[] }).items[0].productId,
      productId,
    );
  }
  assert.deepEqual(await counts(), before, "nothing was written");
});

test("[store] POST /api/store/orders with Idempotency-Key replays the first answer; another body is 409", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 10 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const headers = { "idempotency-key": `order-${crypto.randomUUID()}` };
  const first = await checkout(t, buyer, [{ productId: item.id, quantity: 2 }], headers);
  const again = await checkout(t, buyer, [{ productId: item.id, quantity: 2 }], headers);
  assert.deepEqual(again, first, "the same answer, client secret included");
  assert.deepEqual(await stockOf(item.id), { stock: 10, reserved: 2 }, "reserved once");
  await expectError(
    await t.request("POST", "/api/store/orders", {
      token: buyer.accessToken,
      headers,
      body: { items: [{ productId: item.id, quantity: 3 }] },
    }),
    409,
    "conflict",
  );
  // Concurrent requests with one key: one checkout.
  const key = { "idempotency-key": `order-${crypto.randomUUID()}` };
  const answers = await Promise.all(
    Array.from({ length: 5 }, () =>
      t.request("POST", "/api/store/orders", {
        token: buyer.accessToken,
        headers: key,
        body: { items: [{ productId: item.id, quantity: 1 }] },
      })),
  );
  const ids = new Set<string>();
  for (const response of answers) {
    const body = await expectJson(response, [201, 409]);
    if (response.status === 201) ids.add(body.checkout.id);
  }
  assert.equal(ids.size, 1, "one checkout for one key");
  assert.deepEqual(await stockOf(item.id), { stock: 10, reserved: 3 });
});

test("[store] POST /api/store/orders: bursts of 12 with one Idempotency-Key and body make one checkout, never a 5xx", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 100 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  for (let round = 0; round < 3; round++) {
    const key = { "idempotency-key": `burst-${crypto.randomUUID()}` };
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        t.request("POST", "/api/store/orders", {
          token: buyer.accessToken,
          headers: key,
          body: { items: [{ productId: item.id, quantity: 1 }] },
        })),
    );
    const ids = new Set<string>();
    for (const response of answers) {
      const body = await expectJson(response, [201, 409]);
      if (response.status === 201) ids.add(body.checkout.id);
    }
    assert.equal(ids.size, 1, `round ${round + 1}: one checkout for one key`);
  }
  assert.deepEqual(await stockOf(item.id), { stock: 100, reserved: 3 }, "one reservation a key");
});

test("[store] GET /api/store/orders/:id: buyer, vendor owner and ADMIN; 404 for a stranger", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const id = made.orders[0].id;
  assert.deepEqual(await getOrder(buyer, id), made.orders[0]);
  assert.equal((await getOrder(vendor.owner, id)).id, id);
  assert.equal((await getOrder(admin, id)).id, id);
  const stranger = await signInAs(t, "MEMBER");
  await expectError(
    await t.request("GET", `/api/store/orders/${id}`, { token: stranger.accessToken }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("GET", `/api/store/orders/${crypto.randomUUID()}`, {
      token: buyer.accessToken,
    }),
    404,
    "not_found",
  );
});

test("[store] GET /api/store/orders lists as buyer or as vendor (403 without a vendor), filtered by status", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const a = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const b = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  await devPay(t, b.checkout.payment.paymentIntentId);
  const mine = await expectJson(
    await t.request("GET", "/api/store/orders", { token: buyer.accessToken }),
    200,
  );
  assert.deepEqual(mine.items.map((o: { id: string }) => o.id), [
    b.checkout.orders[0].id,
    a.checkout.orders[0].id,
  ]);
  const paid = await expectJson(
    await t.request("GET", "/api/store/orders?status=paid", { token: buyer.accessToken }),
    200,
  );
  assert.deepEqual(paid.items.map((o: { id: string }) => o.id), [b.checkout.orders[0].id]);
  const sold = await expectJson(
    await t.request("GET", "/api/store/orders?as=vendor", { token: vendor.owner.accessToken }),
    200,
  );
  assert.equal(sold.items.length, 2);
  await expectError(
    await t.request("GET", "/api/store/orders?as=vendor", { token: buyer.accessToken }),
    403,
    "forbidden",
  );
});

async function paidOrder(vendor: VendorFixture, buyer: SignedIn, quantity = 1, stock = 10) {
  const item = await product(t, vendor, { stock, price: 2000 });
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity }]);
  const paid = await devPay(
    t,
    made.checkout?.payment?.paymentIntentId ?? made.payment.paymentIntentId,
  );
  assert.match(paid.eventId, /^evt_dev_/);
  return { item, order: await getOrder(buyer, made.orders[0].id) };
}

test("[store] PUT /api/store/orders/:id/status: the precedence 404, 403, 422, 400", async () => {
  const vendor = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { order } = await paidOrder(vendor, buyer);
  const put = (who: SignedIn, body: Record<string, unknown>) =>
    t.request("PUT", `/api/store/orders/${order.id}/status`, { token: who.accessToken, body });
  const stranger = await signInAs(t, "MEMBER");
  await expectError(
    await put(stranger, { status: "shipped", trackingNumber: "T" }),
    404,
    "not_found",
  );
  await expectError(await put(buyer, { status: "shipped", trackingNumber: "T" }), 403, "forbidden");
  await expectError(await put(vendor.owner, { status: "paid" }), 403, "forbidden");
  const skipped = await expectError(
    await put(vendor.owner, { status: "shipped", trackingNumber: "T" }),
    422,
    "invalid_transition",
  );
  assert.deepEqual(skipped.error.details, {
    from: "paid",
    to: "shipped",
    allowed: ["processing", "cancelled"],
  });
  await expectError(await put(vendor.owner, { status: "delivered" }), 422, "invalid_transition");
  await expectError(await put(buyer, { status: "completed" }), 422, "invalid_transition");
  await move(t, vendor.owner, order.id, { status: "processing" });
  await expectError(await put(vendor.owner, { status: "shipped" }), 400, "invalid_request");
  await expectError(await put(vendor.owner, { status: "not_a_status" }), 400, "invalid_request");
  assert.equal(
    (await getOrder(buyer, order.id)).status,
    "processing",
    "the refusals changed nothing",
  );
});

test("[store] PUT /api/store/orders/:id/status: the whole way, each move recorded with its actor", async () => {
  const vendor = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { order, item } = await paidOrder(vendor, buyer, 2);
  assert.equal(order.status, "paid");
  assert.equal(order.payment.status, "succeeded");
  assert.deepEqual(
    await stockOf(item.id),
    { stock: 8, reserved: 0 },
    "the reservation became a sale",
  );
  await deliver(t, vendor, order.id);
  const done = await move(t, buyer, order.id, { status: "completed" });
  assert.deepEqual(done.shipping, { address: null, carrier: "UPS", trackingNumber: "TRACK-1" });
  assert.deepEqual(
    done.history.map((h: { from: string | null; to: string; actor: string }) =>
      `${h.from ?? "-"}>${h.to}:${h.actor}`
    ),
    [
      "->pending_payment:buyer",
      "pending_payment>paid:system",
      "paid>processing:vendor",
      "processing>shipped:vendor",
      "shipped>delivered:vendor",
      "delivered>completed:buyer",
    ],
  );
  // An ADMIN refunds a completed order: the payment goes back, the stock too.
  const refunded = await move(t, admin, order.id, { status: "refunded", reason: "broken" });
  assert.equal(refunded.payment.status, "refunded");
  assert.equal(refunded.payment.refund.status, "pending");
  await drainJobs(t.deps);
  const after = await getOrder(buyer, order.id);
  assert.deepEqual(after.payment.refund, {
    status: "succeeded",
    amount: { amount: 4000, currency: "USD" },
  });
  assert.deepEqual(await stockOf(item.id), { stock: 10, reserved: 0 });
  const [refund] = await t.deps.sql<{ count: number }[]>`
    select count(*)::int from app_private.dev_payment_objects
    where object = 'refund' and data -> 'metadata' ->> 'orderId' = ${order.id}`;
  assert.equal(refund.count, 1, "one refund at the provider");
});

test("[store] a vendor cancels a paid order: refunded and back in stock; cancelling an unpaid one cancels its whole checkout", async () => {
  const vendor = await approvedVendor(t, admin);
  const other = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { order, item } = await paidOrder(vendor, buyer, 3);
  const cancelled = await move(t, vendor.owner, order.id, {
    status: "cancelled",
    reason: "out of stock",
  });
  assert.equal(cancelled.status, "cancelled");
  assert.equal(cancelled.payment.status, "refunded");
  assert.deepEqual(await stockOf(item.id), { stock: 10, reserved: 0 });
  await drainJobs(t.deps);
  assert.equal((await getOrder(buyer, order.id)).payment.refund.status, "succeeded");

  const a = await product(t, vendor, { stock: 4 });
  const b = await product(t, other, { stock: 4 });
  const { checkout: made } = await checkout(t, buyer, [
    { productId: a.id, quantity: 1 },
    { productId: b.id, quantity: 2 },
  ]);
  await move(t, buyer, made.orders[0].id, { status: "cancelled" });
  for (const o of made.orders) assert.equal((await getOrder(buyer, o.id)).status, "cancelled");
  assert.deepEqual(await stockOf(a.id), { stock: 4, reserved: 0 });
  assert.deepEqual(await stockOf(b.id), { stock: 4, reserved: 0 });
  await drainJobs(t.deps);
  const [intent] = await t.deps.sql<{ status: string }[]>`
    select data ->> 'status' as status from app_private.dev_payment_objects
    where id = ${made.payment.paymentIntentId}`;
  assert.equal(intent.status, "canceled", "the payment intent was cancelled at the provider");
});

test("[store] dev payments: a failed attempt stays payable, then succeeds", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 3 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  await devPay(t, made.payment.paymentIntentId, "fail");
  const failed = await getOrder(buyer, made.orders[0].id);
  assert.equal(failed.status, "pending_payment");
  assert.equal(failed.payment.status, "failed");
  await devPay(t, made.payment.paymentIntentId, "succeed");
  const paid = await getOrder(buyer, made.orders[0].id);
  assert.equal(paid.status, "paid");
  assert.equal(paid.payment.status, "succeeded");
});

test("[store] an expired reservation is cancelled and released; a payment after it is refunded", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 3 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 3 }]);
  assert.deepEqual(await stockOf(item.id), { stock: 3, reserved: 3 });
  await t.deps.sql`
    update app.checkouts set reserved_until = now() - interval '1 second' where id = ${made.id}`;
  const [{ expired }] = await t.deps.sql<{ expired: number }[]>`
    select app_private.expire_reservations() as expired`;
  assert.ok(expired >= 1);
  const order = await getOrder(buyer, made.orders[0].id);
  assert.equal(order.status, "cancelled");
  assert.equal(order.history.at(-1).actor, "system");
  assert.equal(order.history.at(-1).reason, "reservation expired");
  assert.deepEqual(await stockOf(item.id), { stock: 3, reserved: 0 });
  // The intent was cancelled; a payment that still arrives (it raced the cancellation) is refunded.
  await t.deps.sql`
    update app_private.dev_payment_objects set data = data || '{"status": "succeeded"}'
    where id = ${made.payment.paymentIntentId}`;
  await t.deps.sql`
    select app_private.apply_payment_intent(${made.payment.paymentIntentId}, 'succeeded', ${made.total.amount}::bigint, 'usd')`;
  await drainJobs(t.deps);
  const late = await getOrder(buyer, made.orders[0].id);
  assert.equal(late.status, "cancelled");
  assert.equal(late.payment.status, "refunded");
  assert.equal(late.payment.refund.status, "succeeded");
  assert.deepEqual(await stockOf(item.id), { stock: 3, reserved: 0 }, "no stock was sold");
});

test("[store] race: 40 concurrent buyers for 10 units make exactly 10 orders; paid, the stock is 0", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 10, price: 1500 });
  // Forty buyers with live sessions (made directly: forty magic links would only be slower).
  const buyers = await Promise.all(
    Array.from({ length: 40 }, async () => {
      const user = await createUser(t.deps, "SUBSCRIBER");
      const issued = await t.deps.tokens.issue({
        userId: user.id,
        sessionId: await sessionFor(user.id),
        email: user.email,
        userRole: "SUBSCRIBER",
        authTime: Math.floor(Date.now() / 1000),
        provider: "test",
      });
      return issued.token;
    }),
  );
  const responses = await Promise.all(
    buyers.map((token) =>
      t.request("POST", "/api/store/orders", {
        token,
        body: { items: [{ productId: item.id, quantity: 1 }] },
      })
    ),
  );
  const statuses = responses.map((r) => r.status);
  const made: { checkout: { payment: { paymentIntentId: string } } }[] = [];
  for (const response of responses) {
    if (response.status === 201) made.push(await expectJson(response, 201));
    else await expectError(response, 422, "insufficient_stock");
  }
  assert.equal(made.length, 10, `statuses: ${statuses.join(",")}`);
  const [orders] = await t.deps.sql<{ count: number }[]>`
    select count(*)::int from app.order_items where product_id = ${item.id}`;
  assert.equal(orders.count, 10, "exactly 10 orders");
  assert.deepEqual(await stockOf(item.id), { stock: 10, reserved: 10 });
  for (const m of made) await devPay(t, m.checkout.payment.paymentIntentId);
  assert.deepEqual(await stockOf(item.id), { stock: 0, reserved: 0 }, "stock 0, nothing oversold");
});

/** A live session row for a user made directly (the race's 40 buyers sign in without mail). */
async function sessionFor(userId: string): Promise<string> {
  const [row] = await t.deps.sql<{ id: string }[]>`
    insert into app.sessions (user_id, provider, expires_at)
    values (${userId}, 'test', now() + interval '1 hour') returning id`;
  return row.id;
}

test("[store] an ADMIN cancels a processing order and completes a delivered one; the buyer cannot cancel a paid one", async () => {
  const vendor = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const first = await paidOrder(vendor, buyer);
  await expectError(
    await t.request("PUT", `/api/store/orders/${first.order.id}/status`, {
      token: buyer.accessToken,
      body: { status: "cancelled" },
    }),
    422,
    "invalid_transition",
  );
  await move(t, vendor.owner, first.order.id, { status: "processing" });
  const cancelled = await move(t, admin, first.order.id, { status: "cancelled", reason: "fraud" });
  assert.equal(cancelled.history.at(-1).actor, "admin");
  assert.equal(cancelled.payment.status, "refunded");
  const second = await paidOrder(vendor, buyer);
  await deliver(t, vendor, second.order.id);
  const completed = await move(t, admin, second.order.id, { status: "completed" });
  assert.equal(completed.history.at(-1).actor, "admin");
  await expectError(
    await t.request("PUT", `/api/store/orders/${second.order.id}/status`, {
      token: vendor.owner.accessToken,
      body: { status: "refunded" },
    }),
    403,
    "forbidden",
  );
});

test("[store] GET /api/admin/analytics: the store section counts sales, orders by status and top vendors", async () => {
  const vendor = await approvedVendor(t, admin);
  const buyer = await signInAs(t, "SUBSCRIBER");
  const before = await expectJson(
    await t.request("GET", "/api/admin/analytics", { token: admin.accessToken }),
    200,
  );
  // A sale large enough to lead the top vendors whatever else the database holds.
  const item = await product(t, vendor, { price: 90_000_000_000, stock: 1 });
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  await devPay(t, made.payment.paymentIntentId);
  const order = await getOrder(buyer, made.orders[0].id);
  const after = await expectJson(
    await t.request("GET", "/api/admin/analytics", { token: admin.accessToken }),
    200,
  );
  assert.equal(after.store.currency, "USD");
  assert.equal(after.store.totals.sales - before.store.totals.sales, order.total.amount);
  assert.equal(after.store.totals.paidOrders - before.store.totals.paidOrders, 1);
  assert.equal(after.store.ordersByStatus.paid - before.store.ordersByStatus.paid, 1);
  const sum = (points: { value: number }[]) => points.reduce((n, p) => n + p.value, 0);
  assert.equal(sum(after.store.sales) - sum(before.store.sales), order.total.amount);
  assert.ok(
    after.store.topVendors.some((v: { id: string; sales: number }) =>
      v.id === vendor.id && v.sales === order.total.amount
    ),
  );
});

test("[store] race: 30 concurrent checkouts of the same products in every order never deadlock", async () => {
  const vendor = await approvedVendor(t, admin);
  const other = await approvedVendor(t, admin);
  const items = [
    await product(t, vendor, { stock: 1000 }),
    await product(t, vendor, { stock: 1000 }),
    await product(t, other, { stock: 1000 }),
    await product(t, other, { stock: 1000 }),
  ];
  const buyer = await signInAs(t, "SUBSCRIBER");
  const orders = Array.from({ length: 30 }, (_, i) => {
    // Each checkout names the products in another order (rotated, reversed every other time).
    const names = items.map((_, k) => items[(k + i) % items.length]);
    return (i % 2 ? names.reverse() : names).slice(0, 2 + (i % 3)).map((p) => ({
      productId: p.id,
      quantity: 1,
    }));
  });
  const responses = await Promise.all(
    orders.map((body) =>
      t.request("POST", "/api/store/orders", { token: buyer.accessToken, body: { items: body } })
    ),
  );
  const statuses = responses.map((r) => r.status);
  for (const response of responses) await expectJson(response, 201);
  assert.deepEqual(new Set(statuses), new Set([201]), "no deadlock (409) and no error");
  const reserved: Record<string, number> = {};
  for (const line of orders.flat()) reserved[line.productId] = (reserved[line.productId] ?? 0) + 1;
  for (const item of items) {
    assert.deepEqual(await stockOf(item.id), { stock: 1000, reserved: reserved[item.id] ?? 0 });
  }
});
