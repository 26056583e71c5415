/**
 * Queries of /api/admin/config (admin/config.routes.ts), run as the ADMIN. Reading the current
 * version is `currentConfig` (core/config-store.ts), shared with the configuration cache.
 */
import type { Tx } from "../../_shared/db.ts";
import type { ConfigDocument } from "../../_shared/config-document.ts";

export { currentConfig } from "../core/config-store.ts";

/**
 * Writes `version` in the caller's name (RLS: `changed_by = auth.uid()`). False when that
 * version exists already: another change won the race.
 */
export async function insertConfigVersion(
  tx: Tx,
  v: {
    version: number;
    config: ConfigDocument;
    diff: Record<string, unknown>;
    reason: string;
    changedBy: string;
  },
): Promise<boolean> {
  const inserted = await tx`
    insert into app.config_versions (version, config, diff, reason, changed_by)
    values (${v.version}, ${tx.json(v.config as never)}, ${tx.json(v.diff as never)},
            ${v.reason}, ${v.changedBy})
    on conflict (version) do nothing
    returning version`;
  return inserted.length > 0;
}
