/**
 * Sign-in with Google against a real OpenID Connect server (oauth2-mock-server as the issuer):
 * the browser flow and the integrators' flow, what is sent and stored, and each refusal on its
 * own: wrong or missing state, another browser's state, a replayed callback, a replayed code, a
 * wrong nonce, a wrong audience, an expired ID token, a provider's refusal, an expired flow.
 */
import assert from "node:assert/strict";
import { decodeJwt } from "jose";
import {
  cookieJar,
  createUser,
  expectError,
  expectJson,
  setCookies,
  signIn,
  SITE,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import {
  authorizeAtProvider,
  BINDING_COOKIE,
  callback,
  GOOGLE_CLIENT_ID,
  signInFlow,
  startPeers,
  startSignIn,
} from "../support/oidc-peers.ts";
import { sha256Base64url, sha256Hex } from "../../functions/_shared/crypto.ts";

const peers = await startPeers();
const t = testApp(peers.env);
const google = peers.google;

/** A fresh Google account for each test, so tests never share identities. */
function newGoogleUser(extra: Record<string, unknown> = {}) {
  const sub = `g-${crypto.randomUUID()}`;
  google.identity = {
    sub,
    email: uniqueEmail("google"),
    email_verified: true,
    name: "Gia Google",
    ...extra,
  };
  return google.identity;
}

/** The session's access token, from the cookies of a callback's answer. */
function accessTokenOf(response: Response): string {
  return cookieJar(response)["agora-access-token"];
}

async function accountOf(sub: string) {
  return await t.deps.sql<{ user_id: string; email: string | null; name: string }[]>`
    select i.user_id, u.email, u.name from app.identities i join app.users u on u.id = i.user_id
    where i.provider = 'google' and i.provider_user_id = ${sub}`;
}

async function sessionsOf(sub: string): Promise<number> {
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.sessions s join app.identities i on i.user_id = s.user_id
    where i.provider = 'google' and i.provider_user_id = ${sub}`;
  return n;
}

/** A refused callback: 303 back to where the sign-in wanted to go, with `?error=`. */
function assertRedirectError(response: Response, error: string, to = `${SITE}/welcome`) {
  assert.equal(response.status, 303, `a redirect, got ${response.status}`);
  const location = new URL(response.headers.get("location")!);
  assert.equal(`${location.origin}${location.pathname}`, to);
  assert.equal(location.searchParams.get("error"), error);
  assert.equal(setCookies(response)["agora-access-token"], undefined, "no session cookie");
}

// --- the browser flow ---------------------------------------------------------------------------

test("[google] the authorization URL asks for a code with PKCE S256, state and nonce, from the discovery document", async () => {
  const started = await startSignIn(t, "google", { redirectTo: "/welcome" });
  assert.equal(`${started.url.origin}${started.url.pathname}`, `${google.issuer}/authorize`);
  const q = started.url.searchParams;
  assert.equal(q.get("response_type"), "code");
  assert.equal(q.get("client_id"), GOOGLE_CLIENT_ID);
  assert.equal(q.get("redirect_uri"), `${SITE}/api/auth/callback/google`);
  assert.deepEqual(q.get("scope")!.split(" ").sort(), ["email", "openid", "profile"]);
  assert.equal(q.get("code_challenge_method"), "S256");
  assert.match(q.get("code_challenge")!, /^[A-Za-z0-9_-]{43}$/);
  assert.match(q.get("state")!, /^[A-Za-z0-9_-]{43}$/);
  assert.match(q.get("nonce")!, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(started.response.headers.get("cache-control"), "no-store");

  // Stored server-side as hashes only, for ten minutes, bound to this browser.
  const [flow] = await t.deps.sql`
    select state_hash, nonce_hash, binding_hash, redirect_to,
           extract(epoch from expires_at - created_at)::int as ttl
    from app_private.oauth_flows where state_hash = ${await sha256Hex(q.get("state")!)}`;
  assert.ok(flow, "the flow is stored under the state's hash");
  assert.equal(flow.nonce_hash, await sha256Hex(q.get("nonce")!));
  assert.equal(flow.binding_hash, await sha256Hex(started.binding!));
  assert.equal(flow.redirect_to, `${SITE}/welcome`);
  assert.equal(flow.ttl, 600);
  const [plain] = await t.deps.sql`
    select 1 from app_private.oauth_flows where state_hash = ${q.get("state")} or nonce_hash = ${
    q.get("nonce")
  }`;
  assert.equal(plain, undefined, "neither the state nor the nonce is stored in the clear");

  // The binding cookie survives a cross-site form post and is sent to the callbacks only.
  const attributes = started.bindingAttributes!.toLowerCase();
  for (
    const part of ["httponly", "secure", "samesite=none", "path=/api/auth/callback", "max-age=600"]
  ) {
    assert.ok(attributes.includes(part), `binding cookie: ${part} in ${attributes}`);
  }
});

test("[google] a browser signs in: cookies, 303 to redirectTo, a new account with the verified address, auth_time and amr", async () => {
  const who = newGoogleUser();
  const before = Math.floor(Date.now() / 1000);
  const { started, response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assert.equal(response.status, 303);
  assert.equal(response.headers.get("location"), `${SITE}/welcome`);
  assert.equal(response.headers.get("cache-control"), "no-store");
  const jar = cookieJar(response);
  for (const name of ["agora-access-token", "agora-refresh-token", "agora-csrf"]) {
    assert.ok(jar[name], `${name} is set`);
  }
  const claims = decodeJwt(jar["agora-access-token"]);
  assert.deepEqual(claims.amr, ["google"]);
  assert.ok((claims.auth_time as number) >= before - 1);

  const session = await expectJson(
    await t.request("GET", "/api/auth/session", { cookies: jar }),
    200,
  );
  assert.equal(session.user.email, who.email);
  assert.equal(session.user.name, "Gia Google");
  assert.equal(session.user.role, "SUBSCRIBER");
  assert.deepEqual((await accountOf(who.sub)).map((a) => a.email), [who.email]);

  // The PKCE verifier reached the token endpoint and matches the challenge; so did the secret.
  const request = google.tokenRequests.at(-1)!;
  assert.equal(request.grant_type, "authorization_code");
  assert.equal(request.client_id, GOOGLE_CLIENT_ID);
  assert.equal(request.client_secret, "google-client-secret-for-tests");
  assert.equal(request.redirect_uri, `${SITE}/api/auth/callback/google`);
  assert.equal(
    await sha256Base64url(request.code_verifier),
    started.url.searchParams.get("code_challenge"),
  );
  // The verifier is gone once the state is spent.
  const [flow] = await t.deps.sql`
    select code_verifier, used_at from app_private.oauth_flows
    where state_hash = ${await sha256Hex(started.url.searchParams.get("state")!)}`;
  assert.equal(flow.code_verifier, null);
  assert.ok(flow.used_at);

  const [event] = await t.deps.sql`
    select details from app.security_events
    where type = 'auth.signin' and user_id = ${session.user.id} order by id desc limit 1`;
  assert.equal(event.details.provider, "google");
  assert.equal(event.details.newAccount, true);
});

test("[google] signing in again reaches the same account; without redirectTo the callback goes to the site", async () => {
  const who = newGoogleUser();
  const first = await signInFlow(t, "google");
  assert.equal(first.response.headers.get("location"), `${SITE}/`);
  const second = await signInFlow(t, "google");
  assert.equal(second.response.status, 303);
  const accounts = await accountOf(who.sub);
  assert.equal(accounts.length, 1);
  assert.equal(await sessionsOf(who.sub), 2);
});

// --- the integrators' flow -----------------------------------------------------------------------

test("[google] an integrator gets tokens: codeChallenge at the start, a code in the redirect, the verifier at /api/auth/exchange", async () => {
  const who = newGoogleUser();
  const verifier = `${crypto.randomUUID()}${crypto.randomUUID()}`.replace(/-/g, "");
  const started = await startSignIn(t, "google", {
    redirectTo: "http://app.example.test/done",
    codeChallenge: await sha256Base64url(verifier),
  });
  assert.equal(started.binding, null, "no browser binding for an integrator");
  const back = await authorizeAtProvider(started.url);
  const response = await callback(t, "google", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  });
  assert.equal(response.status, 303);
  assert.deepEqual(Object.keys(setCookies(response)), [], "no cookies for an integrator");
  const location = new URL(response.headers.get("location")!);
  assert.equal(`${location.origin}${location.pathname}`, "http://app.example.test/done");
  const code = location.searchParams.get("code")!;
  assert.ok(code);
  assert.equal(await sessionsOf(who.sub), 0, "no session before the exchange");

  const session = await expectJson(
    await t.request("POST", "/api/auth/exchange", { body: { code, codeVerifier: verifier } }),
    200,
  );
  assert.equal(session.user.email, who.email);
  assert.deepEqual(decodeJwt(session.accessToken).amr, ["google"]);
  const me = await expectJson(
    await t.request("GET", "/api/auth/session", { token: session.accessToken }),
    200,
  );
  assert.equal(me.user.id, session.user.id);

  await expectError(
    await t.request("POST", "/api/auth/exchange", { body: { code, codeVerifier: verifier } }),
    401,
    "unauthenticated",
  );
  assert.equal(await sessionsOf(who.sub), 1, "the code works once");
});

test("[google] an integrator's code with the wrong verifier is refused and spent", async () => {
  newGoogleUser();
  const verifier = "v".repeat(43);
  const started = await startSignIn(t, "google", {
    codeChallenge: await sha256Base64url(verifier),
  });
  const back = await authorizeAtProvider(started.url);
  const response = await callback(t, "google", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  });
  const code = new URL(response.headers.get("location")!).searchParams.get("code")!;
  await expectError(
    await t.request("POST", "/api/auth/exchange", { body: { code, codeVerifier: "w".repeat(43) } }),
    401,
  );
  await expectError(
    await t.request("POST", "/api/auth/exchange", { body: { code, codeVerifier: verifier } }),
    401,
    "unauthenticated",
  );
});

test("[google] an integrator's flow changes no account until its code is exchanged: a link is decided at the exchange", async () => {
  const member = await signIn(t, uniqueEmail("integrator-linker"));
  const who = newGoogleUser();
  const verifier = "L".repeat(43);
  const started = await startSignIn(t, "google", {
    link: true,
    codeChallenge: await sha256Base64url(verifier),
  }, { token: member.accessToken });
  const back = await authorizeAtProvider(started.url);
  const response = await callback(t, "google", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  });
  assert.equal(response.status, 303);
  assert.equal(
    (await accountOf(who.sub)).length,
    0,
    "nothing is linked or created at the callback",
  );
  const code = new URL(response.headers.get("location")!).searchParams.get("code")!;
  const [waiting] = await t.deps.sql`
    select result_identity ->> 'subject' as subject from app_private.oauth_flows
    where exchange_code_hash = ${await sha256Hex(code)}`;
  assert.equal(waiting.subject, who.sub, "the verified identity waits with the code");

  const session = await expectJson(
    await t.request("POST", "/api/auth/exchange", { body: { code, codeVerifier: verifier } }),
    200,
  );
  assert.equal(session.user.id, member.user.id);
  assert.equal((await accountOf(who.sub))[0].user_id, member.user.id);
  const [cleared] = await t.deps.sql`
    select result_identity from app_private.oauth_flows where exchange_code_hash = ${await sha256Hex(
    code,
  )}`;
  assert.equal(cleared.result_identity, null, "the identity is not kept once exchanged");

  // A code never exchanged links nothing.
  const stranger = newGoogleUser();
  const other = await startSignIn(t, "google", {
    link: true,
    codeChallenge: await sha256Base64url(verifier),
  }, { token: member.accessToken });
  const otherBack = await authorizeAtProvider(other.url);
  await callback(t, "google", {
    code: otherBack.searchParams.get("code")!,
    state: otherBack.searchParams.get("state")!,
  });
  assert.equal((await accountOf(stranger.sub)).length, 0);
});

// --- refusals -------------------------------------------------------------------------------------

test("[google] refused: a callback with a state nobody issued, or none, lands on the sign-in page (error=invalid_state) and opens nothing", async () => {
  const who = newGoogleUser();
  const started = await startSignIn(t, "google");
  const back = await authorizeAtProvider(started.url);
  const cookies = { [BINDING_COOKIE]: started.binding! };
  assertRedirectError(
    await callback(t, "google", { code: back.searchParams.get("code")!, state: "made-up" }, {
      cookies,
    }),
    "invalid_state",
    `${SITE}/signin`,
  );
  assertRedirectError(
    await callback(t, "google", { code: back.searchParams.get("code")! }, { cookies }),
    "invalid_state",
    `${SITE}/signin`,
  );
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] refused: a state started in another browser (login CSRF) redirects with error=invalid_state", async () => {
  const who = newGoogleUser();
  const started = await startSignIn(t, "google", { redirectTo: "/welcome" });
  const back = await authorizeAtProvider(started.url);
  const params = { code: back.searchParams.get("code")!, state: back.searchParams.get("state")! };
  // The victim's browser: no binding cookie, or its own from another flow.
  const other = await startSignIn(t, "google");
  assertRedirectError(
    await callback(t, "google", params, { cookies: { [BINDING_COOKIE]: other.binding! } }),
    "invalid_state",
  );
  assert.equal((await accountOf(who.sub)).length, 0);
  // ... and the state was spent by the attempt: the rightful browser cannot reuse it either.
  assertRedirectError(
    await callback(t, "google", params, { cookies: { [BINDING_COOKIE]: started.binding! } }),
    "invalid_state",
    `${SITE}/signin`,
  );
  const second = await startSignIn(t, "google", { redirectTo: "/welcome" });
  const back2 = await authorizeAtProvider(second.url);
  assertRedirectError(
    await callback(t, "google", {
      code: back2.searchParams.get("code")!,
      state: back2.searchParams.get("state")!,
    }),
    "invalid_state",
  );
});

test("[google] refused: replaying a callback (same code and state) lands on the sign-in page; the session opened once", async () => {
  const who = newGoogleUser();
  const { started, back, response } = await signInFlow(t, "google");
  assert.equal(response.status, 303);
  const replay = await callback(t, "google", {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  }, { cookies: { [BINDING_COOKIE]: started.binding! } });
  assertRedirectError(replay, "invalid_state", `${SITE}/signin`);
  assert.equal(await sessionsOf(who.sub), 1);
});

test("[google] refused: a code already exchanged, replayed with a fresh state, fails at the provider", async () => {
  const who = newGoogleUser();
  const first = await signInFlow(t, "google");
  assert.equal(first.response.status, 303);
  const fresh = await startSignIn(t, "google", { redirectTo: "/welcome" });
  const response = await callback(t, "google", {
    code: first.back.searchParams.get("code")!,
    state: new URL(fresh.url).searchParams.get("state")!,
  }, { cookies: { [BINDING_COOKIE]: fresh.binding! } });
  assertRedirectError(response, "token_exchange_failed");
  assert.equal(await sessionsOf(who.sub), 1);
});

test("[google] refused: a token endpoint that rejects the code redirects with error=token_exchange_failed", async () => {
  const who = newGoogleUser();
  google.refuseNextCode();
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "token_exchange_failed");
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] refused: an ID token with another nonce redirects with error=nonce_mismatch", async () => {
  const who = newGoogleUser();
  google.shapeNextIdToken((p) => (p.nonce = "someone-elses-nonce"));
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "nonce_mismatch");
  assert.equal((await accountOf(who.sub)).length, 0);
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.signin_failed'
    order by id desc limit 1`;
  assert.deepEqual(event.details, { provider: "google", reason: "nonce_mismatch" });
});

