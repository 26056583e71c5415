/**
 * The WebSocket clients of the realtime benchmark (tests/bench/realtime.ts), in a process of their
 * own so that they never share an event loop with the server they measure. Speaks Realtime
 * protocol 2.0.0 as realtime-js does: connection i sends one `phx_join` for
 * `realtime:<prefix><i % channels>` (public, broadcast on, presence off) and counts as joined once
 * the reply is `ok`. The ceiling (realtime-ceiling.ts) answers the same join, so this file serves
 * both.
 *
 * Reads a ClientConfig line on stdin, opens and joins every connection, prints ClientsReady; then
 * answers commands (ClientCommand) one line each until `close`.
 *
 * Receipt time is taken first thing in `onmessage`, before the frame is read: the subscribers' own
 * parsing is not part of the latency.
 */
import {
  type CheckResult,
  type ClientCommand,
  type ClientConfig,
  type ClientsReady,
  type DeliveryResult,
  jsonLines,
  type Pong,
  readKind4,
  summarize,
  wallClock,
  writeLine,
} from "./realtime-shared.ts";

interface Client {
  index: number;
  ws: WebSocket;
  topic: string;
  closed: boolean;
  /** Replies awaited, by ref. */
  pending: Map<string, (status: string, response: unknown) => void>;
  /** Message indexes received (a second one is a duplicate). */
  seen: Set<number>;
}

const input = jsonLines(Deno.stdin.readable);
const config = await input.next<ClientConfig>();
if (!config) throw new Error("realtime-clients: no configuration on stdin");

const clients: Client[] = [];
const closeCodes: Record<string, number> = {};
let closed = 0;
let misrouted = 0;
let duplicates = 0;
const samples: string[] = [];
/** Deliveries: message index and latency (receipt minus send time, this process's clock). */
const deliveredN: number[] = [];
const deliveredLatency: number[] = [];
/** Unique deliveries per message index. */
const perMessage: number[] = [];

const note = (text: string) => {
  if (samples.length < 5) samples.push(text);
};

function onBinary(client: Client, data: ArrayBuffer, at: number) {
  let frame;
  try {
    frame = readKind4(new Uint8Array(data));
  } catch (err) {
    misrouted++;
    note(`unreadable frame: ${String(err)}`);
    return;
  }
  if (!frame || frame.topic !== client.topic) {
    misrouted++;
    note(`frame for ${frame?.topic ?? "?"} on a connection joined to ${client.topic}`);
    return;
  }
  const { n, t } = frame.payload;
  if (!Number.isInteger(n) || n < 0 || typeof t !== "number") {
    misrouted++;
    note(`not a benchmark payload: ${JSON.stringify(frame.payload).slice(0, 80)}`);
    return;
  }
  if (client.seen.has(n)) {
    duplicates++;
    return;
  }
  client.seen.add(n);
  perMessage[n] = (perMessage[n] ?? 0) + 1;
  deliveredN.push(n);
  deliveredLatency.push(at - t);
}

function onText(client: Client, data: string) {
  let frame: unknown;
  try {
    frame = JSON.parse(data);
  } catch {
    note(`unreadable text frame: ${data.slice(0, 80)}`);
    return;
  }
  if (!Array.isArray(frame) || frame[3] !== "phx_reply") return; // system messages and the like
  const ref = String(frame[1]);
  const waiter = client.pending.get(ref);
  if (!waiter) return;
  client.pending.delete(ref);
  const payload = (frame[4] ?? {}) as { status?: string; response?: unknown };
  waiter(String(payload.status), payload.response);
}

let refs = 0;

/** Sends a frame and waits for its reply: the reply's status, or "timeout"/"closed". */
function request(client: Client, topic: string, event: string, payload: unknown, ms: number) {
  const ref = String(++refs);
  return new Promise<{ status: string; response: unknown }>((resolve) => {
    const timer = setTimeout(() => {
      client.pending.delete(ref);
      resolve({ status: "timeout", response: null });
    }, ms);
    client.pending.set(ref, (status, response) => {
      clearTimeout(timer);
      resolve({ status, response });
    });
    try {
      client.ws.send(
        JSON.stringify([event === "phx_join" ? ref : null, ref, topic, event, payload]),
      );
    } catch {
      clearTimeout(timer);
      client.pending.delete(ref);
      resolve({ status: "closed", response: null });
    }
  });
}

