/**
 * First middleware: request id, client IP, timing, the security headers, the structured request
 * log line and the access-log entry (queued, written off the request path).
 */
import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv, Deps } from "../context.ts";
import { addSecurityHeaders } from "./security-headers.ts";

const REQUEST_ID = /^[A-Za-z0-9._-]{8,64}$/;

/** The client IP: the socket's address, or the first hop of a configured trusted proxy header. */
export function clientIp(deps: Deps, headers: Headers, env: unknown): string | null {
  const header = deps.settings.trustedProxyHeader;
  if (header) {
    const value = headers.get(header)?.split(",")[0]?.trim();
    if (value && isIp(value)) return value;
  }
  const remote = (env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr?.hostname;
  return remote && isIp(remote) ? remote : null;
}

function isIp(value: string): boolean {
  return /^(\d{1,3}\.){3}\d{1,3}$/.test(value) ||
    /^[0-9a-fA-F:]+$/.test(value) && value.includes(":");
}

export function requestContext(deps: Deps): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("deps", deps);
    c.set("requestId", requestId);
    c.set("ip", clientIp(deps, c.req.raw.headers, c.env));
    c.set("userAgent", c.req.header("user-agent")?.slice(0, 1024) ?? null);
    c.set("user", null);
    c.set("claims", null);
    c.set("tokenCaller", null);
    c.set("authVia", null);
    c.set("accessExpiresAt", null);
    c.set("refreshed", null);
    c.set("suspendedNow", false);
    try {
      await next();
    } finally {
      // On the response as built (security-headers.ts says why there).
      const headers = c.res.headers;
      headers.set("X-Request-Id", requestId);
      addSecurityHeaders(headers);
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      // The matched endpoint's pattern (the last route that is not a "*" middleware).
      const handler = matchedRoutes(c).findLast((r) => r.method !== "ALL");
      const route = handler?.path ?? "(unmatched)";
      const status = c.res.status;
      const token = c.get("tokenCaller");
      const userId = c.get("user")?.id ?? (token?.confirmed ? token.userId : null);
      deps.accessLog.push({
        requestId,
        userId,
        method: c.req.method,
        route,
        status,
        durationMs,
        ip: c.get("ip"),
        at: Date.now(),
      });
      if (status >= 500 || deps.settings.logLevel === "debug") {
        deps.log(status >= 500 ? "error" : "debug", "request", {
          requestId,
          method: c.req.method,
          route,
          status,
          durationMs,
          userId,
        });
      }
    }
  };
}