test("[google] refused: an ID token without a nonce redirects with error=nonce_mismatch", async () => {
  const who = newGoogleUser();
  google.shapeNextIdToken((p) => delete p.nonce);
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "nonce_mismatch");
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] refused: an ID token for another client (audience) redirects with error=invalid_id_token", async () => {
  const who = newGoogleUser();
  google.shapeNextIdToken((p) => (p.aud = "another-client.apps.googleusercontent.test"));
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "invalid_id_token");
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] refused: an expired ID token redirects with error=invalid_id_token", async () => {
  const who = newGoogleUser();
  google.shapeNextIdToken((p) => {
    const now = Math.floor(Date.now() / 1000);
    p.iat = now - 7200;
    p.exp = now - 3600;
  });
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "invalid_id_token");
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] refused: an ID token from another issuer redirects with error=invalid_id_token", async () => {
  const who = newGoogleUser();
  google.shapeNextIdToken((p) => (p.iss = "https://accounts.evil.example"));
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "invalid_id_token");
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] refused: the person declined at Google (error=access_denied)", async () => {
  const started = await startSignIn(t, "google", { redirectTo: "/welcome" });
  const response = await callback(t, "google", {
    error: "access_denied",
    state: started.url.searchParams.get("state")!,
  }, { cookies: { [BINDING_COOKIE]: started.binding! } });
  assertRedirectError(response, "access_denied");
});

