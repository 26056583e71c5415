/**
 * What the messaging benchmark's three processes share (tests/bench/messaging.ts runs the server,
 * messaging-load.ts the senders, messaging-subscribers.ts the SSE and long-poll subscribers):
 * the messages they exchange over stdin/stdout (one JSON object per line), the content format
 * that carries a message's send time, and the statistics.
 */

/** Phases of one load run. Only `full` and `light` are reported; `warmup` is sent and counted. */
export type Phase = "warmup" | "full" | "light";
export const PHASES: Phase[] = ["warmup", "full", "light"];

/** The wall clock in milliseconds with sub-millisecond resolution, comparable across processes. */
export const wallClock = () => performance.timeOrigin + performance.now();

/**
 * A benchmark message's content: `bench <phase> <send time, ms> <sender>.<n>`. The send time is
 * taken by the sender right before the POST, and the subscriber subtracts it from the time it
 * parsed the event: POST-to-receipt latency, on one machine and one clock.
 */
export function benchContent(phase: Phase, sentAt: number, sender: number, n: number): string {
  return `bench ${phase} ${sentAt.toFixed(3)} ${sender}.${n}`;
}

export function parseBenchContent(content: string): { phase: Phase; sentAt: number } | null {
  const parts = content.split(" ");
  if (parts.length !== 4 || parts[0] !== "bench" || !PHASES.includes(parts[1] as Phase)) {
    return null;
  }
  const sentAt = Number(parts[2]);
  return Number.isFinite(sentAt) ? { phase: parts[1] as Phase, sentAt } : null;
}

// Load process ---------------------------------------------------------------------------------

export interface LoadConfig {
  base: string;
  /** One per concurrent sender: its access token and the conversation it posts to. */
  senders: { token: string; conversationId: string }[];
  warmupMs: number;
  durationMs: number;
  /** Light phase (open loop, after the full one): messages per second and its length; 0 skips. */
  lightRate: number;
  lightMs: number;
  /** The senders (indexes) that take turns in the light phase: those whose conversation the
   * subscribers watch, so every light message is a latency sample. */
  lightSenders: number[];
  /** Pause between the full and the light phase, so the light one starts on an idle server. */
  settleMs: number;
}

/** Printed by the load process as it moves between phases (the server samples CPU then). */
export interface PhaseMark {
  mark: "full-start" | "full-end" | "light-start" | "light-end";
  at: number;
}

export interface LoadResult {
  /** 201 answers per phase and conversation (by the phase the message was sent in). */
  created: Record<Phase, Record<string, number>>;
  /** 201 answers that completed inside the full window, and the window's exact length. */
  fullCompleted: number;
  fullWindowMs: number;
  /** POST round trips (send to 201) of messages sent in each phase. */
  post: Record<Phase, Summary | null>;
  /** Anything but a 201: `status x count` and a few bodies. Any of it fails the run. */
  failures: { count: number; samples: string[] };
  /** hr clock minus Date.now() at the start and end (a sanity check of the shared clock). */
  clockSkewMs: number[];
}

// Subscriber process ---------------------------------------------------------------------------

export interface SubscriberConfig {
  base: string;
  token: string;
  /** At most 20 (the API's limit per connection); both transports use the same topics. */
  topics: string[];
}

/** Sent by the server after the load ended: what the subscribers must have received. */
export interface Expectation {
  expect: Record<Phase, Record<string, number>>;
  /** How long to wait for the last events. */
  drainMs: number;
}

export interface TransportResult {
  latency: Record<Phase, Summary | null>;
  received: Record<Phase, number>;
  /** Conversations whose count differs from what was sent: `conversation: received/sent`. */
  mismatches: string[];
  /** Events delivered twice (same message id). */
  duplicates: number;
  /** long-poll: requests made; SSE: 1. */
  requests: number;
  /** Transport errors (a dropped stream, a non-200 answer). */
  errors: string[];
}

export interface SubscriberResult {
  sse: TransportResult;
  poll: TransportResult;
  clockSkewMs: number[];
}

// Statistics -----------------------------------------------------------------------------------

import type { Summary } from "./stats.ts";
export { summarize, type Summary } from "./stats.ts";

export function emptyByPhase<T>(make: () => T): Record<Phase, T> {
  return { warmup: make(), full: make(), light: make() };
}

// Line protocol --------------------------------------------------------------------------------

export { jsonLines, writeLine } from "./process-lines.ts";
