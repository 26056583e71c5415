/**
 * What every benchmark runs on, so that each benchmark file holds only its workload and its
 * figures (stats.ts measures and formats; bench-server.ts is the stack server):
 *
 * - the command line: `parseOptions` with `BenchArgs` (`--name value` or `--name=value`, an
 *   unknown option refused, `--help` prints the benchmark's own header comment);
 * - a quiet machine: `waitForQuietMachine` before a measurement, `measureQuietly` to measure
 *   again when other work took the CPU meanwhile, `busyWarning` under a CPU table;
 * - the stack: `withStack`, a throwaway cluster and what a run starts on it (`startServer`, or
 *   anything given to `onStop`), stopped in reverse order at the end or on Ctrl-C;
 * - the report: `figuresTable` (figure, ceiling in the same run, target, PASS or MISS) and
 *   `finish`, the summary line and the exit code (a missed target exits 0, a broken run 1).
 */
import { relative } from "node:path";
import { type CpuUse, machineBusyPct, table, verdict } from "./stats.ts";
import { type BenchServer, startBenchServer, stopBenchServer } from "./bench-server.ts";
import { freePort } from "../../stack/postgres.ts";
import { ROOT, throwawayCluster } from "../../stack/database.ts";

export const say = (line: string) => console.log(`[bench] ${line}`);
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// The command line -------------------------------------------------------------------------------

/**
 * A benchmark's arguments, read option by option (`whole("--duration", 10)`); the last of an
 * option given counts. `parseOptions` refuses whatever no option read.
 */
export class BenchArgs {
  readonly #args: string[];
  readonly #read = new Set<number>();

  constructor(args: string[], readonly file: string) {
    this.#args = args;
  }

  /** Where the last of `names` stands, and its value (`--name=value` or the next argument). */
  #find(names: string | string[], takesValue: boolean) {
    const list = typeof names === "string" ? [names] : names;
    let found: { name: string; value: string | undefined } | undefined;
    for (let i = 0; i < this.#args.length; i++) {
      if (this.#read.has(i)) continue;
      const [name, inline] = this.#args[i].split("=", 2);
      if (!list.includes(name)) continue;
      this.#read.add(i);
      let value = inline;
      if (takesValue && value === undefined && i + 1 < this.#args.length) {
        this.#read.add(++i);
        value = this.#args[i];
      }
      found = { name, value };
    }
    return found;
  }

  /** An option without a value (`--profile`). */
  flag(names: string | string[]): boolean {
    return this.#find(names, false) !== undefined;
  }

  /** A string (`--only search`), or `fallback`. */
  text<T extends string | null>(names: string | string[], fallback: T): string | T {
    const found = this.#find(names, true);
    if (!found) return fallback;
    if (found.value === undefined) throw new Error(`${found.name} needs a value`);
    return found.value;
  }

  /** One of `choices`, or `fallback`. */
  choice<C extends string, F extends C | null>(
    names: string | string[],
    choices: readonly C[],
    fallback: F,
  ): C | F {
    const found = this.#find(names, true);
    if (!found) return fallback;
    if (!choices.includes(found.value as C)) {
      throw new Error(`${found.name} takes one of ${choices.join(", ")}`);
    }
    return found.value as C;
  }

  /** A whole number of at least `min`, or `fallback`. */
  whole(names: string | string[], fallback: number, min = 1): number {
    const found = this.#find(names, true);
    return found ? wholeNumber(found.name, found.value, min) : fallback;
  }

  /** Whole numbers of at least `min`, comma-separated (`--pool 10,20`), or `fallback`. */
  wholes(names: string | string[], fallback: number[], min = 1): number[] {
    const found = this.#find(names, true);
    if (!found) return fallback;
    const list = (found.value ?? "").split(",");
    if (!found.value || list.some((n) => !isWhole(n, min))) {
      throw new Error(`${found.name} needs whole numbers >= ${min}, e.g. ${found.name} 10,20`);
    }
    return list.map(Number);
  }

  /** `AxB` (`--transfers 10x10`, `--layouts 25x2,1x50`) as two whole numbers of at least 1. */
  pairs(names: string | string[], fallback: [number, number][]): [number, number][] {
    const found = this.#find(names, true);
    if (!found) return fallback;
    return (found.value ?? "").split(",").map((text) => {
      const match = /^(\d+)x(\d+)$/.exec(text.trim());
      if (!match || !Number(match[1]) || !Number(match[2])) {
        throw new Error(`${found.name} takes AxB, e.g. ${found.name} 10x10`);
      }
      return [Number(match[1]), Number(match[2])];
    });
  }

  /** Throws for the first argument no option read. */
  done(): void {
    const stray = this.#args.findIndex((_, i) => !this.#read.has(i));
    if (stray >= 0) {
      throw new Error(`unknown option ${this.#args[stray]} (see ${this.file}, or --help)`);
    }
  }
}

