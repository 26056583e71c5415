/**
 * The OpenAPI document (GET /api/openapi.json) keeps the contract's conventions (servers, a
 * unique operationId per operation, `security: []` where no session is needed, 400/413/415 on
 * every JSON body), passes Redocly's recommended rules with no errors, and describes what the API
 * really answers: a tour of real successful answers validates against it (the malformed-input
 * suite does the same for every refusal).
 */
import assert from "node:assert/strict";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import {
  createUser,
  latestMagicToken,
  signIn,
  signInAs,
  SITE,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { responseValidator } from "../support/openapi-validator.ts";
import type { DevPaymentProvider } from "../../functions/api/store/dev-provider.ts";
import { signWebhook } from "../../functions/api/store/payments.ts";
import { drain } from "../../functions/api/core/job-queue.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import {
  authorizeAtProvider,
  BINDING_COOKIE,
  callback,
  startPeers,
  startSignIn,
} from "../support/oidc-peers.ts";
import { sha256Base64url } from "../../functions/_shared/crypto.ts";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";

const peers = await startPeers();
const t = testApp(peers.env);
const doc = await (await t.request("GET", "/api/openapi.json")).json();
const validator = responseValidator(doc);

type Operation = {
  operationId?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
};

function operations(): [string, string, Operation][] {
  const out: [string, string, Operation][] = [];
  for (
    const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Operation>>)
  ) {
    for (const [method, op] of Object.entries(item)) out.push([method.toUpperCase(), path, op]);
  }
  return out;
}

/** Operations that work without a session. */
const PUBLIC = [
  "POST /api/auth/signin",
  "GET /api/auth/providers",
  "GET /api/auth/nonce",
  "GET /api/auth/callback/{provider}",
  "POST /api/auth/callback/apple",
  "POST /api/auth/exchange",
  "POST /api/auth/verify",
  "POST /api/auth/refresh",
  "GET /api/auth/csrf",
  "GET /api/auth/session",
  "GET /api/auth/.well-known/jwks.json",
  "GET /api/config/public",
  "GET /api/store/products",
  "GET /api/store/products/{id}",
  "GET /api/store/vendors",
  "POST /api/store/webhooks/stripe",
];
/** Server-to-server operations: the service role key, never a user's session. */
const SERVICE = ["POST /api/internal/jobs/drain"];
/** Operations for a browser page's cookie session only (bearer callers are refused). */
const COOKIE_ONLY = ["POST /api/auth/token"];

test("[openapi] the document passes Redocly's recommended rules with no errors", async () => {
  const config = await createConfig({ extends: ["recommended"] });
  const problems = await lintFromString({
    source: JSON.stringify(doc),
    absoluteRef: `${SITE}/api/openapi.json`,
    config,
  });
  const describe = (p: (typeof problems)[number]) =>
    `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`;
  assert.deepEqual(problems.filter((p) => p.severity === "error").map(describe), []);
  // The warnings left, each for a reason: no licence is declared for this private project; the
  // sign-in callbacks answer only with a redirect; these four GETs have no client error; the
  // server of the local deployment (the one tested) is on localhost; the contract's paths
  // `/api/notifications/{id}/read` and `/api/notifications/bulk/{id}` would both match
  // `/bulk/read`, but one is a PUT and the other a GET, and notification ids are UUIDs.
  assert.deepEqual(
    problems.map((p) => `${p.ruleId} ${p.location?.[0]?.pointer}`).sort(),
    [
      "info-license #/info",
      "operation-2xx-response #/paths/~1api~1auth~1callback~1{provider}/get/responses",
      "operation-2xx-response #/paths/~1api~1auth~1callback~1apple/post/responses",
      // A browser opens the magic-link and Google callback: every refusal is a 303 to the sign-in
      // page (docs/sessions.md, "When a callback refuses"), so it documents no 4xx.
      "operation-4xx-response #/paths/~1api~1auth~1callback~1{provider}/get/responses",
      "operation-4xx-response #/paths/~1api~1auth~1providers/get/responses",
      "operation-4xx-response #/paths/~1api~1auth~1csrf/get/responses",
      "operation-4xx-response #/paths/~1api~1auth~1session/get/responses",
      "operation-4xx-response #/paths/~1api~1auth~1.well-known~1jwks.json/get/responses",
      "operation-4xx-response #/paths/~1api~1config~1public/get/responses",
      "no-server-example.com #/servers/0/url",
      "no-ambiguous-paths #/paths/~1api~1notifications~1bulk~1{id}",
    ].sort(),
  );
});

