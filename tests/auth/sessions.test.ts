/**
 * A user's sessions: the list, ending one or all others at once (ASVS 7.5.2: the ended session's
 * token is refused on the next request, its SSE stream closes at the next heartbeat, its
 * long-poll is refused), `auth_time` and `amr` in the access token (a refresh keeps them), and
 * the one freshness check.
 */
import assert from "node:assert/strict";
import { decodeJwt } from "jose";
import {
  browserSignIn,
  expectError,
  expectJson,
  latestMagicToken,
  setCookies,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse } from "../realtime/sse-client.ts";

const t = testApp({ AGORA_SSE_HEARTBEAT_MS: "300" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;

/** The same person signed in `n` times (n devices), each with its own user agent. */
async function devices(n: number): Promise<SignedIn[]> {
  const email = uniqueEmail("devices");
  const out: SignedIn[] = [];
  for (let i = 0; i < n; i++) {
    await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
    const token = await latestMagicToken(t.deps, email);
    out.push(
      await expectJson(
        await t.request("POST", "/api/auth/verify", {
          body: { token },
          headers: { "user-agent": `device-${i}` },
          ip: `198.51.100.${i + 1}`,
        }),
        200,
      ),
    );
  }
  return out;
}

const sessionIdOf = (s: SignedIn) => decodeJwt(s.accessToken).session_id as string;

async function whoAmI(token: string) {
  return (await expectJson(await t.request("GET", "/api/auth/session", { token }), 200)).user;
}

test("[sessions] GET /api/auth/sessions lists the caller's live sessions, newest first, the current one marked", async () => {
  const [a, b, c] = await devices(3);
  const list = await expectJson(
    await t.request("GET", "/api/auth/sessions", { token: b.accessToken }),
    200,
  );
  assert.deepEqual(list.items.map((s: { id: string }) => s.id), [c, b, a].map(sessionIdOf));
  assert.deepEqual(list.items.map((s: { current: boolean }) => s.current), [false, true, false]);
  const item = list.items[2];
  assert.equal(item.provider, "email");
  assert.equal(item.ip, "198.51.100.1");
  assert.equal(item.userAgent, "device-0");
  for (const key of ["createdAt", "lastSeenAt", "authenticatedAt", "expiresAt"]) {
    assert.ok(!Number.isNaN(Date.parse(item[key])), key);
  }
  assert.equal(list.nextCursor, null);
  // Nothing secret in it.
  assert.ok(!JSON.stringify(list).includes(a.refreshToken));

  // Another user sees only their own.
  const stranger = await signInAs(t, "MEMBER");
  const theirs = await expectJson(
    await t.request("GET", "/api/auth/sessions", { token: stranger.accessToken }),
    200,
  );
  assert.deepEqual(theirs.items.map((s: { id: string }) => s.id), [sessionIdOf(stranger)]);
});

test("[sessions] DELETE /api/auth/sessions/:id ends that session at once; the others go on", async () => {
  const [a, b] = await devices(2);
  const answer = await expectJson(
    await t.request("DELETE", `/api/auth/sessions/${sessionIdOf(a)}`, { token: b.accessToken }),
    200,
  );
  assert.equal(answer.id, sessionIdOf(a));
  assert.ok(Date.now() - Date.parse(answer.revokedAt) < 60_000);
  // The ended session's token is refused on the very next request; its refresh token too.
  assert.equal(await whoAmI(a.accessToken), null);
  await expectError(
    await t.request("GET", "/api/auth/sessions", { token: a.accessToken }),
    401,
    "unauthenticated",
  );
  await expectError(
    await t.request("POST", "/api/auth/refresh", { body: { refreshToken: a.refreshToken } }),
    401,
  );
  assert.ok(await whoAmI(b.accessToken));
  const list = await expectJson(
    await t.request("GET", "/api/auth/sessions", { token: b.accessToken }),
    200,
  );
  assert.deepEqual(list.items.map((s: { id: string }) => s.id), [sessionIdOf(b)]);
  // Ending it again answers when it ended; the event was recorded once.
  const again = await expectJson(
    await t.request("DELETE", `/api/auth/sessions/${sessionIdOf(a)}`, { token: b.accessToken }),
    200,
  );
  assert.equal(again.revokedAt, answer.revokedAt);
  const events = await t.deps.sql`
    select details from app.security_events where type = 'auth.session_revoked'
      and details ->> 'sessionId' = ${sessionIdOf(a)}`;
  assert.equal(events.length, 1);
});

test("[sessions] another user's session is 404 and stays live", async () => {
  const [mine] = await devices(1);
  const other = await signInAs(t, "MEMBER");
  await expectError(
    await t.request("DELETE", `/api/auth/sessions/${sessionIdOf(other)}`, {
      token: mine.accessToken,
    }),
    404,
    "not_found",
  );
  assert.ok(await whoAmI(other.accessToken));
});

test("[sessions] DELETE /api/auth/sessions/:id of another user's live session is 404 for an ADMIN too, and it stays live", async () => {
  // An ADMIN may read every session (RLS), but ends other people's through
  // POST /api/admin/users/:id/signout; this route is for one's own.
  const admin = await signInAs(t, "ADMIN");
  const other = await signInAs(t, "MEMBER");
  await expectError(
    await t.request("DELETE", `/api/auth/sessions/${sessionIdOf(other)}`, {
      token: admin.accessToken,
    }),
    404,
    "not_found",
  );
  assert.ok(await whoAmI(other.accessToken), "the other user's session still works");
  const [row] = await t.deps.sql<{ revoked_at: Date | null }[]>`
    select revoked_at from app.sessions where id = ${sessionIdOf(other)}`;
  assert.equal(row.revoked_at, null, "nothing was written");
});

test("[sessions] DELETE /api/auth/sessions?scope=others ends every other session and answers how many", async () => {
  const [a, b, c] = await devices(3);
  const answer = await expectJson(
    await t.request("DELETE", "/api/auth/sessions?scope=others", { token: b.accessToken }),
    200,
  );
  assert.deepEqual(answer, { revoked: 2 });
  assert.equal(await whoAmI(a.accessToken), null);
  assert.equal(await whoAmI(c.accessToken), null);
  assert.ok(await whoAmI(b.accessToken));
  assert.deepEqual(
    await expectJson(
      await t.request("DELETE", "/api/auth/sessions?scope=others", { token: b.accessToken }),
      200,
    ),
    { revoked: 0 },
  );
  await expectError(
    await t.request("DELETE", "/api/auth/sessions", { token: b.accessToken }),
    400,
    "invalid_request",
  );
  await expectError(
    await t.request("DELETE", "/api/auth/sessions?scope=all", { token: b.accessToken }),
    400,
  );
});

test("[sessions] ending the current session by cookie clears the cookies", async () => {
  const { cookies } = await browserSignIn(t, uniqueEmail("cookie"));
  const me = await expectJson(await t.request("GET", "/api/auth/session", { cookies }), 200);
  const sessionId = decodeJwt(cookies["agora-access-token"]).session_id;
  // By cookie, the CSRF check applies: without the token, refused.
  await expectError(
    await t.request("DELETE", `/api/auth/sessions/${sessionId}`, { cookies }),
    403,
    "forbidden",
  );
  const response = await t.request("DELETE", `/api/auth/sessions/${sessionId}`, {
    cookies,
    headers: { origin: "http://localhost:54321", "x-csrf-token": cookies["agora-csrf"] },
  });
  await expectJson(response, 200);
  const cleared = setCookies(response);
  assert.match(cleared["agora-access-token"].attributes, /Max-Age=0/i);
  assert.ok(me.user);
  assert.equal(
    (await expectJson(await t.request("GET", "/api/auth/session", { cookies }), 200)).user,
    null,
  );
});

test("[sessions] an ended session's SSE stream closes at the next heartbeat and its long-poll is refused", async () => {
  const [a, b] = await devices(2);
  const stream = await openSse(`${base}/api/realtime/sse?topics=user:${a.user.id}`, {
    authorization: `Bearer ${a.accessToken}`,
  });
  assert.equal((await stream.next())?.event, "ready");
  await expectJson(
    await t.request("DELETE", `/api/auth/sessions/${sessionIdOf(a)}`, { token: b.accessToken }),
    200,
  );
  assert.equal(await stream.next(3_000), null, "the stream ended");
  stream.close();
  await expectError(
    await t.request("GET", `/api/realtime/poll?topics=user:${a.user.id}&timeout=0`, {
      token: a.accessToken,
    }),
    401,
  );
  // The session left alive still reads its topic.
  const poll = await t.request("GET", `/api/realtime/poll?topics=user:${b.user.id}&timeout=0`, {
    token: b.accessToken,
  });
  await expectJson(poll, 200);
});

test("[sessions] the access token carries auth_time and amr; a refresh keeps auth_time", async () => {
  const session = await signIn(t, uniqueEmail("authtime"));
  const first = decodeJwt(session.accessToken);
  assert.deepEqual(first.amr, ["email"]);
  assert.equal(typeof first.auth_time, "number");
  // Move the sign-in into the past, as if it happened an hour ago; refresh.
  await t.deps.sql`
    update app.sessions set authenticated_at = now() - interval '1 hour' where id = ${first
    .session_id as string}`;
  const refreshed = await expectJson(
    await t.request("POST", "/api/auth/refresh", { body: { refreshToken: session.refreshToken } }),
    200,
  );
  const second = decodeJwt(refreshed.accessToken);
  assert.deepEqual(second.amr, ["email"]);
  assert.ok(
    Math.abs((second.auth_time as number) - (Date.now() / 1000 - 3600)) < 5,
    "auth_time is the sign-in's, not the refresh's",
  );
  assert.ok((second.iat as number) > (second.auth_time as number) + 3000);
});
