/** Conventions every response keeps: request ids, security headers, CORS, logs without secrets. */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { toApiError } from "../../functions/_shared/errors.ts";

const t = testApp();

test("[conventions] every response carries X-Request-Id, generated or echoed when well-formed", async () => {
  const generated = await t.request("GET", "/api/auth/session");
  assert.match(generated.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  const echoed = await t.request("GET", "/api/nope", {
    headers: { "x-request-id": "client-req-0001" },
  });
  assert.equal(echoed.headers.get("x-request-id"), "client-req-0001");
  const refused = await t.request("GET", "/api/auth/session", {
    headers: { "x-request-id": "bad id with spaces!" },
  });
  assert.notEqual(refused.headers.get("x-request-id"), "bad id with spaces!");
  const error = await t.request("POST", "/api/auth/signin", { body: {} });
  assert.ok(error.headers.get("x-request-id"), "errors carry one too");
});

test("[conventions] security headers are set", async () => {
  const response = await t.request("GET", "/api/auth/session");
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("x-frame-options"), "SAMEORIGIN");
  assert.equal(response.headers.get("referrer-policy"), "no-referrer");
  assert.ok(response.headers.get("strict-transport-security"));
  assert.equal(response.headers.get("cache-control"), "no-store");
});

test("[conventions] Authorization: the Bearer scheme in any case, a space or a tab; anything else signs no one in", async () => {
  const member = await signInAs(t, "MEMBER");
  const sessionWith = async (authorization: string) => {
    const response = await t.request("GET", "/api/auth/session", { headers: { authorization } });
    return (await expectJson<{ user: { id: string } | null }>(response, 200)).user?.id ?? null;
  };
  const token = member.accessToken;
  for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER\t${token}`]) {
    assert.equal(await sessionWith(header), member.user.id, JSON.stringify(header.slice(0, 7)));
  }
  for (
    const header of [`Bearer${token}`, `Basic ${token}`, "Bearer ", `Bearer ${token}x`, token]
  ) {
    assert.equal(await sessionWith(header), null, JSON.stringify(header.slice(0, 8)));
  }
});

test("[conventions] CORS answers allow-listed origins with credentials and ignores others", async () => {
  const allowed = await t.request("OPTIONS", "/api/auth/session", {
    headers: { origin: "http://app.example.test", "access-control-request-method": "POST" },
  });
  assert.equal(allowed.status, 204);
  assert.equal(allowed.headers.get("access-control-allow-origin"), "http://app.example.test");
  assert.equal(allowed.headers.get("access-control-allow-credentials"), "true");
  assert.match(allowed.headers.get("access-control-allow-headers") ?? "", /X-CSRF-Token/i);
  const foreign = await t.request("GET", "/api/auth/session", {
    headers: { origin: "https://evil.example" },
  });
  const noOrigin = await t.request("GET", "/api/auth/session");
  assert.equal(noOrigin.headers.get("access-control-allow-origin"), null);
  assert.match(noOrigin.headers.get("vary") ?? "", /Origin/, "responses vary by Origin either way");
  assert.equal(foreign.headers.get("access-control-allow-origin"), null);
});

test("[conventions] logs are JSON lines and never hold tokens, cookies or secrets", async () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  try {
    const noisy = testApp({ AGORA_LOG_LEVEL: "debug" });
    const session = await signInAs(noisy, "ADMIN");
    await noisy.request("GET", "/api/admin/users", { token: session.accessToken });
    await noisy.request("POST", "/api/auth/refresh", {
      body: { refreshToken: session.refreshToken },
    });
    await noisy.request("GET", "/api/auth/session", {
      cookies: { "agora-access-token": session.accessToken },
    });
    noisy.deps.log("info", "probe", {
      authorization: `Bearer ${session.accessToken}`,
      refreshToken: "secret",
    });
    assert.ok(lines.length >= 4, "the debug level logs every request");
    for (const line of lines) {
      const entry = JSON.parse(line);
      assert.ok(entry.time && entry.level && entry.msg, "structured");
      assert.ok(!line.includes(session.accessToken), "no access token");
      assert.ok(!line.includes(session.refreshToken), "no refresh token");
      assert.ok(!line.includes(noisy.deps.settings.jwtSecret), "no secret");
      const signingKey = noisy.deps.settings.jwtSigningKeys?.current.d;
      assert.ok(!signingKey || !line.includes(signingKey), "no private signing key");
    }
    assert.ok(lines.some((l) => JSON.parse(l).requestId), "request lines carry the request id");
  } finally {
    console.log = original;
  }
});

test("[conventions] an unexpected error is a bare 500 with the request id logged, never internal text", async () => {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  try {
    const broken = testApp({ AGORA_LOG_LEVEL: "error" });
    broken.app.get("/api/_boom", () => {
      throw new Error("secret internal detail: relation app.x");
    });
    const response = await broken.request("GET", "/api/_boom");
    const body = await expectJson(response, 500);
    assert.deepEqual(body, { error: { code: "internal", message: "Something went wrong." } });
    const logged = lines.map((l) => JSON.parse(l)).find((e) => e.msg === "unexpected error");
    assert.equal(logged.requestId, response.headers.get("x-request-id"));
  } finally {
    console.log = original;
  }
});

test("[conventions] the stack server sends /api and /functions/v1/api to the API, and only those", async () => {
  const { isApiPath, startStackServer } = await import("../../stack/server.ts");
  for (const path of ["/api", "/api/", "/api/auth/session", "/api?x=1", "/api#top"]) {
    assert.ok(isApiPath(`http://127.0.0.1:54321${path}`), path);
  }
  for (const path of ["/", "/apis", "/apiary/x", "/x/api/y", "/functions/v1/api/x", "/health"]) {
    assert.ok(!isApiPath(`http://127.0.0.1:54321${path}`), path);
  }
  const server = startStackServer(t.deps, { port: 0 });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const direct = await fetch(`${base}/api/auth/session?from=test`);
    assert.deepEqual(await expectJson(direct, 200), { user: null, expiresAt: null });
    const notApi = await fetch(`${base}/apis/auth/session`, { headers: { accept: "text/html" } });
    assert.notEqual(notApi.headers.get("content-type"), "application/json", "the web client's");
    await notApi.body?.cancel();
    const viaFunctions = await fetch(`${base}/functions/v1/api/auth/session`);
    assert.deepEqual(await expectJson(viaFunctions, 200), { user: null, expiresAt: null });
    const health = await fetch(`${base}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const mail = await fetch(`${base}/_dev/mail?to=nobody@nowhere.test`);
    assert.deepEqual(await expectJson(mail, 200), { items: [] });
  } finally {
    await server.shutdown();
  }
});

test("[conventions] request id, security headers and Vary reach every kind of response", async () => {
  const member = await signInAs(t, "MEMBER");
  const responses = {
    json: await t.request("GET", "/api/auth/session"),
    "refused by a middleware": await t.request("GET", "/api/conversations"),
    "unknown route": await t.request("GET", "/api/nowhere"),
    "event stream": await t.request("GET", `/api/realtime/sse?topics=user:${member.user.id}`, {
      token: member.accessToken,
    }),
  };
  assert.equal(responses["refused by a middleware"].status, 401);
  assert.equal(responses["unknown route"].status, 404);
  assert.match(responses["event stream"].headers.get("content-type") ?? "", /^text\/event-stream/);
  for (const [kind, response] of Object.entries(responses)) {
    await response.body?.cancel();
    assert.match(response.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, kind);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff", kind);
    assert.equal(response.headers.get("referrer-policy"), "no-referrer", kind);
    assert.equal(response.headers.get("vary"), "Origin", kind);
  }
});

/** Raises in the real database, as a migration's function would, and maps what comes back. */
async function raised(statement: string) {
  try {
    await t.deps.sql.unsafe(statement);
  } catch (err) {
    return toApiError(err);
  }
  throw new Error("the statement did not raise");
}

test("[conventions] a custom SQLSTATE names a specific code in its HINT and carries JSON details in its DETAIL", async () => {
  const specific = await raised(`do $$ begin
    raise exception 'not enough stock' using errcode = 'AG422', hint = 'insufficient_stock',
      detail = '{"items":[{"productId":"p1","available":2}]}';
  end $$`);
  assert.equal(specific?.code, "insufficient_stock");
  assert.equal(specific?.status, 422);
  assert.equal(specific?.message, "not enough stock");
  assert.deepEqual(specific?.details, { items: [{ productId: "p1", available: 2 }] });

  // A hint naming a code of another status, or no code at all, leaves the status's own code;
  // a DETAIL that is not JSON adds no details.
  const otherStatus = await raised(`do $$ begin
    raise exception 'refused' using errcode = 'AG422', hint = 'provider_disabled', detail = 'plain text';
  end $$`);
  assert.equal(otherStatus?.code, "unprocessable");
  assert.equal(otherStatus?.details, undefined);
  const unknown = await raised(`do $$ begin
    raise exception 'refused' using errcode = 'AG409', hint = 'no_such_code';
  end $$`);
  assert.equal(unknown?.code, "conflict");
  // Standard SQLSTATEs never pass a hint or detail on (they may hold internal text).
  const standard = await raised(`do $$ begin
    raise exception 'internal text' using errcode = '23505', hint = 'insufficient_stock', detail = '{"x":1}';
  end $$`);
  assert.equal(standard?.code, "conflict");
  assert.equal(standard?.message, "This already exists.");
  assert.equal(standard?.details, undefined);
});

test("[conventions] rate limits are enforced through one helper (functions/api/core/rate-limits.ts)", async () => {
  const root = new URL("../../functions/", import.meta.url);
  const callers: string[] = [];
  const walk = async (dir: URL, prefix: string) => {
    for await (const entry of Deno.readDir(dir)) {
      if (entry.isDirectory) await walk(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith(".ts")) {
        const text = await Deno.readTextFile(new URL(entry.name, dir));
        if (/hitRateLimit\(|"rate_limit\.exceeded"/.test(text)) {
          callers.push(`${prefix}${entry.name}`);
        }
      }
    }
  };
  await walk(root, "functions/");
  assert.deepEqual(
    callers.sort(),
    ["functions/_shared/rate-limit.ts", "functions/api/core/rate-limits.ts"],
    "counting a hit and recording a refusal happen in one place",
  );
});

test("[conventions] the pool sends a time given as a string as it is (microseconds kept); a Date as its ISO time", async () => {
  const [row] = await t.deps.sql<{ given: string; date: string; day: string }[]>`
    select ${"2026-01-02T03:04:05.123456Z"}::timestamptz::text as given,
           ${new Date("2026-01-02T03:04:05.123Z")}::timestamptz::text as date,
           ${"2026-01-02"}::date::text as day`;
  assert.equal(row.given, "2026-01-02 03:04:05.123456+00");
  assert.equal(row.date, "2026-01-02 03:04:05.123+00");
  assert.equal(row.day, "2026-01-02");
});

test("[conventions] postgres.js is patched: a query holds no closures of its own (patches/README.md) and still settles both ways", async () => {
  const ok = t.deps.sql<{ one: number }[]>`select 1 as one`;
  // Without the patch each query carries two arrow functions capturing it, made in its
  // constructor: every query's objects then outlived two scavenges (patches/README.md).
  assert.equal(Object.hasOwn(ok, "resolve"), false, "resolve is the prototype's method");
  assert.equal(Object.hasOwn(ok, "reject"), false, "reject is the prototype's method");
  const [row] = await ok;
  assert.equal(row.one, 1);
  await assert.rejects(
    t.deps.sql`select 1 / 0`,
    (error: { code?: string }) => error.code === "22012",
  );
});

test("[conventions] every way a database connection goes away is 503 unavailable with Retry-After", () => {
  const gone = [
    "ECONNREFUSED",
    "ECONNRESET",
    "EPIPE", // "This socket has been ended by the other party": was a 500
    "ETIMEDOUT",
    "CONNECT_TIMEOUT",
    "CONNECTION_CLOSED",
    "CONNECTION_ENDED",
    "CONNECTION_DESTROYED",
    "57P01",
    "57P02",
    "57P03",
    "53300",
    "08006",
  ];
  for (const code of gone) {
    const mapped = toApiError(Object.assign(new Error("gone"), { code }));
    assert.equal(mapped?.status, 503, code);
    assert.equal(mapped?.code, "unavailable", code);
    assert.equal(mapped?.headers["Retry-After"], "1", code);
  }
  assert.equal(toApiError(Object.assign(new Error("a bug"), { code: "ERR_SOMETHING" })), null);
});
