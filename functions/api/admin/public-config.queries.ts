/** Queries of /api/config/public (admin/public-config.routes.ts), run as `anon`. */
import type { Tx } from "../../_shared/db.ts";

/**
 * What `app.public_config()` lets anyone read: the version, `whiteLabel` and `features` of the
 * current configuration (null before any version exists).
 */
export async function readPublicConfig(tx: Tx) {
  const [row] = await tx<
    { doc: { version: number; whiteLabel: unknown; features: unknown } | null }[]
  >`
    select app.public_config() as doc`;
  return row.doc;
}
