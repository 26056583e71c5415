/**
 * Security headers on every API response. The API serves JSON (and attachment downloads, which
 * add their own CSP and disposition), so this is the set that matters for it, after OWASP's REST
 * guidance: HSTS, no MIME sniffing, no framing, no referrer, same-site resource loading. Headers
 * that only concern HTML pages in old browsers are left out. The set never varies, so it is
 * computed once.
 *
 * requestContext prepares them on every request, before the handler runs: Hono builds its
 * response with them (error and 404 answers too), and Deno prepares that response for the wire
 * as it is built. Adding headers to a response afterwards undoes that preparation, and costs a
 * signed-in request more than the headers themselves (measured with `npm run bench -- auth`).
 * Handlers answer through the context (`c.json`, `c.body`, `c.newResponse`), which is what
 * carries these prepared headers.
 */
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";

const HEADERS: [string, string][] = [
  ["Strict-Transport-Security", "max-age=15552000; includeSubDomains"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "SAMEORIGIN"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Resource-Policy", "same-site"],
];

export function prepareSecurityHeaders(c: Context<AppEnv>): void {
  for (const [name, value] of HEADERS) c.header(name, value);
}