test("[openapi] servers, a unique operationId each, security [] where no session is needed, 400/413/415 on JSON bodies", () => {
  assert.deepEqual(doc.servers, [{ url: SITE, description: "This deployment (AGORA_SITE_URL)" }]);
  const ids = new Map<string, string>();
  for (const [method, path, op] of operations()) {
    const name = `${method} ${path}`;
    assert.match(op.operationId ?? "", /^[a-z][A-Za-z]+$/, `${name} has an operationId`);
    assert.equal(ids.get(op.operationId!), undefined, `${name}: ${op.operationId} is unique`);
    ids.set(op.operationId!, name);
    if (PUBLIC.includes(name)) {
      assert.deepEqual(op.security, [], `${name} works without a session: security []`);
    } else if (COOKIE_ONLY.includes(name)) {
      assert.deepEqual(op.security, [{ cookie: [] }], `${name} takes a cookie session only`);
    } else if (SERVICE.includes(name)) {
      assert.deepEqual(op.security, [{ serviceRole: [] }], `${name} takes the service key only`);
    } else {
      assert.deepEqual(
        op.security,
        [{ bearer: [] }, { cookie: [] }],
        `${name} needs a session (bearer or cookie)`,
      );
    }
    if (op.requestBody?.content?.["application/json"]) {
      for (const status of ["400", "413", "415"]) {
        assert.ok(op.responses[status], `${name} documents ${status}`);
      }
    }
  }
  assert.ok(ids.size >= 30);
});

