/**
 * The job queue against the real database: retries with growing delays ending in the dead-letter
 * state, drains racing over many jobs without running one twice, a crash between claiming and
 * finishing, Retry-After from a real HTTP 429, dedupe keys, the local worker woken by NOTIFY (a
 * job queued while it is idle runs within a second), and the drain route's service-key gate.
 * Each test uses job kinds of its own, so no drain here touches another test's jobs.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { z } from "zod";
import { SignJWT } from "jose";
import {
  createUser,
  expectError,
  expectJson,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { createPool } from "../../functions/_shared/db.ts";
import { createTokenIssuer } from "../../functions/_shared/jwt.ts";
import {
  defineJob,
  drain,
  enqueueJob,
  type JobContext,
  JobRegistry,
  PermanentJobFailure,
  retryAfterSeconds,
  RetryJobAfter,
} from "../../functions/api/core/job-queue.ts";
import { releaseGoneWorkers, startJobWorker } from "../../functions/api/jobs/worker.ts";
import { startStackServer } from "../../stack/server.ts";

const storageDir = await Deno.makeTempDir({ prefix: "agora-jobs-" });
globalThis.addEventListener("unload", () => Deno.removeSync(storageDir, { recursive: true }));
const t = testApp({ AGORA_STORAGE_DIR: storageDir });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A kind name no other test uses. */
const uniqueKind = (name: string) => `test.${name}.${crypto.randomUUID().slice(0, 8)}`;

/** A kind whose handler is `run`, with a payload `{ n }`. */
function kindOf(
  name: string,
  run: (payload: { n: number }, ctx: JobContext) => Promise<void>,
  extra: { leaseSeconds?: number; maxAttempts?: number } = {},
) {
  return defineJob({
    kind: uniqueKind(name),
    payload: z.object({ n: z.number().int() }),
    run,
    ...extra,
  });
}

interface JobRow {
  id: string;
  state: string;
  attempts: number;
  last_error: string | null;
  due_in: number;
  claimed_by: string | null;
  finished: boolean;
}

async function jobRow(id: string): Promise<JobRow> {
  const [row] = await t.deps.sql<JobRow[]>`
    select id::text, state, attempts, last_error, claimed_by, finished_at is not null as finished,
           extract(epoch from run_at - clock_timestamp())::float8 as due_in
    from app_private.jobs where id = ${id}`;
  return row;
}

/** Makes a queued job due now (instead of waiting for its backoff). */
const fastForward = (id: string) =>
  t.deps.sql`update app_private.jobs set run_at = now() where id = ${id} and state = 'queued'`;

// --- retries, backoff, dead letters ----------------------------------------------------------

test("[jobs] a job that keeps failing is retried with growing delays, then dead-lettered", async () => {
  let calls = 0;
  const flaky = kindOf("flaky", () => {
    calls++;
    return Promise.reject(new Error(`provider down (call ${calls})`));
  }, { maxAttempts: 4 });
  const registry = new JobRegistry([flaky]);
  const id = await enqueueJob(t.deps.sql, flaky, { n: 1 });

  const delays: number[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const result = await drain(t.deps, { registry });
    assert.deepEqual(result, { claimed: 1, done: 0, retried: 1, dead: 0, lost: 0 });
    const row = await jobRow(id);
    assert.equal(row.state, "queued");
    assert.equal(row.attempts, attempt);
    assert.match(row.last_error ?? "", new RegExp(`provider down \\(call ${attempt}\\)`));
    // Backoff: 10 s doubled per attempt, jittered within its upper half.
    const ceiling = 10 * 2 ** (attempt - 1);
    assert.ok(
      row.due_in > ceiling / 2 - 1 && row.due_in <= ceiling,
      `attempt ${attempt}: retried in ${ceiling / 2} to ${ceiling} s, got ${row.due_in}`,
    );
    delays.push(row.due_in);
    assert.equal((await drain(t.deps, { registry })).claimed, 0, "nothing runs before its time");
    await fastForward(id);
  }
  assert.ok(delays[0] <= delays[1] && delays[1] <= delays[2], `delays grow: ${delays}`);

  const last = await drain(t.deps, { registry });
  assert.deepEqual(last, { claimed: 1, done: 0, retried: 0, dead: 1, lost: 0 });
  const row = await jobRow(id);
  assert.equal(row.state, "dead");
  assert.equal(row.attempts, 4);
  assert.ok(row.finished);
  assert.match(row.last_error ?? "", /provider down \(call 4\)/);
  assert.equal(calls, 4);
  await fastForward(id);
  assert.equal((await drain(t.deps, { registry })).claimed, 0, "a dead job never runs again");

  // An operator puts it back after fixing the cause: a fresh set of attempts, due now.
  const [{ ok }] = await t.deps.sql`select app_private.retry_dead_job(${id}) as ok`;
  assert.equal(ok, true);
  assert.equal((await jobRow(id)).attempts, 0);
  assert.equal((await drain(t.deps, { registry })).retried, 1);
});

