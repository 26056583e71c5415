/**
 * Push through Firebase Cloud Messaging's HTTP v1 API with `firebase-admin` (messaging: message
 * validation, the request, FCM's error mapping; the app: access-token caching), configured by
 * `AGORA_FCM_SERVICE_ACCOUNT` and `AGORA_FCM_API_URL`. Without a service account there is no
 * sender and push is off (the delivery rows say `push_not_configured`).
 *
 * Two things firebase-admin 14.5.1 does not take as settings, and how they are done here:
 *
 * - The API's base URL. The messaging client hard-codes `https://fcm.googleapis.com` (a
 *   constant in lib/messaging/messaging.js; no emulator variable as auth and firestore have).
 *   Its documented `httpAgent` app option is used for every request it sends over HTTP/1.1
 *   (`send()`), so for another base URL the agent opens its connections to that host and port
 *   instead (TLS for https, plain TCP for http, e.g. a stand-in on loopback). The path stays
 *   FCM's (`/v1/projects/<id>/messages:send`): the base URL is an origin, checked in settings.
 * - The token endpoint. Its `cert()` credential gets tokens through google-auth-library, whose
 *   JWT grant hard-codes `https://oauth2.googleapis.com/token` and ignores the service account's
 *   `token_uri`. firebase-admin accepts any object implementing its `Credential` interface, so
 *   `ServiceAccountCredential` below signs the same RFC 7523 assertion (RS256, the account's
 *   key, audience `token_uri`) and posts it to `token_uri`; firebase-admin caches the token and
 *   asks again five minutes before it expires.
 *
 * No connection is reused for a send (agents without keep-alive): Deno 2.9.6's `node:http` (and
 * its `fetch` alike) sends a request again, on a new connection, when a kept-alive connection
 * breaks after the request was written, and answers with the second attempt's response, so a
 * message FCM had already received went out twice and was recorded as sent once. On a fresh
 * connection the same break is an error (`socket hang up`, ECONNRESET), which is classified as
 * `outcome_unknown` below and never sent again. The cost is a connection (and a TLS handshake)
 * per push; tests/notifications/delivery-faults checks that a break after the request was read
 * reaches the stand-in exactly once.
 *
 * Retries are the job queue's, not the SDK's: firebase-admin's HTTP client retries 503 answers
 * and connection resets on its own (up to 4 times, sleeping up to 60 s inside one call), which
 * would hide Retry-After from the queue and could send a message twice after a reset. Its retry
 * configuration is not an option, so it is switched off on the messaging client's HTTP client
 * (`retry = null`, an internal of 14.5.1, pinned in package.json; tests/notifications/push
 * fails if it stops working: a 503 must reach the stand-in exactly once per attempt).
 */
import https from "node:https";
import net from "node:net";
import tls from "node:tls";
import { importPKCS8, SignJWT } from "jose";
import { type App, type Credential, deleteApp, initializeApp } from "firebase-admin/app";
import { getMessaging, type Message, type Messaging } from "firebase-admin/messaging";
import type { FcmServiceAccount } from "./settings.ts";

/** What one push says, to one device. */
export interface PushMessage {
  token: string;
  platform: "web" | "ios" | "android";
  title: string;
  body: string;
  /** String values only (FCM's rule). */
  data: Record<string, string>;
  priority: "low" | "normal" | "high" | "critical";
  /** Pushes with the same key replace each other on the device (a conversation's messages). */
  collapseKey: string | null;
}

/**
 * The outcome of one push. `pruned`: FCM refused the token for good (unregistered, invalid), so
 * the device is deleted. `retry`: try again later (429, 5xx), after `retryAfterSeconds` when FCM
 * said. `failed`: not sent and retrying cannot help, or it may have been sent (`outcome_unknown`)
 * and must not be sent again.
 */
export type PushResult =
  | { outcome: "sent"; messageId: string }
  | { outcome: "pruned" | "failed"; code: string; message: string }
  | { outcome: "retry"; code: string; message: string; retryAfterSeconds: number | null };

export interface PushSender {
  send(message: PushMessage): Promise<PushResult>;
  close(): Promise<void>;
}

const FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
const GOOGLE_FCM = "https://fcm.googleapis.com";
/** Pushes carry a preview: FCM refuses messages over 4096 bytes. */
const PUSH_BODY_CHARS = 240;

