/**
 * The stack server a benchmark measures, in the benchmark's own process, as `npm start` runs it:
 * on a throwaway cluster, the given pool size, no rate limits in the way, silent logs with errors
 * counted (a run with server errors is a failed run, not a figure). With `processes` > 1, as `npm
 * start -- --processes N`: the others run `stack/cli.ts serve` on the same port (SO_REUSEPORT),
 * their errors counted with this one's.
 */
import { join } from "node:path";
import { countingLogger, postmasterPid, ticksOf, UNTHROTTLED_ENV } from "./stats.ts";
import { ROOT, stackEnv, type throwawayCluster } from "../../stack/database.ts";
import { type StackServer, type StackServerOptions, startStackServer } from "../../stack/server.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { closeDeps, createDeps } from "../../functions/api/deps.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";

export interface BenchServer {
  deps: Deps;
  server: StackServer;
  base: string;
  /** The environment the server was started with (for further server processes). */
  env: Record<string, string>;
  /** Errors the app logged (unexpected exceptions, 5xx answers), with a few samples. */
  errors: { count: number; samples: string[] };
  postmasterPid: number | null;
  /** Server processes besides this one (`processes` > 1), sharing the port. */
  extra: Deno.ChildProcess[];
  /** Every server process: this one first, then `extra`. */
  serverPids: number[];
}

export async function startBenchServer(
  cluster: Awaited<ReturnType<typeof throwawayCluster>>,
  port: number,
  poolSize: number,
  options: (
    deps: Deps,
    errors: BenchServer["errors"],
  ) => Omit<StackServerOptions, "port"> = () => ({}),
  /** More settings (e.g. a stand-in's URL). */
  extraEnv: Record<string, string> = {},
  /** Server processes sharing the port, this one included (`npm start -- --processes N`). */
  processes = 1,
): Promise<BenchServer> {
  const env = await stackEnv(cluster.cluster, {
    ...cluster.secrets,
    AGORA_DB_POOL_SIZE: String(poolSize),
    ...UNTHROTTLED_ENV,
    AGORA_LOG_LEVEL: "silent",
    ...extraEnv,
  }, port);
  const { log, errors } = countingLogger();
  const deps: Deps = { ...createDeps(loadSettings(env)), log };
  const server = startStackServer(deps, {
    port,
    ...options(deps, errors),
    ...(processes > 1 ? { reusePort: true } : {}),
  });
  const bench: BenchServer = {
    deps,
    server,
    base: `http://127.0.0.1:${port}`,
    env,
    errors,
    postmasterPid: await postmasterPid(cluster.cluster.dataDir),
    extra: [],
    serverPids: [Deno.pid],
  };
  try {
    for (let i = 1; i < processes; i++) bench.extra.push(serveProcess(env, port, errors, i + 1));
    bench.serverPids.push(...bench.extra.map((child) => child.pid));
    // The kernel spreads new connections over the processes listening on the port: wait until
    // every one listens, before any load connects.
    const deadline = Date.now() + 30_000;
    while (processes > 1 && listeners(port) < processes) {
      if (Date.now() > deadline) {
        throw new Error(`the server processes did not all listen on ${port}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (err) {
    await stopBenchServer(bench);
    throw err;
  }
  return bench;
}

/** One more server process on `port` (`stack/cli.ts serve`); its logged errors are counted. */
function serveProcess(
  env: Record<string, string>,
  port: number,
  errors: BenchServer["errors"],
  number: number,
): Deno.ChildProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--quiet", join(ROOT, "stack", "cli.ts"), "serve"],
    // Its logs are JSON lines on stdout: errors only, counted like this process's.
    env: { ...env, AGORA_LOG_LEVEL: "error", AGORA_PORT: String(port), AGORA_HOST: "127.0.0.1" },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  void (async () => {
    const lines = child.stdout.pipeThrough(new TextDecoderStream());
    for await (const chunk of lines) {
      for (const line of chunk.split("\n")) {
        if (!line.includes('"level":"error"')) continue;
        errors.count++;
        if (errors.samples.length < 5) errors.samples.push(`server process ${number}: ${line}`);
      }
    }
  })();
  return child;
}

/** Sockets listening on 127.0.0.1:`port` (one per server process with SO_REUSEPORT). */
function listeners(port: number): number {
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return Deno.readTextFileSync("/proc/net/tcp").split("\n")
    .filter((line) => line.trim().split(/\s+/)[1] === hex && line.trim().split(/\s+/)[3] === "0A")
    .length;
}

/** CPU ticks of every server process so far (`ticksOf` summed over `serverPids`). */
export function serverTicks(bench: BenchServer): number {
  return bench.serverPids.reduce((sum, pid) => sum + ticksOf(pid), 0);
}

export async function stopBenchServer(bench: BenchServer): Promise<void> {
  for (const child of bench.extra) {
    try {
      child.kill("SIGTERM");
    } catch {
      // already gone
    }
  }
  await Promise.all(bench.extra.map((child) => child.status.catch(() => {})));
  await bench.server.shutdown().catch(() => {});
  await closeDeps(bench.deps).catch(() => {});
}