test("[jobs] a permanent failure or a payload its kind refuses is dead-lettered at once", async () => {
  const refused = kindOf("refused", () => Promise.reject(new PermanentJobFailure("card declined")));
  let ran = 0;
  const strict = kindOf("strict", () => {
    ran++;
    return Promise.resolve();
  });
  const registry = new JobRegistry([refused, strict]);
  const a = await enqueueJob(t.deps.sql, refused, { n: 1 });
  const [{ id: b }] = await t.deps.sql<{ id: string }[]>`
    select app_private.enqueue_job(${strict.kind}, '{"n": "not a number"}')::text as id`;
  const result = await drain(t.deps, { registry });
  assert.deepEqual(result, { claimed: 2, done: 0, retried: 0, dead: 2, lost: 0 });
  assert.equal((await jobRow(a)).state, "dead");
  assert.match((await jobRow(a)).last_error ?? "", /card declined/);
  assert.equal((await jobRow(a)).attempts, 1);
  assert.equal((await jobRow(b)).state, "dead");
  assert.match((await jobRow(b)).last_error ?? "", /invalid payload/);
  assert.equal(ran, 0, "the handler never saw the bad payload");
});

test("[jobs] Retry-After from a provider's HTTP 429 is honoured", async () => {
  // A stand-in for an outside provider at its network boundary: the first call is rate limited.
  let hits = 0;
  const provider = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, () => {
    hits++;
    return hits === 1
      ? new Response("slow down", { status: 429, headers: { "Retry-After": "120" } })
      : Response.json({ ok: true });
  });
  const url = `http://127.0.0.1:${provider.addr.port}/send`;
  try {
    const push = kindOf("push", async (_payload, { signal }) => {
      const response = await fetch(url, { method: "POST", signal });
      await response.body?.cancel();
      if (response.status === 429) {
        throw new RetryJobAfter(retryAfterSeconds(response.headers.get("retry-after")) ?? 60);
      }
      if (!response.ok) throw new Error(`provider answered ${response.status}`);
    });
    const registry = new JobRegistry([push]);
    const id = await enqueueJob(t.deps.sql, push, { n: 1 });
    assert.equal((await drain(t.deps, { registry })).retried, 1);
    const row = await jobRow(id);
    assert.equal(row.state, "queued");
    assert.ok(
      row.due_in > 118 && row.due_in <= 120,
      `due in 120 s, not the backoff: ${row.due_in}`,
    );
    assert.match(row.last_error ?? "", /RetryJobAfter: retry after 120 s/);
    assert.equal((await drain(t.deps, { registry })).claimed, 0);
    await fastForward(id);
    assert.equal((await drain(t.deps, { registry })).done, 1);
    assert.equal(hits, 2);
  } finally {
    await provider.shutdown();
  }
});

test("[jobs] retryAfterSeconds reads delay-seconds and HTTP dates", () => {
  const now = Date.parse("2026-11-21T12:00:00Z");
  assert.equal(retryAfterSeconds("30", now), 30);
  assert.equal(retryAfterSeconds(" 0 ", now), 0);
  assert.equal(retryAfterSeconds("Sat, 21 Nov 2026 12:01:30 GMT", now), 90);
  assert.equal(retryAfterSeconds("Sat, 21 Nov 2026 11:00:00 GMT", now), 0, "a past date: now");
  assert.equal(retryAfterSeconds("soon", now), null);
  assert.equal(retryAfterSeconds("-5", now), null);
  assert.equal(retryAfterSeconds(null, now), null);
});

// --- concurrency ---------------------------------------------------------------------------

