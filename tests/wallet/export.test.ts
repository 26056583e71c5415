/**
 * Key export: a compact JWE (ECDH-ES, A256GCM) to the client's one-time P-256 key, opened here
 * with jose and checked against the wallet's address with viem; only after a fresh sign-in; at
 * most `wallet.exportsPerDay` a day; recorded as the security event `wallet.key_exported`, with
 * a critical SYSTEM notification; a private JWK or a point off the curve is 400.
 */
import assert from "node:assert/strict";
import { compactDecrypt, decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import { privateKeyToAddress } from "viem/accounts";
import { expectError, expectJson, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();

async function oneTimeKey() {
  const { publicKey, privateKey } = await generateKeyPair("ECDH-ES", {
    crv: "P-256",
    extractable: true,
  });
  return { jwk: await exportJWK(publicKey), privateKey, privateJwk: await exportJWK(privateKey) };
}

const exportWith = (token: string, publicKey: unknown) =>
  t.request("POST", "/api/wallet/export", { token, body: { publicKey } });

test("[wallet] POST /api/wallet/export: a JWE only the client's key opens, holding the wallet's private key", async () => {
  const me = await signInAs(t, "MEMBER");
  const { wallet } = await expectJson(
    await t.request("GET", "/api/wallet", { token: me.accessToken }),
    200,
  );
  const key = await oneTimeKey();
  const response = await exportWith(me.accessToken, key.jwk);
  assert.equal(response.headers.get("cache-control"), "no-store");
  const body = await expectJson(response, 200);
  assert.equal(body.address, wallet.address);
  assert.equal(body.jwe.split(".").length, 5, "compact serialization");
  const header = decodeProtectedHeader(body.jwe);
  assert.equal(header.alg, "ECDH-ES");
  assert.equal(header.enc, "A256GCM");
  const { plaintext } = await compactDecrypt(body.jwe, key.privateKey);
  const privateKey = new TextDecoder().decode(plaintext);
  assert.match(privateKey, /^0x[0-9a-f]{64}$/);
  assert.equal(privateKeyToAddress(privateKey as `0x${string}`), wallet.address);
  // Another key cannot open it.
  await assert.rejects(compactDecrypt(body.jwe, (await oneTimeKey()).privateKey));

  const [event] = await t.deps.sql`
    select severity, details from app.security_events
    where type = 'wallet.key_exported' and user_id = ${me.user.id}`;
  assert.equal(event.severity, "critical");
  assert.equal(event.details.address, wallet.address);
  const [notification] = await t.deps.sql`
    select type::text, priority::text, inbox from app.notifications
    where user_id = ${me.user.id} and data ->> 'kind' = 'wallet.key_exported'`;
  assert.deepEqual(
    { ...notification },
    { type: "SYSTEM", priority: "critical", inbox: true },
    "a critical SYSTEM notification",
  );
  const after = await expectJson(
    await t.request("GET", "/api/wallet", { token: me.accessToken }),
    200,
  );
  assert.ok(after.wallet.exportedAt);
  // Admins find it among the security events.
  const admin = await signInAs(t, "ADMIN");
  const events = await expectJson(
    await t.request(
      "GET",
      `/api/admin/security-events?type=wallet.key_exported&userId=${me.user.id}`,
      {
        token: admin.accessToken,
      },
    ),
    200,
  );
  assert.equal(events.items.length, 1);
});

test("[wallet] export needs a fresh sign-in: an older session is 403 reauthentication_required", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  await t.deps.sql`
    update app.sessions set authenticated_at = now() - interval '11 minutes'
    where user_id = ${me.user.id}`;
  await expectError(
    await exportWith(me.accessToken, (await oneTimeKey()).jwk),
    403,
    "reauthentication_required",
  );
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.security_events
    where type = 'wallet.key_exported' and user_id = ${me.user.id}`;
  assert.equal(n, 0);
});

test("[wallet] export is limited to wallet.exportsPerDay (3): the fourth is 429", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  for (let i = 0; i < 3; i++) {
    await expectJson(await exportWith(me.accessToken, (await oneTimeKey()).jwk), 200);
  }
  const refused = await exportWith(me.accessToken, (await oneTimeKey()).jwk);
  await expectError(refused, 429, "rate_limited");
  assert.ok(refused.headers.get("retry-after"));
});

test("[wallet] export refuses a private JWK, another curve, a point off the curve: 400", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const key = await oneTimeKey();
  await expectError(await exportWith(me.accessToken, key.privateJwk), 400, "invalid_request");
  await expectError(
    await exportWith(me.accessToken, { ...key.jwk, crv: "P-384" }),
    400,
    "invalid_request",
  );
  const offCurve = { ...key.jwk, y: key.jwk.x };
  await expectError(await exportWith(me.accessToken, offCurve), 400, "invalid_request");
  await expectError(await exportWith(me.accessToken, "key"), 400, "invalid_request");
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.security_events
    where type = 'wallet.key_exported' and user_id = ${me.user.id}`;
  assert.equal(n, 0, "nothing was exported or recorded");
});
