/**
 * The stack server of the realtime benchmark (tests/bench/realtime.ts) in a process of its own,
 * as `npm start` runs it: startStackServer with its Realtime gateway, against the throwaway
 * cluster named by the environment (AGORA_DB_URL and the other settings, gateway limits
 * included). Prints `{"ready":true,"port":...}` once the gateway listens to the database, then
 * answers commands on stdin, one JSON line each:
 *
 *   stats            connections, channels, memory, warnings and errors logged
 *   gc               the same after a full garbage collection (the process runs with --expose-gc)
 *   profile          (AGORA_BENCH_PROFILE=1) where a database broadcast's time goes, see below
 *   profile-reset    forgets what the profile recorded so far
 *   stop
 *
 * Logs are silent, but warnings and errors are counted and sampled: a database broadcast the
 * gateway could not deliver is logged as a warning, and it fails the run.
 *
 * The profile leaves the gateway's code as it is and observes it from outside: the LISTEN
 * callback the gateway registers on `realtime_messages` is wrapped (the time a notification
 * reaches JavaScript, and how long the gateway's synchronous handling of it takes: JSON, the
 * kind-4 frame, one ws.send per subscriber), WebSocket.prototype.send is timed while that handler
 * runs, a timer measures event-loop lag, and the parse and encode steps are timed alone on a
 * notification the gateway received.
 */
import { startStackServer } from "../../stack/server.ts";
import { encodeUserBroadcast } from "../../stack/realtime/protocol.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { closeDeps, createDeps } from "../../functions/api/deps.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";
import type { Logger } from "../../functions/_shared/logger.ts";
import type { Listener } from "../../functions/_shared/db.ts";
import { jsonLines, summarize, type Summary, wallClock, writeLine } from "./realtime-shared.ts";

export interface ServerStats {
  connections: number;
  channels: number;
  rssBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  problems: number;
  problemSamples: string[];
}

export interface ServerProfile {
  /** Notifications of measured messages seen by the gateway's LISTEN callback. */
  count: number;
  /** Publisher's send time to the notification reaching the gateway's JavaScript (ms). */
  notify: Summary | null;
  /** The same by second of the measured window. */
  notifyPerSecond: (Summary | null)[];
  /** The gateway's synchronous handling of one notification, all subscribers included (ms). */
  handler: Summary | null;
  /** Of that, time inside ws.send: per message (ms) and per call (us, mean). */
  wsSendPerMessageMs: number;
  wsSendPerCallUs: number;
  wsSendCalls: number;
  /** How late a 10 ms timer fired (ms): the event loop's queueing. */
  loopLag: Summary | null;
  /** The handler's steps alone, mean us, on a notification the gateway received. */
  steps: { parseUs: number; payloadUs: number; frameUs: number } | null;
}

const problems = { count: 0, samples: [] as string[] };
const log: Logger = (level, msg, fields) => {
  if (level !== "warn" && level !== "error") return;
  problems.count++;
  if (problems.samples.length < 5) {
    problems.samples.push(`${level}: ${msg} ${JSON.stringify(fields ?? {})}`);
  }
};

// Profile -----------------------------------------------------------------------------------------

const profiling = Deno.env.get("AGORA_BENCH_PROFILE") === "1";
const probe = {
  n: [] as number[],
  notify: [] as number[],
  handler: [] as number[],
  wsSend: [] as number[],
  wsSendCalls: 0,
  lag: [] as number[],
  lastText: "",
};
let inHandler = false;
let wsSendInHandler = 0;

function instrument(sql: Listener): Listener {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (this: WebSocket, data) {
    if (!inHandler) return send.call(this, data);
    const started = performance.now();
    try {
      return send.call(this, data);
    } finally {
      wsSendInHandler += performance.now() - started;
      probe.wsSendCalls++;
    }
  };
  let expected = performance.now() + 10;
  setInterval(() => {
    const now = performance.now();
    probe.lag.push(Math.max(0, now - expected));
    expected = now + 10;
  }, 10);
  const listen = (channel: string, fn: (text: string) => void, onlisten?: () => void) => {
    if (channel !== "realtime_messages") return sql.listen(channel, fn, onlisten);
    return sql.listen(channel, (text: string) => {
      const at = wallClock();
      const started = performance.now();
      inHandler = true;
      wsSendInHandler = 0;
      try {
        fn(text);
      } finally {
        inHandler = false;
      }
      const handler = performance.now() - started;
      const n = /"n": ?(\d+)/.exec(text);
      const t = /"t": ?([\d.]+)/.exec(text);
      if (!n || !t) return;
      probe.n.push(Number(n[1]));
      probe.notify.push(at - Number(t[1]));
      probe.handler.push(handler);
      probe.wsSend.push(wsSendInHandler);
      probe.lastText = text;
    }, onlisten);
  };
  return new Proxy(sql, {
    get: (target, prop, receiver) =>
      prop === "listen" ? listen : Reflect.get(target, prop, receiver),
  });
}

