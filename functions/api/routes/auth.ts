/**
 * /api/auth: sign-in (magic links now; Google, Apple and wallets in their own issue), the
 * magic-link callback, token verification and refresh for integrators, CSRF, signout, session,
 * and the access token a cookie-signed-in page keeps in memory for Realtime.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type AppEnv, ROLES, type SessionUser } from "../context.ts";
import { anyone, errors, json, jsonBody, router, signedIn } from "../openapi.ts";
import { badRequest, forbidden, unauthenticated } from "../../_shared/errors.ts";
import { randomToken } from "../../_shared/crypto.ts";
import { asUser } from "../as-user.ts";
import { requireSignIn } from "../middleware/roles.ts";
import { revokeOwnSession } from "../queries/auth.ts";
import { sendMagicLink, signInWithMagicLink } from "../auth/magic-links.ts";
import { accessTokenFor, type IssuedSession, refreshOrThrow } from "../auth/sessions.ts";
import {
  clearSessionCookies,
  noStore,
  readCookie,
  REFRESH_COOKIE,
  setCsrfCookie,
  setSessionCookies,
} from "../auth/cookies.ts";
import { csrfTokenFor } from "../middleware/csrf.ts";
import { safeRedirect } from "../auth/redirects.ts";
import { rateRecorder } from "../rate-headers.ts";

export const auth = router();

export const sessionUserSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  email: z.string(),
  role: z.enum(ROLES),
  image: z.string().nullable(),
  walletAddress: z.string().nullable(),
}).openapi("SessionUser");

const sessionSchema = z.object({
  accessToken: z.string(),
  refreshToken: z.string(),
  expiresAt: z.iso.datetime().openapi({ description: "When the access token expires" }),
  user: sessionUserSchema,
}).openapi("Session");

export function publicUser(user: SessionUser) {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    role: user.role,
    image: user.image,
    walletAddress: user.walletAddress,
  };
}

function sessionResponse(session: IssuedSession) {
  return {
    accessToken: session.accessToken,
    refreshToken: session.refreshToken,
    expiresAt: new Date(session.expiresAt * 1000).toISOString(),
    user: publicUser(session.user),
  };
}

function requestCtx(c: Context<AppEnv>) {
  return { ip: c.get("ip"), userAgent: c.get("userAgent"), rate: rateRecorder(c) };
}

/** A redirect target must be a local path or a URL on an allow-listed origin (auth/redirects.ts). */
function checkRedirect(c: Context<AppEnv>, redirectTo: string | undefined): string | null {
  if (redirectTo === undefined) return null;
  const safe = safeRedirect(redirectTo, c.get("deps").settings);
  if (safe) return safe;
  throw badRequest("redirectTo is not an allowed destination.", [
    { path: "redirectTo", message: "use a path or a URL on an allowed origin" },
  ]);
}

// POST /api/auth/signin ---------------------------------------------------------------------

const signinBody = z.discriminatedUnion("provider", [
  z.object({
    provider: z.literal("email"),
    email: z.email().max(320).transform((e) => e.toLowerCase()),
    redirectTo: z.string().max(2048).optional(),
  }),
  z.object({ provider: z.literal("google"), redirectTo: z.string().max(2048).optional() }),
  z.object({ provider: z.literal("apple"), redirectTo: z.string().max(2048).optional() }),
  z.object({
    provider: z.literal("wallet"),
    message: z.string().max(4096),
    signature: z.string().max(1024),
  }),
]).openapi("SigninRequest");

