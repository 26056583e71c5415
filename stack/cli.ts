/**
 * `npm start`, `npm test` and `npm run bench` (after stack/run.sh installed what was missing).
 *
 *   start [--reset] [--processes N]
 *                     the local stack on http://localhost:54321, database on 127.0.0.1:54322,
 *                     chain (anvil) on 127.0.0.1:8545; with N > 1, N server processes share the
 *                     port (SO_REUSEPORT); --reset starts from a fresh database and chain
 *   serve             one more server process of a running stack (used by start --processes)
 *   test              every check against a throwaway cluster, then one summary line
 *   bench [name]      benchmarks against a throwaway stack (tests/bench/)
 *   wallet-keys <status|rotate|new-key>
 *                     the wallets' master key: which key seals how many wallets; re-seal them
 *                     all under the current key (stack/wallet-keys.ts)
 */
import { join } from "node:path";
import { Cluster } from "./postgres.ts";
import { loadLocalEnv } from "./local-env.ts";
import { startStackServer } from "./server.ts";
import { prepareDatabase, ROOT, stackEnv, throwawayCluster } from "./database.ts";
import { dumpSchema, readMigrations, SCHEMA_DIR, unannouncedReplacements } from "./schema-dump.ts";
import { closeDeps, createDeps } from "../functions/api/deps.ts";
import { type Chain, throwawayChain } from "./chain/anvil.ts";
import { type PgBouncer, startPgBouncer } from "./pgbouncer.ts";
import {
  chainDir,
  createSeededWallets,
  ensurePlatformContracts,
  fundSeededWallets,
  type LocalFunding,
  resetLocalChain,
  stampFile,
  startLocalChain,
  startLocalFunding,
} from "./chain/local.ts";
import { loadSettings } from "../functions/_shared/settings.ts";
import { buildWeb, describeBuild } from "../web/build.ts";
import { walletKeys } from "./wallet-keys.ts";
const say = (line: string) => console.log(`[agora] ${line}`);

