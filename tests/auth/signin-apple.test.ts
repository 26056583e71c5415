/**
 * Sign in with Apple against a real OpenID Connect server (oauth2-mock-server as Apple's issuer):
 * the form post to the callback (and the CSRF exemption it needs), the client secret as an ES256
 * JWT of the team's key, the name that comes only with the first authorization, `email_verified`
 * as a string, private-relay addresses, the integrators' flow, and the refusals.
 */
import assert from "node:assert/strict";
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from "jose";
import {
  browserSignIn,
  cookieJar,
  createUser,
  expectError,
  expectJson,
  setCookies,
  SITE,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import {
  APPLE_CLIENT_ID,
  APPLE_KEY_ID,
  APPLE_TEAM_ID,
  authorizeAtProvider,
  BINDING_COOKIE,
  callback,
  signInFlow,
  startPeers,
  startSignIn,
} from "../support/oidc-peers.ts";
import { sha256Base64url } from "../../functions/_shared/crypto.ts";

const peers = await startPeers();
const t = testApp(peers.env);
const apple = peers.apple;

function newAppleUser(extra: Record<string, unknown> = {}) {
  apple.identity = {
    sub: `001234.${crypto.randomUUID().replace(/-/g, "")}.0042`,
    email: uniqueEmail("apple"),
    email_verified: "true",
    ...extra,
  };
  return apple.identity;
}

async function accountOf(sub: string) {
  return await t.deps.sql<{ user_id: string; email: string | null; name: string }[]>`
    select i.user_id, u.email, u.name from app.identities i join app.users u on u.id = i.user_id
    where i.provider = 'apple' and i.provider_user_id = ${sub}`;
}

function assertRedirectError(response: Response, error: string) {
  assert.equal(response.status, 303);
  const location = new URL(response.headers.get("location")!);
  assert.equal(location.searchParams.get("error"), error);
  assert.equal(setCookies(response)["agora-access-token"], undefined);
}

test("[apple] the authorization URL asks Apple for a form post with scope name email, PKCE, state and nonce", async () => {
  const started = await startSignIn(t, "apple");
  const q = started.url.searchParams;
  assert.equal(`${started.url.origin}${started.url.pathname}`, `${apple.issuer}/authorize`);
  assert.equal(q.get("response_type"), "code");
  assert.equal(q.get("response_mode"), "form_post");
  assert.equal(q.get("scope"), "name email");
  assert.equal(q.get("client_id"), APPLE_CLIENT_ID);
  assert.equal(q.get("redirect_uri"), `${SITE}/api/auth/callback/apple`);
  assert.equal(q.get("code_challenge_method"), "S256");
  assert.ok(q.get("state") && q.get("nonce") && q.get("code_challenge"));
  assert.match(started.bindingAttributes!, /SameSite=None/i);
});

test("[apple] the form post signs a browser in; the name comes from the first authorization's user field", async () => {
  const who = newAppleUser();
  const { response } = await signInFlow(t, "apple", { redirectTo: "/welcome" }, {
    appleUser: { name: { firstName: "Ada", lastName: "Lovelace" }, email: who.email },
  });
  assert.equal(response.status, 303);
  assert.equal(response.headers.get("location"), `${SITE}/welcome`);
  const jar = cookieJar(response);
  assert.deepEqual(decodeJwt(jar["agora-access-token"]).amr, ["apple"]);
  const [account] = await accountOf(who.sub);
  assert.equal(account.name, "Ada Lovelace");
  assert.equal(account.email, who.email, 'email_verified "true" counts as verified');

  // Later authorizations carry no name: the account keeps its own.
  const again = await signInFlow(t, "apple");
  assert.equal(again.response.status, 303);
  const accounts = await accountOf(who.sub);
  assert.equal(accounts.length, 1);
  assert.equal(accounts[0].name, "Ada Lovelace");
});

test("[apple] the client secret is an ES256 JWT of the team's key: iss team, sub client, aud the issuer, short-lived", async () => {
  newAppleUser();
  const { response } = await signInFlow(t, "apple");
  assert.equal(response.status, 303);
  const request = apple.tokenRequests.at(-1)!;
  assert.equal(request.client_id, APPLE_CLIENT_ID);
  assert.match(request.code_verifier, /^[A-Za-z0-9_-]{43}$/);
  const secret = request.client_secret;
  assert.deepEqual(decodeProtectedHeader(secret), { alg: "ES256", kid: APPLE_KEY_ID });
  const { payload } = await jwtVerify(secret, await importSPKI(peers.appleKey.publicPem, "ES256"), {
    issuer: APPLE_TEAM_ID,
    subject: APPLE_CLIENT_ID,
    audience: apple.issuer,
    algorithms: ["ES256"],
  });
  assert.ok(payload.exp! - payload.iat! <= 300 && payload.exp! > Date.now() / 1000);
});

test("[apple] a private-relay address is the account's verified address", async () => {
  const relay = `${crypto.randomUUID().slice(0, 10)}@privaterelay.appleid.com`;
  const who = newAppleUser({ email: relay, is_private_email: "true" });
  const { response } = await signInFlow(t, "apple");
  assert.equal(response.status, 303);
  assert.equal((await accountOf(who.sub))[0].email, relay);
});

test('[apple] email_verified "true" links to the account with that address; "false" does not', async () => {
  const existing = await createUser(t.deps, "CONFIDENTIAL");
  const verified = newAppleUser({ email: existing.email, email_verified: "true" });
  await signInFlow(t, "apple");
  assert.equal((await accountOf(verified.sub))[0].user_id, existing.id);

  const other = await createUser(t.deps, "MEMBER");
  const unverified = newAppleUser({ email: other.email, email_verified: "false" });
  await signInFlow(t, "apple");
  const [account] = await accountOf(unverified.sub);
  assert.notEqual(account.user_id, other.id);
  assert.equal(account.email, null);
});

test("[apple] the callback is exempt from the CSRF check: a cookie-signed-in browser's form post from Apple passes without a token", async () => {
  // A browser already signed in by magic link (session cookies present, no CSRF header: Apple's
  // page cannot add one).
  const { cookies: sessionCookies } = await browserSignIn(t, uniqueEmail("csrf"));
  // Another unsafe route with the same cookies and no token is refused by the CSRF check...
  await expectError(
    await t.request("POST", "/api/auth/signout", {
      cookies: sessionCookies,
      headers: { origin: "https://appleid.apple.com" },
    }),
    403,
    "forbidden",
  );
  // ...the Apple callback is not: a state nobody issued is refused by the state check (a 303 to
  // the sign-in page, which says so)...
  const unknown = await callback(t, "apple", { code: "x", state: "made-up" }, {
    cookies: sessionCookies,
  });
  assert.equal(unknown.status, 303);
  assert.equal(unknown.headers.get("location"), `${SITE}/signin?error=invalid_state`);
  // ...and a real flow completes.
  const who = newAppleUser();
  const started = await startSignIn(t, "apple");
  const back = await authorizeAtProvider(started.url);
  const response = await callback(t, "apple", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  }, { cookies: { ...sessionCookies, [BINDING_COOKIE]: started.binding! } });
  assert.equal(response.status, 303);
  assert.equal((await accountOf(who.sub)).length, 1);
  const csrfEvents = await t.deps.sql`
    select 1 from app.security_events where type = 'auth.csrf_rejected'
      and details ->> 'path' = '/api/auth/callback/apple'`;
  assert.equal(csrfEvents.length, 0);
});

