import type { DbClaims } from "../../_shared/db.ts";
import type { SessionUser } from "./context.ts";

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