async function start(args: string[]): Promise<void> {
  const localDir = Deno.env.get("AGORA_LOCAL_DIR") ?? join(ROOT, ".local");
  const env = await loadLocalEnv(localDir);
  const port = Number(env.AGORA_PORT ?? 54321);
  const cluster = new Cluster({
    dir: join(localDir, "postgres"),
    port: Number(env.AGORA_DB_PORT ?? 54322),
    password: env.AGORA_DB_PASSWORD,
  });
  const chainPort = Number(env.AGORA_CHAIN_PORT ?? 8545);
  if (args.includes("--reset")) {
    say("--reset: removing the local database and chain");
    await cluster.stop();
    await Deno.remove(cluster.dir, { recursive: true }).catch(() => {});
    await resetLocalChain(localDir);
  }
  const created = await cluster.create();
  if (created) say(`created a Postgres cluster in ${cluster.dir}`);
  await cluster.start();

  const processesArg = args.indexOf("--processes");
  const processes = Math.max(
    1,
    Number(processesArg >= 0 ? args[processesArg + 1] : env.AGORA_PROCESSES ?? 1) || 1,
  );
  let stopping = false;
  let server: Awaited<ReturnType<typeof startStackServer>> | null = null;
  let deps: ReturnType<typeof createDeps> | null = null;
  let chain: Chain | null = null;
  let funding: LocalFunding | null = null;
  const children: Deno.ChildProcess[] = [];
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say("stopping");
    for (const child of children) {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
    }
    // A server process gets a few seconds to finish its responses, then it is killed.
    let grace: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      Promise.all(children.map((c) => c.status.catch(() => {}))).then(() => true),
      new Promise<false>((resolve) => grace = setTimeout(() => resolve(false), 5_000)),
    ]);
    clearTimeout(grace);
    if (!exited) {
      for (const child of children) {
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    await server?.shutdown().catch(() => {});
    await funding?.stop().catch(() => {});
    if (deps) await closeDeps(deps).catch(() => {});
    // The chain writes its state file as it stops.
    await chain?.stop().catch((e) => console.error(String(e)));
    await cluster.stop().catch((e) => console.error(String(e)));
    say("stopped: the database server and the chain are down");
    Deno.exit(code);
  };
  Deno.addSignalListener("SIGINT", () => void stop(0));
  Deno.addSignalListener("SIGTERM", () => void stop(0));

  try {
    chain = await startLocalChain(localDir, chainPort, (line) => console.error(`[anvil] ${line}`));
    say(`chain: anvil on ${chain.url} (chain id ${chain.chainId}), state in ${chainDir(localDir)}`);
    await prepareDatabase(cluster, created);
    if (created) say("applied sql/local/, the migrations (supabase db push) and supabase/seed.sql");
    else say("applied sql/local/ and any new migrations (supabase db push); data kept");
    const serverEnv = {
      AGORA_STORAGE_DIR: join(localDir, "storage"),
      ...(await stackEnv(cluster, env, port)),
      AGORA_RPC_URL: chain.url,
    };
    say(describeBuild(await buildWeb()));
    deps = createDeps(loadSettings(serverEnv));
    funding = await prepareChain(deps, chain, localDir);
    const hostname = env.AGORA_HOST ?? "127.0.0.1";
    server = startStackServer(deps, { port, hostname, reusePort: processes > 1 });
    for (let i = 1; i < processes; i++) {
      children.push(
        new Deno.Command(Deno.execPath(), {
          args: ["run", "--allow-all", "--quiet", join(ROOT, "stack", "cli.ts"), "serve"],
          env: { ...serverEnv, AGORA_PORT: String(port), AGORA_HOST: hostname },
          stdin: "null",
        }).spawn(),
      );
    }
    if (processes > 1) say(`${processes} server processes share port ${port}`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(message);
    if (message.includes("Remote migration versions not found")) {
      // The database's migration history names files this checkout does not have: a .local/
      // made before the migrations were reorganized (or from another branch).
      say("this database was migrated from other migration files than this checkout's;");
      say("start from a new one with `npm start -- --reset` (.local/agora.env is kept)");
    }
    await stop(1);
    return;
  }
  const base = `http://localhost:${port}`;
  const chainLine = `${chain!.url}  (anvil, chain id ${chain!.chainId}; ` +
    "contract addresses in the configuration, wallet.contracts)";
  console.log(`
Agora is running.

  Web app      ${base}/
  API          ${base}/api            (also ${base}/functions/v1/api)
  OpenAPI      ${base}/api/openapi.json
  Health       ${base}/health
  Dev mailbox  ${base}/_dev/mail?to=<address>
  Chain        ${chainLine}
  Database     postgresql://postgres@127.0.0.1:${cluster.opts.port}/postgres  (password: AGORA_DB_PASSWORD in ${
    join(localDir, "agora.env")
  })

Seeded accounts (sign in with a magic link):
  admin@example.com (ADMIN), confidential@example.com (CONFIDENTIAL),
  member@example.com (MEMBER), subscriber@example.com (SUBSCRIBER)

In the browser: open ${base}/, enter one of them, then "Open the sign-in link from the dev mailbox".

Sign in:
  curl -X POST ${base}/api/auth/signin -H 'content-type: application/json' \\
       -d '{"provider":"email","email":"admin@example.com"}'
  curl '${base}/_dev/mail?to=admin@example.com'      # open the link in a browser, or:
  curl -X POST ${base}/api/auth/verify -H 'content-type: application/json' -d '{"token":"<token from the link>"}'

Ctrl-C stops everything. \`npm start -- --reset\` starts from a fresh, seeded database and chain.
`);
}

/**
 * The platform's contracts on the stack's chain: deployed and recorded in the configuration on
 * a new chain (or when the recorded ones are gone), kept otherwise; then the seeded accounts get
 * their wallets (created here: the seed cannot seal keys) and each is funded once; from then on
 * every new wallet is funded as it is created.
 */
async function prepareChain(
  deps: ReturnType<typeof createDeps>,
  chain: Chain,
  localDir: string,
): Promise<LocalFunding> {
  const ensured = await ensurePlatformContracts(deps.sql, chain.url, {
    log: say,
    stampFile: stampFile(localDir),
  });
  if (ensured.deployed) {
    say(`deployed the platform's contracts; recorded as configuration version ${ensured.version}`);
  } else {
    say(`the platform's contracts are on the chain (configuration version ${ensured.version})`);
  }
  deps.config.invalidate();
  const created = await createSeededWallets(deps);
  if (created) say(`created ${created} seeded wallet(s)`);
  const funded = await fundSeededWallets(deps.sql, chain.url, ensured.contracts);
  if (funded.length) say(`funded ${funded.length} seeded wallet(s) on the chain`);
  return await startLocalFunding(deps.listener, chain.url, ensured.contracts, say);
}

interface StepResult {
  name: string;
  passed: number;
  failed: number;
}

async function step(
  name: string,
  cmd: string,
  args: string[],
  env: Record<string, string>,
  count: (output: string, ok: boolean) => StepResult,
): Promise<StepResult> {
  say(`${name}: ${cmd} ${args.join(" ")}`);
  const child = new Deno.Command(cmd, { args, env, cwd: ROOT, stdout: "piped", stderr: "piped" })
    .spawn();
  const decoder = new TextDecoder();
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>, sink: typeof Deno.stdout) => {
    for await (const chunk of stream) {
      output += decoder.decode(chunk, { stream: true });
      await sink.write(chunk);
    }
  };
  const [status] = await Promise.all([
    child.status,
    pump(child.stdout, Deno.stdout),
    pump(child.stderr, Deno.stderr),
  ]);
  return count(output, status.success);
}