test("[jobs] three drains racing over 300 jobs, each on its own pool, run every job exactly once", async () => {
  const runs = new Map<number, number>();
  const racing = kindOf("race", async ({ n }) => {
    runs.set(n, (runs.get(n) ?? 0) + 1);
    await sleep(Math.random() * 3);
  });
  const registry = new JobRegistry([racing]);
  await t.deps.sql`
    select app_private.enqueue_job(${racing.kind}, jsonb_build_object('n', n))
    from generate_series(1, 300) n`;
  const url = Deno.env.get("AGORA_TEST_DB_URL")!;
  const pools = [createPool(url, 3), createPool(url, 3), createPool(url, 3)];
  try {
    const results = await Promise.all(
      pools.map((sql, i) =>
        drain({ ...t.deps, sql }, { registry, maxJobs: 1000, batch: 7, worker: `racer-${i}` })
      ),
    );
    assert.equal(results.reduce((n, r) => n + r.claimed, 0), 300);
    assert.equal(results.reduce((n, r) => n + r.done, 0), 300);
    for (const [i, r] of results.entries()) assert.ok(r.claimed > 0, `drain ${i} took part`);
    assert.equal(runs.size, 300, "every job ran");
    const twice = [...runs].filter(([, count]) => count !== 1);
    assert.deepEqual(twice, [], "no job ran twice");
    const [row] = await t.deps.sql`
      select count(*) filter (where state = 'done')::int as done,
             count(distinct claimed_by)::int as workers
      from app_private.jobs where kind = ${racing.kind}`;
    assert.equal(row.done, 300);
    assert.equal(row.workers, 3);
  } finally {
    await Promise.all(pools.map((sql) => sql.end()));
  }
});

test("[jobs] a crash between claiming and finishing: the job runs again once the lease runs out", async () => {
  const ran: { attempt: number; staleComplete: boolean }[] = [];
  let staleToken = "";
  const crashy = kindOf("crashy", async (_payload, ctx) => {
    // The crashed worker's late answer, arriving while the job runs again: refused.
    const [{ ok }] = await ctx.deps.sql`
      select app_private.complete_job(${ctx.job.id}::bigint, ${staleToken}::uuid) as ok`;
    ran.push({ attempt: ctx.job.attempt, staleComplete: ok });
  });
  const registry = new JobRegistry([crashy]);
  const id = await enqueueJob(t.deps.sql, crashy, { n: 1 });

  // A worker claims the job with a short lease and dies before finishing.
  const [claimed] = await t.deps.sql<{ claim_token: string }[]>`
    select claim_token from app_private.claim_jobs(
      ${[crashy.kind]}::text[], 'crashed-worker', 10, array[interval '300 milliseconds'])`;
  staleToken = claimed.claim_token;
  assert.equal((await jobRow(id)).state, "running");
  assert.equal((await drain(t.deps, { registry })).claimed, 0, "held while the lease lasts");

  await sleep(400);
  const result = await drain(t.deps, { registry, worker: "survivor" });
  assert.deepEqual(result, { claimed: 1, done: 1, retried: 0, dead: 0, lost: 0 });
  assert.deepEqual(ran, [{ attempt: 2, staleComplete: false }]);
  const row = await jobRow(id);
  assert.equal(row.state, "done");
  assert.equal(row.attempts, 2);
  assert.equal(row.claimed_by, "survivor");
  const [{ ok }] = await t.deps.sql`
    select app_private.fail_job(${id}::bigint, ${staleToken}::uuid, 'late') as ok`;
  assert.equal(ok, null, "the crashed worker cannot fail it afterwards either");
  assert.equal((await jobRow(id)).state, "done");
});

test("[jobs] a lease that runs out on the last attempt dead-letters the job instead of running it", async () => {
  let ran = 0;
  const once = kindOf("once", () => {
    ran++;
    return Promise.resolve();
  }, { maxAttempts: 1 });
  const registry = new JobRegistry([once]);
  const id = await enqueueJob(t.deps.sql, once, { n: 1 });
  await t.deps.sql`
    select * from app_private.claim_jobs(${[once.kind]}::text[], 'crashed-worker', 1,
                                         array[interval '100 milliseconds'])`;
  await sleep(200);
  assert.equal((await drain(t.deps, { registry })).claimed, 0);
  const row = await jobRow(id);
  assert.equal(row.state, "dead");
  assert.match(row.last_error ?? "", /lease ran out on the last attempt/);
  assert.equal(ran, 0);
});

