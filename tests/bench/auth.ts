/**
 * `npm run bench -- auth [options]`: how fast a signed-in request is, measured end to end.
 *
 * Every request of a signed-in user verifies the JWT and then reads the session row and the user
 * from Postgres (functions/api/middleware/session.ts), so that signout, suspension and role
 * changes count at once. This benchmark measures what that costs, against a real local stack
 * over loopback, and checks that the speed was not bought by giving up revocation:
 *
 *   GET /api/auth/session   signed in (bearer): JWT + one session query + the Hono middleware
 *   GET /api/admin/users    signed in ADMIN: the above + admin rate limit + an RLS transaction
 *   GET /_bench/select1     the ceiling: a bare `select 1` through the same pool, no app at all
 *
 * Then wallet sign-in (Sign-In with Ethereum), printed as figures without a target:
 *
 *   SIWE verifications per second   viem's verifySiweMessage of EIP-191 signatures, in this
 *                                   process, one after the other: the crypto a sign-in costs
 *   POST /api/auth/signin (wallet)  end to end from a load process of its own: parsing, the
 *                                   checks, the nonce lookup and spend, the signature, the
 *                                   account and a new session, each with a nonce of its own
 *
 * Targets: the session endpoint at least 2,000 req/s and at least half the ceiling. The figures
 * are a measurement, so a miss still exits 0; the run itself failing (a non-2xx answer, a socket
 * error, a server error, revocation not immediate) exits 1.
 *
 * Next to the figures it prints who used the CPU (the server's JavaScript thread, Postgres, wrk,
 * other processes): on a small shared machine that is what tells a slow app from a busy machine.
 *
 * Options (lists are compared one after the other, on a fresh server each):
 *   --pool 10[,20]         AGORA_DB_POOL_SIZE values (default: 10, the app's default)
 *   --connections 32[,..]  wrk connections (default: 32, see CONNECTIONS below)
 *   --duration 8           seconds measured per endpoint (after --warmup 2 seconds)
 *   --profile              also take a session request apart (diagnostic routes) to show where
 *                          its time goes
 *   --siwe 1500            wallet sign-ins sent end to end (each needs a nonce and a signature
 *                          prepared beforehand); 0 skips the wallet figures
 */
import {
  bearerRequests,
  cpuMicrosPer,
  type CpuSample,
  cpuTable,
  type CpuUse,
  cpuUse,
  int,
  ms,
  pct,
  postgresTicks,
  reapedTicksOf,
  removeWrkScript,
  sampleCpu,
  signInByMagicLink,
  table,
  ticksOf,
  wrk,
  type WrkResult,
  wrkScript,
} from "./stats.ts";
import type { BenchServer } from "./bench-server.ts";
import {
  busyWarning,
  figuresTable,
  finish,
  measureQuietly,
  parseOptions,
  say,
  sleep,
  type Stack,
  withStack,
} from "./scaffold.ts";
import { freePort } from "../../stack/postgres.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { loadSessionUser } from "../../functions/api/auth/sessions.ts";
import { createLocalJWKSet, jwtVerify } from "jose";
import { bearerToken } from "../../functions/_shared/jwt.ts";
import { createClient, custom } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage, verifySiweMessage } from "viem/siwe";

const ADMIN_EMAIL = "admin@example.com"; // seeded ADMIN (supabase/seed.sql)
const SESSION_TARGET_RPS = 2_000;
const CEILING_SHARE_TARGET = 0.5;

/**
 * Concurrency: 32 connections, one wrk thread, chosen with --connections 8,16,32,64 on the
 * 2-core machine (Postgres, the Deno server and wrk share it). At 8 the server waits on round
 * trips and every row is lower (the ceiling by a third). Session and ceiling are flat from 16 to
 * 32; admin users, which holds a pool connection through a six-statement transaction, still
 * gains up to 32. At 64 nothing gains and p50 doubles (Little's law: only the queue grows). So
 * 32 is one concurrency at the plateau of all three rows. One wrk thread: wrk needs 5-15% of a
 * core here, and a second thread would only take CPU from the server.
 */
