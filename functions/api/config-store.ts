/**
 * Reading the current configuration. Admin reads go through RLS (`withUser`); the sign-in path
 * reads the defaults it needs (default role, sign-ups open) with the server's own rights.
 */
import type { Sql, Tx } from "../_shared/db.ts";
import { type ConfigDocument, readConfig } from "../_shared/config-document.ts";

export interface ConfigVersion {
  version: number;
  config: ConfigDocument;
}

export async function currentConfig(db: Sql | Tx): Promise<ConfigVersion> {
  const rows = await db<{ version: number; config: unknown }[]>`
    select version, config from app.config_versions order by version desc limit 1`;
  if (!rows.length) return { version: 0, config: readConfig({}) };
  return { version: rows[0].version, config: readConfig(rows[0].config) };
}
