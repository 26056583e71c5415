/**
 * The client transport: `subscribe(topic, handler)` over the Realtime WebSocket (a supabase-js
 * private channel), falling back to SSE and then to long-polling, with every durable event
 * delivered once, in cursor order, across reconnects, fallbacks and token refreshes.
 *
 * Web APIs and @supabase/supabase-js only, so it runs in a browser bundle as well as under Deno.
 *
 * How it stays exact:
 * - Each topic has one feed with one cursor: the id of the last durable event handed over
 *   (`<xid>.<id>`, ordered by (xid, id) as bigints). Everything older is dropped, so overlaps
 *   between transports, reconnects and catch-up reads cost nothing but bandwidth.
 * - SSE and long-poll read the server's event log, which is in cursor order and resumes from a
 *   cursor (`Last-Event-ID`, `cursor=`), so their events are delivered as they come.
 * - The WebSocket has no resume and no order: database broadcasts go out at commit, and commit
 *   order is not cursor order (a transaction takes its xid at its first write, long before it
 *   commits). Delivering them as they come would either break the order or, with the cursor rule
 *   above, lose the event that committed late. So on the WebSocket a durable event is a doorbell:
 *   it tells the feed the log holds something newer, and the feed reads the log (a long-poll
 *   request from its cursor) to deliver it in its place. After every join the feed first reads
 *   everything it missed the same way.
 * - Ephemeral events (typing, ids `ephemeral.<uuid>`) are not in the log: they are delivered as
 *   they arrive, at most once per id, best effort.
 */
import { createClient, type RealtimeChannel } from "@supabase/supabase-js";

export type TransportKind = "websocket" | "sse" | "poll";

/** An event as every transport carries it. */
export interface RealtimeEnvelope<P = unknown> {
  id: string;
  topic: string;
  event: string;
  payload: P;
  createdAt: string;
}

export interface TransportOptions {
  /** The site, e.g. http://localhost:54321 (Realtime lives at /realtime/v1). */
  baseUrl: string;
  /** Where /realtime/sse and /realtime/poll live; default `${baseUrl}/api`. */
  apiUrl?: string;
  anonKey: string;
  /** Called on start, before the token expires, after a 401, and on `refreshToken()`. */
  getAccessToken: () => Promise<string>;
  /** Deliver events after this cursor; default: from the moment of subscribing. */
  startCursor?: string;
  /** Order of preference; default websocket, sse, poll. */
  transports?: TransportKind[];
  wsFailuresBeforeFallback?: number;
  sseFailuresBeforeFallback?: number;
  /** After a fallback, try the preferred transport again this much later (0: never). */
  retryWebSocketAfterMs?: number;
  pollTimeoutSeconds?: number;
  joinTimeoutMs?: number;
  /** First retry delay; it doubles with each consecutive failure. */
  backoffMs?: number;
  fetch?: typeof fetch;
  WebSocket?: typeof WebSocket;
  onTransportChange?: (kind: TransportKind, topic: string) => void;
  onError?: (error: TransportError, topic: string) => void;
}

export interface SubscribeOptions {
  transports?: TransportKind[];
}

export interface Subscription {
  unsubscribe(): void;
}

export interface Transport {
  /**
   * Events of `topic`, from now on. `options.transports` narrows the order of preference for
   * this topic (e.g. `["websocket"]` for topics worth following only while a socket is up); the
   * subscription that opens a topic's feed decides, later ones share it as it is.
   */
  subscribe(
    topic: string,
    handler: (event: RealtimeEnvelope) => void,
    options?: SubscribeOptions,
  ): Subscription;
  /** Asks getAccessToken again (e.g. after the app refreshed its session). */
  refreshToken(): Promise<void>;
  close(): void;
}

export class TransportError extends Error {
  /** The HTTP status, when the server answered. */
  status?: number;
  constructor(message: string, status?: number) {
    super(message);
    this.name = "TransportError";
    this.status = status;
  }
}

const STOP = "stop";
const CLIMB = "climb";
const MAX_BACKOFF_MS = 15_000;
/** A session that stayed up this long starts its failure count afresh. */
const STABLE_MS = 30_000;
/** No byte, not even a heartbeat comment, for this long: the SSE connection is dead. */
const SSE_STALL_MS = 45_000;
/** How long a doorbell read waits for the rung event to pass the log's horizon. */
const DOORBELL_WAIT_SECONDS = 5;
const EPHEMERAL_MEMORY = 500;

function compareCursors(a: string, b: string): number {
  const [ax, ai] = a.split(".").map(BigInt);
  const [bx, bi] = b.split(".").map(BigInt);
  if (ax !== bx) return ax < bx ? -1 : 1;
  return ai === bi ? 0 : ai < bi ? -1 : 1;
}