const CONNECTIONS = 32;
/**
 * Signed-in sessions the load rotates through, one per request: the server sees many sessions
 * at once, as it would with many users, rather than one token over and over.
 */
const SESSIONS = 64;
const POOL_SIZE = 10; // AGORA_DB_POOL_SIZE's default (functions/_shared/settings.ts)
const WARMUP_SECONDS = 2; // opens the pool's connections and warms the JIT and prepared statements
/** Wallet sign-ins sent end to end; about a second of preparation per 700 (nonce + signature). */
const SIWE_SIGNINS = 1_500;
/** Wallet sign-ins in flight at once (the load process's connections). */
const SIWE_CONCURRENCY = 16;
/** SIWE verifications timed in-process. */
const SIWE_VERIFICATIONS = 500;
const DURATION_SECONDS = 8;

interface Options {
  pools: number[];
  connections: number[];
  duration: number;
  warmup: number;
  profile: boolean;
  siwe: number;
}

const options = (args: string[]): Options =>
  parseOptions(args, import.meta.url, (a) => ({
    pools: a.wholes("--pool", [POOL_SIZE]),
    connections: a.wholes(["--connections", "-c"], [CONNECTIONS]),
    duration: a.whole("--duration", DURATION_SECONDS),
    warmup: a.whole("--warmup", WARMUP_SECONDS),
    profile: a.flag("--profile"),
    siwe: a.whole("--siwe", SIWE_SIGNINS, 0),
  }));

// The server ---------------------------------------------------------------------------------

type Bench = BenchServer;

const json = (body: unknown, status = 200) => Response.json(body, { status });

function bearer(request: Request): string | null {
  return bearerToken(request.headers.get("authorization") ?? undefined);
}

/**
 * The benchmark's own routes, tried before the app (StackServerOptions.extra). They use the
 * same `deps` as the app, hence the same pool: the ceiling competes for the same connections the
 * app would. The cheap `indexOf` keeps this hook out of the app routes' figures (and the
 * ceiling's: no URL is parsed).
 */