/**
 * firebase-admin's `Credential` for a service account, getting access tokens from the account's
 * own `token_uri` (see the module comment).
 */
export class ServiceAccountCredential implements Credential {
  #key: Promise<CryptoKey> | null = null;

  constructor(private readonly account: FcmServiceAccount) {}

  async getAccessToken(): Promise<{ access_token: string; expires_in: number }> {
    this.#key ??= importPKCS8(this.account.private_key, "RS256");
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: FCM_SCOPE })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: this.account.private_key_id })
      .setIssuer(this.account.client_email)
      .setAudience(this.account.token_uri)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(await this.#key);
    const response = await fetch(this.account.token_uri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        assertion,
      }),
    });
    const text = await response.text();
    let json: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {};
    try {
      json = JSON.parse(text);
    } catch {
      // reported below
    }
    if (!response.ok || typeof json.access_token !== "string") {
      throw new Error(
        `the token endpoint answered ${response.status}${json.error ? ` (${json.error})` : ""}`,
      );
    }
    return {
      access_token: json.access_token,
      expires_in: typeof json.expires_in === "number" ? json.expires_in : 3600,
    };
  }
}

/**
 * An agent whose connections all go to `base` (an origin), whatever host the request names: how
 * firebase-admin's messaging reaches a base URL other than Google's (see the module comment).
 */
function agentFor(base: string): https.Agent {
  const url = new URL(base);
  const secure = url.protocol === "https:";
  const port = Number(url.port || (secure ? 443 : 80));
  const host = url.hostname;
  class BaseUrlAgent extends https.Agent {
    override createConnection(): net.Socket {
      const socket = secure
        ? tls.connect({ host, port, servername: host })
        : net.connect({ host, port });
      socket.setNoDelay(true);
      return socket;
    }
  }
  // No keep-alive: see the module comment (a reused connection's break is re-sent silently).
  return new BaseUrlAgent({ keepAlive: false, maxSockets: 256 });
}

/** The message as firebase-admin builds and validates it, for the token's platform. */
export function fcmMessage(m: PushMessage): Message {
  const urgent = m.priority === "high" || m.priority === "critical";
  const body = m.body.length > PUSH_BODY_CHARS
    ? `${m.body.slice(0, PUSH_BODY_CHARS - 1)}…`
    : m.body;
  const message: Message = { token: m.token, notification: { title: m.title, body }, data: m.data };
  if (m.platform === "android") {
    message.android = {
      priority: urgent ? "high" : "normal",
      ...(m.collapseKey ? { collapseKey: m.collapseKey } : {}),
    };
  } else if (m.platform === "ios") {
    message.apns = {
      headers: {
        "apns-priority": urgent ? "10" : "5",
        ...(m.collapseKey ? { "apns-collapse-id": m.collapseKey.slice(0, 64) } : {}),
      },
    };
  } else {
    message.webpush = {
      headers: {
        Urgency: urgent ? "high" : m.priority === "low" ? "low" : "normal",
        ...(m.collapseKey ? { Topic: topicOf(m.collapseKey) } : {}),
      },
    };
  }
  return message;
}

/** Web Push topics are at most 32 URL-safe base64 characters. */
function topicOf(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, "").slice(-32);
}

interface FirebaseErrorLike {
  code?: string;
  message?: string;
  httpResponse?: { status: number; headers: Record<string, string | string[]>; data: unknown };
  cause?: { code?: string; cause?: { code?: string } };
}

/** FCM's error code from its answer: the FcmError detail, else the status (e.g. NOT_FOUND). */
function fcmErrorCode(data: unknown): { code: string | null; fields: string[] } {
  const error = (data as { error?: Record<string, unknown> } | null)?.error;
  if (!error || typeof error !== "object") return { code: null, fields: [] };
  const details = Array.isArray(error.details) ? error.details as Record<string, unknown>[] : [];
  const fcm = details.find((d) =>
    d["@type"] === "type.googleapis.com/google.firebase.fcm.v1.FcmError"
  );
  const bad = details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest");
  const fields = Array.isArray(bad?.fieldViolations)
    ? (bad.fieldViolations as { field?: string }[]).map((v) => String(v.field ?? ""))
    : [];
  const code = typeof fcm?.errorCode === "string"
    ? fcm.errorCode
    : typeof error.status === "string"
    ? error.status
    : null;
  return { code, fields };
}

