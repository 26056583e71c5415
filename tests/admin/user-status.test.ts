/**
 * Suspension, reactivation and ending every session of a user, by an ADMIN
 * (PUT /api/admin/users/:id/status, POST /api/admin/users/:id/signout): effective at once, recorded
 * with the change in one transaction, and safe under concurrency (the races are forced with real
 * row locks held by another transaction, as in role-change-races.test.ts).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  createUser,
  expectError,
  expectJson,
  latestMagicToken,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse } from "../realtime/sse-client.ts";

const t = testApp({ AGORA_SSE_HEARTBEAT_MS: "300" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;
const blocker = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 2, onnotice: () => {} });
const admin = await signInAs(t, "ADMIN");

function setStatus(by: SignedIn, userId: string, status: string, reason = "test", ip?: string) {
  return t.request("PUT", `/api/admin/users/${userId}/status`, {
    token: by.accessToken,
    body: { status, reason },
    ip,
  });
}

async function statusOf(userId: string): Promise<string> {
  const [row] = await t.deps.sql`select status from app.users where id = ${userId}`;
  return row.status;
}

async function whoAmI(token: string) {
  return (await expectJson(await t.request("GET", "/api/auth/session", { token }), 200)).user;
}

test("[admin] suspending a user ends every session at once, with the change, its history and its event in one go", async () => {
  const member = await signInAs(t, "MEMBER");
  const second = await signIn(t, member.user.email);
  const stream = await openSse(`${base}/api/realtime/sse?topics=user:${member.user.id}`, {
    authorization: `Bearer ${member.accessToken}`,
  });
  assert.equal((await stream.next())?.event, "ready");

  const body = await expectJson(
    await setStatus(admin, member.user.id, "suspended", "spam", "203.0.113.50"),
    200,
  );
  assert.equal(body.user.id, member.user.id);
  assert.equal(body.user.status, "suspended");
  assert.deepEqual(
    { ...body.change, changedAt: undefined },
    {
      previousStatus: "active",
      newStatus: "suspended",
      changedBy: admin.user.id,
      changedAt: undefined,
      reason: "spam",
      sessionsRevoked: 2,
    },
  );

  // At once: both sessions' tokens, the refresh token, the stream.
  assert.equal(await whoAmI(member.accessToken), null);
  assert.equal(await whoAmI(second.accessToken), null);
  await expectError(
    await t.request("POST", "/api/auth/refresh", { body: { refreshToken: second.refreshToken } }),
    401,
  );
  assert.equal(await stream.next(3_000), null, "the SSE stream ended");
  stream.close();
  // Signing in again is refused while suspended.
  await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: member.user.email },
  });
  await expectError(
    await t.request("POST", "/api/auth/verify", {
      body: { token: await latestMagicToken(t.deps, member.user.email) },
    }),
    403,
  );

  const [history] = await t.deps.sql`
    select previous_status, new_status, changed_by, reason, sessions_revoked
    from app.status_changes where user_id = ${member.user.id}`;
  assert.deepEqual({ ...history }, {
    previous_status: "active",
    new_status: "suspended",
    changed_by: admin.user.id,
    reason: "spam",
    sessions_revoked: 2,
  });
  const [event] = await t.deps.sql`
    select severity, host(ip) as ip, details from app.security_events
    where type = 'admin.user_suspended' and user_id = ${member.user.id}`;
  assert.equal(event.severity, "warning");
  assert.equal(event.ip, "203.0.113.50");
  assert.deepEqual(event.details, {
    by: admin.user.id,
    from: "active",
    to: "suspended",
    reason: "spam",
    sessionsRevoked: 2,
  });
  const revoked = await t.deps.sql`
    select revoked_reason from app.sessions where user_id = ${member.user.id} and revoked_at is not null`;
  assert.deepEqual(revoked.map((r) => r.revoked_reason), ["suspended", "suspended"]);
});

test("[admin] reactivating lets the user sign in again; recorded as admin.user_reactivated", async () => {
  const member = await signInAs(t, "MEMBER");
  await expectJson(await setStatus(admin, member.user.id, "suspended"), 200);
  const body = await expectJson(
    await setStatus(admin, member.user.id, "active", "appeal granted"),
    200,
  );
  assert.equal(body.change.previousStatus, "suspended");
  assert.equal(body.change.newStatus, "active");
  assert.equal(body.change.sessionsRevoked, 0);
  const again = await signIn(t, member.user.email);
  assert.equal(again.user.id, member.user.id);
  const [event] = await t.deps.sql`
    select severity from app.security_events where type = 'admin.user_reactivated' and user_id = ${member.user.id}`;
  assert.equal(event.severity, "info");
});

test("[admin] status refusals: one's own (422), no reason (400), an unknown user (404); the same status records nothing", async () => {
  await expectError(await setStatus(admin, admin.user.id, "suspended"), 422, "unprocessable");
  const member = await createUser(t.deps, "MEMBER");
  await expectError(await setStatus(admin, member.id, "suspended", " "), 400);
  await expectError(await setStatus(admin, crypto.randomUUID(), "suspended"), 404, "not_found");
  await expectError(await setStatus(admin, member.id, "banned"), 400);
  const same = await expectJson(await setStatus(admin, member.id, "active"), 200);
  assert.equal(same.change.previousStatus, "active");
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.status_changes where user_id = ${member.id}`;
  assert.equal(n, 0);
  assert.equal(await statusOf(member.id), "active");
});

test("[admin] a non-ADMIN cannot suspend anyone or end their sessions (403)", async () => {
  const member = await signInAs(t, "CONFIDENTIAL");
  const target = await createUser(t.deps, "MEMBER");
  await expectError(await setStatus(member, target.id, "suspended"), 403, "forbidden");
  await expectError(
    await t.request("POST", `/api/admin/users/${target.id}/signout`, { token: member.accessToken }),
    403,
  );
  assert.equal(await statusOf(target.id), "active");
});

test("[admin] POST /api/admin/users/:id/signout ends every session of the user; they may sign in again", async () => {
  const member = await signInAs(t, "MEMBER");
  const second = await signIn(t, member.user.email);
  const body = await expectJson(
    await t.request("POST", `/api/admin/users/${member.user.id}/signout`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.deepEqual(body, { revoked: 2 });
  assert.equal(await whoAmI(member.accessToken), null);
  assert.equal(await whoAmI(second.accessToken), null);
  assert.equal(await statusOf(member.user.id), "active");
  const again = await signIn(t, member.user.email);
  assert.ok(await whoAmI(again.accessToken));
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'admin.sessions_revoked' and user_id = ${member.user.id}`;
  assert.deepEqual(event.details, { by: admin.user.id, sessionsRevoked: 2 });
  await expectError(
    await t.request("POST", `/api/admin/users/${crypto.randomUUID()}/signout`, {
      token: admin.accessToken,
    }),
    404,
  );
});

// --- races -----------------------------------------------------------------------------------------

async function waiting(n: number, fn: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [{ count }] = await blocker<{ count: number }[]>`
      select count(*)::int from pg_stat_activity
      where application_name = 'agora-api' and wait_event_type = 'Lock' and query ilike ${`%${fn}%`}`;
    if (count >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${n} calls of ${fn} never waited on a lock`);
}

test("[admin] two admins suspending each other at once: one suspension commits with its record, the other is refused and changes nothing", async () => {
  for (let round = 0; round < 3; round++) {
    const a = await signInAs(t, "ADMIN");
    const b = await signInAs(t, "ADMIN");
    let release!: () => void;
    const held = new Promise<void>((r) => release = r);
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => locked = r);
    const holder = blocker.begin(async (tx) => {
      await tx`select 1 from app.users where id in (${a.user.id}, ${b.user.id}) for update`;
      locked();
      await held;
    });
    await isLocked;
    const answers = Promise.all([
      setStatus(a, b.user.id, "suspended", "suspend b"),
      setStatus(b, a.user.id, "suspended", "suspend a"),
    ]);
    await waiting(2, "change_user_status").finally(release);
    await holder;
    const [toB, toA] = await answers;
    const texts = [await toB.text(), await toA.text()];
    assert.deepEqual([toB.status, toA.status].sort(), [200, 403], texts.join(" / "));
    const [winner, loser] = toB.status === 200 ? [a, b] : [b, a];
    assert.equal(await statusOf(loser.user.id), "suspended");
    assert.equal(await statusOf(winner.user.id), "active", "the refused change changed nothing");
    const [{ changes, events }] = await t.deps.sql`
      select (select count(*)::int from app.status_changes where user_id = ${winner.user.id}) as changes,
             (select count(*)::int from app.security_events
              where type = 'admin.user_suspended' and user_id = ${winner.user.id}) as events`;
    assert.deepEqual({ changes, events }, { changes: 0, events: 0 });
    assert.ok(await whoAmI(winner.accessToken), "the winner's session is untouched");
  }
});

test("[admin] a suspension racing the caller's own demotion is refused and changes nothing, never a 500", async () => {
  const a = await signInAs(t, "ADMIN");
  const b = await signInAs(t, "ADMIN");
  const target = await signInAs(t, "MEMBER");
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let demoted!: () => void;
  const isDemoted = new Promise<void>((r) => demoted = r);
  const demotion = blocker.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', ${
      JSON.stringify({ sub: b.user.id, role: "authenticated", session_id: crypto.randomUUID() })
    }, true)`;
    await tx`select app.change_user_role(${a.user.id}, 'MEMBER', 'demoted while acting')`;
    demoted();
    await held;
  });
  await isDemoted;
  const answer = setStatus(a, target.user.id, "suspended", "racing");
  await waiting(1, "change_user_status").finally(release);
  await demotion;
  const response = await answer;
  const text = await response.text();
  assert.equal(response.status, 403, text);
  assert.equal(await statusOf(target.user.id), "active");
  assert.ok(await whoAmI(target.accessToken), "the target's sessions were not ended");
});

test("[admin] the user list shows an account without an address (a wallet's) and finds it by name", async () => {
  const name = `Wallet ${crypto.randomUUID().slice(0, 8)}`;
  const [row] = await t.deps.sql`
    insert into app.users (email, name) values (null, ${name}) returning id`;
  const page = await expectJson(
    await t.request("GET", `/api/admin/users?search=${encodeURIComponent(name)}`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.deepEqual(page.items.map((u: { id: string; email: string | null }) => [u.id, u.email]), [
    [row.id, null],
  ]);
});
