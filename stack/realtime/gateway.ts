/**
 * The local Realtime gateway: a WebSocket server that an unmodified `@supabase/supabase-js`
 * client cannot tell from hosted Supabase Realtime, for Broadcast and Presence on public and
 * private channels. It follows the real server (supabase/realtime over Phoenix channels) closely:
 * the same frames, the same join flow and error reasons, authorization by the RLS policies on
 * `realtime.messages` (authorization.ts), database broadcasts from `realtime.send()`, and the HTTP
 * broadcast API. The design and what differs from hosted are in docs/realtime.md.
 *
 *   GET  /realtime/v1/websocket?apikey=...&vsn=1.0.0|2.0.0
 *   POST /realtime/v1/api/broadcast                          { messages: [{ topic, event, payload, private }] }
 *   POST /realtime/v1/api/broadcast/:topic/events/:event     (?private=true) body = payload
 */
import type { Listener, Sql } from "../../functions/_shared/db.ts";
import type { Logger } from "../../functions/_shared/logger.ts";
import { bearerToken } from "../../functions/_shared/jwt.ts";
import { type Decisions, type Extension, readDecisions, writeDecisions } from "./authorization.ts";
import { databaseBroadcasts } from "./database-broadcasts.ts";
import { type PresenceDiff, PresenceStore } from "./presence.ts";
import {
  decode,
  encodeClose,
  encodePush,
  encodeReply,
  encodeUserBroadcast,
  fitsUserBroadcast,
  type Frame,
  type Incoming,
  ProtocolError,
  type Vsn,
} from "./protocol.ts";
import type { GatewayLimits } from "./settings.ts";
import type { JSONWebKeySet } from "jose";
import { type Claims, createTokenChecker, type TokenCheck } from "./tokens.ts";

export interface Gateway {
  /** Answers requests under /realtime/v1; null for any other path. */
  handle(request: Request, info: Deno.ServeHandlerInfo): Promise<Response> | null;
  /** Resolves once the gateway listens to the database (database broadcasts reach it). */
  ready: Promise<void>;
  stats(): { connections: number; channels: number };
  close(): Promise<void>;
}

export interface GatewayOptions {
  sql: Sql;
  /** The process's session connection, where the gateway LISTENs (never the pool). */
  listener: Pick<Listener, "listen">;
  jwtSecret: string;
  /**
   * The JWKS ES256 access tokens are verified with: the one the API publishes
   * (`GET /api/auth/.well-known/jwks.json`), as hosted Realtime uses the project's signing keys.
   * Absent: HS256 tokens only.
   */
  jwks?: () => Promise<JSONWebKeySet>;
  limits: GatewayLimits;
  log: Logger;
}

interface Connection {
  id: string;
  ws: WebSocket;
  vsn: Vsn;
  ip: string;
  apiToken: string;
  channels: Map<string, Channel>;
  lastSeen: number;
  recentJoins: number[];
  queue: Promise<void>;
  closed: boolean;
}

interface Channel {
  id: string;
  conn: Connection;
  topic: string;
  sub: string;
  key: string;
  joinRef: string | null;
  isPrivate: boolean;
  self: boolean;
  ack: boolean;
  presenceKey: string;
  presenceEnabled: boolean;
  accessToken: string;
  claims: Claims;
  read: Decisions;
  write: Decisions;
  confirmTimer?: ReturnType<typeof setTimeout>;
}

/** A broadcast on its way to subscribers: a user broadcast (binary-capable) or a JSON one. */
type Delivery =
  | {
    type: "user";
    userEvent: string;
    encoding: "json" | "binary";
    data: Uint8Array;
    meta?: Record<string, unknown>;
  }
  | { type: "json"; payload: Record<string, unknown> };

const PREFIX = "/realtime/v1";
const CONFIRM_TOKEN_MS = 5 * 60_000;
const NOTIFY_LIMIT = 7_500;
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const registryKey = (isPrivate: boolean, sub: string) => `${isPrivate ? "p" : "o"}:${sub}`;

