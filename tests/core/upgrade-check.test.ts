/**
 * A database built from the migrations can be upgraded with pg_upgrade, the way Supabase's
 * in-place major-version upgrade starts: `pg_upgrade --check` between that cluster (stopped) and a
 * new, empty one. Debian ships one major version here, so both are Postgres 15; the checks that
 * look at the old cluster's contents (reg* columns in user tables, composite types of the system
 * catalog, the libraries its functions need) are the same ones a 15 → 17 upgrade runs first.
 * Before the account registries named their functions as text, this failed at "Checking for reg*
 * data types in user tables". About 15 s: the cluster of its own is built from the migrations.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { throwawayCluster } from "../../stack/database.ts";
import { Cluster, freePort, PG_BIN, run } from "../../stack/postgres.ts";
import { test } from "../support/helpers.ts";

test("pg_upgrade --check passes on a database built from the migrations", async () => {
  const { cluster, secrets, dispose } = await throwawayCluster();
  const dir = await Deno.makeTempDir({ prefix: "agora-upgrade-" });
  try {
    await cluster.stop();
    const target = new Cluster({
      dir,
      port: freePort(),
      password: secrets.AGORA_DB_PASSWORD,
      fast: true,
    });
    await target.create();
    // run() throws with pg_upgrade's report when a check fails; it writes into its cwd.
    const report = await run(join(PG_BIN, "pg_upgrade"), [
      "--check",
      "--old-bindir",
      PG_BIN,
      "--new-bindir",
      PG_BIN,
      "--old-datadir",
      cluster.dataDir,
      "--new-datadir",
      target.dataDir,
      "--username",
      "postgres",
      "--old-port",
      String(freePort()),
      "--new-port",
      String(freePort()),
      "--socketdir",
      target.dir,
    ], { asPostgres: true, cwd: target.dir, env: { PGPASSWORD: secrets.AGORA_DB_PASSWORD } });
    assert.match(report, /Checking for reg\* data types in user tables\s+ok/);
    assert.match(report, /\*Clusters are compatible\*/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await dispose();
  }
});