function benchRoutes(deps: Deps, errors: Bench["errors"]) {
  // A full jose verification on every call: what a token costs when the app has not seen it
  // yet (deps.tokens.verify remembers verified tokens, so in a steady state it costs little).
  // ES256 against the published keys when a signing key is set (the default), else HS256.
  const key = deps.settings.jwtSigningKeys
    ? deps.tokens.jwks().then(createLocalJWKSet)
    : crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(deps.settings.jwtSecret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
  const verifyWithKey = async (token: string) => {
    try {
      const resolved = await key;
      const options = {
        audience: "authenticated",
        issuer: `${deps.settings.siteUrl}/api/auth`,
      };
      const { payload } = typeof resolved === "function"
        ? await jwtVerify(token, resolved, { ...options, algorithms: ["ES256"] })
        : await jwtVerify(token, resolved, { ...options, algorithms: ["HS256"] });
      return payload;
    } catch {
      return null;
    }
  };
  return async (request: Request): Promise<Response | null> => {
    const at = request.url.indexOf("/_bench/");
    if (at < 0) return null;
    const path = request.url.slice(at); // wrk's URLs have no query
    try {
      // The ceiling: the HTTP server and one round trip through the pool, nothing else.
      if (path === "/_bench/select1") {
        await deps.sql`select 1`;
        return json({ ok: true });
      }
      // The diagnostic routes below (--profile) split a session request into its parts.
      if (path === "/_bench/hello") return json({ ok: true }); // HTTP alone
      if (path === "/_bench/jwt") { // the app's token check alone, no database
        const claims = await deps.tokens.verify(bearer(request) ?? "");
        return claims ? json({ sub: claims.sub }) : json({ user: null }, 401);
      }
      if (path === "/_bench/jwt-uncached") { // a full signature check every time
        const claims = await verifyWithKey(bearer(request) ?? "");
        return claims ? json({ sub: claims.sub }) : json({ user: null }, 401);
      }
      if (path === "/_bench/session-query") { // JWT + the session query, without Hono
        const claims = await deps.tokens.verify(bearer(request) ?? "");
        const user = claims && await loadSessionUser(deps, claims.session_id, claims.sub);
        return user ? json({ user: { id: user.id } }) : json({ user: null }, 401);
      }
    } catch (err) {
      errors.count++;
      if (errors.samples.length < 5) errors.samples.push(`${path}: ${String(err)}`);
      return json({ error: String(err) }, 500);
    }
    return null;
  };
}

/**
 * The server runs in this process, as `npm start` runs it. That does not skew the figures: while
 * wrk runs, the only JavaScript of the benchmark is an `await`, so the event loop serves nothing
 * but the load (the CPU table shows the JS thread's share); and the ceiling route can use the
 * app's own pool.
 */
function startBench(stack: Stack, port: number, pool: number): Promise<Bench> {
  return stack.startServer({
    pool,
    port,
    options: (deps, errors) => ({ extra: benchRoutes(deps, errors) }),
  });
}

/** Signs in through the real magic-link flow (an ADMIN); returns the access token. */
async function signIn(bench: Bench, email: string): Promise<string> {
  const session = await signInByMagicLink(bench.base, bench.deps.sql, email);
  if (session.user?.role !== "ADMIN") throw new Error(`${email} is not an ADMIN`);
  return session.accessToken;
}

// CPU accounting -----------------------------------------------------------------------------

/**
 * Who used the CPU during a measurement (stats.ts reads /proc): the Deno server (this process;
 * its main thread, where all JavaScript runs, separately), our Postgres cluster, wrk and the
 * rest. Two reasons: on 2 shared cores a saturated Deno main thread (~100%) with idle CPU left
 * says the server's JavaScript is the bottleneck, not the database; and other work on the
 * machine (a test run next door) lowers every figure, so it is shown rather than silently folded
 * in.
 */
function sampleMeasurement(postmasterPid: number | null): CpuSample {
  return sampleCpu(
    {
      server: () => ticksOf("self"),
      postgres: () => postgresTicks(postmasterPid),
      // Reaped children: wrk (and nothing else runs while wrk does).
      wrk: () => reapedTicksOf("self"),
    },
    { serverMain: () => ticksOf("self", Deno.pid) },
  );
}

// Measuring ----------------------------------------------------------------------------------

interface Endpoint {
  label: string;
  path: string;
  /** Served by the app, so every answer lands in app.access_logs with its status. */
  app: boolean;
  /** Sent without the token. */
  anonymous?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  { label: "GET /api/auth/session", path: "/api/auth/session", app: true },
  { label: "GET /api/admin/users", path: "/api/admin/users", app: true },
  { label: "GET /_bench/select1 (ceiling)", path: "/_bench/select1", app: false },
];

/** A session request taken apart (--profile): each row adds or removes one piece. */
const PROFILE_ENDPOINTS: Endpoint[] = [
  { label: "  HTTP only (/_bench/hello)", path: "/_bench/hello", app: false },
  { label: "  token check only (app's), no DB", path: "/_bench/jwt", app: false },
  { label: "  JWT verify, uncached (jose)", path: "/_bench/jwt-uncached", app: false },
  { label: "  JWT + session query, no Hono", path: "/_bench/session-query", app: false },
  {
    label: "  app, signed out: Hono, no JWT/DB",
    path: "/api/auth/session",
    app: true,
    anonymous: true,
  },
];

interface Measured extends WrkResult {
  endpoint: Endpoint;
  /** Answers the server logged with a status outside 2xx (app routes only). */
  serverNon2xx: string | null;
  /** The access log holds fewer rows than wrk counted answers: entries were dropped. */
  logShortfall: number;
  cpu: CpuUse;
}

async function measure(
  bench: Bench,
  endpoint: Endpoint,
  script: string,
  connections: number,
  opts: Options,
): Promise<Measured> {
  const sql = bench.deps.sql;
  const [{ mark }] = await sql<{ mark: string }[]>`
    select coalesce(max(id), 0)::text as mark from app.access_logs`;
  const url = `${bench.base}${endpoint.path}`;
  const sent = endpoint.anonymous ? null : script;
  const warmup = await wrk(url, sent, connections, opts.warmup);
  // Measured again while another process took CPU (the table warns if it never got quiet).
  const { kept, attempts } = await measureQuietly(endpoint.label.trim(), async () => {
    const before = sampleMeasurement(bench.postmasterPid);
    const result = await wrk(url, sent, connections, opts.duration);
    return { result, cpu: cpuUse(before, sampleMeasurement(bench.postmasterPid)) };
  }, (a) => a.cpu.rest);
  // Every run counts for the status checks; the figures are the last measured run's.
  const runs = [warmup, ...attempts.map((a) => a.result)];
  const { result, cpu } = kept;
  // Requests wrk gave up on at the end may still be finishing; then the queued log goes out.
  await sleep(300);
  await bench.deps.accessLog.flush();
  let serverNon2xx: string | null = null;
  let logShortfall = 0;
  if (endpoint.app) {
    const rows = await sql<{ status: number; count: number }[]>`
      select status, count(*)::int as count from app.access_logs
      where id > ${mark}::bigint group by status order by status`;
    const bad = rows.filter((r) => r.status < 200 || r.status > 299);
    if (bad.length) serverNon2xx = bad.map((r) => `${r.count} x ${r.status}`).join(", ");
    const logged = rows.reduce((n, r) => n + r.count, 0);
    logShortfall = Math.max(0, runs.reduce((n, r) => n + r.requests, 0) - logged);
  }
  return {
    ...result,
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    socketErrors: runs.map((r) => r.socketErrors).find((e) => e !== null) ?? null,
    endpoint,
    serverNon2xx,
    logShortfall,
    cpu,
  };
}

// Printing -----------------------------------------------------------------------------------

/** Problems that make the run itself a failure (not a slow figure): printed, then counted. */
function problemsOf(m: Measured): string[] {
  const out: string[] = [];
  if (m.non2xx) out.push(`${m.non2xx} answers outside 2xx/3xx (wrk)`);
  if (m.serverNon2xx) out.push(`answers outside 2xx (server access log): ${m.serverNon2xx}`);
  if (m.socketErrors) out.push(`socket errors: ${m.socketErrors}`);
  if (m.logShortfall) out.push(`${m.logShortfall} answers missing from the access log`);
  return out.map((p) => `${m.endpoint.label}: ${p}`);
}

interface Outcome {
  pool: number;
  connections: number;
  /** In ENDPOINTS order: session, admin users, ceiling, then any --profile rows. */
  results: Measured[];
}

function printRun(
  pool: number,
  connections: number,
  opts: Options,
  results: Measured[],
  runProblems: string[],
): void {
  const [session, , ceiling] = results;
  console.log(
    `\nAGORA_DB_POOL_SIZE=${pool}, wrk -t1 -c${connections} -d${opts.duration}s ` +
      `(after ${opts.warmup} s warm-up), loopback\n`,
  );
  console.log(table([
    ["endpoint", "req/s", "p50", "p99", "requests", "non-2xx"],
    ...results.map((r) => [
      r.endpoint.label,
      int(r.rps),
      ms(r.p50Ms),
      ms(r.p99Ms),
      int(r.requests),
      String(r.non2xx),
    ]),
  ]));

  const cores = navigator.hardwareConcurrency;
  console.log(
    `\n  CPU while measuring, in % of one core (${cores} cores = ${cores * 100}%); "JS thread" ` +
      `is the server's main thread,\n  "irq" mostly loopback networking, "rest" other processes`,
  );
  console.log(cpuTable(
    "endpoint",
    { server: "server", "JS thread": "serverMain", postgres: "postgres", wrk: "wrk" },
    results.map(({ endpoint, cpu, requests }) => [
      endpoint.label,
      cpu,
      `${cpuMicrosPer(cpu, "server", requests).toFixed(0)} us`,
      `${cpuMicrosPer(cpu, "postgres", requests).toFixed(0)} us`,
    ]),
    ["server/req", "pg/req"],
  ));
  const warning = busyWarning(results.map((r) => [r.endpoint.label, r.cpu] as const));
  if (warning) console.log(warning);

  const share = session.rps / ceiling.rps;
  console.log("\n  targets for GET /api/auth/session");
  console.log(figuresTable([
    {
      label: `at least ${int(SESSION_TARGET_RPS)} req/s`,
      value: `${int(session.rps)} req/s`,
      ok: session.rps >= SESSION_TARGET_RPS,
    },
    {
      label: `at least ${CEILING_SHARE_TARGET * 100}% of the ceiling (${int(ceiling.rps)} req/s)`,
      value: `${(share * 100).toFixed(0)}%`,
      ok: share >= CEILING_SHARE_TARGET,
    },
  ]));
  const missed = session.rps < SESSION_TARGET_RPS || share < CEILING_SHARE_TARGET;
  if (missed && !opts.profile) {
    console.log("  (--profile takes a session request apart to show where the time goes)");
  }
  for (const p of runProblems) console.log(`  FAILED ${p}`);
}

/** Several pool sizes or concurrencies: one line each, the best session figure marked. */
function printComparison(outcomes: Outcome[]): void {
  const best = outcomes.reduce((a, b) => b.results[0].rps > a.results[0].rps ? b : a);
  console.log("\ncomparison (req/s, and p99 of the session endpoint)\n");
  console.log(table([
    ["pool", "connections", "session", "admin users", "ceiling", "session p99", ""],
    ...outcomes.map((o) => [
      String(o.pool),
      String(o.connections),
      int(o.results[0].rps),
      int(o.results[1].rps),
      int(o.results[2].rps),
      ms(o.results[0].p99Ms),
      o === best ? "<- best session" : "",
    ]),
  ]));
}

// The run ------------------------------------------------------------------------------------

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  const problems: string[] = [];
  await withStack(async (stack) => {
    // One port for every configuration: the JWT issuer is derived from the site URL, so the
    // tokens signed in at the start stay valid on each fresh server.
    const port = freePort();
    const tokens: string[] = [];
    let script: string | null = null;
    stack.onStop(() => removeWrkScript(script));
    const outcomes: Outcome[] = [];
    let bench: Bench | null = null;
    for (const pool of opts.pools) {
      if (bench) await stack.stopServer(bench);
      bench = await startBench(stack, port, pool);
      if (!tokens.length) script = await signInSessions(bench, tokens);
      for (const connections of opts.connections) {
        const outcome = await measureConfiguration(bench, script!, pool, connections, opts);
        problems.push(...outcome.problems);
        outcomes.push(outcome);
      }
      if (bench.errors.count) {
        problems.push(`${bench.errors.count} server errors, e.g. ${bench.errors.samples[0]}`);
        console.log(`  FAILED server errors (${bench.errors.count}):`);
        for (const s of bench.errors.samples) console.log(`    ${s}`);
      }
    }
    if (outcomes.length > 1) printComparison(outcomes);
    if (opts.siwe > 0) problems.push(...await measureSiwe(bench!, opts.siwe));
    problems.push(...await checkRevocation(bench!, tokens[0]));
  });
  finish(problems, "every answer was 2xx");
}