const gate = (name: string) => (_: string, ok: boolean): StepResult => ({
  name,
  passed: ok ? 1 : 0,
  failed: ok ? 0 : 1,
});

async function test(args: string[]): Promise<void> {
  const started = Date.now();
  const results: StepResult[] = [];
  const baseEnv = { ...Deno.env.toObject(), NO_COLOR: "1" };
  results.push(await step("format", "deno", ["fmt", "--check"], baseEnv, gate("format")));
  results.push(await step("lint", "deno", ["lint"], baseEnv, gate("lint")));
  results.push(
    await step(
      "types",
      "deno",
      ["check", "functions/", "stack/", "tests/", "web/build.ts", "web/realtime/"],
      baseEnv,
      gate("types"),
    ),
  );
  // The web client on its own: its DOM types (main.tsx) do not mix with Deno's in one program.
  results.push(
    await step("types (web client)", "deno", ["check", "web/app/"], baseEnv, gate("types (web)")),
  );

  say("creating a throwaway database for this run");
  const { cluster, secrets, dispose } = await throwawayCluster();
  // One throwaway chain for the whole run (anvil starts in well under a second).
  let chain: Chain | null = null;
  let bouncer: PgBouncer | null = null;
  // An interrupted run (Ctrl-C, a CI timeout) still removes its database server and chain (the
  // chain would also stop by itself once this process is gone: see stack/chain/anvil.ts).
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(
      signal,
      () =>
        void Promise.all([dispose(), chain?.stop(), bouncer?.stop()]).finally(() => Deno.exit(130)),
    );
  }
  try {
    chain = await throwawayChain();
    say(`throwaway chain for this run: anvil on ${chain.url}`);
    results.push(await schemaStep(cluster));
    const url = new URL(cluster.url());
    results.push(
      await step("pgTAP", "pg_prove", [
        "--verbose",
        "--ext",
        ".sql",
        "-h",
        url.hostname,
        "-p",
        url.port,
        "-U",
        "postgres",
        "-d",
        "postgres",
        ...await pgTapFiles(),
      ], {
        ...baseEnv,
        PGPASSWORD: secrets.AGORA_DB_PASSWORD,
        PGOPTIONS: "-c search_path=public,extensions",
      }, (output, ok) => {
        const passed = (output.match(/^ok \d+/gm) ?? []).length;
        const failed = (output.match(/^not ok \d+/gm) ?? []).length;
        return { name: "pgTAP", passed, failed: failed || (ok ? 0 : 1) };
      }),
    );
    results.push(await webBuildStep());
    // `--pooler`: the API under test reaches the database through a transaction-mode PgBouncer
    // (tests/support/helpers.ts testEnv), as hosted through Supavisor's port 6543.
    const throughPooler = args.includes("--pooler");
    const filters = args.filter((a) => a !== "--pooler");
    if (throughPooler) {
      bouncer = await startPgBouncer({
        target: cluster.url(),
        poolMode: "transaction",
        poolSize: 10,
        maxClients: 1000,
      });
      say(`the API's pool goes through PgBouncer (transaction mode) on ${bouncer.url}`);
    }
    const filter = filters.length ? filters : ["tests/"];
    results.push(
      await step("deno tests", "deno", ["test", "--allow-all", "--quiet", ...filter], {
        ...baseEnv,
        ...secrets,
        AGORA_TEST_DB_URL: cluster.url(),
        AGORA_TEST_DB_PASSWORD: secrets.AGORA_DB_PASSWORD,
        AGORA_TEST_RPC_URL: chain.url,
        ...(bouncer ? { AGORA_TEST_POOLER_URL: bouncer.url } : {}),
      }, (output, ok) => {
        const match = /\|\s*(\d+) passed.*?\|\s*(\d+) failed/.exec(output);
        const passed = match ? Number(match[1]) : 0;
        const failed = match ? Number(match[2]) : 0;
        return { name: "deno tests", passed, failed: failed || (ok ? 0 : 1) };
      }),
    );
    // The schedules are paused in this database (throwawayCluster); a run would race with what
    // the tests count, so any run is said, for whoever reads a failure.
    const runs = await cluster.psql(`
      select string_agg(format('%s %s at %s', j.jobname, d.status, d.start_time), '; ')
      from cron.job_run_details d join cron.job j using (jobid)`).catch(() => "");
    if (runs.trim()) say(`scheduled jobs ran in the test database: ${runs.trim()}`);
  } finally {
    await bouncer?.stop();
    await chain?.stop();
    await dispose();
  }
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log();
  for (const r of results) {
    console.log(
      `  ${r.failed ? "FAIL" : "ok  "} ${r.name}: ${r.passed} passed, ${r.failed} failed`,
    );
  }
  console.log(`  (${Math.round((Date.now() - started) / 1000)} s)`);
  console.log(`\nsummary: ${passed} passed, ${failed} failed`);
  Deno.exit(failed ? 1 : 0);
}

