/**
 * `npm run bench -- notifications [options]`: the notifications' three loads, each with its
 * ceiling measured in the same run, against a throwaway cluster and a real stack server.
 *
 *   bulk   POST /api/notifications/bulk to every user (100,000 by default): the 202, then the
 *          notifications.batch job that writes every inbox in one INSERT ... SELECT (preferences
 *          joined, delivery rows, chunks). Ceiling: the same rows inserted by a bare
 *          INSERT ... SELECT (same table, same indexes; rolled back, then vacuumed). Target: the
 *          inboxes written in under 10 s. The chunk jobs' live events (one per recipient) are
 *          timed too.
 *   push   pushes drained to the FCM stand-in (tests/support/fcm-stand-in.ts, in a process of
 *          its own: OAuth token, HTTP v1, message validation), through firebase-admin, each
 *          recorded in its delivery row: a bulk send's chunk jobs (rounds of 500), and one job
 *          per notification (notify's path). Ceiling: the stand-in taking the same number of
 *          bare HTTP v1 requests at the same concurrency, without the database. Target: at least
 *          1,000 deliveries per second; every delivery sent once, recorded, received once.
 *   inbox  GET /api/notifications with 50 concurrent users holding 1,000 notifications each.
 *          Throughput: wrk, 50 connections in a closed loop (one token per user in turn), at
 *          saturation; ceiling: a bare `select 1` through the same pool; target: at least 2,000
 *          requests per second. Latency: the same 50 users paced at the target's 2,000 requests
 *          per second (paced-load.ts, latency from each request's due time); target: p99 under
 *          25 ms. The closed loop's own p99 is printed too: at saturation it is the connections
 *          divided by the throughput (Little's law), times the spread, so it restates throughput
 *          (docs/notifications.md, "Reading the inbox figures").
 *
 * Figures are a measurement: a missed target exits 0, a broken run (a wrong count, an answer
 * outside 2xx, a server error) exits 1. CPU use is shown per phase (other work on the shared
 * machine lowers every figure; the run waits for a quieter machine before each phase).
 *
 * Options: --users 100000, --pushes 5000, --single-pushes 2000, --inbox-users 50,
 *          --per-user 1000, --inbox-rate 2000, --duration 10, --warmup 3, --skip bulk,push,inbox,
 *          --pool 10 (AGORA_DB_POOL_SIZE, per process), --processes 1 (server processes sharing
 *          the port, as `npm start -- --processes N`; the inbox's ceiling is then `GET /health`,
 *          a `select 1` through the app, which every process serves)
 */
import {
  bearerRequests,
  cpuMicrosPer,
  type CpuSample,
  type CpuUse,
  cpuUse,
  int,
  loadResult,
  ms,
  pct,
  postgresTicks,
  reapedTicksOf,
  removeWrkScript,
  sampleCpu,
  signInByMagicLink,
  signUpByMagicLink,
  startLoadProcess,
  summarize,
  ticksOf,
  wrk,
  wrkScript,
} from "./stats.ts";
import { type BenchServer, serverTicks } from "./bench-server.ts";
import {
  type Figure,
  figuresTable,
  finish,
  parseOptions,
  postJson,
  say,
  sleep,
  sourceVersion,
  waitForQuietMachine as waitForQuiet,
  withStack,
} from "./scaffold.ts";
import { Child } from "./process-lines.ts";
import type { PacedLoadConfig, PacedLoadResult } from "./paced-load.ts";
import type { StallProbeConfig, StallProbeResult } from "./stall-probe.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { drain, JobRegistry } from "../../functions/api/core/job-queue.ts";
import { notificationsBatch } from "../../functions/api/notifications/jobs.ts";

const BULK_TARGET_SECONDS = 10;
const PUSH_TARGET_PER_SECOND = 1_000;
const INBOX_TARGET_RPS = 2_000;
const INBOX_TARGET_P99_MS = 25;
/** The paced run watches the server's event loop every WATCH_MS and counts delays over STALL_MS. */
const WATCH_MS = 2;
const STALL_MS = 5;
const ADMIN_EMAIL = "admin@example.com";

