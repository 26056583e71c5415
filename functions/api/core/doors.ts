/**
 * The doors a handler goes through to reach the database. There are two, and a handler uses one
 * of them for every query it runs:
 *
 * - `asUser(c, tx => …)`: one transaction as the signed-in caller (role `authenticated` and the
 *   claims the session middleware set once for this request), so RLS decides.
 * - `asAnonymous(c, tx => …)`: one transaction as role `anon`, whoever is calling: for the public
 *   routes, which answer the same to everyone.
 *
 * The one-statement doors of the send (`app_private.send_message_as`) and the checkout take the
 * same claims as an argument, from `callerClaims(c)`. The inbox page's statement
 * (`app_private.inbox_page_for_session`) goes further and checks the session itself:
 * `asSessionOf(c, caller => …)`. What runs with the pool's own rights instead is a short, named
 * list of server paths (docs/authorization.md); those take `deps.sql` and never a handler's
 * context.
 * `withUser` (functions/_shared/db.ts) stays the low-level door for code that has claims but no
 * request: a stream re-checking a session after its request is over.
 */
import type { Context } from "hono";
import type { AppEnv, SessionRef } from "./context.ts";
import { type DbClaims, type Tx, withAnon, withUser } from "../../_shared/db.ts";
import { unauthenticated } from "../../_shared/errors.ts";
import { clearSessionCookies } from "./cookies.ts";

/**
 * The claims of the signed-in caller, as the session middleware set them (`claimsOf(user)`,
 * core/claims.ts); 401 without a session.
 */
export function callerClaims(c: Context<AppEnv>): DbClaims {
  const claims = c.get("claims");
  if (!claims) throw unauthenticated();
  return claims;
}

/**
 * Runs `fn` in one transaction as the signed-in caller: what `auth.uid()` and RLS see is this
 * request's user. 401 without a session (the router's role gate normally answers first).
 *
 * @example
 * const rows = await asUser(c, (tx) => listConversations(tx, { limit: 20 }));
 */
export function asUser<T>(c: Context<AppEnv>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withUser(c.get("deps").sql, callerClaims(c), fn);
}

/**
 * Runs `fn` in one transaction as role `anon`, even when the caller is signed in: a public
 * route's answer must not depend on who asks.
 *
 * @example
 * const doc = await asAnonymous(c, (tx) => readPublicConfig(tx));
 */
export function asAnonymous<T>(c: Context<AppEnv>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withAnon(c.get("deps").sql, fn);
}

/**
 * Runs `fn`, one statement that checks the caller's session itself (live, not revoked, the user
 * active; AG401 otherwise), with the session and user to check: the access token's, on a route
 * marked `sessionCheckedInStatement` (the session middleware left the check to the statement), or
 * the already checked caller's. Once `fn` succeeds the token's caller counts as signed in (the
 * access log names them); when the statement finds no live session (AG401, a 401) a cookie
 * caller's cookies are cleared, as the session middleware does. 401 without either.
 *
 * @example
 * const page = await asSessionOf(c, (caller) => listNotifications(sql, caller, query));
 */
export async function asSessionOf<T>(
  c: Context<AppEnv>,
  fn: (caller: SessionRef) => Promise<T>,
): Promise<T> {
  const user = c.get("user");
  if (user) return await fn({ sessionId: user.sessionId, userId: user.id });
  const token = c.get("tokenCaller");
  if (!token) throw unauthenticated();
  try {
    const result = await fn({ sessionId: token.sessionId, userId: token.userId });
    token.confirmed = true;
    return result;
  } catch (err) {
    const noSession = (err as { code?: unknown }).code === "AG401";
    if (noSession && c.get("authVia") === "cookie") clearSessionCookies(c);
    throw err;
  }
}