/**
 * The pgTAP files of every domain (`tests/<domain>/sql/*.sql`), in the order of their numbers
 * (001 the schema's conventions first), whichever folder holds them.
 */
async function pgTapFiles(): Promise<string[]> {
  const files: string[] = [];
  for await (const domain of Deno.readDir(join(ROOT, "tests"))) {
    if (!domain.isDirectory) continue;
    const dir = join("tests", domain.name, "sql");
    try {
      for await (const entry of Deno.readDir(join(ROOT, dir))) {
        if (entry.isFile && entry.name.endsWith(".sql")) files.push(join(dir, entry.name));
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }
  const name = (path: string) => path.slice(path.lastIndexOf("/") + 1);
  return files.sort((a, b) => name(a).localeCompare(name(b)));
}

/** The web client, built before the tests that drive it in a browser (fast when current). */
async function webBuildStep(): Promise<StepResult> {
  say("web build: web/build.ts");
  try {
    say(describeBuild(await buildWeb()));
    return { name: "web build", passed: 1, failed: 0 };
  } catch (err) {
    console.error(`[agora] web build failed: ${err instanceof Error ? err.message : err}`);
    return { name: "web build", passed: 0, failed: 1 };
  }
}

/**
 * The readable schema (supabase/schema/<domain>.sql) regenerated from the freshly migrated
 * database; the step fails when a committed file said something else, a file is new or stale, or
 * a migration that replaces another domain's function does not say so at its top, so the
 * migrations and the readable schema never disagree in a commit.
 */
async function schemaStep(cluster: Cluster): Promise<StepResult> {
  say(`schema: ${SCHEMA_DIR}/<domain>.sql from the migrated database`);
  const dir = join(ROOT, SCHEMA_DIR);
  let fresh: Map<string, string>;
  let unannounced: string[];
  try {
    const migrations = await readMigrations(ROOT);
    unannounced = unannouncedReplacements(migrations);
    fresh = await dumpSchema(cluster, migrations);
  } catch (err) {
    console.error(`[agora] schema: ${err instanceof Error ? err.message : err}`);
    return { name: "schema", passed: 0, failed: 1 };
  }
  await Deno.mkdir(dir, { recursive: true });
  const changed: string[] = [];
  for (const entry of [...Deno.readDirSync(dir)]) {
    if (entry.isFile && entry.name.endsWith(".sql") && !fresh.has(entry.name)) {
      await Deno.remove(join(dir, entry.name));
      changed.push(`${SCHEMA_DIR}/${entry.name} (removed: no migration of that domain)`);
    }
  }
  for (const [name, content] of fresh) {
    const committed = await Deno.readTextFile(join(dir, name)).catch(() => null);
    if (committed === content) continue;
    await Deno.writeTextFile(join(dir, name), content);
    changed.push(`${SCHEMA_DIR}/${name}${committed === null ? " (new)" : ""}`);
  }
  for (const line of unannounced) console.error(`[agora] schema: ${line}`);
  if (changed.length) {
    console.error(
      `[agora] the readable schema did not match the migrations; rewritten:\n  ${
        changed.join("\n  ")
      }\nReview them (git status ${SCHEMA_DIR}; git diff ${SCHEMA_DIR}) and commit them with ` +
        "the migrations.",
    );
  }
  const failed = changed.length > 0 || unannounced.length > 0;
  return { name: "schema", passed: failed ? 0 : 1, failed: failed ? 1 : 0 };
}

async function bench(args: string[]): Promise<void> {
  const name = args[0] ?? "auth";
  const file = join(ROOT, "tests", "bench", `${name}.ts`);
  await Deno.stat(file).catch(() => {
    throw new Error(`no benchmark named ${name} (tests/bench/${name}.ts)`);
  });
  const { main } = await import(file);
  await main(args.slice(1));
}

/** One more server process on the shared port; the database is already up (start --processes). */
async function serve(): Promise<void> {
  const env = Deno.env.toObject();
  const deps = createDeps(loadSettings(env));
  const server = startStackServer(deps, {
    port: Number(env.AGORA_PORT),
    hostname: env.AGORA_HOST ?? "127.0.0.1",
    reusePort: true,
  });
  const stop = async () => {
    await server.shutdown().catch(() => {});
    await closeDeps(deps).catch(() => {});
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", () => void stop());
  Deno.addSignalListener("SIGTERM", () => void stop());
  // Never outlive the `start` process that spawned this one, however it ended.
  const parent = Deno.ppid;
  setInterval(() => Deno.ppid !== parent && void stop(), 1_000);
  await server.gateway.ready;
}

const [command, ...rest] = Deno.args;
try {
  if (command === "start") await start(rest);
  else if (command === "serve") await serve();
  else if (command === "test") await test(rest);
  else if (command === "bench") await bench(rest);
  else if (command === "wallet-keys") await walletKeys(rest);
  else throw new Error(`unknown command ${command}; use start, test, bench or wallet-keys`);
} catch (err) {
  console.error(`[agora] ${err instanceof Error ? err.message : String(err)}`);
  Deno.exit(1);
}
