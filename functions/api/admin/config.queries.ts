/**
 * Queries of /api/admin/config and its history (admin/config.routes.ts), run as the ADMIN.
 * Reading the current version is `currentConfig` (core/config-store.ts), shared with the
 * configuration cache.
 */
import type { Tx } from "../../_shared/db.ts";
import type { ConfigDocument } from "../../_shared/config-document.ts";
import { pageLimit, slicePage } from "../core/paging.ts";

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

interface ConfigVersionRow {
  version: number;
  reason: string;
  diff: Record<string, { from: unknown; to: unknown }>;
  changed_by: string | null;
  changed_by_name: string | null;
  created_at: Date;
}

/**
 * The configuration's history, newest version first: each version's reason, who wrote it (their
 * profile name; null once the account is gone) and its diff against the version before, as the
 * change wrote it. Keyset on the version (its primary key).
 */
export async function listConfigVersions(
  tx: Tx,
  opts: { before: number | null; limit: number },
) {
  const rows = await tx<ConfigVersionRow[]>`
    select v.version, v.reason, v.diff, v.changed_by, u.name as changed_by_name, v.created_at
    from app.config_versions v
    left join app.users u on u.id = v.changed_by
    ${opts.before === null ? tx`` : tx`where v.version < ${opts.before}`}
    order by v.version desc
    limit ${pageLimit(opts.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, opts.limit, (r) => [r.version]);
  return {
    items: page.map((r) => ({
      version: r.version,
      reason: r.reason,
      changedBy: r.changed_by ? { id: r.changed_by, name: r.changed_by_name ?? "" } : null,
      diff: r.diff,
      createdAt: r.created_at.toISOString(),
    })),
    nextCursor,
  };
}