test("[jobs] a handler that outlives its lease is cut off and its job retried", async () => {
  const slow = kindOf("slow", (_payload, { signal }) =>
    new Promise((_, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    }), { leaseSeconds: 1.5 });
  const registry = new JobRegistry([slow]);
  const id = await enqueueJob(t.deps.sql, slow, { n: 1 });
  const started = Date.now();
  const result = await drain(t.deps, { registry });
  assert.equal(result.retried, 1);
  assert.ok(Date.now() - started < 1_400, "stopped waiting before the lease ended");
  assert.match((await jobRow(id)).last_error ?? "", /timed out/);
});

// --- dedupe --------------------------------------------------------------------------------

test("[jobs] enqueueing with the same dedupe key gives one job, which runs once", async () => {
  let ran = 0;
  const refund = kindOf("refund", () => {
    ran++;
    return Promise.resolve();
  });
  const registry = new JobRegistry([refund]);
  const key = `refund:${crypto.randomUUID()}`;
  const first = await enqueueJob(t.deps.sql, refund, { n: 1 }, { dedupeKey: key });
  const second = await enqueueJob(t.deps.sql, refund, { n: 2 }, { dedupeKey: key });
  const [{ third, fourth }] = await t.deps.sql`
    select app_private.enqueue_job(${refund.kind}, '{"n": 3}', now(), ${key})::text as third,
           app_private.enqueue_job(${refund.kind}, '{"n": 4}', now(), ${key})::text as fourth`;
  assert.equal(second, first);
  assert.equal(third, first);
  assert.equal(fourth, first);
  // Concurrent enqueues of one key, from separate connections.
  const raced = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) =>
        t.deps.sql.begin((tx) => enqueueJob(tx, refund, { n: 10 + i }, { dedupeKey: `${key}:x` })),
    ),
  );
  assert.equal(new Set(raced).size, 1, "one job for the raced key");
  const [{ count }] = await t.deps.sql`
    select count(*)::int from app_private.jobs where kind = ${refund.kind}`;
  assert.equal(count, 2);
  assert.equal((await drain(t.deps, { registry })).done, 2);
  await enqueueJob(t.deps.sql, refund, { n: 5 }, { dedupeKey: key });
  assert.equal((await drain(t.deps, { registry })).claimed, 0, "a done job is not queued again");
  assert.equal(ran, 2);
});

test("[jobs] one drain keeps a window of handlers: a slow job holds only its slot, and work queued by a running job is run by the same drain", async () => {
  const order: string[] = [];
  const child = kindOf("child", ({ n }) => {
    order.push(`child ${n}`);
    return Promise.resolve();
  });
  const quick = kindOf("quick", ({ n }) => {
    order.push(`quick ${n}`);
    return Promise.resolve();
  });
  // The slow one queues a child while the quick ones have long finished.
  const slow = kindOf("slow", async ({ n }) => {
    await sleep(400);
    await enqueueJob(t.deps.sql, child, { n });
    order.push(`slow ${n}`);
  });
  const registry = new JobRegistry([slow, quick, child]);
  await enqueueJob(t.deps.sql, slow, { n: 0 });
  for (let n = 0; n < 12; n++) await enqueueJob(t.deps.sql, quick, { n });
  const started = performance.now();
  const result = await drain(t.deps, { registry, batch: 4 });
  assert.equal(result.done, 14, "the slow job, the twelve quick ones and the child");
  assert.deepEqual(order.slice(-2), ["slow 0", "child 0"], "the child ran after its parent");
  assert.equal(order.filter((o) => o.startsWith("quick")).length, 12);
  // With whole batches of four, the quick ones in the slow one's batch would have waited for it.
  assert.ok(
    order.indexOf("quick 11") < order.indexOf("slow 0"),
    "every quick job ran while the slow one held its slot",
  );
  assert.ok(performance.now() - started < 2_000);
});

// --- the local worker ----------------------------------------------------------------------