test("[openapi] real answers validate against the document: a tour of every resource", async () => {
  const problems: string[] = [];
  const check = async (method: string, path: string, response: Response, status?: number) => {
    if (status !== undefined && response.status !== status) {
      problems.push(`${method} ${path}: ${response.status}, expected ${status}`);
    }
    problems.push(...await validator.check(method, path, response));
    return response;
  };

  // Anonymous.
  await check("GET", "/api/auth/session", await t.request("GET", "/api/auth/session"), 200);
  await check("GET", "/api/auth/csrf", await t.request("GET", "/api/auth/csrf"), 200);
  await check("GET", "/api/config/public", await t.request("GET", "/api/config/public"), 200);
  const email = uniqueEmail("tour");
  await check(
    "POST",
    "/api/auth/signin",
    await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } }),
    202,
  );
  const verified = await check(
    "POST",
    "/api/auth/verify",
    await t.request("POST", "/api/auth/verify", {
      body: { token: await latestMagicToken(t.deps, email) },
    }),
    200,
  );
  const first = await verified.json();
  const refreshed = await check(
    "POST",
    "/api/auth/refresh",
    await t.request("POST", "/api/auth/refresh", {
      body: { refreshToken: first.refreshToken },
    }),
    200,
  );
  const me = await refreshed.json();
  const token = me.accessToken as string;
  await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: uniqueEmail("browser") },
  });
  const callbackEmail = uniqueEmail("callback");
  await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: callbackEmail },
  });
  await check(
    "GET",
    "/api/auth/callback/{provider}",
    await t.request(
      "GET",
      `/api/auth/callback/email?token=${await latestMagicToken(t.deps, callbackEmail)}`,
    ),
    303,
  );

  // Signed in.
  await check(
    "GET",
    "/api/auth/session",
    await t.request("GET", "/api/auth/session", { token }),
    200,
  );
  const other = await signInAs(t, "MEMBER");
  await check(
    "GET",
    "/api/users",
    await t.request("GET", "/api/users?limit=2", { token }),
    200,
  );
  const created = await check(
    "POST",
    "/api/conversations",
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "direct", participantIds: [other.user.id] },
    }),
    201,
  );
  const conversation = await created.json();
  await check(
    "POST",
    "/api/conversations",
    await t.request("POST", "/api/conversations", {
      token,
      body: { type: "direct", participantIds: [other.user.id] },
    }),
    200,
  );
  await check(
    "GET",
    "/api/conversations",
    await t.request("GET", "/api/conversations", { token }),
    200,
  );
  const form = new FormData();
  form.append(
    "file",
    new File([new TextEncoder().encode("hello")], "hi.txt", {
      type: "text/plain",
    }),
  );
  const upload = await check(
    "POST",
    "/api/attachments",
    await t.request("POST", "/api/attachments", { token, rawBody: form }),
    201,
  );
  const attachment = await upload.json();
  await check(
    "GET",
    "/api/attachments/{id}",
    await t.request("GET", `/api/attachments/${attachment.id}`, { token }),
    200,
  );
  const sent = await check(
    "POST",
    "/api/conversations/{id}/messages",
    await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
      token,
      body: { content: "hello", attachmentIds: [attachment.id] },
    }),
    201,
  );
  const message = await sent.json();
  await check(
    "GET",
    "/api/conversations/{id}/messages",
    await t.request("GET", `/api/conversations/${conversation.id}/messages`, { token }),
    200,
  );
  await check(
    "PUT",
    "/api/messages/{id}",
    await t.request("PUT", `/api/messages/${message.id}`, { token, body: { content: "edited" } }),
    200,
  );
  await check(
    "PUT",
    "/api/messages/{id}/read",
    await t.request("PUT", `/api/messages/${message.id}/read`, { token: other.accessToken }),
    200,
  );
  await check(
    "POST",
    "/api/conversations/{id}/typing",
    await t.request("POST", `/api/conversations/${conversation.id}/typing`, {
      token,
      body: { isTyping: true },
    }),
    202,
  );
  await check(
    "GET",
    "/api/realtime/poll",
    await t.request("GET", `/api/realtime/poll?topics=user:${me.user.id}&timeout=0`, { token }),
    200,
  );
  await check(
    "DELETE",
    "/api/messages/{id}",
    await t.request("DELETE", `/api/messages/${message.id}`, { token }),
    200,
  );
  const group = await (await t.request("POST", "/api/conversations", {
    token,
    body: { type: "group", participantIds: [other.user.id], title: "Tour" },
  })).json();
  const third = await createUser(t.deps, "MEMBER");
  await check(
    "POST",
    "/api/conversations/{id}/participants",
    await t.request("POST", `/api/conversations/${group.id}/participants`, {
      token,
      body: { userIds: [third.id] },
    }),
    200,
  );
  await check(
    "DELETE",
    "/api/conversations/{id}/participants/{userId}",
    await t.request("DELETE", `/api/conversations/${group.id}/participants/${third.id}`, {
      token,
    }),
    200,
  );

  // As ADMIN.
  const admin = await signInAs(t, "ADMIN");
  const asAdmin = { token: admin.accessToken };
  await check("GET", "/api/admin/users", await t.request("GET", "/api/admin/users", asAdmin), 200);
  await check(
    "PUT",
    "/api/admin/users/{id}/role",
    await t.request("PUT", `/api/admin/users/${third.id}/role`, {
      ...asAdmin,
      body: { role: "CONFIDENTIAL", reason: "tour" },
    }),
    200,
  );
  const config = await check(
    "GET",
    "/api/admin/config",
    await t.request("GET", "/api/admin/config", asAdmin),
    200,
  );
  const { version } = await config.json();
  await check(
    "PUT",
    "/api/admin/config",
    await t.request("PUT", "/api/admin/config", {
      ...asAdmin,
      body: { config: {}, reason: "tour", expectedVersion: version },
    }),
    200,
  );
  await check(
    "GET",
    "/api/admin/analytics",
    await t.request("GET", "/api/admin/analytics?interval=week", asAdmin),
    200,
  );
  for (const ip of ["127.0.0.1", "::1"]) {
    await check(
      "GET",
      "/api/admin/security-events",
      await t.request("GET", `/api/admin/security-events?limit=5&ip=${ip}`, asAdmin),
      200,
    );
    await check(
      "GET",
      "/api/admin/access-logs",
      await t.request("GET", `/api/admin/access-logs?limit=5&ip=${ip}`, asAdmin),
      200,
    );
  }
  await check(
    "POST",
    "/api/auth/signout",
    await t.request("POST", "/api/auth/signout", { token }),
    200,
  );
  await check("GET", "/api/auth/session", await t.request("GET", "/api/auth/session"), 200);
  await signIn(t, email); // the account still signs in after the tour
  assert.deepEqual(problems, []);
});

