/**
 * Process settings: secrets and deployment facts read once from the environment. Everything an
 * admin may change at run time lives in the versioned system configuration instead
 * (see config-document.ts). Every variable and its default is listed in the README.
 */
import { z } from "zod";

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
  AGORA_JWT_SECRET: z.string().min(32, "AGORA_JWT_SECRET must have at least 32 characters"),
  AGORA_ANON_KEY: z.string().default(""),
  AGORA_CSRF_SECRET: z.string().min(32, "AGORA_CSRF_SECRET must have at least 32 characters"),
  AGORA_REFRESH_SECRET: z.string().min(32, "AGORA_REFRESH_SECRET must have at least 32 characters"),
  AGORA_SITE_URL: z.url().default("http://localhost:54321"),
  AGORA_ALLOWED_ORIGINS: commaList.default([]),
  AGORA_ACCESS_TOKEN_TTL: z.coerce.number().int().min(30).max(86_400).default(900),
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
  AGORA_FCM_SERVICE_ACCOUNT: z.string().optional(),
  AGORA_FCM_API_URL: z.url({ protocol: /^https?$/ }).default("https://fcm.googleapis.com"),
  AGORA_PUSH_CONCURRENCY: z.coerce.number().int().min(1).max(500).default(50),
});

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

/** A rate rule written as `<limit>/<window seconds>`, e.g. `20/600`. */
function parseRule(name: string, text: string): RateLimitRule {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) throw new Error(`${name} must look like <limit>/<seconds>, got ${text}`);
  return limit.parse({ limit: Number(match[1]), windowSeconds: Number(match[2]) });
}

export interface Settings {
  databaseUrl: string;
  dbPoolSize: number;
  jwtSecret: string;
  anonKey: string;
  csrfSecret: string;
  refreshSecret: string;
  siteUrl: string;
  /** Origins allowed for CORS, CSRF and redirects; the site's own origin is always allowed. */
  allowedOrigins: string[];
  accessTokenTtlSeconds: number;
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
  rateLimits: {
    signinPerIp: RateLimitRule;
    signinPerEmail: RateLimitRule;
    verifyPerIp: RateLimitRule;
    refreshPerSession: RateLimitRule;
    adminPerUser: RateLimitRule;
  };
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
  const siteOrigin = new URL(e.AGORA_SITE_URL).origin;
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
    jwtSecret: e.AGORA_JWT_SECRET,
    anonKey: e.AGORA_ANON_KEY,
    csrfSecret: e.AGORA_CSRF_SECRET,
    refreshSecret: e.AGORA_REFRESH_SECRET,
    siteUrl: e.AGORA_SITE_URL.replace(/\/+$/, ""),
    allowedOrigins: [...new Set([siteOrigin, ...e.AGORA_ALLOWED_ORIGINS])],
    accessTokenTtlSeconds: e.AGORA_ACCESS_TOKEN_TTL,
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
    rateLimits: {
      signinPerIp: parseRule("AGORA_RATE_SIGNIN_IP", e.AGORA_RATE_SIGNIN_IP),
      signinPerEmail: parseRule("AGORA_RATE_SIGNIN_EMAIL", e.AGORA_RATE_SIGNIN_EMAIL),
      verifyPerIp: parseRule("AGORA_RATE_VERIFY_IP", e.AGORA_RATE_VERIFY_IP),
      refreshPerSession: parseRule("AGORA_RATE_REFRESH_SESSION", e.AGORA_RATE_REFRESH_SESSION),
      adminPerUser: parseRule("AGORA_RATE_ADMIN_USER", e.AGORA_RATE_ADMIN_USER),
    },
    fcm: fcmAccount ? { serviceAccount: fcmAccount, apiUrl: fcmApi.origin } : undefined,
    pushConcurrency: e.AGORA_PUSH_CONCURRENCY,
  };
}
