/**
 * /api/auth: sign-in (magic links, Google, Apple, browser wallets), the providers' callbacks,
 * the integrators' code exchange and magic-link verification, refresh, CSRF, signout, session,
 * and the access token a cookie-signed-in page keeps in memory for Realtime. The caller's
 * sessions and identities are their own routers (sessions.ts, identities.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { type AppEnv, ROLES, type SessionUser } from "../core/context.ts";
import {
  anyone,
  errors,
  json,
  jsonBody,
  router,
  signedIn,
  validationHook,
} from "../core/openapi.ts";
import {
  ApiError,
  badRequest,
  forbidden,
  toApiError,
  unauthenticated,
} from "../../_shared/errors.ts";
import { randomToken } from "../../_shared/crypto.ts";
import { unstorablePath } from "../../_shared/storable.ts";
import { asUser } from "../core/doors.ts";
import { requireSignIn } from "../core/middleware/roles.ts";
import { revokeOwnSession } from "./signin.queries.ts";
import { sendMagicLink, signInWithMagicLink } from "./magic-links.ts";
import { accessTokenFor, refreshOrThrow } from "./sessions.ts";
import type { IssuedSession } from "../core/context.ts";
import {
  clearSessionCookies,
  noStore,
  readCookie,
  REFRESH_COOKIE,
  setCsrfCookie,
  setSessionCookies,
} from "../core/cookies.ts";
import { csrfTokenFor, requestOrigin } from "../core/middleware/csrf.ts";
import { safeRedirect } from "./redirects.ts";
import { setBindingCookie } from "./oauth.ts";
import { rateRecorder } from "../core/rate-headers.ts";
import { enforceRateLimit } from "../core/rate-limits.ts";
import { PROVIDERS, providerStates, requireProvider } from "./providers.ts";
import {
  BINDING_COOKIE,
  type CallbackParams,
  exchangeSignInCode,
  finishOAuth,
  startOAuth,
} from "./oauth.ts";
import { issueNonce, signInWithWallet } from "./siwe.ts";

export const auth = router();

export const sessionUserSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  email: z.string().nullable().openapi({
    description: "The account's verified address; null for an account without one (a wallet's)",
  }),
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

/** The session as the answer shows it to a browser: the tokens are in httpOnly cookies. */
const browserSessionSchema = sessionSchema.partial({ accessToken: true, refreshToken: true });

function requestCtx(c: Context<AppEnv>) {
  return { ip: c.get("ip"), userAgent: c.get("userAgent"), rate: rateRecorder(c) };
}

/**
 * A browser's request: it carries an allowed Origin (browsers send one on every POST made by
 * script). Browsers get the session in cookies and never see the tokens; other clients get the
 * tokens in the body.
 */
function fromBrowser(c: Context<AppEnv>): boolean {
  const origin = requestOrigin(c.req.raw.headers);
  return origin !== null && c.get("deps").settings.allowedOrigins.includes(origin);
}

/** Cookies for a browser (tokens left out of the body), or the tokens for an integrator. */
async function answerSession(c: Context<AppEnv>, session: IssuedSession, browser: boolean) {
  noStore(c);
  if (!browser) return sessionResponse(session);
  setSessionCookies(c, session);
  setCsrfCookie(c, await csrfTokenFor(c.get("deps"), session.user.sessionId));
  const { accessToken: _a, refreshToken: _r, ...visible } = sessionResponse(session);
  return visible;
}

/** The signed-in user `link: true` attaches the new identity to; 401 without a session. */
function linkTarget(c: Context<AppEnv>, link: boolean | undefined): string | null {
  if (!link) return null;
  const user = c.get("user");
  if (!user) throw unauthenticated("Sign in first to link another way of signing in.");
  return user.id;
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

// GET /api/auth/providers -------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "get",
    path: "/providers",
    operationId: "listSignInProviders",
    security: anyone,
    summary: "Which sign-in providers are on",
    description: "A provider is on when its settings are present and `features.signIn.<id>` " +
      "of the configuration is not false.",
    responses: {
      200: json(
        z.object({
          providers: z.array(z.object({ id: z.enum(PROVIDERS), enabled: z.boolean() })),
        }),
        "Every provider and whether it is on",
      ),
    },
  }),
  async (c) => c.json({ providers: await providerStates(c.get("deps")) }, 200),
);

