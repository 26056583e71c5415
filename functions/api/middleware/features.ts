/**
 * What the configuration switches: `features.messaging` (conversations, messages, attachments
 * and the realtime routes; 403 when off), `features.notifications` (the /api/notifications
 * routes; 403 when off) and `system.maintenanceMode` (changes by anyone but an ADMIN are refused
 * with 503; reads and sign-in keep working).
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv } from "../context.ts";
import { ApiError } from "../../_shared/errors.ts";

const MESSAGING = /^\/api\/(conversations|messages|attachments|realtime)(\/|$)/;
const NOTIFICATIONS = /^\/api\/notifications(\/|$)/;
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function featureGate(): MiddlewareHandler<AppEnv> {
  // Not async on the way through: reads outside messaging pass straight on.
  return (c, next) => {
    const path = c.req.path;
    const messaging = MESSAGING.test(path);
    const notifications = !messaging && NOTIFICATIONS.test(path);
    const unsafe = !SAFE.has(c.req.method);
    if (!messaging && !notifications && !unsafe) return next();
    return checkFeatures(c, next, path, messaging, notifications, unsafe);
  };
}

async function checkFeatures(
  c: Context<AppEnv>,
  next: Next,
  path: string,
  messaging: boolean,
  notifications: boolean,
  unsafe: boolean,
): Promise<void> {
  const config = await c.get("deps").config.get();
  if (messaging && !config.features.messaging) {
    throw new ApiError("forbidden", "Messaging is turned off on this platform.");
  }
  if (notifications && !config.features.notifications) {
    throw new ApiError("forbidden", "Notifications are turned off on this platform.");
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
