/**
 * Drains `app_private.storage_deletions`: removes from storage the files whose attachment rows
 * are gone. A named server path (docs/authorization.md): it runs with the pool's own rights and
 * touches only keys the database queued. Removal is idempotent, so a key handled twice is fine;
 * a key whose removal fails goes back on the queue.
 */
import type { Deps } from "./context.ts";

export async function sweepStorage(deps: Deps, batch = 100): Promise<number> {
  const rows = await deps.sql<
    { key: string }[]
  >`select app_private.take_storage_deletions(${batch}) as key`;
  const keys = rows.map((r) => r.key);
  if (!keys.length) return 0;
  try {
    await deps.storage.remove(keys);
  } catch (err) {
    deps.log("error", "attachment files not removed; queued again", {
      keys: keys.length,
      error: String(err),
    });
    await deps
      .sql`insert into app_private.storage_deletions (storage_key) select unnest(${keys}::text[])`;
    return 0;
  }
  return keys.length;
}
