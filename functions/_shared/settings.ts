/**
 * Process settings: secrets and deployment facts read once from the environment. Everything an
 * admin may change at run time lives in the versioned system configuration instead
 * (see config-document.ts). Every variable and its default is listed in .env.example and docs/configuration.md.
 */
import { z } from "zod";
import type { JWK } from "jose";
import type { SigningKeys } from "./jwt.ts";

const limit = z.object({
  limit: z.number().int().positive(),
  windowSeconds: z.number().int().positive(),
});
export type RateLimitRule = z.infer<typeof limit>;

const commaList = z.string().transform((value) =>
  value.split(",").map((item) => item.trim()).filter((item) => item.length > 0)
);

const envSchema = z.object({
  AGORA_DB_URL: z.string().optional(),
  SUPABASE_DB_URL: z.string().optional(),
  AGORA_DB_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  AGORA_DB_POOL_MODE: z.enum(["session", "transaction"]).optional(),
  AGORA_DB_SESSION_URL: z.string().optional(),
  AGORA_JWT_SECRET: z.string().min(32, "AGORA_JWT_SECRET must have at least 32 characters"),
  AGORA_JWT_SIGNING_KEY: z.string().optional(),
  AGORA_JWT_PREVIOUS_KEYS: z.string().optional(),
  AGORA_ANON_KEY: z.string().default(""),
  AGORA_CSRF_SECRET: z.string().min(32, "AGORA_CSRF_SECRET must have at least 32 characters"),
  AGORA_REFRESH_SECRET: z.string().min(32, "AGORA_REFRESH_SECRET must have at least 32 characters"),
  AGORA_SITE_URL: z.url().default("http://localhost:54321"),
  AGORA_ALLOWED_ORIGINS: commaList.default([]),
  AGORA_ACCESS_TOKEN_TTL: z.coerce.number().int().min(30).max(86_400).default(900),
  AGORA_REALTIME_TOKEN_TTL: z.coerce.number().int().min(30).max(900).default(120),
  AGORA_SESSION_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  AGORA_REFRESH_GRACE_SECONDS: z.coerce.number().int().min(0).max(120).default(10),
  AGORA_MAGIC_LINK_TTL: z.coerce.number().int().min(60).max(3_600).default(900),
  AGORA_SMTP_URL: z.string().optional(),
  AGORA_MAIL_FROM: z.string().default("Agora <no-reply@localhost>"),
  AGORA_LOCAL_MODE: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
  AGORA_TRUSTED_PROXY_HEADER: z.string().toLowerCase().optional(),
  AGORA_MAX_BODY_BYTES: z.coerce.number().int().min(1_024).default(1_048_576),
  AGORA_LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default("info"),
  AGORA_STORAGE: z.enum(["local", "supabase"]).default("local"),
  AGORA_STORAGE_DIR: z.string().default(".local/storage"),
  AGORA_STORAGE_BUCKET: z.string().default("attachments"),
  SUPABASE_URL: z.string().optional(),
  SUPABASE_SERVICE_ROLE_KEY: z.string().optional(),
  AGORA_ATTACHMENT_TYPES: commaList.default([
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "application/pdf",
    "text/plain",
  ]),
  AGORA_TYPING_THROTTLE_MS: z.coerce.number().int().min(250).max(60_000).default(2_000),
  AGORA_SSE_HEARTBEAT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  AGORA_RATE_SIGNIN_IP: z.string().default("20/600"),
  AGORA_RATE_SIGNIN_EMAIL: z.string().default("5/600"),
  AGORA_RATE_VERIFY_IP: z.string().default("30/600"),
  AGORA_RATE_REFRESH_SESSION: z.string().default("60/600"),
  AGORA_RATE_ADMIN_USER: z.string().default("600/60"),
  AGORA_RATE_REPORTS_USER: z.string().default("10/3600"),
  AGORA_FCM_SERVICE_ACCOUNT: z.string().optional(),
  AGORA_FCM_API_URL: z.url({ protocol: /^https?$/ }).default("https://fcm.googleapis.com"),
  AGORA_PUSH_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(50),
  AGORA_RATE_NONCE_IP: z.string().default("60/600"),
  AGORA_RATE_SIGNIN_WALLET: z.string().default("10/600"),
  AGORA_GOOGLE_CLIENT_ID: z.string().optional(),
  AGORA_GOOGLE_CLIENT_SECRET: z.string().optional(),
  AGORA_GOOGLE_ISSUER: z.url().default("https://accounts.google.com"),
  AGORA_APPLE_CLIENT_ID: z.string().optional(),
  AGORA_APPLE_TEAM_ID: z.string().optional(),
  AGORA_APPLE_KEY_ID: z.string().optional(),
  AGORA_APPLE_PRIVATE_KEY: z.string().optional(),
  AGORA_APPLE_ISSUER: z.url().default("https://appleid.apple.com"),
  AGORA_RPC_URL: z.union([z.literal(""), z.url()]).optional(),
  AGORA_STRIPE_SECRET_KEY: z.string().optional(),
  AGORA_STRIPE_WEBHOOK_SECRET: z.string().optional(),
  AGORA_STRIPE_API_URL: z.url().default("https://api.stripe.com"),
  AGORA_WALLET_MASTER_KEY: z.string().optional(),
  AGORA_WALLET_PREVIOUS_MASTER_KEYS: commaList.default([]),
});

