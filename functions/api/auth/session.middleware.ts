/**
 * Who is calling. `Authorization: Bearer` (integrators) or the access cookie (browsers); a
 * browser whose access token expired is refreshed here, transparently, while its refresh cookie
 * is valid. Either way the session row and the user are read from the database on every request,
 * so signout, suspension and role changes count at once.
 *
 * It also sets, once, the claims every database call of the request runs with (`claims`, read by
 * `asUser` and `callerClaims` in core/doors.ts).
 *
 * One exception saves the inbox a round trip: a GET route marked `sessionCheckedInStatement`
 * gets the access token's caller (`tokenCaller`, signature verified, from the bearer token or the
 * access cookie) and its one statement checks the session (`asSessionOf`, core/doors.ts).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv, SessionUser } from "../core/context.ts";
import {
  ACCESS_COOKIE,
  clearSessionCookies,
  markSuspended,
  noStore,
  readCookie,
  REFRESH_COOKIE,
  setSessionCookies,
} from "../core/cookies.ts";
import { endedBySuspension, loadSessionUser, refreshOrThrow } from "./sessions.ts";
import { ApiError } from "../../_shared/errors.ts";
import { claimsOf } from "../core/doors.ts";
import { type AccessClaims, bearerToken } from "../../_shared/jwt.ts";
import { rateRecorder } from "../core/rate-headers.ts";

/** The caller of this request: the user, their database claims, how they came and until when. */
function setCaller(
  c: Context<AppEnv>,
  user: SessionUser,
  via: "cookie" | "bearer",
  accessExpiresAt: number,
): void {
  c.set("user", user);
  c.set("claims", claimsOf(user));
  c.set("authVia", via);
  c.set("accessExpiresAt", accessExpiresAt);
}

/**
 * Marks a route whose one statement checks the caller's session itself, with the conditions of
 * the session check (live, not revoked, the user active), so that a bearer request makes one
 * round trip instead of two: put it in the route's `middleware` (createRoute, as GET
 * /api/notifications does). The route must be open to every signed-in role (its gate admits the
 * token's caller: the role is known only to the statement) and reach the database through
 * `asSessionOf`, which also clears an ended session's cookies. An expired access cookie is
 * refreshed here as on any route.
 */
export const sessionCheckedInStatement: MiddlewareHandler<AppEnv> = (_c, next) => next();

function checksSessionInStatement(c: Context<AppEnv>): boolean {
  return c.req.method === "GET" &&
    matchedRoutes(c).some((route) => route.handler === sessionCheckedInStatement);
}

/** The token's caller, its session to be checked by the route's statement (`asSessionOf`). */
function leaveToStatement(
  c: Context<AppEnv>,
  claims: AccessClaims,
  via: "cookie" | "bearer",
  next: Next,
): Promise<void> {
  c.set("tokenCaller", { sessionId: claims.session_id, userId: claims.sub, confirmed: false });
  c.set("authVia", via);
  c.set("accessExpiresAt", claims.exp);
  return next();
}

export function sessionMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const deps = c.get("deps");
    const authorization = c.req.header("authorization");
    if (authorization !== undefined) {
      const token = bearerToken(authorization);
      const claims = token ? await deps.tokens.verify(token) : null;
      if (claims && checksSessionInStatement(c)) return leaveToStatement(c, claims, "bearer", next);
      if (claims) {
        const user = await loadSessionUser(deps, claims.session_id, claims.sub);
        if (user) setCaller(c, user, "bearer", claims.exp);
      }
      return next();
    }

    const accessCookie = readCookie(c, ACCESS_COOKIE);
    const refreshCookie = readCookie(c, REFRESH_COOKIE);
    if (!accessCookie && !refreshCookie) return next();

    const claims = accessCookie ? await deps.tokens.verify(accessCookie) : null;
    if (claims && checksSessionInStatement(c)) return leaveToStatement(c, claims, "cookie", next);
    if (claims) {
      const user = await loadSessionUser(deps, claims.session_id, claims.sub);
      if (user) setCaller(c, user, "cookie", claims.exp);
      else {
        clearSessionCookies(c);
        if (await endedBySuspension(deps, { userId: claims.sub })) markSuspended(c);
      }
      return next();
    }
    if (refreshCookie) {
      try {
        const session = await refreshOrThrow(deps, refreshCookie, {
          ip: c.get("ip"),
          userAgent: c.get("userAgent"),
          rate: rateRecorder(c),
        });
        setSessionCookies(c, session);
        c.set("refreshed", session);
        setCaller(c, session.user, "cookie", session.expiresAt);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code === "rate_limited") throw err;
        clearSessionCookies(c);
        if (await endedBySuspension(deps, { refreshToken: refreshCookie })) markSuspended(c);
        return next();
      }
      await next();
      // The answer sets the new token cookies: no cache may keep it, whatever the handler said
      // (the public configuration, for one, is cacheable otherwise).
      noStore(c);
      return;
    }
    return next();
  };
}
