/**
 * The people the signed-in person blocks, shared by the pages that show or change a block (the
 * conversation view marks their live messages, a profile offers Block or Unblock, the profile
 * page lists them). Loaded once per session on first use; each change updates it at once.
 */
import { createStore } from "./store.ts";
import { type Answer, client, data, FRESH } from "./client.ts";
import { session } from "./session.ts";

/** Blocked user ids; null until loaded. */
export const blockedIds = createStore<Set<string> | null>(null);
let loading: Promise<void> | null = null;

/** Loads the list (every page of it) once; later calls share that load. */
export function loadBlocked(): Promise<void> {
  loading ??= (async () => {
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: Answer<"/api/users/blocked", "get"> = data(
        await client.GET("/api/users/blocked", {
          params: { query: { limit: 200, ...(cursor ? { cursor } : {}) } },
          ...FRESH,
        }),
      );
      for (const p of page.items) ids.add(p.id);
      cursor = page.nextCursor;
    } while (cursor);
    blockedIds.set(ids);
  })().catch((err) => {
    loading = null;
    throw err;
  });
  return loading;
}

/** Blocks or unblocks someone, then updates the shared list. */
export async function setBlocked(userId: string, blocked: boolean): Promise<void> {
  const path = { params: { path: { id: userId } } };
  if (blocked) await client.PUT("/api/users/{id}/block", path);
  else await client.DELETE("/api/users/{id}/block", path);
  const next = new Set(blockedIds.get() ?? []);
  if (blocked) next.add(userId);
  else next.delete(userId);
  blockedIds.set(next);
}

/** Forgets the list (sign-out). */
export function resetBlocked(): void {
  loading = null;
  blockedIds.set(null);
}

// Another person signing in (or signing out) never sees the previous person's list.
let owner: string | null = null;
session.subscribe((state) => {
  const id = state.status === "signed-in" ? state.user.id : null;
  if (id !== owner) {
    owner = id;
    resetBlocked();
  }
});
