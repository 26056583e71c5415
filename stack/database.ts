/**
 * Databases for the stack, the tests and the benchmarks: the schema is always built the same way
 * (sql/local, then the migrations through the Supabase CLI, then the seed for a new database).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyLocalLayer, Cluster, freePort, pushMigrations } from "./postgres.ts";
import { ephemeralSecrets } from "./local-env.ts";
import { createTokenIssuer } from "../functions/_shared/jwt.ts";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** sql/local, then the migrations through the Supabase CLI, then (for a new database) the seed. */
export async function prepareDatabase(cluster: Cluster, seed: boolean): Promise<void> {
  await applyLocalLayer(cluster, ROOT);
  await pushMigrations(cluster, ROOT);
  if (seed) await cluster.psqlFile(join(ROOT, "supabase", "seed.sql"));
}

/** Settings for a stack on `cluster`, in local mode, with the anon key derived from the secret. */
export async function stackEnv(cluster: Cluster, env: Record<string, string>, port: number) {
  const anonKey = await createTokenIssuer(env.AGORA_JWT_SECRET, 60, "").apiKey("anon");
  return {
    AGORA_LOCAL_MODE: "true",
    AGORA_SITE_URL: `http://localhost:${port}`,
    ...env,
    AGORA_DB_URL: cluster.url(),
    AGORA_ANON_KEY: anonKey,
  };
}

/**
 * A throwaway, fast cluster with the schema applied and the seed loaded; removed by `dispose`.
 * Configured as the stack's (stack/postgres.ts), so pg_cron would run the migrations' schedules;
 * they are paused (`cron.job.active = false`) unless `schedules` is true: the tests and
 * benchmarks call the scheduled work themselves and count what it did, which a run starting at
 * any minute boundary would race with. tests/jobs/schedules.test.ts runs them.
 */
export async function throwawayCluster(options: { schedules?: boolean } = {}): Promise<
  { cluster: Cluster; secrets: Record<string, string>; dispose(): Promise<void> }
> {
  const dir = await Deno.makeTempDir({ prefix: "agora-pg-" });
  const secrets = ephemeralSecrets();
  const cluster = new Cluster({
    dir,
    port: freePort(),
    password: secrets.AGORA_DB_PASSWORD,
    fast: true,
  });
  const dispose = async () => {
    await cluster.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    await cluster.create();
    await cluster.start();
    await prepareDatabase(cluster, true);
    if (!options.schedules) await cluster.psql("update cron.job set active = false");
    await cluster.psql("create extension if not exists pgtap with schema extensions");
    await cluster.psqlFile(join(ROOT, "tests", "support", "pgtap-helpers.sql"));
  } catch (err) {
    await dispose();
    throw err;
  }
  return { cluster, secrets, dispose };
}
