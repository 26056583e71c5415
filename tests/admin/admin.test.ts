import assert from "node:assert/strict";
import {
  createUser,
  expectError,
  expectJson,
  signIn,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const subscriber = await signInAs(t, "SUBSCRIBER");
const confidential = await signInAs(t, "CONFIDENTIAL");

const ADMIN_ENDPOINTS: [string, string, unknown?][] = [
  ["GET", "/api/admin/users"],
  ["PUT", `/api/admin/users/${subscriber.user.id}/role`, { role: "MEMBER", reason: "probe" }],
  ["GET", "/api/admin/analytics"],
  ["GET", "/api/admin/config"],
  ["PUT", "/api/admin/config", { config: { whiteLabel: { brandName: "Probe" } }, reason: "probe" }],
  ["GET", "/api/admin/config/versions"],
  ["GET", "/api/admin/security-events"],
  ["GET", "/api/admin/security-events/types"],
  ["GET", "/api/admin/access-logs"],
];

// --- access -----------------------------------------------------------------------------------

for (const [method, path, body] of ADMIN_ENDPOINTS) {
  test(`[admin] ${method} ${path.replace(/[0-9a-f-]{36}/, ":id")} gives 401 anonymous, 403 SUBSCRIBER and CONFIDENTIAL`, async () => {
    const before = await t.deps
      .sql`select (select count(*) from app.role_changes) as r, (select count(*) from app.config_versions) as c`;
    await expectError(await t.request(method, path, { body }), 401, "unauthenticated");
    await expectError(
      await t.request(method, path, { body, token: subscriber.accessToken }),
      403,
      "forbidden",
    );
    await expectError(
      await t.request(method, path, { body, token: confidential.accessToken }),
      403,
      "forbidden",
    );
    const after = await t.deps
      .sql`select (select count(*) from app.role_changes) as r, (select count(*) from app.config_versions) as c`;
    assert.deepEqual(after, before, "nothing was written");
  });
}

test("[admin] every admin endpoint gives 200 to an ADMIN", async () => {
  const target = await createUser(t.deps, "SUBSCRIBER");
  const [{ version }] = await t.deps
    .sql`select max(version)::int as version from app.config_versions`;
  const calls: [string, string, unknown?][] = [
    ["GET", "/api/admin/users"],
    ["PUT", `/api/admin/users/${target.id}/role`, { role: "MEMBER", reason: "promotion" }],
    ["GET", "/api/admin/analytics"],
    ["GET", "/api/admin/config"],
    ["PUT", "/api/admin/config", {
      config: { whiteLabel: { primaryColor: "#123456" } },
      reason: "brand",
      expectedVersion: version,
    }],
    ["GET", "/api/admin/security-events"],
    ["GET", "/api/admin/access-logs"],
  ];
  for (const [method, path, body] of calls) {
    const response = await t.request(method, path, { body, token: admin.accessToken });
    assert.equal(response.status, 200, `${method} ${path}: ${await response.clone().text()}`);
    assert.match(response.headers.get("content-type") ?? "", /application\/json/);
    assert.ok(response.headers.get("ratelimit-limit"), "admin responses carry RateLimit headers");
  }
});

test("[admin] a refused admin request is recorded as a security event", async () => {
  await t.request("GET", "/api/admin/config", { token: subscriber.accessToken, ip: "192.0.2.91" });
  const [event] = await t.deps.sql`
    select type, severity, user_id from app.security_events where ip = '192.0.2.91' order by id desc limit 1`;
  assert.equal(event.type, "admin.access_denied");
  assert.equal(event.severity, "warning");
  assert.equal(event.user_id, subscriber.user.id);
});

test("[admin] admin requests are rate-limited per admin", async () => {
  const limited = testApp({ AGORA_RATE_ADMIN_USER: "3/60" });
  // Windows are fixed (aligned to the clock): four requests that straddle a window's end count
  // in two windows and all pass. Such a run is tried once more (no limit at all fails twice).
  const fourRequests = async () => {
    const session = await signInAs(limited, "ADMIN");
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      statuses.push(
        (await limited.request("GET", "/api/admin/config", { token: session.accessToken })).status,
      );
    }
    return { statuses };
  };
  let run = await fourRequests();
  if (run.statuses.every((s) => s === 200)) run = await fourRequests();
  assert.deepEqual(run.statuses, [200, 200, 200, 429]);
  const other = await signInAs(limited, "ADMIN");
  assert.equal(
    (await limited.request("GET", "/api/admin/config", { token: other.accessToken })).status,
    200,
  );
});