interface Options {
  users: number;
  pushes: number;
  singlePushes: number;
  inboxUsers: number;
  perUser: number;
  inboxRate: number;
  duration: number;
  warmup: number;
  processes: number;
  pool: number;
  skip: Set<string>;
}

const options = (args: string[]): Options =>
  parseOptions(args, import.meta.url, (a) => ({
    users: a.whole("--users", 100_000),
    pushes: a.whole("--pushes", 5_000),
    singlePushes: a.whole("--single-pushes", 2_000),
    inboxUsers: a.whole("--inbox-users", 50),
    perUser: a.whole("--per-user", 1_000),
    inboxRate: a.whole("--inbox-rate", INBOX_TARGET_RPS),
    duration: a.whole("--duration", 10),
    warmup: a.whole("--warmup", 3),
    processes: a.whole("--processes", 1),
    pool: a.whole("--pool", 10),
    skip: new Set(a.text("--skip", "").split(",").filter(Boolean)),
  }));

/** Before each phase: up to a minute for other work to drop under 30% of a core. */
const waitForQuietMachine = () => waitForQuiet({ busyPct: 30, maxWaitMs: 60_000 });

// The stand-in, in its own process --------------------------------------------------------

interface StandInProcess {
  url: string;
  serviceAccountJson: string;
  child: Child;
  stats(): Promise<{ accepted: number; distinctTokens: number; tokensIssued: number }>;
}

/** fcm-stand-in-process.ts: it prints its URL and account, and serves until its stdin closes. */
async function startStandIn(): Promise<StandInProcess> {
  const child = new Child("the FCM stand-in", "fcm-stand-in-process.ts", { allowAll: true });
  const { url, serviceAccountJson } = await child.next<
    { url: string; serviceAccountJson: string }
  >(60_000, "ready line");
  return {
    url,
    serviceAccountJson,
    child,
    stats: async () => await (await fetch(`${url}/_stand-in/stats`)).json(),
  };
}

// CPU ---------------------------------------------------------------------------------------

function sample(bench: BenchServer, standIn: StandInProcess | null): CpuSample {
  return sampleCpu({
    server: () => serverTicks(bench),
    postgres: () => postgresTicks(bench.postmasterPid),
    ...(standIn ? { "stand-in": () => ticksOf(standIn.child.pid) } : {}),
    wrk: () => reapedTicksOf("self"),
  });
}

function cpuLine(before: CpuSample, after: CpuSample): string {
  const use = cpuUse(before, after);
  const parts = Object.entries(use.pct).map(([name, value]) => `${name} ${pct(value)}`);
  return `CPU (% of one core): ${parts.join(", ")}, irq ${pct(use.irq)}, other work ${
    pct(use.rest)
  }, idle ${pct(use.idle)}`;
}

/**
 * What the machine could do at the CPU a request cost in this run: every consumer's (server,
 * Postgres, wrk, interrupts) microseconds per request, the requests per second that would keep
 * every core busy, and what that means for `clients` requests kept in flight (wrk's closed
 * loop): by Little's law they wait on average at least clients / bound.
 */
function capacityLine(use: CpuUse, requests: number, clients: number): string {
  const micros = [
    ...Object.keys(use.pct).map((name) => [name, cpuMicrosPer(use, name, requests)] as const),
    ["irq", cpuMicrosPer({ ...use, pct: { irq: use.irq } }, "irq", requests)] as const,
  ];
  const total = micros.reduce((sum, [, us]) => sum + us, 0);
  const bound = navigator.hardwareConcurrency * 1e6 / total;
  return `CPU per request ${micros.map(([name, us]) => `${name} ${int(us)} µs`).join(", ")}; ` +
    `all ${navigator.hardwareConcurrency} cores busy at this cost: ${int(bound)} req/s, ` +
    `so ${clients} clients wait on average at least ${ms(clients / bound * 1000)}`;
}

// Phases ------------------------------------------------------------------------------------

async function adminToken(bench: BenchServer): Promise<string> {
  return (await signInByMagicLink(bench.base, bench.deps.sql, ADMIN_EMAIL)).accessToken;
}