const isWhole = (value: string | undefined, min: number) =>
  value !== undefined && value.trim() !== "" && Number.isInteger(Number(value)) &&
  Number(value) >= min;

function wholeNumber(name: string, value: string | undefined, min: number): number {
  if (!isWhole(value, min)) throw new Error(`${name} needs a whole number >= ${min}`);
  return Number(value);
}

/**
 * A benchmark's options: `read` takes each from the arguments, with its default; any argument
 * left unread is an error. `--help` (or `-h`) prints the benchmark's header comment, where its
 * options are described, and exits.
 *
 * @example
 * const opts = parseOptions(args, import.meta.url, (a) => ({ duration: a.whole("--duration", 8) }));
 */
export function parseOptions<T>(
  args: string[],
  moduleUrl: string,
  read: (args: BenchArgs) => T,
): T {
  const path = new URL(moduleUrl).pathname;
  if (args.includes("--help") || args.includes("-h")) {
    console.log(headerComment(path));
    Deno.exit(0);
  }
  const benchArgs = new BenchArgs(args, relative(ROOT, path));
  const opts = read(benchArgs);
  benchArgs.done();
  return opts;
}

/** The leading /** … *\/ comment of a file, without its asterisks. */
function headerComment(path: string): string {
  const text = Deno.readTextFileSync(path);
  const match = /^\/\*\*\n([\s\S]*?)\n\s*\*\//.exec(text);
  if (!match) return `see ${path}`;
  return match[1].split("\n").map((line) => line.replace(/^ \*( |$)/, "")).join("\n");
}

// A quiet machine --------------------------------------------------------------------------------

/** Other work on the machine above this share of one core makes the figures unreliable. */
export const BUSY_MACHINE_PCT = 15;

/**
 * Waits until other work on the machine uses at most `busyPct` of a core over `windowMs`, for
 * `maxWaitMs` at most (then measures anyway, and says so). Between measurements nothing of the
 * benchmark runs, so what is busy is someone else.
 */
export async function waitForQuietMachine(
  { busyPct = BUSY_MACHINE_PCT, windowMs = 2_000, maxWaitMs = 180_000 } = {},
): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  let told = 0;
  while (true) {
    const busy = await machineBusyPct(windowMs);
    if (busy <= busyPct) return;
    if (Date.now() >= deadline) {
      say(`other work still uses ${busy.toFixed(0)}% of a core; measuring anyway (figures low)`);
      return;
    }
    if (Date.now() - told > 20_000) {
      say(`other work uses ${busy.toFixed(0)}% of a core; waiting for a quiet machine`);
      told = Date.now();
    }
  }
}

/**
 * A measurement made again while other work took more than BUSY_MACHINE_PCT of a core (`busy`
 * of an attempt, in % of one core): on 2 shared cores a test run next door lowers every figure,
 * and such work comes in bursts. `retries` more attempts at most, `pauseMs` apart, so the run stays
 * bounded; the figures are the last attempt's (`keep: "last"`) or the least disturbed one's
 * (`"quietest"`). An attempt that is `broken` ends it at once and is the one kept.
 */
export async function measureQuietly<R>(
  label: string,
  attempt: (n: number) => Promise<R>,
  busy: (result: R) => number,
  { retries = 2, pauseMs = 5_000, keep = "last", broken }: {
    retries?: number;
    pauseMs?: number;
    keep?: "last" | "quietest";
    broken?: (result: R) => boolean;
  } = {},
): Promise<{ kept: R; attempts: R[] }> {
  const attempts: R[] = [];
  for (let n = 1;; n++) {
    const result = await attempt(n);
    attempts.push(result);
    if (broken?.(result)) return { kept: result, attempts };
    if (busy(result) <= BUSY_MACHINE_PCT || n > retries) {
      const kept = keep === "last" ? result : attempts.reduce((a, b) => busy(b) < busy(a) ? b : a);
      return { kept, attempts };
    }
    say(
      `other work took ${busy(result).toFixed(0)}% of a core while measuring ${label}; ` +
        `measuring again${pauseMs ? ` in ${pauseMs / 1000} s` : ""}`,
    );
    await sleep(pauseMs);
  }
}

/**
 * The line under a CPU table when other work (`rest`) took more than BUSY_MACHINE_PCT of a core
 * in any of the `measured` runs (label, CPU use), or null.
 */
export function busyWarning(
  measured: (readonly [string, CpuUse | null | undefined])[],
  effect = "those figures are low",
): string | null {
  const busy = measured.filter(([, cpu]) => (cpu?.rest ?? 0) > BUSY_MACHINE_PCT);
  if (!busy.length) return null;
  return `  WARNING other work used the CPU during ${
    busy.map(([label]) => label.trim()).join(", ")
  }: ` +
    `${effect}; rerun on a quiet machine`;
}

// The stack --------------------------------------------------------------------------------------

export type ThrowawayCluster = Awaited<ReturnType<typeof throwawayCluster>>;

