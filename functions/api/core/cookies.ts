/**
 * Session cookies for browsers: httpOnly access and refresh tokens (SameSite=Lax; Secure except
 * on plain-http localhost) and a script-readable CSRF cookie. (The binding cookie of OAuth
 * sign-ins is auth/oauth.ts's.)
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv, IssuedSession } from "./context.ts";

export const ACCESS_COOKIE = "agora-access-token";
export const REFRESH_COOKIE = "agora-refresh-token";
export const CSRF_COOKIE = "agora-csrf";
/**
 * "This browser's session ended because its account was suspended" (or a sign-in link was
 * refused for it): GET /api/auth/session then answers `suspended: true`, so the pages can say
 * why they show the visitor's view. Holds no secret (a forged one only changes that message in
 * the forger's own browser); a new session clears it.
 */
export const SUSPENDED_COOKIE = "agora-suspended";

/** Secure everywhere but plain http on a loopback host (the local stack). */
export function isSecureRequest(c: Context<AppEnv>): boolean {
  const url = new URL(c.req.url);
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  return !(url.protocol === "http:" && loopback);
}

/**
 * An answer that carries tokens (in the body or in cookies) must never be kept by a cache
 * (RFC 6749 section 5.1): `Cache-Control: no-store` and, for HTTP/1.0 caches, `Pragma: no-cache`.
 */
export function noStore(c: Context<AppEnv>): void {
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
}

/** Sets the access and refresh cookies (and marks the answer no-store). */
export function setSessionCookies(c: Context<AppEnv>, session: IssuedSession): void {
  noStore(c);
  const secure = isSecureRequest(c);
  if (readCookie(c, SUSPENDED_COOKIE)) deleteCookie(c, SUSPENDED_COOKIE, { path: "/", secure });
  const refreshMaxAge = Math.max(
    0,
    Math.floor((session.user.sessionExpiresAt.getTime() - Date.now()) / 1000),
  );
  // The access cookie outlives its token so the middleware can see it expired and refresh.
  setCookie(c, ACCESS_COOKIE, session.accessToken, {
    httpOnly: true,
    sameSite: "Lax",
    secure,
    path: "/",
    maxAge: refreshMaxAge,
  });
  setCookie(c, REFRESH_COOKIE, session.refreshToken, {
    httpOnly: true,
    sameSite: "Lax",
    secure,
    path: "/",
    maxAge: refreshMaxAge,
  });
}

export function setCsrfCookie(c: Context<AppEnv>, token: string): void {
  setCookie(c, CSRF_COOKIE, token, {
    httpOnly: false,
    sameSite: "Lax",
    secure: isSecureRequest(c),
    path: "/",
  });
}

export function clearSessionCookies(c: Context<AppEnv>): void {
  const secure = isSecureRequest(c);
  for (const name of [ACCESS_COOKIE, REFRESH_COOKIE, CSRF_COOKIE]) {
    deleteCookie(c, name, { path: "/", secure });
  }
}

/** Marks this browser as signed out by a suspension (SUSPENDED_COOKIE), for 30 days. */
export function markSuspended(c: Context<AppEnv>): void {
  c.set("suspendedNow", true);
  setCookie(c, SUSPENDED_COOKIE, "1", {
    httpOnly: true,
    sameSite: "Lax",
    secure: isSecureRequest(c),
    path: "/",
    maxAge: 30 * 24 * 3600,
  });
}

export function readCookie(c: Context<AppEnv>, name: string): string | undefined {
  return getCookie(c, name) || undefined;
}
