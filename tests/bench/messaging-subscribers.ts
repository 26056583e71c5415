/**
 * The subscribers of the messaging benchmark (tests/bench/messaging.ts), in a process of their
 * own: one SSE stream and one long-poll loop, both as the same participant, on the same topics.
 * Reads a SubscriberConfig line on stdin, prints `{"ready":true}` once both are listening; then
 * reads an Expectation line (what was sent), waits for the last events and prints one
 * SubscriberResult line.
 *
 * Receipt time: SSE, the moment the chunk carrying the frame arrived (before parsing, so the
 * parser's own cost is not counted); long-poll, the moment the answer's body was read. Latency is
 * that minus the send time the sender wrote into the content (same machine, same clock).
 * tests/realtime/sse-client.ts is not used here because it hands frames over one at a time
 * through a queue and timers, which would add its own delay to every receipt.
 */
import {
  emptyByPhase,
  type Expectation,
  jsonLines,
  parseBenchContent,
  type Phase,
  PHASES,
  type SubscriberConfig,
  type SubscriberResult,
  summarize,
  type TransportResult,
  wallClock,
  writeLine,
} from "./messaging-shared.ts";

interface Envelope {
  id: string;
  topic: string;
  event: string;
  payload: { id?: string; conversationId?: string; content?: string } | null;
}

interface Tally {
  latencies: Record<Phase, number[]>;
  counts: Record<Phase, Record<string, number>>;
  seen: Set<string>;
  duplicates: number;
  requests: number;
  errors: string[];
}

const newTally = (): Tally => ({
  latencies: emptyByPhase(() => []),
  counts: emptyByPhase(() => ({})),
  seen: new Set(),
  duplicates: 0,
  requests: 0,
  errors: [],
});

function record(tally: Tally, envelope: Envelope, receivedAt: number): void {
  if (envelope.event !== "message.created" || !envelope.payload) return;
  const { id, conversationId, content } = envelope.payload;
  const bench = parseBenchContent(content ?? "");
  if (!bench || !id || !conversationId) return;
  if (tally.seen.has(id)) {
    tally.duplicates++;
    return;
  }
  tally.seen.add(id);
  tally.latencies[bench.phase].push(receivedAt - bench.sentAt);
  const counts = tally.counts[bench.phase];
  counts[conversationId] = (counts[conversationId] ?? 0) + 1;
}

const input = jsonLines(Deno.stdin.readable);
const config = await input.next<SubscriberConfig>();
if (!config) throw new Error("messaging-subscribers: no configuration on stdin");
const skew = () => Math.round((wallClock() - Date.now()) * 1000) / 1000;
const clockSkewMs = [skew()];
const topics = encodeURIComponent(config.topics.join(","));
const headers = { authorization: `Bearer ${config.token}` };
const stop = new AbortController();
let stopping = false;

// SSE --------------------------------------------------------------------------------------------

const sse = newTally();
const sseReady = Promise.withResolvers<void>();
const sseClient = Deno.createHttpClient({});

async function runSse(): Promise<void> {
  sse.requests++;
  const response = await fetch(`${config!.base}/api/realtime/sse?topics=${topics}`, {
    headers: { ...headers, accept: "text/event-stream" },
    client: sseClient,
    signal: stop.signal,
  });
  if (response.status !== 200 || !response.body) {
    throw new Error(`SSE answered ${response.status}: ${await response.text()}`);
  }
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of response.body) {
    const receivedAt = wallClock();
    buffer += decoder.decode(chunk, { stream: true });
    let index;
    while ((index = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, index);
      buffer = buffer.slice(index + 2);
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (event === "ready") sseReady.resolve();
      else if (data) record(sse, JSON.parse(data), receivedAt);
    }
  }
  if (!stopping) throw new Error("the SSE stream ended");
}

// Long-poll --------------------------------------------------------------------------------------

const poll = newTally();
const pollReady = Promise.withResolvers<void>();
const pollClient = Deno.createHttpClient({});

async function runPoll(): Promise<void> {
  let cursor: string | null = null;
  while (!stopping) {
    const query = cursor ? `&cursor=${encodeURIComponent(cursor)}&timeout=25` : "&timeout=0";
    poll.requests++;
    const response = await fetch(`${config!.base}/api/realtime/poll?topics=${topics}${query}`, {
      headers,
      client: pollClient,
      signal: stop.signal,
    });
    const text = await response.text();
    const receivedAt = wallClock();
    if (response.status !== 200) throw new Error(`long-poll answered ${response.status}: ${text}`);
    const body = JSON.parse(text) as { events: Envelope[]; cursor: string };
    for (const event of body.events) record(poll, event, receivedAt);
    if (cursor === null) pollReady.resolve();
    cursor = body.cursor;
  }
}

const failed = (tally: Tally, ready: PromiseWithResolvers<void>) => (err: unknown) => {
  if (stopping && stop.signal.aborted) return;
  tally.errors.push(err instanceof Error ? err.message : String(err));
  ready.reject(err);
};
const sseDone = runSse().catch(failed(sse, sseReady));
const pollDone = runPoll().catch(failed(poll, pollReady));
await Promise.all([sseReady.promise, pollReady.promise]);
writeLine({ ready: true });

// Drain ------------------------------------------------------------------------------------------

const expectation = await input.next<Expectation>();
if (!expectation) throw new Error("messaging-subscribers: no expectation on stdin");
const complete = (tally: Tally) =>
  PHASES.every((phase) =>
    Object.entries(expectation.expect[phase]).every(([conversation, sent]) =>
      (tally.counts[phase][conversation] ?? 0) >= sent
    )
  );
const deadline = Date.now() + expectation.drainMs;
while (!(complete(sse) && complete(poll)) && Date.now() < deadline) {
  if (sse.errors.length || poll.errors.length) break;
  await new Promise((resolve) => setTimeout(resolve, 20));
}
stopping = true;
stop.abort();
// Aborting a fetch does not always end a pending read of its body: wait a moment, no more.
await Promise.race([
  Promise.all([sseDone, pollDone]),
  new Promise((resolve) => setTimeout(resolve, 500)),
]);

function result(tally: Tally): TransportResult {
  const mismatches: string[] = [];
  for (const phase of PHASES) {
    const sent = expectation!.expect[phase];
    const got = tally.counts[phase];
    for (const conversation of new Set([...Object.keys(sent), ...Object.keys(got)])) {
      if ((got[conversation] ?? 0) !== (sent[conversation] ?? 0)) {
        mismatches.push(
          `${phase} ${conversation}: received ${got[conversation] ?? 0} of ${
            sent[conversation] ?? 0
          }`,
        );
      }
    }
  }
  const received = emptyByPhase(() => 0);
  for (const phase of PHASES) {
    received[phase] = Object.values(tally.counts[phase]).reduce((a, b) => a + b, 0);
  }
  return {
    latency: {
      warmup: summarize(tally.latencies.warmup),
      full: summarize(tally.latencies.full),
      light: summarize(tally.latencies.light),
    },
    received,
    mismatches,
    duplicates: tally.duplicates,
    requests: tally.requests,
    errors: tally.errors,
  };
}

clockSkewMs.push(skew());
const out: SubscriberResult = { sse: result(sse), poll: result(poll), clockSkewMs };
writeLine(out);
Deno.exit(0);
