/**
 * Security headers on every API response. The API serves JSON (and attachment downloads, which
 * add their own CSP and disposition), so this is the set that matters for it, after OWASP's REST
 * guidance: HSTS, no MIME sniffing, no framing, no referrer, same-site resource loading. Headers
 * that only concern HTML pages in old browsers are left out. The set never varies, so it is
 * computed once: this runs on every request's path. Handlers answer through the context
 * (`c.json`, `c.body`, `c.newResponse`), which is what carries these prepared headers.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.ts";

const HEADERS: [string, string][] = [
  ["Strict-Transport-Security", "max-age=15552000; includeSubDomains"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "SAMEORIGIN"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Resource-Policy", "same-site"],
];

export function securityHeaders(): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    // Prepared before the handler runs: Hono builds its response with them (error and 404
    // answers too), where setting them afterwards would copy the response.
    for (const [name, value] of HEADERS) c.header(name, value);
    return next();
  };
}