// GET /api/auth/nonce -----------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "get",
    path: "/nonce",
    operationId: "getWalletNonce",
    security: anyone,
    summary: "A single-use nonce for a Sign-In with Ethereum message",
    description: "32 alphanumerics, valid for ten minutes, spent by the sign-in that uses it. " +
      "Rate-limited per IP. 400 `provider_disabled` when wallet sign-in is off.",
    responses: {
      200: json(
        z.object({ nonce: z.string().regex(/^[A-Za-z0-9]{8,}$/), expiresAt: z.iso.datetime() }),
        "The nonce",
      ),
      ...errors(400, 429),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    await requireProvider(deps, "wallet");
    const { nonce, expiresAt } = await issueNonce(deps, requestCtx(c));
    c.header("Cache-Control", "no-store");
    return c.json({ nonce, expiresAt: expiresAt.toISOString() }, 200);
  },
);

// POST /api/auth/signin ---------------------------------------------------------------------

const redirectToField = z.string().max(2048).optional();
const linkField = z.boolean().optional().openapi({
  description: "Attach this provider to the signed-in caller's account instead of signing in " +
    "by it (needs a session)",
});
const oauthSignin = (provider: "google" | "apple") =>
  z.object({
    provider: z.literal(provider),
    redirectTo: redirectToField,
    link: linkField,
    codeChallenge: z.string().regex(/^[A-Za-z0-9_-]{43}$/).optional().openapi({
      example: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      description: "Integrators: the base64url SHA-256 of a verifier of theirs (PKCE S256). " +
        "The callback then redirects with a single-use `code` instead of setting cookies; " +
        "POST /api/auth/exchange turns it and the verifier into tokens.",
    }),
  });

const signinBody = z.discriminatedUnion("provider", [
  z.object({
    provider: z.literal("email"),
    email: z.email().max(320).transform((e) => e.toLowerCase()),
    redirectTo: redirectToField,
  }),
  oauthSignin("google"),
  oauthSignin("apple"),
  z.object({
    provider: z.literal("wallet"),
    message: z.string().min(1).max(4096).openapi({
      description: "An EIP-4361 message with a nonce from GET /api/auth/nonce",
    }),
    signature: z.string().regex(/^0x[0-9a-fA-F]+$/).max(8192).openapi({
      description: "The wallet's signature of `message` (EIP-191 personal_sign), hex",
      example: "0x" + "ab".repeat(65),
    }),
    link: linkField,
  }),
]).openapi("SigninRequest");