auth.openapi(
  createRoute({
    method: "post",
    path: "/signin",
    operationId: "signIn",
    security: anyone,
    summary: "Start signing in with a provider",
    description:
      "Email sends a single-use magic link (the same answer whether or not the address " +
      "has an account). Google, Apple and wallet sign-in are refused with 400 until configured.",
    request: { body: jsonBody(signinBody) },
    responses: {
      202: json(
        z.object({ sent: z.literal(true) }),
        "The link was sent if the address can sign in",
      ),
      ...errors(400, 429),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    if (body.provider === "email" && !(await c.get("deps").config.get()).features.signIn.email) {
      throw badRequest("Sign-in with email is turned off.", [{
        path: "provider",
        message: "email is disabled",
      }]);
    }
    if (body.provider !== "email") {
      throw badRequest(`Sign-in with ${body.provider} is not available yet.`, [
        { path: "provider", message: "only email is enabled" },
      ]);
    }
    const redirectTo = checkRedirect(c, body.redirectTo);
    await sendMagicLink(c.get("deps"), { email: body.email, redirectTo }, requestCtx(c));
    return c.json({ sent: true as const }, 202);
  },
);

// GET /api/auth/callback/:provider ----------------------------------------------------------

auth.openapi(
  createRoute({
    method: "get",
    path: "/callback/{provider}",
    operationId: "finishSignIn",
    security: anyone,
    summary: "Finish a browser sign-in",
    description: "For email, `token` is the magic-link token. Sets the session cookies and " +
      "redirects (303) to the `redirectTo` given at sign-in, or to the site.",
    request: {
      params: z.object({ provider: z.enum(["email", "google", "apple"]) }),
      query: z.object({ token: z.string().min(1).max(512) }),
    },
    responses: { 303: { description: "Signed in; redirect" }, ...errors(400, 401, 403, 429) },
  }),
  async (c) => {
    const { provider } = c.req.valid("param");
    if (provider !== "email") throw badRequest(`Sign-in with ${provider} is not available yet.`);
    const { token } = c.req.valid("query");
    const { session, redirectTo } = await signInWithMagicLink(c.get("deps"), token, requestCtx(c));
    setSessionCookies(c, session);
    setCsrfCookie(c, await csrfTokenFor(c.get("deps"), session.user.sessionId));
    // Checked again: the allowed origins may have changed since the link was sent.
    const settings = c.get("deps").settings;
    const target = (redirectTo && safeRedirect(redirectTo, settings)) ?? `${settings.siteUrl}/`;
    return c.redirect(target, 303);
  },
);

// POST /api/auth/verify ---------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "post",
    path: "/verify",
    operationId: "verifyMagicLink",
    security: anyone,
    summary: "Exchange a magic-link token for a session (non-browser clients)",
    request: { body: jsonBody(z.object({ token: z.string().min(1).max(512) })) },
    responses: { 200: json(sessionSchema, "A new session"), ...errors(400, 401, 403, 429) },
  }),
  async (c) => {
    const { token } = c.req.valid("json");
    noStore(c);
    const { session } = await signInWithMagicLink(c.get("deps"), token, requestCtx(c));
    return c.json(sessionResponse(session), 200);
  },
);

// POST /api/auth/refresh --------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "post",
    path: "/refresh",
    operationId: "refreshSession",
    security: anyone,
    summary: "Rotate a refresh token",
    description: "Send `refreshToken` (integrators) or the refresh cookie (browsers: the answer " +
      "then sets new cookies and leaves the tokens out). The old token is spent; presenting a " +
      "spent token again revokes the whole session.",
    request: {
      body: {
        required: false,
        content: {
          "application/json": {
            schema: z.object({ refreshToken: z.string().min(1).max(512).optional() }),
          },
        },
      },
    },
    responses: {
      200: json(
        sessionSchema.partial({ accessToken: true, refreshToken: true }),
        "The rotated session",
      ),
      ...errors(400, 401, 429),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const body = c.req.valid("json") ?? {};
    noStore(c);
    const cookie = readCookie(c, REFRESH_COOKIE);
    const token = body.refreshToken ?? cookie;
    if (!token) throw unauthenticated("No refresh token.");
    // The session middleware may have rotated this very token already (an expired access
    // cookie): its successor is the answer, and the token is not spent a second time.
    const refreshed = token === cookie ? c.get("refreshed") : null;
    let session: IssuedSession;
    try {
      session = refreshed ?? await refreshOrThrow(deps, token, requestCtx(c));
    } catch (err) {
      if (!body.refreshToken) clearSessionCookies(c);
      throw err;
    }
    if (body.refreshToken) return c.json(sessionResponse(session), 200);
    if (!refreshed) setSessionCookies(c, session);
    const { accessToken: _a, refreshToken: _r, ...visible } = sessionResponse(session);
    return c.json(visible, 200);
  },
);

