/**
 * Store fixtures for the API tests, each through the real routes: a vendor applied for and
 * approved by an ADMIN, products created by its owner, checkouts, payments and order moves.
 */
import type { Deps } from "../../functions/api/core/context.ts";
import { drain } from "../../functions/api/core/job-queue.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { expectJson, type SignedIn, signInAs, type TestApp } from "./helpers.ts";
import { devPayments } from "../../stack/dev-payments.ts";

export interface VendorFixture {
  owner: SignedIn;
  id: string;
  name: string;
}

let counter = 0;
/** A name no other test uses (vendor slugs and searches stay apart). */
export function uniqueName(prefix: string): string {
  return `${prefix} ${crypto.randomUUID().slice(0, 6)}${++counter}`;
}

/** A vendor applied for by a new MEMBER and approved by `admin`. */
export async function approvedVendor(
  t: TestApp,
  admin: SignedIn,
  name = uniqueName("Vendor"),
): Promise<VendorFixture> {
  const owner = await signInAs(t, "MEMBER");
  const applied = await expectJson(
    await t.request("POST", "/api/store/vendors/apply", {
      token: owner.accessToken,
      body: { name, description: "A test vendor", contactEmail: owner.user.email, country: "US" },
    }),
    201,
  );
  await expectJson(
    await t.request("PUT", `/api/admin/vendors/${applied.id}/status`, {
      token: admin.accessToken,
      body: { status: "approved", reason: "test vendor" },
    }),
    200,
  );
  return { owner, id: applied.id, name };
}

export interface ProductInput {
  title?: string;
  description?: string;
  category?: string;
  tags?: string[];
  price?: number;
  stock?: number;
  status?: "draft" | "active";
}

/** A product of the vendor, created by its owner. */
export async function product(t: TestApp, vendor: VendorFixture, input: ProductInput = {}) {
  return await expectJson(
    await t.request("POST", "/api/store/products", {
      token: vendor.owner.accessToken,
      body: {
        title: input.title ?? uniqueName("Product"),
        description: input.description ?? "A product for tests",
        category: input.category ?? "misc",
        tags: input.tags ?? [],
        price: { amount: input.price ?? 1000, currency: "USD" },
        stock: input.stock ?? 10,
        status: input.status ?? "active",
      },
    }),
    201,
  );
}

/** A checkout by `buyer` (201 expected). */
export async function checkout(
  t: TestApp,
  buyer: SignedIn,
  items: { productId: string; quantity: number }[],
  headers: Record<string, string> = {},
) {
  return await expectJson(
    await t.request("POST", "/api/store/orders", {
      token: buyer.accessToken,
      body: { items },
      headers,
    }),
    201,
  );
}

/** Moves an order (200 expected). */
export async function move(
  t: TestApp,
  who: SignedIn,
  orderId: string,
  body: { status: string; reason?: string; trackingNumber?: string; carrier?: string },
) {
  return await expectJson(
    await t.request("PUT", `/api/store/orders/${orderId}/status`, { token: who.accessToken, body }),
    200,
  );
}

/** Runs every due job of the app's kinds, until none is left. */
export async function drainJobs(deps: Deps): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const result = await drain(deps, { registry: appJobs(), maxJobs: 1000 });
    if (result.claimed === 0) return;
  }
}

/** Takes an order from paid to delivered as its vendor. */
export async function deliver(t: TestApp, vendor: VendorFixture, orderId: string) {
  await move(t, vendor.owner, orderId, { status: "processing" });
  await move(t, vendor.owner, orderId, {
    status: "shipped",
    trackingNumber: "TRACK-1",
    carrier: "UPS",
  });
  return await move(t, vendor.owner, orderId, { status: "delivered" });
}

/**
 * The local stack's `/_dev/payments/<id>/succeed|fail` (stack/dev-payments.ts), called as the
 * stack server calls it; then the queued webhook job runs. Returns the answer's body.
 */
export async function devPay(
  t: TestApp,
  paymentIntentId: string,
  outcome: "succeed" | "fail" = "succeed",
) {
  const response = await devPayments(
    t.deps,
    new Request(`http://localhost:54321/_dev/payments/${paymentIntentId}/${outcome}`, {
      method: "POST",
    }),
  );
  const body = await expectJson(response!, 200);
  await drainJobs(t.deps);
  return body as { eventId: string };
}