// --- users ------------------------------------------------------------------------------------

test("[admin] GET /api/admin/users pages with a stable cursor and counts by role", async () => {
  const tag = crypto.randomUUID().slice(0, 8);
  const made = [];
  for (let i = 0; i < 5; i++) {
    made.push(
      await createUser(t.deps, i < 2 ? "MEMBER" : "SUBSCRIBER", `pager-${tag}-${i}@test.example`),
    );
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `search=pager-${tag}&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await t.request("GET", `/api/admin/users?${query}`, {
      token: admin.accessToken,
    });
    const body = await expectJson(response, 200);
    if (pages === 0) {
      assert.equal(body.counts.total, 5);
      assert.equal(body.counts.byRole.MEMBER, 2);
      assert.equal(body.counts.byRole.SUBSCRIBER, 3);
    }
    seen.push(...body.items.map((u: { id: string }) => u.id));
    cursor = body.nextCursor;
    pages++;
    // An insert between pages must not shift the pages (keyset, not offset).
    if (pages === 1) await createUser(t.deps, "MEMBER", `pager-${tag}-late@test.example`);
  } while (cursor && pages < 10);
  assert.equal(pages, 3);
  assert.deepEqual(new Set(seen), new Set(made.map((u) => u.id)));
  assert.equal(seen.length, 5, "no user appears twice");
});

test("[admin] GET /api/admin/users filters by role and status and searches name and email", async () => {
  const tag = crypto.randomUUID().slice(0, 8);
  const member = await createUser(t.deps, "MEMBER", `filter-${tag}-a@test.example`);
  const suspended = await createUser(t.deps, "MEMBER", `filter-${tag}-b@test.example`);
  await t.deps.sql`update app.users set status = 'suspended' where id = ${suspended.id}`;
  await t.deps.sql`update app.users set name = ${`Zelda ${tag}`} where id = ${member.id}`;
  const byRole = await expectJson(
    await t.request(
      "GET",
      `/api/admin/users?search=filter-${tag}&role=MEMBER&status=active`,
      { token: admin.accessToken },
    ),
    200,
  );
  assert.deepEqual(byRole.items.map((u: { id: string }) => u.id), [member.id]);
  assert.equal(byRole.counts.total, 1);
  const byName = await expectJson(
    await t.request("GET", `/api/admin/users?search=ZELDA%20${tag}`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.deepEqual(byName.items.map((u: { id: string }) => u.id), [member.id]);
  const wildcard = await expectJson(
    await t.request("GET", `/api/admin/users?search=%25`, { token: admin.accessToken }),
    200,
  );
  assert.ok(
    wildcard.items.every((u: { email: string; name: string }) => (u.email + u.name).includes("%")),
    "% is matched literally",
  );
  await expectError(
    await t.request("GET", "/api/admin/users?role=OWNER", { token: admin.accessToken }),
    400,
    "invalid_request",
  );
});

// --- roles ------------------------------------------------------------------------------------

test("[admin] a role change is recorded with before, after, who and why, and is effective at once", async () => {
  const member = await signInAs(t, "MEMBER");
  await expectError(
    await t.request("GET", "/api/admin/config", { token: member.accessToken }),
    403,
  );
  const response = await t.request("PUT", `/api/admin/users/${member.user.id}/role`, {
    token: admin.accessToken,
    body: { role: "ADMIN", reason: "needs the console" },
  });
  const body = await expectJson(response, 200);
  assert.equal(body.user.role, "ADMIN");
  assert.equal(body.change.previousRole, "MEMBER");
  assert.equal(body.change.newRole, "ADMIN");
  assert.equal(body.change.changedBy, admin.user.id);
  assert.equal(body.change.reason, "needs the console");
  // The very same access token, issued when the user was MEMBER, now opens the console...
  assert.equal(
    (await t.request("GET", "/api/admin/config", { token: member.accessToken })).status,
    200,
  );
  const session = await expectJson(
    await t.request("GET", "/api/auth/session", { token: member.accessToken }),
    200,
  );
  assert.equal(session.user.role, "ADMIN");
  // ...and closes it again on demotion.
  await t.request("PUT", `/api/admin/users/${member.user.id}/role`, {
    token: admin.accessToken,
    body: { role: "SUBSCRIBER", reason: "done" },
  });
  await expectError(
    await t.request("GET", "/api/admin/config", { token: member.accessToken }),
    403,
  );
  const [event] = await t.deps.sql`
    select severity, details from app.security_events where type = 'admin.role_changed' and user_id = ${member.user.id} order by id limit 1`;
  assert.equal(event.severity, "critical");
  assert.equal(event.details.to, "ADMIN");
});

test("[admin] an admin cannot change their own role", async () => {
  const response = await t.request("PUT", `/api/admin/users/${admin.user.id}/role`, {
    token: admin.accessToken,
    body: { role: "MEMBER", reason: "oops" },
  });
  await expectError(response, 422, "unprocessable");
  const [row] = await t.deps.sql`select role from app.users where id = ${admin.user.id}`;
  assert.equal(row.role, "ADMIN");
});

test("[admin] a role change needs a reason and a known role and user", async () => {
  const target = await createUser(t.deps);
  for (
    const body of [{ role: "MEMBER" }, { role: "MEMBER", reason: "  " }, {
      role: "OWNER",
      reason: "x",
    }, { reason: "x" }]
  ) {
    await expectError(
      await t.request("PUT", `/api/admin/users/${target.id}/role`, {
        token: admin.accessToken,
        body,
      }),
      400,
    );
  }
  await expectError(
    await t.request("PUT", `/api/admin/users/${crypto.randomUUID()}/role`, {
      token: admin.accessToken,
      body: { role: "MEMBER", reason: "x" },
    }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("PUT", `/api/admin/users/not-a-uuid/role`, {
      token: admin.accessToken,
      body: { role: "MEMBER", reason: "x" },
    }),
    400,
  );
  const [row] = await t.deps
    .sql`select count(*)::int as n from app.role_changes where user_id = ${target.id}`;
  assert.equal(row.n, 0);
});

// --- configuration ----------------------------------------------------------------------------

test("[admin] PUT /api/admin/config writes a new version with a diff and keeps history", async () => {
  const current = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  const brand = `Brand ${crypto.randomUUID().slice(0, 6)}`;
  const response = await t.request("PUT", "/api/admin/config", {
    token: admin.accessToken,
    body: {
      config: { whiteLabel: { brandName: brand }, limits: { messageEditWindowMinutes: 30 } },
      reason: "rebrand",
      expectedVersion: current.version,
    },
  });
  const body = await expectJson(response, 200);
  assert.equal(body.version, current.version + 1);
  assert.equal(body.config.whiteLabel.brandName, brand);
  assert.deepEqual(body.diff["whiteLabel.brandName"], {
    from: current.config.whiteLabel.brandName,
    to: brand,
  });
  assert.equal(
    body.config.whiteLabel.primaryColor,
    current.config.whiteLabel.primaryColor,
    "untouched keys keep their values",
  );
  const [row] = await t.deps
    .sql`select reason, changed_by from app.config_versions where version = ${body.version}`;
  assert.equal(row.reason, "rebrand");
  assert.equal(row.changed_by, admin.user.id);
  const pub = await expectJson(await t.request("GET", "/api/config/public"), 200);
  assert.equal(pub.whiteLabel.brandName, brand);
  // The edit window the chat hides Edit by, changed at once in the process that wrote it.
  assert.deepEqual(pub.limits, { messageEditWindowMinutes: 30 });
});

test("[admin] the configuration reads with every default filled in, and nested settings patch one leaf at a time", async () => {
  const current = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  const [{ defaults }] = await t.deps.sql<{ defaults: Record<string, unknown> }[]>`
    select app_private.config_defaults() as defaults`;
  for (const section of Object.keys(defaults)) {
    assert.ok(current.config[section], `section ${section} is present`);
  }
  assert.equal(typeof current.config.store.reservationMinutes, "number");
  assert.equal(typeof current.config.security.freshSignInSeconds, "number");
  const flip = !current.config.features.signIn.google;
  const response = await t.request("PUT", "/api/admin/config", {
    token: admin.accessToken,
    body: { config: { features: { signIn: { google: flip } } }, reason: "nested" },
  });
  const body = await expectJson(response, 200);
  assert.equal(body.config.features.signIn.google, flip);
  assert.equal(body.config.features.signIn.email, current.config.features.signIn.email);
  assert.deepEqual(Object.keys(body.diff), ["features.signIn.google"]);
  const restored = await t.request("PUT", "/api/admin/config", {
    token: admin.accessToken,
    body: { config: { features: { signIn: { google: !flip } } }, reason: "restore" },
  });
  await expectJson(restored, 200);
});

test("[admin] a stale expectedVersion gives 409 and writes nothing", async () => {
  const current = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  const response = await t.request("PUT", "/api/admin/config", {
    token: admin.accessToken,
    body: {
      config: { system: { maintenanceMode: true } },
      reason: "stale",
      expectedVersion: current.version - 1,
    },
  });
  const error = await expectError(response, 409, "conflict");
  assert.deepEqual(error.error.details, {
    expectedVersion: current.version - 1,
    currentVersion: current.version,
  });
  const after = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  assert.equal(after.version, current.version);
});

test("[admin] concurrent config writers at the same version: exactly one wins", async () => {
  const current = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  const responses = await Promise.all(
    ["#111111", "#222222", "#333333", "#444444"].map((color) =>
      t.request("PUT", "/api/admin/config", {
        token: admin.accessToken,
        body: {
          config: { whiteLabel: { primaryColor: color } },
          reason: "race",
          expectedVersion: current.version,
        },
      })
    ),
  );
  const statuses = responses.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 409, 409, 409]);
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app.config_versions where version > ${current.version}`;
  assert.equal(n, 1);
});

test("[admin] the configuration is validated: unknown keys, wrong types and bad values are 400", async () => {
  const bad = [
    { system: { nope: true } },
    { nope: {} },
    { whiteLabel: { primaryColor: "red" } },
    { whiteLabel: { logoUrl: "javascript:alert(1)" } },
    { whiteLabel: { supportEmail: "not-an-email" } },
    { system: { defaultRole: "ADMIN" } },
    { limits: { messageMaxLength: 0 } },
    { features: { messaging: "yes" } },
    { features: { signIn: { google: "no" } } },
    { features: { signIn: { myspace: true } } },
    { wallet: { contracts: { utility: "0x123" } } },
    { store: { commissionBps: 10_001 } },
    { security: { freshSignInSeconds: 0 } },
  ];
  const before = await t.deps.sql`select max(version) as v from app.config_versions`;
  for (const config of bad) {
    const response = await t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      body: { config, reason: "bad" },
    });
    const error = await expectError(response, 400, "invalid_request");
    assert.ok(Array.isArray(error.error.details), `field errors for ${JSON.stringify(config)}`);
  }
  await expectError(
    await t.request("PUT", "/api/admin/config", { token: admin.accessToken, body: { config: {} } }),
    400,
  );
  const after = await t.deps.sql`select max(version) as v from app.config_versions`;
  assert.deepEqual(after, before);
});

