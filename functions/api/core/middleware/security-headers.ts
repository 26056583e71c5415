/**
 * Security headers on every API response. The API serves JSON (and attachment downloads, which
 * add their own CSP and disposition), so this is the set that matters for it, after OWASP's REST
 * guidance: HSTS, no MIME sniffing, no framing, no referrer, same-site resource loading. Headers
 * that only concern HTML pages in old browsers are left out. The set never varies.
 *
 * requestContext adds them to the response the handler (or the error handler, or the 404)
 * returned, once it is built. That is the cheapest place in Deno 2.9: a header prepared before
 * the handler runs goes through Hono's `Headers` and is validated and copied again into the
 * `Response`; set on the finished `Response` it is validated once (a bare `Deno.serve` with the
 * nine headers of a session answer: 14.3 µs of server CPU a request prepared, 11.3 set after;
 * the signed-in `GET /api/auth/session` under `npm run bench -- auth`'s load, ten alternating
 * rounds in one process: 61.8 µs prepared, 57.7 set after). An earlier measurement on an older
 * Deno found the opposite; measure again when Deno changes.
 */
const HEADERS: [string, string][] = [
  ["Strict-Transport-Security", "max-age=15552000; includeSubDomains"],
  ["X-Content-Type-Options", "nosniff"],
  ["X-Frame-Options", "SAMEORIGIN"],
  ["Referrer-Policy", "no-referrer"],
  ["Cross-Origin-Resource-Policy", "same-site"],
];

export function addSecurityHeaders(headers: Headers): void {
  for (const [name, value] of HEADERS) headers.set(name, value);
}
