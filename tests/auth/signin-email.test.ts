import assert from "node:assert/strict";
import { SignJWT } from "jose";
import {
  browserSignIn,
  createUser,
  expectError,
  expectJson,
  latestMagicToken,
  setCookies,
  signAsApp,
  signIn,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { sha256Hex } from "../../functions/_shared/crypto.ts";

const t = testApp();
const ORIGIN = "http://localhost:54321";

async function csrfFor(cookies: Record<string, string>) {
  const response = await t.request("GET", "/api/auth/csrf", { cookies });
  return (await expectJson(response, 200)).csrfToken as string;
}

// --- magic links ------------------------------------------------------------------------------

test("[auth] POST /api/auth/signin answers the same for known and unknown addresses", async () => {
  const known = await createUser(t.deps, "MEMBER");
  const a = await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: known.email },
  });
  const b = await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: uniqueEmail() },
  });
  assert.deepEqual(await expectJson(a, 202), { sent: true });
  assert.deepEqual(await expectJson(b, 202), { sent: true });
});

test("[auth] magic-link tokens are stored hashed, never in plain text", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const token = await latestMagicToken(t.deps, email);
  const rows = await t.deps
    .sql`select token_hash from app_private.magic_links where email = ${email}`;
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0].token_hash, token);
  assert.equal(rows[0].token_hash, await sha256Hex(token));
});

test("[auth] the first verified sign-in creates a SUBSCRIBER account with an email identity", async () => {
  const email = uniqueEmail("new");
  const session = await signIn(t, email);
  assert.equal(session.user.email, email);
  assert.equal(session.user.role, "SUBSCRIBER");
  const [identity] = await t.deps.sql`
    select provider from app.identities i join app.users u on u.id = i.user_id where u.email = ${email}`;
  assert.equal(identity.provider, "email");
});

test("[auth] the default role for new accounts comes from the configuration", async () => {
  const [{ version }] = await t.deps.sql`select max(version) as version from app.config_versions`;
  const [{ config }] = await t.deps
    .sql`select config from app.config_versions where version = ${version}`;
  const changed = { ...config, system: { ...(config.system ?? {}), defaultRole: "MEMBER" } };
  await t.deps.sql`insert into app.config_versions (version, config, reason) values (${
    version + 1
  }, ${t.deps.sql.json(changed)}, 'test')`;
  try {
    const session = await signIn(t, uniqueEmail("member-default"));
    assert.equal(session.user.role, "MEMBER");
  } finally {
    await t.deps.sql`delete from app.config_versions where version = ${version + 1}`;
  }
});

test("[auth] a magic link works once", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const token = await latestMagicToken(t.deps, email);
  const first = await t.request("POST", "/api/auth/verify", { body: { token } });
  assert.equal(first.status, 200);
  await expectError(
    await t.request("POST", "/api/auth/verify", { body: { token } }),
    401,
    "unauthenticated",
  );
});

test("[auth] concurrent uses of one magic link open exactly one session", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const token = await latestMagicToken(t.deps, email);
  const results = await Promise.all(
    Array.from({ length: 8 }, () => t.request("POST", "/api/auth/verify", { body: { token } })),
  );
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
  const [{ count }] = await t.deps.sql`
    select count(*)::int from app.sessions s join app.users u on u.id = s.user_id where u.email = ${email}`;
  assert.equal(count, 1);
});

test("[auth] an expired magic link is refused and recorded as a failed sign-in", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const token = await latestMagicToken(t.deps, email);
  await t.deps
    .sql`update app_private.magic_links set expires_at = now() - interval '1 second' where email = ${email}`;
  await expectError(
    await t.request("POST", "/api/auth/verify", { body: { token }, ip: "192.0.2.77" }),
    401,
  );
  const events = await t.deps.sql`
    select type from app.security_events where ip = '192.0.2.77' and type = 'auth.signin_failed'`;
  assert.ok(events.length >= 1);
});

