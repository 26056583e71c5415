/**
 * What the configuration switches: each domain's `features.<flag>` closes its routes with 403
 * when off (messaging: conversations, messages, attachments and the realtime routes; the store:
 * its routes but the payment webhook, which must keep accepting events for payments in flight;
 * the wallet; notifications), and `system.maintenanceMode` refuses changes by anyone but an ADMIN with 503
 * (reads, sign-in and the payment webhook keep working). A domain adds one line to `GATED`.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv } from "../context.ts";
import type { ConfigDocument } from "../../../_shared/config-document.ts";
import { ApiError } from "../../../_shared/errors.ts";

type Feature = Exclude<keyof ConfigDocument["features"], "signIn">;

/**
 * The sections of /api (first path segment) each feature flag closes, and how the refusal names
 * the feature.
 */
const GATED: { sections: string[]; feature: Feature; name: string }[] = [
  {
    sections: ["conversations", "messages", "attachments", "realtime"],
    feature: "messaging",
    name: "Messaging is",
  },
  { sections: ["store"], feature: "store", name: "The store is" },
  { sections: ["wallet"], feature: "wallet", name: "The wallet is" },
  { sections: ["notifications"], feature: "notifications", name: "Notifications are" },
];
type Gate = (typeof GATED)[number];
const GATE_OF = new Map<string, Gate>(
  GATED.flatMap((gate) => gate.sections.map((section) => [section, gate])),
);
/** Provider callbacks: they keep working whatever the flags and maintenance say. */
const ALWAYS_OPEN = "/api/store/webhooks/";
const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** "store" for /api/store/orders: a string cut, as this runs on every request. */
function sectionOf(path: string): string {
  const end = path.indexOf("/", 5);
  return end < 0 ? path.slice(5) : path.slice(5, end);
}

export function featureGate(): MiddlewareHandler<AppEnv> {
  // Not async on the way through: reads outside the gated domains pass straight on.
  return (c, next) => {
    const path = c.req.path;
    if (path.startsWith(ALWAYS_OPEN)) return next();
    const gate = GATE_OF.get(sectionOf(path));
    const unsafe = !SAFE.has(c.req.method);
    if (!gate && !unsafe) return next();
    return checkFeatures(c, next, path, gate, unsafe);
  };
}

async function checkFeatures(
  c: Context<AppEnv>,
  next: Next,
  path: string,
  gate: Gate | undefined,
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