const post = (bench: BenchServer, token: string, path: string, body: unknown) =>
  postJson(bench.base, token, path, body);

const drainAll = (bench: BenchServer, batch = 10) =>
  drain(bench.deps, { registry: appJobs(), maxJobs: 1_000_000, maxMs: 600_000, batch });
/** Only batch jobs: the inbox write, without the chunk jobs it queues. */
const drainBatchJobs = (bench: BenchServer) =>
  drain(bench.deps, {
    registry: new JobRegistry([notificationsBatch]),
    maxJobs: 100,
    maxMs: 600_000,
    batch: 1,
  });

async function bulkPhase(bench: BenchServer, admin: string, opts: Options): Promise<Figure[]> {
  const sql = bench.deps.sql;
  say(`creating ${int(opts.users)} users (1% with SYSTEM in-app off, 5% with preferences)`);
  await sql`
    insert into app.users (email, name, role, created_at)
    select 'bulk-' || g || '@bench.example', 'Bulk ' || g,
           (array['SUBSCRIBER', 'MEMBER', 'CONFIDENTIAL'])[1 + g % 3]::app.user_role,
           now() - interval '1 hour'
    from generate_series(1, ${opts.users}) g`;
  await sql`
    insert into app.notification_preferences (user_id, types)
    select u.id, case when g % 100 = 0 then '{"SYSTEM": {"inApp": false}}'::jsonb
                      else '{"MESSAGE": {"push": false}}'::jsonb end
    from (select id, row_number() over (order by id) as g from app.users
          where email like 'bulk-%') u (id, g)
    where g % 20 = 0`;
  await sql`vacuum analyze app.users`;
  await sql`vacuum analyze app.notification_preferences`;
  const [{ recipients }] = await sql<{ recipients: number }[]>`
    select count(*)::int as recipients from app.users where status = 'active'`;

  await waitForQuietMachine();
  // The ceiling: the same rows by a bare INSERT ... SELECT, in a transaction rolled back (the
  // error thrown below is how postgres.js is told to roll back).
  class RolledBack extends Error {
    constructor(readonly seconds: number) {
      super("rolled back");
    }
  }
  const ceiling = await sql.begin(async (tx) => {
    const started = performance.now();
    const [{ n }] = await tx<{ n: number }[]>`
      with written as (
        insert into app.notifications (user_id, type, title, body, data, priority, inbox)
        select u.id, 'SYSTEM', 'Ceiling', 'The same insert, bare', '{}', 'normal', true
        from app.users u where u.status = 'active'
        returning 1
      ) select count(*)::int as n from written`;
    if (n !== recipients) throw new Error(`ceiling wrote ${n} rows, expected ${recipients}`);
    throw new RolledBack((performance.now() - started) / 1000);
  }).then(() => 0, (err) => {
    if (err instanceof RolledBack) return err.seconds;
    throw err;
  });
  await sql`vacuum analyze app.notifications`;

  await waitForQuietMachine();
  const before = sample(bench, null);
  const started = performance.now();
  const accepted = await post(bench, admin, "/api/notifications/bulk", {
    audience: { all: true },
    notification: {
      type: "SYSTEM",
      title: "Maintenance tonight",
      body: "From 22:00 to 23:00 UTC.",
    },
  });
  const acceptedMs = performance.now() - started;
  // The batch job alone: the inbox write (its chunk jobs are queued after it).
  await drainBatchJobs(bench);
  const writtenSeconds = (performance.now() - started) / 1000;
  const after = sample(bench, null);
  const [{ rows, shown }] = await sql<{ rows: number; shown: number }[]>`
    select count(*)::int as rows, count(*) filter (where inbox)::int as shown
    from app.notifications where batch_id = ${accepted.id}`;
  if (rows !== accepted.recipients || accepted.recipients !== recipients) {
    throw new Error(
      `bulk wrote ${rows} rows for ${accepted.recipients} recipients (${recipients} active)`,
    );
  }
  say(
    `bulk: ${int(rows)} inbox rows (${int(shown)} shown) in ${writtenSeconds.toFixed(2)} s; ${
      cpuLine(before, after)
    }`,
  );

  const eventsStarted = performance.now();
  await drainAll(bench, 4);
  const eventsSeconds = (performance.now() - eventsStarted) / 1000;
  const [{ events, status }] = await sql<{ events: number; status: string }[]>`
    select (select count(*)::int from app.events e where e.event = 'notification.created'
              and e.created_at >= (select created_at from app.notification_batches where id = ${accepted.id})) as events,
           (select status::text from app.notification_batches where id = ${accepted.id}) as status`;
  if (events < shown || status !== "done") {
    throw new Error(
      `bulk: ${events} live events for ${shown} shown notifications, batch ${status}`,
    );
  }
  return [
    {
      label: `bulk send to ${int(recipients)} users: 202`,
      value: ms(acceptedMs),
      target: "at once",
    },
    {
      label: `bulk: every inbox written (the batch job)`,
      value: `${writtenSeconds.toFixed(2)} s`,
      ceiling: `${ceiling.toFixed(2)} s bare INSERT (${pct((ceiling / writtenSeconds) * 100)})`,
      target: `< ${BULK_TARGET_SECONDS} s`,
      ok: writtenSeconds < BULK_TARGET_SECONDS,
    },
    {
      label: `bulk: a live event for each (${Math.ceil(rows / 1000)} chunk jobs)`,
      value: `${eventsSeconds.toFixed(2)} s`,
    },
  ];
}

