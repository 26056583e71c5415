/**
 * A browser whose account was suspended is told so (issue 27: "a suspended user is shown the store
 * as a visitor with no word of why"): the request that finds its cookie session ended by a
 * suspension, by the access cookie or by the refresh cookie, marks the browser, and GET
 * /api/auth/session answers `suspended: true` (the pages say it, with the support address) until
 * the next sign-in. A session ended otherwise (signed out elsewhere) is not called a suspension.
 */
import assert from "node:assert/strict";
import {
  browserSignIn,
  cookieJar,
  expectJson,
  latestMagicToken,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

async function setStatus(userId: string, status: "active" | "suspended") {
  await expectJson(
    await t.request("PUT", `/api/admin/users/${userId}/status`, {
      token: admin.accessToken,
      body: { status, reason: "test" },
    }),
    200,
  );
}

/** The session as the browser reads it, with the cookies the answer set merged in. */
async function session(cookies: Record<string, string>) {
  const response = await t.request("GET", "/api/auth/session", { cookies });
  const jar = cookieJar(response);
  const next = { ...cookies, ...jar };
  for (const [name, value] of Object.entries(jar)) if (!value) delete next[name];
  return { body: await expectJson(response, 200), cookies: next };
}

test("[sessions] a cookie session ended by a suspension: the session says suspended (access cookie, then every later read), until the next sign-in", async () => {
  const email = uniqueEmail("suspended");
  const signedIn = await browserSignIn(t, email);
  let { body, cookies } = await session(signedIn.cookies);
  assert.equal(body.suspended, false);
  const userId = body.user.id;
  await setStatus(userId, "suspended");
  ({ body, cookies } = await session(cookies));
  assert.deepEqual(body, { user: null, expiresAt: null, suspended: true });
  assert.equal(cookies["agora-access-token"], undefined, "the session's cookies are gone");
  // Later reads (the session's cookies gone) still say why.
  ({ body, cookies } = await session(cookies));
  assert.equal(body.suspended, true);
  // Reactivated and signed in again: no longer said.
  await setStatus(userId, "active");
  const again = await browserSignIn(t, email);
  ({ body } = await session({ ...cookies, ...again.cookies }));
  assert.equal(body.user.id, userId);
  assert.equal(body.suspended, false);
  assert.equal(again.attributes["agora-suspended"]?.value ?? "", "", "the sign-in cleared it");
});

test("[sessions] by the refresh cookie alone (the access cookie expired), a suspension is said too; a session ended by signing out elsewhere is not called one", async () => {
  const suspended = await browserSignIn(t, uniqueEmail("suspended-refresh"));
  const { body: me } = await session(suspended.cookies);
  await setStatus(me.user.id, "suspended");
  const { body } = await session({
    "agora-refresh-token": suspended.cookies["agora-refresh-token"],
  });
  assert.deepEqual(body, { user: null, expiresAt: null, suspended: true });

  const other = await browserSignIn(t, uniqueEmail("ended"));
  await expectJson(
    await t.request("POST", "/api/auth/signout", {
      cookies: other.cookies,
      headers: { origin: "http://localhost:54321", "x-csrf-token": other.cookies["agora-csrf"] },
    }),
    200,
  );
  const { body: ended } = await session(other.cookies);
  assert.deepEqual(ended, { user: null, expiresAt: null, suspended: false });
});

test("[sessions] a sign-in link refused for a suspended account marks the browser: the session then says suspended", async () => {
  const email = uniqueEmail("suspended-link");
  const first = await browserSignIn(t, email);
  const { body: me } = await session(first.cookies);
  await setStatus(me.user.id, "suspended");
  const sent = await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  assert.equal(sent.status, 202);
  const token = await latestMagicToken(t.deps, email);
  const callback = await t.request("GET", `/api/auth/callback/email?token=${token}`);
  assert.equal(callback.status, 303);
  assert.match(callback.headers.get("location") ?? "", /error=suspended/);
  const { body } = await session(cookieJar(callback));
  assert.equal(body.suspended, true);
});
