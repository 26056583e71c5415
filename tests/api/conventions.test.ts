/** Conventions every response keeps: request ids, security headers, CORS, logs without secrets. */
import assert from "node:assert/strict";
import { signInAs, test, testApp } from "../helpers.ts";

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
    assert.equal(response.status, 500);
    const body = await response.json();
    assert.deepEqual(body, { error: { code: "internal", message: "Something went wrong." } });
    const logged = lines.map((l) => JSON.parse(l)).find((e) => e.msg === "unexpected error");
    assert.equal(logged.requestId, response.headers.get("x-request-id"));
  } finally {
    console.log = original;
  }
});

test("[conventions] the API is also reachable under /functions/v1 on the stack server", async () => {
  const { startStackServer } = await import("../../stack/server.ts");
  const server = startStackServer(t.deps, { port: 0 });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const viaFunctions = await fetch(`${base}/functions/v1/api/auth/session`);
    assert.equal(viaFunctions.status, 200);
    assert.deepEqual(await viaFunctions.json(), { user: null, expiresAt: null });
    const health = await fetch(`${base}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    const mail = await fetch(`${base}/_dev/mail?to=nobody@nowhere.test`);
    assert.deepEqual(await mail.json(), { items: [] });
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

test("[conventions] rate limits are enforced through one helper (functions/api/rate-limits.ts)", async () => {
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
    ["functions/_shared/rate-limit.ts", "functions/api/rate-limits.ts"],
    "counting a hit and recording a refusal happen in one place",
  );
});
