/**
 * Queries of /api/realtime (realtime/realtime.routes.ts), run as the caller. Reading the event log itself
 * is realtime/events.ts (`readEvents`, `currentCursor`), shared with the event hub.
 */
import type { Tx } from "../../_shared/db.ts";

/**
 * The topics among `topics` the caller may not read now, by the SQL topic rule applied to these
 * topics only (`app.readable_topics_among`: each checked by key, so the cost follows the topics
 * asked for, not how many conversations the caller is in).
 */
export async function refusedTopics(tx: Tx, topics: string[]): Promise<string[]> {
  const rows = await tx<{ topic: string; allowed: boolean }[]>`
    select t as topic, t in (select app.readable_topics_among(${topics}::text[])) as allowed
    from unnest(${topics}::text[]) t`;
  return rows.filter((r) => !r.allowed).map((r) => r.topic);
}