test("[auth] a browser's magic link that fails lands on the sign-in page with what happened (used, expired, malformed, suspended); /verify keeps its JSON errors", async () => {
  /** The callback as a browser opens it: a 303 to /signin?error=<code>, no session, no body. */
  const openLink = async (query: string, error: string) => {
    const response = await t.request("GET", `/api/auth/callback/email${query}`);
    assert.equal(response.status, 303, `${query}: a redirect, got ${response.status}`);
    assert.equal(response.headers.get("location"), `${ORIGIN}/signin?error=${error}`, query);
    assert.equal(response.headers.get("cache-control"), "no-store");
    assert.equal(setCookies(response)["agora-access-token"], undefined, "no session cookie");
    await response.body?.cancel();
  };
  // Used: the first opening signs in, the second lands on the page that offers a new link.
  const email = uniqueEmail("used");
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const token = await latestMagicToken(t.deps, email);
  const first = await t.request("GET", `/api/auth/callback/email?token=${token}`);
  assert.equal(first.status, 303);
  assert.equal(first.headers.get("location"), `${ORIGIN}/`);
  await openLink(`?token=${token}`, "link_invalid");
  // Integrators keep their JSON error for the same token.
  await expectError(
    await t.request("POST", "/api/auth/verify", { body: { token } }),
    401,
    "unauthenticated",
  );

  // Expired, unknown, missing, malformed.
  const late = uniqueEmail("late");
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email: late } });
  const lateToken = await latestMagicToken(t.deps, late);
  await t.deps.sql`
    update app_private.magic_links set expires_at = now() - interval '1 second' where email = ${late}`;
  await openLink(`?token=${lateToken}`, "link_invalid");
  await openLink("?token=never-issued", "link_invalid");
  await openLink("", "link_invalid");
  await openLink(`?token=${"x".repeat(600)}`, "link_invalid");

  // Suspended: the page says so (and shows the support address).
  const user = await createUser(t.deps, "MEMBER");
  await t.deps.sql`update app.users set status = 'suspended' where id = ${user.id}`;
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email: user.email } });
  const suspendedToken = await latestMagicToken(t.deps, user.email);
  await openLink(`?token=${suspendedToken}`, "suspended");
  const [{ n }] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.sessions where user_id = ${user.id}`;
  assert.equal(n, 0, "no session for a suspended account");
});

test("[auth] magic links expire after 15 minutes by default", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const [row] = await t.deps.sql`
    select extract(epoch from expires_at - created_at)::int as ttl from app_private.magic_links where email = ${email}`;
  assert.equal(row.ttl, 900);
});

test("[auth] a suspended user cannot sign in", async () => {
  const user = await createUser(t.deps, "MEMBER");
  await t.deps.sql`update app.users set status = 'suspended' where id = ${user.id}`;
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email: user.email } });
  const token = await latestMagicToken(t.deps, user.email);
  await expectError(
    await t.request("POST", "/api/auth/verify", { body: { token } }),
    403,
    "forbidden",
  );
});

test("[auth] POST /api/auth/signin refuses Google and Apple with 400 provider_disabled while they are not configured", async () => {
  for (const provider of ["google", "apple"]) {
    await expectError(
      await t.request("POST", "/api/auth/signin", { body: { provider } }),
      400,
      "provider_disabled",
    );
  }
  await expectError(
    await t.request("POST", "/api/auth/signin", {
      body: { provider: "wallet", message: "m", signature: "s" },
    }),
    400,
  );
});

test("[auth] redirectTo must be a path or an allow-listed origin", async () => {
  const email = uniqueEmail();
  await expectError(
    await t.request("POST", "/api/auth/signin", {
      body: { provider: "email", email, redirectTo: "https://evil.example/x" },
    }),
    400,
  );
  await expectError(
    await t.request("POST", "/api/auth/signin", {
      body: { provider: "email", email, redirectTo: "//evil.example/x" },
    }),
    400,
  );
  const ok = await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email, redirectTo: "http://app.example.test/welcome" },
  });
  assert.equal(ok.status, 202);
  const token = await latestMagicToken(t.deps, email);
  const callback = await t.request("GET", `/api/auth/callback/email?token=${token}`);
  assert.equal(callback.status, 303);
  assert.equal(callback.headers.get("location"), "http://app.example.test/welcome");
});

test("[auth] redirectTo is judged as the browser will follow it: control characters, backslashes and encoding tricks never leave the allowed origins", async () => {
  // Refused outright (400, no link written): each would lead a browser off the allowed origins,
  // or is not a plain path or http(s) URL.
  const refused = [
    "/\t/evil.example", // the review's finding: browsers drop the tab, leaving //evil.example
    "/\n/evil.example",
    "/\r/evil.example",
    "/\r\n/evil.example",
    "\t//evil.example",
    "/\t\t/evil.example/x?y#z",
    "/\u0000/evil.example",
    "/\u0001/evil.example",
    "/\u001f/evil.example",
    "/\u007f/evil.example",
    "\u0000//evil.example",
    "/\\evil.example",
    "/\\/evil.example",
    "\\\\evil.example",
    "\\/evil.example",
    "//evil.example",
    "///evil.example",
    "////evil.example",
    "//\tevil.example",
    "/ /evil.example",
    " //evil.example",
    " /welcome", // leading space
    "/welcome ", // trailing space
    "\u00a0//evil.example",
    "/\u00a0/evil.example",
    "\u2028//evil.example",
    "\u3000//evil.example",
    "\ufeff//evil.example",
    "/\u200b/evil.example",
    "%2f%2fevil.example",
    "%2F%2Fevil.example",
    "https://evil.example/",
    "http://evil.example",
    "HTTP://EVIL.EXAMPLE/",
    "http:evil.example",
    "http:/evil.example",
    "http:\\\\evil.example",
    "//app.example.test@evil.example/",
    "http://app.example.test@evil.example/",
    "http://app.example.test:80@evil.example/",
    "http://evil.example@app.example.test/", // credentials: refused even on an allowed origin
    "http://user:pass@app.example.test/",
    "http://evil.example\\@app.example.test/",
    "http://evil.example%40app.example.test/",
    "http://app.example.test.evil.example/",
    "http://app.example.test%2eevil.example/",
    "http://evil.example#@app.example.test/",
    "http://evil.example?@app.example.test/",
    "http://app.example.test:8080/",
    "https://app.example.test/",
    "ws://app.example.test/",
    "ftp://app.example.test/",
    "http://\u0430pp.example.test/", // Cyrillic a: a look-alike host (xn--...)
    "http://xn--pp-8cd.example.test/",
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "JAVASCRIPT:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    " javascript:alert(1)",
    "javascript://app.example.test/%0aalert(1)",
    "data:text/html,<script>alert(1)</script>",
    "DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "blob:http://app.example.test/1",
    "file:///etc/passwd",
    "welcome", // not a path
    "evil.example",
    "",
  ];
  for (const redirectTo of refused) {
    const email = uniqueEmail("redirect");
    const response = await t.request("POST", "/api/auth/signin", {
      body: { provider: "email", email, redirectTo },
    });
    await expectError(response, 400, "invalid_request").catch((err) => {
      throw new Error(`${JSON.stringify(redirectTo)}: ${err.message}`);
    });
    const [{ n }] = await t.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app_private.magic_links where email = ${email}`;
    assert.equal(n, 0, `${JSON.stringify(redirectTo)}: no link was written`);
  }

  // Accepted: the 303 goes to exactly this place on an allowed origin.
  const accepted: [string, string][] = [
    ["/welcome", `${ORIGIN}/welcome`],
    ["/welcome?x=1#top", `${ORIGIN}/welcome?x=1#top`],
    ["/%2f%2fevil.example", `${ORIGIN}/%2f%2fevil.example`],
    ["/%09/evil.example", `${ORIGIN}/%09/evil.example`],
    ["/%5cevil.example", `${ORIGIN}/%5cevil.example`],
    ["/.evil.example", `${ORIGIN}/.evil.example`],
    ["/a/../welcome", `${ORIGIN}/welcome`],
    ["http://app.example.test/welcome", "http://app.example.test/welcome"],
    ["HTTP://APP.EXAMPLE.TEST/welcome", "http://app.example.test/welcome"],
    ["http://app.example.test:80/welcome", "http://app.example.test/welcome"],
    ["http://localhost:54321/x", `${ORIGIN}/x`],
    // Ideographic full stops are dots to the URL parser (IDNA), so to browsers: the same host.
    ["http://app\u3002example\u3002test/", "http://app.example.test/"],
  ];
  for (const [redirectTo, expected] of accepted) {
    const email = uniqueEmail("redirect");
    const sent = await t.request("POST", "/api/auth/signin", {
      body: { provider: "email", email, redirectTo },
    });
    assert.equal(sent.status, 202, `${JSON.stringify(redirectTo)}: ${await sent.text()}`);
    const token = await latestMagicToken(t.deps, email);
    const callback = await t.request("GET", `/api/auth/callback/email?token=${token}`);
    assert.equal(callback.status, 303);
    const location = callback.headers.get("location")!;
    assert.equal(location, expected, JSON.stringify(redirectTo));
    // What a browser makes of the header is what was checked.
    assert.ok(
      ["http://app.example.test", ORIGIN].includes(new URL(location, ORIGIN).origin),
      location,
    );
  }
});

