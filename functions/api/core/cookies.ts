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

export function readCookie(c: Context<AppEnv>, name: string): string | undefined {
  return getCookie(c, name) || undefined;
}