test("[google] refused: a flow older than ten minutes lands on the sign-in page (error=invalid_state)", async () => {
  const who = newGoogleUser();
  const started = await startSignIn(t, "google");
  const back = await authorizeAtProvider(started.url);
  await t.deps.sql`
    update app_private.oauth_flows set expires_at = now() - interval '1 second'
    where state_hash = ${await sha256Hex(back.searchParams.get("state")!)}`;
  assertRedirectError(
    await callback(t, "google", {
      code: back.searchParams.get("code")!,
      state: back.searchParams.get("state")!,
    }, { cookies: { [BINDING_COOKIE]: started.binding! } }),
    "invalid_state",
    `${SITE}/signin`,
  );
  assert.equal((await accountOf(who.sub)).length, 0);
});

test("[google] concurrent callbacks with one state open exactly one session", async () => {
  const who = newGoogleUser();
  const started = await startSignIn(t, "google");
  const back = await authorizeAtProvider(started.url);
  const params = { code: back.searchParams.get("code")!, state: back.searchParams.get("state")! };
  const results = await Promise.all(
    Array.from(
      { length: 6 },
      () => callback(t, "google", params, { cookies: { [BINDING_COOKIE]: started.binding! } }),
    ),
  );
  await Promise.all(results.map((r) => r.body?.cancel()));
  assert.deepEqual(results.map((r) => r.status), [303, 303, 303, 303, 303, 303]);
  const refused = results.filter((r) =>
    r.headers.get("location") === `${SITE}/signin?error=invalid_state`
  );
  assert.equal(refused.length, 5, "the other five land on the sign-in page");
  assert.equal(await sessionsOf(who.sub), 1);
});