// GET /api/auth/csrf ------------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "get",
    path: "/csrf",
    operationId: "getCsrfToken",
    security: anyone,
    summary: "The CSRF token for cookie-authenticated unsafe requests",
    description: "Send it back as `X-CSRF-Token`. Bound to the session; also set as the " +
      "`agora-csrf` cookie.",
    responses: { 200: json(z.object({ csrfToken: z.string() }), "The token") },
  }),
  async (c) => {
    const user = c.get("user");
    const csrfToken = user ? await csrfTokenFor(c.get("deps"), user.sessionId) : randomToken();
    setCsrfCookie(c, csrfToken);
    c.header("Cache-Control", "no-store");
    return c.json({ csrfToken }, 200);
  },
);

// POST /api/auth/signout --------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "post",
    path: "/signout",
    operationId: "signOut",
    summary: "Sign out: the session is revoked at once, cookies cleared",
    security: signedIn,
    // The one route of this router that needs a session (the others start or read one).
    middleware: [requireSignIn()] as const,
    responses: {
      200: json(z.object({ signedOut: z.literal(true) }), "Signed out"),
      ...errors(401, 403),
    },
  }),
  async (c) => {
    const user = c.get("user")!;
    const deps = c.get("deps");
    await asUser(c, (tx) => revokeOwnSession(tx, user.sessionId));
    clearSessionCookies(c);
    await deps.security({
      type: "auth.signout",
      userId: user.id,
      ip: c.get("ip"),
      userAgent: c.get("userAgent"),
      details: { sessionId: user.sessionId },
    });
    return c.json({ signedOut: true as const }, 200);
  },
);

// GET /api/auth/session ---------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "get",
    path: "/session",
    operationId: "getSession",
    security: anyone,
    summary: "The current session's user, or null when signed out",
    responses: {
      200: json(
        // A union, not .nullable(): that would put null beside the $ref in an allOf, which no
        // null validates against.
        z.object({
          user: z.union([sessionUserSchema, z.null()]),
          expiresAt: z.iso.datetime().nullable(),
        }),
        "The session",
      ),
    },
  }),
  (c) => {
    const user = c.get("user");
    const exp = c.get("accessExpiresAt");
    c.header("Cache-Control", "no-store");
    return c.json({
      user: user ? publicUser(user) : null,
      expiresAt: user && exp ? new Date(exp * 1000).toISOString() : null,
    }, 200);
  },
);

// POST /api/auth/token ----------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "post",
    path: "/token",
    operationId: "issuePageToken",
    summary: "An access token for the page's own Realtime client (cookie sessions only)",
    description: "A browser page signed in by cookie keeps this token in memory (never in " +
      "storage) for what cannot send cookies: the Realtime WebSocket (supabase-js `setAuth`), " +
      "and the client transport's SSE and long-poll requests. A new token of the cookie's " +
      "session, with the usual lifetime; ask again before `expiresAt`. Needs `X-CSRF-Token` " +
      "and an allowed `Origin` like any cookie-authenticated unsafe request, so another site " +
      "cannot obtain one. A bearer caller already holds its tokens: 403.",
    security: [{ cookie: [] }],
    responses: {
      200: json(
        z.object({
          accessToken: z.string(),
          expiresAt: z.iso.datetime().openapi({ description: "When the token expires" }),
        }).openapi("PageAccessToken"),
        "A new access token of the cookie's session",
      ),
      ...errors(401, 403),
    },
  }),
  async (c) => {
    const user = c.get("user");
    if (!user) throw unauthenticated();
    if (c.get("authVia") !== "cookie") {
      throw forbidden("Only a cookie session asks for its access token; a bearer caller has it.");
    }
    const { accessToken, expiresAt } = await accessTokenFor(c.get("deps"), user);
    c.header("Cache-Control", "no-store");
    c.header("Pragma", "no-cache");
    return c.json({ accessToken, expiresAt: new Date(expiresAt * 1000).toISOString() }, 200);
  },
);