auth.openapi(
  createRoute({
    method: "post",
    path: "/signin",
    operationId: "signIn",
    security: anyone,
    summary: "Sign in with a provider",
    description: "Email sends a single-use magic link (202, the same answer whether or not the " +
      "address has an account). Google and Apple answer the provider's authorization URL (200 " +
      "`{ url }`; browsers also get the flow's binding cookie). A wallet answers a session: " +
      "browsers (an allowed Origin) in cookies, others with the tokens in the body. A provider " +
      "that is off: 400 `provider_disabled`. Rate-limited per IP (and per address or wallet).",
    request: { body: jsonBody(signinBody) },
    responses: {
      200: json(
        z.union([z.object({ url: z.url() }), browserSessionSchema]),
        "The provider's authorization URL (google, apple), or a session (wallet)",
      ),
      202: json(
        z.object({ sent: z.literal(true) }),
        "The link was sent if the address can sign in",
      ),
      ...errors(400, 401, 403, 409, 429, 503),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const deps = c.get("deps");
    const ctx = requestCtx(c);
    await requireProvider(deps, body.provider);
    if (body.provider === "email") {
      const redirectTo = checkRedirect(c, body.redirectTo);
      await sendMagicLink(deps, { email: body.email, redirectTo }, ctx);
      return c.json({ sent: true as const }, 202);
    }
    await enforceRateLimit(deps, ctx, {
      bucket: `signin:ip:${ctx.ip ?? "unknown"}`,
      rule: deps.settings.rateLimits.signinPerIp,
      group: "signin_ip",
    });
    if (body.provider === "wallet") {
      const { session } = await signInWithWallet(deps, {
        message: body.message,
        signature: body.signature as `0x${string}`,
        linkUserId: linkTarget(c, body.link),
      }, ctx);
      return c.json(await answerSession(c, session, fromBrowser(c)), 200);
    }
    const redirectTo = checkRedirect(c, body.redirectTo);
    const started = await startOAuth(deps, {
      provider: body.provider,
      redirectTo,
      linkUserId: linkTarget(c, body.link),
      clientChallenge: body.codeChallenge ?? null,
      existingBinding: readCookie(c, BINDING_COOKIE) ?? null,
    }, ctx);
    if (started.binding) setBindingCookie(c, started.binding);
    c.header("Cache-Control", "no-store");
    return c.json({ url: started.url }, 200);
  },
);

// The callbacks -----------------------------------------------------------------------------

/** Sets the session cookies and redirects, or redirects an integrator or a failure. */
async function answerCallback(
  c: Context<AppEnv>,
  outcome: Awaited<ReturnType<typeof finishOAuth>>,
) {
  noStore(c);
  if (outcome.kind === "redirect") return c.redirect(outcome.location, 303);
  setSessionCookies(c, outcome.session);
  setCsrfCookie(c, await csrfTokenFor(c.get("deps"), outcome.session.user.sessionId));
  return c.redirect(outcome.redirectTo, 303);
}

const callbackParam = z.string().max(4096).optional();

/**
 * Where a browser lands when a callback refuses: the app's sign-in page with `?error=<code>`,
 * which says what happened and what to do (docs/sessions.md, "When a sign-in link fails"). The
 * callbacks are opened by a browser (a magic link, a provider's redirect or form post), so a
 * refusal is never an API error body there; integrators' `POST /api/auth/verify` and
 * `/exchange` keep theirs.
 */
function signinErrorPage(c: Context<AppEnv>, error: string) {
  noStore(c);
  const url = new URL(`${c.get("deps").settings.siteUrl.replace(/\/+$/, "")}/signin`);
  url.searchParams.set("error", error);
  return c.redirect(url.href, 303);
}

/** The `?error=` of a refusal at a callback (the sign-in page knows each). */
function callbackErrorCode(err: ApiError, provider: string): string {
  switch (err.code) {
    case "rate_limited":
    case "provider_disabled":
    case "unavailable":
      return err.code;
    case "forbidden":
      return (err.details as { reason?: string } | undefined)?.reason === "signups_closed"
        ? "signups_closed"
        : "suspended";
    default:
      // Used, expired, unknown or malformed: a magic link's token, a provider flow's state.
      return provider === "email" ? "link_invalid" : "invalid_state";
  }
}

/** Runs a callback; a refusal (4xx, or the service unavailable) lands on the sign-in page. */
async function orSigninErrorPage(
  c: Context<AppEnv>,
  provider: string,
  run: () => Promise<Response>,
): Promise<Response> {
  try {
    return await run();
  } catch (err) {
    const refusal = toApiError(err);
    if (!refusal || (refusal.status >= 500 && refusal.code !== "unavailable")) throw err;
    return signinErrorPage(c, callbackErrorCode(refusal, provider));
  }
}

/** The validation hook, except that a malformed callback lands on the sign-in page too. */
// deno-lint-ignore no-explicit-any
const callbackHook = (result: any, c: Context<AppEnv>) => {
  try {
    validationHook(result, c as never);
  } catch {
    return signinErrorPage(
      c,
      c.req.param("provider") === "email" ? "link_invalid" : "invalid_state",
    );
  }
};

auth.openapi(
  createRoute({
    method: "get",
    path: "/callback/{provider}",
    operationId: "finishSignIn",
    security: anyone,
    summary: "Finish a browser sign-in (magic link, Google)",
    description: "email: `token` is the magic-link token. google: the provider's redirect " +
      "(`code`, `state`, or `error`). Sets the session cookies and redirects (303) to the " +
      "`redirectTo` given at sign-in, or to the site; an integrator's Google flow redirects " +
      "with `code` for POST /api/auth/exchange instead. A failed Google callback whose state " +
      "is known redirects to that `redirectTo` with `?error=<code>`. Every other refusal is " +
      "also a 303, never an error body (a browser opened this URL): to the site's sign-in " +
      "page `/signin?error=<code>`, `link_invalid` (a magic link used, expired, unknown or " +
      "malformed: send a new one), `suspended` (the account is suspended), `signups_closed`, " +
      "`invalid_state` (a Google state missing, unknown, used or expired), `rate_limited`, " +
      "`provider_disabled`, `unavailable`. Non-browser clients use POST /api/auth/verify.",
    request: {
      params: z.object({ provider: z.enum(["email", "google"]) }),
      query: z.object({
        token: z.string().min(1).max(512).optional(),
        code: callbackParam,
        state: callbackParam,
        error: z.string().max(200).optional(),
        error_description: z.string().max(2048).optional(),
      }),
    },
    responses: {
      303: {
        description: "Signed in: to `redirectTo`. Refused: to `redirectTo?error=<code>` (a " +
          "Google flow whose state is known) or to `/signin?error=<code>`",
      },
    },
  }),
  (c) =>
    orSigninErrorPage(c, c.req.param("provider") ?? "email", async () => {
      const { provider } = c.req.valid("param");
      const query = c.req.valid("query");
      const deps = c.get("deps");
      if (provider === "google") {
        const outcome = await finishOAuth(
          deps,
          "google",
          { state: query.state, code: query.code, error: query.error },
          readCookie(c, BINDING_COOKIE) ?? null,
          requestCtx(c),
        );
        return await answerCallback(c, outcome);
      }
      if (!query.token) {
        throw badRequest("The sign-in link has no token.", [{
          path: "token",
          message: "required",
        }]);
      }
      const { session, redirectTo } = await signInWithMagicLink(deps, query.token, requestCtx(c));
      setSessionCookies(c, session);
      setCsrfCookie(c, await csrfTokenFor(deps, session.user.sessionId));
      // Checked again: the allowed origins may have changed since the link was sent.
      const settings = deps.settings;
      const target = (redirectTo && safeRedirect(redirectTo, settings)) ?? `${settings.siteUrl}/`;
      return c.redirect(target, 303);
    }),
  callbackHook,
);

auth.openapi(
  createRoute({
    method: "post",
    path: "/callback/apple",
    operationId: "finishAppleSignIn",
    security: anyone,
    summary: "Finish a Sign in with Apple (Apple's form post)",
    description: "Apple posts `code`, `state`, `id_token` and, on the first authorization only, " +
      "`user` (the name) from its own origin: no CSRF token can come along, so the route is " +
      "exempt from the CSRF check and protected by the flow's state and browser binding " +
      "instead. As the Google callback otherwise: a refusal is a 303 to `redirectTo?error=` " +
      "(a known state) or to `/signin?error=<code>` (`invalid_state`, `rate_limited`, ...), " +
      "never an error body; only a post that is not a form is 415.",
    request: {
      body: {
        required: false,
        content: {
          "application/x-www-form-urlencoded": {
            schema: z.object({
              code: callbackParam,
              state: callbackParam,
              id_token: z.string().max(16_384).optional(),
              user: z.string().max(4096).optional(),
              error: z.string().max(200).optional(),
            }),
          },
        },
      },
    },
    responses: {
      303: {
        description: "Signed in: to `redirectTo`. Refused: to `redirectTo?error=<code>` (a " +
          "known state) or to `/signin?error=<code>`",
      },
      ...errors(413, 415),
    },
  }),
  async (c) => {
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
      throw new ApiError("unsupported_media_type", "Apple's callback is a form post.");
    }
    const form = await c.req.parseBody();
    const field = (name: string, max: number) => {
      const value = form[name];
      // Text Postgres cannot store counts as absent (the route's validation hook, which refuses
      // it elsewhere, does not see a form read here).
      return typeof value === "string" && value.length <= max && unstorablePath(value) === null
        ? value
        : undefined;
    };
    const params: CallbackParams = {
      state: field("state", 4096),
      code: field("code", 4096),
      error: field("error", 200),
      user: field("user", 4096),
    };
    return await orSigninErrorPage(c, "apple", async () => {
      const outcome = await finishOAuth(
        c.get("deps"),
        "apple",
        params,
        readCookie(c, BINDING_COOKIE) ?? null,
        requestCtx(c),
      );
      return await answerCallback(c, outcome);
    });
  },
);

// POST /api/auth/exchange -------------------------------------------------------------------

auth.openapi(
  createRoute({
    method: "post",
    path: "/exchange",
    operationId: "exchangeSignInCode",
    security: anyone,
    summary: "Exchange an integrator's sign-in code for a session",
    description: "After a Google or Apple sign-in started with `codeChallenge`, the callback " +
      "redirects with `code`. Send it with the verifier whose S256 hash was the challenge; the " +
      "code works once (a wrong verifier spends it too) and for five minutes. The account it " +
      "signs in to (or, for `link`, the link) is decided here: a suspended account or closed " +
      "sign-ups are 403, an identity that is another account's 409.",
    request: {
      body: jsonBody(z.object({
        code: z.string().min(1).max(512),
        codeVerifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/).openapi({
          example: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        }),
      })),
    },
    responses: { 200: json(sessionSchema, "A new session"), ...errors(400, 401, 403, 409, 429) },
  }),
  async (c) => {
    const { code, codeVerifier } = c.req.valid("json");
    noStore(c);
    const session = await exchangeSignInCode(c.get("deps"), { code, codeVerifier }, requestCtx(c));
    return c.json(sessionResponse(session), 200);
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
      ...errors(400, 401, 403, 429),
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

// GET /api/auth/.well-known/jwks.json ------------------------------------------------------

const jwk = z.object({
  kty: z.literal("EC"),
  crv: z.literal("P-256"),
  x: z.string(),
  y: z.string(),
  kid: z.string(),
  alg: z.literal("ES256"),
  use: z.literal("sig"),
}).openapi("PublicJwk");

auth.openapi(
  createRoute({
    method: "get",
    path: "/.well-known/jwks.json",
    operationId: "getJwks",
    security: anyone,
    summary: "The public keys the access tokens are signed with (a JWKS)",
    description: "Under the tokens' issuer (`iss`, `<site>/api/auth`) as Supabase Auth " +
      "publishes its own under `/auth/v1`: the current signing key and the previous keys still " +
      "accepted, each with the `kid` a token's header names. Empty (`keys: []`) when the " +
      "tokens are HS256 under the legacy secret, which is never published. Public keys only.",
    responses: {
      200: json(z.object({ keys: z.array(jwk) }).openapi("Jwks"), "The public keys"),
    },
  }),
  async (c) => {
    // Short enough that a verifier sees a rotation's new key within minutes; a verifier that
    // meets an unknown kid fetches again anyway.
    c.header("Cache-Control", "public, max-age=300");
    return c.json((await c.get("deps").tokens.jwks()) as never, 200);
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
      "session, living `AGORA_REALTIME_TOKEN_TTL` (120 s): ask again before `expiresAt`, " +
      "so that a signed-out session loses its hosted Realtime channels within that time. " +
      "Needs `X-CSRF-Token` " +
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