/**
 * A wallet master key: 32 bytes written as 64 hex digits (optionally 0x-prefixed) or as base64 /
 * base64url (what `npm start` generates). Throws naming the variable otherwise.
 */
export function parseMasterKey(name: string, text: string): Uint8Array {
  const value = text.trim();
  let bytes: Uint8Array | null = null;
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(value)) {
    const hex = value.replace(/^0x/, "");
    bytes = new Uint8Array(32);
    for (let i = 0; i < 32; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  } else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) {
    const binary = atob(value.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "") + "=");
    bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }
  if (!bytes || bytes.length !== 32) {
    throw new Error(`${name} must be 32 bytes, as 64 hex digits or base64url (43 characters)`);
  }
  return bytes;
}

/**
 * The Firebase service account (its JSON, as Google hands it out): what push needs of it. The
 * access tokens come from its `token_uri` (Google's unless a stand-in is named there).
 */
const serviceAccount = z.object({
  project_id: z.string().min(1),
  client_email: z.string().min(3),
  private_key: z.string().includes("PRIVATE KEY"),
  private_key_id: z.string().optional(),
  token_uri: z.url({ protocol: /^https?$/ }).default("https://oauth2.googleapis.com/token"),
});
export type FcmServiceAccount = z.infer<typeof serviceAccount>;

/** Parses AGORA_FCM_SERVICE_ACCOUNT; throws naming the variable (never echoing the key). */
function parseServiceAccount(text: string | undefined): FcmServiceAccount | undefined {
  if (!text || !text.trim()) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error("invalid settings: AGORA_FCM_SERVICE_ACCOUNT is not JSON");
  }
  const parsed = serviceAccount.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join(".")).join(", ");
    throw new Error(`invalid settings: AGORA_FCM_SERVICE_ACCOUNT lacks or has bad ${fields}`);
  }
  return parsed.data;
}

/** Supavisor's transaction-mode port: a pool URL on it is taken as `AGORA_DB_POOL_MODE=transaction`. */
const SUPAVISOR_TRANSACTION_PORT = "6543";

/** The port of a Postgres URL, or "" when it names none or does not parse. */
function urlPort(url: string): string {
  try {
    return new URL(url).port;
  } catch {
    return "";
  }
}

