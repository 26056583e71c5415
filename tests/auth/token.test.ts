/**
 * POST /api/auth/token: the access token a cookie-signed-in page keeps in memory for Realtime.
 * Only for a cookie session, only with its CSRF token and an allowed origin; the token is one of
 * that session and dies with it.
 */
import assert from "node:assert/strict";
import {
  browserSignIn,
  expectError,
  expectJson,
  setCookies,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";

const t = testApp();
const ORIGIN = "http://localhost:54321";

/** A page signed in by cookie, with the CSRF token its unsafe requests send. */
async function signedInPage() {
  const { cookies } = await browserSignIn(t, uniqueEmail("page"));
  return { cookies, csrf: cookies["agora-csrf"] };
}

function claims(token: string) {
  return JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
}

test("[page token] a cookie session with its CSRF token gets an access token of that session", async () => {
  const { cookies, csrf } = await signedInPage();
  const response = await t.request("POST", "/api/auth/token", {
    cookies,
    headers: { origin: ORIGIN, "x-csrf-token": csrf },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("cache-control"), "no-store");
  assert.deepEqual(setCookies(response), {}, "no cookie changes");
  const body = await response.json();
  const mine = claims(body.accessToken);
  const cookieClaims = claims(cookies["agora-access-token"]);
  assert.equal(mine.session_id, cookieClaims.session_id);
  assert.equal(mine.sub, cookieClaims.sub);
  assert.equal(new Date(body.expiresAt).getTime(), mine.exp * 1000);
  assert.ok(mine.exp * 1000 > Date.now() + 60_000);

  // It works as a bearer token, e.g. for the SSE and long-poll routes the transport calls.
  const poll = await t.request("GET", `/api/realtime/poll?topics=user:${mine.sub}&timeout=0`, {
    token: body.accessToken,
  });
  assert.equal(poll.status, 200);
});

test("[page token] without X-CSRF-Token, with a wrong one or from another origin: 403 and no token", async () => {
  const { cookies, csrf } = await signedInPage();
  for (
    const headers of [
      { origin: ORIGIN },
      { origin: ORIGIN, "x-csrf-token": "forged" },
      { origin: "https://evil.example", "x-csrf-token": csrf },
    ] as Record<string, string>[]
  ) {
    const response = await t.request("POST", "/api/auth/token", { cookies, headers });
    await expectError(response, 403, "forbidden");
  }
});

test("[page token] anonymous is 401; a bearer caller (who holds its tokens) is 403", async () => {
  await expectError(
    await t.request("POST", "/api/auth/token", { headers: { origin: ORIGIN } }),
    401,
    "unauthenticated",
  );
  const bearer = await signInAs(t, "MEMBER");
  await expectError(
    await t.request("POST", "/api/auth/token", { token: bearer.accessToken }),
    403,
    "forbidden",
  );
});

test("[page token] after signout the cookies get no token, and a token handed out before is refused", async () => {
  const { cookies, csrf } = await signedInPage();
  const headers = { origin: ORIGIN, "x-csrf-token": csrf };
  const first = await (await t.request("POST", "/api/auth/token", { cookies, headers })).json();
  const out = await t.request("POST", "/api/auth/signout", { cookies, headers });
  assert.equal(out.status, 200);
  await expectError(
    await t.request("POST", "/api/auth/token", { cookies, headers }),
    401,
    "unauthenticated",
  );
  await expectError(
    await t.request("GET", "/api/conversations", { token: first.accessToken }),
    401,
    "unauthenticated",
  );
});

test("[page token] keeps the session's auth_time and amr: asking for a token never makes a sign-in fresh", async () => {
  const { cookies, csrf } = await signedInPage();
  const signedIn = claims(cookies["agora-access-token"]);
  // Age the sign-in beyond any freshness window: only the database says when it happened.
  await t.deps.sql`
    update app.sessions set authenticated_at = authenticated_at - interval '2 hours'
    where id = ${signedIn.session_id}`;
  const body = await expectJson(
    await t.request("POST", "/api/auth/token", {
      cookies,
      headers: { origin: ORIGIN, "x-csrf-token": csrf },
    }),
    200,
  );
  const mine = claims(body.accessToken);
  assert.equal(mine.auth_time, signedIn.auth_time - 7200, "the session's own sign-in time");
  assert.deepEqual(mine.amr, signedIn.amr);
  assert.ok(mine.auth_time < Date.now() / 1000 - 3600, "not the time of this request");
});
