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

/**
 * sql/local, then the migrations through the Supabase CLI, then (for a new database) the seed;
 * `pauseSchedules` then pauses every pg_cron job. When that changed the jobs, the cluster restarts
 * so that pg_cron's scheduler reads them afresh (`schedulerJobs`).
 */
export async function prepareDatabase(
  cluster: Cluster,
  seed: boolean,
  options: { pauseSchedules?: boolean } = {},
): Promise<void> {
  const before = await schedulerJobs(cluster);
  await applyLocalLayer(cluster, ROOT);
  await pushMigrations(cluster, ROOT);
  if (seed) await cluster.psqlFile(join(ROOT, "supabase", "seed.sql"));
  if (options.pauseSchedules) await cluster.psql("update cron.job set active = false");
  if ((await schedulerJobs(cluster)) !== before) await cluster.restart();
}

/**
 * The pg_cron jobs as the scheduler must know them (id, schedule, command, active), or "" before
 * pg_cron exists. pg_cron 1.4 (Debian 12's) can miss a change to `cron.job` committed while its
 * scheduler reloads the table: it marks its copy current once read, over the invalidation that
 * arrived meanwhile, and runs the old list until the next change. Migrations scheduling one job
 * after another hit that window: seen as paused jobs running every minute in the tests' database
 * (a compaction in the middle of a test counting rows). A restart after the jobs changed makes
 * the scheduler read the list once, when nothing changes it any more.
 */
async function schedulerJobs(cluster: Cluster): Promise<string> {
  try {
    return await cluster.psql(`
      select coalesce(string_agg(format('%s %s %s %s', jobid, schedule, active, md5(command)), '; '
                                 order by jobid), '')
      from cron.job`);
  } catch {
    return "";
  }
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
    await prepareDatabase(cluster, true, { pauseSchedules: !options.schedules });
    await cluster.psql("create extension if not exists pgtap with schema extensions");
    await cluster.psqlFile(join(ROOT, "tests", "support", "pgtap-helpers.sql"));
  } catch (err) {
    await dispose();
    throw err;
  }
  return { cluster, secrets, dispose };
}