async function pushPhase(
  bench: BenchServer,
  admin: string,
  standIn: StandInProcess,
  opts: Options,
): Promise<Figure[]> {
  const sql = bench.deps.sql;
  const total = opts.pushes + opts.singlePushes;
  say(`registering ${int(total)} devices`);
  await sql`
    insert into app.users (email, name, role)
    select 'push-' || g || '@bench.example', 'Push ' || g, 'MEMBER'
    from generate_series(1, ${total}) g`;
  await sql`
    insert into app.push_devices (user_id, token, platform)
    select u.id, 'bench-' || u.id || ':APA91b' || md5(u.id::text),
           (array['android', 'ios', 'web'])[1 + (abs(hashtext(u.id::text)) % 3)]::app.push_platform
    from app.users u where u.email like 'push-%'`;
  const bulkUsers = (await sql<{ id: string }[]>`
    select id from app.users where email like 'push-%' order by email limit ${opts.pushes}`)
    .map((r) => r.id);
  const singleUsers = (await sql<{ id: string }[]>`
    select id from app.users where email like 'push-%' order by email offset ${opts.pushes}`)
    .map((r) => r.id);

  // The ceiling: the same number of bare HTTP v1 requests, same concurrency, no database.
  const { serviceAccountJson } = standIn;
  const account = JSON.parse(serviceAccountJson);
  const { ServiceAccountCredential } = await import("../../functions/_shared/push.ts");
  const { access_token } = await new ServiceAccountCredential(account).getAccessToken();
  const concurrency = bench.deps.settings.pushConcurrency;
  await waitForQuietMachine();
  let next = 0;
  const ceilingStarted = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < opts.pushes) {
      const i = next++;
      const response = await fetch(
        `${standIn.url}/v1/projects/${account.project_id}/messages:send`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${access_token}`, "content-type": "application/json" },
          body: JSON.stringify({
            message: {
              token: `ceiling-${i}:APA91b0000000000`,
              notification: { title: "t", body: "b" },
            },
          }),
        },
      );
      if (response.status !== 200) throw new Error(`stand-in ceiling: ${response.status}`);
      await response.body?.cancel();
    }
  }));
  const ceilingRate = opts.pushes / ((performance.now() - ceilingStarted) / 1000);
  const acceptedBefore = (await standIn.stats()).accepted;

  // A bulk send's pushes: its inbox is written first (not timed), then its chunk jobs push.
  const accepted = await post(bench, admin, "/api/notifications/bulk", {
    audience: { userIds: bulkUsers },
    notification: { type: "ENTITY", title: "Your order shipped", body: "Track it in the app." },
    channels: ["push"],
  });
  await drainBatchJobs(bench);
  await waitForQuietMachine();
  let before = sample(bench, standIn);
  let started = performance.now();
  await drainAll(bench, 4);
  const bulkSeconds = (performance.now() - started) / 1000;
  say(`push (bulk chunks): ${cpuLine(before, sample(bench, standIn))}`);
  const [bulkRows] = await sql<{ sent: number; named: number; other: number }[]>`
    select count(*) filter (where d.status = 'sent')::int as sent,
           count(*) filter (where d.status = 'sent' and d.provider_message_id like 'projects/%')::int as named,
           count(*) filter (where d.status <> 'sent')::int as other
    from app_private.notification_deliveries d join app.notifications n on n.id = d.notification_id
    where n.batch_id = ${accepted.id}`;
  const afterBulk = (await standIn.stats()).accepted;
  if (
    bulkRows.sent !== opts.pushes || bulkRows.named !== opts.pushes ||
    afterBulk - acceptedBefore !== opts.pushes
  ) {
    throw new Error(
      `push (bulk): ${bulkRows.sent} sent, ${bulkRows.named} with FCM's name, ${bulkRows.other} other; ` +
        `the stand-in received ${afterBulk - acceptedBefore} of ${opts.pushes}`,
    );
  }

  // One notification each, through the one way in: one notifications.deliver job each.
  await sql`
    select app_private.notify(u, 'WALLET', 'Payment received', 'You received 5 USDC.')
    from unnest(${singleUsers}::uuid[]) u`;
  await waitForQuietMachine();
  before = sample(bench, standIn);
  started = performance.now();
  await drainAll(bench, 50);
  const singleSeconds = (performance.now() - started) / 1000;
  say(`push (one job each): ${cpuLine(before, sample(bench, standIn))}`);
  const [singleRows] = await sql<{ sent: number }[]>`
    select count(*)::int as sent from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    where n.user_id = any(${singleUsers}::uuid[]) and d.status = 'sent' and d.provider_message_id is not null`;
  const afterSingle = (await standIn.stats()).accepted;
  if (singleRows.sent !== opts.singlePushes || afterSingle - afterBulk !== opts.singlePushes) {
    throw new Error(
      `push (single): ${singleRows.sent} recorded, ${
        afterSingle - afterBulk
      } received of ${opts.singlePushes}`,
    );
  }
  const bulkRate = opts.pushes / bulkSeconds;
  const singleRate = opts.singlePushes / singleSeconds;
  return [
    {
      label: `push: ${int(opts.pushes)} deliveries, bulk chunk jobs (rounds of 500)`,
      value: `${int(bulkRate)}/s`,
      ceiling: `${int(ceilingRate)}/s bare HTTP v1 to the stand-in`,
      target: `>= ${int(PUSH_TARGET_PER_SECOND)}/s`,
      ok: bulkRate >= PUSH_TARGET_PER_SECOND,
    },
    {
      label: `push: ${int(opts.singlePushes)} deliveries, one notifications.deliver job each`,
      value: `${int(singleRate)}/s`,
      target: `>= ${int(PUSH_TARGET_PER_SECOND)}/s`,
      ok: singleRate >= PUSH_TARGET_PER_SECOND,
    },
    {
      label: "push: sent, recorded (FCM's name), received by the stand-in",
      value: `${int(opts.pushes + opts.singlePushes)} each`,
      target: "every one, once",
      ok: true,
    },
  ];
}