// --- cookies ----------------------------------------------------------------------------------

test("[auth] the callback sets httpOnly SameSite=Lax cookies, without Secure on local http", async () => {
  const { attributes, response } = await browserSignIn(t);
  assert.equal(response.headers.get("location"), `${ORIGIN}/`);
  for (const name of ["agora-access-token", "agora-refresh-token"]) {
    const cookie = attributes[name];
    assert.ok(cookie, `${name} is set`);
    assert.match(cookie.attributes, /HttpOnly/i);
    assert.match(cookie.attributes, /SameSite=Lax/i);
    assert.match(cookie.attributes, /Path=\//);
    assert.doesNotMatch(cookie.attributes, /Secure/i);
  }
  assert.doesNotMatch(attributes["agora-csrf"].attributes, /HttpOnly/i);
});

test("[auth] cookies are Secure when the site is not local http", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const token = await latestMagicToken(t.deps, email);
  const response = await t.app.request(
    `https://agora.example.test/api/auth/callback/email?token=${token}`,
  );
  assert.equal(response.status, 303);
  const cookies = setCookies(response);
  assert.match(cookies["agora-access-token"].attributes, /Secure/);
  assert.match(cookies["agora-refresh-token"].attributes, /Secure/);
});

test("[auth] GET /api/auth/session reads the session from cookies", async () => {
  const email = uniqueEmail();
  const { cookies } = await browserSignIn(t, email);
  const response = await t.request("GET", "/api/auth/session", { cookies });
  const body = await expectJson(response, 200);
  assert.equal(body.user.email, email);
  assert.equal(body.user.role, "SUBSCRIBER");
  assert.ok(Date.parse(body.expiresAt) > Date.now());
});