test("[admin] GET /api/config/public holds white-label, features and the edit window only, for anyone", async () => {
  const response = await t.request("GET", "/api/config/public");
  const body = await expectJson(response, 200);
  assert.deepEqual(Object.keys(body).sort(), [
    "features",
    "limits",
    "realtime",
    "version",
    "whiteLabel",
  ]);
  assert.deepEqual(Object.keys(body.limits), ["messageEditWindowMinutes"]);
  for (const key of ["brandName", "logoUrl", "primaryColor", "customDomain", "supportEmail"]) {
    assert.ok(key in body.whiteLabel, key);
  }
  assert.equal(typeof body.realtime.anonKey, "string");
  const text = JSON.stringify(body);
  for (
    const secret of [
      t.deps.settings.jwtSecret,
      t.deps.settings.csrfSecret,
      t.deps.settings.refreshSecret,
    ]
  ) {
    assert.ok(!text.includes(secret));
  }
});

// --- analytics --------------------------------------------------------------------------------

test("[admin] GET /api/admin/analytics counts real sign-ups and sign-ins per interval", async () => {
  const before = await expectJson(
    await t.request("GET", "/api/admin/analytics?interval=day", {
      token: admin.accessToken,
    }),
    200,
  );
  await signIn(t, uniqueEmail("analytics"));
  const after = await expectJson(
    await t.request("GET", "/api/admin/analytics?interval=day", {
      token: admin.accessToken,
    }),
    200,
  );
  const last = (s: { value: number }[]) => s[s.length - 1].value;
  assert.equal(last(after.users.signups), last(before.users.signups) + 1);
  assert.equal(last(after.activity.signIns), last(before.activity.signIns) + 1);
  assert.equal(after.users.total, before.users.total + 1);
  assert.ok(last(after.activity.activeUsers) >= 1);
  for (const key of ["users", "activity", "messaging", "store", "wallet", "notifications"]) {
    assert.ok(key in after, key);
  }
  assert.equal(
    after.messaging.messages.length,
    after.users.signups.length,
    "messaging series share the buckets",
  );
  for (const point of after.users.signups) {
    assert.ok(!Number.isNaN(Date.parse(point.t)) && typeof point.value === "number");
  }
});

