/**
 * The stack server a benchmark measures, in the benchmark's own process, as `npm start` runs it:
 * on a throwaway cluster, the given pool size, no rate limits in the way, silent logs with errors
 * counted (a run with server errors is a failed run, not a figure).
 */
import { countingLogger, postmasterPid, UNTHROTTLED_ENV } from "./stats.ts";
import { stackEnv, type throwawayCluster } from "../../stack/database.ts";
import { type StackServer, type StackServerOptions, startStackServer } from "../../stack/server.ts";
import type { Deps } from "../../functions/api/context.ts";
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
  const server = startStackServer(deps, { port, ...options(deps, errors) });
  return {
    deps,
    server,
    base: `http://127.0.0.1:${port}`,
    env,
    errors,
    postmasterPid: await postmasterPid(cluster.cluster.dataDir),
  };
}

export async function stopBenchServer(bench: BenchServer): Promise<void> {
  await bench.server.shutdown().catch(() => {});
  await closeDeps(bench.deps).catch(() => {});
}
