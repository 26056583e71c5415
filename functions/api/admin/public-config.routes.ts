/**
 * /api/config/public: what a web client needs before sign-in (and the limits its pages show, such
 * as the message edit window). No secrets. Public: it runs as
 * `anon` whoever calls. Queries: admin/public-config.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { anyone, json, router } from "../core/openapi.ts";
import { configDocument } from "../../_shared/config-document.ts";
import type { Settings } from "../../_shared/settings.ts";
import { asAnonymous } from "../core/doors.ts";
import { readPublicConfig } from "./public-config.queries.ts";

export const publicConfig = router();

/** What app.public_config() returns (defaults filled in); keys the schema does not know dropped. */
const publicPart = z.object({
  whiteLabel: configDocument.shape.whiteLabel.strip(),
  features: configDocument.shape.features.strip(),
});

/**
 * The project URL that `createClient(url, anonKey)` takes (supabase-js adds `/realtime/v1`
 * itself): hosted, `SUPABASE_URL` (given to every function); locally, the site's origin, where
 * the stack serves the Realtime gateway.
 */
function projectUrl(settings: Settings): string {
  return (settings.storage.supabaseUrl ?? new URL(settings.siteUrl).origin).replace(/\/+$/, "");
}

publicConfig.openapi(
  createRoute({
    method: "get",
    path: "/public",
    operationId: "getPublicConfig",
    security: anyone,
    summary: "White-label settings, feature flags and where to find Realtime",
    responses: {
      200: json(
        z.object({
          version: z.number().int(),
          whiteLabel: configDocument.shape.whiteLabel,
          features: configDocument.shape.features,
          limits: z.object({
            messageEditWindowMinutes: configDocument.shape.limits.shape.messageEditWindowMinutes
              .openapi({
                description: "How long after sending its author may edit a message (the " +
                  "chat hides Edit once it has passed)",
              }),
          }),
          realtime: z.object({
            url: z.url().openapi({
              description: "The project URL for createClient(url, anonKey), e.g. " +
                "http://localhost:54321 (not the WebSocket URL)",
            }),
            anonKey: z.string(),
          }),
        }),
        "The public configuration",
      ),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const doc = await asAnonymous(c, (tx) => readPublicConfig(tx));
    const { whiteLabel, features } = publicPart.parse(doc);
    // Limits come from the server's cached configuration (app.public_config() returns only the
    // white-label and the flags): an admin's change shows here at once in the process that made
    // it, within the cache's few seconds elsewhere.
    const { messageEditWindowMinutes } = (await deps.config.get()).limits;
    c.header("Cache-Control", "public, max-age=30");
    return c.json({
      version: doc?.version ?? 0,
      whiteLabel,
      features,
      limits: { messageEditWindowMinutes },
      realtime: { url: projectUrl(deps.settings), anonKey: deps.settings.anonKey },
    }, 200);
  },
);
