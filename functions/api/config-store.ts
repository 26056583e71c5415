/**
 * Reading the current configuration. Admin reads go through RLS (`asUser`); the sign-in path
 * reads the defaults it needs (default role, sign-ups open) with the server's own rights.
 */
import type { Sql, Tx } from "../_shared/db.ts";
import { type ConfigDocument, readConfig } from "../_shared/config-document.ts";

export interface ConfigVersion {
  version: number;
  config: ConfigDocument;
}

/**
 * The configuration as most requests need it (feature flags, maintenance, sign-up rules): read
 * at most once per `ttlMs` per process. An admin's change shows at once in the process that made
 * it and within `ttlMs` everywhere else.
 */
export interface ConfigCache {
  get(): Promise<ConfigDocument>;
  invalidate(): void;
}

export function createConfigCache(sql: Sql, ttlMs = 5_000): ConfigCache {
  let cached: { at: number; config: ConfigDocument } | null = null;
  let pending: Promise<ConfigDocument> | null = null;
  return {
    get() {
      if (cached && Date.now() - cached.at < ttlMs) return Promise.resolve(cached.config);
      pending ??= currentConfig(sql)
        .then(({ config }) => {
          cached = { at: Date.now(), config };
          return config;
        })
        .finally(() => (pending = null));
      return pending;
    },
    invalidate() {
      cached = null;
    },
  };
}

export async function currentConfig(db: Sql | Tx): Promise<ConfigVersion> {
  const rows = await db<{ version: number; config: unknown }[]>`
    select version, config from app.config_versions order by version desc limit 1`;
  if (!rows.length) return { version: 0, config: readConfig({}) };
  return { version: rows[0].version, config: readConfig(rows[0].config) };
}
