/**
 * Who is signed in, read from GET /api/auth/session (the httpOnly cookies decide; the page never
 * sees a session token). Read again on every navigation and after any 401 or 403, so a role an
 * admin changed shows on the user's next action, and a session that ended sends them to sign in.
 */
import { client, data, FRESH, onAuthProblem, resetCsrf, type Schema } from "./client.ts";
import { queryClient } from "./query.ts";
import { createStore } from "./store.ts";
import { userEvents } from "./user-events.ts";

export type Role = "VISITOR" | "SUBSCRIBER" | "MEMBER" | "CONFIDENTIAL" | "ADMIN";
export const ROLES: Role[] = ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"];

/**
 * The signed-in person as GET /api/auth/session answers them, with their shop (`vendor`: null
 * without one; pages ask GET /api/store/vendors/me, 404 without a shop, only when it is not null).
 */
export type User = Schema<"SessionUserWithShop">;

export type SessionState =
  | { status: "loading"; user: null }
  | { status: "signed-out"; user: null }
  | { status: "signed-in"; user: User };

export const session = createStore<SessionState>({ status: "loading", user: null });

/**
 * Why the page is signed out, when it did not ask to be: the session ended elsewhere (an admin
 * suspended the account or ended its sessions, "sign out everywhere else" on another device),
 * or the account was deleted. The sign-in page says so.
 */
export const signedOutBecause = createStore<"ended" | "deleted" | null>(null);

/**
 * Signed out because the account is suspended (GET /api/auth/session's `suspended`): the header
 * says so, with the white label's support address, instead of showing the visitor's view
 * without a word.
 */
export const accountSuspended = createStore<boolean>(false);

export function roleAtLeast(role: Role | undefined, min: Role): boolean {
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(min);
}

let reading: Promise<SessionState> | null = null;

/** Reads the session again; concurrent callers share one request. */
export function loadSession(): Promise<SessionState> {
  reading ??= client.GET("/api/auth/session", FRESH).then(data)
    .then(({ user, suspended }) => {
      if (accountSuspended.get() !== !!suspended) accountSuspended.set(!!suspended);
      const next: SessionState = user
        ? { status: "signed-in", user }
        : { status: "signed-out", user: null };
      const current = session.get();
      if (JSON.stringify(current) !== JSON.stringify(next)) {
        if (current.user?.id !== next.user?.id) {
          resetCsrf();
          // What the cache holds was another person's (or nobody's) to see.
          if (current.status !== "loading") queryClient.clear();
        }
        if (current.status === "signed-in" && next.status === "signed-out") {
          signedOutBecause.set("ended");
          signOutListeners.forEach((listener) => listener());
        }
        if (next.status === "signed-in") signedOutBecause.set(null);
        session.set(next);
      }
      return next;
    })
    .finally(() => reading = null);
  return reading;
}

const signOutListeners = new Set<() => void>();
/** Called whenever the page becomes signed out (what a user left behind goes: the cart). */
export function onSignedOut(listener: () => void): () => void {
  signOutListeners.add(listener);
  return () => signOutListeners.delete(listener);
}

/** Forgets the session on this page (after sign-out, or the account's deletion). */
export function forgetSession(reason: "deleted" | null = null): void {
  resetCsrf();
  queryClient.clear();
  signedOutBecause.set(reason);
  session.set({ status: "signed-out", user: null });
  signOutListeners.forEach((listener) => listener());
}

export async function signOut(): Promise<void> {
  try {
    await client.POST("/api/auth/signout");
  } finally {
    forgetSession();
  }
}

onAuthProblem(() => void loadSession().catch(() => {}));

// `profile.updated` on the user's own topic (a change from another tab or device, or by an
// ADMIN's role change): the header shows the new name and picture at once.
userEvents.on((e) => {
  if (e.event !== "profile.updated") return;
  const state = session.get();
  const p = e.payload as { id?: string; name?: string; image?: string | null; role?: Role };
  if (state.status !== "signed-in" || p.id !== state.user.id || typeof p.name !== "string") return;
  session.set({
    status: "signed-in",
    user: { ...state.user, name: p.name, image: p.image ?? null, role: p.role ?? state.user.role },
  });
});