const isEphemeral = (e: RealtimeEnvelope) => e.id.startsWith("ephemeral.");

function isEnvelope(value: unknown): value is RealtimeEnvelope {
  const e = value as RealtimeEnvelope | null;
  return typeof e?.id === "string" && typeof e.topic === "string" && typeof e.event === "string";
}

/** Seconds since the epoch at which a JWT expires, if it is one. */
function expiryOf(token: string): number | null {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const exp = JSON.parse(atob(part)).exp;
    return typeof exp === "number" ? exp : null;
  } catch {
    return null;
  }
}

/**
 * How long after `now` (ms) to renew a token expiring at `exp` (seconds): half its remaining
 * life, at most a minute before expiry (a two-minute Realtime token: after one minute), never
 * sooner than a second (10 s when the last renewal gave back the same token).
 */
export function renewalDelay(exp: number, now: number, changed = true): number {
  const left = exp * 1000 - now;
  return Math.max(changed ? 1_000 : 10_000, left - Math.min(60_000, left / 2));
}

/** Resolves when `start` calls back, rejects when `signal` aborts first. */
function until(signal: AbortSignal, start: (done: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    start(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

export function createTransport(options: TransportOptions): Transport {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const apiUrl = (options.apiUrl ?? `${options.baseUrl.replace(/\/$/, "")}/api`) + "/realtime";
  const kinds = options.transports ?? ["websocket", "sse", "poll"];
  const feeds = new Map<string, Feed>();
  let token: string | null = null;
  let refreshing: Promise<string> | null = null;
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  let client: ReturnType<typeof createClient> | null = null;

  /** One getAccessToken call at a time; a new token reaches the open channels at once. */
  function refreshToken(): Promise<string> {
    refreshing ??= (async () => {
      try {
        const next = await options.getAccessToken().catch((err) => {
          // Handled like a 401: retried with backoff, reported if it persists.
          throw new TransportError(`getAccessToken: ${err}`, 401);
        });
        const changed = next !== token;
        if (changed) {
          token = next;
          if (client) await client.realtime.setAuth(next);
        }
        scheduleRefresh(next, changed);
        return next;
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  }

  /**
   * Refreshes ahead of expiry, so the server never closes a channel for an old token. When
   * getAccessToken handed back the same token, asks again less eagerly.
   */
  function scheduleRefresh(current: string, changed = true) {
    clearTimeout(refreshTimer);
    const exp = expiryOf(current);
    if (exp === null || !feeds.size) return;
    const delay = renewalDelay(exp, Date.now(), changed);
    refreshTimer = setTimeout(
      () => void refreshToken().catch(() => {}),
      Math.min(delay, 2 ** 31 - 1),
    );
  }

  async function realtimeClient() {
    const current = token ?? await refreshToken();
    if (!client) {
      client = createClient(options.baseUrl, options.anonKey, {
        // The transport owns the token; supabase-js asks for it on every heartbeat.
        accessToken: () => Promise.resolve(token ?? current),
        realtime: options.WebSocket ? { transport: options.WebSocket } : {},
      });
      await client.realtime.setAuth(current);
    }
    return client;
  }

  async function get(
    path: "sse" | "poll",
    params: Record<string, string>,
    signal: AbortSignal,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    const current = token ?? await refreshToken();
    const response = await fetchImpl(`${apiUrl}/${path}?${new URLSearchParams(params)}`, {
      headers: { ...headers, authorization: `Bearer ${current}` },
      signal,
    });
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      let message = `${path}: HTTP ${response.status}`;
      try {
        message = JSON.parse(text).error.message ?? message;
      } catch {
        // not the API's error shape
      }
      throw new TransportError(message, response.status);
    }
    return response;
  }

  async function poll(
    topic: string,
    cursor: string | null,
    timeoutSeconds: number,
    signal: AbortSignal,
  ): Promise<{ events: RealtimeEnvelope[]; cursor: string }> {
    const params: Record<string, string> = { topics: topic, timeout: String(timeoutSeconds) };
    if (cursor) params.cursor = cursor;
    // A request the server forgot about must not hang the feed.
    const deadline = AbortSignal.timeout((timeoutSeconds + 15) * 1000);
    const response = await get("poll", params, AbortSignal.any([signal, deadline]));
    return await response.json();
  }

  /** One topic: its cursor, its handlers, and the loop that keeps a transport running. */
  class Feed {
    handlers = new Set<(event: RealtimeEnvelope) => void>();
    cursor: string | null = options.startCursor ?? null;
    level = 0;
    failures = 0;
    authFailures = 0;
    /** While trying the preferred transport again: the level to return to if it fails. */
    probeFrom: number | null = null;
    reported: TransportKind | null = null;
    liveSince = 0;
    session = new AbortController();
    stopped = false;
    climbTimer: ReturnType<typeof setTimeout> | undefined;
    ephemeralSeen = new Set<string>();

    topic: string;
    kinds: TransportKind[];

    constructor(topic: string, feedKinds: TransportKind[]) {
      this.topic = topic;
      this.kinds = feedKinds.length ? feedKinds : kinds;
      void this.run();
    }

    stop() {
      this.stopped = true;
      clearTimeout(this.climbTimer);
      this.session.abort(STOP);
    }

    deliver(events: RealtimeEnvelope[]) {
      for (const e of events) {
        if (this.stopped || !isEnvelope(e) || e.topic !== this.topic) continue;
        if (isEphemeral(e)) {
          if (this.ephemeralSeen.has(e.id)) continue;
          this.ephemeralSeen.add(e.id);
          if (this.ephemeralSeen.size > EPHEMERAL_MEMORY) {
            this.ephemeralSeen.delete(this.ephemeralSeen.values().next().value!);
          }
        } else {
          if (this.cursor && compareCursors(e.id, this.cursor) <= 0) continue;
          this.cursor = e.id;
        }
        for (const handler of [...this.handlers]) {
          try {
            handler(e);
          } catch (err) {
            // A failing handler is the app's bug; it must not stall the feed.
            globalThis.reportError?.(err);
          }
        }
      }
    }

    /** The session works: report the transport once, and keep it (no probe to undo). */
    live(kind: TransportKind) {
      if (!this.liveSince) this.liveSince = Date.now();
      this.probeFrom = null;
      this.authFailures = 0;
      if (this.reported !== kind) {
        this.reported = kind;
        options.onTransportChange?.(kind, this.topic);
      }
    }

    async run() {
      while (!this.stopped) {
        const session = this.session = new AbortController();
        const kind = this.kinds[this.level];
        this.liveSince = 0;
        let error: unknown;
        try {
          // "From now" is a cursor like any other: ask the log for it once.
          this.cursor ??= (await poll(this.topic, null, 0, session.signal)).cursor;
          if (kind === "websocket") await this.websocket(session);
          else if (kind === "sse") await this.sse(session.signal);
          else await this.longPoll(session.signal);
        } catch (err) {
          error = err;
        }
        if (this.stopped) return;
        if (session.signal.reason === CLIMB) continue;
        if (session.signal.aborted) error = session.signal.reason;
        if (error instanceof TransportError && error.status === 403) {
          options.onError?.(error, this.topic);
          return this.stop();
        }
        let delay: number;
        if (error instanceof TransportError && error.status === 401) {
          // Not the transport's fault: a fresh token, then the same transport again.
          delay = this.backoff(++this.authFailures);
          if (this.authFailures === 3) options.onError?.(error, this.topic);
          await refreshToken().catch(() => {});
        } else {
          if (this.liveSince && Date.now() - this.liveSince >= STABLE_MS) this.failures = 0;
          this.failures++;
          if (kind === "websocket" && /token|jwt|unauthorized|permission/i.test(String(error))) {
            await refreshToken().catch(() => {});
          }
          delay = this.fallBack(kind) ? 0 : this.backoff(this.failures);
        }
        // A session of its own, so that stop() and a climb cut the wait short.
        const wait = this.session = new AbortController();
        await until(wait.signal, (done) => setTimeout(done, delay)).catch(() => {});
      }
    }

    /** Moves down a level when this one keeps failing (or a probe failed); true if it moved. */
    fallBack(kind: TransportKind): boolean {
      const limit = kind === "websocket"
        ? options.wsFailuresBeforeFallback ?? 3
        : options.sseFailuresBeforeFallback ?? 3;
      let next: number | null = null;
      if (this.probeFrom !== null) next = this.probeFrom;
      else if (this.failures >= limit && this.level < this.kinds.length - 1) next = this.level + 1;
      if (next === null) return false;
      this.level = next;
      this.probeFrom = null;
      this.failures = 0;
      this.scheduleClimb();
      return true;
    }

    /** Later, try the preferred transport again; one failure sends the feed back down. */
    scheduleClimb() {
      clearTimeout(this.climbTimer);
      const after = options.retryWebSocketAfterMs ?? 60_000;
      if (!after || this.level === 0) return;
      this.climbTimer = setTimeout(() => {
        if (this.stopped || this.level === 0) return;
        this.probeFrom = this.level;
        this.level = 0;
        this.failures = 0;
        this.session.abort(CLIMB);
      }, after);
    }

    backoff(failures: number): number {
      const base = options.backoffMs ?? 500;
      return Math.min(MAX_BACKOFF_MS, base * 2 ** (failures - 1)) * (0.5 + Math.random() / 2);
    }

    /** Reads the log from the cursor and delivers; returns how many durable events came. */
    async readLog(waitSeconds: number, signal: AbortSignal): Promise<number> {
      const page = await poll(this.topic, this.cursor, waitSeconds, signal);
      this.deliver(page.events);
      return page.events.filter((e) => !isEphemeral(e)).length;
    }

    async websocket(session: AbortController) {
      const signal = session.signal;
      const realtime = await realtimeClient();
      // A dead socket would only come back on supabase-js's own reconnect schedule (up to 10 s
      // apart, while the join waits); the feed has its own, so it starts a socket now.
      if (!realtime.realtime.isConnected() && !realtime.realtime.isConnecting()) {
        await realtime.realtime.disconnect();
      }
      const channel: RealtimeChannel = realtime.channel(this.topic, { config: { private: true } });
      let rung: string | null = null; // the newest durable cursor the WebSocket announced
      let wake: (() => void) | null = null;
      let systemError = "";
      const fail = (reason: string) => {
        if (!signal.aborted) session.abort(new TransportError(`websocket: ${reason}`));
      };
      const joined = until(signal, (resolve) => {
        channel
          .on("broadcast", { event: "*" }, ({ payload }) => {
            if (!isEnvelope(payload)) return;
            if (isEphemeral(payload)) return this.deliver([payload]);
            if (this.cursor && compareCursors(payload.id, this.cursor) <= 0) return;
            if (!rung || compareCursors(payload.id, rung) > 0) rung = payload.id;
            wake?.();
          })
          .on("system", {}, (message: { status?: string; message?: string }) => {
            if (message.status === "error") systemError = message.message ?? "";
          })
          .subscribe((status, err) => {
            if (status === "SUBSCRIBED") resolve();
            else fail([status, err?.message ?? systemError].filter(Boolean).join(" "));
          }, options.joinTimeoutMs ?? 10_000);
      });
      try {
        await joined;
        this.live("websocket");
        // Everything the log holds past the cursor first: the WebSocket has no memory.
        while (await this.readLog(0, signal) > 0);
        while (true) {
          if (rung && compareCursors(rung, this.cursor!) > 0) {
            // Waits on the server until the rung event is readable in the log.
            await this.readLog(DOORBELL_WAIT_SECONDS, signal);
          } else {
            await until(signal, (done) => wake = done);
            wake = null;
          }
        }
      } finally {
        // Left before the next join of the topic, or supabase-js would hand back this channel.
        await Promise.race([
          realtime.removeChannel(channel).catch(() => {}),
          new Promise((resolve) => setTimeout(resolve, 2_000)),
        ]);
      }
    }

    async sse(signal: AbortSignal) {
      const response = await get("sse", { topics: this.topic }, signal, {
        accept: "text/event-stream",
        ...(this.cursor ? { "last-event-id": this.cursor } : {}),
      });
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      try {
        while (true) {
          let stall: ReturnType<typeof setTimeout> | undefined;
          const chunk = await Promise.race([
            reader.read(),
            new Promise<never>((_, reject) => {
              stall = setTimeout(
                () => reject(new TransportError("sse: no heartbeat")),
                SSE_STALL_MS,
              );
            }),
          ]).finally(() => clearTimeout(stall));
          if (chunk.done) throw new TransportError("sse: the stream ended");
          buffer = (buffer + chunk.value).replace(/\r\n?/g, "\n");
          let end;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            this.sseFrame(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          }
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    }

    sseFrame(block: string) {
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue; // heartbeat comments
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (event === "ready") return this.live("sse");
      if (data.length) this.deliver([JSON.parse(data.join("\n"))]);
    }

    async longPoll(signal: AbortSignal) {
      // A first read that answers at once: the path works, so the feed is live now (and says
      // so), not after the first long wait.
      await this.readLog(0, signal);
      this.live("poll");
      while (true) {
        await this.readLog(options.pollTimeoutSeconds ?? 25, signal);
        this.live("poll");
      }
    }
  }

  return {
    subscribe(topic, handler, subscribeOptions) {
      let feed = feeds.get(topic);
      if (!feed) {
        feed = new Feed(topic, subscribeOptions?.transports ?? kinds);
        feeds.set(topic, feed);
        if (token) scheduleRefresh(token);
      }
      feed.handlers.add(handler);
      const mine = feed;
      return {
        unsubscribe() {
          mine.handlers.delete(handler);
          if (mine.handlers.size || feeds.get(topic) !== mine) return;
          feeds.delete(topic);
          mine.stop();
          if (!feeds.size) clearTimeout(refreshTimer);
        },
      };
    },
    async refreshToken() {
      await refreshToken();
    },
    close() {
      for (const feed of feeds.values()) feed.stop();
      feeds.clear();
      clearTimeout(refreshTimer);
      const closing = client;
      client = null;
      if (closing) {
        void closing.removeAllChannels().finally(() => closing.realtime.disconnect());
      }
    },
  };
}