// --- accounts and linking -------------------------------------------------------------------------

test("[google] a verified address equal to an account's links to it (auth.identity_linked)", async () => {
  const existing = await createUser(t.deps, "MEMBER");
  const who = newGoogleUser({ email: existing.email.toUpperCase() });
  const { response } = await signInFlow(t, "google");
  assert.equal(response.status, 303);
  const me = await expectJson(
    await t.request("GET", "/api/auth/session", { token: accessTokenOf(response) }),
    200,
  );
  assert.equal(me.user.id, existing.id);
  assert.equal(me.user.role, "MEMBER");
  assert.equal((await accountOf(who.sub))[0].user_id, existing.id);
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.identity_linked' and user_id = ${existing.id}`;
  assert.deepEqual(event.details, { provider: "google", via: "verified_email" });
});

test("[google] an unverified address never links: a new account, without the address", async () => {
  const existing = await createUser(t.deps, "MEMBER");
  const who = newGoogleUser({ email: existing.email, email_verified: false });
  const { response } = await signInFlow(t, "google");
  assert.equal(response.status, 303);
  const [account] = await accountOf(who.sub);
  assert.notEqual(account.user_id, existing.id);
  assert.equal(account.email, null, "the account has no (unverified) address");
  const [identity] = await t.deps.sql`
    select email from app.identities where provider = 'google' and provider_user_id = ${who.sub}`;
  assert.equal(identity.email, existing.email, "the identity keeps what Google said");
});

