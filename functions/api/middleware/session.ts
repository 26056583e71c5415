/**
 * Who is calling. `Authorization: Bearer` (integrators) or the access cookie (browsers); a
 * browser whose access token expired is refreshed here, transparently, while its refresh cookie
 * is valid. Either way the session row and the user are read from the database on every request,
 * so signout, suspension and role changes count at once.
 *
 * It also sets, once, the claims every database call of the request runs with (`claims`, read by
 * `asUser` and `callerClaims` in as-user.ts).
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, SessionUser } from "../context.ts";
import {
  ACCESS_COOKIE,
  clearSessionCookies,
  noStore,
  readCookie,
  REFRESH_COOKIE,
  setSessionCookies,
} from "../auth/cookies.ts";
import { loadSessionUser, refreshOrThrow } from "../auth/sessions.ts";
import { ApiError } from "../../_shared/errors.ts";
import { claimsOf } from "../session-claims.ts";
import { bearerToken } from "../../_shared/jwt.ts";
import { rateRecorder } from "../rate-headers.ts";

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

export function sessionMiddleware(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const deps = c.get("deps");
    const authorization = c.req.header("authorization");
    if (authorization !== undefined) {
      const token = bearerToken(authorization);
      const claims = token ? await deps.tokens.verify(token) : null;
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
    if (claims) {
      const user = await loadSessionUser(deps, claims.session_id, claims.sub);
      if (user) setCaller(c, user, "cookie", claims.exp);
      else clearSessionCookies(c);
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
