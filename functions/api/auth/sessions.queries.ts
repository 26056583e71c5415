/**
 * Queries of /api/auth/sessions and /api/auth/identities (auth/sessions.routes.ts,
 * auth/identities.routes.ts), run as the caller: RLS shows a user their own sessions and identities
 * only (`sessions_select_self_or_admin`, `identities_select_self_or_admin`) and lets them revoke their own live
 * sessions (`sessions_update_self`; the guard trigger stamps the server's time).
 */
import type { Tx } from "../../_shared/db.ts";
import { ifGiven, pageLimit, setClient, slicePage, where } from "../core/paging.ts";

interface SessionListRow {
  id: string;
  provider: string;
  created_at: Date;
  last_seen_at: Date;
  authenticated_at: Date;
  expires_at: Date;
  ip: string | null;
  user_agent: string | null;
  created_at_key: string;
}

/** The caller's live sessions, newest first (`current` marks the one asking). */
export async function listOwnSessions(
  tx: Tx,
  q: { currentSessionId: string; after: [string, string] | null; limit: number },
) {
  const rows = await tx<SessionListRow[]>`
    select id, provider, created_at, greatest(created_at, refreshed_at) as last_seen_at,
           authenticated_at, expires_at, host(ip) as ip, user_agent,
           created_at::text as created_at_key
    from app.sessions
    ${
    where(tx, [
      tx`user_id = (select auth.uid())`,
      tx`revoked_at is null`,
      tx`expires_at > now()`,
      ifGiven(q.after, ([time, id]) => tx`(created_at, id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
    order by created_at desc, id desc
    limit ${pageLimit(q.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  return {
    items: page.map((r) => ({
      id: r.id,
      current: r.id === q.currentSessionId,
      provider: r.provider,
      createdAt: r.created_at.toISOString(),
      lastSeenAt: r.last_seen_at.toISOString(),
      authenticatedAt: r.authenticated_at.toISOString(),
      expiresAt: r.expires_at.toISOString(),
      ip: r.ip,
      userAgent: r.user_agent,
    })),
    nextCursor,
  };
}

/**
 * Ends one of the caller's sessions. Null when the caller has no such session (another user's
 * is invisible); a session already ended answers with the time it ended.
 */
export async function revokeOwnSessionById(
  tx: Tx,
  sessionId: string,
): Promise<{ id: string; revokedAt: Date; revokedNow: boolean } | null> {
  const [revoked] = await tx<{ id: string; revoked_at: Date }[]>`
    update app.sessions set revoked_at = now(), revoked_reason = 'revoked_by_user'
    where id = ${sessionId} and user_id = (select auth.uid())
      and revoked_at is null and expires_at > now()
    returning id, revoked_at`;
  if (revoked) return { id: revoked.id, revokedAt: revoked.revoked_at, revokedNow: true };
  const [ended] = await tx<{ id: string; ended_at: Date }[]>`
    select id, coalesce(revoked_at, least(expires_at, now())) as ended_at
    from app.sessions where id = ${sessionId} and user_id = (select auth.uid())`;
  return ended ? { id: ended.id, revokedAt: ended.ended_at, revokedNow: false } : null;
}

/** Ends every live session of the caller but the current one; how many. */
export async function revokeOtherOwnSessions(tx: Tx, currentSessionId: string): Promise<number> {
  const rows = await tx`
    update app.sessions set revoked_at = now(), revoked_reason = 'signed_out_elsewhere'
    where user_id = (select auth.uid()) and id <> ${currentSessionId} and revoked_at is null
    returning id`;
  return rows.length;
}

/** The caller's sign-in identities, oldest first. */
export async function listOwnIdentities(tx: Tx) {
  const rows = await tx<{
    id: string;
    provider: string;
    provider_user_id: string;
    email: string | null;
    created_at: Date;
    last_used_at: Date;
  }[]>`
    select id, provider, provider_user_id, email, created_at, last_used_at
    from app.identities where user_id = (select auth.uid())
    order by created_at, id`;
  return rows.map((r) => ({
    id: r.id,
    provider: r.provider,
    // A wallet's address is its own business; other providers' ids mean nothing to the person.
    address: r.provider === "wallet" ? r.provider_user_id : null,
    email: r.email,
    createdAt: r.created_at.toISOString(),
    lastUsedAt: r.last_used_at.toISOString(),
  }));
}

/** Unlinks one of the caller's identities (`app.unlink_identity`: never the last one). */
export async function unlinkOwnIdentity(
  tx: Tx,
  identityId: string,
  client: { ip: string | null; userAgent: string | null },
): Promise<void> {
  await setClient(tx, client);
  await tx`select app.unlink_identity(${identityId})`;
}
