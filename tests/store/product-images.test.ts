/**
 * Product pictures uploaded by the shop (issue 27: "product images only as https URLs: no
 * upload"): an upload of the owner's (POST /api/attachments) listed among a product's `images`
 * as `/api/store/images/<id>` is served by GET /api/store/images/{id} to whoever may see the
 * product, nobody else; another's upload, a file that is no image, another product's picture are
 * refused with nothing written; a picture the product stopped showing is collected as an orphan.
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
import { approvedVendor, product } from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (ch) => ch.charCodeAt(0),
);

async function upload(
  who: SignedIn,
  bytes: Uint8Array<ArrayBuffer>,
  name: string,
  type: string,
) {
  const form = new FormData();
  form.append("file", new File([bytes], name, { type }));
  const uploaded = await expectJson(
    await t.request("POST", "/api/attachments", { token: who.accessToken, rawBody: form }),
    201,
  );
  return uploaded.id as string;
}

const path = (id: string) => `/api/store/images/${id}`;

test("[store] a product's uploaded picture: listed in images, served to whoever sees the product (anyone for an active one), to nobody else", async () => {
  const vendor = await approvedVendor(t, admin);
  const picture = await upload(vendor.owner, PNG, "jar.png", "image/png");
  const created = await expectJson(
    await t.request("POST", "/api/store/products", {
      token: vendor.owner.accessToken,
      body: {
        title: "Glass jar",
        description: "Holds things",
        category: "kitchen",
        images: [path(picture), "https://images.example/jar.jpg"],
        price: { amount: 900, currency: "USD" },
        stock: 3,
      },
    }),
    201,
  );
  assert.deepEqual(created.images, [path(picture), "https://images.example/jar.jpg"]);

  // Anyone may see an active product, so anyone gets its picture, as uploaded.
  const anonymous = await t.request("GET", path(picture));
  assert.equal(anonymous.status, 200);
  assert.equal(anonymous.headers.get("content-type"), "image/png");
  assert.equal(anonymous.headers.get("x-content-type-options"), "nosniff");
  assert.deepEqual(new Uint8Array(await anonymous.arrayBuffer()), PNG);

  // A draft: only its vendor's owner and ADMINs.
  await expectJson(
    await t.request("PUT", `/api/store/products/${created.id}`, {
      token: vendor.owner.accessToken,
      body: { status: "draft" },
    }),
    200,
  );
  const stranger = await signInAs(t, "SUBSCRIBER");
  await expectError(await t.request("GET", path(picture)), 404, "not_found");
  await expectError(
    await t.request("GET", path(picture), { token: stranger.accessToken }),
    404,
    "not_found",
  );
  for (const who of [vendor.owner, admin]) {
    const seen = await t.request("GET", path(picture), { token: who.accessToken });
    assert.equal(seen.status, 200);
    await seen.body?.cancel();
  }

  // An upload that is no product's picture is not served; nor an unknown id.
  const loose = await upload(vendor.owner, PNG, "loose.png", "image/png");
  await expectError(await t.request("GET", path(loose)), 404, "not_found");
  await expectError(await t.request("GET", path(crypto.randomUUID())), 404, "not_found");
  await expectError(await t.request("GET", "/api/store/images/not-an-id"), 400);
});

test("[store] product pictures refused with nothing written: another person's upload (404), a file that is no image (415), another product's picture (404)", async () => {
  const vendor = await approvedVendor(t, admin);
  const other = await signInAs(t, "SUBSCRIBER");
  const theirs = await upload(other, PNG, "theirs.png", "image/png");
  const text = await upload(vendor.owner, new TextEncoder().encode("hello"), "a.txt", "text/plain");
  const mine = await upload(vendor.owner, PNG, "mine.png", "image/png");
  const first = await product(t, vendor);
  const count = async () =>
    (await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.products where vendor_id = ${vendor.id}`)[0].n;
  const before = await count();
  const create = (images: string[]) =>
    t.request("POST", "/api/store/products", {
      token: vendor.owner.accessToken,
      body: {
        title: "Refused",
        description: "",
        category: "misc",
        images,
        price: { amount: 100, currency: "USD" },
        stock: 1,
      },
    });
  await expectError(await create([path(theirs)]), 404, "not_found");
  await expectError(await create([path(text)]), 415, "unsupported_media_type");
  assert.equal(await count(), before, "no product was made");

  await expectJson(
    await t.request("PUT", `/api/store/products/${first.id}`, {
      token: vendor.owner.accessToken,
      body: { images: [path(mine)] },
    }),
    200,
  );
  await expectError(await create([path(mine)]), 404, "not_found");
  assert.equal(await count(), before);
  // A path that is not a picture's is refused by validation.
  await expectError(await create(["/api/store/images/../../admin"]), 400, "invalid_request");
});

test("[store] a picture the product stopped showing is no longer served, and is collected as an orphan; one still shown is kept", async () => {
  const vendor = await approvedVendor(t, admin);
  const kept = await upload(vendor.owner, PNG, "kept.png", "image/png");
  const dropped = await upload(vendor.owner, PNG, "dropped.png", "image/png");
  const made = await product(t, vendor);
  await expectJson(
    await t.request("PUT", `/api/store/products/${made.id}`, {
      token: vendor.owner.accessToken,
      body: { images: [path(kept), path(dropped)] },
    }),
    200,
  );
  await expectJson(
    await t.request("PUT", `/api/store/products/${made.id}`, {
      token: vendor.owner.accessToken,
      body: { images: [path(kept)] },
    }),
    200,
  );
  await expectError(await t.request("GET", path(dropped)), 404, "not_found");
  await t.deps.sql`select app_private.collect_orphan_attachments('0 seconds')`;
  const left = await t.deps.sql<{ id: string }[]>`
    select id from app.attachments where id in (${kept}::uuid, ${dropped}::uuid)`;
  assert.deepEqual(left.map((r) => r.id), [kept]);
  const served = await t.request("GET", path(kept));
  assert.equal(served.status, 200);
  await served.body?.cancel();
});
