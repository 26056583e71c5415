/**
 * A stand-in for Firebase Cloud Messaging at its network boundary, for tests and benchmarks
 * only: Google's OAuth 2.0 token endpoint (the JWT-bearer grant a service account uses) and the
 * HTTP v1 send endpoint, on loopback. It answers as they do:
 *
 * - POST /token (the service account's `token_uri`): verifies the RS256 assertion against the
 *   public half of the key it generated (issuer = client_email, audience = token_uri, a
 *   messaging scope, at most an hour), then issues an opaque access token (`expires_in` 3599).
 *   A bad assertion is 400 `invalid_grant`.
 * - POST /v1/projects/<id>/messages:send: only a bearer token it issued and has not expired
 *   (else 401 UNAUTHENTICATED); the project of the account (else 403 SENDER_ID_MISMATCH); a
 *   message shaped as FCM requires (exactly one target, string data values, no reserved data
 *   keys, known fields, at most 4096 bytes; else 400 INVALID_ARGUMENT with a google.rpc.BadRequest
 *   naming the field). A token that does not look like a registration token is 400
 *   INVALID_ARGUMENT (FcmError INVALID_ARGUMENT), one the test unregistered is 404 NOT_FOUND
 *   (FcmError UNREGISTERED), and failures a test scripts are 429 RESOURCE_EXHAUSTED (FcmError
 *   QUOTA_EXCEEDED, with Retry-After) or 503 UNAVAILABLE. Success is 200 `{ name:
 *   "projects/<id>/messages/<n>" }`, and the message is recorded.
 *
 * Error bodies follow FCM's documented shape: `{ error: { code, message, status, details: [
 * { "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode }, ... ] } }`.
 *
 * It serves HTTP/1.1 itself on a TCP listener (keep-alive, Content-Length bodies), not through
 * `Deno.serve`, so a test can break a connection where a network would (`faultNext`): `cut`
 * closes it after the request's headers and part of its body (the message never arrives
 * whole), `drop` after the whole request was read and the message accepted, before answering,
 * and `hang` reads the request and never answers until `releaseHung()` (or `close()`) breaks the
 * connection. `requests` counts every send request that arrived, whole or not, whatever the
 * answer: what a test compares with the messages it meant to send.
 */
import { jwtVerify } from "jose";

export interface AcceptedMessage {
  name: string;
  token: string;
  message: Record<string, unknown>;
  at: number;
}

type Scripted =
  | { status: 429; retryAfter: number }
  | { status: 503; retryAfter?: number }
  | { status: 500 };

/** A broken connection, where a network would break it (see the module comment). */
export type ConnectionFault = "cut" | "drop" | "hang";

export interface FcmStandIn {
  /** The API base URL (an origin): AGORA_FCM_API_URL. */
  url: string;
  projectId: string;
  /** The service account's JSON with this stand-in's token_uri: AGORA_FCM_SERVICE_ACCOUNT. */
  serviceAccountJson: string;
  /** Every message accepted, in order. */
  accepted: AcceptedMessage[];
  /** Send requests per registration token, whatever the answer. */
  attempts: Map<string, number>;
  /** Access tokens issued so far. */
  tokensIssued: number;
  /** Send requests that arrived (whole or cut), whatever the answer. */
  requests: number;
  /** Send requests held by a `hang` fault right now. */
  hung: number;
  /** The next `times` send requests, to any token, meet this fault. */
  faultNext(fault: ConnectionFault, times?: number): void;
  /** Breaks the connections of the requests held by `hang`, without an answer. */
  releaseHung(): void;
  /** From now on, sends to this token answer 404 UNREGISTERED. */
  unregister(token: string): void;
  /** The next `times` sends to `token` (or to any token, with "*") answer this failure. */
  failNext(token: string | "*", times: number, failure: Scripted): void;
  /** Messages accepted for one token. */
  acceptedFor(token: string): AcceptedMessage[];
  reset(): void;
  close(): Promise<void>;
}

const SCOPES = [
  "https://www.googleapis.com/auth/firebase.messaging",
  "https://www.googleapis.com/auth/cloud-platform",
];
const MESSAGE_FIELDS = new Set([
  "name",
  "data",
  "notification",
  "android",
  "webpush",
  "apns",
  "fcm_options",
  "fcmOptions",
  "token",
  "topic",
  "condition",
]);
/** A registration token as FCM hands them out: long, URL-safe characters and colons. */
const TOKEN_SHAPE = /^[A-Za-z0-9_\-:.]{8,4096}$/;

function pem(der: ArrayBuffer, label: string): string {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
}

