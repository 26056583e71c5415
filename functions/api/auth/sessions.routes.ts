/**
 * /api/auth/sessions: the caller's live sessions, and ending them (one, or all but the current
 * one), effective at once: every request reads its session row, the topic rule reads live
 * sessions only, and open SSE streams re-check theirs at each heartbeat (ASVS 7.5.2). Any
 * signed-in user (declared on this router). Queries: auth/sessions.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  errors,
  json,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireSignIn } from "../core/middleware/roles.ts";
import { notFound } from "../../_shared/errors.ts";
import {
  listOwnSessions,
  revokeOtherOwnSessions,
  revokeOwnSessionById,
} from "./sessions.queries.ts";
import { clearSessionCookies } from "../core/cookies.ts";

export const sessions = router();
sessions.use("*", requireSignIn());

const sessionItem = z.object({
  id: z.uuid(),
  current: z.boolean().openapi({ description: "The session this request was made with" }),
  provider: z.string().openapi({ description: "email, google, apple or wallet" }),
  createdAt: z.iso.datetime(),
  lastSeenAt: z.iso.datetime().openapi({
    description: "The last sign-in or token refresh (accurate to the access-token lifetime)",
  }),
  authenticatedAt: z.iso.datetime().openapi({ description: "The access token's auth_time" }),
  expiresAt: z.iso.datetime(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
}).openapi("SessionItem");

sessions.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listSessions",
    summary: "The caller's live sessions, newest first",
    security: signedIn,
    request: {
      query: z.object({ limit: limitParam, cursor: z.string().max(500).optional() }),
    },
    responses: {
      200: json(
        pageOf(sessionItem),
        "A page of live sessions",
      ),
      ...errors(400, 401),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const user = c.get("user")!;
    const page = await asUser(
      c,
      (tx) => listOwnSessions(tx, { currentSessionId: user.sessionId, after, limit: q.limit }),
    );
    c.header("Cache-Control", "no-store");
    return c.json(page, 200);
  },
);

sessions.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    operationId: "revokeSession",
    summary: "End one of the caller's sessions at once",
    description: "Its access tokens are refused from the next request on, and its realtime " +
      "subscriptions end. Ending the current session signs this client out (cookies cleared). " +
      "A session already ended answers with when it ended; another user's session is 404.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(z.object({ id: z.uuid(), revokedAt: z.iso.datetime() }), "The session ended"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const user = c.get("user")!;
    const revoked = await asUser(c, (tx) => revokeOwnSessionById(tx, id));
    if (!revoked) throw notFound("No such session.");
    if (revoked.revokedNow) {
      await c.get("deps").security({
        type: "auth.session_revoked",
        userId: user.id,
        ip: c.get("ip"),
        userAgent: c.get("userAgent"),
        details: { sessionId: id, current: id === user.sessionId },
      });
    }
    if (id === user.sessionId && c.get("authVia") === "cookie") clearSessionCookies(c);
    return c.json({ id: revoked.id, revokedAt: revoked.revokedAt.toISOString() }, 200);
  },
);

sessions.openapi(
  createRoute({
    method: "delete",
    path: "/",
    operationId: "revokeOtherSessions",
    summary: "End every session of the caller but the current one",
    description: "`scope=others` (the only scope): every other live session ends at once.",
    security: signedIn,
    request: { query: z.object({ scope: z.enum(["others"]) }) },
    responses: {
      200: json(z.object({ revoked: z.number().int().min(0) }), "How many sessions ended"),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    c.req.valid("query");
    const user = c.get("user")!;
    const revoked = await asUser(c, (tx) => revokeOtherOwnSessions(tx, user.sessionId));
    await c.get("deps").security({
      type: "auth.sessions_revoked",
      userId: user.id,
      ip: c.get("ip"),
      userAgent: c.get("userAgent"),
      details: { scope: "others", revoked, keptSessionId: user.sessionId },
    });
    return c.json({ revoked }, 200);
  },
);
