/** What the system configuration switches, seen through the API. */
import assert from "node:assert/strict";
import {
  createUser,
  expectError,
  expectJson,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const member = await signInAs(t, "MEMBER");

/** Applies a config patch for the duration of `fn`, then restores the previous values. */
async function withConfig(patch: Record<string, Record<string, unknown>>, fn: () => Promise<void>) {
  const before = (await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  ))
    .config;
  const restore = Object.fromEntries(
    Object.entries(patch).map((
      [section, values],
    ) => [section, Object.fromEntries(Object.keys(values).map((k) => [k, before[section][k]]))]),
  );
  const set = await t.request("PUT", "/api/admin/config", {
    token: admin.accessToken,
    body: { config: patch, reason: "test" },
  });
  assert.equal(set.status, 200, await set.clone().text());
  try {
    await fn();
  } finally {
    await t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      body: { config: restore, reason: "test restore" },
    });
  }
}

test("[config] features.messaging off closes the messaging routes with 403, and they come back", async () => {
  await withConfig({ features: { messaging: false } }, async () => {
    await expectError(
      await t.request("GET", "/api/conversations", { token: member.accessToken }),
      403,
      "forbidden",
    );
    await expectError(
      await t.request("GET", `/api/realtime/poll?topics=user:${member.user.id}&timeout=0`, {
        token: member.accessToken,
      }),
      403,
    );
  });
  assert.equal(
    (await t.request("GET", "/api/conversations", { token: member.accessToken })).status,
    200,
  );
});

test("[config] maintenance mode refuses changes by non-admins with 503 and Retry-After; reads and admins go on", async () => {
  const other = await signInAs(t, "MEMBER");
  await withConfig({ system: { maintenanceMode: true } }, async () => {
    const refused = await t.request("POST", "/api/conversations", {
      token: member.accessToken,
      body: { type: "direct", participantIds: [other.user.id] },
    });
    await expectError(refused, 503, "unavailable");
    assert.ok(refused.headers.get("retry-after"));
    assert.equal(
      (await t.request("GET", "/api/conversations", { token: member.accessToken })).status,
      200,
    );
    assert.equal(
      (await t.request("GET", "/api/admin/config", { token: admin.accessToken })).status,
      200,
    );
    const signin = await t.request("POST", "/api/auth/signin", {
      body: { provider: "email", email: uniqueEmail() },
    });
    assert.equal(signin.status, 202, "signing in still works");
  });
});

test("[config] features.signIn.email off refuses email sign-in with 400", async () => {
  await withConfig({ features: { signIn: { email: false } } }, async () => {
    await expectError(
      await t.request("POST", "/api/auth/signin", {
        body: { provider: "email", email: uniqueEmail() },
      }),
      400,
    );
  });
});

test("[config] with sign-ups closed, only existing accounts get a link; the answer is the same", async () => {
  const known = await createUser(t.deps, "MEMBER");
  const unknown = uniqueEmail("closed");
  await withConfig({ system: { signupsOpen: false } }, async () => {
    for (const email of [known.email, unknown]) {
      const r = await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
      assert.deepEqual(await expectJson(r, 202), { sent: true });
    }
  });
  const mail = await t.deps
    .sql`select to_address from dev.mail where to_address in (${known.email}, ${unknown})`;
  assert.deepEqual(mail.map((m) => m.to_address), [known.email]);
});

test("[config] successful sign-in requests carry the RateLimit headers of the tightest limit", async () => {
  const limited = testApp({ AGORA_RATE_SIGNIN_EMAIL: "5/600", AGORA_RATE_SIGNIN_IP: "1000/600" });
  const r = await limited.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: uniqueEmail() },
  });
  assert.equal(r.status, 202);
  assert.equal(r.headers.get("ratelimit-limit"), "5");
  assert.equal(r.headers.get("ratelimit-remaining"), "4");
  assert.ok(Number(r.headers.get("ratelimit-reset")) > 0);
});

test("[config] setting the role a user already has records no security event", async () => {
  const target = await createUser(t.deps, "MEMBER");
  const r = await t.request("PUT", `/api/admin/users/${target.id}/role`, {
    token: admin.accessToken,
    body: { role: "MEMBER", reason: "same" },
  });
  assert.equal(r.status, 200);
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app.security_events where type = 'admin.role_changed' and user_id = ${target.id}`;
  assert.equal(n, 0);
});
