/**
 * The senders of the messaging benchmark (tests/bench/messaging.ts), in a process of their own so
 * that generating the load does not run on the server's event loop. Reads a LoadConfig line on
 * stdin; prints PhaseMark lines as the phases change and one LoadResult line at the end.
 *
 *   warm-up + full   every sender posts, waits for the answer, posts again (closed loop): as many
 *                    messages as the server takes with that many senders in flight
 *   light            a fixed rate (open loop, one POST every 1000/rate ms, the senders in turn),
 *                    far below capacity: the latency of a message on an otherwise idle server
 *
 * Each sender has its own HTTP client, hence its own keep-alive connection, as separate users
 * would. The send time goes into the content (see messaging-shared.ts).
 */
import {
  benchContent,
  emptyByPhase,
  jsonLines,
  type LoadConfig,
  type LoadResult,
  type Phase,
  type PhaseMark,
  summarize,
  wallClock,
  writeLine,
} from "./messaging-shared.ts";

/** Stop sending once this many requests failed: the run has failed anyway. */
const MAX_FAILURES = 50;

const config = await jsonLines(Deno.stdin.readable).next<LoadConfig>();
if (!config) throw new Error("messaging-load: no configuration on stdin");

const skew = () => Math.round((wallClock() - Date.now()) * 1000) / 1000;
const clockSkewMs = [skew()];
const clients = config.senders.map(() => Deno.createHttpClient({ poolMaxIdlePerHost: 1 }));
const counters = config.senders.map(() => 0);
const created = emptyByPhase<Record<string, number>>(() => ({}));
const postMs = emptyByPhase<number[]>(() => []);
const failures = { count: 0, samples: [] as string[] };
let fullStart = Infinity;
let fullEnd = -Infinity;
let fullCompleted = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const mark = (name: PhaseMark["mark"]) => writeLine({ mark: name, at: wallClock() });

async function send(index: number, phase: Phase): Promise<void> {
  const sender = config!.senders[index];
  const n = ++counters[index];
  const sentAt = wallClock();
  let status = 0;
  let text = "";
  try {
    const response = await fetch(
      `${config!.base}/api/conversations/${sender.conversationId}/messages`,
      {
        method: "POST",
        client: clients[index],
        headers: {
          authorization: `Bearer ${sender.token}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ content: benchContent(phase, sentAt, index, n) }),
      },
    );
    status = response.status;
    text = await response.text();
  } catch (err) {
    text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
  const doneAt = wallClock();
  if (status === 201) {
    const byConversation = created[phase];
    byConversation[sender.conversationId] = (byConversation[sender.conversationId] ?? 0) + 1;
    postMs[phase].push(doneAt - sentAt);
    if (doneAt >= fullStart && doneAt <= fullEnd) fullCompleted++;
    return;
  }
  failures.count++;
  if (failures.samples.length < 5) {
    failures.samples.push(
      `${phase} sender ${index}: ${status === 0 ? "no answer" : status} ${text.slice(0, 300)}`,
    );
  }
}

// Warm-up, then the measured window, without a pause: the senders never stop in between.
const started = wallClock();
fullStart = started + config.warmupMs;
fullEnd = fullStart + config.durationMs;
const markTimer = setTimeout(() => mark("full-start"), config.warmupMs);
await Promise.all(config.senders.map(async (_, index) => {
  while (failures.count < MAX_FAILURES) {
    const now = wallClock();
    if (now >= fullEnd) break;
    await send(index, now < fullStart ? "warmup" : "full");
  }
}));
clearTimeout(markTimer);
mark("full-end");

// Light load: a fixed schedule, whatever the answers' timing.
if (config.lightRate > 0 && config.lightMs > 0 && failures.count === 0) {
  await sleep(config.settleMs);
  const interval = 1000 / config.lightRate;
  const total = Math.round(config.lightRate * config.lightMs / 1000);
  const senders = config.lightSenders.length
    ? config.lightSenders
    : config.senders.map((_, i) => i);
  mark("light-start");
  const lightStart = wallClock();
  const inFlight: Promise<void>[] = [];
  for (let k = 0; k < total && failures.count < MAX_FAILURES; k++) {
    await sleep(lightStart + k * interval - wallClock());
    inFlight.push(send(senders[k % senders.length], "light"));
  }
  await Promise.all(inFlight);
  mark("light-end");
}

clockSkewMs.push(skew());
const result: LoadResult = {
  created,
  fullCompleted,
  fullWindowMs: config.durationMs,
  post: {
    warmup: summarize(postMs.warmup),
    full: summarize(postMs.full),
    light: summarize(postMs.light),
  },
  failures,
  clockSkewMs,
};
writeLine(result);
Deno.exit(0);