test("[openapi] real answers validate against the document: sign-in providers, sessions, identities, the account, suspension", async () => {
  const problems: string[] = [];
  const check = async (method: string, path: string, response: Response, status?: number) => {
    if (status !== undefined && response.status !== status) {
      problems.push(`${method} ${path}: ${response.status}, expected ${status}`);
    }
    problems.push(...await validator.check(method, path, response));
    return response;
  };

  await check("GET", "/api/auth/providers", await t.request("GET", "/api/auth/providers"), 200);
  // A wallet, as an integrator and as a browser.
  const signer = privateKeyToAccount(generatePrivateKey());
  const walletBody = async () => {
    const nonceResponse = await check(
      "GET",
      "/api/auth/nonce",
      await t.request("GET", "/api/auth/nonce"),
      200,
    );
    const message = createSiweMessage({
      address: signer.address,
      domain: new URL(SITE).host,
      uri: SITE,
      version: "1",
      chainId: 31337,
      nonce: (await nonceResponse.json()).nonce,
      issuedAt: new Date(),
    });
    return { provider: "wallet", message, signature: await signer.signMessage({ message }) };
  };
  const walletSession = await (await check(
    "POST",
    "/api/auth/signin",
    await t.request("POST", "/api/auth/signin", { body: await walletBody() }),
    200,
  )).json();
  await check(
    "POST",
    "/api/auth/signin",
    await t.request("POST", "/api/auth/signin", {
      body: await walletBody(),
      headers: { origin: SITE },
    }),
    200,
  );

  // Google in a browser, Apple for an integrator.
  peers.google.identity = {
    sub: `tour-${crypto.randomUUID()}`,
    email: uniqueEmail("tour-g"),
    email_verified: true,
  };
  const google = await startSignIn(t, "google");
  await check("POST", "/api/auth/signin", google.response);
  const back = await authorizeAtProvider(google.url);
  await check(
    "GET",
    "/api/auth/callback/{provider}",
    await callback(t, "google", {
      code: back.searchParams.get("code")!,
      state: back.searchParams.get("state")!,
    }, { cookies: { [BINDING_COOKIE]: google.binding! } }),
    303,
  );
  peers.apple.identity = {
    sub: `tour-${crypto.randomUUID()}`,
    email: uniqueEmail("tour-a"),
    email_verified: "true",
  };
  const verifier = "t".repeat(43);
  const apple = await startSignIn(t, "apple", { codeChallenge: await sha256Base64url(verifier) });
  const appleBack = await authorizeAtProvider(apple.url);
  const posted = await check(
    "POST",
    "/api/auth/callback/apple",
    await callback(t, "apple", {
      code: appleBack.searchParams.get("code")!,
      state: appleBack.searchParams.get("state")!,
    }),
    303,
  );
  const code = new URL(posted.headers.get("location")!).searchParams.get("code");
  const appleSession = await (await check(
    "POST",
    "/api/auth/exchange",
    await t.request("POST", "/api/auth/exchange", { body: { code, codeVerifier: verifier } }),
    200,
  )).json();

  // Sessions and identities.
  const token = appleSession.accessToken as string;
  const second = await signIn(t, appleSession.user.email);
  await check(
    "GET",
    "/api/auth/sessions",
    await t.request("GET", "/api/auth/sessions", { token }),
    200,
  );
  const secondId =
    (await (await t.request("GET", "/api/auth/sessions", { token: second.accessToken }))
      .json()).items.find((s: { current: boolean }) => s.current).id;
  await check(
    "DELETE",
    "/api/auth/sessions/{id}",
    await t.request("DELETE", `/api/auth/sessions/${secondId}`, { token }),
    200,
  );
  await check(
    "DELETE",
    "/api/auth/sessions",
    await t.request("DELETE", "/api/auth/sessions?scope=others", { token }),
    200,
  );
  const identities = await (await check(
    "GET",
    "/api/auth/identities",
    await t.request("GET", "/api/auth/identities", { token }),
    200,
  )).json();
  const appleIdentity = identities.items.find((i: { provider: string }) => i.provider === "apple");
  await check(
    "DELETE",
    "/api/auth/identities/{id}",
    await t.request("DELETE", `/api/auth/identities/${appleIdentity.id}`, { token }),
    200,
  );

  // The account.
  await check(
    "GET",
    "/api/account/export",
    await t.request("GET", "/api/account/export", { token }),
    200,
  );
  await check(
    "DELETE",
    "/api/account",
    await t.request("DELETE", "/api/account", {
      token: walletSession.accessToken,
      body: { confirm: "delete my account" },
    }),
    202,
  );

  // Suspension and signout by an ADMIN.
  const admin = await signInAs(t, "ADMIN");
  const target = await createUser(t.deps, "MEMBER");
  await check(
    "PUT",
    "/api/admin/users/{id}/status",
    await t.request("PUT", `/api/admin/users/${target.id}/status`, {
      token: admin.accessToken,
      body: { status: "suspended", reason: "tour" },
    }),
    200,
  );
  await check(
    "POST",
    "/api/admin/users/{id}/signout",
    await t.request("POST", `/api/admin/users/${target.id}/signout`, { token: admin.accessToken }),
    200,
  );
  assert.deepEqual(problems, []);
});

