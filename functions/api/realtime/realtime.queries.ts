/**
 * Queries of /api/realtime (realtime/realtime.routes.ts), run as the caller. Reading the event log itself
 * is realtime/events.ts (`readEvents`, `currentCursor`), shared with the event hub.
 */
import type { Tx } from "../../_shared/db.ts";

/**
 * The topics among `topics` the caller may not read now, by the SQL topic rule (the caller's
 * readable set, computed once for all of them).
 */
export async function refusedTopics(tx: Tx, topics: string[]): Promise<string[]> {
  const rows = await tx<{ topic: string; allowed: boolean }[]>`
    select t as topic, t in (select app.readable_topics()) as allowed
    from unnest(${topics}::text[]) t`;
  return rows.filter((r) => !r.allowed).map((r) => r.topic);
}