test("[google] a signed-in user links Google explicitly with link: true", async () => {
  const member = await signIn(t, uniqueEmail("linker"));
  const who = newGoogleUser({ email: uniqueEmail("other-address") });
  const { response } = await signInFlow(t, "google", { link: true }, { token: member.accessToken });
  assert.equal(response.status, 303);
  assert.equal((await accountOf(who.sub))[0].user_id, member.user.id);
  const list = await expectJson(
    await t.request("GET", "/api/auth/identities", { token: member.accessToken }),
    200,
  );
  assert.deepEqual(list.items.map((i: { provider: string }) => i.provider).sort(), [
    "email",
    "google",
  ]);
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.identity_linked' and user_id = ${member.user.id}`;
  assert.deepEqual(event.details, { provider: "google", via: "explicit" });
});

test("[google] link: true without a session is 401", async () => {
  await expectError(
    await t.request("POST", "/api/auth/signin", { body: { provider: "google", link: true } }),
    401,
  );
});

test("[google] linking an identity that is another account's redirects with error=identity_in_use", async () => {
  const who = newGoogleUser();
  await signInFlow(t, "google");
  const owner = (await accountOf(who.sub))[0].user_id;
  const member = await signIn(t, uniqueEmail("thief"));
  const { response } = await signInFlow(t, "google", { link: true, redirectTo: "/welcome" }, {
    token: member.accessToken,
  });
  assertRedirectError(response, "identity_in_use");
  assert.equal((await accountOf(who.sub))[0].user_id, owner);
});

