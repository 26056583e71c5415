/**
 * Live events for the signed-in page, through the client transport (web/realtime/transport.ts):
 * WebSocket (supabase-js private channels), falling back to SSE, then long-polling, with every
 * durable event once and in order.
 *
 * The transport and supabase-js need an access token; the session is in httpOnly cookies, so the
 * page asks POST /api/auth/token (CSRF-checked) for one and keeps it in this module's memory only,
 * asking again shortly before it expires (docs/web.md, "Realtime in the browser").
 *
 * `liveStatus` says which transport the page's main topics use; the header shows it.
 *
 * The transport (with supabase-js, most of the page's script) is a chunk of its own, loaded at the
 * first subscription: the sign-in page, which follows no topic, never loads it.
 */
import type {
  RealtimeEnvelope,
  SubscribeOptions,
  Transport,
  TransportKind,
} from "../../realtime/transport.ts";
import { createPageToken } from "../../realtime/page-token.ts";
import { apiOrigin, client, data } from "./client.ts";
import { config, type PublicConfig, realtimeProjectUrl } from "./config.ts";
import { createStore } from "./store.ts";

export type { RealtimeEnvelope, TransportKind };

export interface LiveStatus {
  /** The slowest transport among the page's main topics, or "connecting" before any is up. */
  kind: TransportKind | "connecting" | "off";
  /** Per topic, as the transport reported it. */
  topics: Record<string, TransportKind>;
  error: string | null;
}

export const liveStatus = createStore<LiveStatus>({ kind: "off", topics: {}, error: null });

// The access token, in memory only -----------------------------------------------------------

const pageToken = createPageToken(async () => data(await client.POST("/api/auth/token")));

/**
 * The current access token of the cookie session, fetched when missing or about to expire (a
 * Realtime token lives `AGORA_REALTIME_TOKEN_TTL`, two minutes: web/realtime/page-token.ts).
 */
export function accessToken(): Promise<string> {
  return pageToken.get();
}

// The transport -------------------------------------------------------------------------------

let transport: Transport | null = null;
let transportLib: Promise<typeof import("../../realtime/transport.ts")> | null = null;
/** Counts sign-outs: a subscription asked for before one never starts after it. */
let epoch = 0;
/** Topics whose transport the status indicator reports (the open conversation, the user's). */
const mainTopics = new Map<string, number>();

function worst(topics: Record<string, TransportKind>): LiveStatus["kind"] {
  const order: TransportKind[] = ["poll", "sse", "websocket"];
  const kinds = [...mainTopics.keys()].map((t) => topics[t]);
  if (!kinds.length) return transport ? "connecting" : "off";
  if (kinds.some((k) => !k)) return "connecting";
  return order.find((k) => kinds.includes(k)) ?? "connecting";
}

function report(topics: Record<string, TransportKind>, error: string | null = null) {
  liveStatus.set({ kind: worst(topics), topics, error });
}

function ensureTransport(
  { createTransport }: typeof import("../../realtime/transport.ts"),
  cfg: PublicConfig,
): Transport {
  transport ??= createTransport({
    baseUrl: realtimeProjectUrl(cfg),
    apiUrl: `${apiOrigin || location.origin}/api`,
    anonKey: cfg.realtime.anonKey,
    getAccessToken: accessToken,
    onTransportChange(kind, topic) {
      report({ ...liveStatus.get().topics, [topic]: kind });
      for (const listener of [...(topicListeners.get(topic) ?? [])]) listener(kind);
    },
    onError(error, topic) {
      report(liveStatus.get().topics, `${topic}: ${error.message}`);
    },
  });
  return transport;
}

const topicListeners = new Map<string, Set<(kind: TransportKind) => void>>();

export interface LiveOptions extends SubscribeOptions {
  /** Counted in the status indicator (a main topic of the page). */
  main?: boolean;
  /** Called when the topic's feed is up, and on each change of transport. */
  onLive?: (kind: TransportKind) => void;
}

/** Follows a topic; the returned function stops. */
export function subscribe(
  topic: string,
  handler: (event: RealtimeEnvelope) => void,
  opts: LiveOptions = {},
): () => void {
  const cfg = config.get();
  if (!cfg) throw new Error("the configuration is not loaded");
  if (opts.main) {
    mainTopics.set(topic, (mainTopics.get(topic) ?? 0) + 1);
    report(liveStatus.get().topics);
  }
  if (opts.onLive) {
    const set = topicListeners.get(topic) ?? new Set();
    set.add(opts.onLive);
    topicListeners.set(topic, set);
    const known = liveStatus.get().topics[topic];
    if (known) queueMicrotask(() => opts.onLive?.(known));
  }
  let subscription: { unsubscribe(): void } | null = null;
  let stopped = false;
  const since = epoch;
  transportLib ??= import("../../realtime/transport.ts");
  transportLib.then((lib) => {
    if (stopped || since !== epoch) return;
    subscription = ensureTransport(lib, cfg).subscribe(topic, handler, {
      transports: opts.transports,
    });
  }).catch((err) => {
    transportLib = null;
    report(liveStatus.get().topics, `${topic}: ${err instanceof Error ? err.message : err}`);
  });
  return () => {
    stopped = true;
    subscription?.unsubscribe();
    if (opts.onLive) topicListeners.get(topic)?.delete(opts.onLive);
    if (opts.main) {
      const left = (mainTopics.get(topic) ?? 1) - 1;
      if (left) mainTopics.set(topic, left);
      else mainTopics.delete(topic);
    }
    // A topic nobody follows any more starts afresh if followed again.
    const { [topic]: _gone, ...rest } = liveStatus.get().topics;
    if (!topicListeners.get(topic)?.size && !mainTopics.has(topic)) report(rest);
    else report(liveStatus.get().topics);
  };
}

/** Ends every feed and forgets the token (sign-out). */
export function stopLive(): void {
  epoch++;
  transport?.close();
  transport = null;
  pageToken.clear();
  mainTopics.clear();
  topicListeners.clear();
  liveStatus.set({ kind: "off", topics: {}, error: null });
}

/**
 * Calls `listener` each time the topic's feed comes up or moves to another transport, from now on
 * (not for the state it is in at the call). What a page read before may then miss something: a
 * first subscription starts from the moment it connects, so a page reads its data again here.
 */
export function onFeedChange(topic: string, listener: (kind: TransportKind) => void): () => void {
  let last = liveStatus.get().topics[topic];
  return liveStatus.subscribe((status) => {
    const kind = status.topics[topic];
    const changed = kind !== undefined && kind !== last;
    last = kind;
    if (changed) listener(kind);
  });
}
