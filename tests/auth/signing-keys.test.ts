/**
 * Access tokens signed with an asymmetric key (ES256, `AGORA_JWT_SIGNING_KEY`): the `kid` in the
 * header, the public keys published as a JWKS, rotation with overlap (previous keys verify until
 * dropped), and HS256 under `AGORA_JWT_SECRET` as the fallback when no signing key is set.
 */
import assert from "node:assert/strict";
import { decodeProtectedHeader } from "jose";
import { expectJson, signInAs, test, testApp, testEnv } from "../support/helpers.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";
import { generateSigningKey } from "../../stack/local-env.ts";

const keyA = generateSigningKey();
const keyB = generateSigningKey();
const kid = (key: string) => JSON.parse(key).kid as string;

/** Who GET /api/auth/session says the bearer is (null: the token is not accepted). */
async function sessionUser(t: ReturnType<typeof testApp>, token: string) {
  const body = await expectJson(await t.request("GET", "/api/auth/session", { token }), 200);
  return body.user as { id: string } | null;
}

test("[jwt] with a signing key, tokens are ES256 with its kid and the JWKS publishes public keys only", async () => {
  const t = testApp({ AGORA_JWT_SIGNING_KEY: keyA, AGORA_JWT_PREVIOUS_KEYS: `[${keyB}]` });
  const session = await signInAs(t, "MEMBER");
  assert.deepEqual(decodeProtectedHeader(session.accessToken), {
    alg: "ES256",
    typ: "JWT",
    kid: kid(keyA),
  });
  assert.equal((await sessionUser(t, session.accessToken))?.id, session.user.id);

  const response = await t.request("GET", "/api/auth/.well-known/jwks.json");
  assert.equal(response.headers.get("cache-control"), "public, max-age=300");
  const text = await response.clone().text();
  const jwks = await expectJson<{ keys: Record<string, string>[] }>(response, 200);
  assert.deepEqual(jwks.keys.map((k) => k.kid), [kid(keyA), kid(keyB)], "current, then previous");
  for (const key of jwks.keys) {
    assert.deepEqual(Object.keys(key).sort(), ["alg", "crv", "kid", "kty", "use", "x", "y"]);
  }
  for (const key of [keyA, keyB]) {
    assert.ok(!text.includes(JSON.parse(key).d), "no private part, the previous key's included");
  }
});

test("[jwt] rotation overlap: a token of the previous key verifies while the key is listed, not after", async () => {
  const before = testApp({ AGORA_JWT_SIGNING_KEY: keyB });
  const old = await signInAs(before, "MEMBER");
  assert.equal(decodeProtectedHeader(old.accessToken).kid, kid(keyB));

  const during = testApp({
    AGORA_JWT_SIGNING_KEY: keyA,
    // The previous key as the operator moves it: the whole private JWK; only x, y are kept.
    AGORA_JWT_PREVIOUS_KEYS: keyB,
  });
  assert.equal((await sessionUser(during, old.accessToken))?.id, old.user.id);
  const fresh = await signInAs(during, "MEMBER");
  assert.equal(decodeProtectedHeader(fresh.accessToken).kid, kid(keyA), "new tokens: new key");

  const after = testApp({ AGORA_JWT_SIGNING_KEY: keyA });
  assert.equal(await sessionUser(after, old.accessToken), null, "the dropped key's token");
  assert.equal((await sessionUser(after, fresh.accessToken))?.id, fresh.user.id);
  // The refresh token is not signed: the old session carries on with a token of the new key.
  const refreshed = await expectJson(
    await after.request("POST", "/api/auth/refresh", { body: { refreshToken: old.refreshToken } }),
    200,
  );
  assert.equal(decodeProtectedHeader(refreshed.accessToken).kid, kid(keyA));
});

test("[jwt] without a signing key tokens are HS256 (the fallback); with one, an HS256 token is refused", async () => {
  const legacy = testApp({ AGORA_JWT_SIGNING_KEY: "" });
  const session = await signInAs(legacy, "MEMBER");
  assert.deepEqual(decodeProtectedHeader(session.accessToken), { alg: "HS256", typ: "JWT" });
  assert.equal((await sessionUser(legacy, session.accessToken))?.id, session.user.id);
  assert.deepEqual(
    await expectJson(await legacy.request("GET", "/api/auth/.well-known/jwks.json"), 200),
    { keys: [] },
    "a secret is never published",
  );
  // RLS reads the claims the API sets from the session row (doors.ts), whatever signed the token.
  const conversations = await legacy.request("GET", "/api/conversations", {
    token: session.accessToken,
  });
  assert.equal(conversations.status, 200);

  const signed = testApp({ AGORA_JWT_SIGNING_KEY: keyA });
  assert.equal(await sessionUser(signed, session.accessToken), null, "same secret, still refused");
  assert.equal(await signed.deps.tokens.verify(session.accessToken), null);
});

test("[jwt] a signing key that is not a private P-256 JWK is refused, naming the variable and never echoing it", () => {
  const { d: _d, ...publicOnly } = JSON.parse(keyA);
  const cases: Record<string, string>[] = [
    { AGORA_JWT_SIGNING_KEY: JSON.stringify(publicOnly) },
    { AGORA_JWT_SIGNING_KEY: keyA.slice(0, -2) },
    { AGORA_JWT_SIGNING_KEY: JSON.stringify({ ...JSON.parse(keyA), alg: "RS256" }) },
    { AGORA_JWT_SIGNING_KEY: JSON.stringify({ ...JSON.parse(keyA), crv: "P-384" }) },
    { AGORA_JWT_SIGNING_KEY: `[${keyA},${keyB}]` },
    { AGORA_JWT_SIGNING_KEY: keyA, AGORA_JWT_PREVIOUS_KEYS: '[{"kty":"oct","k":"c2VjcmV0"}]' },
    { AGORA_JWT_SIGNING_KEY: "", AGORA_JWT_PREVIOUS_KEYS: keyB },
  ];
  for (const overrides of cases) {
    assert.throws(() => loadSettings(testEnv(overrides)), (err: Error) => {
      assert.match(err.message, /AGORA_JWT_(SIGNING|PREVIOUS)_KEYS?/);
      for (const key of [keyA, keyB]) assert.ok(!err.message.includes(JSON.parse(key).d));
      return true;
    }, JSON.stringify(Object.keys(overrides)));
  }
  // A JWKS object is accepted for the previous keys, and their private parts are dropped.
  const settings = loadSettings(
    testEnv({ AGORA_JWT_SIGNING_KEY: keyA, AGORA_JWT_PREVIOUS_KEYS: `{"keys":[${keyB}]}` }),
  );
  assert.equal(settings.jwtSigningKeys?.previous.length, 1);
  assert.equal(settings.jwtSigningKeys?.previous[0].d, undefined);
});