test("[google] a suspended account signs in to nothing (error=suspended)", async () => {
  const who = newGoogleUser();
  await signInFlow(t, "google");
  const [{ user_id }] = await accountOf(who.sub);
  await t.deps.sql`update app.users set status = 'suspended' where id = ${user_id}`;
  const { response } = await signInFlow(t, "google", { redirectTo: "/welcome" });
  assertRedirectError(response, "suspended");
  assert.equal(await sessionsOf(who.sub), 1);
});

test("[google] the last identity cannot be unlinked; the e-mail identity cannot either; another one can", async () => {
  const who = newGoogleUser();
  const { response } = await signInFlow(t, "google");
  const token = accessTokenOf(response);
  const only = await expectJson(await t.request("GET", "/api/auth/identities", { token }), 200);
  assert.equal(only.items.length, 1);
  await expectError(
    await t.request("DELETE", `/api/auth/identities/${only.items[0].id}`, { token }),
    422,
    "unprocessable",
  );

  // With a magic-link identity too (the link reaches the same account through its address):
  // Google may go, the e-mail identity may not.
  const byLink = await signIn(t, who.email!);
  assert.equal(byLink.user.id, (await accountOf(who.sub))[0].user_id);
  const after = await expectJson(await t.request("GET", "/api/auth/identities", { token }), 200);
  const ids = Object.fromEntries(
    after.items.map((i: { provider: string; id: string }) => [i.provider, i.id]),
  );
  assert.deepEqual(Object.keys(ids).sort(), ["email", "google"]);
  await expectError(
    await t.request("DELETE", `/api/auth/identities/${ids.email}`, { token }),
    422,
  );
  const unlinked = await expectJson(
    await t.request("DELETE", `/api/auth/identities/${ids.google}`, { token }),
    200,
  );
  assert.deepEqual(unlinked, { id: ids.google, unlinked: true });
  assert.equal((await accountOf(who.sub)).length, 0);
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.identity_unlinked'
    order by id desc limit 1`;
  assert.equal(event.details.provider, "google");

  // Another user's identity is not found.
  const stranger = await signIn(t, uniqueEmail("stranger"));
  await expectError(
    await t.request("DELETE", `/api/auth/identities/${ids.email}`, { token: stranger.accessToken }),
    404,
  );
});

// --- providers on and off -------------------------------------------------------------------------

test("[google] GET /api/auth/providers says which are on; a provider turned off is 400 provider_disabled", async () => {
  const list = await expectJson(await t.request("GET", "/api/auth/providers"), 200);
  assert.deepEqual(list.providers, [
    { id: "email", enabled: true },
    { id: "google", enabled: true },
    { id: "apple", enabled: true },
    { id: "wallet", enabled: true },
  ]);
  const admin = await signIn(t, (await createUser(t.deps, "ADMIN")).email);
  const set = (google: boolean) =>
    t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      body: { config: { features: { signIn: { google } } }, reason: "test" },
    });
  await expectJson(await set(false), 200);
  try {
    const off = await expectJson(await t.request("GET", "/api/auth/providers"), 200);
    assert.deepEqual(off.providers[1], { id: "google", enabled: false });
    const refused = await expectError(
      await t.request("POST", "/api/auth/signin", { body: { provider: "google" } }),
      400,
      "provider_disabled",
    );
    assert.deepEqual(refused.error.details, { provider: "google", reason: "disabled" });
  } finally {
    await expectJson(await set(true), 200);
  }
});

test("[google] without its settings Google is off: providers says so, signin is 400 provider_disabled", async () => {
  const bare = testApp();
  const list = await expectJson(await bare.request("GET", "/api/auth/providers"), 200);
  assert.deepEqual(list.providers.map((p: { enabled: boolean }) => p.enabled), [
    true,
    false,
    false,
    true,
  ]);
  for (const provider of ["google", "apple"]) {
    const refused = await expectError(
      await bare.request("POST", "/api/auth/signin", { body: { provider } }),
      400,
      "provider_disabled",
    );
    assert.deepEqual(refused.error.details, { provider, reason: "not_configured" });
  }
});

test("[google] redirectTo outside the allowed origins is refused at the start", async () => {
  await expectError(
    await t.request("POST", "/api/auth/signin", {
      body: { provider: "google", redirectTo: "https://evil.example/x" },
    }),
    400,
    "invalid_request",
  );
});
