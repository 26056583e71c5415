/**
 * Postgres goes away just as a job finishes (stopped under the drain, started again a second
 * later): the job's outcome is written down once the database is back, within its lease. Left
 * unrecorded, the job stayed `running` until its lease ran out and then ran again (seen as a
 * flaky "no job left running" in tests/faults/postgres-restart.test.ts). The same for a job that
 * fails meanwhile: its failure is recorded and it is queued again, not left running.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { throwawayCluster } from "../../stack/database.ts";
import { defineJob, drain, enqueueJob, JobRegistry } from "../../functions/api/core/job-queue.ts";
import { closeDeps } from "../../functions/api/deps.ts";
import { test, testApp } from "../support/helpers.ts";

const { cluster, dispose } = await throwawayCluster();
const t = testApp({ AGORA_DB_URL: cluster.url() });

let runs = 0;
const outage = defineJob({
  kind: "test.outage_at_the_end",
  payload: z.object({ fail: z.boolean() }),
  leaseSeconds: 60,
  async run({ fail }) {
    runs++;
    // A fast stop ends every connection; the server comes back a second later.
    await cluster.stop();
    setTimeout(() => void cluster.start(), 1_000);
    if (fail) throw new Error("failed while the database was going away");
  },
});

test("[faults] a job finishing while Postgres is down is recorded done once it is back, and a failing one is queued again; neither is left running", async () => {
  try {
    for (const fail of [false, true]) {
      runs = 0;
      const id = await enqueueJob(t.deps.sql, outage, { fail });
      const result = await drain(t.deps, {
        registry: new JobRegistry([outage]),
        maxJobs: 1,
        batch: 1,
      });
      assert.equal(runs, 1, "the handler ran once");
      assert.deepEqual(
        [result.done, result.retried, result.lost],
        fail ? [0, 1, 0] : [1, 0, 0],
        "the outcome was recorded by this drain",
      );
      const [job] = await t.deps.sql<{ state: string; attempts: number }[]>`
        select state::text, attempts from app_private.jobs where id = ${id}::bigint`;
      assert.deepEqual(job, { state: fail ? "queued" : "done", attempts: 1 });
    }
  } finally {
    await closeDeps(t.deps).catch(() => {});
    await dispose();
  }
});