/**
 * SESSIONS sign-ins of the seeded ADMIN (`tokens`), and the wrk script that takes them in turn.
 */
async function signInSessions(bench: Bench, tokens: string[]): Promise<string> {
  for (let i = 0; i < SESSIONS; i++) tokens.push(await signIn(bench, ADMIN_EMAIL));
  // Statistics for the rows just written, as autovacuum would gather them on a live database:
  // without them the session check's join is planned for empty tables (a bitmap scan of users by
  // status per session, ~40% more Postgres time a query), and autovacuum could replan it in the
  // middle of a measurement.
  await bench.deps.sql`analyze app.sessions, app.users`;
  say(
    `signed in as ${ADMIN_EMAIL} ${SESSIONS} times through the magic-link flow ` +
      `(POST /api/auth/verify); requests take the ${SESSIONS} sessions in turn`,
  );
  return await wrkScript(bearerRequests(tokens));
}

/** Every endpoint at one pool size and concurrency, printed with its problems. */
async function measureConfiguration(
  bench: Bench,
  script: string,
  pool: number,
  connections: number,
  opts: Options,
): Promise<Outcome & { problems: string[] }> {
  const seconds = opts.warmup + opts.duration;
  const endpoints = opts.profile ? [...ENDPOINTS, ...PROFILE_ENDPOINTS] : ENDPOINTS;
  say(
    `pool ${pool}, ${connections} connections, wrk -t1: ${endpoints.length} endpoints x ` +
      `(${opts.warmup} s warm-up + ${opts.duration} s), about ${endpoints.length * seconds} s`,
  );
  const results: Measured[] = [];
  for (const endpoint of endpoints) {
    results.push(await measure(bench, endpoint, script, connections, opts));
  }
  const problems = results.flatMap(problemsOf);
  printRun(pool, connections, opts, results, problems);
  return { pool, connections, results, problems };
}