test("[apple] the callback takes a form post only (415 otherwise)", async () => {
  await expectError(
    await t.request("POST", "/api/auth/callback/apple", { body: { state: "x" } }),
    415,
    "unsupported_media_type",
  );
});

test("[apple] an integrator gets tokens through the exchange code", async () => {
  const who = newAppleUser();
  const verifier = `${crypto.randomUUID()}-${crypto.randomUUID()}`;
  const started = await startSignIn(t, "apple", {
    redirectTo: "/native/done",
    codeChallenge: await sha256Base64url(verifier),
  });
  assert.equal(started.binding, null);
  const back = await authorizeAtProvider(started.url);
  const response = await callback(t, "apple", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  });
  assert.equal(response.status, 303);
  const location = new URL(response.headers.get("location")!);
  assert.equal(location.pathname, "/native/done");
  const session = await expectJson(
    await t.request("POST", "/api/auth/exchange", {
      body: { code: location.searchParams.get("code"), codeVerifier: verifier },
    }),
    200,
  );
  assert.equal(session.user.email, who.email);
  assert.deepEqual(decodeJwt(session.accessToken).amr, ["apple"]);
});

test("[apple] refused: another browser's state (no binding cookie)", async () => {
  const who = newAppleUser();
  const started = await startSignIn(t, "apple", { redirectTo: "/welcome" });
  const back = await authorizeAtProvider(started.url);
  assertRedirectError(
    await callback(t, "apple", {
      code: back.searchParams.get("code")!,
      state: back.searchParams.get("state")!,
    }),
    "invalid_state",
  );
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[apple] refused: a replayed form post lands on the sign-in page (error=invalid_state)", async () => {
  const who = newAppleUser();
  const { started, back, response } = await signInFlow(t, "apple");
  assert.equal(response.status, 303);
  const replay = await callback(t, "apple", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  }, { cookies: { [BINDING_COOKIE]: started.binding! } });
  assert.equal(replay.status, 303);
  assert.equal(replay.headers.get("location"), `${SITE}/signin?error=invalid_state`);
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.sessions s join app.identities i on i.user_id = s.user_id
    where i.provider = 'apple' and i.provider_user_id = ${who.sub}`;
  assert.equal(n, 1);
});

test("[apple] refused: a wrong nonce, a wrong audience, an expired ID token", async () => {
  for (
    const [shape, error] of [
      [(p: Record<string, unknown>) => (p.nonce = "not-this-one"), "nonce_mismatch"],
      [(p: Record<string, unknown>) => (p.aud = "com.example.other"), "invalid_id_token"],
      [
        (p: Record<string, unknown>) => (p.exp = Math.floor(Date.now() / 1000) - 600),
        "invalid_id_token",
      ],
    ] as const
  ) {
    const who = newAppleUser();
    apple.shapeNextIdToken(shape);
    const { response } = await signInFlow(t, "apple", { redirectTo: "/welcome" });
    assertRedirectError(response, error);
    assert.equal((await accountOf(who.sub)).length, 0, error);
  }
});

test("[apple] refused: the person cancelled at Apple (error=user_cancelled_authorize is a provider error)", async () => {
  const started = await startSignIn(t, "apple", { redirectTo: "/welcome" });
  const response = await callback(t, "apple", {
    error: "user_cancelled_authorize",
    state: started.url.searchParams.get("state")!,
  }, { cookies: { [BINDING_COOKIE]: started.binding! } });
  assertRedirectError(response, "provider_error");
});