test("[auth] GET /api/auth/session answers { user: null } when signed out", async () => {
  const response = await t.request("GET", "/api/auth/session");
  assert.deepEqual(await expectJson(response, 200), { user: null, expiresAt: null });
});

test("[auth] an expired access cookie is refreshed by the middleware while the refresh cookie is valid", async () => {
  const email = uniqueEmail();
  const { cookies } = await browserSignIn(t, email);
  const claims = JSON.parse(
    atob(cookies["agora-access-token"].split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
  );
  const expired = await signAsApp(t, { ...claims, exp: Math.floor(Date.now() / 1000) - 5 });
  assert.equal(await t.deps.tokens.verify(expired), null, "the crafted token is expired");
  const response = await t.request("GET", "/api/auth/session", {
    cookies: { ...cookies, "agora-access-token": expired },
  });
  assert.equal((await expectJson(response, 200)).user.email, email);
  const renewed = setCookies(response);
  assert.ok(renewed["agora-access-token"].value && renewed["agora-access-token"].value !== expired);
  assert.notEqual(renewed["agora-refresh-token"].value, cookies["agora-refresh-token"]);
});

test("[auth] POST /api/auth/refresh with an expired access cookie refreshes once: the refresh token is spent once", async () => {
  // Without a grace period a second rotation of the same token would count as reuse.
  const strict = testApp({ AGORA_REFRESH_GRACE_SECONDS: "0" });
  const email = uniqueEmail();
  const { cookies } = await browserSignIn(strict, email);
  const csrf = cookies["agora-csrf"];
  const [{ session_id: sessionId }] = await strict.deps.sql<{ session_id: string }[]>`
    select rt.session_id from app_private.refresh_tokens rt
    where rt.token_hash = ${await sha256Hex(cookies["agora-refresh-token"])}`;
  const response = await strict.request("POST", "/api/auth/refresh", {
    // The access cookie has expired (the browser dropped it): only the refresh cookie is sent.
    cookies: { "agora-refresh-token": cookies["agora-refresh-token"], "agora-csrf": csrf },
    headers: { origin: ORIGIN, "x-csrf-token": csrf },
  });
  assert.equal(response.status, 200, await response.clone().text());
  const body = await response.json();
  assert.equal(body.user.email, email);
  assert.equal(body.refreshToken, undefined, "browsers get the tokens in cookies only");
  assert.ok(
    response.headers.get("ratelimit-remaining"),
    "the answer carries the refresh group's headers",
  );
  const renewed = setCookies(response);
  assert.equal(
    response.headers.getSetCookie().filter((c) => c.startsWith("agora-refresh-token=")).length,
    1,
    "one new refresh cookie",
  );
  const tokens = await strict.deps.sql<{ spent: boolean }[]>`
    select spent_at is not null as spent from app_private.refresh_tokens
    where session_id = ${sessionId} order by id`;
  assert.deepEqual(
    tokens.map((r) => r.spent),
    [true, false],
    "one rotation: the old token spent once",
  );
  const [{ hits }] = await strict.deps.sql<{ hits: number }[]>`
    select coalesce(sum(hits), 0)::int as hits from app_private.rate_limits
    where bucket = ${`refresh:session:${sessionId}`}`;
  assert.equal(hits, 1, "counted once against the refresh limit");
  const [{ revoked }] = await strict.deps.sql<{ revoked: boolean }[]>`
    select revoked_at is not null as revoked from app.sessions where id = ${sessionId}`;
  assert.equal(revoked, false, "the session lives on");
  const next = await strict.request("GET", "/api/auth/session", {
    cookies: { "agora-refresh-token": renewed["agora-refresh-token"].value },
  });
  assert.equal((await next.json()).user?.email, email, "the new refresh cookie works");
});

test("[auth] answers carrying tokens are never stored by caches (RFC 6749 5.1): verify, refresh, callback", async () => {
  const email = uniqueEmail();
  await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  const verify = await t.request("POST", "/api/auth/verify", {
    body: { token: await latestMagicToken(t.deps, email) },
  });
  assert.equal(verify.status, 200);
  const session = await verify.json();
  const refresh = await t.request("POST", "/api/auth/refresh", {
    body: { refreshToken: session.refreshToken },
  });
  assert.equal(refresh.status, 200);
  await refresh.body?.cancel();
  const { response: callback, cookies } = await browserSignIn(t);
  const csrf = cookies["agora-csrf"];
  const byCookie = await t.request("POST", "/api/auth/refresh", {
    cookies: { "agora-refresh-token": cookies["agora-refresh-token"], "agora-csrf": csrf },
    headers: { origin: ORIGIN, "x-csrf-token": csrf },
  });
  assert.equal(byCookie.status, 200);
  await byCookie.body?.cancel();
  // Any answer that sets refreshed token cookies, even one cacheable otherwise.
  const refreshedCookies = setCookies(byCookie);
  const automatic = await t.request("GET", "/api/config/public", {
    cookies: { "agora-refresh-token": refreshedCookies["agora-refresh-token"].value },
  });
  assert.equal(automatic.status, 200);
  assert.ok(setCookies(automatic)["agora-access-token"], "the middleware refreshed");
  await automatic.body?.cancel();
  for (
    const [name, response] of [
      ["verify", verify],
      ["refresh", refresh],
      ["callback", callback],
      ["refresh by cookie", byCookie],
      ["an automatic refresh", automatic],
    ] as const
  ) {
    assert.equal(response.headers.get("cache-control"), "no-store", name);
    assert.equal(response.headers.get("pragma"), "no-cache", name);
  }
});

// --- CSRF -------------------------------------------------------------------------------------

test("[auth] a cookie-authenticated unsafe request without X-CSRF-Token is refused and changes nothing", async () => {
  const { cookies } = await browserSignIn(t);
  const refused = await t.request("POST", "/api/auth/signout", {
    cookies,
    headers: { origin: ORIGIN },
  });
  await expectError(refused, 403, "forbidden");
  const still = await t.request("GET", "/api/auth/session", { cookies });
  assert.notEqual((await expectJson(still, 200)).user, null, "the session is still alive");
});

test("[auth] a wrong CSRF token or a foreign Origin is refused", async () => {
  const { cookies } = await browserSignIn(t);
  const csrf = await csrfFor(cookies);
  await expectError(
    await t.request("POST", "/api/auth/signout", {
      cookies,
      headers: { origin: ORIGIN, "x-csrf-token": "nope" },
    }),
    403,
  );
  await expectError(
    await t.request("POST", "/api/auth/signout", {
      cookies,
      headers: { origin: "https://evil.example", "x-csrf-token": csrf },
    }),
    403,
  );
  await expectError(
    await t.request("POST", "/api/auth/signout", { cookies, headers: { "x-csrf-token": csrf } }),
    403,
    "forbidden",
  );
  const [event] = await t.deps.sql`
    select count(*)::int as n from app.security_events where type = 'auth.csrf_rejected'`;
  assert.ok(event.n >= 3);
});

test("[auth] the CSRF token of another session is refused", async () => {
  const mine = await browserSignIn(t);
  const theirs = await browserSignIn(t);
  const theirCsrf = await csrfFor(theirs.cookies);
  await expectError(
    await t.request("POST", "/api/auth/signout", {
      cookies: mine.cookies,
      headers: { origin: ORIGIN, "x-csrf-token": theirCsrf },
    }),
    403,
  );
});

test("[auth] with the session's CSRF token and an allowed Origin, signout by cookie works and clears cookies", async () => {
  const { cookies } = await browserSignIn(t);
  const csrf = await csrfFor(cookies);
  const response = await t.request("POST", "/api/auth/signout", {
    cookies,
    headers: { origin: "http://app.example.test", "x-csrf-token": csrf },
  });
  assert.deepEqual(await expectJson(response, 200), { signedOut: true });
  const cleared = setCookies(response);
  assert.equal(cleared["agora-access-token"].value, "");
  const after = await t.request("GET", "/api/auth/session", { cookies });
  assert.equal((await expectJson(after, 200)).user, null);
});

test("[auth] bearer requests need no CSRF token", async () => {
  const session = await signInAs(t, "SUBSCRIBER");
  const response = await t.request("POST", "/api/auth/signout", {
    token: session.accessToken,
    headers: { origin: "https://evil.example" },
  });
  assert.equal(response.status, 200);
});

// --- refresh ----------------------------------------------------------------------------------

test("[auth] POST /api/auth/refresh rotates the refresh token", async () => {
  const session = await signInAs(t, "MEMBER");
  const response = await t.request("POST", "/api/auth/refresh", {
    body: { refreshToken: session.refreshToken },
  });
  const next = await expectJson(response, 200);
  assert.notEqual(next.refreshToken, session.refreshToken);
  assert.equal(next.user.id, session.user.id);
  const again = await t.request("POST", "/api/auth/refresh", {
    body: { refreshToken: next.refreshToken },
  });
  assert.equal(again.status, 200);
});

test("[auth] reusing a spent refresh token revokes the whole session", async () => {
  const strict = testApp({ AGORA_REFRESH_GRACE_SECONDS: "0" });
  const session = await signInAs(strict, "MEMBER");
  const rotated = await expectJson(
    await strict.request("POST", "/api/auth/refresh", {
      body: { refreshToken: session.refreshToken },
    }),
    200,
  );
  await expectError(
    await strict.request("POST", "/api/auth/refresh", {
      body: { refreshToken: session.refreshToken },
      ip: "192.0.2.55",
    }),
    401,
  );
  // The thief's reuse killed the legitimate holder's tokens too.
  await expectError(
    await strict.request("POST", "/api/auth/refresh", {
      body: { refreshToken: rotated.refreshToken },
    }),
    401,
  );
  const me = await strict.request("GET", "/api/auth/session", { token: rotated.accessToken });
  assert.equal((await expectJson(me, 200)).user, null);
  const [event] = await strict.deps.sql`
    select severity from app.security_events where type = 'auth.refresh_token_reuse' and user_id = ${session.user.id}`;
  assert.equal(event.severity, "critical");
});

test("[auth] within the grace period the immediate parent gets the same successor, concurrently too", async () => {
  const session = await signInAs(t, "MEMBER");
  const answers = await Promise.all(
    Array.from(
      { length: 4 },
      () =>
        t.request("POST", "/api/auth/refresh", { body: { refreshToken: session.refreshToken } }),
    ),
  );
  const tokens = new Set(
    await Promise.all(answers.map(async (r) => (await expectJson(r, 200)).refreshToken)),
  );
  assert.equal(tokens.size, 1, "every concurrent refresh got the same successor");
  const [successor] = [...tokens];
  const grandchild = await t.request("POST", "/api/auth/refresh", {
    body: { refreshToken: successor },
  });
  assert.equal(grandchild.status, 200);
  // The grandparent is no longer the immediate parent of the live token: reuse.
  await expectError(
    await t.request("POST", "/api/auth/refresh", { body: { refreshToken: session.refreshToken } }),
    401,
  );
});

test("[auth] an unknown refresh token is refused", async () => {
  await expectError(
    await t.request("POST", "/api/auth/refresh", { body: { refreshToken: "not-a-token" } }),
    401,
  );
  await expectError(await t.request("POST", "/api/auth/refresh", { body: {} }), 401);
});

// --- signout and revocation -------------------------------------------------------------------

test("[auth] signout kills the same access token at once, before it expires", async () => {
  const session = await signInAs(t, "ADMIN");
  assert.equal(
    (await t.request("GET", "/api/admin/users?limit=1", { token: session.accessToken })).status,
    200,
  );
  const out = await t.request("POST", "/api/auth/signout", { token: session.accessToken });
  assert.equal(out.status, 200);
  assert.ok(Date.parse(session.expiresAt) > Date.now(), "the token itself has not expired");
  await expectError(
    await t.request("GET", "/api/admin/users?limit=1", { token: session.accessToken }),
    401,
  );
  assert.equal(
    (await expectJson(
      await t.request("GET", "/api/auth/session", { token: session.accessToken }),
      200,
    ))
      .user,
    null,
  );
  await expectError(
    await t.request("POST", "/api/auth/refresh", { body: { refreshToken: session.refreshToken } }),
    401,
  );
  await expectError(
    await t.request("POST", "/api/auth/signout", { token: session.accessToken }),
    401,
  );
});

test("[auth] signout revokes only that session", async () => {
  const user = await createUser(t.deps, "MEMBER");
  const first = await signIn(t, user.email);
  const second = await signIn(t, user.email);
  await t.request("POST", "/api/auth/signout", { token: first.accessToken });
  const alive = await t.request("GET", "/api/auth/session", { token: second.accessToken });
  assert.equal((await expectJson(alive, 200)).user.id, user.id);
});

test("[auth] a suspended user is refused at once", async () => {
  const session = await signInAs(t, "ADMIN");
  await t.deps.sql`update app.users set status = 'suspended' where id = ${session.user.id}`;
  await expectError(
    await t.request("GET", "/api/admin/config", { token: session.accessToken }),
    401,
  );
  assert.equal(
    (await expectJson(
      await t.request("GET", "/api/auth/session", { token: session.accessToken }),
      200,
    ))
      .user,
    null,
  );
});

test("[auth] a token signed with another secret is refused", async () => {
  const forged = await new SignJWT({ role: "authenticated", session_id: crypto.randomUUID() })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(crypto.randomUUID())
    .setAudience("authenticated")
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode("x".repeat(40)));
  await expectError(await t.request("GET", "/api/admin/users", { token: forged }), 401);
});

