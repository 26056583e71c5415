/**
 * What every benchmark shares: latency summaries, a logger that only counts errors, the settings
 * that keep rate limits out of the load, the real magic-link sign-in, CPU accounting from /proc
 * (who used the CPU during a measurement) and the printing of figures and tables. One copy, so
 * the three benchmarks count and print alike.
 */
import type { Logger } from "../../functions/_shared/logger.ts";
import type { Sql } from "../../functions/_shared/db.ts";

export interface Summary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of a sample (milliseconds), or null when it is empty. */
export function summarize(values: ArrayLike<number>): Summary | null {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  let total = 0;
  for (const v of sorted) total += v;
  return {
    count: sorted.length,
    p50: rank(0.5),
    p95: rank(0.95),
    p99: rank(0.99),
    max: sorted[sorted.length - 1],
    mean: total / sorted.length,
  };
}

/**
 * Silent logs, but errors counted: a run with server errors is a failed run, not a figure.
 * Keeps the first five for the report.
 */
export function countingLogger(): { log: Logger; errors: { count: number; samples: string[] } } {
  const errors = { count: 0, samples: [] as string[] };
  const log: Logger = (level, msg, fields) => {
    if (level !== "error") return;
    errors.count++;
    if (errors.samples.length < 5) errors.samples.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  };
  return { log, errors };
}

/**
 * Rate limits a benchmark must not hit: every request comes from one IP, sign-ins by the dozen,
 * an admin account under load. Tokens last a day so that a long run or a sweep never refreshes.
 */
export const UNTHROTTLED_ENV: Record<string, string> = {
  AGORA_RATE_SIGNIN_IP: "100000/600",
  AGORA_RATE_SIGNIN_EMAIL: "100000/600",
  AGORA_RATE_VERIFY_IP: "100000/600",
  AGORA_RATE_REFRESH_SESSION: "100000/600",
  AGORA_RATE_ADMIN_USER: "100000000/60",
  AGORA_RATE_NONCE_IP: "100000000/600",
  AGORA_RATE_SIGNIN_WALLET: "100000000/600",
  AGORA_ACCESS_TOKEN_TTL: "86400",
};

/** What POST /api/auth/verify answers (the fields the benchmarks use). */
export interface VerifiedSession {
  accessToken: string;
  user: { id: string; role: string };
}

/**
 * The real magic-link flow over HTTP: the sign-in request, the link from the dev mailbox
 * (`dev.mail`, read through `sql`), then verify.
 */
export async function signInByMagicLink(
  base: string,
  sql: Sql,
  email: string,
): Promise<VerifiedSession> {
  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const sent = await post("/api/auth/signin", { provider: "email", email });
  if (sent.status !== 202) throw new Error(`signin ${email}: ${sent.status} ${await sent.text()}`);
  await sent.body?.cancel();
  const [mail] = await sql<{ links: string[] }[]>`
    select links from dev.mail where lower(to_address) = lower(${email}) order by id desc limit 1`;
  if (!mail) throw new Error(`signin: no mail for ${email} in dev.mail`);
  const token = new URL(mail.links[0]).searchParams.get("token");
  const verified = await post("/api/auth/verify", { token });
  if (verified.status !== 200) {
    throw new Error(`verify ${email}: ${verified.status} ${await verified.text()}`);
  }
  return await verified.json();
}

/** A new user (inserted directly, as a trusted server path would), signed in by the magic link. */
export async function signUpByMagicLink(
  base: string,
  sql: Sql,
  email: string,
  name = email,
  role = "MEMBER",
): Promise<VerifiedSession> {
  await sql`insert into app.users (email, name, role) values (${email}, ${name}, ${role}::app.user_role)`;
  return await signInByMagicLink(base, sql, email);
}