/** An EC P-256 JWK's fields; `d` (the private part) only where `needPrivate`. */
function ecJwk(name: string, value: unknown, needPrivate: boolean): JWK {
  const key = value as Record<string, unknown> | null;
  const text = (field: string) => typeof key?.[field] === "string" && key[field] !== "";
  if (
    !key || typeof key !== "object" || key.kty !== "EC" || key.crv !== "P-256" || !text("x") ||
    !text("y") || (needPrivate && !text("d")) || (key.alg !== undefined && key.alg !== "ES256") ||
    (key.kid !== undefined && !text("kid"))
  ) {
    throw new Error(
      `invalid settings: ${name} must be ${needPrivate ? "a private" : "public"} EC P-256 ` +
        "JWK (kty EC, crv P-256, x, y" + (needPrivate ? ", d" : "") + "; alg ES256 if given)",
    );
  }
  const { kty, crv, x, y, d, kid } = key as Record<string, string>;
  return needPrivate ? { kty, crv, x, y, d, kid } : { kty, crv, x, y, kid };
}

/**
 * AGORA_JWT_SIGNING_KEY (a private JWK, as `supabase gen signing-key --algorithm ES256` writes
 * it: one object, or a one-key array) and AGORA_JWT_PREVIOUS_KEYS (JWKs: an array, a JWKS
 * `{ "keys": [...] }` or one object; private parts are dropped). Throws naming the variable,
 * never echoing a key.
 */
export function parseSigningKeys(
  current: string | undefined,
  previous: string | undefined,
): SigningKeys | null {
  const json = (name: string, text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error(`invalid settings: ${name} is not JSON (a JWK)`);
    }
  };
  const list = (value: unknown): unknown[] =>
    Array.isArray(value)
      ? value
      : value && typeof value === "object" && Array.isArray((value as { keys?: unknown }).keys)
      ? (value as { keys: unknown[] }).keys
      : [value];
  const previousKeys = previous?.trim()
    ? list(json("AGORA_JWT_PREVIOUS_KEYS", previous)).map((key) =>
      ecJwk("AGORA_JWT_PREVIOUS_KEYS", key, false)
    )
    : [];
  if (!current?.trim()) {
    if (previousKeys.length) {
      throw new Error("invalid settings: AGORA_JWT_PREVIOUS_KEYS needs AGORA_JWT_SIGNING_KEY");
    }
    return null;
  }
  const keys = list(json("AGORA_JWT_SIGNING_KEY", current));
  if (keys.length !== 1) {
    throw new Error("invalid settings: AGORA_JWT_SIGNING_KEY is one private JWK");
  }
  return { current: ecJwk("AGORA_JWT_SIGNING_KEY", keys[0], true), previous: previousKeys };
}

/** A rate rule written as `<limit>/<window seconds>`, e.g. `20/600`. */
function parseRule(name: string, text: string): RateLimitRule {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) throw new Error(`${name} must look like <limit>/<seconds>, got ${text}`);
  return limit.parse({ limit: Number(match[1]), windowSeconds: Number(match[2]) });
}

/** An OpenID Connect provider Agora signs people in with (endpoints from the issuer's discovery). */
export interface OidcProviderSettings {
  issuer: string;
  clientId: string;
}

/** Google: a client id and secret from the Google Cloud console. */
export interface GoogleSettings extends OidcProviderSettings {
  clientSecret: string;
}

/** Sign in with Apple: the client secret is a JWT made from the team's key (auth/apple.ts). */
export interface AppleSettings extends OidcProviderSettings {
  teamId: string;
  keyId: string;
  /** The team's ES256 private key, PKCS#8 PEM (the .p8 file Apple hands out). */
  privateKey: string;
}