async function inboxPhase(bench: BenchServer, opts: Options): Promise<Figure[]> {
  const sql = bench.deps.sql;
  say(`signing in ${opts.inboxUsers} users, ${int(opts.perUser)} notifications each`);
  const tokens: string[] = [];
  for (let i = 0; i < opts.inboxUsers; i++) {
    const email = `inbox-${i}@bench.example`;
    tokens.push((await signUpByMagicLink(bench.base, sql, email, `Inbox ${i}`)).accessToken);
  }
  await sql`
    insert into app.notifications (user_id, type, title, body, data, created_at, read_at)
    select u.id, (array['OPPORTUNITY', 'MESSAGE', 'ENTITY', 'SYSTEM', 'WALLET'])[1 + g % 5]::app.notification_type,
           'Notification ' || g, 'Something happened, number ' || g || '.', jsonb_build_object('n', g),
           now() - g * interval '1 minute',
           case when g % 2 = 0 then now() - g * interval '30 seconds' end
    from app.users u, generate_series(1, ${opts.perUser}) g
    where u.email like 'inbox-%'`;
  await sql`vacuum analyze app.notifications`;
  const check = await fetch(`${bench.base}/api/notifications`, {
    headers: { authorization: `Bearer ${tokens[0]}` },
  });
  const page = await check.json();
  if (check.status !== 200 || page.items.length !== 50 || page.unreadCount !== opts.perUser / 2) {
    throw new Error(
      `GET /api/notifications answered ${check.status}: ${JSON.stringify(page).slice(0, 300)}`,
    );
  }

  const figures: Figure[] = [];
  const script = await wrkScript(bearerRequests(tokens));
  try {
    for (
      const [label, path] of [
        [
          `GET /api/notifications, ${opts.inboxUsers} users x ${int(opts.perUser)}`,
          "/api/notifications",
        ],
        opts.processes > 1
          ? ["GET /health (ceiling: select 1 through the app)", "/health"]
          : ["GET /_bench/select1 (ceiling: select 1 through the pool)", "/_bench/select1"],
      ] as const
    ) {
      await waitForQuietMachine();
      await wrk(`${bench.base}${path}`, script, opts.inboxUsers, opts.warmup);
      const before = sample(bench, null);
      const r = await wrk(`${bench.base}${path}`, script, opts.inboxUsers, opts.duration);
      const after = sample(bench, null);
      say(`${label}: ${cpuLine(before, after)}`);
      say(`${label}: ${capacityLine(cpuUse(before, after), r.requests, opts.inboxUsers)}`);
      if (r.non2xx || r.socketErrors) {
        throw new Error(
          `${path}: ${r.non2xx} answers outside 2xx, socket errors ${r.socketErrors}`,
        );
      }
      const isInbox = path === "/api/notifications";
      figures.push({
        label,
        value: `${int(r.rps)} req/s, p50 ${ms(r.p50Ms)}, p99 ${ms(r.p99Ms)}`,
        ...(isInbox
          ? { target: `>= ${int(INBOX_TARGET_RPS)} req/s`, ok: r.rps >= INBOX_TARGET_RPS }
          : {}),
      });
    }
  } finally {
    await removeWrkScript(script);
  }
  figures.push(await pacedInbox(bench, tokens, opts));
  return figures;
}