/** Opens connection `index` and joins its channel; a failure is a string. */
async function connect(index: number): Promise<Client | string> {
  const topic = `realtime:${config!.topicPrefix}${index % config!.channels}`;
  const ws = new WebSocket(config!.url);
  ws.binaryType = "arraybuffer";
  const client: Client = { index, ws, topic, closed: false, pending: new Map(), seen: new Set() };
  const opened = await new Promise<string | null>((resolve) => {
    const timer = setTimeout(() => resolve("open timed out after 15 s"), 15_000);
    ws.onopen = () => {
      clearTimeout(timer);
      resolve(null);
    };
    ws.onerror = (e) => {
      clearTimeout(timer);
      resolve(`open failed: ${(e as ErrorEvent).message ?? "error"}`);
    };
  });
  ws.onmessage = (e) => {
    const at = wallClock();
    if (typeof e.data === "string") onText(client, e.data);
    else onBinary(client, e.data as ArrayBuffer, at);
  };
  ws.onclose = (e) => {
    if (client.closed) return;
    client.closed = true;
    closed++;
    closeCodes[e.code] = (closeCodes[e.code] ?? 0) + 1;
    for (const waiter of client.pending.values()) waiter("closed", null);
    client.pending.clear();
  };
  ws.onerror = () => {};
  if (opened) {
    try {
      ws.close();
    } catch {
      // never opened
    }
    return opened;
  }
  const join = await request(client, topic, "phx_join", {
    config: {
      private: false,
      broadcast: { self: false, ack: false },
      presence: { enabled: false },
    },
  }, 15_000);
  if (join.status !== "ok") {
    ws.close();
    return `join ${topic}: ${join.status} ${JSON.stringify(join.response)}`;
  }
  return client;
}

// Open and join ---------------------------------------------------------------------------------

const started = performance.now();
let next = 0;
let failures = 0;
const failureSamples: string[] = [];
await Promise.all(
  Array.from({ length: Math.min(config.concurrency, config.connections) }, async () => {
    while (next < config!.connections) {
      const outcome = await connect(next++);
      if (typeof outcome === "string") {
        failures++;
        if (failureSamples.length < 5) failureSamples.push(outcome);
      } else {
        clients.push(outcome);
      }
    }
  }),
);
const ready: ClientsReady = {
  ready: true,
  joined: clients.length,
  failures,
  failureSamples,
  openSeconds: (performance.now() - started) / 1000,
};
writeLine(ready);

// Commands --------------------------------------------------------------------------------------

async function check(timeoutMs: number): Promise<CheckResult> {
  const answers = await Promise.all(
    clients.map((c) =>
      c.closed || c.ws.readyState !== WebSocket.OPEN
        ? Promise.resolve({ status: "closed" })
        : request(c, "phoenix", "heartbeat", {}, timeoutMs)
    ),
  );
  return {
    open: clients.filter((c) => !c.closed && c.ws.readyState === WebSocket.OPEN).length,
    answered: answers.filter((a) => a.status === "ok").length,
    closed,
    closeCodes,
  };
}

async function deliveries(
  expect: Extract<ClientCommand, { cmd: "expect" }>["expect"],
): Promise<DeliveryResult> {
  const subscribersOf = new Array<number>(config!.channels).fill(0);
  for (const c of clients) subscribersOf[c.index % config!.channels]++;
  let expected = 0;
  for (let n = 0; n < expect.total; n++) expected += subscribersOf[n % config!.channels];
  const deadline = Date.now() + expect.drainMs;
  while (deliveredN.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  let missing = 0;
  for (let n = 0; n < expect.total; n++) {
    missing += Math.max(0, subscribersOf[n % config!.channels] - (perMessage[n] ?? 0));
  }
  const measured: number[] = [];
  const bySecond: number[][] = [];
  for (let i = 0; i < deliveredN.length; i++) {
    if (deliveredN[i] < expect.firstMeasured) continue;
    const latency = deliveredLatency[i] + expect.offsetMs;
    measured.push(latency);
    (bySecond[Math.floor((deliveredN[i] - expect.firstMeasured) / expect.rate)] ??= []).push(
      latency,
    );
  }
  return {
    expected,
    delivered: deliveredN.length,
    missing,
    duplicates,
    misrouted,
    closed,
    closeCodes,
    latency: summarize(measured),
    perSecond: Array.from(bySecond, (values) => summarize(values ?? [])),
    samples,
  };
}

while (true) {
  const command = await input.next<ClientCommand>();
  if (!command || command.cmd === "close") break;
  if (command.cmd === "ping") {
    const pong: Pong = { pong: true, t1: command.t1, t2: wallClock() };
    writeLine(pong);
  } else if (command.cmd === "check") {
    writeLine(await check(command.timeoutMs));
  } else if (command.cmd === "expect") {
    writeLine(await deliveries(command.expect));
  }
}
for (const c of clients) {
  c.closed = true;
  try {
    c.ws.close();
  } catch {
    // already closing
  }
}
await new Promise((resolve) => setTimeout(resolve, 200));
Deno.exit(0);