export interface Settings {
  /** The pool's URL: Postgres, a session-mode pooler, or a transaction-mode pooler. */
  databaseUrl: string;
  dbPoolSize: number;
  /**
   * What stands behind `databaseUrl`: `session` (Postgres itself or a session-mode pooler: named
   * prepared statements) or `transaction` (a transaction-mode pooler, Supavisor's port 6543 or
   * PgBouncer's `pool_mode = transaction`: statement preparation off).
   */
  dbPoolMode: "session" | "transaction";
  /** The one session connection of a process (LISTEN): `AGORA_DB_SESSION_URL`, else the pool's. */
  sessionDatabaseUrl: string;
  /** HS256: the anon and service keys, and the access tokens when no signing key is set. */
  jwtSecret: string;
  /** ES256 access tokens (AGORA_JWT_SIGNING_KEY and the previous keys); null: HS256. */
  jwtSigningKeys: SigningKeys | null;
  anonKey: string;
  csrfSecret: string;
  refreshSecret: string;
  siteUrl: string;
  /** Origins allowed for CORS, CSRF and redirects; the site's own origin is always allowed. */
  allowedOrigins: string[];
  accessTokenTtlSeconds: number;
  /** The lifetime of the page's Realtime token (`POST /api/auth/token`), seconds. */
  realtimeTokenTtlSeconds: number;
  sessionTtlDays: number;
  refreshGraceSeconds: number;
  magicLinkTtlSeconds: number;
  smtpUrl?: string;
  mailFrom: string;
  localMode: boolean;
  trustedProxyHeader?: string;
  maxBodyBytes: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  storage: {
    kind: "local" | "supabase";
    dir: string;
    bucket: string;
    supabaseUrl?: string;
    serviceRoleKey?: string;
  };
  /** Content types an attachment may have. */
  attachmentTypes: string[];
  typingThrottleMs: number;
  sseHeartbeatMs: number;
  /**
   * Stripe. Without a secret key the store uses the `dev` payment provider (payments kept in
   * Postgres, paid through `/_dev/payments/<id>/succeed` in local mode).
   */
  stripe: {
    secretKey?: string;
    webhookSecret?: string;
    /** The API base (default Stripe's); tests point it at a stand-in. */
    apiUrl: string;
  };
  rateLimits: {
    signinPerIp: RateLimitRule;
    signinPerEmail: RateLimitRule;
    verifyPerIp: RateLimitRule;
    refreshPerSession: RateLimitRule;
    adminPerUser: RateLimitRule;
    noncePerIp: RateLimitRule;
    signinPerWallet: RateLimitRule;
    reportsPerUser: RateLimitRule;
  };
  /** Google sign-in; null unless both the client id and secret are set. */
  google: GoogleSettings | null;
  /** Sign in with Apple; null unless the client id, team id, key id and key are all set. */
  apple: AppleSettings | null;
  /**
   * The EVM JSON-RPC endpoint (contract-wallet sign-in; the wallet: unset, its chain routes
   * answer 503).
   */
  rpcUrl?: string;
  /**
   * The master key that wraps wallet data keys, and earlier ones still accepted for unwrapping
   * (during a rotation). Required unless in local mode.
   */
  walletMasterKey: Uint8Array | null;
  walletPreviousMasterKeys: Uint8Array[];
  /** Push through FCM's HTTP v1 API; absent without AGORA_FCM_SERVICE_ACCOUNT (push is off). */
  fcm?: {
    serviceAccount: FcmServiceAccount;
    /** The API's base URL, without /v1: Google's, or a stand-in's in tests. */
    apiUrl: string;
  };
  /** Pushes and e-mails one delivery job sends at once. */
  pushConcurrency: number;
}