/** What a run started on its throwaway cluster, stopped last started first. */
export class Stack {
  readonly #stops: { what: unknown; stop: () => unknown }[] = [];

  constructor(readonly cluster: ThrowawayCluster) {}

  /** Runs `stop` when the run ends (or on Ctrl-C), before what was started earlier is stopped. */
  onStop(stop: () => unknown, what: unknown = stop): void {
    this.#stops.push({ what, stop });
  }

  /**
   * The stack server in this process (bench-server.ts), on a free port unless one is given;
   * stopped with the run, or earlier by `stopServer`.
   */
  async startServer(
    { pool, port = freePort(), options, env = {}, processes = 1 }: {
      pool: number;
      port?: number;
      options?: Parameters<typeof startBenchServer>[3];
      env?: Record<string, string>;
      processes?: number;
    },
  ): Promise<BenchServer> {
    const bench = await startBenchServer(this.cluster, port, pool, options, env, processes);
    this.onStop(() => stopBenchServer(bench), bench);
    return bench;
  }

  /** Stops a server `startServer` started, before the run ends. */
  async stopServer(bench: BenchServer): Promise<void> {
    const i = this.#stops.findIndex((s) => s.what === bench);
    if (i >= 0) this.#stops.splice(i, 1);
    await stopBenchServer(bench);
  }

  /** Stops everything, last started first; a failing stop does not keep the others running. */
  async stopAll(): Promise<void> {
    while (this.#stops.length) {
      const { stop } = this.#stops.pop()!;
      try {
        await stop();
      } catch (err) {
        console.error(`[bench] stopping: ${err instanceof Error ? err.message : err}`);
      }
    }
  }
}

/**
 * Runs a benchmark on a throwaway, seeded cluster: `run` starts what it measures on `stack`, and
 * everything is stopped when it ends, fails, or the run is interrupted (SIGINT, SIGTERM: exit
 * 130).
 */
export async function withStack<T>(run: (stack: Stack) => Promise<T>): Promise<T> {
  say("creating a throwaway, seeded database");
  const cluster = await throwawayCluster();
  const stack = new Stack(cluster);
  stack.onStop(() => cluster.dispose());
  let interrupted = false;
  const onSignal = async () => {
    if (interrupted) return;
    interrupted = true;
    await stack.stopAll();
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  try {
    return await run(stack);
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
    await stack.stopAll();
  }
}

/** A JSON POST with a bearer token to the server at `base`; throws unless it answered 2xx. */
export async function postJson(
  base: string,
  token: string,
  path: string,
  body?: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

// The report -------------------------------------------------------------------------------------

/** One figure of a report: what was measured, against its ceiling and its target. */
export interface Figure {
  /** What was measured, or the target itself when the row is a target ("at least 2,000 req/s"). */
  label: string;
  value: string;
  /** The same work without the app, measured in the same run. */
  ceiling?: string;
  target?: string;
  /** The target met (PASS) or not (MISS); no verdict when undefined. */
  ok?: boolean;
}

/**
 * Figures as a table: label, figure, then the ceiling and target columns when any figure has
 * one, and the verdict. `header` adds a header row.
 */
export function figuresTable(figures: Figure[], header = false): string {
  const ceiling = figures.some((f) => f.ceiling !== undefined);
  const target = figures.some((f) => f.target !== undefined);
  const row = (f: Figure) => [
    f.label,
    f.value,
    ...(ceiling ? [f.ceiling ?? ""] : []),
    ...(target ? [f.target ?? ""] : []),
    f.ok === undefined ? "" : verdict(f.ok),
  ];
  const head = [
    "",
    "figure",
    ...(ceiling ? ["ceiling (same run)"] : []),
    ...(target ? ["target"] : []),
    "",
  ];
  return table([...(header ? [head] : []), ...figures.map(row)]);
}

/** The commit measured, and whether the work tree had changes on top of it. */
export function sourceVersion(): string {
  try {
    const git = (...args: string[]) =>
      new TextDecoder().decode(
        new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" }).outputSync()
          .stdout,
      ).trim();
    const head = git("rev-parse", "--short", "HEAD");
    const changed = git("status", "--porcelain", "--untracked-files=no").split("\n")
      .filter(Boolean);
    return head
      ? `commit ${head}${changed.length ? ` + ${changed.length} changed files` : ""}`
      : "commit unknown";
  } catch {
    return "commit unknown";
  }
}

/**
 * The run's last lines and its exit code: the problems that make it a failure (a server error,
 * a wrong count, a lost message: not a slow figure), exit 1; or `success`, exit 0.
 */
export function finish(problems: string[], success: string): never {
  if (problems.length) {
    console.log(`\nsummary: the run FAILED (${problems.length} problems); figures not reliable`);
    for (const p of problems) console.log(`  FAILED ${p}`);
    Deno.exit(1);
  }
  console.log(`\nsummary: the run succeeded; ${success}`);
  Deno.exit(0);
}
