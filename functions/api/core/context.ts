/**
 * What every handler can reach: the process-wide dependencies and the per-request facts the
 * middleware establishes (request id, client IP, the signed-in user read from the database).
 *
 * The core names no domain. The services a domain owns add themselves to `Deps` where they are
 * defined (TypeScript declaration merging: `declare module "../core/context.ts"`):
 * `realtime/hub.ts` adds `hub`, `store/payments.ts` `payments`, `wallet/chain.ts` `chain`,
 * `wallet/keys.ts` `walletKeys`. `functions/api/deps.ts` builds them all.
 */
import type { AccessLog } from "../../_shared/access-log.ts";
import type { DbClaims, Listener, Sql } from "../../_shared/db.ts";
import type { TokenIssuer } from "../../_shared/jwt.ts";
import type { Logger } from "../../_shared/logger.ts";
import type { Mailer } from "../../_shared/mailer.ts";
import type { PushSender } from "../../_shared/push.ts";
import type { SecurityRecorder } from "../../_shared/security-events.ts";
import type { Settings } from "../../_shared/settings.ts";
import type { Storage } from "../../_shared/storage.ts";
import type { ConfigCache } from "./config-store.ts";

export type Role = "VISITOR" | "SUBSCRIBER" | "MEMBER" | "CONFIDENTIAL" | "ADMIN";
export const ROLES: readonly Role[] = ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"];

export interface Deps {
  settings: Settings;
  sql: Sql;
  /**
   * The process's one session connection, for LISTEN only (the event hub, the job worker): never
   * the pool, which may be a transaction-mode pooler (`db.ts`, `createListener`).
   */
  listener: Listener;
  tokens: TokenIssuer;
  mailer: Mailer;
  security: SecurityRecorder;
  accessLog: AccessLog;
  log: Logger;
  /** HMAC with the CSRF secret. */
  signCsrf: (message: string) => Promise<string>;
  /** HMAC with the refresh secret: derives a refresh token's successor. */
  signRefresh: (message: string) => Promise<string>;
  /** Attachment files. */
  storage: Storage;
  /** The configuration, cached briefly (flags, maintenance, sign-up rules). */
  config: ConfigCache;
  /** The live session and user behind a token, read from the database on every call. */
  sessions: SessionLookup;
  /** Push through FCM; null when AGORA_FCM_SERVICE_ACCOUNT is not set (push is off). */
  push: PushSender | null;
}

/** The signed-in user as the database says now (role and status are never taken from a token). */
export interface SessionUser {
  id: string;
  /** The account's verified address; null for an account without one (a wallet's). */
  email: string | null;
  name: string;
  image: string | null;
  role: Role;
  walletAddress: string | null;
  sessionId: string;
  sessionExpiresAt: Date;
  /** When the sign-in that opened this session happened (`auth_time`; freshness). */
  authTime: Date;
  /** The provider that opened it: email, google, apple or wallet (`amr`). */
  provider: string;
}

/**
 * The live session and user behind a token, read from the database on every call (null when the
 * session ended or the user may not sign in): auth/session-lookup.ts.
 */
export type SessionLookup = (sessionId: string, userId: string) => Promise<SessionUser | null>;

/** A session just opened or refreshed: its user and the tokens that carry it. */
export interface IssuedSession {
  user: SessionUser;
  accessToken: string;
  refreshToken: string;
  /** Access-token expiry, seconds since epoch. */
  expiresAt: number;
}

/** A session to check and the user it must belong to, as an access token names them. */
export interface SessionRef {
  sessionId: string;
  userId: string;
}

export interface TokenCaller extends SessionRef {
  confirmed: boolean;
}

export interface AppEnv {
  Variables: {
    deps: Deps;
    requestId: string;
    ip: string | null;
    userAgent: string | null;
    user: SessionUser | null;
    claims: DbClaims | null;
    /**
     * The caller an access token names, on a route whose one statement checks the session itself
     * (`sessionCheckedInStatement`, auth/session.middleware.ts): the token's signature is verified,
     * the session not yet; `confirmed` once that statement found it live (`asSessionOf`).
     */
    tokenCaller: TokenCaller | null;
    /** How the request authenticated; CSRF applies to cookies only. */
    authVia: "cookie" | "bearer" | null;
    /** Access-token expiry (seconds since epoch) of the credentials in use. */
    accessExpiresAt: number | null;
    /**
     * The session the session middleware rotated the refresh cookie into during this request
     * (the access cookie had expired); `POST /api/auth/refresh` answers with it instead of
     * rotating the same token a second time.
     */
    refreshed: IssuedSession | null;
    /** This request found the cookie's session ended by a suspension (core/cookies.ts). */
    suspendedNow: boolean;
  };
}

/** Ranks for comparisons in TypeScript; SQL compares the enum directly. */
export function roleAtLeast(role: Role, required: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(required);
}