/** Reads and checks the settings; throws one error naming every bad variable. */
export function loadSettings(env: Record<string, string | undefined>): Settings {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid settings: ${problems.join("; ")}`);
  }
  const e = parsed.data;
  const databaseUrl = e.AGORA_DB_URL ?? e.SUPABASE_DB_URL;
  if (!databaseUrl) throw new Error("invalid settings: set AGORA_DB_URL (or SUPABASE_DB_URL)");
  const dbPoolMode = e.AGORA_DB_POOL_MODE ??
    (urlPort(databaseUrl) === SUPAVISOR_TRANSACTION_PORT ? "transaction" : "session");
  const sessionDatabaseUrl = e.AGORA_DB_SESSION_URL || databaseUrl;
  if (dbPoolMode === "transaction" && sessionDatabaseUrl === databaseUrl) {
    throw new Error(
      "invalid settings: the pool's URL is a transaction-mode pooler (AGORA_DB_POOL_MODE or port " +
        `${SUPAVISOR_TRANSACTION_PORT}), which cannot keep a LISTEN: set AGORA_DB_SESSION_URL to a ` +
        "direct or session-mode URL",
    );
  }
  if (e.AGORA_STRIPE_SECRET_KEY && !e.AGORA_STRIPE_WEBHOOK_SECRET) {
    throw new Error(
      "invalid settings: AGORA_STRIPE_WEBHOOK_SECRET is required with AGORA_STRIPE_SECRET_KEY " +
        "(payments complete through verified webhooks)",
    );
  }
  const siteOrigin = new URL(e.AGORA_SITE_URL).origin;
  // Hosted, the key is always required: an ADMIN can turn the wallet on at run time, and a
  // platform that then had no key could neither create nor use a wallet.
  if (!e.AGORA_WALLET_MASTER_KEY && !e.AGORA_LOCAL_MODE) {
    throw new Error(
      "invalid settings: set AGORA_WALLET_MASTER_KEY (32 bytes, base64url or hex): it wraps the " +
        "wallet keys",
    );
  }
  const walletMasterKey = e.AGORA_WALLET_MASTER_KEY
    ? parseMasterKey("AGORA_WALLET_MASTER_KEY", e.AGORA_WALLET_MASTER_KEY)
    : null;
  const walletPreviousMasterKeys = e.AGORA_WALLET_PREVIOUS_MASTER_KEYS.map((key) =>
    parseMasterKey("AGORA_WALLET_PREVIOUS_MASTER_KEYS", key)
  );
  const issuer = (url: string) => url.replace(/\/+$/, "");
  const fcmAccount = parseServiceAccount(e.AGORA_FCM_SERVICE_ACCOUNT);
  const fcmApi = new URL(e.AGORA_FCM_API_URL);
  if (fcmApi.pathname !== "/" || fcmApi.search || fcmApi.hash) {
    throw new Error(
      "invalid settings: AGORA_FCM_API_URL is an origin (scheme, host, port), without a path",
    );
  }
  return {
    databaseUrl,
    dbPoolSize: e.AGORA_DB_POOL_SIZE,
    dbPoolMode,
    sessionDatabaseUrl,
    jwtSecret: e.AGORA_JWT_SECRET,
    jwtSigningKeys: parseSigningKeys(e.AGORA_JWT_SIGNING_KEY, e.AGORA_JWT_PREVIOUS_KEYS),
    anonKey: e.AGORA_ANON_KEY,
    csrfSecret: e.AGORA_CSRF_SECRET,
    refreshSecret: e.AGORA_REFRESH_SECRET,
    siteUrl: e.AGORA_SITE_URL.replace(/\/+$/, ""),
    allowedOrigins: [...new Set([siteOrigin, ...e.AGORA_ALLOWED_ORIGINS])],
    accessTokenTtlSeconds: e.AGORA_ACCESS_TOKEN_TTL,
    realtimeTokenTtlSeconds: Math.min(e.AGORA_REALTIME_TOKEN_TTL, e.AGORA_ACCESS_TOKEN_TTL),
    sessionTtlDays: e.AGORA_SESSION_TTL_DAYS,
    refreshGraceSeconds: e.AGORA_REFRESH_GRACE_SECONDS,
    magicLinkTtlSeconds: e.AGORA_MAGIC_LINK_TTL,
    smtpUrl: e.AGORA_SMTP_URL || undefined,
    mailFrom: e.AGORA_MAIL_FROM,
    localMode: e.AGORA_LOCAL_MODE,
    trustedProxyHeader: e.AGORA_TRUSTED_PROXY_HEADER || undefined,
    maxBodyBytes: e.AGORA_MAX_BODY_BYTES,
    logLevel: e.AGORA_LOG_LEVEL,
    storage: {
      kind: e.AGORA_STORAGE,
      dir: e.AGORA_STORAGE_DIR,
      bucket: e.AGORA_STORAGE_BUCKET,
      supabaseUrl: e.SUPABASE_URL,
      serviceRoleKey: e.SUPABASE_SERVICE_ROLE_KEY,
    },
    attachmentTypes: e.AGORA_ATTACHMENT_TYPES.map((t) => t.toLowerCase()),
    typingThrottleMs: e.AGORA_TYPING_THROTTLE_MS,
    sseHeartbeatMs: e.AGORA_SSE_HEARTBEAT_MS,
    stripe: {
      secretKey: e.AGORA_STRIPE_SECRET_KEY || undefined,
      webhookSecret: e.AGORA_STRIPE_WEBHOOK_SECRET || undefined,
      apiUrl: e.AGORA_STRIPE_API_URL.replace(/\/+$/, ""),
    },
    rateLimits: {
      signinPerIp: parseRule("AGORA_RATE_SIGNIN_IP", e.AGORA_RATE_SIGNIN_IP),
      signinPerEmail: parseRule("AGORA_RATE_SIGNIN_EMAIL", e.AGORA_RATE_SIGNIN_EMAIL),
      verifyPerIp: parseRule("AGORA_RATE_VERIFY_IP", e.AGORA_RATE_VERIFY_IP),
      refreshPerSession: parseRule("AGORA_RATE_REFRESH_SESSION", e.AGORA_RATE_REFRESH_SESSION),
      adminPerUser: parseRule("AGORA_RATE_ADMIN_USER", e.AGORA_RATE_ADMIN_USER),
      noncePerIp: parseRule("AGORA_RATE_NONCE_IP", e.AGORA_RATE_NONCE_IP),
      signinPerWallet: parseRule("AGORA_RATE_SIGNIN_WALLET", e.AGORA_RATE_SIGNIN_WALLET),
      reportsPerUser: parseRule("AGORA_RATE_REPORTS_USER", e.AGORA_RATE_REPORTS_USER),
    },
    google: e.AGORA_GOOGLE_CLIENT_ID && e.AGORA_GOOGLE_CLIENT_SECRET
      ? {
        issuer: issuer(e.AGORA_GOOGLE_ISSUER),
        clientId: e.AGORA_GOOGLE_CLIENT_ID,
        clientSecret: e.AGORA_GOOGLE_CLIENT_SECRET,
      }
      : null,
    apple: e.AGORA_APPLE_CLIENT_ID && e.AGORA_APPLE_TEAM_ID && e.AGORA_APPLE_KEY_ID &&
        e.AGORA_APPLE_PRIVATE_KEY
      ? {
        issuer: issuer(e.AGORA_APPLE_ISSUER),
        clientId: e.AGORA_APPLE_CLIENT_ID,
        teamId: e.AGORA_APPLE_TEAM_ID,
        keyId: e.AGORA_APPLE_KEY_ID,
        // Environments often carry a PEM on one line with literal \n.
        privateKey: e.AGORA_APPLE_PRIVATE_KEY.replace(/\\n/g, "\n"),
      }
      : null,
    rpcUrl: e.AGORA_RPC_URL || undefined,
    walletMasterKey,
    walletPreviousMasterKeys,
    fcm: fcmAccount ? { serviceAccount: fcmAccount, apiUrl: fcmApi.origin } : undefined,
    pushConcurrency: e.AGORA_PUSH_CONCURRENCY,
  };
}