function fcmError(
  status: number,
  grpc: string,
  message: string,
  errorCode: string | null,
  field?: string,
  headers: Record<string, string> = {},
): Response {
  const details: Record<string, unknown>[] = [];
  if (errorCode) {
    details.push({ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode });
  }
  if (field) {
    details.push({
      "@type": "type.googleapis.com/google.rpc.BadRequest",
      fieldViolations: [{ field, description: message }],
    });
  }
  return Response.json(
    { error: { code: status, message, status: grpc, ...(details.length ? { details } : {}) } },
    { status, headers },
  );
}

/** The first problem FCM would report with a message, as [field, description], or null. */
function invalidMessage(message: unknown): [string, string] | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return ["message", "Recipient of the message is not set."];
  }
  const m = message as Record<string, unknown>;
  for (const key of Object.keys(m)) {
    if (!MESSAGE_FIELDS.has(key)) {
      return ["message", `Invalid JSON payload received. Unknown name "${key}" at 'message'.`];
    }
  }
  const targets = ["token", "topic", "condition"].filter((k) => m[k] !== undefined);
  if (targets.length !== 1) return ["message", "Recipient of the message is not set."];
  if (m.token !== undefined && typeof m.token !== "string") {
    return ["message.token", "Invalid value at 'message.token' (TYPE_STRING)"];
  }
  if (m.data !== undefined) {
    if (typeof m.data !== "object" || m.data === null || Array.isArray(m.data)) {
      return ["message.data", "Invalid value at 'message.data'"];
    }
    let i = 0;
    for (const [key, value] of Object.entries(m.data)) {
      if (typeof value !== "string") {
        return [
          `message.data[${i}].value`,
          `Invalid value at 'message.data[${i}].value' (TYPE_STRING)`,
        ];
      }
      if (
        key === "from" || key.startsWith("google.") || key.startsWith("gcm.") ||
        key === "message_type"
      ) {
        return ["message.data", `Invalid data key: ${key}`];
      }
      i++;
    }
  }
  if (m.notification !== undefined) {
    const n = m.notification as Record<string, unknown>;
    for (const key of ["title", "body", "image"]) {
      if (n[key] !== undefined && typeof n[key] !== "string") {
        return [`message.notification.${key}`, `Invalid value at 'message.notification.${key}'`];
      }
    }
  }
  if (m.android !== undefined) {
    const a = m.android as Record<string, unknown>;
    if (a.priority !== undefined && !/^(normal|high)$/i.test(String(a.priority))) {
      return ["message.android.priority", "Invalid value at 'message.android.priority'"];
    }
  }
  for (const block of ["apns", "webpush"] as const) {
    const headers = (m[block] as { headers?: Record<string, unknown> } | undefined)?.headers;
    if (headers && Object.values(headers).some((v) => typeof v !== "string")) {
      return [`message.${block}.headers`, `Invalid value at 'message.${block}.headers'`];
    }
  }
  if (new TextEncoder().encode(JSON.stringify(m)).length > 4096) {
    return ["message", "Message is too big"];
  }
  return null;
}

/** What a send handler answers to break the connection instead of answering. */
const DROP = Symbol("drop");

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

/** Reads an HTTP/1.1 request's head and body from a connection, keeping what comes after. */
class ByteReader {
  #buffer: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  readonly #chunk = new Uint8Array(64 * 1024);

  constructor(private readonly conn: Deno.Conn) {}

  async #fill(): Promise<boolean> {
    const n = await this.conn.read(this.#chunk);
    if (n === null) return false;
    this.#buffer = concat(this.#buffer, this.#chunk.subarray(0, n));
    return true;
  }

