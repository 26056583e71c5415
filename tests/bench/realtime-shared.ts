/**
 * What the realtime benchmark's processes share (tests/bench/realtime.ts runs the publisher and
 * starts the others): the JSON lines they exchange over stdin/stdout, the clock, the kind-4
 * binary frame the subscribers read, and the statistics.
 *
 *   realtime.ts           orchestrates; publishes (through Postgres, or over one WebSocket to
 *                         the ceiling); samples CPU and memory from /proc
 *   realtime-server.ts    the stack server (startStackServer) with its Realtime gateway
 *   realtime-ceiling.ts   a bare WebSocket broadcast loop, the ceiling
 *   realtime-clients.ts   the WebSocket clients: idle connections, or the subscribers
 */

/** Wall clock in ms with sub-millisecond resolution, comparable across processes (one machine). */
export const wallClock = () => performance.timeOrigin + performance.now();

// Protocol between the processes --------------------------------------------------------------

export interface ClientConfig {
  /** ws://127.0.0.1:<port>/...; the clients add nothing to it. */
  url: string;
  connections: number;
  /** Connection i joins `realtime:<topicPrefix><i % channels>`. */
  channels: number;
  topicPrefix: string;
  /** Connections being opened (and joined) at the same time. */
  concurrency: number;
}

export interface ClientsReady {
  ready: true;
  /** Connections open and joined (the join answered `ok`). */
  joined: number;
  failures: number;
  failureSamples: string[];
  openSeconds: number;
}

export type ClientCommand =
  | { cmd: "ping"; t1: number }
  /** Heartbeat on every connection; answers a CheckResult. */
  | { cmd: "check"; timeoutMs: number }
  /** The publisher is done: answers a DeliveryResult once every delivery arrived or drainMs passed. */
  | { cmd: "expect"; expect: Expectation }
  | { cmd: "close" };

export interface Pong {
  pong: true;
  t1: number;
  t2: number;
}

export interface CheckResult {
  /** Connections whose socket is still OPEN and never saw a close. */
  open: number;
  /** Connections that answered the heartbeat with an ok reply in time. */
  answered: number;
  closed: number;
  closeCodes: Record<string, number>;
}

export interface Expectation {
  /** Messages 0..total-1 were published; message n went to channel n % channels. */
  total: number;
  /** Messages below this index are warm-up: counted for loss, not for latency. */
  firstMeasured: number;
  /** Added to every latency: the publisher's clock minus the subscribers' (see clockOffset). */
  offsetMs: number;
  /** Messages per second: message n was due (firstMeasured + k * rate <= n) in second k. */
  rate: number;
  drainMs: number;
}

export interface DeliveryResult {
  expected: number;
  delivered: number;
  /** Deliveries short of the expected count, per message summed. */
  missing: number;
  duplicates: number;
  /** Frames that arrived on a connection not joined to their topic, or could not be read. */
  misrouted: number;
  /** Connections closed during the run, by close code. */
  closed: number;
  closeCodes: Record<string, number>;
  /** Latency of the measured messages' deliveries (ms). */
  latency: Summary | null;
  /** The same, by second of the measured window (by the message's due time). */
  perSecond: (Summary | null)[];
  samples: string[];
}

// Kind-4 frames (Realtime protocol 2.0.0 "user broadcast") ------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** What every benchmark message carries: its index and the publisher's send time. */
export interface BenchPayload {
  n: number;
  t: number;
}

/**
 * `[4][topic len][event len][meta len][encoding 1 = JSON] topic event meta payload`, the frame the
 * gateway sends a 2.0.0 client for a database broadcast; the ceiling's publisher sends the same.
 */
export function encodeKind4(topic: string, event: string, meta: string, payload: string) {
  const t = encoder.encode(topic);
  const e = encoder.encode(event);
  const m = encoder.encode(meta);
  const p = encoder.encode(payload);
  const out = new Uint8Array(5 + t.length + e.length + m.length + p.length);
  out.set([4, t.length, e.length, m.length, 1], 0);
  out.set(t, 5);
  out.set(e, 5 + t.length);
  out.set(m, 5 + t.length + e.length);
  out.set(p, 5 + t.length + e.length + m.length);
  return out;
}

/** The topic of a kind-4 frame, or null when it is not one. */
export function kind4Topic(bytes: Uint8Array): string | null {
  if (bytes.length < 5 || bytes[0] !== 4) return null;
  return decoder.decode(bytes.subarray(5, 5 + bytes[1]));
}

/** The topic and JSON payload of a kind-4 frame. */
export function readKind4(bytes: Uint8Array): { topic: string; payload: BenchPayload } | null {
  if (bytes.length < 5 || bytes[0] !== 4 || bytes[4] !== 1) return null;
  const topic = decoder.decode(bytes.subarray(5, 5 + bytes[1]));
  const start = 5 + bytes[1] + bytes[2] + bytes[3];
  return { topic, payload: JSON.parse(decoder.decode(bytes.subarray(start))) };
}

// Statistics -----------------------------------------------------------------------------------

import type { Summary } from "./stats.ts";
export { summarize, type Summary } from "./stats.ts";

// Line protocol ---------------------------------------------------------------------------------

export { jsonLines, writeLine } from "./process-lines.ts";