// --- rate limits ------------------------------------------------------------------------------

test("[auth] sign-in requests per address are rate-limited with 429, Retry-After and RateLimit headers", async () => {
  const limited = testApp({ AGORA_RATE_SIGNIN_EMAIL: "2/600" });
  const email = uniqueEmail("limited");
  for (let i = 0; i < 2; i++) {
    assert.equal(
      (await limited.request("POST", "/api/auth/signin", { body: { provider: "email", email } }))
        .status,
      202,
    );
  }
  const refused = await limited.request("POST", "/api/auth/signin", {
    body: { provider: "email", email },
  });
  await expectError(refused, 429, "rate_limited");
  const retryAfter = Number(refused.headers.get("retry-after"));
  assert.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After ${retryAfter}`);
  assert.equal(refused.headers.get("ratelimit-limit"), "2");
  assert.equal(refused.headers.get("ratelimit-remaining"), "0");
  assert.ok(Number(refused.headers.get("ratelimit-reset")) > 0);
  const [{ n }] = await limited.deps
    .sql`select count(*)::int as n from dev.mail where to_address = ${email}`;
  assert.equal(n, 2, "no mail went out for the refused request");
});

test("[auth] sign-in requests per IP and verification attempts per IP are rate-limited", async () => {
  const limited = testApp({ AGORA_RATE_SIGNIN_IP: "3/600", AGORA_RATE_VERIFY_IP: "2/600" });
  const ip = `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
  const statuses = [];
  for (let i = 0; i < 4; i++) {
    const r = await limited.request("POST", "/api/auth/signin", {
      body: { provider: "email", email: uniqueEmail() },
      ip,
    });
    statuses.push(r.status);
  }
  assert.deepEqual(statuses, [202, 202, 202, 429]);
  const verifies = [];
  for (let i = 0; i < 3; i++) {
    verifies.push(
      (await limited.request("POST", "/api/auth/verify", { body: { token: "guess" }, ip })).status,
    );
  }
  assert.deepEqual(verifies, [401, 401, 429]);
  const [{ n }] = await limited.deps.sql`
    select count(*)::int as n from app.security_events where type = 'rate_limit.exceeded' and ip = ${ip}::inet`;
  assert.equal(n, 2);
});

