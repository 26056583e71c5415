/**
 * /api/config/public: what a web client needs before sign-in. No secrets. Public: it runs as
 * `anon` whoever calls. Queries: queries/public-config.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { json, router } from "../openapi.ts";
import { configDocument } from "../../_shared/config-document.ts";
import { asAnonymous } from "../as-user.ts";
import { readPublicConfig } from "../queries/public-config.ts";

export const publicConfig = router();

/** What app.public_config() returns (defaults filled in); keys the schema does not know dropped. */
const publicPart = z.object({
  whiteLabel: configDocument.shape.whiteLabel.strip(),
  features: configDocument.shape.features.strip(),
});

publicConfig.openapi(
  createRoute({
    method: "get",
    path: "/public",
    summary: "White-label settings, feature flags and where to find Realtime",
    responses: {
      200: json(
        z.object({
          version: z.number().int(),
          whiteLabel: configDocument.shape.whiteLabel,
          features: configDocument.shape.features,
          realtime: z.object({ url: z.string(), anonKey: z.string() }),
        }),
        "The public configuration",
      ),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const doc = await asAnonymous(c, (tx) => readPublicConfig(tx));
    const { whiteLabel, features } = publicPart.parse(doc);
    const site = new URL(deps.settings.siteUrl);
    site.protocol = site.protocol === "https:" ? "wss:" : "ws:";
    c.header("Cache-Control", "public, max-age=30");
    return c.json({
      version: doc?.version ?? 0,
      whiteLabel,
      features,
      realtime: { url: `${site.origin}/realtime/v1`, anonKey: deps.settings.anonKey },
    }, 200);
  },
);
