/**
 * "Needs a fresh sign-in": the one check for actions that a stolen session must not be enough
 * for (deleting the account, exporting a wallet's key). A sign-in is fresh while the session's
 * `authenticated_at` (the access token's `auth_time`: when the person last really signed in; a
 * refresh keeps it) is within `security.freshSignInSeconds` of the configuration (default 600).
 * Otherwise 403 `reauthentication_required`: the client signs in again (any provider of the
 * account) and retries with the new session.
 *
 * The time is read from the database with the session on every request (session-lookup.ts), not
 * taken from the token. SQL has the same check, `app.has_fresh_sign_in()`, for functions that
 * must not rely on the API having asked.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.ts";
import { ApiError, unauthenticated } from "../../../_shared/errors.ts";

/** 401 without a session; 403 `reauthentication_required` when the sign-in is not fresh. */
export async function assertFreshSignIn(c: Context<AppEnv>): Promise<void> {
  const user = c.get("user");
  if (!user) throw unauthenticated();
  const { freshSignInSeconds } = (await c.get("deps").config.get()).security;
  const ageSeconds = (Date.now() - user.authTime.getTime()) / 1000;
  if (ageSeconds <= freshSignInSeconds) return;
  throw new ApiError(
    "reauthentication_required",
    "This needs a recent sign-in: sign in again, then retry.",
    { authTime: user.authTime.toISOString(), freshSignInSeconds },
  );
}

/**
 * The same as route middleware, after the router's role gate.
 *
 * @example
 * createRoute({ method: "post", path: "/export", middleware: [requireFreshSignIn()] as const, ... })
 */
export function requireFreshSignIn(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await assertFreshSignIn(c);
    await next();
  };
}