  /** The head (request line and headers) without the blank line, or null at the end. */
  async head(): Promise<string | null> {
    for (;;) {
      const end = indexOfBlankLine(this.#buffer);
      if (end >= 0) {
        const head = new TextDecoder().decode(this.#buffer.subarray(0, end));
        this.#buffer = this.#buffer.subarray(end + 4);
        return head;
      }
      if (!await this.#fill()) return null;
    }
  }

  /** The next `length` bytes, or null when the connection ended first. */
  async body(length: number): Promise<Uint8Array<ArrayBuffer> | null> {
    while (this.#buffer.length < length) {
      if (!await this.#fill()) return null;
    }
    const body = this.#buffer.slice(0, length);
    this.#buffer = this.#buffer.subarray(length);
    return body;
  }
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

export async function startFcmStandIn(projectId = "agora-test"): Promise<FcmStandIn> {
  const keys = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const privateKey = pem(await crypto.subtle.exportKey("pkcs8", keys.privateKey), "PRIVATE KEY");
  const clientEmail = `push@${projectId}.iam.gserviceaccount.com`;
  const issued = new Map<string, number>();
  const unregistered = new Set<string>();
  const scripted = new Map<string, { times: number; failure: Scripted }[]>();
  let counter = 0;
  let tokenUri = "";
  const faults: ConnectionFault[] = [];
  const hung: (() => void)[] = [];
  const connections = new Set<Deno.TcpConn>();

  const standIn: FcmStandIn = {
    url: "",
    projectId,
    serviceAccountJson: "",
    accepted: [],
    attempts: new Map(),
    tokensIssued: 0,
    requests: 0,
    hung: 0,
    faultNext(fault, times = 1) {
      for (let i = 0; i < times; i++) faults.push(fault);
    },
    releaseHung() {
      for (const release of hung.splice(0)) release();
      standIn.hung = 0;
    },
    unregister: (token) => void unregistered.add(token),
    failNext(token, times, failure) {
      const list = scripted.get(token) ?? [];
      list.push({ times, failure });
      scripted.set(token, list);
    },
    acceptedFor: (token) => standIn.accepted.filter((a) => a.token === token),
    reset() {
      standIn.accepted.length = 0;
      standIn.attempts.clear();
      standIn.requests = 0;
      faults.length = 0;
      unregistered.clear();
      scripted.clear();
    },
    async close() {
      standIn.releaseHung();
      listener.close();
      for (const conn of connections) {
        try {
          conn.close();
        } catch {
          // already closed
        }
      }
      await serving;
    },
  };

  function takeScripted(token: string): Scripted | null {
    for (const key of [token, "*"]) {
      const list = scripted.get(key);
      const next = list?.[0];
      if (next) {
        if (--next.times <= 0) list!.shift();
        return next.failure;
      }
    }
    return null;
  }

  async function token(request: Request): Promise<Response> {
    const form = new URLSearchParams(await request.text());
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return Response.json({
        error: "unsupported_grant_type",
        error_description: "Invalid grant_type",
      }, {
        status: 400,
      });
    }
    try {
      const { payload } = await jwtVerify(form.get("assertion") ?? "", keys.publicKey, {
        issuer: clientEmail,
        audience: tokenUri,
        algorithms: ["RS256"],
      });
      const scopes = String(payload.scope ?? "").split(" ");
      if (!scopes.some((s) => SCOPES.includes(s))) {
        return Response.json({ error: "invalid_scope", error_description: "Invalid OAuth scope" }, {
          status: 400,
        });
      }
      if (
        typeof payload.iat !== "number" || typeof payload.exp !== "number" ||
        payload.exp - payload.iat > 3600
      ) {
        return Response.json({
          error: "invalid_grant",
          error_description: "Invalid JWT: exp too far",
        }, {
          status: 400,
        });
      }
    } catch {
      return Response.json(
        { error: "invalid_grant", error_description: "Invalid JWT Signature." },
        {
          status: 400,
        },
      );
    }
    const accessToken = `ya29.standin-${crypto.randomUUID()}`;
    issued.set(accessToken, Date.now() + 3599_000);
    standIn.tokensIssued++;
    return Response.json({ access_token: accessToken, expires_in: 3599, token_type: "Bearer" });
  }

  async function send(request: Request, project: string, fault: ConnectionFault | null) {
    const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const expires = bearer ? issued.get(bearer) : undefined;
    if (!expires || expires < Date.now()) {
      return fcmError(
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
        null,
      );
    }
    if (project !== projectId) {
      return fcmError(403, "PERMISSION_DENIED", "SenderId mismatch", "SENDER_ID_MISMATCH");
    }
    let body: { message?: unknown; validate_only?: unknown };
    try {
      body = await request.json();
    } catch {
      return fcmError(400, "INVALID_ARGUMENT", "Invalid JSON payload received.", null);
    }
    const problem = invalidMessage(body.message);
    const message = body.message as Record<string, unknown>;
    const target = typeof message?.token === "string" ? message.token : "";
    if (target) standIn.attempts.set(target, (standIn.attempts.get(target) ?? 0) + 1);
    if (fault === "hang") {
      // Read, never answered: the connection breaks when the test releases it.
      standIn.hung++;
      await new Promise<void>((resolve) => hung.push(resolve));
      return DROP;
    }
    if (problem) {
      return fcmError(400, "INVALID_ARGUMENT", problem[1], "INVALID_ARGUMENT", problem[0]);
    }
    if (target && !TOKEN_SHAPE.test(target)) {
      return fcmError(
        400,
        "INVALID_ARGUMENT",
        "The registration token is not a valid FCM registration token",
        "INVALID_ARGUMENT",
      );
    }
    if (unregistered.has(target)) {
      return fcmError(404, "NOT_FOUND", "Requested entity was not found.", "UNREGISTERED");
    }
    const failure = takeScripted(target);
    if (failure?.status === 429) {
      return fcmError(
        429,
        "RESOURCE_EXHAUSTED",
        "Quota exceeded for quota metric 'Send requests' of service 'fcm.googleapis.com'.",
        "QUOTA_EXCEEDED",
        undefined,
        { "retry-after": String(failure.retryAfter) },
      );
    }
    if (failure?.status === 503) {
      return fcmError(
        503,
        "UNAVAILABLE",
        "The service is currently unavailable.",
        "UNAVAILABLE",
        undefined,
        failure.retryAfter !== undefined ? { "retry-after": String(failure.retryAfter) } : {},
      );
    }
    if (failure?.status === 500) {
      return fcmError(500, "INTERNAL", "Internal error encountered.", "INTERNAL");
    }
    if (body.validate_only === true) {
      return Response.json({ name: `projects/${projectId}/messages/fake_message_id` });
    }
    const name = `projects/${projectId}/messages/${++counter}`;
    standIn.accepted.push({ name, token: target, message, at: Date.now() });
    // FCM has the message; the answer is lost with the connection.
    if (fault === "drop") return DROP;
    return Response.json({ name });
  }

  /** One connection: requests in turn (keep-alive), each answered or broken by its fault. */
  async function serveConnection(conn: Deno.TcpConn): Promise<void> {
    connections.add(conn);
    const reader = new ByteReader(conn);
    try {
      for (;;) {
        const head = await reader.head();
        if (head === null) return;
        const [requestLine, ...lines] = head.split("\r\n");
        const [method, target] = requestLine.split(" ");
        const headers = new Headers();
        for (const line of lines) {
          const colon = line.indexOf(":");
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        const length = Number(headers.get("content-length") ?? 0);
        const isSend = method === "POST" && SEND_PATH.test(target.split("?")[0]);
        const fault = isSend ? faults.shift() ?? null : null;
        if (isSend) standIn.requests++;
        if (fault === "cut") {
          // Part of the body, then the connection breaks: the message never arrives whole.
          await reader.body(Math.min(length, 16));
          return;
        }
        const body = await reader.body(length);
        if (body === null) return;
        const request = new Request(`http://127.0.0.1:${port}${target}`, {
          method,
          headers,
          body: method === "GET" || method === "HEAD" ? undefined : body,
        });
        const response = await route(request, fault);
        if (response === DROP) return;
        const payload = new Uint8Array(await response.arrayBuffer());
        let out = `HTTP/1.1 ${response.status} ${response.statusText || "Status"}\r\n`;
        response.headers.forEach((value, name) => {
          if (name !== "content-length") out += `${name}: ${value}\r\n`;
        });
        const close = headers.get("connection")?.toLowerCase() === "close";
        out += `content-length: ${payload.length}\r\nconnection: ${
          close ? "close" : "keep-alive"
        }\r\n\r\n`;
        await writeAll(conn, concat(new TextEncoder().encode(out), payload));
        if (close) return;
      }
    } catch {
      // the peer went away, or the stand-in is closing
    } finally {
      connections.delete(conn);
      try {
        conn.close();
      } catch {
        // already closed
      }
    }
  }

  const SEND_PATH = /^\/v1\/projects\/([^/]+)\/messages:send$/;

  function route(request: Request, fault: ConnectionFault | null): Promise<Response | typeof DROP> {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/token") return token(request);
    // Not FCM's: how a benchmark running the stand-in in another process reads its counts.
    if (request.method === "GET" && path === "/_stand-in/stats") {
      return Promise.resolve(Response.json({
        accepted: standIn.accepted.length,
        distinctTokens: new Set(standIn.accepted.map((a) => a.token)).size,
        tokensIssued: standIn.tokensIssued,
        requests: standIn.requests,
      }));
    }
    const match = SEND_PATH.exec(path);
    if (request.method === "POST" && match) {
      return send(request, decodeURIComponent(match[1]), fault);
    }
    return Promise.resolve(fcmError(404, "NOT_FOUND", "Not found", null));
  }

  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const serving = (async () => {
    const open: Promise<void>[] = [];
    try {
      for await (const conn of listener) open.push(serveConnection(conn));
    } catch {
      // the listener was closed
    }
    await Promise.allSettled(open);
  })();
  standIn.url = `http://127.0.0.1:${port}`;
  tokenUri = `${standIn.url}/token`;
  standIn.serviceAccountJson = JSON.stringify({
    type: "service_account",
    project_id: projectId,
    private_key_id: crypto.randomUUID().replaceAll("-", ""),
    private_key: privateKey,
    client_email: clientEmail,
    client_id: "1000000000000000",
    token_uri: tokenUri,
  });
  return standIn;
}
