/**
 * Every way the API reaches the database, in one file. A handler, a job or a stream goes through
 * exactly one of these doors for each unit of work:
 *
 * - `asUser(c, tx => …)`: one transaction as the signed-in caller (role `authenticated` and the
 *   claims the session middleware set once for this request, `claimsOf`), so RLS decides.
 * - `asAnonymous(c, tx => …)`: one transaction as role `anon`, whoever is calling: for the public
 *   routes, which answer the same to everyone.
 * - `asClaims(deps, claims, tx => …)`: the same as `asUser` for code that holds a user's claims
 *   but no request (the SSE stream re-checking its topics after its request's middleware is
 *   done).
 * - `asSessionOf(c, caller => …)`: the inbox page's one statement
 *   (`app_private.inbox_page_for_session`), which checks the session itself: one of the fast
 *   paths kept for a measured difference (docs/benchmarks.md, "Fast paths kept": the inbox's
 *   p99 at 2,000 requests a second).
 * - `serverSql(deps, "<server path>")`: the pool itself, with its own rights, for one of the
 *   server paths listed in docs/authorization.md ("Server paths"), named by its row there
 *   (`ServerPath`). Outside this file the pool is reached only this way
 *   (tests/core/doors.test.ts): each use says which path it is, and a search for the name finds
 *   every use. It adds nothing (no transaction, no role, no claims): the path opens its own
 *   transaction if it needs one, or hands the pool to a statement that sets the caller's claims
 *   itself (the inbox page, the send, the checkout).
 * - `asServer(serverSql(deps, "<server path>"), { actingFor }, tx => …)`: one transaction with
 *   the pool's own rights, for a server path that acts for a user; `actingFor` names that user,
 *   so functions that read `auth.uid()` (the idempotency keys) see them.
 *
 * The one-statement doors of the send (`app_private.send_message_as`, on `serverSql(deps,
 * "message send")`) and the checkout (`app_private.create_checkout_as`, on `serverSql(deps,
 * "checkout")`) take the caller's claims as an argument, from `callerClaims(c)`.
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
 * const refused = await asClaims(deps, claimsOf(user), (tx) => refusedTopics(tx, topics));
 */
export function asClaims<T>(
  deps: { sql: Sql },
  claims: DbClaims,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  return withUser(deps.sql, claims, fn);
}

/**
 * The server paths that run with the pool's own rights: the first column of the table "Server
 * paths that run with the pool's own rights" in docs/authorization.md, row for row
 * (tests/core/doors.test.ts holds the two lists equal). Some run outside functions/api (SQL
 * functions, pg_cron, stack/, functions/_shared/ with the pool its creator hands it) and never
 * call `serverSql`; they are named here so that the table and this list are one list.
 */
export const SERVER_PATHS = [
  "magic-link request",
  "magic-link sign-in",
  "session creation",
  "session check",
  "refresh rotation",
  "rate limits",
  "security events",
  "access log",
  "dev mailbox",
  "OAuth sign-in",
  "which account",
  "wallet sign-in",
  "late access-log erasure",
  "configuration defaults for sign-in",
  "event hub",
  "event cursor",
  "SSE re-check",
  "attachment files",
  "health",
  "configuration cache",
  "job queue: claim and record",
  "job queue: enqueue",
  "attachment file removal",
  "wallet creation",
  "wallet transfer",
  "wallet confirm",
  "wallet tokens",
  "key export",
  "wallet broadcast and watch",
  "chain follower (indexer)",
  "key rotation",
  "local funding",
  "inbox page",
  "message send",
  "message reaction",
  "message digests",
  "read-all marks",
  "notification deliveries",
  "notification batches",
  "Realtime gateway (local)",
  "checkout",
  "payment webhook",
  "store jobs",
  "payout account",
  "dev payment provider",
  "settlement runs",
  "reservations and auto-completion",
] as const;

/** A server path's name, as its row in docs/authorization.md ("Server paths") names it. */
export type ServerPath = typeof SERVER_PATHS[number];

/**
 * The pool, with its own rights (no role, no claims: RLS does not apply, so the path checks its
 * own rules), for the named server path. The name is the first cell of the path's row in
 * docs/authorization.md ("Server paths that run with the pool's own rights"); it documents the
 * use and makes every use of the pool findable by path. It returns the pool as it is: a path
 * that needs one transaction opens it (`sql.begin`, or `asServer` to act for a user).
 *
 * @example
 * export async function refreshOrThrow(deps: Deps, refreshToken: string) {
 *   const sql = serverSql(deps, "refresh rotation");
 *   const [found] = await sql`select … from app_private.refresh_tokens where …`;
 * }
 */
export function serverSql(deps: { sql: Sql }, _path: ServerPath): Sql {
  return deps.sql;
}

/**
 * Runs `fn` in one transaction with the pool's own rights (a server path: RLS does not apply, so
 * the path checks its own rules) in which `auth.uid()` is `actingFor`, for the functions that act
 * for the caller (the idempotency keys); the role stays the pool's.
 *
 * @example
 * const sql = serverSql(deps, "wallet transfer");
 * await asServer(sql, { actingFor: userId }, (tx) => tx`select app.claim_idempotency_key(…)`);
 */
export function asServer<T>(
  sql: Sql,
  options: { actingFor: string },
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  return sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${
      JSON.stringify({ sub: options.actingFor })
    }, true)`;
    return await fn(tx);
  }) as Promise<T>;
}
