/**
 * What the configuration switches: each domain's `features.<flag>` closes its routes with 403
 * when off (messaging: conversations, messages, attachments and the realtime routes; the store:
 * its routes but the payment webhook, which must keep accepting events for payments in flight;
 * the wallet; notifications), and `system.maintenanceMode` refuses changes by anyone but an ADMIN with 503
 * (reads, sign-in and the payment webhook keep working). A domain adds one line to `GATED`.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv } from "../context.ts";
import type { ConfigDocument } from "../../_shared/config-document.ts";
import { ApiError } from "../../_shared/errors.ts";

type Feature = Exclude<keyof ConfigDocument["features"], "signIn">;

/** The routes each feature flag closes, and how the refusal names the feature. */
const GATED: { path: RegExp; feature: Feature; name: string }[] = [
  {
    path: /^\/api\/(conversations|messages|attachments|realtime)(\/|$)/,
    feature: "messaging",
    name: "Messaging is",
  },
  { path: /^\/api\/store(\/|$)/, feature: "store", name: "The store is" },
  { path: /^\/api\/wallet(\/|$)/, feature: "wallet", name: "The wallet is" },
  { path: /^\/api\/notifications(\/|$)/, feature: "notifications", name: "Notifications are" },
];
/** Provider callbacks: they keep working whatever the flags and maintenance say. */
const ALWAYS_OPEN = /^\/api\/store\/webhooks\//;
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function featureGate(): MiddlewareHandler<AppEnv> {
  // Not async on the way through: reads outside the gated domains pass straight on.
  return (c, next) => {
    const path = c.req.path;
    if (ALWAYS_OPEN.test(path)) return next();
    const gate = GATED.find((g) => g.path.test(path));
    const unsafe = !SAFE.has(c.req.method);
    if (!gate && !unsafe) return next();
    return checkFeatures(c, next, path, gate, unsafe);
  };
}

async function checkFeatures(
  c: Context<AppEnv>,
  next: Next,
  path: string,
  gate: (typeof GATED)[number] | undefined,
  unsafe: boolean,
): Promise<void> {
  const config = await c.get("deps").config.get();
  if (gate && !config.features[gate.feature]) {
    throw new ApiError("forbidden", `${gate.name} turned off on this platform.`);
  }
  if (
    unsafe && config.system.maintenanceMode && c.get("user")?.role !== "ADMIN" &&
    !path.startsWith("/api/auth/")
  ) {
    throw new ApiError(
      "unavailable",
      "The platform is in maintenance; try again later.",
      undefined,
      { "Retry-After": "60" },
    );
  }
  return next();
}
