/**
 * "A fresh sign-in": the caller proved who they are within `security.freshSignInSeconds`. Key
 * export asks for it (403 `reauthentication_required` otherwise).
 *
 * TODO(auth_time): once the access tokens carry `auth_time` (the time of the sign-in behind the
 * session), read it from there instead of the session row, in this one function. Until then the
 * session's creation time is the sign-in time: a session is created by a sign-in and only ever
 * refreshed afterwards, so it is the same instant.
 */
import { ApiError } from "../../_shared/errors.ts";
import type { Deps, SessionUser } from "../context.ts";

/** When the caller's current session signed in (null for a session that is gone). */
export async function signInTime(deps: Deps, user: SessionUser): Promise<Date | null> {
  const [row] = await deps.sql<{ created_at: Date }[]>`
    select created_at from app.sessions where id = ${user.sessionId} and user_id = ${user.id}`;
  return row?.created_at ?? null;
}

/** Throws 403 `reauthentication_required` unless the caller signed in recently enough. */
export async function requireFreshSignIn(deps: Deps, user: SessionUser): Promise<void> {
  const config = await deps.config.get();
  const signedInAt = await signInTime(deps, user);
  const ageSeconds = signedInAt ? (Date.now() - signedInAt.getTime()) / 1000 : Infinity;
  if (ageSeconds > config.security.freshSignInSeconds) {
    throw new ApiError(
      "reauthentication_required",
      "Sign in again to do this: it needs a recent sign-in.",
      { maxAgeSeconds: config.security.freshSignInSeconds },
    );
  }
}
