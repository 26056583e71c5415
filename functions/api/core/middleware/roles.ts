/**
 * Role gates. Each resource router declares its lowest role on itself, before its routes, so
 * the gate runs before validation and the handler:
 *
 *     export const conversations = router();
 *     conversations.use("*", requireRole("SUBSCRIBER"));
 *
 * The role compared is the one just read from the database by the session middleware. These
 * gates give the right status early (401, then 403); the data itself is still guarded by RLS
 * inside `asUser`.
 */
import type { MiddlewareHandler } from "hono";
import { type AppEnv, type Role, roleAtLeast } from "../context.ts";
import { forbidden, unauthenticated } from "../../../_shared/errors.ts";
import { enforceRateLimit } from "../rate-limits.ts";
import { rateRecorder } from "../rate-headers.ts";

/** 401 without a session; 403 below `role`. */
export function requireRole(role: Role): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const user = c.get("user");
    if (!user) {
      // A route whose statement checks the session (sessionCheckedInStatement): the token's
      // caller goes on, and that statement answers 401 for a session that is not live. Only
      // where every signed-in role may go: the role is not known before that statement.
      if (role === "VISITOR" && c.get("tokenCaller")) return await next();
      throw unauthenticated();
    }
    if (!roleAtLeast(user.role, role)) throw forbidden(`This needs the ${role} role.`);
    await next();
  };
}

/** 401 without a session, whatever the role: routes any signed-in user may call. */
export function requireSignIn(): MiddlewareHandler<AppEnv> {
  return requireRole("VISITOR");
}

/**
 * ADMIN only, rate-limited per admin; refused attempts are security events. Declared once, on
 * the admin router (admin/admin.routes.ts).
 */
export function adminGate(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const deps = c.get("deps");
    const user = c.get("user");
    if (!user) throw unauthenticated();
    if (user.role !== "ADMIN") {
      await deps.security({
        type: "admin.access_denied",
        severity: "warning",
        userId: user.id,
        ip: c.get("ip"),
        userAgent: c.get("userAgent"),
        details: { method: c.req.method, path: c.req.path, role: user.role },
      });
      throw forbidden("This needs the ADMIN role.");
    }
    await enforceRateLimit(
      deps,
      { ip: c.get("ip"), userAgent: c.get("userAgent"), rate: rateRecorder(c) },
      {
        bucket: `admin:user:${user.id}`,
        rule: deps.settings.rateLimits.adminPerUser,
        group: "admin",
        userId: user.id,
      },
    );
    await next();
  };
}
