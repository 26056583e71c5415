/**
 * The Supabase Realtime wire protocol (Phoenix channels), both versions:
 *
 * - 1.0.0: every frame is a JSON object `{ topic, event, payload, ref }` (clients may add
 *   `join_ref`; the server never sends it, as Phoenix's V1 serializer does).
 * - 2.0.0: text frames are JSON arrays `[join_ref, ref, topic, event, payload]`; binary frames
 *   carry broadcasts. A client's broadcast arrives as kind 3 ("user broadcast push"); the server
 *   sends broadcasts as kind 4 ("user broadcast"), each field length-prefixed in one byte.
 *
 *   kind 3: [3][join_ref len][ref len][topic len][event len][meta len][encoding]
 *           join_ref ref topic event meta payload...
 *   kind 4: [4][topic len][event len][meta len][encoding] topic event meta payload...
 *   encoding: 0 binary, 1 JSON; meta is JSON (or empty).
 *
 * Written from the behaviour of supabase/realtime's V2 serializer and realtime-js's serializer.
 */

export type Vsn = "1.0.0" | "2.0.0";

/** A decoded JSON frame (either version). */
export interface Frame {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: unknown;
}

/** A client broadcast that arrived as a kind-3 binary frame. */
export interface BinaryBroadcast {
  kind: "user_broadcast_push";
  joinRef: string | null;
  ref: string | null;
  topic: string;
  userEvent: string;
  encoding: "json" | "binary";
  data: Uint8Array;
  metadata: Record<string, unknown>;
}

export type Incoming = ({ kind: "frame" } & Frame) | BinaryBroadcast;

export class ProtocolError extends Error {}

const KIND_USER_BROADCAST_PUSH = 3;
const KIND_USER_BROADCAST = 4;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

const asRef = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function decode(vsn: Vsn, data: string | ArrayBuffer | Uint8Array): Incoming {
  if (typeof data !== "string") {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    if (vsn !== "2.0.0") throw new ProtocolError("binary frames need protocol 2.0.0");
    return decodeBinary(bytes);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new ProtocolError("malformed JSON");
  }
  if (vsn === "2.0.0") {
    if (!Array.isArray(parsed) || parsed.length < 5) throw new ProtocolError("expected V2 array");
    const [joinRef, ref, topic, event, payload] = parsed;
    if (typeof topic !== "string" || typeof event !== "string") {
      throw new ProtocolError("bad topic or event");
    }
    return { kind: "frame", joinRef: asRef(joinRef), ref: asRef(ref), topic, event, payload };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ProtocolError("expected V1 object");
  }
  const m = parsed as Record<string, unknown>;
  if (typeof m.topic !== "string" || typeof m.event !== "string") {
    throw new ProtocolError("bad topic or event");
  }
  return {
    kind: "frame",
    joinRef: asRef(m.join_ref),
    ref: asRef(m.ref),
    topic: m.topic,
    event: m.event,
    payload: m.payload,
  };
}

function decodeBinary(bytes: Uint8Array): BinaryBroadcast {
  if (bytes[0] !== KIND_USER_BROADCAST_PUSH || bytes.length < 7) {
    throw new ProtocolError("unknown binary frame");
  }
  const [joinRefLen, refLen, topicLen, eventLen, metaLen, encoding] = bytes.subarray(1, 7);
  let offset = 7;
  const take = (n: number) => {
    if (offset + n > bytes.length) throw new ProtocolError("truncated binary frame");
    const part = bytes.subarray(offset, offset + n);
    offset += n;
    return part;
  };
  const joinRef = decoder.decode(take(joinRefLen));
  const ref = decoder.decode(take(refLen));
  const topic = decoder.decode(take(topicLen));
  const userEvent = decoder.decode(take(eventLen));
  const metaText = decoder.decode(take(metaLen));
  let metadata: Record<string, unknown> = {};
  if (metaLen > 0) {
    try {
      metadata = JSON.parse(metaText);
    } catch {
      throw new ProtocolError("malformed metadata");
    }
  }
  return {
    kind: "user_broadcast_push",
    joinRef: joinRef || null,
    ref: ref || null,
    topic,
    userEvent,
    encoding: encoding === 0 ? "binary" : "json",
    data: bytes.slice(offset),
    metadata,
  };
}

/** A server push or broadcast as a text frame. */
export function encodePush(
  vsn: Vsn,
  topic: string,
  event: string,
  payload: unknown,
  joinRef: string | null = null,
): string {
  return vsn === "2.0.0"
    ? JSON.stringify([joinRef, null, topic, event, payload])
    : JSON.stringify({ topic, event, payload, ref: null });
}

/** A reply (`phx_reply`) to the frame with `ref`. */
export function encodeReply(
  vsn: Vsn,
  topic: string,
  joinRef: string | null,
  ref: string | null,
  status: "ok" | "error",
  response: unknown,
): string {
  const payload = { status, response };
  return vsn === "2.0.0"
    ? JSON.stringify([joinRef, ref, topic, "phx_reply", payload])
    : JSON.stringify({ topic, event: "phx_reply", payload, ref });
}

/** `phx_close` for a channel (its join_ref doubles as the ref, as Phoenix sends it). */
export function encodeClose(vsn: Vsn, topic: string, joinRef: string | null): string {
  return vsn === "2.0.0"
    ? JSON.stringify([joinRef, joinRef, topic, "phx_close", {}])
    : JSON.stringify({ topic, event: "phx_close", payload: {}, ref: joinRef });
}

/**
 * Whether a kind-4 frame can carry these: its header gives topic, event and metadata one byte of
 * length each (255 bytes at most). A database or HTTP broadcast can name longer ones.
 */
export function fitsUserBroadcast(
  topic: string,
  userEvent: string,
  metadata?: Record<string, unknown> | null,
): boolean {
  const m = metadata && Object.keys(metadata).length ? JSON.stringify(metadata) : "";
  return [topic, userEvent, m].every((text) => encoder.encode(text).length <= 255);
}

function checkedBytes(text: string, what: string): Uint8Array {
  const bytes = encoder.encode(text);
  if (bytes.length > 255) throw new ProtocolError(`${what} is longer than 255 bytes`);
  return bytes;
}

/** A kind-4 binary broadcast (protocol 2.0.0 only). */
export function encodeUserBroadcast(
  topic: string,
  userEvent: string,
  encoding: "json" | "binary",
  data: Uint8Array,
  metadata?: Record<string, unknown> | null,
): Uint8Array {
  const t = checkedBytes(topic, "topic");
  const e = checkedBytes(userEvent, "event");
  const m = metadata && Object.keys(metadata).length
    ? checkedBytes(JSON.stringify(metadata), "metadata")
    : new Uint8Array(0);
  const out = new Uint8Array(5 + t.length + e.length + m.length + data.length);
  out.set([KIND_USER_BROADCAST, t.length, e.length, m.length, encoding === "json" ? 1 : 0], 0);
  let offset = 5;
  for (const part of [t, e, m, data]) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