test("[openapi] real answers of the store validate against the document: a tour of its routes", async () => {
  const problems: string[] = [];
  const check = async (method: string, path: string, response: Response, status: number) => {
    if (response.status !== status) {
      problems.push(
        `${method} ${path}: ${response.status}, expected ${status}: ${await response.clone()
          .text()}`,
      );
    }
    problems.push(...await validator.check(method, path, response));
    return await response.json();
  };
  const admin = await signInAs(t, "ADMIN");
  const owner = await signInAs(t, "MEMBER");
  const buyer = await signInAs(t, "SUBSCRIBER");
  const vendor = await check(
    "POST",
    "/api/store/vendors/apply",
    await t.request("POST", "/api/store/vendors/apply", {
      token: owner.accessToken,
      body: {
        name: `Tour ${crypto.randomUUID().slice(0, 6)}`,
        contactEmail: "t@example.test",
        country: "US",
      },
    }),
    201,
  );
  await check(
    "PUT",
    "/api/admin/vendors/{id}/status",
    await t.request("PUT", `/api/admin/vendors/${vendor.id}/status`, {
      token: admin.accessToken,
      body: { status: "approved", reason: "tour", commissionBps: 400 },
    }),
    200,
  );
  await check(
    "GET",
    "/api/admin/vendors",
    await t.request("GET", "/api/admin/vendors?limit=2", { token: admin.accessToken }),
    200,
  );
  await check(
    "GET",
    "/api/store/vendors",
    await t.request("GET", "/api/store/vendors?limit=2"),
    200,
  );
  const item = await check(
    "POST",
    "/api/store/products",
    await t.request("POST", "/api/store/products", {
      token: owner.accessToken,
      body: {
        title: "Tour lamp",
        description: "bright",
        category: "lighting",
        tags: ["tour"],
        images: ["https://example.test/lamp.png"],
        price: { amount: 2500, currency: "USD" },
        stock: 4,
      },
    }),
    201,
  );
  await check(
    "PUT",
    "/api/store/products/{id}",
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token: owner.accessToken,
      body: { stock: 5 },
    }),
    200,
  );
  await check(
    "GET",
    "/api/store/products/{id}",
    await t.request("GET", `/api/store/products/${item.id}`),
    200,
  );
  await check(
    "GET",
    "/api/store/products",
    await t.request("GET", "/api/store/products?q=lamp&sort=price_asc&limit=1"),
    200,
  );
  const made = await check(
    "POST",
    "/api/store/orders",
    await t.request("POST", "/api/store/orders", {
      token: buyer.accessToken,
      body: { items: [{ productId: item.id, quantity: 1 }] },
    }),
    201,
  );
  const orderId = made.checkout.orders[0].id;
  // The payment, as the dev provider sends it: a signed event through the webhook.
  const provider = t.deps.payments as DevPaymentProvider;
  const event = JSON.stringify(
    await provider.settleIntent(made.checkout.payment.paymentIntentId, "succeed"),
  );
  await check(
    "POST",
    "/api/store/webhooks/stripe",
    await t.request("POST", "/api/store/webhooks/stripe", {
      headers: {
        "content-type": "application/json",
        "stripe-signature": await signWebhook(event, await provider.webhookSecret()),
      },
      rawBody: event,
    }),
    200,
  );
  await drain(t.deps, { registry: appJobs() });
  await check(
    "GET",
    "/api/store/orders/{id}",
    await t.request("GET", `/api/store/orders/${orderId}`, { token: buyer.accessToken }),
    200,
  );
  await check(
    "GET",
    "/api/store/orders",
    await t.request("GET", "/api/store/orders?as=vendor", { token: owner.accessToken }),
    200,
  );
  for (
    const [status, extra] of [["processing", {}], ["shipped", {
      trackingNumber: "T-1",
      carrier: "UPS",
    }], ["delivered", {}]] as const
  ) {
    await check(
      "PUT",
      "/api/store/orders/{id}/status",
      await t.request("PUT", `/api/store/orders/${orderId}/status`, {
        token: owner.accessToken,
        body: { status, ...extra },
      }),
      200,
    );
  }
  await check(
    "POST",
    "/api/admin/settlements/run",
    await t.request("POST", "/api/admin/settlements/run", { token: admin.accessToken, body: {} }),
    200,
  );
  await check(
    "GET",
    "/api/admin/settlements",
    await t.request("GET", `/api/admin/settlements?vendorId=${vendor.id}`, {
      token: admin.accessToken,
    }),
    200,
  );
  await check(
    "GET",
    "/api/store/vendors/me/settlements",
    await t.request("GET", "/api/store/vendors/me/settlements", { token: owner.accessToken }),
    200,
  );
  await check(
    "POST",
    "/api/store/vendors/me/payouts",
    await t.request("POST", "/api/store/vendors/me/payouts", { token: owner.accessToken }),
    200,
  );
  await check(
    "GET",
    "/api/store/vendors/me",
    await t.request("GET", "/api/store/vendors/me", { token: owner.accessToken }),
    200,
  );
  await check(
    "GET",
    "/api/admin/analytics",
    await t.request("GET", "/api/admin/analytics", { token: admin.accessToken }),
    200,
  );
  assert.deepEqual(problems, []);
});