test("[jobs] a job queued while the worker is idle runs within a second (NOTIFY), and a delayed one when due", async () => {
  const ran = new Map<number, number>();
  const counts = new Map<number, number>();
  const wakeable = kindOf("wake", ({ n }) => {
    ran.set(n, Date.now());
    counts.set(n, (counts.get(n) ?? 0) + 1);
    return Promise.resolve();
  });
  const registry = new JobRegistry([wakeable]);
  // Two workers, each on its own pool, as two server processes would be.
  const url = Deno.env.get("AGORA_TEST_DB_URL")!;
  const otherSql = createPool(url, 3);
  const workers = [
    startJobWorker(t.deps, { registry }),
    startJobWorker({ ...t.deps, sql: otherSql, listener: otherSql }, { registry }),
  ];
  try {
    await Promise.all(workers.map((w) => w.ready));
    await sleep(300); // idle: nothing due, sleeping until a notification

    const queuedAt = Date.now();
    await enqueueJob(t.deps.sql, wakeable, { n: 1 });
    while (!ran.has(1) && Date.now() - queuedAt < 2_000) await sleep(5);
    assert.ok(ran.has(1), "it ran");
    const latency = ran.get(1)! - queuedAt;
    assert.ok(latency < 1_000, `ran ${latency} ms after it was queued`);

    const delayedAt = Date.now();
    await enqueueJob(t.deps.sql, wakeable, { n: 2 }, { runAt: new Date(delayedAt + 700) });
    while (!ran.has(2) && Date.now() - delayedAt < 3_000) await sleep(5);
    const delay = ran.get(2)! - delayedAt;
    assert.ok(delay >= 650 && delay < 1_700, `a job due in 700 ms ran after ${delay} ms`);

    await t.deps.sql`
      select app_private.enqueue_job(${wakeable.kind}, jsonb_build_object('n', n))
      from generate_series(100, 199) n`;
    const burstAt = Date.now();
    while (ran.size < 102 && Date.now() - burstAt < 5_000) await sleep(10);
    assert.equal(ran.size, 102, "the burst ran");
    assert.deepEqual([...counts].filter(([, c]) => c !== 1), [], "each job once across workers");
    const [{ workers: claimers }] = await t.deps.sql`
      select count(distinct claimed_by)::int as workers from app_private.jobs
      where kind = ${wakeable.kind}`;
    assert.ok(claimers >= 1);
  } finally {
    const stopping = Date.now();
    await Promise.all(workers.map((w) => w.stop()));
    assert.ok(Date.now() - stopping < 1_000, "idle workers stop at once");
    await otherSql.end();
  }
  const after = ran.size;
  await enqueueJob(t.deps.sql, wakeable, { n: 3 });
  await sleep(300);
  assert.equal(ran.size, after, "a stopped worker runs nothing");
});

test("[jobs] stopping a worker waits for the job in hand; a job that gives up on stop is queued again, not lost", async () => {
  const events: string[] = [];
  let release: () => void = () => {};
  const steady = kindOf("steady", async () => {
    events.push("steady started");
    await sleep(300);
    events.push("steady finished");
  });
  const polite = kindOf("polite", (_payload, { signal }) => {
    events.push("polite started");
    return new Promise<void>((resolve, reject) => {
      release = resolve;
      signal.addEventListener("abort", () => reject(new Error("stopping")), { once: true });
    });
  });
  const registry = new JobRegistry([steady, polite]);
  const worker = startJobWorker(t.deps, { registry });
  try {
    await worker.ready;
    // One transaction: both are claimed in one batch and run side by side.
    const [a, b] = await t.deps.sql.begin((tx) =>
      Promise.all([enqueueJob(tx, steady, { n: 1 }), enqueueJob(tx, polite, { n: 2 })])
    );
    const startedBy = Date.now() + 2_000;
    const started = () => events.filter((e) => e.endsWith("started")).length;
    while (started() < 2 && Date.now() < startedBy) await sleep(5);
    assert.deepEqual(events.toSorted(), ["polite started", "steady started"]);
    await worker.stop();
    assert.ok(events.includes("steady finished"), "stop waited for the steady job");
    assert.equal((await jobRow(a)).state, "done");
    const row = await jobRow(b);
    assert.equal(row.state, "queued", "the job that gave up is queued again");
    assert.equal(row.attempts, 1);
    assert.match(row.last_error ?? "", /stopping/);
  } finally {
    release();
    await worker.stop();
  }
});