function header(headers: Record<string, string | string[]>, name: string): string | null {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] ?? null : value ?? null;
}

/** Seconds from a Retry-After header (delay-seconds or an HTTP date). */
function retryAfter(value: string | null): number | null {
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/** Network errors raised before the request could reach FCM: safe to send again. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Maps what firebase-admin threw to an outcome (see PushResult). */
export function classifyPushError(err: unknown): PushResult {
  const e = err as FirebaseErrorLike;
  const message = String(e?.message ?? err).slice(0, 500);
  const response = e?.httpResponse;
  if (response) {
    const { code, fields } = fcmErrorCode(response.data);
    const status = response.status;
    const fcmCode = code ?? `HTTP_${status}`;
    if (fcmCode === "UNREGISTERED" || (status === 404 && code === "NOT_FOUND")) {
      return { outcome: "pruned", code: "UNREGISTERED", message };
    }
    if (fcmCode === "INVALID_ARGUMENT" || status === 400) {
      // FCM's answer to a malformed or foreign token; a violation naming another field is about
      // the message, not the token, which then stays.
      const aboutMessage = fields.some((f) => f !== "" && f !== "message.token");
      return {
        outcome: aboutMessage ? "failed" : "pruned",
        code: "INVALID_ARGUMENT",
        message,
      };
    }
    if (
      status === 429 || status >= 500 || fcmCode === "QUOTA_EXCEEDED" || fcmCode === "UNAVAILABLE"
    ) {
      return {
        outcome: "retry",
        code: fcmCode,
        message,
        retryAfterSeconds: retryAfter(header(response.headers, "retry-after")),
      };
    }
    if (status === 401) {
      // Our access token was refused (expired early, or revoked): a new one may help.
      return { outcome: "retry", code: fcmCode, message, retryAfterSeconds: null };
    }
    return { outcome: "failed", code: fcmCode, message };
  }
  const network = e?.cause?.code ?? e?.cause?.cause?.code;
  if (e?.code === "app/network-error" || e?.code === "app/network-timeout") {
    if (network && NOT_SENT.has(network)) {
      return { outcome: "retry", code: network, message, retryAfterSeconds: null };
    }
    // The request may have reached FCM before the connection broke: never send it again.
    return { outcome: "failed", code: "outcome_unknown", message };
  }
  if (e?.code?.startsWith("messaging/")) {
    // Refused by firebase-admin's own validation, before sending.
    return { outcome: "failed", code: "invalid_message", message };
  }
  // Getting an access token failed (nothing was sent), or something unexpected before sending.
  return { outcome: "retry", code: "credential_error", message, retryAfterSeconds: null };
}

let apps = 0;

/** The FCM sender for these settings, or null when push is not configured. */
export function createPushSender(
  fcm: { serviceAccount: FcmServiceAccount; apiUrl: string } | undefined,
): PushSender | null {
  if (!fcm) return null;
  const httpAgent = fcm.apiUrl === GOOGLE_FCM
    ? new https.Agent({ keepAlive: false, maxSockets: 256 })
    : agentFor(fcm.apiUrl);
  const app: App = initializeApp({
    credential: new ServiceAccountCredential(fcm.serviceAccount),
    projectId: fcm.serviceAccount.project_id,
    httpAgent,
  }, `agora-push-${++apps}-${crypto.randomUUID().slice(0, 8)}`);
  const messaging: Messaging = getMessaging(app);
  // No retries inside firebase-admin: the job queue retries (see the module comment).
  const internal = messaging as unknown as {
    messagingRequestHandler?: { httpClient?: { retry?: unknown } };
  };
  if (!internal.messagingRequestHandler?.httpClient) {
    throw new Error("firebase-admin changed: its messaging HTTP client was not found");
  }
  internal.messagingRequestHandler.httpClient.retry = null;
  return {
    async send(message) {
      try {
        const messageId = await messaging.send(fcmMessage(message));
        return { outcome: "sent", messageId };
      } catch (err) {
        return classifyPushError(err);
      }
    },
    async close() {
      httpAgent.destroy();
      await deleteApp(app);
    },
  };
}