/** Mean microseconds of `fn` over enough runs. */
function timeUs(fn: () => unknown): number {
  for (let i = 0; i < 2_000; i++) fn();
  const runs = 20_000;
  const started = performance.now();
  for (let i = 0; i < runs; i++) fn();
  return ((performance.now() - started) * 1000) / runs;
}

/** The steps of the gateway's onDatabaseRow, alone, on a notification it received. */
function steps(text: string): ServerProfile["steps"] {
  if (!text) return null;
  const encoder = new TextEncoder();
  const row = JSON.parse(text);
  const data = encoder.encode(JSON.stringify(row.payload ?? {}));
  return {
    parseUs: timeUs(() => JSON.parse(text)),
    payloadUs: timeUs(() => encoder.encode(JSON.stringify(row.payload ?? {}))),
    frameUs: timeUs(() =>
      encodeUserBroadcast(`realtime:${row.topic}`, row.event, "json", data, { id: row.id })
    ),
  };
}

function profile(firstMeasured: number, rate: number): ServerProfile {
  const keep = (values: number[]) => values.filter((_, i) => probe.n[i] >= firstMeasured);
  const bySecond: number[][] = [];
  probe.n.forEach((n, i) => {
    if (n >= firstMeasured) {
      (bySecond[Math.floor((n - firstMeasured) / rate)] ??= []).push(probe.notify[i]);
    }
  });
  const wsSend = keep(probe.wsSend);
  const wsTotal = wsSend.reduce((a, b) => a + b, 0);
  return {
    count: wsSend.length,
    notify: summarize(keep(probe.notify)),
    notifyPerSecond: Array.from(bySecond, (values) => summarize(values ?? [])),
    handler: summarize(keep(probe.handler)),
    wsSendPerMessageMs: wsSend.length ? wsTotal / wsSend.length : 0,
    wsSendPerCallUs: probe.wsSendCalls
      ? (probe.wsSend.reduce((a, b) => a + b, 0) * 1000) /
        probe.wsSendCalls
      : 0,
    wsSendCalls: probe.wsSendCalls,
    loopLag: summarize(probe.lag),
    steps: steps(probe.lastText),
  };
}

// The server --------------------------------------------------------------------------------------

const created = createDeps(loadSettings(Deno.env.toObject()));
const deps: Deps = {
  ...created,
  log,
  listener: profiling ? instrument(created.listener) : created.listener,
};
const server = startStackServer(deps, { port: 0 });
await server.gateway.ready;
writeLine({ ready: true, port: server.port, pid: Deno.pid });

const stats = (): ServerStats => {
  const memory = Deno.memoryUsage();
  return {
    ...server.gateway.stats(),
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    externalBytes: memory.external,
    problems: problems.count,
    problemSamples: problems.samples,
  };
};

const input = jsonLines(Deno.stdin.readable);
while (true) {
  const command = await input.next<{ cmd: string; firstMeasured?: number; rate?: number }>();
  if (!command || command.cmd === "stop") break;
  if (command.cmd === "profile") {
    writeLine(profile(command.firstMeasured ?? 0, command.rate ?? 1_000));
    continue;
  }
  if (command.cmd === "profile-reset") {
    probe.n = [];
    probe.notify = [];
    probe.handler = [];
    probe.wsSend = [];
    probe.wsSendCalls = 0;
    probe.lag = [];
  }
  if (command.cmd === "gc") {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  writeLine(stats());
}
// Bounded: connections still closing must not hold the run.
await Promise.race([
  server.shutdown().then(() => closeDeps(deps)).catch(() => {}),
  new Promise((resolve) => setTimeout(resolve, 5_000)),
]);
writeLine({ stopped: true });
Deno.exit(0);