/** The throwaway cluster's postmaster, or null when /proc cannot tell (then Postgres shows 0). */
export async function postmasterPid(dataDir: string): Promise<number | null> {
  try {
    const pid = Number((await Deno.readTextFile(`${dataDir}/postmaster.pid`)).split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

// CPU accounting ---------------------------------------------------------------------------------

/**
 * Fields 14 to 17 of /proc/<pid>/stat (utime, stime, cutime, cstime, in clock ticks) and field 4
 * (ppid), or null once the process is gone. The name (field 2) may contain spaces and brackets:
 * the fields after it are counted from its last ")".
 */
function statFields(path: string): { ppid: number; own: number; reaped: number } | null {
  try {
    const text = Deno.readTextFileSync(path);
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return {
      ppid: Number(fields[1]),
      own: Number(fields[11]) + Number(fields[12]),
      reaped: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return null;
  }
}

/**
 * CPU time (user + system, clock ticks) a process has used, or one of its threads (the
 * JavaScript thread of a Deno process is the one whose id is the pid); 0 once it is gone.
 */
export function ticksOf(pid: number | "self", thread?: number): number {
  const path = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  return statFields(path)?.own ?? 0;
}

/** CPU time the children a process has waited for used (wrk, once it has exited). */
export function reapedTicksOf(pid: number | "self"): number {
  return statFields(`/proc/${pid}/stat`)?.reaped ?? 0;
}

/**
 * Our Postgres cluster: the postmaster with the children it reaped, and the processes it runs
 * now (backends, walwriter, autovacuum, ...). Cheap enough to sample every second.
 */
export function postgresTicks(postmaster: number | null): number {
  if (postmaster === null) return 0;
  const own = statFields(`/proc/${postmaster}/stat`);
  if (!own) return 0;
  let total = own.own + own.reaped;
  let children: string[];
  try {
    children = Deno.readTextFileSync(`/proc/${postmaster}/task/${postmaster}/children`).trim()
      .split(/\s+/).filter(Boolean);
  } catch {
    // No children list on this kernel: look for them by parent.
    children = [];
    for (const entry of Deno.readDirSync("/proc")) {
      if (/^\d+$/.test(entry.name) && statFields(`/proc/${entry.name}/stat`)?.ppid === postmaster) {
        children.push(entry.name);
      }
    }
  }
  for (const pid of children) total += statFields(`/proc/${pid}/stat`)?.own ?? 0;
  return total;
}

/** The machine's counters (first line of /proc/stat) and what the named consumers used. */
export interface CpuSample {
  at: number;
  machine: { total: number; idle: number; iowait: number; irq: number; steal: number };
  /** Ticks of the consumers, which do not overlap. */
  consumers: Record<string, number>;
  /** Ticks of parts of consumers (a server's JavaScript thread): shown, not added up. */
  parts: Record<string, number>;
}

/**
 * A reading of the machine and of each consumer (a function giving its ticks, e.g.
 * `() => ticksOf(pid)`). Consumers must not overlap: what the machine spent beyond them (and
 * interrupts) is "rest", other work on the machine. `parts` are inside a consumer.
 *
 * @example
 * const before = sampleCpu({ server: () => ticksOf("self"), postgres: () => postgresTicks(pm) });
 * … measure …
 * const use = cpuUse(before, sampleCpu(…the same…)); // use.pct.server, use.rest, …
 */
export function sampleCpu(
  consumers: Record<string, () => number>,
  parts: Record<string, () => number> = {},
): CpuSample {
  const cpu = Deno.readTextFileSync("/proc/stat").split("\n")[0].trim().split(/\s+/).slice(1, 9)
    .map(Number);
  const read = (fns: Record<string, () => number>) =>
    Object.fromEntries(Object.entries(fns).map(([name, fn]) => [name, fn()]));
  return {
    at: performance.now(),
    machine: {
      total: cpu.reduce((a, b) => a + b, 0),
      idle: cpu[3],
      iowait: cpu[4],
      irq: cpu[5] + cpu[6],
      steal: cpu[7],
    },
    consumers: read(consumers),
    parts: read(parts),
  };
}

/** CPU use between two samples, in % of one core (2 cores make 200%). */
export interface CpuUse {
  /** Seconds between the samples. */
  seconds: number;
  /** Each consumer and part, by name. */
  pct: Record<string, number>;
  /** Interrupts and softirqs: mostly loopback networking, charged to no process. */
  irq: number;
  /** Other processes (and steal, the hypervisor's): other work on the machine. */
  rest: number;
  /** Idle, iowait included. */
  idle: number;
  iowait: number;
  steal: number;
}

export function cpuUse(before: CpuSample, after: CpuSample): CpuUse {
  const m0 = before.machine;
  const m1 = after.machine;
  // Ticks per core over the interval: 100% of one core, whatever the clock tick rate is.
  const perCore = (m1.total - m0.total) / navigator.hardwareConcurrency;
  const pct = (ticks: number) => perCore > 0 ? (ticks / perCore) * 100 : 0;
  const use: Record<string, number> = {};
  let accounted = 0;
  for (const name of Object.keys(before.consumers)) {
    const ticks = after.consumers[name] - before.consumers[name];
    use[name] = pct(ticks);
    accounted += ticks;
  }
  for (const name of Object.keys(before.parts)) {
    use[name] = pct(after.parts[name] - before.parts[name]);
  }
  const idle = m1.idle - m0.idle;
  const iowait = m1.iowait - m0.iowait;
  const irq = m1.irq - m0.irq;
  const busy = m1.total - m0.total - idle - iowait;
  return {
    seconds: (after.at - before.at) / 1000,
    pct: use,
    irq: pct(irq),
    rest: Math.max(0, pct(busy - irq - accounted)),
    idle: pct(idle + iowait),
    iowait: pct(iowait),
    steal: pct(m1.steal - m0.steal),
  };
}

/** CPU microseconds a consumer spent per unit of work (request, message) over the interval. */
export function cpuMicrosPer(use: CpuUse, name: string, units: number): number {
  return units ? (use.pct[name] ?? 0) / 100 * use.seconds * 1e6 / units : 0;
}

/** How busy the machine is, in % of one core, over `ms`: for waiting until it is quiet. */
export async function machineBusyPct(ms: number): Promise<number> {
  const before = sampleCpu({});
  await new Promise((resolve) => setTimeout(resolve, ms));
  const use = cpuUse(before, sampleCpu({}));
  return use.rest + use.irq;
}

// Printing ---------------------------------------------------------------------------------------

/** 12,345 */
export const int = (n: number) => Math.round(n).toLocaleString("en-US");
/** "1.23 ms" (two decimals below 10 ms, one above); "-" without a figure. */
export const ms = (n: number | undefined) =>
  n === undefined ? "-" : `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`;
/** "42%"; "-" without a figure. */
export const pct = (n: number | undefined) => n === undefined ? "-" : `${n.toFixed(0)}%`;
/** "12.3 MB" */
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
export const verdict = (ok: boolean) => ok ? "PASS" : "MISS";

/**
 * Rows as an indented table: the first column left-aligned, the others right-aligned, each as
 * wide as its widest cell.
 *
 * @example
 * console.log(table([["endpoint", "req/s"], ["GET /api/auth/session", int(17_000)]]));
 */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) =>
    "  " + r.map((cell, i) => i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))
      .join("   ").trimEnd()
  ).join("\n");
}

