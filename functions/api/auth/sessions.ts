/**
 * Sessions and their tokens. This is a named server path (docs/authorization.md): it runs with
 * the pool's own rights because it establishes who the user is before any RLS can apply.
 *
 * Refresh tokens rotate on every use. The successor of a token is derived from it with an HMAC
 * under the refresh secret, so only hashes are stored and yet a client that lost the answer to a
 * refresh (or two tabs refreshing at once) can present the parent again within a short grace and
 * get the same successor. Any other reuse of a spent token revokes the whole session.
 */
import type { Tx } from "../../_shared/db.ts";
import { randomToken, sha256Hex } from "../../_shared/crypto.ts";
import { unauthenticated } from "../../_shared/errors.ts";
import { enforceRateLimit, type RateContext } from "../core/rate-limits.ts";
import type { Deps, IssuedSession, Role, SessionUser } from "../core/context.ts";
import { serverSql } from "../core/doors.ts";
import { ensureWallet } from "../wallet/wallets.ts";

/** A live session with its user, as `app_private.live_sessions` returns it. */
export interface SessionRow {
  id: string;
  email: string | null;
  name: string;
  image: string | null;
  role: Role;
  wallet_address: string | null;
  session_id: string;
  /** Session expiry in epoch milliseconds (a number parses cheaper than a timestamp string). */
  expires_ms: number;
  /** The session's sign-in time (`authenticated_at`) in epoch milliseconds. */
  auth_ms: number;
  provider: string;
}

export function toSessionUser(row: SessionRow): SessionUser {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    image: row.image,
    role: row.role,
    walletAddress: row.wallet_address,
    sessionId: row.session_id,
    sessionExpiresAt: new Date(row.expires_ms),
    authTime: new Date(row.auth_ms),
    provider: row.provider,
  };
}

/**
 * The user behind a live session, or null when it is revoked, expired or the user suspended.
 * Read from the database on every call (through the coalescing lookup, auth/session-lookup.ts).
 */
export function loadSessionUser(
  deps: Deps,
  sessionId: string,
  userId: string,
): Promise<SessionUser | null> {
  return deps.sessions(sessionId, userId);
}

async function issueAccess(
  deps: Deps,
  user: SessionUser,
  refreshToken: string,
  ttlSeconds?: number,
): Promise<IssuedSession> {
  const { token, expiresAt } = await deps.tokens.issue({
    userId: user.id,
    sessionId: user.sessionId,
    email: user.email,
    userRole: user.role,
    authTime: Math.floor(user.authTime.getTime() / 1000),
    provider: user.provider,
    ttlSeconds,
  });
  return { user, accessToken: token, refreshToken, expiresAt };
}

/**
 * A new access token for a live session, without touching its refresh chain: what
 * `POST /api/auth/token` hands a browser page (which holds the session in cookies) so that its
 * in-memory Realtime client can authenticate. Same claims as any access token, but the short
 * lifetime of `AGORA_REALTIME_TOKEN_TTL` (120 s): hosted Realtime re-checks a channel's policies
 * only when the client sends a new token and closes it at the token's expiry, so a session
 * signed out or revoked loses its channels within that lifetime (the page renews before it).
 */
export async function accessTokenFor(
  deps: Deps,
  user: SessionUser,
): Promise<{ accessToken: string; expiresAt: number }> {
  const { accessToken, expiresAt } = await issueAccess(
    deps,
    user,
    "",
    deps.settings.realtimeTokenTtlSeconds,
  );
  return { accessToken, expiresAt };
}

/**
 * Opens a session for a user who just proved who they are. `authenticatedAt` is when they did
 * (default now): an integrator's OAuth sign-in opens its session at the code exchange, after
 * the callback where the provider vouched for them. Every provider's sign-in comes through
 * here, so this is where a user from SUBSCRIBER up gets their wallet at the first sign-in
 * (`ensureWallet`); a wallet that cannot be created now is logged and does not stop the sign-in
 * (the next sign-in, or `POST /api/wallet/create`, makes it).
 */
export async function createSession(
  deps: Deps,
  input: {
    userId: string;
    provider: string;
    ip: string | null;
    userAgent: string | null;
    authenticatedAt?: Date;
  },
): Promise<IssuedSession> {
  const sql = serverSql(deps, "session creation");
  try {
    await ensureWallet(deps, input.userId);
  } catch (err) {
    deps.log("error", "wallet: not created at sign-in", {
      userId: input.userId,
      error: err instanceof Error ? err.message : String(err),
    });
  }
  const refreshToken = randomToken();
  const tokenHash = await sha256Hex(refreshToken);
  const row = await sql.begin(async (tx: Tx) => {
    const [session] = await tx<{ id: string }[]>`
      insert into app.sessions (user_id, provider, ip, user_agent, expires_at, authenticated_at)
      values (${input.userId}, ${input.provider}, ${input.ip}, ${
      input.userAgent?.slice(0, 1024) ?? null
    },
              now() + make_interval(days => ${deps.settings.sessionTtlDays}),
              coalesce(${input.authenticatedAt ?? null}::timestamptz, now()))
      returning id`;
    await tx`insert into app_private.refresh_tokens (session_id, token_hash) values (${session.id}, ${tokenHash})`;
    await tx`update app.users set last_sign_in_at = now() where id = ${input.userId}`;
    const [user] = await tx<SessionRow[]>`
      select * from app_private.live_sessions(array[${session.id}]::uuid[])`;
    return user;
  });
  // The sign-in checked the account; a user suspended meanwhile has no live session.
  if (!row) throw unauthenticated("This account cannot sign in.");
  return issueAccess(deps, toSessionUser(row), refreshToken);
}