/**
 * Revocation is not traded for speed: right after signout, the very token wrk used answers as
 * signed out, with no cache or grace period in between.
 */
async function checkRevocation(bench: Bench, token: string): Promise<string[]> {
  const call = async (method: string, path: string) => {
    const response = await fetch(`${bench.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, text: await response.text() };
  };
  const before = await call("GET", "/api/auth/session");
  const signout = await call("POST", "/api/auth/signout");
  const started = performance.now();
  const after = await call("GET", "/api/auth/session");
  const elapsed = performance.now() - started;
  const admin = await call("GET", "/api/admin/users");

  const signedInBefore = before.status === 200 && JSON.parse(before.text).user !== null;
  const signedOut = after.status === 200 && JSON.parse(after.text).user === null;
  const adminRefused = admin.status === 401;
  console.log("\n  revocation, with one of the tokens used for the measurement");
  console.log(
    `    GET  /api/auth/session  -> ${before.status} user ${signedInBefore ? "set" : "?"}`,
  );
  console.log(`    POST /api/auth/signout  -> ${signout.status} ${signout.text}`);
  console.log(
    `    GET  /api/auth/session  -> ${after.status} ${after.text}  (${ms(elapsed)} later)`,
  );
  console.log(`    GET  /api/admin/users   -> ${admin.status}`);
  const ok = signedInBefore && signout.status === 200 && signedOut && adminRefused;
  console.log(`    ${ok ? "PASS" : "FAILED"}: the session is revoked at once`);
  return ok ? [] : ["revocation: the token still worked after signout"];
}

// Wallet sign-in ------------------------------------------------------------------------------------

/** A viem client that never reaches a chain: EIP-191 signatures are verified locally. */
const offline = createClient({
  transport: custom({ request: () => Promise.reject(new Error("no chain in this benchmark")) }),
});

/**
 * SIWE verifications per second (in-process, one at a time: the CPU a sign-in's signature
 * costs) and wallet sign-ins per second end to end (from a load process of its own, so the
 * client does not share the server's event loop). Every sign-in must answer 200.
 */
async function measureSiwe(bench: Bench, count: number): Promise<string[]> {
  const wallets = Array.from({ length: 32 }, () => privateKeyToAccount(generatePrivateKey()));
  const site = new URL(bench.deps.settings.siteUrl);
  const message = (i: number, nonce: string) =>
    createSiweMessage({
      address: wallets[i % wallets.length].address,
      domain: site.host,
      uri: site.origin,
      version: "1",
      chainId: 31337,
      nonce,
      issuedAt: new Date(),
      statement: "Sign in to the benchmark.",
    });

  // In-process: verification only.
  const signed = await Promise.all(
    Array.from({ length: SIWE_VERIFICATIONS }, async (_, i) => {
      const text = message(i, `benchnonce${i}`);
      return { text, signature: await wallets[i % wallets.length].signMessage({ message: text }) };
    }),
  );
  const started = performance.now();
  let valid = 0;
  for (const { text, signature } of signed) {
    const params = { message: text, signature, domain: site.host, mode: "eoa" };
    if (await verifySiweMessage(offline, params as Parameters<typeof verifySiweMessage>[1])) {
      valid++;
    }
  }
  const verifyPerSecond = SIWE_VERIFICATIONS / ((performance.now() - started) / 1000);

  // End to end: a nonce from the API and a signature for each sign-in, prepared first.
  say(`preparing ${count} wallet sign-ins (nonce from GET /api/auth/nonce, signed by viem)`);
  const bodies: string[] = [];
  for (let from = 0; from < count; from += 32) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(32, count - from) }, async (_, k) => {
        const i = from + k;
        const response = await fetch(`${bench.base}/api/auth/nonce`);
        const { nonce } = await response.json();
        const text = message(i, nonce);
        const signature = await wallets[i % wallets.length].signMessage({ message: text });
        return JSON.stringify({ provider: "wallet", message: text, signature });
      }),
    );
    bodies.push(...batch);
  }
  const file = await Deno.makeTempFile({ prefix: "agora-siwe-", suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify(bodies));
  let load: { elapsedMs: number; statuses: Record<string, number>; p50Ms: number; p99Ms: number };
  let cpu: CpuUse;
  try {
    say(`${count} wallet sign-ins, ${SIWE_CONCURRENCY} at a time, from a load process`);
    const before = sampleMeasurement(bench.postmasterPid);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        "--allow-read",
        new URL("./siwe-load.ts", import.meta.url).pathname,
        `${bench.base}/api/auth/signin`,
        file,
        String(SIWE_CONCURRENCY),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    cpu = cpuUse(before, sampleMeasurement(bench.postmasterPid));
    const text = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) {
      return [`wallet sign-in load failed: ${new TextDecoder().decode(out.stderr)}`];
    }
    load = JSON.parse(text);
  } finally {
    await Deno.remove(file).catch(() => {});
  }
  const signinPerSecond = count / (load.elapsedMs / 1000);

  console.log("\n  wallet sign-in (Sign-In with Ethereum, EIP-191 accounts)\n");
  console.log(table([
    ["what", "per second", "p50", "p99", "count"],
    [
      "SIWE verifications (viem verifySiweMessage, in-process, one at a time)",
      int(verifyPerSecond),
      ms(1000 / verifyPerSecond),
      "-",
      int(SIWE_VERIFICATIONS),
    ],
    [
      `POST /api/auth/signin wallet, end to end (${SIWE_CONCURRENCY} at a time)`,
      int(signinPerSecond),
      ms(load.p50Ms),
      ms(load.p99Ms),
      int(count),
    ],
  ]));
  console.log(
    `  CPU during the sign-ins: server ${pct(cpu.pct.server)} (JS thread ${
      pct(cpu.pct.serverMain)
    }), postgres ${pct(cpu.pct.postgres)}, the load process ${pct(cpu.pct.wrk)}, other ` +
      `processes ${pct(cpu.rest)} (of one core)`,
  );
  const problems: string[] = [];
  if (valid !== SIWE_VERIFICATIONS) {
    problems.push(`SIWE: ${SIWE_VERIFICATIONS - valid} signatures did not verify`);
  }
  const bad = Object.entries(load.statuses).filter(([status]) => status !== "200");
  if (bad.length) {
    problems.push(`wallet sign-ins: ${bad.map(([s, n]) => `${n} x ${s}`).join(", ")}`);
  }
  return problems;
}