/**
 * Who used the CPU in each run, in % of one core: the `consumers` (column heading: the name
 * sampleCpu gave it), then interrupts, other processes ("rest") and idle, then any `extra`
 * columns (their headings, and the cells after the CPU use in each row).
 *
 * @example
 * cpuTable("endpoint", { server: "server", postgres: "postgres" }, [["GET /", use]]);
 */
export function cpuTable(
  first: string,
  consumers: Record<string, string>,
  rows: (readonly [string, CpuUse | null | undefined, ...string[]])[],
  extra: string[] = [],
): string {
  return table([
    [first, ...Object.keys(consumers), "irq", "rest", "idle", ...extra],
    ...rows.map(([label, cpu, ...cells]) => [
      label,
      ...Object.values(consumers).map((name) => pct(cpu?.pct[name])),
      pct(cpu?.irq),
      pct(cpu?.rest),
      pct(cpu?.idle),
      ...cells,
    ]),
  ]);
}

// Load processes -------------------------------------------------------------------------------

/**
 * Starts a load generator of tests/bench (`script`, e.g. "store-load.ts") in a process of its own,
 * so that its CPU is not the server's, and hands it `config` as JSON on stdin. Its answer is one
 * JSON document on stdout, read by `loadResult` once it exits. Its CPU arrives in the reaped
 * children's ticks (`reapedTicksOf("self")`) when it has exited.
 */
