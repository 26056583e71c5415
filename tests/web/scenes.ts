/**
 * Data the browser tests arrange through the API (the real routes, as a client would): an approved
 * shop with products, and an order taken all the way to delivered.
 */
import assert from "node:assert/strict";
import { apiCall, bearer, createPerson, type Person, type WebStack } from "./browser.ts";

export interface Shop {
  owner: Person;
  ownerToken: string;
  vendorId: string;
  products: { id: string; title: string }[];
}

/** An approved vendor (applied by its owner, approved by an admin, through the API) with products. */
export async function openShop(
  stack: WebStack,
  name: string,
  products: { title: string; category: string; price: number; stock: number }[],
): Promise<Shop> {
  const owner = await createPerson(stack, `${name} Owner`, "MEMBER");
  const admin = await createPerson(stack, `${name} Admin`, "ADMIN");
  const ownerToken = await bearer(stack, owner);
  const adminToken = await bearer(stack, admin);
  const vendor = await apiCall<{ id: string }>(
    stack,
    ownerToken,
    "POST",
    "/api/store/vendors/apply",
    {
      name,
      description: `${name}: things for the tests`,
      contactEmail: owner.email,
      country: "US",
    },
  );
  await apiCall(stack, adminToken, "PUT", `/api/admin/vendors/${vendor.id}/status`, {
    status: "approved",
    reason: "Looks good",
  }, 200);
  const made = [];
  for (const p of products) {
    made.push(
      await apiCall<{ id: string; title: string }>(
        stack,
        ownerToken,
        "POST",
        "/api/store/products",
        {
          title: p.title,
          description: `${p.title}, made for the browser tests.`,
          category: p.category,
          tags: ["test"],
          price: { amount: p.price, currency: "USD" },
          stock: p.stock,
        },
      ),
    );
  }
  return { owner, ownerToken, vendorId: vendor.id, products: made };
}

/**
 * An order of `productId` by `buyer`, paid through the dev provider and moved by the shop's owner
 * up to `until` (default `delivered`); waits (on the database, not a timer) for the payment's
 * webhook job.
 */
export async function deliveredOrder(
  stack: WebStack,
  shop: Shop,
  buyer: Person,
  productId: string,
  until: "paid" | "processing" | "shipped" | "delivered" = "delivered",
): Promise<string> {
  const token = await bearer(stack, buyer);
  const response = await fetch(`${stack.base}/api/store/orders`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "idempotency-key": crypto.randomUUID(),
    },
    body: JSON.stringify({ items: [{ productId, quantity: 1 }] }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  const { checkout } = await response.json();
  const paid = await fetch(
    `${stack.base}/_dev/payments/${checkout.payment.paymentIntentId}/succeed`,
    { method: "POST" },
  );
  assert.equal(paid.status, 200, await paid.text());
  const orderId: string = checkout.orders[0].id;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [row] = await stack.deps.sql<{ status: string }[]>`
      select status::text from app.orders where id = ${orderId}`;
    if (row.status === "paid") break;
    if (Date.now() > deadline) throw new Error(`the order stayed ${row.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const moves = ["processing", "shipped", "delivered"];
  for (const status of moves.slice(0, moves.indexOf(until) + 1)) {
    await apiCall(stack, shop.ownerToken, "PUT", `/api/store/orders/${orderId}/status`, {
      status,
      ...(status === "shipped" ? { trackingNumber: "TRACK1", carrier: "Post" } : {}),
    }, 200);
  }
  return orderId;
}

/**
 * Waits until the chain follower (running in the stack server) has indexed at least `n` NFTs of
 * the user's wallet: funding mints them, and nothing announces them to the pages.
 */
export async function nftsIndexed(stack: WebStack, userId: string, n = 3): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [{ count }] = await stack.deps.sql<{ count: number }[]>`
      select count(*)::int as count from app.wallet_nfts where user_id = ${userId}`;
    if (count >= n) return;
    if (Date.now() > deadline) throw new Error(`only ${count} NFTs indexed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
