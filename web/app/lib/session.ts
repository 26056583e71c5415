/**
 * Who is signed in, read from GET /api/auth/session (the httpOnly cookies decide; the page never
 * sees a session token). Read again on every navigation and after any 401 or 403, so a role an
 * admin changed shows on the user's next action, and a session that ended sends them to sign in.
 */
import { api, onAuthProblem, resetCsrf } from "./api.ts";
import { createStore } from "./store.ts";

export type Role = "VISITOR" | "SUBSCRIBER" | "MEMBER" | "CONFIDENTIAL" | "ADMIN";
export const ROLES: Role[] = ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"];

export interface User {
  id: string;
  name: string;
  email: string;
  role: Role;
  image: string | null;
  walletAddress: string | null;
}

export type SessionState =
  | { status: "loading"; user: null }
  | { status: "signed-out"; user: null }
  | { status: "signed-in"; user: User };

export const session = createStore<SessionState>({ status: "loading", user: null });

export function roleAtLeast(role: Role | undefined, min: Role): boolean {
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(min);
}

let reading: Promise<SessionState> | null = null;

/** Reads the session again; concurrent callers share one request. */
export function loadSession(): Promise<SessionState> {
  reading ??= api.get<{ user: User | null }>("/api/auth/session", { fresh: true })
    .then(({ user }) => {
      const next: SessionState = user
        ? { status: "signed-in", user }
        : { status: "signed-out", user: null };
      const current = session.get();
      if (JSON.stringify(current) !== JSON.stringify(next)) {
        if (current.user?.id !== next.user?.id) resetCsrf();
        session.set(next);
      }
      return next;
    })
    .finally(() => reading = null);
  return reading;
}

export async function signOut(): Promise<void> {
  try {
    await api.post("/api/auth/signout");
  } finally {
    resetCsrf();
    session.set({ status: "signed-out", user: null });
  }
}

onAuthProblem(() => void loadSession().catch(() => {}));
