/**
 * What the configuration switches: `features.messaging` (conversations, messages, attachments
 * and the realtime routes; 403 when off), `features.store` (the store's routes but its payment
 * webhook, which must keep accepting events for payments in flight; 403 when off) and
 * `system.maintenanceMode` (changes by anyone but an ADMIN are refused with 503; reads, sign-in
 * and the payment webhook keep working).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../../_shared/errors.ts";

const MESSAGING = /^\/api\/(conversations|messages|attachments|realtime)(\/|$)/;
const STORE = /^\/api\/store(\/|$)/;
const WEBHOOK = /^\/api\/store\/webhooks\//;
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function featureGate(): MiddlewareHandler<AppEnv> {
  // Not async on the way through: reads outside messaging pass straight on.
  return (c, next) => {
    const path = c.req.path;
    if (WEBHOOK.test(path)) return next();
    const messaging = MESSAGING.test(path);
    const store = STORE.test(path);
    const unsafe = !SAFE.has(c.req.method);
    if (!messaging && !store && !unsafe) return next();
    return checkFeatures(c, next, path, messaging, store, unsafe);
  };
}

async function checkFeatures(
  c: Context<AppEnv>,
  next: Next,
  path: string,
  messaging: boolean,
  store: boolean,
  unsafe: boolean,
): Promise<void> {
  const config = await c.get("deps").config.get();
  if (messaging && !config.features.messaging) {
    throw new ApiError("forbidden", "Messaging is turned off on this platform.");
  }
  if (store && !config.features.store) {
    throw new ApiError("forbidden", "The store is turned off on this platform.");
  }
  if (
    unsafe && config.system.maintenanceMode && c.get("user")?.role !== "ADMIN" &&
    !path.startsWith("/api/auth/")
  ) {
    throw new ApiError(
      "unavailable",
      "The platform is in maintenance; try again later.",
      undefined,
      {
        "Retry-After": "60",
      },
    );
  }
  return next();
}