test("[auth] refreshes per session are rate-limited", async () => {
  const limited = testApp({ AGORA_RATE_REFRESH_SESSION: "2/600" });
  let session = await signInAs(limited, "MEMBER");
  for (let i = 0; i < 2; i++) {
    const r = await limited.request("POST", "/api/auth/refresh", {
      body: { refreshToken: session.refreshToken },
    });
    session = await expectJson(r, 200);
  }
  await expectError(
    await limited.request("POST", "/api/auth/refresh", {
      body: { refreshToken: session.refreshToken },
    }),
    429,
  );
});

test("[auth] rate limits hold across instances (they live in Postgres)", async () => {
  const env = { AGORA_RATE_SIGNIN_EMAIL: "3/600" };
  const instances = [testApp(env), testApp(env), testApp(env)];
  const email = uniqueEmail("shared");
  const statuses = await Promise.all(
    Array.from(
      { length: 6 },
      (_, i) =>
        instances[i % 3].request("POST", "/api/auth/signin", { body: { provider: "email", email } })
          .then((r) => r.status),
    ),
  );
  assert.equal(statuses.filter((s) => s === 202).length, 3);
  assert.equal(statuses.filter((s) => s === 429).length, 3);
});

// --- CSRF endpoint and security events --------------------------------------------------------

test("[auth] GET /api/auth/csrf is bound to the session", async () => {
  const a = await browserSignIn(t);
  const first = await csrfFor(a.cookies);
  const second = await csrfFor(a.cookies);
  assert.equal(first, second);
  const b = await browserSignIn(t);
  assert.notEqual(await csrfFor(b.cookies), first);
});

test("[auth] sign-in and signout are recorded as security events with ip and user agent", async () => {
  const session = await signInAs(t, "MEMBER");
  await t.request("POST", "/api/auth/signout", {
    token: session.accessToken,
    headers: { "user-agent": "agora-test/1" },
  });
  const events = await t.deps.sql<{ type: string; ip: string; user_agent: string | null }[]>`
    select type, host(ip) as ip, user_agent from app.security_events where user_id = ${session.user.id} order by id`;
  assert.deepEqual(events.map((e) => e.type), ["auth.signin", "auth.signout"]);
  assert.equal(events[1].ip, "127.0.0.1");
  assert.equal(events[1].user_agent, "agora-test/1");
});
