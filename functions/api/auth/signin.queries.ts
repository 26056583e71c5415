/**
 * Queries of /api/auth (auth/signin.routes.ts) that run as the caller. Sign-in, refresh and the session
 * checks establish who the caller is, so they are server paths with the pool's own rights
 * (auth/sessions.ts, auth/magic-links.ts), not queries run through a door.
 */
import type { Tx } from "../../_shared/db.ts";

/** Revokes the caller's own session (RLS: `sessions_update_self`). */
export async function revokeOwnSession(tx: Tx, sessionId: string): Promise<void> {
  await tx`
    update app.sessions set revoked_at = now(), revoked_reason = 'signout'
    where id = ${sessionId} and revoked_at is null`;
}
