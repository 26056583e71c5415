/**
 * /api/account: the caller's data, exported as one JSON document, and deleting the account. Any
 * signed-in user (declared on this router). What is exported, erased and kept, and why:
 * docs/account.md. Queries: account/account.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireSignIn } from "../core/middleware/roles.ts";
import { requireFreshSignIn } from "../core/middleware/freshness.ts";
import { clearSessionCookies } from "../core/cookies.ts";
import { deleteOwnAccount, exportOwnAccount } from "./account.queries.ts";

export const account = router();
account.use("*", requireSignIn());

const list = z.array(z.record(z.string(), z.unknown()));
const part = z.record(z.string(), z.unknown()).nullable();

const exportSchema = z.object({
  exportedAt: z.iso.datetime(),
  profile: z.record(z.string(), z.unknown()),
  identities: list,
  sessions: list,
  conversations: list,
  messages: list,
  notifications: list,
  preferences: part,
  orders: list,
  vendor: part,
  wallet: part,
}).openapi("AccountExport");

account.openapi(
  createRoute({
    method: "get",
    path: "/export",
    operationId: "exportAccount",
    summary: "The caller's data as one JSON document",
    description: "Profile (with role and status history), identities, sessions, the " +
      "conversations taken part in, every message written (earlier versions and files " +
      "included), notifications, preferences, orders, vendor and wallet (public data and " +
      "transactions). Never a secret: no token or token hash, no CSRF or refresh material, no " +
      "key material. Recorded as `account.exported`.",
    security: signedIn,
    responses: { 200: json(exportSchema, "The export"), ...errors(401) },
  }),
  async (c) => {
    const document = await asUser(
      c,
      (tx) => exportOwnAccount(tx, { ip: c.get("ip"), userAgent: c.get("userAgent") }),
    );
    c.header("Cache-Control", "no-store");
    c.header(
      "Content-Disposition",
      `attachment; filename="account-export-${new Date().toISOString().slice(0, 10)}.json"`,
    );
    return c.json(document as z.infer<typeof exportSchema>, 200);
  },
);

account.openapi(
  createRoute({
    method: "delete",
    path: "/",
    operationId: "deleteAccount",
    summary: "Delete the caller's account",
    description: "Needs a sign-in within `security.freshSignInSeconds` (403 " +
      "`reauthentication_required`). Every session ends at once; personal data is erased, " +
      "messages become tombstones, records others keep (orders, security events) keep nothing " +
      "that names the person. The last active ADMIN cannot delete their account (422). The " +
      "address may be used again and makes a new account.",
    security: signedIn,
    middleware: [requireFreshSignIn()] as const,
    request: { body: jsonBody(z.object({ confirm: z.literal("delete my account") })) },
    responses: {
      202: json(z.object({ deletedAt: z.iso.datetime() }), "Deleted"),
      ...errors(400, 401, 403, 422),
    },
  }),
  async (c) => {
    c.req.valid("json");
    // This process's queued log lines of the account go out first, so the deletion nulls them.
    await c.get("deps").accessLog.flush();
    const deletedAt = await asUser(
      c,
      (tx) => deleteOwnAccount(tx, { ip: c.get("ip"), userAgent: c.get("userAgent") }),
    );
    if (c.get("authVia") === "cookie") clearSessionCookies(c);
    // The account is gone: this request's access-log line names nobody either.
    c.set("user", null);
    return c.json({ deletedAt: deletedAt.toISOString() }, 202);
  },
);
