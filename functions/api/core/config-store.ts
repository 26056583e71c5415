/**
 * Reading the current configuration, defaults filled in by the database. Admin reads go through
 * RLS (`asUser`); the cache serves flags and sign-up rules with the server's own rights.
 */
import type { Sql, Tx } from "../../_shared/db.ts";
import { type ConfigDocument, readConfig } from "../../_shared/config-document.ts";

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

/** The newest version, laid over the defaults (`app.effective_config()`). */
export async function currentConfig(db: Sql | Tx): Promise<ConfigVersion> {
  const [row] = await db<{ version: number | null; config: unknown }[]>`
    select (select max(version) from app.config_versions) as version,
           app.effective_config() as config`;
  return { version: row.version ?? 0, config: readConfig(row.config) };
}