test("[jobs] the stack server drains the queue: a deleted attachment's file is gone within a second", async () => {
  const server = startStackServer(t.deps, { port: 0 });
  try {
    await server.jobs!.ready;
    const user = await createUser(t.deps, "MEMBER");
    const key = `${user.id}/${crypto.randomUUID()}`;
    await t.deps.storage.put(key, new TextEncoder().encode("bytes"), "text/plain");
    const [row] = await t.deps.sql`
      insert into app.attachments (uploader_id, name, content_type, size, storage_key)
      values (${user.id}, 'a.txt', 'text/plain', 5, ${key}) returning id`;
    const path = `${storageDir}/${key}`;
    const exists = () => Deno.stat(path).then(() => true, () => false);
    assert.ok(await exists());
    await sleep(200);
    const deletedAt = Date.now();
    await t.deps.sql`delete from app.attachments where id = ${row.id}`;
    while (await exists() && Date.now() - deletedAt < 2_000) await sleep(5);
    const took = Date.now() - deletedAt;
    assert.equal(await exists(), false, "the file is gone");
    assert.ok(took < 1_000, `removed ${took} ms after the row`);
  } finally {
    await server.shutdown();
  }
});

// --- the drain route -----------------------------------------------------------------------

const DRAIN = "/api/internal/jobs/drain";

test("[jobs] POST /api/internal/jobs/drain with the service role key runs due jobs", async () => {
  const serviceKey = await t.deps.tokens.apiKey("service_role");
  const user = await createUser(t.deps, "MEMBER");
  const key = `${user.id}/${crypto.randomUUID()}`;
  await t.deps.storage.put(key, new TextEncoder().encode("bytes"), "text/plain");
  await t.deps.sql`
    select app_private.enqueue_job('storage.delete', jsonb_build_object('key', ${key}::text))`;
  const response = await t.request("POST", DRAIN, { token: serviceKey });
  const body = await expectJson(response, 200);
  assert.deepEqual(Object.keys(body).sort(), ["claimed", "dead", "done", "lost", "retried"]);
  assert.ok(body.done >= 1);
  assert.equal(await Deno.stat(`${storageDir}/${key}`).then(() => true, () => false), false);

  const limited = await t.request("POST", DRAIN, { token: serviceKey, body: { maxJobs: 5 } });
  assert.equal(limited.status, 200);
  await limited.body?.cancel();
  await expectError(
    await t.request("POST", DRAIN, { token: serviceKey, body: { maxJobs: 0 } }),
    400,
    "invalid_request",
  );
  await expectError(
    await t.request("POST", DRAIN, { token: serviceKey, body: { kinds: ["x"] } }),
    400,
    "invalid_request",
  );
});