/**
 * The inbox at the target's load: the same users, paced (paced-load.ts), in a process of its own.
 * Beside it an idle process watches its own timer (stall-probe.ts): when it is late, the machine
 * did not run it (both cores busy, or the host stopped this virtual machine), which a timer in
 * the server's own event loop cannot tell from the server's own work or its garbage collector.
 * Both are printed, so a p99 can be read against the stalls it met.
 */
async function pacedInbox(bench: BenchServer, tokens: string[], opts: Options): Promise<Figure> {
  const label = `GET /api/notifications, ${opts.inboxUsers} users paced at ${
    int(opts.inboxRate)
  } req/s`;
  await waitForQuietMachine();
  const config: PacedLoadConfig = {
    url: `${bench.base}/api/notifications`,
    tokens,
    rate: opts.inboxRate,
    warmupSeconds: opts.warmup,
    seconds: opts.duration,
  };
  const probeConfig: StallProbeConfig = {
    skipSeconds: opts.warmup,
    seconds: opts.duration,
    everyMs: WATCH_MS,
    stallMs: STALL_MS,
  };
  const child = await startLoadProcess("paced-load.ts", config);
  const probe = await startLoadProcess("stall-probe.ts", probeConfig);
  await sleep(opts.warmup * 1000);
  const consumers = {
    server: () => serverTicks(bench),
    postgres: () => postgresTicks(bench.postmasterPid),
    // The load and probe processes' CPU arrives in our reaped children's ticks once they have
    // exited (their whole run, warm-up included: an upper bound; the probe's is near nothing).
    load: () => reapedTicksOf("self"),
  };
  const before = sampleCpu(consumers);
  // The server's event loop, watched from inside: how often it was late, and by how much. A
  // stall shows here whatever caused it (the server's own work, its garbage collector, the
  // machine), and every request waiting meanwhile shows it in its latency.
  const stalls: number[] = [];
  let tick = performance.now();
  const watch = setInterval(() => {
    const now = performance.now();
    if (now - tick > STALL_MS + WATCH_MS) stalls.push(now - tick - WATCH_MS);
    tick = now;
  }, WATCH_MS);
  const [result, probed] = await Promise.all([
    loadResult<PacedLoadResult>(child),
    loadResult<StallProbeResult>(probe),
  ]);
  clearInterval(watch);
  const lateLine = (list: number[]) =>
    `late by more than ${STALL_MS} ms ${list.length} times${
      list.length ? ` (longest ${ms(Math.max(...list))})` : ""
    }`;
  say(
    `${label}: the server's event loop was ${lateLine(stalls)}; an idle process's timer was ${
      lateLine(probed.stalls)
    }`,
  );
  say(`${label}: ${cpuLine(before, sampleCpu(consumers))}`);
  const latency = summarize(result.latencies);
  const late = summarize(result.sendDelays);
  if (late) {
    say(
      `${label}: sent after their due time by p50 ${ms(late.p50)}, p99 ${ms(late.p99)}, max ${
        ms(late.max)
      } (included in the latency)`,
    );
  }
  const other = Object.entries(result.counts).filter(([status]) => status !== "200");
  if (!latency || other.length) {
    throw new Error(
      `paced GET /api/notifications: answers ${JSON.stringify(result.counts)}; ${
        result.samples.join("; ")
      }`,
    );
  }
  // The rate must be the one asked for: a server that cannot keep up shows a lower rate (and
  // the latency of the backlog), and then the latency target is not met either.
  const kept = result.achievedRate >= opts.inboxRate * 0.98;
  return {
    label,
    value: `${int(result.achievedRate)} req/s, p50 ${ms(latency.p50)}, p99 ${ms(latency.p99)}`,
    target: `p99 < ${INBOX_TARGET_P99_MS} ms at ${int(INBOX_TARGET_RPS)} req/s`,
    ok: kept && opts.inboxRate >= INBOX_TARGET_RPS && latency.p99 < INBOX_TARGET_P99_MS,
  };
}

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  const figures: Figure[] = [];
  const problems: string[] = [];
  try {
    await withStack(async (stack) => {
      say("starting the FCM stand-in in its own process");
      const standIn = await startStandIn();
      stack.onStop(() => standIn.child.stop());
      const bench = await stack.startServer({
        pool: opts.pool,
        options: (deps) => ({
          // The benchmark drains the queue itself, phase by phase.
          jobs: false,
          extra: async (request) => {
            if (!request.url.includes("/_bench/select1")) return null;
            await deps.sql`select 1`;
            return Response.json({ ok: true });
          },
        }),
        env: {
          AGORA_FCM_SERVICE_ACCOUNT: standIn.serviceAccountJson,
          AGORA_FCM_API_URL: standIn.url,
        },
        processes: opts.processes,
      });
      const admin = await adminToken(bench);
      await drainAll(bench); // what the seed queued (its role change's e-mail)
      if (!opts.skip.has("bulk")) figures.push(...await bulkPhase(bench, admin, opts));
      if (!opts.skip.has("push")) figures.push(...await pushPhase(bench, admin, standIn, opts));
      if (!opts.skip.has("inbox")) figures.push(...await inboxPhase(bench, opts));
      if (bench.errors.count) {
        throw new Error(
          `the server logged ${bench.errors.count} errors: ${bench.errors.samples.join("; ")}`,
        );
      }
    });
  } catch (err) {
    problems.push(err instanceof Error ? err.message : String(err));
  }
  console.log(
    `\nnotifications: figures (${sourceVersion()}; ${navigator.hardwareConcurrency} cores)\n`,
  );
  if (figures.length) console.log(figuresTable(figures, true));
  finish(problems, "every count matched");
}