/** `true`/`"true"` as the server's flexible boolean accepts them. */
const flag = (value: unknown) => value === true || value === "true";

function jsonError(status: number, body: unknown): Response {
  return Response.json(body, { status });
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function createGateway(opts: GatewayOptions): Gateway {
  const { sql, limits, log } = opts;
  const checkToken = createTokenChecker(opts.jwtSecret, opts.jwks);
  const processId = crypto.randomUUID();
  const connections = new Set<Connection>();
  const perIp = new Map<string, number>();
  const subscribers = new Map<string, Set<Channel>>();
  const presence = new PresenceStore();
  let closed = false;

  // --- sending ------------------------------------------------------------------------------

  const send = (conn: Connection, data: string | Uint8Array) => {
    if (conn.closed || conn.ws.readyState !== WebSocket.OPEN) return;
    if (conn.ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      // A consumer this far behind would hold memory without bound: let it reconnect.
      conn.ws.close(1011, "slow consumer");
      return;
    }
    conn.ws.send(data);
  };

  /** A channel's reply to a frame: Phoenix answers from the channel, with the channel's join_ref. */
  const reply = (
    ch: Channel,
    frame: { ref: string | null },
    status: "ok" | "error",
    response: unknown,
  ) => send(ch.conn, encodeReply(ch.conn.vsn, ch.topic, ch.joinRef, frame.ref, status, response));

  /** The socket's "unmatched topic" answer (there is no channel, so no join_ref). */
  const unmatched = (conn: Connection, topic: string, ref: string | null) =>
    send(conn, encodeReply(conn.vsn, topic, null, ref, "error", { reason: "unmatched topic" }));

  const push = (ch: Channel, event: string, payload: unknown) =>
    send(ch.conn, encodePush(ch.conn.vsn, ch.topic, event, payload, ch.joinRef));

  const systemMessage = (ch: Channel, extension: string, status: "ok" | "error", message: string) =>
    push(ch, "system", { extension, status, message, channel: ch.sub });

  /** Hands one broadcast to the subscribers of a registry key, encoded once per protocol. */
  const deliver = (key: string, delivery: Delivery, exclude?: Channel) => {
    const set = subscribers.get(key);
    if (!set?.size) return;
    const encoded = new Map<Vsn, string | Uint8Array | null>();
    for (const ch of set) {
      if (ch === exclude || (ch.isPrivate && ch.read.broadcast !== true)) continue;
      const vsn = ch.conn.vsn;
      if (!encoded.has(vsn)) encoded.set(vsn, encodeDelivery(vsn, ch.topic, delivery));
      const frame = encoded.get(vsn);
      if (frame) send(ch.conn, frame);
    }
  };

  function encodeDelivery(vsn: Vsn, topic: string, d: Delivery): string | Uint8Array | null {
    if (d.type === "json") return encodePush(vsn, topic, "broadcast", d.payload);
    if (vsn === "2.0.0" && fitsUserBroadcast(topic, d.userEvent, d.meta)) {
      return encodeUserBroadcast(topic, d.userEvent, d.encoding, d.data, d.meta);
    }
    // Protocol 1.0.0 cannot carry binary payloads (hosted drops them too), nor can a 2.0.0 frame
    // whose topic, event or metadata is over 255 bytes: a JSON payload then goes as a JSON push,
    // which realtime-js reads the same way on both protocols.
    if (d.encoding === "binary") {
      if (vsn === "2.0.0") {
        log("warn", "binary broadcast dropped: topic or event over 255 bytes", { topic });
      }
      return null;
    }
    return encodePush(vsn, topic, "broadcast", {
      type: "broadcast",
      event: d.userEvent,
      payload: JSON.parse(decoder.decode(d.data)),
      ...(d.meta ? { meta: d.meta } : {}),
    });
  }

  const deliverPresenceDiff = (key: string, diff: PresenceDiff) => {
    for (const ch of subscribers.get(key) ?? []) {
      if (ch.isPrivate && ch.read.presence !== true) continue;
      send(ch.conn, encodePush(ch.conn.vsn, ch.topic, "presence_diff", diff));
    }
  };

  // --- other processes ----------------------------------------------------------------------

  /** Client broadcasts also reach subscribers connected to other gateway processes. */
  const fanOut = async (key: string, delivery: Delivery) => {
    const body = {
      p: processId,
      k: key,
      d: delivery.type === "json" ? delivery : { ...delivery, data: toBase64(delivery.data) },
    };
    let text = JSON.stringify(body);
    try {
      if (text.length > NOTIFY_LIMIT) {
        const [row] = await sql<{ id: string }[]>`
          insert into realtime.local_fanout (body) values (${
          sql.json(body as never)
        }) returning id::text`;
        text = JSON.stringify({ p: processId, id: row.id });
        if (Math.random() < 0.01) {
          await sql`delete from realtime.local_fanout where created_at < now() - interval '1 minute'`;
        }
      }
      await sql`select pg_notify('realtime_fanout', ${text})`;
    } catch (err) {
      log("error", "realtime fan-out to other processes failed", { error: String(err) });
    }
  };

  const onFanout = async (text: string) => {
    try {
      let body = JSON.parse(text);
      if (body.p === processId) return;
      if (body.id) {
        const [row] = await sql<
          { body: typeof body }[]
        >`select body from realtime.local_fanout where id = ${body.id}`;
        if (!row) return;
        body = row.body;
      }
      const d = body.d;
      deliver(body.k, d.type === "json" ? d : { ...d, data: fromBase64(d.data) });
    } catch (err) {
      log("warn", "bad realtime fan-out message", { error: String(err) });
    }
  };

  /** Committed realtime.messages rows (realtime.send): broadcasts with `meta.id`. */
  const broadcasts = databaseBroadcasts({
    sql,
    listener: opts.listener,
    log,
    deliver(row) {
      deliver(registryKey(row.private === true, row.topic), {
        type: "user",
        userEvent: row.event ?? "",
        encoding: "json",
        data: encoder.encode(JSON.stringify(row.payload ?? {})),
        meta: { id: row.id },
      });
    },
  });

  const fanoutListen = opts.listener.listen("realtime_fanout", (text) => void onFanout(text));

  // --- channels -----------------------------------------------------------------------------

  const register = (ch: Channel) => {
    let set = subscribers.get(ch.key);
    if (!set) subscribers.set(ch.key, set = new Set());
    set.add(ch);
    ch.conn.channels.set(ch.topic, ch);
  };

  /** Removes a channel everywhere; its presence leaves. Sends nothing to its client. */
  const drop = (ch: Channel) => {
    if (ch.confirmTimer !== undefined) clearTimeout(ch.confirmTimer);
    if (ch.conn.channels.get(ch.topic) === ch) ch.conn.channels.delete(ch.topic);
    const set = subscribers.get(ch.key);
    set?.delete(ch);
    if (set && !set.size) subscribers.delete(ch.key);
    const diff = presence.untrack(ch.key, ch.id);
    if (diff) deliverPresenceDiff(ch.key, diff);
  };

  /** The server closes a channel: phx_close to its client. */
  const closeChannel = (ch: Channel) => {
    drop(ch);
    send(ch.conn, encodeClose(ch.conn.vsn, ch.topic, ch.joinRef));
  };

  /** A system error, then the channel closes (hosted: shutdown_response). */
  const shutdown = (ch: Channel, message: string) => {
    systemMessage(ch, "system", "error", message);
    closeChannel(ch);
  };

  const tokenError = (check: Exclude<TokenCheck, { ok: true }>): string => {
    switch (check.code) {
      case "expired":
      case "missing_claims":
        return `InvalidJWTToken: ${check.message}`;
      case "signature":
        return `JwtSignatureError: ${check.message}`;
      default:
        return `MalformedJWT: ${check.message}`;
    }
  };

  /** Re-checks the channel's token before it expires (and at least every 5 minutes). */
  const scheduleConfirm = (ch: Channel) => {
    if (ch.confirmTimer !== undefined) clearTimeout(ch.confirmTimer);
    const untilExpiry = ch.claims.exp * 1000 - Date.now();
    ch.confirmTimer = setTimeout(
      () => void confirm(ch),
      Math.max(0, Math.min(CONFIRM_TOKEN_MS, untilExpiry)),
    );
  };

  const confirm = async (ch: Channel) => {
    if (ch.conn.channels.get(ch.topic) !== ch) return;
    const check = await checkToken(ch.accessToken);
    if (!check.ok) return shutdown(ch, check.message);
    // Beyond hosted: read access is checked again too, so a revoked session or a removed
    // participant does not keep a channel for the token's whole lifetime.
    const revoked = ch.isPrivate ? await readRevoked(ch, ch.claims) : null;
    if (revoked) return shutdown(ch, revoked);
    scheduleConfirm(ch);
  };

  const readExtensions = (ch: { presenceEnabled: boolean }): Extension[] =>
    ch.presenceEnabled ? ["broadcast", "presence"] : ["broadcast"];

  /**
   * Re-runs the read policies for (new) claims. Null when the channel may go on; otherwise why it
   * must close, in the real server's words: nothing readable any more is the join's refusal, a
   * permission lost while another remains is a revocation.
   */
  const readRevoked = async (ch: Channel, claims: Claims): Promise<string | null> => {
    const now = await readDecisions(sql, ch.sub, claims, readExtensions(ch));
    if (!now.broadcast && !now.presence) {
      return `You do not have permissions to read from this Channel topic: ${ch.sub}`;
    }
    if (
      (ch.read.broadcast === true && now.broadcast === false) ||
      (ch.read.presence === true && now.presence === false)
    ) return `You no longer have permission to read from this Channel topic: ${ch.sub}`;
    ch.read = { ...ch.read, ...now };
    return null;
  };

  async function join(conn: Connection, frame: Frame) {
    const joinError = (reason: string) =>
      send(conn, encodeReply(conn.vsn, frame.topic, frame.joinRef, frame.ref, "error", { reason }));
    const sub = frame.topic.slice("realtime:".length);
    if (!sub) return joinError("TopicNameRequired: You must provide a topic name");

    const params =
      (frame.payload && typeof frame.payload === "object" ? frame.payload : {}) as Record<
        string,
        unknown
      >;
    const config =
      (params.config && typeof params.config === "object" ? params.config : {}) as Record<
        string,
        unknown
      >;
    const broadcastConfig = (config.broadcast ?? {}) as Record<string, unknown>;
    const presenceConfig = (config.presence ?? {}) as Record<string, unknown>;
    const isPrivate = flag(config.private);
    if (!isPrivate && isReservedTopic(sub)) {
      return joinError(
        `Unauthorized: ${sub} is a private topic; join it with config.private set to true`,
      );
    }

    const now = Date.now();
    conn.recentJoins = conn.recentJoins.filter((t) => t > now - 1_000);
    if (conn.recentJoins.length >= limits.joinsPerSecond) {
      joinError("ClientJoinRateLimitReached: Too many joins per second");
      conn.ws.close(1008, "Too many joins per second");
      return;
    }
    conn.recentJoins.push(now);
    if (conn.channels.size >= limits.channelsPerConnection) {
      return joinError("ChannelRateLimitReached: Too many channels");
    }

    const offered = params.access_token ?? params.user_token;
    const accessToken = typeof offered === "string" && !offered.startsWith("sb_")
      ? offered
      : conn.apiToken;
    const check = await checkToken(accessToken);
    if (!check.ok) return joinError(tokenError(check));

    const presenceEnabled = flag(presenceConfig.enabled);
    const ch: Channel = {
      id: crypto.randomUUID(),
      conn,
      topic: frame.topic,
      sub,
      key: registryKey(isPrivate, sub),
      joinRef: frame.joinRef,
      isPrivate,
      self: flag(broadcastConfig.self),
      ack: flag(broadcastConfig.ack),
      presenceKey: typeof presenceConfig.key === "string" && presenceConfig.key
        ? presenceConfig.key
        : crypto.randomUUID(),
      presenceEnabled,
      accessToken,
      claims: check.claims,
      read: {},
      write: {},
    };
    if (isPrivate) {
      try {
        ch.read = await readDecisions(sql, sub, check.claims, readExtensions(ch));
      } catch (err) {
        log("error", "realtime authorization failed", { error: String(err) });
        return joinError(
          "UnableToConnectToProject: Realtime was unable to connect to the project database",
        );
      }
      if (!ch.read.broadcast && !ch.read.presence) {
        return joinError(
          `Unauthorized: You do not have permissions to read from this Channel topic: ${sub}`,
        );
      }
    }
    if (conn.closed) return;
    register(ch);
    send(
      conn,
      encodeReply(conn.vsn, ch.topic, frame.joinRef, frame.ref, "ok", { postgres_changes: [] }),
    );
    if (Array.isArray(config.postgres_changes) && config.postgres_changes.some(Boolean)) {
      systemMessage(
        ch,
        "postgres_changes",
        "error",
        "Postgres Changes are not available on the local gateway; use Broadcast",
      );
    }
    scheduleConfirm(ch);
    if (ch.presenceEnabled && (!isPrivate || ch.read.presence === true)) {
      push(ch, "presence_state", presence.state(ch.key));
    }
  }

  /** Lazily asks the write policies (once per token), as hosted does on first use. */
  const ensureWrite = async (ch: Channel, extension: Extension): Promise<boolean> => {
    if (!ch.isPrivate) return true;
    if (ch.write[extension] === undefined) {
      ch.write = {
        ...ch.write,
        ...(await writeDecisions(sql, ch.sub, ch.claims, ["broadcast", "presence"])),
      };
    }
    return ch.write[extension] === true;
  };

  async function onBroadcast(
    ch: Channel,
    frame: Frame | null,
    binary: Extract<Incoming, { kind: "user_broadcast_push" }> | null,
  ) {
    const replyTo = frame ??
      (binary
        ? {
          joinRef: binary.joinRef,
          ref: binary.ref,
          topic: binary.topic,
          event: "broadcast",
          payload: null,
        }
        : null);
    if (!(await ensureWrite(ch, "broadcast"))) return; // hosted: dropped without a reply
    let delivery: Delivery;
    let size: number;
    if (binary) {
      delivery = {
        type: "user",
        userEvent: binary.userEvent,
        encoding: binary.encoding,
        data: binary.data,
      };
      size = binary.data.length;
    } else {
      const payload = frame!.payload;
      if (!payload || typeof payload !== "object" || Array.isArray(payload)) return;
      delivery = { type: "json", payload: payload as Record<string, unknown> };
      size = encoder.encode(JSON.stringify(payload)).length;
    }
    if (size > limits.payloadBytes) {
      // hosted replies {:error, :payload_size_exceeded}: the response is the bare string
      if (ch.ack && replyTo) reply(ch, replyTo, "error", "payload_size_exceeded");
      return;
    }
    deliver(ch.key, delivery, ch.self ? undefined : ch);
    void fanOut(ch.key, delivery);
    if (ch.ack && replyTo) reply(ch, replyTo, "ok", {});
  }

  async function onPresence(ch: Channel, frame: Frame) {
    const body = (frame.payload ?? {}) as Record<string, unknown>;
    if (typeof body.event !== "string") return reply(ch, frame, "ok", {}); // hosted ignores it
    const event = body.event.toLowerCase();
    if (event === "track") {
      if (ch.isPrivate && ch.read.presence === undefined) {
        ch.read = { ...ch.read, ...(await readDecisions(sql, ch.sub, ch.claims, ["presence"])) };
      }
      if (!(await ensureWrite(ch, "presence"))) return reply(ch, frame, "error", {});
      const meta = "payload" in body ? body.payload : {};
      if (!meta || typeof meta !== "object" || Array.isArray(meta)) {
        return reply(ch, frame, "error", { reason: "Presence track payload must be a map" });
      }
      if (encoder.encode(JSON.stringify(meta)).length > limits.payloadBytes) {
        return shutdown(ch, "Track message size exceeded");
      }
      ch.presenceEnabled = true;
      if (!sameJson(presence.tracks(ch.key, ch.id), meta)) {
        deliverPresenceDiff(
          ch.key,
          presence.track(ch.key, ch.id, ch.presenceKey, meta as Record<string, unknown>),
        );
      }
      return reply(ch, frame, "ok", {});
    }
    if (event === "untrack") {
      const diff = presence.untrack(ch.key, ch.id);
      if (diff) deliverPresenceDiff(ch.key, diff);
      return reply(ch, frame, "ok", {});
    }
    return reply(ch, frame, "error", {});
  }

  async function onAccessToken(ch: Channel, frame: Frame) {
    const token = (frame.payload as { access_token?: unknown } | null)?.access_token;
    if (typeof token !== "string" || token.startsWith("sb_") || token === ch.accessToken) return;
    const check = await checkToken(token);
    if (!check.ok) return shutdown(ch, check.message);
    const revoked = ch.isPrivate ? await readRevoked(ch, check.claims) : null;
    if (revoked) return shutdown(ch, revoked);
    ch.accessToken = token;
    ch.claims = check.claims;
    ch.write = {};
    scheduleConfirm(ch);
  }

  async function onMessage(conn: Connection, incoming: Incoming) {
    if (incoming.kind === "user_broadcast_push") {
      const ch = conn.channels.get(incoming.topic);
      if (!ch) return unmatched(conn, incoming.topic, incoming.ref);
      return await onBroadcast(ch, null, incoming);
    }
    const frame: Frame = incoming;
    if (frame.topic === "phoenix" && frame.event === "heartbeat") {
      return send(conn, encodeReply(conn.vsn, "phoenix", null, frame.ref, "ok", {}));
    }
    const ch = conn.channels.get(frame.topic);
    if (frame.event === "phx_join") {
      if (!frame.topic.startsWith("realtime:")) return unmatched(conn, frame.topic, frame.ref);
      if (ch) closeChannel(ch); // a duplicate join replaces the existing channel
      return await join(conn, frame);
    }
    if (!ch) {
      if (frame.event !== "phx_leave") return unmatched(conn, frame.topic, frame.ref);
      return send(conn, encodeReply(conn.vsn, frame.topic, frame.joinRef, frame.ref, "ok", {}));
    }
    switch (frame.event) {
      case "phx_leave":
        // Only a leave for the current join counts (any leave, on a 1.0.0 join without join_ref);
        // any other raced a server close and gets no answer.
        if (ch.joinRef !== null && frame.joinRef !== ch.joinRef) return;
        reply(ch, frame, "ok", {});
        return closeChannel(ch);
      case "broadcast":
        return await onBroadcast(ch, frame, null);
      case "presence":
        return await onPresence(ch, frame);
      case "access_token":
        return await onAccessToken(ch, frame);
      default:
        return; // hosted ignores unexpected client messages
    }
  }

  // --- sockets ------------------------------------------------------------------------------

  const dropConnection = (conn: Connection) => {
    if (conn.closed) return;
    conn.closed = true;
    connections.delete(conn);
    const left = (perIp.get(conn.ip) ?? 1) - 1;
    if (left > 0) perIp.set(conn.ip, left);
    else perIp.delete(conn.ip);
    for (const ch of [...conn.channels.values()]) drop(ch);
  };

  const idleSweep = setInterval(() => {
    const cutoff = Date.now() - limits.idleTimeoutMs;
    for (const conn of connections) if (conn.lastSeen < cutoff) conn.ws.close(1000, "timeout");
  }, Math.min(5_000, limits.idleTimeoutMs));

  async function upgrade(request: Request, url: URL, ip: string): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return jsonError(400, { error: "Expected a WebSocket upgrade" });
    }
    // As Phoenix negotiates: "~> 1.0.0" speaks 1.0.0, "~> 2.0.0" speaks 2.0.0, anything else 403.
    const asked = url.searchParams.get("vsn") ?? "1.0.0";
    const vsn: Vsn | null = /^1\.0\.\d+$/.test(asked)
      ? "1.0.0"
      : /^2\.0\.\d+$/.test(asked)
      ? "2.0.0"
      : null;
    if (!vsn) return new Response(null, { status: 403 });
    const apiToken = request.headers.get("x-api-key") ?? url.searchParams.get("apikey");
    if (apiToken === null) return jsonError(401, { error: "API key is missing" });
    const check = await checkToken(apiToken);
    if (!check.ok) {
      const message = check.code === "expired" ? "Token has expired" : check.message;
      return jsonError(401, { error: message });
    }
    if ((perIp.get(ip) ?? 0) >= limits.connectionsPerIp) {
      return jsonError(429, { error: "Too many connected users" });
    }

    const { socket, response } = Deno.upgradeWebSocket(request, { idleTimeout: 0 });
    socket.binaryType = "arraybuffer";
    const conn: Connection = {
      id: crypto.randomUUID(),
      ws: socket,
      vsn,
      ip,
      apiToken,
      channels: new Map(),
      lastSeen: Date.now(),
      recentJoins: [],
      queue: Promise.resolve(),
      closed: false,
    };
    connections.add(conn);
    perIp.set(ip, (perIp.get(ip) ?? 0) + 1);
    socket.onmessage = (event) => {
      conn.lastSeen = Date.now();
      let incoming: Incoming;
      try {
        incoming = decode(conn.vsn, event.data);
      } catch (err) {
        // hosted logs MalformedWebSocketMessage and carries on
        if (!(err instanceof ProtocolError)) {
          log("warn", "realtime frame failed", { error: String(err) });
        }
        return;
      }
      // Frames are handled in arrival order, one at a time, as a Phoenix socket process does.
      conn.queue = conn.queue.then(() => onMessage(conn, incoming)).catch((err) =>
        log("error", "realtime frame handling failed", { error: String(err) })
      );
    };
    socket.onclose = () => dropConnection(conn);
    socket.onerror = () => dropConnection(conn);
    return response;
  }

  // --- HTTP broadcast -----------------------------------------------------------------------

  async function httpClaims(request: Request): Promise<Claims | null> {
    const token = bearerToken(request.headers.get("authorization") ?? undefined) ||
      request.headers.get("apikey");
    if (!token) return null;
    const check = await checkToken(token);
    return check.ok ? check.claims : null;
  }

  async function mayWrite(
    claims: Claims,
    topic: string,
    cache: Map<string, boolean>,
  ): Promise<boolean> {
    if (!cache.has(topic)) {
      cache.set(
        topic,
        (await writeDecisions(sql, topic, claims, ["broadcast"])).broadcast === true,
      );
    }
    return cache.get(topic)!;
  }

  async function httpBroadcast(request: Request): Promise<Response> {
    const claims = await httpClaims(request);
    if (!claims) return jsonError(401, { message: "Unauthorized" });
    let body: { messages?: unknown };
    try {
      body = await request.json();
    } catch {
      return jsonError(422, { errors: { messages: ["is invalid"] } });
    }
    const messages = body?.messages;
    if (!Array.isArray(messages) || !messages.length) {
      return jsonError(422, { errors: { messages: ["can't be blank"] } });
    }
    const problems: Record<string, string[]>[] = [];
    for (const m of messages as Record<string, unknown>[]) {
      const p: Record<string, string[]> = {};
      for (const field of ["topic", "event"]) {
        if (typeof m?.[field] !== "string" || !m[field]) p[field] = ["can't be blank"];
      }
      if (!m?.payload || typeof m.payload !== "object" || Array.isArray(m.payload)) {
        p.payload = ["can't be blank"];
      } else if (encoder.encode(JSON.stringify(m.payload)).length > limits.payloadBytes) {
        p.payload = ["Payload size exceeds tenant limit"];
      }
      problems.push(p);
    }
    if (problems.some((p) => Object.keys(p).length)) {
      return jsonError(422, { errors: { messages: problems } });
    }
    const allowed = new Map<string, boolean>();
    for (
      const m of messages as {
        topic: string;
        event: string;
        payload: Record<string, unknown>;
        private?: unknown;
        id?: unknown;
      }[]
    ) {
      const isPrivate = flag(m.private);
      if (isPrivate && !(await mayWrite(claims, m.topic, allowed))) continue; // hosted skips silently
      const payload: Record<string, unknown> = {
        type: "broadcast",
        event: m.event,
        payload: m.payload,
      };
      if (typeof m.id === "string") payload.meta = { id: m.id };
      const delivery: Delivery = { type: "json", payload };
      deliver(registryKey(isPrivate, m.topic), delivery);
      void fanOut(registryKey(isPrivate, m.topic), delivery);
    }
    return new Response(null, { status: 202 });
  }

  async function httpBroadcastOne(
    request: Request,
    url: URL,
    topic: string,
    event: string,
  ): Promise<Response> {
    const claims = await httpClaims(request);
    if (!claims) return jsonError(401, { message: "Unauthorized" });
    const isPrivate = flag(url.searchParams.get("private"));
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.length > limits.payloadBytes) {
      return jsonError(413, { error: "Payload size exceeds tenant limit" });
    }
    const binary = (request.headers.get("content-type") ?? "").startsWith(
      "application/octet-stream",
    );
    if (!binary) {
      try {
        JSON.parse(decoder.decode(bytes));
      } catch {
        return jsonError(422, { error: "Payload must be JSON" });
      }
    }
    if (isPrivate && !(await mayWrite(claims, topic, new Map()))) {
      return jsonError(403, { error: "Unauthorized" });
    }
    const delivery: Delivery = {
      type: "user",
      userEvent: event,
      encoding: binary ? "binary" : "json",
      data: bytes,
    };
    deliver(registryKey(isPrivate, topic), delivery);
    void fanOut(registryKey(isPrivate, topic), delivery);
    return new Response(null, { status: 202 });
  }

  return {
    ready: Promise.all([broadcasts.ready, fanoutListen]).then(() => {}),
    handle(request, info) {
      const url = new URL(request.url);
      if (!url.pathname.startsWith(PREFIX + "/") || closed) return null;
      const path = url.pathname.slice(PREFIX.length);
      const ip = (info.remoteAddr as Deno.NetAddr).hostname;
      if (path === "/websocket" || path === "/websocket/") return upgrade(request, url, ip);
      if (request.method === "POST" && path === "/api/broadcast") return httpBroadcast(request);
      const single = /^\/api\/broadcast\/([^/]+)\/events\/([^/]+)$/.exec(path);
      if (request.method === "POST" && single) {
        let topic: string, event: string;
        try {
          topic = decodeURIComponent(single[1]);
          event = decodeURIComponent(single[2]);
        } catch {
          return Promise.resolve(jsonError(400, { error: "Bad percent-encoding in the path" }));
        }
        return httpBroadcastOne(request, url, topic, event);
      }
      return Promise.resolve(jsonError(404, { error: "Not found" }));
    },
    stats() {
      let channels = 0;
      for (const set of subscribers.values()) channels += set.size;
      return { connections: connections.size, channels };
    },
    async close() {
      closed = true;
      clearInterval(idleSweep);
      for (const conn of [...connections]) {
        try {
          conn.ws.close(1001, "server shutting down");
        } catch {
          // already closing
        }
        dropConnection(conn);
      }
      await broadcasts.close();
      await (await fanoutListen.catch(() => null))?.unlisten().catch(() => {});
    },
  };
}

/**
 * The topics Agora's events use (`app.readable_topics`: `conversation:<id>`, `user:<id>`,
 * `vendor:<id>`, `admin`) and its app-wide presence (`presence:<user id>`). Their channels are private only: a public join of one is refused, so a
 * client that forgets `private: true` is told so at once instead of talking on a channel anyone
 * may join under the same name (nothing private is ever sent on the public one, but what the
 * client sends there is public).
 */
export function isReservedTopic(sub: string): boolean {
  return sub === "admin" || /^(conversation|user|vendor|presence):/.test(sub);
}