export type RefreshOutcome =
  | { ok: true; session: IssuedSession }
  | { ok: false; reason: "unknown" | "inactive" | "reused"; userId?: string; sessionId?: string };

/**
 * Spends a refresh token and returns the session with its successor. Concurrent refreshes with
 * the same token serialize on the token's row lock; the loser gets the same successor (grace).
 */
export async function rotateRefreshToken(
  deps: Deps,
  refreshToken: string,
): Promise<RefreshOutcome> {
  const sql = serverSql(deps, "refresh rotation");
  const tokenHash = await sha256Hex(refreshToken);
  const successor = await deps.signRefresh(refreshToken);
  const successorHash = await sha256Hex(successor);
  return await sql.begin(async (tx: Tx): Promise<RefreshOutcome> => {
    const [token] = await tx<{
      id: string;
      session_id: string;
      user_id: string;
      spent_recently: boolean | null;
      spent: boolean;
      live: boolean;
    }[]>`
      select rt.id, rt.session_id, s.user_id, rt.spent_at is not null as spent,
             rt.spent_at > now() - make_interval(secs => ${deps.settings.refreshGraceSeconds}) as spent_recently,
             exists (select 1 from app_private.live_sessions(array[rt.session_id])) as live
      from app_private.refresh_tokens rt join app.sessions s on s.id = rt.session_id
      where rt.token_hash = ${tokenHash}
      for update of rt`;
    if (!token) return { ok: false, reason: "unknown" };
    if (!token.live) {
      return { ok: false, reason: "inactive", userId: token.user_id, sessionId: token.session_id };
    }

    if (!token.spent) {
      await tx`update app_private.refresh_tokens set spent_at = now() where id = ${token.id}`;
      await tx`insert into app_private.refresh_tokens (session_id, token_hash, parent_id)
               values (${token.session_id}, ${successorHash}, ${token.id})`;
    } else {
      // Grace: only the immediate parent of the current token, only briefly after it was spent.
      const [child] = await tx<{ spent: boolean }[]>`
        select spent_at is not null as spent from app_private.refresh_tokens
        where parent_id = ${token.id} and token_hash = ${successorHash}`;
      if (!token.spent_recently || !child || child.spent) {
        await tx`update app.sessions set revoked_at = now(), revoked_reason = 'refresh_token_reuse'
                 where id = ${token.session_id} and revoked_at is null`;
        return { ok: false, reason: "reused", userId: token.user_id, sessionId: token.session_id };
      }
    }
    await tx`update app.sessions set refreshed_at = now() where id = ${token.session_id}`;
    // Live was checked under the token's row lock above (app_private.live_sessions, the rule).
    const [row] = await tx<SessionRow[]>`
      select * from app_private.live_sessions(array[${token.session_id}]::uuid[])`;
    if (!row) {
      return { ok: false, reason: "inactive", userId: token.user_id, sessionId: token.session_id };
    }
    return { ok: true, session: await issueAccess(deps, toSessionUser(row), successor) };
  });
}

/** Throws 401 for any failed refresh; records reuse as a critical security event. */
export async function refreshOrThrow(
  deps: Deps,
  refreshToken: string,
  ctx: RateContext,
): Promise<IssuedSession> {
  const sql = serverSql(deps, "refresh rotation");
  const [found] = await sql<{ session_id: string; user_id: string }[]>`
    select rt.session_id, s.user_id from app_private.refresh_tokens rt
    join app.sessions s on s.id = rt.session_id
    where rt.token_hash = ${await sha256Hex(refreshToken)}`;
  if (!found) throw unauthenticated("The refresh token is not valid.");
  await enforceRateLimit(deps, ctx, {
    bucket: `refresh:session:${found.session_id}`,
    rule: deps.settings.rateLimits.refreshPerSession,
    group: "refresh",
    userId: found.user_id,
    details: { sessionId: found.session_id },
  });
  const outcome = await rotateRefreshToken(deps, refreshToken);
  if (outcome.ok) return outcome.session;
  if (outcome.reason === "reused") {
    await deps.security({
      type: "auth.refresh_token_reuse",
      severity: "critical",
      userId: outcome.userId,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      details: { sessionId: outcome.sessionId, action: "session revoked" },
    });
  }
  throw unauthenticated("The refresh token is not valid.");
}
