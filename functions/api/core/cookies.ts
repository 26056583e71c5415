/**
 * Session cookies for browsers: httpOnly access and refresh tokens (SameSite=Lax; Secure except
 * on plain-http localhost) and a script-readable CSRF cookie; and the binding cookie of OAuth
 * sign-ins (oauth.ts).
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "./context.ts";
import type { IssuedSession } from "../auth/sessions.ts";
import { BINDING_COOKIE, bindingCookiePath, FLOW_TTL_SECONDS } from "../auth/oauth.ts";

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

/**
 * The OAuth flow's browser binding (oauth.ts): HttpOnly, `SameSite=None` so that it comes along
 * with Apple's cross-site form post to the callback (a Lax cookie would not), therefore always
 * `Secure` (browsers refuse `SameSite=None` without it, and treat http://localhost as secure),
 * sent only to the callbacks, for as long as a flow lives. It authenticates nothing by itself: it
 * only has to match the hash stored with the flow's state.
 */
export function setBindingCookie(c: Context<AppEnv>, value: string): void {
  setCookie(c, BINDING_COOKIE, value, {
    httpOnly: true,
    sameSite: "None",
    secure: true,
    path: bindingCookiePath(c.get("deps")),
    maxAge: FLOW_TTL_SECONDS,
  });
}
