/**
 * CSRF for cookie-authenticated unsafe requests: an allowed Origin (or Referer) and an
 * `X-CSRF-Token` equal to the session's token from `GET /api/auth/csrf`. Bearer requests carry
 * no ambient credentials and need neither.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv, Deps, SessionUser } from "../context.ts";
import { forbidden } from "../../../_shared/errors.ts";
import { timingSafeEqual } from "../../../_shared/crypto.ts";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Unsafe routes that another site posts to by design, so no CSRF token can ever come along:
 * Apple's `response_mode=form_post` callback. It is protected by what the CSRF check would stand
 * for: the flow's single-use state and its browser binding (auth/oauth.ts). A cookie session the
 * browser happens to send with it is not used by the route.
 */
export const CSRF_EXEMPT = new Set(["POST /api/auth/callback/apple"]);

/** The CSRF token of a session: an HMAC of its id, so any instance can check it statelessly. */
export function csrfTokenFor(deps: Deps, sessionId: string): Promise<string> {
  return deps.signCsrf(`csrf:${sessionId}`);
}

export function requestOrigin(headers: Headers): string | null {
  const origin = headers.get("origin");
  if (origin && origin !== "null") return origin;
  const referer = headers.get("referer");
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

export function csrfProtection(): MiddlewareHandler<AppEnv> {
  // Not async on the way through: most requests pass straight on, without a promise of their own.
  return (c, next) => {
    const user = c.get("user");
    if (SAFE_METHODS.has(c.req.method) || c.get("authVia") !== "cookie" || !user) return next();
    if (CSRF_EXEMPT.has(`${c.req.method} ${c.req.path}`)) return next();
    return checkCsrf(c, next, user);
  };
}

async function checkCsrf(c: Context<AppEnv>, next: Next, user: SessionUser): Promise<void> {
  const deps = c.get("deps");
  const origin = requestOrigin(c.req.raw.headers);
  const sent = c.req.header("x-csrf-token") ?? "";
  const expected = await csrfTokenFor(deps, user.sessionId);
  if (
    !origin || !deps.settings.allowedOrigins.includes(origin) || !timingSafeEqual(sent, expected)
  ) {
    await deps.security({
      type: "auth.csrf_rejected",
      severity: "warning",
      userId: user.id,
      ip: c.get("ip"),
      userAgent: c.get("userAgent"),
      details: { method: c.req.method, path: c.req.path, origin },
    });
    throw forbidden("Missing or invalid CSRF token or origin.");
  }
  return next();
}
