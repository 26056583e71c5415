/**
 * Role gates, over every route of the OpenAPI document: each resource router declares its
 * lowest role on itself, and this walk proves each route has one. A route documented as signed
 * in refuses an anonymous caller with 401, and a signed-in user below its lowest role with 403,
 * both before its input is validated (the requests carry a malformed path parameter and no
 * body). A new route is covered the day it is added; a new resource must say here which role it
 * needs.
 */
import assert from "node:assert/strict";
import { expectError, expectJson, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();
const doc = await expectJson(await t.request("GET", "/api/openapi.json"), 200);

type Role = "VISITOR" | "SUBSCRIBER" | "MEMBER" | "CONFIDENTIAL" | "ADMIN";

/** The lowest role of each resource, by path prefix: what its router declares. */
const LOWEST_ROLE: [prefix: string, role: Role][] = [
  ["/api/admin/", "ADMIN"],
  ["/api/users", "SUBSCRIBER"],
  ["/api/conversations", "SUBSCRIBER"],
  ["/api/messages/", "SUBSCRIBER"],
  ["/api/attachments", "SUBSCRIBER"],
  ["/api/wallet", "SUBSCRIBER"],
  ["/api/realtime/", "VISITOR"], // signed in, any role: the topic rule decides the rest
  ["/api/notifications/bulk", "ADMIN"],
  ["/api/notifications/analytics", "ADMIN"],
  ["/api/notifications", "VISITOR"], // every signed-in user has an inbox
  ["/api/auth/signout", "VISITOR"],
  ["/api/auth/token", "VISITOR"], // a cookie session of any role (bearer callers: 403)
  ["/api/auth/sessions", "VISITOR"], // the caller's own sessions, any role
  ["/api/auth/identities", "VISITOR"],
  ["/api/account", "VISITOR"], // export and deletion of one's own account, any role
  // The catalog and the vendor list are public (not signed-in routes); writes need SUBSCRIBER.
  ["/api/store/products", "SUBSCRIBER"],
  ["/api/store/orders", "SUBSCRIBER"],
  ["/api/store/vendors", "SUBSCRIBER"],
];
const BELOW: Record<Role, Role | null> = {
  VISITOR: null,
  SUBSCRIBER: "VISITOR",
  MEMBER: "SUBSCRIBER",
  CONFIDENTIAL: "MEMBER",
  ADMIN: "CONFIDENTIAL",
};

interface Route {
  method: string;
  path: string;
  signedIn: boolean;
}

const routes: Route[] = Object.entries(
  doc.paths as Record<string, Record<string, { security?: unknown[] }>>,
).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({
    method: method.toUpperCase(),
    // Path parameters that no route accepts: a gate that ran after validation would answer 400.
    path: path.replace(/\{[^}]+\}/g, "not-an-id"),
    // Signed in by a user's session (bearer or cookie); service-key routes (the job drain) have
    // their own gate and tests (tests/jobs/queue-drain.test.ts).
    signedIn: (op.security ?? []).some((s) =>
      "bearer" in (s as object) || "cookie" in (s as object)
    ),
  }))
);

const lowestRole = (path: string) => LOWEST_ROLE.find(([prefix]) => path.startsWith(prefix))?.[1];

const sessions = new Map<Role, string>();
for (const role of ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL"] as const) {
  sessions.set(role, (await signInAs(t, role)).accessToken);
}

test("[gates] every signed-in route belongs to a resource with a declared lowest role", () => {
  const signedIn = routes.filter((r) => r.signedIn);
  assert.ok(signedIn.length >= 20, "the document lists the signed-in routes");
  for (const route of signedIn) {
    assert.ok(lowestRole(route.path), `${route.method} ${route.path} has a lowest role here`);
  }
});

test("[gates] every signed-in route: anonymous is 401 before validation", async () => {
  for (const route of routes.filter((r) => r.signedIn)) {
    await expectError(await t.request(route.method, route.path), 401, "unauthenticated");
  }
});

test("[gates] every signed-in route: the role just below its lowest is 403 before validation", async () => {
  let checked = 0;
  for (const route of routes.filter((r) => r.signedIn)) {
    const below = BELOW[lowestRole(route.path)!];
    if (!below) continue;
    const token = sessions.get(below)!;
    await expectError(await t.request(route.method, route.path, { token }), 403, "forbidden");
    checked++;
  }
  assert.ok(checked >= 15, `${checked} routes checked below their role`);
});

test("[gates] the admin gate covers every path under /api/admin, unknown ones too", async () => {
  await expectError(await t.request("GET", "/api/admin/no-such-thing"), 401, "unauthenticated");
  await expectError(
    await t.request("GET", "/api/admin/no-such-thing", { token: sessions.get("CONFIDENTIAL") }),
    403,
    "forbidden",
  );
});
