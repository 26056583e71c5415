/**
 * pg_cron runs the scheduled jobs on a cluster configured as the local stack configures its own
 * (stack/postgres.ts, through throwawayCluster: the same settings, only fast), through the
 * scheduler's own path: pg_cron starts each run itself and records it in `cron.job_run_details`.
 * Nothing here calls a job's SQL by hand.
 *
 * The migrations' schedules run hourly or daily, and Debian's pg_cron 1.4 schedules by the minute
 * only, so waiting for each job's own next run could take a day. Instead the test schedules a copy
 * of every job in `cron.job` (same command, same user, same database) every minute and waits for
 * each copy's `succeeded` run: one minute boundary, so 1 to 60 s of waiting. The every-minute jobs
 * (reservations, transfers, the chain follower) also run under their own names in that minute.
 * Any `failed` run (e.g. `connection failed`, what every run recorded before pg_cron used
 * background workers) fails the test at once with its message.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { join } from "node:path";
import { throwawayCluster } from "../../stack/database.ts";
import { Cluster, freePort, PG_BIN, run } from "../../stack/postgres.ts";
import { ephemeralSecrets } from "../../stack/local-env.ts";
import { test } from "../support/helpers.ts";

const COPY = "test-every-minute:";

interface Job {
  name: string;
  command: string;
  username: string;
  database: string;
}

interface Run {
  name: string;
  status: string;
  message: string | null;
}

test("pg_cron runs every scheduled job's command itself, on a cluster configured as the stack's", async () => {
  const { cluster, dispose } = await throwawayCluster({ schedules: true });
  try {
    const json = async <T>(sql: string): Promise<T> => JSON.parse(await cluster.psql(sql)) as T;
    const jobs = await json<Job[]>(`
      select coalesce(json_agg(json_build_object('name', jobname, 'command', command,
               'username', username, 'database', database) order by jobname), '[]')
      from cron.job where active`);
    assert.ok(
      jobs.length >= 11,
      `the migrations schedule at least 11 jobs: ${jobs.map((j) => j.name)}`,
    );
    assert.ok(jobs.some((j) => j.name === "agora-prune-cron-runs"), "the purge is scheduled");

    // A copy of each, every minute, scheduled by the same user the migrations ran as.
    await cluster.psql(`
      select cron.schedule('${COPY}' || jobname, '* * * * *', command)
      from cron.job where jobname not like '${COPY}%'`);
    const copies = await json<Job[]>(`
      select json_agg(json_build_object('name', jobname, 'command', command,
               'username', username, 'database', database) order by jobname)
      from cron.job where jobname like '${COPY}%'`);
    assert.deepEqual(
      copies.map((c) => ({ ...c, name: c.name.slice(COPY.length) })),
      jobs,
      "each copy has its job's command, user and database",
    );

    const started = Date.now();
    const pending = new Set(jobs.map((j) => COPY + j.name));
    while (pending.size) {
      const runs = await json<Run[]>(`
        select coalesce(json_agg(json_build_object('name', j.jobname, 'status', d.status,
                 'message', d.return_message)), '[]')
        from cron.job_run_details d join cron.job j using (jobid)`);
      const failed = runs.filter((r) => r.status === "failed");
      assert.deepEqual(failed, [], "no scheduled run failed");
      for (const run of runs) if (run.status === "succeeded") pending.delete(run.name);
      if (Date.now() - started > 150_000) {
        assert.fail(`no succeeded run after 150 s for ${[...pending].join(", ")}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    console.log(`every copy succeeded within ${Math.round((Date.now() - started) / 1000)} s`);

    // The every-minute jobs ran under their own names too.
    const own = await json<string[]>(`
      select coalesce(json_agg(distinct j.jobname), '[]')
      from cron.job_run_details d join cron.job j using (jobid)
      where d.status = 'succeeded' and j.jobname not like '${COPY}%'`);
    for (const name of ["agora-expire-reservations", "agora-expire-wallet-transfers"]) {
      if (!own.includes(name)) {
        // Its run may start a moment after the copies' (pg_cron starts runs as workers free up).
        await waitFor(async () =>
          (await json<string[]>(`
            select coalesce(json_agg(j.jobname), '[]') from cron.job_run_details d
            join cron.job j using (jobid) where d.status = 'succeeded' and j.jobname = '${name}'`))
            .length > 0, `${name} succeeded under its own name`);
      }
    }
  } finally {
    await dispose();
  }
});

test("a cluster made before pg_cron used background workers gets them at its next start", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agora-pg-" });
  const cluster = new Cluster({
    dir,
    port: freePort(),
    password: ephemeralSecrets().AGORA_DB_PASSWORD,
    fast: true,
  });
  const pgCtlStart = () =>
    run(join(PG_BIN, "pg_ctl"), [
      "-D",
      cluster.dataDir,
      "-l",
      join(dir, "postgres.log"),
      "-w",
      "start",
    ], {
      asPostgres: true,
    });
  const cron = async () =>
    (await cluster.psql(
      "select current_setting('cron.use_background_workers') || ' ' || current_setting('max_worker_processes')",
    )).trim();
  try {
    await cluster.create();
    // postgresql.conf as the stack wrote it before (the same `# Agora` block, without these).
    const conf = join(cluster.dataDir, "postgresql.conf");
    const older = (await Deno.readTextFile(conf)).split("\n")
      .filter((line) =>
        !/^(cron\.use_background_workers|cron\.max_running_jobs|max_worker_processes) /.test(line)
      )
      .join("\n");
    await Deno.writeTextFile(conf, older);

    // Left running with the older file (an earlier `npm start` that did not stop it): the stack's
    // start rewrites the settings and restarts the server, since they apply only at server start.
    await pgCtlStart();
    assert.equal(await cron(), "off 8");
    await cluster.start();
    assert.equal(await cron(), "on 32");

    // Stopped with the older file: started with the current settings.
    await cluster.stop();
    await Deno.writeTextFile(conf, older);
    await cluster.start();
    assert.equal(await cron(), "on 32");
    // The block is replaced, never appended twice.
    assert.equal((await Deno.readTextFile(conf)).split("\n# Agora\n").length, 2);
    assert.equal(await cluster.writeSettings(), false, "nothing to change on a current cluster");
  } finally {
    await cluster.stop().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

async function waitFor(check: () => Promise<boolean>, what: string, ms = 30_000) {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

test("the tests' database: its paused jobs have not run since its server started (pg_cron read the pause)", async () => {
  // prepareDatabase restarts the cluster after pausing, so pg_cron's scheduler cannot hold the
  // list from before the pause (database.ts, schedulerJobs); the suite has run for minutes by now.
  const sql = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 1, onnotice: () => {} });
  try {
    const [{ paused, active }] = await sql<{ paused: number; active: number }[]>`
      select count(*) filter (where not active)::int as paused,
             count(*) filter (where active)::int as active
      from cron.job`;
    assert.ok(
      paused >= 11 && active === 0,
      `every job is paused (${paused} paused, ${active} active)`,
    );
    const runs = await sql<{ job: string; at: string }[]>`
      select j.jobname as job, d.start_time::text as at
      from cron.job_run_details d join cron.job j using (jobid)
      where d.start_time >= pg_postmaster_start_time()`;
    assert.deepEqual([...runs], [], "no scheduled run since the server started");
  } finally {
    await sql.end();
  }
});
