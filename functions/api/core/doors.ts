/**
 * Every way the API reaches the database, in one file. A handler, a job or a stream goes through
 * exactly one of these doors for each unit of work:
 *
 * - `asUser(c, tx => …)`: one transaction as the signed-in caller (role `authenticated` and the
 *   claims the session middleware set once for this request, `claimsOf`), so RLS decides.
 * - `asAnonymous(c, tx => …)`: one transaction as role `anon`, whoever is calling: for the public
 *   routes, which answer the same to everyone.
 * - `asClaims(sql, claims, tx => …)`: the same as `asUser` for code that holds a user's claims
 *   but no request (the SSE stream re-checking its topics after its request's middleware is
 *   done).
 * - `asSessionOf(c, caller => …)`: the inbox page's one statement
 *   (`app_private.inbox_page_for_session`), which checks the session itself; the one
 *   specialised path kept for speed (docs/benchmarks.md: the inbox's p99 at 2,000 requests a
 *   second).
 * - `asServer(sql, { actingFor }, tx => …)`: one transaction with the pool's own rights, for the
 *   server paths listed in docs/authorization.md ("Server paths"); `actingFor` names the user a
 *   path works for, so functions that read `auth.uid()` (the idempotency keys) see that user.
 *   The other server paths run single statements on `deps.sql` and never take a request's
 *   context.
 *
 * The one-statement doors of the send (`app_private.send_message_as`) and the checkout
 * (`app_private.create_checkout_as`) take the caller's claims as an argument, from
 * `callerClaims(c)`.
 */
import type { Context } from "hono";
import type { AppEnv, SessionRef, SessionUser } from "./context.ts";
import { type DbClaims, type Sql, type Tx, withAnon, withUser } from "../../_shared/db.ts";
import { unauthenticated } from "../../_shared/errors.ts";
import { clearSessionCookies } from "./cookies.ts";

/** The claims a user's transaction runs with: what `auth.uid()` and `auth.jwt()` read. */
export function claimsOf(user: SessionUser): DbClaims {
  return {
    sub: user.id,
    role: "authenticated",
    session_id: user.sessionId,
    email: user.email ?? "",
    user_role: user.role,
  };
}

/**
 * The claims of the signed-in caller, as the session middleware set them (`claimsOf(user)`);
 * 401 without a session.
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

/**
 * Runs `fn` in one transaction as the user the claims name, for code that has a user's claims
 * but no request (a stream re-checking its topics).
 *
 * @example
 * const refused = await asClaims(deps.sql, claimsOf(user), (tx) => refusedTopics(tx, topics));
 */
export function asClaims<T>(sql: Sql, claims: DbClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withUser(sql, claims, fn);
}

/**
 * Runs `fn` in one transaction with the pool's own rights (a server path: RLS does not apply, so
 * the path checks its own rules). With `actingFor`, `auth.uid()` is that user for the
 * transaction, for the functions that act for the caller (the idempotency keys); the role stays
 * the pool's.
 *
 * @example
 * await asServer(deps.sql, { actingFor: userId }, (tx) => tx`select app.claim_idempotency_key(…)`);
 */
export function asServer<T>(
  sql: Sql,
  options: { actingFor?: string },
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  return sql.begin(async (tx) => {
    if (options.actingFor) {
      await tx`select set_config('request.jwt.claims', ${
        JSON.stringify({ sub: options.actingFor })
      }, true)`;
    }
    return await fn(tx);
  }) as Promise<T>;
}
