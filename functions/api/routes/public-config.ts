/** /api/config/public: what a web client needs before sign-in. No secrets. */
import { createRoute, z } from "@hono/zod-openapi";
import { json, router } from "../openapi.ts";
import { withAnon } from "../../_shared/db.ts";
import { configDocument } from "../../_shared/config-document.ts";

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
    const [row] = await withAnon(
      deps.sql,
      (tx) =>
        tx<{ doc: { version: number; whiteLabel: unknown; features: unknown } | null }[]>`
        select app.public_config() as doc`,
    );
    const { whiteLabel, features } = publicPart.parse(row.doc);
    const site = new URL(deps.settings.siteUrl);
    site.protocol = site.protocol === "https:" ? "wss:" : "ws:";
    c.header("Cache-Control", "public, max-age=30");
    return c.json({
      version: row.doc?.version ?? 0,
      whiteLabel,
      features,
      realtime: { url: `${site.origin}/realtime/v1`, anonKey: deps.settings.anonKey },
    }, 200);
  },
);