test("[admin] analytics ranges are checked", async () => {
  const token = admin.accessToken;
  await expectError(
    await t.request(
      "GET",
      "/api/admin/analytics?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z",
      { token },
    ),
    400,
  );
  await expectError(
    await t.request("GET", "/api/admin/analytics?from=2000-01-01T00:00:00Z&interval=day", {
      token,
    }),
    400,
  );
  await expectError(await t.request("GET", "/api/admin/analytics?interval=hour", { token }), 400);
  const weekly = await t.request(
    "GET",
    "/api/admin/analytics?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&interval=week",
    { token },
  );
  assert.equal((await expectJson(weekly, 200)).users.signups.length, 9);
});

// --- monitoring -------------------------------------------------------------------------------

test("[admin] GET /api/admin/security-events filters by type, user and ip and pages by cursor", async () => {
  const user = await createUser(t.deps, "MEMBER");
  for (let i = 0; i < 3; i++) await signIn(t, user.email);
  const first = await expectJson(
    await t.request(
      "GET",
      `/api/admin/security-events?type=auth.signin&userId=${user.id}&limit=2`,
      { token: admin.accessToken },
    ),
    200,
  );
  assert.equal(first.items.length, 2);
  assert.ok(
    first.items.every((e: { type: string; userId: string }) =>
      e.type === "auth.signin" && e.userId === user.id
    ),
  );
  const second = await expectJson(
    await t.request(
      "GET",
      `/api/admin/security-events?type=auth.signin&userId=${user.id}&limit=2&cursor=${first.nextCursor}`,
      { token: admin.accessToken },
    ),
    200,
  );
  assert.equal(second.items.length, 1);
  assert.equal(second.nextCursor, null);
  const byIp = await expectJson(
    await t.request("GET", `/api/admin/security-events?ip=127.0.0.1&limit=1`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.equal(byIp.items[0].ip, "127.0.0.1");
  await expectError(
    await t.request("GET", "/api/admin/security-events?ip=not-an-ip", { token: admin.accessToken }),
    400,
  );
  await expectError(
    await t.request("GET", "/api/admin/security-events?cursor=garbage", {
      token: admin.accessToken,
    }),
    400,
  );
});

test("[admin] security events name their user by profile name, and the types list holds every type the log holds, those SQL writes included", async () => {
  const user = await createUser(t.deps, "MEMBER");
  await t.deps.sql`update app.users set name = 'Ada Lovelace' where id = ${user.id}`;
  await signIn(t, user.email);
  // A type no server code names: written by SQL, as moderation and account deletion are.
  const odd = "test.written_by_sql";
  await t.deps.sql`insert into app.security_events (type, user_id) values (${odd}, ${user.id})`;
  const page = await expectJson(
    await t.request("GET", `/api/admin/security-events?type=auth.signin&userId=${user.id}`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.deepEqual(page.items[0].user, { id: user.id, name: "Ada Lovelace" });
  const { types } = await expectJson(
    await t.request("GET", "/api/admin/security-events/types", { token: admin.accessToken }),
    200,
  );
  const [{ stored }] = await t.deps.sql<{ stored: string[] }[]>`
    select array_agg(distinct type order by type) as stored from app.security_events`;
  assert.deepEqual(types, stored, "exactly the distinct stored types, alphabetically");
  assert.ok(types.includes(odd) && types.includes("auth.signin"));
  const anonymous = await expectJson(
    await t.request("GET", "/api/admin/security-events?limit=200", { token: admin.accessToken }),
    200,
  );
  for (const e of anonymous.items as { userId: string | null; user: unknown }[]) {
    if (e.userId === null) assert.equal(e.user, null, "no user, no name");
  }
});

test("[admin] GET /api/admin/config/versions lists the history newest first with author, reason and diff, page by page", async () => {
  const before = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  await t.deps.sql`update app.users set name = 'Grace Admin' where id = ${admin.user.id}`;
  const colors = ["#101010", "#202020", "#303030"];
  for (const [i, color] of colors.entries()) {
    await expectJson(
      await t.request("PUT", "/api/admin/config", {
        token: admin.accessToken,
        body: { config: { whiteLabel: { primaryColor: color } }, reason: `history ${i}` },
      }),
      200,
    );
  }
  const first = await expectJson(
    await t.request("GET", "/api/admin/config/versions?limit=2", { token: admin.accessToken }),
    200,
  );
  assert.equal(first.items.length, 2);
  assert.equal(first.items[0].reason, "history 2");
  assert.equal(first.items[0].changedBy.name, "Grace Admin");
  assert.deepEqual(first.items[0].diff["whiteLabel.primaryColor"], {
    from: "#202020",
    to: "#303030",
  });
  assert.ok(first.items[0].version > first.items[1].version);
  const second = await expectJson(
    await t.request("GET", `/api/admin/config/versions?limit=2&cursor=${first.nextCursor}`, {
      token: admin.accessToken,
    }),
    200,
  );
  assert.equal(second.items[0].reason, "history 0");
  assert.equal(second.items[0].version, before.version + 1);
  await expectError(
    await t.request("GET", "/api/admin/config/versions?cursor=garbage", {
      token: admin.accessToken,
    }),
    400,
  );
});

test("[admin] GET /api/admin/access-logs lists requests with route patterns, off the request path", async () => {
  const member = await signInAs(t, "MEMBER");
  const response = await t.request("GET", "/api/auth/session", {
    token: member.accessToken,
    headers: { "x-request-id": "req-test-123456" },
  });
  assert.equal(response.headers.get("x-request-id"), "req-test-123456");
  await t.deps.accessLog.flush();
  const logs = await expectJson(
    await t.request(
      "GET",
      `/api/admin/access-logs?userId=${member.user.id}&route=/api/auth/session`,
      { token: admin.accessToken },
    ),
    200,
  );
  const entry = logs.items.find((e: { requestId: string }) => e.requestId === "req-test-123456");
  assert.ok(entry, "the request is in the access log");
  assert.equal(entry.method, "GET");
  assert.equal(entry.status, 200);
  assert.equal(entry.ip, "127.0.0.1");
  assert.ok(entry.durationMs >= 0);
  await t.request("PUT", `/api/admin/users/${member.user.id}/role`, {
    token: admin.accessToken,
    body: { role: "MEMBER", reason: "same" },
  });
  await t.deps.accessLog.flush();
  const pattern = await expectJson(
    await t.request(
      "GET",
      `/api/admin/access-logs?route=${encodeURIComponent("/api/admin/users/:id/role")}&limit=1`,
      { token: admin.accessToken },
    ),
    200,
  );
  assert.equal(pattern.items[0].route, "/api/admin/users/:id/role");
});

test("[admin] GET /api/admin/access-logs filters by type, the class of the status", async () => {
  const member = await signInAs(t, "MEMBER");
  await t.request("GET", "/api/auth/session", { token: member.accessToken }); // 200
  await t.request("GET", "/api/admin/users", { token: member.accessToken }); // 403
  await t.request("GET", `/api/conversations/${crypto.randomUUID()}`, {
    token: member.accessToken,
  }); // 404 or 403: a client error either way
  await t.deps.accessLog.flush();
  const of = async (type: string) =>
    (await expectJson(
      await t.request(
        "GET",
        `/api/admin/access-logs?userId=${member.user.id}&type=${type}`,
        { token: admin.accessToken },
      ),
      200,
    )).items as { type: string; status: number; route: string }[];
  const success = await of("success");
  const clientErrors = await of("client_error");
  assert.ok(success.length >= 1 && success.every((e) => e.type === "success" && e.status < 300));
  assert.ok(
    clientErrors.length >= 2 &&
      clientErrors.every((e) => e.type === "client_error" && e.status >= 400 && e.status < 500),
  );
  assert.deepEqual(await of("server_error"), []);
  await expectError(
    await t.request("GET", "/api/admin/access-logs?type=teapot", { token: admin.accessToken }),
    400,
  );
});

test("[admin] analytics count messaging across every conversation, not only the admin's", async () => {
  const a = await signInAs(t, "MEMBER");
  const b = await signInAs(t, "MEMBER");
  const before = await expectJson(
    await t.request("GET", "/api/admin/analytics", { token: admin.accessToken }),
    200,
  );
  const conv = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: a.accessToken,
      body: { type: "direct", participantIds: [b.user.id] },
    }),
    201,
  );
  for (const who of [a, b, a]) {
    await t.request("POST", `/api/conversations/${conv.id}/messages`, {
      token: who.accessToken,
      body: { content: "count me" },
    });
  }
  const after = await expectJson(
    await t.request("GET", "/api/admin/analytics", { token: admin.accessToken }),
    200,
  );
  const last = (s: { value: number }[]) => s[s.length - 1].value;
  assert.equal(after.messaging.totals.messages, before.messaging.totals.messages + 3);
  assert.equal(after.messaging.totals.conversations, before.messaging.totals.conversations + 1);
  assert.equal(last(after.messaging.messages), last(before.messaging.messages) + 3);
  assert.equal(
    last(after.messaging.conversationsCreated),
    last(before.messaging.conversationsCreated) + 1,
  );
  assert.ok(last(after.messaging.activeSenders) >= 2);
});

test("[admin] an audited change commits with its security event or not at all: text Postgres cannot store (a lone surrogate, a NUL) in a reason is 400 and saves nothing; a NUL in a refused path is still recorded", async () => {
  const current = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  for (const reason of ["x \ud800 y", "a \u0000 b"]) {
    const refused = await expectError(
      await t.request("PUT", "/api/admin/config", {
        token: admin.accessToken,
        body: {
          config: { whiteLabel: { brandName: `Odd ${crypto.randomUUID().slice(0, 6)}` } },
          reason,
          expectedVersion: current.version,
        },
      }),
      400,
      "invalid_request",
    );
    assert.equal((refused.error.details as { path: string }[])[0].path, "reason");
  }
  const after = await expectJson(
    await t.request("GET", "/api/admin/config", { token: admin.accessToken }),
    200,
  );
  assert.equal(after.version, current.version, "no version was saved");

  const body = await expectJson(
    await t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      ip: "192.0.2.93",
      body: {
        config: { whiteLabel: { brandName: `Odd ${crypto.randomUUID().slice(0, 6)}` } },
        reason: "Ünïcödé \u{1F600} reason",
        expectedVersion: current.version,
      },
    }),
    200,
  );
  const [event] = await t.deps.sql<
    { details: { version: number; reason: string; keys: string[] }; ip: string; user_id: string }[]
  >`
    select details, host(ip) as ip, user_id from app.security_events
    where type = 'admin.config_changed' and (details ->> 'version')::int = ${body.version}`;
  assert.ok(event, "the change has its admin.config_changed event");
  assert.equal(event.details.reason, "Ünïcödé \u{1F600} reason");
  assert.deepEqual(event.details.keys, ["whiteLabel.brandName"]);
  assert.equal(event.ip, "192.0.2.93", "written in the change's transaction, with the client");
  assert.equal(event.user_id, admin.user.id);

  await t.request("GET", "/api/admin/users%00", {
    token: subscriber.accessToken,
    ip: "192.0.2.92",
  });
  const [denied] = await t.deps.sql`
    select type from app.security_events where ip = '192.0.2.92' order by id desc limit 1`;
  assert.equal(denied?.type, "admin.access_denied", "the refusal of a path with NUL is recorded");
});