test("[jobs] the drain route refuses everyone but the service key: 401 without one of our keys, 403 for another role", async () => {
  const member = await signInAs(t, "MEMBER");
  const admin = await signInAs(t, "ADMIN");
  const anonKey = await t.deps.tokens.apiKey("anon");
  const foreignKey = await createTokenIssuer("another-project-secret-".repeat(2), 60, "")
    .apiKey("service_role");
  const secret = new TextEncoder().encode(t.deps.settings.jwtSecret);
  const expiredKey = await new SignJWT({ role: "service_role" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(1_700_000_000)
    .setExpirationTime(1_700_000_060)
    .sign(secret);
  const noneAlg = `${btoa(JSON.stringify({ alg: "none", typ: "JWT" }))}.${
    btoa(JSON.stringify({ role: "service_role" }))
  }.`.replace(/=/g, "");

  // A due job of the app's, so a wrongly admitted call would have work to do.
  await t.deps.sql`
    select app_private.enqueue_job('storage.delete',
      jsonb_build_object('key', ${`${crypto.randomUUID()}/guard`}::text))`;
  const [{ before }] = await t.deps.sql`
    select count(*)::int as before from app_private.jobs where state = 'done'`;

  const cases: [string, RequestInit["headers"], number, string][] = [
    ["no Authorization", {}, 401, "unauthenticated"],
    ["not a bearer", { authorization: "Basic abc" }, 401, "unauthenticated"],
    ["garbage", { authorization: "Bearer nope" }, 401, "unauthenticated"],
    [
      "another project's service key",
      { authorization: `Bearer ${foreignKey}` },
      401,
      "unauthenticated",
    ],
    ["an expired service key", { authorization: `Bearer ${expiredKey}` }, 401, "unauthenticated"],
    ["an unsigned token", { authorization: `Bearer ${noneAlg}` }, 401, "unauthenticated"],
    ["the anon key", { authorization: `Bearer ${anonKey}` }, 403, "forbidden"],
    [
      "a member's access token",
      { authorization: `Bearer ${member.accessToken}` },
      403,
      "forbidden",
    ],
    ["an ADMIN's access token", { authorization: `Bearer ${admin.accessToken}` }, 403, "forbidden"],
  ];
  for (const [name, headers, status, code] of cases) {
    const response = await t.request("POST", DRAIN, {
      headers: headers as Record<string, string>,
      body: {},
    });
    try {
      await expectError(response, status, code);
    } catch (err) {
      throw new Error(`${name}: ${err instanceof Error ? err.message : err}`);
    }
  }
  // An ADMIN's session cookie is no key either.
  await expectError(
    await t.request("POST", DRAIN, {
      cookies: { "agora-access-token": admin.accessToken },
      headers: { origin: "http://app.example.test" },
      body: {},
    }),
    401,
    "unauthenticated",
  );
  const [{ after }] = await t.deps.sql`
    select count(*)::int as after from app_private.jobs where state = 'done'`;
  assert.equal(after, before, "no refused call ran a job");
});

test("[jobs] the drain route is in the OpenAPI document with the service-key security scheme", async () => {
  const doc = await expectJson(await t.request("GET", "/api/openapi.json"), 200);
  const op = doc.paths[DRAIN]?.post;
  assert.ok(op, "documented");
  assert.deepEqual(op.security, [{ serviceRole: [] }]);
  assert.equal(doc.components.securitySchemes.serviceRole.scheme, "bearer");
  for (const status of ["200", "400", "401", "403"]) assert.ok(op.responses[status], status);
});

test("[jobs] one drain of two kinds leases each job for its own kind's time", async () => {
  const leases: Record<string, number> = {};
  const record = (name: string) => async (_p: { n: number }, ctx: JobContext) => {
    const [row] = await t.deps.sql<{ seconds: number }[]>`
      select round(extract(epoch from locked_until - started_at))::int as seconds
      from app_private.jobs where id = ${ctx.job.id}`;
    leases[name] = row.seconds;
  };
  const short = kindOf("short", record("short"));
  const long = kindOf("long", record("long"), { leaseSeconds: 240 });
  const registry = new JobRegistry([short, long]);
  await enqueueJob(t.deps.sql, short, { n: 1 });
  await enqueueJob(t.deps.sql, long, { n: 1 });
  assert.equal((await drain(t.deps, { registry })).done, 2);
  assert.deepEqual(leases, { short: 30, long: 240 });
});

test("[jobs] a starting worker takes back at once the jobs of a process of its machine that is gone", async () => {
  const kind = kindOf("orphan", () => Promise.resolve(), { leaseSeconds: 600 });
  const goneJob = await enqueueJob(t.deps.sql, kind, { n: 1 });
  const liveJob = await enqueueJob(t.deps.sql, kind, { n: 2 });
  let deadPid = 4_000_000;
  while (existsSync(`/proc/${deadPid}`)) deadPid--;
  const host = Deno.hostname();
  // Claimed by a process that no longer exists, and by one that does (pid 1), for ten minutes.
  for (
    const [id, worker] of [[goneJob, `${host}:${deadPid}:killed`], [liveJob, `${host}:1:alive`]]
  ) {
    await t.deps.sql`
      update app_private.jobs set state = 'running', attempts = 1, claimed_by = ${worker},
        claim_token = gen_random_uuid(), locked_until = now() + interval '10 minutes'
      where id = ${id}`;
  }
  assert.ok((await releaseGoneWorkers(t.deps)) >= 1);
  const result = await drain(t.deps, { registry: new JobRegistry([kind]) });
  assert.equal(result.done, 1, "the gone process's job ran again now; the live one's waits");
  assert.equal((await jobRow(goneJob)).state, "done");
  assert.equal((await jobRow(liveJob)).state, "running");
  await t.deps.sql`delete from app_private.jobs where id = ${liveJob}`;
});