test("[openapi] an attachment download is documented with the file's own type; ip is a standard IPv4 or IPv6 string", () => {
  const op = doc.paths["/api/attachments/{id}"].get;
  assert.deepEqual(Object.keys(op.responses["200"].content), ["*/*"]);
  const ip = (doc.paths["/api/admin/security-events"].get.parameters as {
    name: string;
    schema: Record<string, unknown>;
  }[]).find((p) => p.name === "ip");
  assert.deepEqual(ip?.schema, {
    type: "string",
    anyOf: [{ format: "ipv4" }, { format: "ipv6" }],
    description: "An IPv4 or IPv6 address",
  });
});

test("[openapi] the unsafe operations a cookie session's CSRF check refuses with 403 declare 403; so do the store's reads while it is off", () => {
  // The CSRF refusal (core/middleware/csrf.ts) applies to every unsafe method of a cookie
  // session; these operations had not declared it.
  for (
    const [path, method] of [
      ["/api/auth/sessions", "delete"],
      ["/api/auth/sessions/{id}", "delete"],
      ["/api/auth/identities/{id}", "delete"],
      ["/api/auth/refresh", "post"],
      ["/api/store/webhooks/stripe", "post"],
    ] as const
  ) {
    assert.ok(doc.paths[path]?.[method]?.responses?.["403"], `${method} ${path} declares 403`);
  }
  // The store's public reads answer 403 while the store is switched off (the feature gate).
  assert.ok(doc.paths["/api/store/products"].get.responses["403"], "GET /api/store/products");
  assert.ok(
    doc.paths["/api/store/products/{id}"].get.responses["403"],
    "GET /api/store/products/{id}",
  );
});

test("[openapi] whiteLabel.customDomain's pattern is a plain JSON Schema pattern that takes a host name", () => {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== "object" || node === null) return;
    const record = node as Record<string, unknown>;
    const custom = (record.properties as Record<string, { pattern?: string }> | undefined)
      ?.customDomain;
    if (custom) {
      const options = (custom as { anyOf?: { pattern?: string }[] }).anyOf ?? [custom];
      for (const option of options) if (option.pattern) found.push(option.pattern);
    }
    Object.values(record).forEach(walk);
  };
  walk(doc);
  assert.ok(found.length > 0, "the document has customDomain's pattern");
  for (const pattern of found) {
    const re = new RegExp(pattern);
    assert.ok(re.test("shop.example.com"), `${pattern} takes shop.example.com`);
    assert.ok(re.test("Shop.Example.COM"), `${pattern} takes capitals`);
    assert.ok(!re.test("not a host"), `${pattern} refuses "not a host"`);
  }
});
