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
import { deleteOwnAccount, streamOwnAccount } from "./account.queries.ts";

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
    description:
      "Streamed as it is read (any size: each list that grows, conversations, messages, " +
      "notifications, orders and the wallet's transactions, through a cursor in one " +
      "transaction). Profile (with role and status history), identities, sessions, the " +
      "conversations taken part in, every message written (earlier versions and files " +
      "included), notifications, preferences, orders, vendor and wallet (public data and " +
      "transactions). Never a secret: no token or token hash, no CSRF or refresh material, no " +
      "key material. Recorded as `account.exported`.",
    security: signedIn,
    responses: { 200: json(exportSchema, "The export"), ...errors(401) },
  }),
  async (c) => {
    const client = { ip: c.get("ip"), userAgent: c.get("userAgent") };
    // Streamed (docs/account.md): the transaction stays open while the response is written,
    // a cursor batch of each list at a time, each write waiting for the client to read.
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    const encoder = new TextEncoder();
    let begun!: () => void;
    const started = new Promise<void>((resolve) => begun = resolve);
    const streaming = asUser(c, (tx) =>
      streamOwnAccount(tx, client, begun, async (text) => {
        await writer.ready;
        await writer.write(encoder.encode(text));
      })).then(
        () => writer.close(),
        (err) => {
          // Before the first byte the error is the route's answer (below); after it the
          // response can only end short of its closing bracket, which no parser accepts.
          void writer.abort(err).catch(() => {});
          throw err;
        },
      );
    // The first statement's outcome (the caller checked, the event recorded) or its error.
    await Promise.race([started, streaming]);
    streaming.catch((err) =>
      c.get("deps").log("warn", "account export: stopped while streaming", { error: String(err) })
    );
    c.header("Cache-Control", "no-store");
    c.header(
      "Content-Disposition",
      `attachment; filename="account-export-${new Date().toISOString().slice(0, 10)}.json"`,
    );
    // Through the context, so the headers the middleware prepared (request id, security) go too.
    return c.body(readable, 200, { "Content-Type": "application/json; charset=UTF-8" }) as never;
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