export async function startLoadProcess(
  script: string,
  config: unknown,
): Promise<Deno.ChildProcess> {
  // Not the server's V8 flags (`DENO_V8_FLAGS=--trace-gc` would write into its answer).
  const { DENO_V8_FLAGS: _serverFlags, ...env } = Deno.env.toObject();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--quiet", new URL(`./${script}`, import.meta.url).pathname],
    clearEnv: true,
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(config)));
  await writer.close();
  return child;
}

/** What a load process (`startLoadProcess`) answered, once it has exited; throws if it failed. */
export async function loadResult<T>(child: Deno.ChildProcess): Promise<T> {
  const output = await child.output();
  if (!output.success) throw new Error(`a load process exited with code ${output.code}`);
  return JSON.parse(new TextDecoder().decode(output.stdout)) as T;
}

// wrk ----------------------------------------------------------------------------------------

/** What a wrk run measured. */
export interface WrkResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** wrk counts every status >= 400 here; 3xx is checked on the server side (access log). */
  non2xx: number;
  socketErrors: string | null;
}

/** One request of a wrk script: formatted once, when wrk starts. */
export interface WrkRequest {
  method?: string;
  headers: Record<string, string>;
  body?: string;
}

/** Requests that differ only in their bearer token (a GET of wrk's URL). */
export const bearerRequests = (tokens: string[]): WrkRequest[] =>
  tokens.map((token) => ({ headers: { Authorization: `Bearer ${token}` } }));

/**
 * A wrk script (a temporary file: `removeWrkScript` when done) that sends `requests` in turn, one
 * per request. Each is formatted once, at start, so rotating costs wrk no more than a fixed
 * header would.
 */
export async function wrkScript(requests: WrkRequest[]): Promise<string> {
  const lua = (v: string) => JSON.stringify(v);
  const entries = requests.map((r) =>
    `{ ${r.method ? lua(r.method) : "nil"}, { ${
      Object.entries(r.headers).map(([k, v]) => `[${lua(k)}] = ${lua(v)}`).join(", ")
    } }, ${r.body === undefined ? "nil" : lua(r.body)} }`
  );
  const path = await Deno.makeTempFile({ prefix: "agora-bench-", suffix: ".lua" });
  await Deno.writeTextFile(
    path,
    `local raw = { ${entries.join(",\n")} }
local requests = {}
local next = 0
init = function()
  for i, r in ipairs(raw) do requests[i] = wrk.format(r[1], nil, r[2], r[3]) end
end
request = function()
  next = next % #requests + 1
  return requests[next]
end
`,
  );
  return path;
}

export async function removeWrkScript(path: string | null): Promise<void> {
  if (path) await Deno.remove(path).catch(() => {});
}

/** wrk prints durations as 635.91us, 1.50ms, 2.00s or 1.00m. */
function toMs(value: string, unit: string): number {
  const scale: Record<string, number> = { us: 0.001, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  if (!(unit in scale)) throw new Error(`wrk: unknown time unit ${unit}`);
  return Number(value) * scale[unit];
}

/**
 * wrk, not an in-process client: a load generator in the same Deno isolate as the server would
 * take its event loop, and the figures would measure the two together.
 */
export async function wrk(
  url: string,
  script: string | null,
  connections: number,
  seconds: number,
) {
  const out = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      "--latency",
      "--timeout",
      "5s",
      ...(script ? ["-s", script] : []),
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const rps = /^Requests\/sec:\s+([\d.]+)/m.exec(text);
  const p50 = /^\s+50%\s+([\d.]+)([a-z]+)\s*$/m.exec(text);
  const p99 = /^\s+99%\s+([\d.]+)([a-z]+)\s*$/m.exec(text);
  const total = /^\s+(\d+) requests in /m.exec(text);
  if (!out.success || !rps || !p50 || !p99 || !total) {
    throw new Error(`wrk failed or printed something unexpected:\n${text}`);
  }
  return {
    requests: Number(total[1]),
    rps: Number(rps[1]),
    p50Ms: toMs(p50[1], p50[2]),
    p99Ms: toMs(p99[1], p99[2]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: /Socket errors: (.*)/.exec(text)?.[1] ?? null,
  } satisfies WrkResult;
}
