/**
 * Vendors and the catalog through the API: applying and the ADMIN's decisions, the public vendor
 * list, the caller's vendor, products (only the owner of an approved vendor writes them), the
 * search with its filters, sorts, facets and keyset cursors (stable under inserts, for every
 * sort), drafts, suspension, and the store switched off.
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
import { approvedVendor, checkout, product, uniqueName } from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

async function vendorCount(): Promise<number> {
  const [row] = await t.deps.sql<{ n: number }[]>`select count(*)::int as n from app.vendors`;
  return row.n;
}

test("[store] POST /api/store/vendors/apply: 401 anonymous, 403 VISITOR, 201 pending, 409 while one is live", async () => {
  const body = { name: uniqueName("Apply"), contactEmail: "shop@example.test", country: "US" };
  await expectError(
    await t.request("POST", "/api/store/vendors/apply", { body }),
    401,
    "unauthenticated",
  );
  const visitor = await signInAs(t, "VISITOR");
  await expectError(
    await t.request("POST", "/api/store/vendors/apply", { token: visitor.accessToken, body }),
    403,
    "forbidden",
  );
  const user = await signInAs(t, "SUBSCRIBER");
  const before = await vendorCount();
  for (
    const bad of [{ ...body, country: "usa" }, { ...body, contactEmail: "nope" }, { name: "x" }]
  ) {
    await expectError(
      await t.request("POST", "/api/store/vendors/apply", { token: user.accessToken, body: bad }),
      400,
      "invalid_request",
    );
  }
  assert.equal(await vendorCount(), before, "bad input wrote nothing");
  const vendor = await expectJson(
    await t.request("POST", "/api/store/vendors/apply", { token: user.accessToken, body }),
    201,
  );
  assert.equal(vendor.status, "pending");
  assert.equal(vendor.ownerId, user.user.id);
  assert.deepEqual(vendor.payouts, { status: "not_started" });
  await expectError(
    await t.request("POST", "/api/store/vendors/apply", { token: user.accessToken, body }),
    409,
    "conflict",
  );
});

test("[store] PUT /api/admin/vendors/:id/status: approve, suspend, reinstate, with reasons and a history; refusals", async () => {
  const user = await signInAs(t, "MEMBER");
  const vendor = await expectJson(
    await t.request("POST", "/api/store/vendors/apply", {
      token: user.accessToken,
      body: { name: uniqueName("Decide"), contactEmail: "d@example.test", country: "FR" },
    }),
    201,
  );
  const put = (who: SignedIn, body: unknown, id = vendor.id) =>
    t.request("PUT", `/api/admin/vendors/${id}/status`, { token: who.accessToken, body });
  await expectError(await put(user, { status: "approved", reason: "me" }), 403, "forbidden");
  await expectError(await put(admin, { status: "approved" }), 400, "invalid_request");
  await expectError(await put(admin, { status: "pending", reason: "x" }), 400, "invalid_request");
  const wrong = await expectError(
    await put(admin, { status: "suspended", reason: "too early" }),
    422,
    "invalid_transition",
  );
  assert.deepEqual(wrong.error.details, {
    from: "pending",
    to: "suspended",
    allowed: ["approved", "rejected"],
  });
  await expectError(
    await put(admin, { status: "approved", reason: "x" }, crypto.randomUUID()),
    404,
    "not_found",
  );
  const approved = await expectJson(
    await put(admin, { status: "approved", reason: "Good shop", commissionBps: 750 }),
    200,
  );
  assert.equal(approved.status, "approved");
  assert.equal(approved.commissionBps, 750);
  assert.equal(approved.commissionOverride, true);
  await expectJson(await put(admin, { status: "suspended", reason: "Complaints" }), 200);
  const back = await expectJson(await put(admin, { status: "approved", reason: "Fixed" }), 200);
  assert.deepEqual(
    back.decisions.map((d: { to: string; reason: string }) => `${d.to}:${d.reason}`),
    ["approved:Good shop", "suspended:Complaints", "approved:Fixed"],
  );
  const listed = await expectJson(
    await t.request(
      "GET",
      `/api/admin/vendors?status=approved&search=${encodeURIComponent(vendor.name)}`,
      {
        token: admin.accessToken,
      },
    ),
    200,
  );
  assert.deepEqual(listed.items.map((v: { id: string }) => v.id), [vendor.id]);
  assert.equal(listed.items[0].contactEmail, "d@example.test");
});

test("[store] GET /api/store/vendors: approved vendors only, public fields only, for anyone", async () => {
  const approved = await approvedVendor(t, admin, uniqueName("Listed"));
  const pendingOwner = await signInAs(t, "MEMBER");
  const pendingName = uniqueName("Listed");
  await expectJson(
    await t.request("POST", "/api/store/vendors/apply", {
      token: pendingOwner.accessToken,
      body: { name: pendingName, contactEmail: "p@example.test", country: "US" },
    }),
    201,
  );
  const page = await expectJson(await t.request("GET", `/api/store/vendors?search=listed`), 200);
  const names = page.items.map((v: { name: string }) => v.name);
  assert.ok(names.includes(approved.name));
  assert.ok(!names.includes(pendingName), "a pending vendor is not listed");
  const shown = page.items.find((v: { id: string }) => v.id === approved.id);
  assert.equal(shown.contactEmail, undefined);
  assert.equal(shown.ownerId, undefined);
});

test("[store] GET /api/store/vendors/me: 404 without a vendor; the owner's vendor with balances", async () => {
  const nobody = await signInAs(t, "SUBSCRIBER");
  await expectError(
    await t.request("GET", "/api/store/vendors/me", { token: nobody.accessToken }),
    404,
    "not_found",
  );
  const vendor = await approvedVendor(t, admin);
  const me = await expectJson(
    await t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken }),
    200,
  );
  assert.equal(me.id, vendor.id);
  assert.equal(me.commissionBps, 500, "the store's rate");
  assert.deepEqual(me.balances, {
    pending: { amount: 0, currency: "USD" },
    settled: { amount: 0, currency: "USD" },
    awaitingPayout: { amount: 0, currency: "USD" },
  });
  const empty = await expectJson(
    await t.request("GET", "/api/store/vendors/me/settlements", {
      token: vendor.owner.accessToken,
    }),
    200,
  );
  assert.deepEqual(empty, { items: [], nextCursor: null });
});

test("[store] POST /api/store/products: 401 anonymous, 403 without an approved vendor, 201 for its owner", async () => {
  const body = {
    title: "Lamp",
    description: "",
    category: "lighting",
    price: { amount: 1200, currency: "USD" },
    stock: 3,
  };
  await expectError(
    await t.request("POST", "/api/store/products", { body }),
    401,
    "unauthenticated",
  );
  const subscriber = await signInAs(t, "SUBSCRIBER");
  await expectError(
    await t.request("POST", "/api/store/products", { token: subscriber.accessToken, body }),
    403,
    "forbidden",
  );
  const applicant = await signInAs(t, "MEMBER");
  await expectJson(
    await t.request("POST", "/api/store/vendors/apply", {
      token: applicant.accessToken,
      body: { name: uniqueName("Pending"), contactEmail: "a@example.test", country: "US" },
    }),
    201,
  );
  await expectError(
    await t.request("POST", "/api/store/products", { token: applicant.accessToken, body }),
    403,
    "forbidden",
  );
  const vendor = await approvedVendor(t, admin);
  await expectError(
    await t.request("POST", "/api/store/products", {
      token: vendor.owner.accessToken,
      body: { ...body, price: { amount: 1200, currency: "EUR" } },
    }),
    400,
    "invalid_request",
  );
  const made = await expectJson(
    await t.request("POST", "/api/store/products", { token: vendor.owner.accessToken, body }),
    201,
  );
  assert.equal(made.status, "active");
  assert.deepEqual(made.vendor, { id: vendor.id, name: vendor.name, slug: made.vendor.slug });
  assert.deepEqual(made.stock, { available: 3, onHand: 3, reserved: 0 }, "its owner's view");
  const seen = await expectJson(await t.request("GET", `/api/store/products/${made.id}`), 200);
  assert.deepEqual(seen.stock, { available: 3 }, "anyone else sees what is available only");
});

test("[store] PUT /api/store/products/:id: stock is the units on hand; an edit without it keeps it; expectedStock refuses (409) a stock that moved, and nothing changes", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 12 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  await checkout(t, buyer, [{ productId: item.id, quantity: 2 }]);
  const token = vendor.owner.accessToken;
  const read = await expectJson(
    await t.request("GET", `/api/store/products/${item.id}`, { token }),
    200,
  );
  assert.deepEqual(read.stock, { available: 10, onHand: 12, reserved: 2 });
  const described = await expectJson(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token,
      body: { description: "Now with a better description" },
    }),
    200,
  );
  assert.deepEqual(described.stock, read.stock, "an edit that does not name stock keeps it");
  // A second checkout lands between the owner's read and their stock change: on-hand units do
  // not move with a reservation, so the change still applies to what the owner read.
  await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const raised = await expectJson(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token,
      body: { stock: 15, expectedStock: 12 },
    }),
    200,
  );
  assert.deepEqual(raised.stock, { available: 12, onHand: 15, reserved: 3 });
  // Another edit came between: the stale base is refused and nothing changes.
  const stale = await expectError(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token,
      body: { stock: 20, expectedStock: 12, title: "Renamed" },
    }),
    409,
    "conflict",
  );
  assert.deepEqual(stale.error.details, { expectedStock: 12, currentStock: 15 });
  const after = await expectJson(
    await t.request("GET", `/api/store/products/${item.id}`, { token }),
    200,
  );
  assert.equal(after.title, item.title, "nothing changed");
  assert.equal(after.stock.onHand, 15);
  await expectError(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token,
      body: { expectedStock: 15 },
    }),
    400,
    "invalid_request",
  );
  // Another vendor's owner learns nothing from an expected stock: 403, as without it.
  const other = await approvedVendor(t, admin);
  await expectError(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token: other.owner.accessToken,
      body: { stock: 1, expectedStock: 0 },
    }),
    403,
    "forbidden",
  );
});

test("[store] PUT /api/store/products/:id: concurrent stock changes from one read: exactly one applies, the others are 409", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { stock: 5 });
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      t.request("PUT", `/api/store/products/${item.id}`, {
        token: vendor.owner.accessToken,
        body: { stock: 10 + i, expectedStock: 5 },
      })),
  );
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409, 409, 409]);
  const winner = answers.find((r) => r.status === 200)!;
  const final = await expectJson(
    await t.request("GET", `/api/store/products/${item.id}`, { token: vendor.owner.accessToken }),
    200,
  );
  assert.equal(final.stock.onHand, (await expectJson(winner, 200)).stock.onHand);
});

test("[store] PUT /api/store/products/:id: the owner only (403 for another vendor, 404 for an unseen draft)", async () => {
  const vendor = await approvedVendor(t, admin);
  const other = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 1000 });
  const draft = await product(t, vendor, { status: "draft" });
  await expectError(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token: other.owner.accessToken,
      body: { price: { amount: 1, currency: "USD" } },
    }),
    403,
    "forbidden",
  );
  await expectError(
    await t.request("PUT", `/api/store/products/${draft.id}`, {
      token: other.owner.accessToken,
      body: { title: "Mine now" },
    }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token: vendor.owner.accessToken,
      body: {},
    }),
    400,
    "invalid_request",
  );
  const changed = await expectJson(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token: vendor.owner.accessToken,
      body: { price: { amount: 1500, currency: "USD" }, status: "archived", tags: ["sale"] },
    }),
    200,
  );
  assert.deepEqual(changed.price, { amount: 1500, currency: "USD" });
  assert.equal(changed.status, "archived");
  await expectError(await t.request("GET", `/api/store/products/${item.id}`), 404, "not_found");
});

test("[store] GET /api/store/products: drafts for their vendor only; a suspended vendor's products leave the catalog", async () => {
  const vendor = await approvedVendor(t, admin);
  const word = `draftword${crypto.randomUUID().slice(0, 6)}`;
  await product(t, vendor, { title: `${word} chair`, status: "draft" });
  await product(t, vendor, { title: `${word} table` });
  const publicView = await expectJson(await t.request("GET", `/api/store/products?q=${word}`), 200);
  assert.deepEqual(publicView.items.map((p: { title: string }) => p.title), [`${word} table`]);
  const own = await expectJson(
    await t.request("GET", `/api/store/products?vendorId=${vendor.id}`, {
      token: vendor.owner.accessToken,
    }),
    200,
  );
  assert.equal(own.items.length, 2, "the owner sees its draft with vendorId = its own");
  const stranger = await signInAs(t, "MEMBER");
  const theirs = await expectJson(
    await t.request("GET", `/api/store/products?vendorId=${vendor.id}`, {
      token: stranger.accessToken,
    }),
    200,
  );
  assert.equal(theirs.items.length, 1);
  await expectJson(
    await t.request("PUT", `/api/admin/vendors/${vendor.id}/status`, {
      token: admin.accessToken,
      body: { status: "suspended", reason: "test" },
    }),
    200,
  );
  const after = await expectJson(await t.request("GET", `/api/store/products?q=${word}`), 200);
  assert.deepEqual(after.items, []);
});

test("[store] GET /api/store/products: filters, sorts and facets (each facet ignores its own filter)", async () => {
  const a = await approvedVendor(t, admin);
  const b = await approvedVendor(t, admin);
  const word = `facet${crypto.randomUUID().slice(0, 6)}`;
  await product(t, a, { title: `${word} red lamp`, category: "lighting", price: 1000, stock: 1 });
  await product(t, a, { title: `${word} blue lamp`, category: "lighting", price: 3000, stock: 0 });
  await product(t, b, { title: `${word} rug`, category: "textiles", price: 2000, stock: 5 });
  await product(t, b, { title: `${word} pillow`, category: "textiles", price: 500, stock: 5 });
  const get = async (query: string) =>
    await expectJson(await t.request("GET", `/api/store/products?q=${word}&${query}`), 200);

  const all = await get("sort=price_asc");
  assert.deepEqual(all.items.map((p: { price: { amount: number } }) => p.price.amount), [
    500,
    1000,
    2000,
    3000,
  ]);
  const desc = await get("sort=price_desc");
  assert.deepEqual(desc.items.map((p: { price: { amount: number } }) => p.price.amount), [
    3000,
    2000,
    1000,
    500,
  ]);
  const filtered = await get("category=textiles&minPrice=500&maxPrice=2000&inStock=true");
  assert.equal(filtered.items.length, 2, "price bounds are inclusive");
  assert.deepEqual(filtered.facets.categories, [
    { value: "textiles", count: 2 },
    { value: "lighting", count: 1 },
  ]);
  assert.deepEqual(filtered.facets.vendors, [{ id: b.id, name: b.name, count: 2 }]);
  assert.deepEqual(filtered.facets.price, { min: 500, max: 2000 });
  const inStock = await get("inStock=true");
  assert.equal(inStock.items.length, 3, "the lamp with none available is hidden");
  const byVendor = await get(`vendorId=${a.id}`);
  assert.deepEqual(
    byVendor.facets.vendors.map((v: { id: string; count: number }) => [v.id, v.count]).sort(),
    [[a.id, 2], [b.id, 2]].sort(),
    "the vendor facet ignores the vendor filter",
  );
  const relevance = await get("");
  assert.ok(relevance.items.length === 4);
  await expectError(await t.request("GET", "/api/store/products?minPrice=9&maxPrice=1"), 400);
  await expectError(await t.request("GET", "/api/store/products?sort=cheapest"), 400);
  const first = await get("sort=newest&limit=1");
  await expectError(
    await t.request(
      "GET",
      `/api/store/products?q=${word}&sort=price_asc&cursor=${first.nextCursor}`,
    ),
    400,
    "invalid_request",
  );
});

test("[store] GET /api/store/products: keyset cursors are stable under inserts, for every sort", async () => {
  const vendor = await approvedVendor(t, admin);
  const word = `stable${crypto.randomUUID().slice(0, 6)}`;
  const made: string[] = [];
  for (let i = 0; i < 12; i++) {
    // Repeated prices and descriptions: ties are broken by id.
    made.push(
      (await product(t, vendor, {
        title: `${word} item ${i % 3 === 0 ? word : ""}`,
        description: i % 2 ? `${word} twice` : "",
        price: 100 * (1 + (i % 4)),
      })).id,
    );
  }
  for (const sort of ["relevance", "newest", "price_asc", "price_desc"]) {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/store/products?q=${word}&sort=${sort}&limit=5` +
        (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
      const page: { items: { id: string }[]; nextCursor: string | null } = await expectJson(
        await t.request("GET", url),
        200,
      );
      seen.push(...page.items.map((p) => p.id));
      cursor = page.nextCursor;
      // Between pages, new products that sort anywhere (cheapest, dearest, best match, newest).
      await product(t, vendor, { title: `${word} ${word} ${word} new`, price: 50 });
      await product(t, vendor, { title: `${word} newer`, price: 100_000 });
      pages++;
    } while (cursor && pages < 20);
    const original = seen.filter((id) => made.includes(id));
    assert.equal(new Set(seen).size, seen.length, `${sort}: no product twice`);
    assert.equal(
      original.length,
      made.length,
      `${sort}: every product that existed is served once`,
    );
  }
});

test("[store] the store switched off (features.store) answers 403; the webhook still answers", async () => {
  const local = testApp();
  const [{ version }] = await local.deps.sql<{ version: number }[]>`
    select max(version) + 1 as version from app.config_versions`;
  await local.deps.sql`
    insert into app.config_versions (version, config, reason)
    values (${version}, '{"features": {"store": false}}', 'test: store off')`;
  try {
    await expectError(await local.request("GET", "/api/store/products"), 403, "forbidden");
    const webhook = await local.request("POST", "/api/store/webhooks/stripe", {
      headers: { "stripe-signature": "t=1,v1=00" },
      body: { id: "evt_x" },
    });
    await expectError(webhook, 400, "invalid_request");
  } finally {
    await local.deps.sql`
      insert into app.config_versions (version, config, reason)
      values (${version + 1}, '{"features": {"store": true}}', 'test: store on')`;
  }
});

test("[store] GET /api/store/products: a misspelt search is corrected to the catalog's words (correctedQuery)", async () => {
  const vendor = await approvedVendor(t, admin);
  const word = `quokka${crypto.randomUUID().replace(/[^a-f]/g, "").slice(0, 4)}`;
  await product(t, vendor, { title: `${word} teapot`, category: "kitchen" });
  const exact = await expectJson(await t.request("GET", `/api/store/products?q=${word}`), 200);
  assert.equal(exact.correctedQuery, null);
  assert.equal(exact.items.length, 1);
  const typo = word.slice(0, 2) + word[3] + word[2] + word.slice(4); // a transposed pair
  const fixed = await expectJson(
    await t.request("GET", `/api/store/products?q=${typo}%20teapto`),
    200,
  );
  assert.equal(fixed.correctedQuery, `${word} teapot`);
  assert.deepEqual(fixed.items.map((p: { title: string }) => p.title), [`${word} teapot`]);
  const nothing = await expectJson(await t.request("GET", "/api/store/products?q=xqzxqzxqz"), 200);
  assert.deepEqual([nothing.items, nothing.correctedQuery], [[], null]);
});
