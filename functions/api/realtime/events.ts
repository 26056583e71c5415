/**
 * Reading the event log. Only events of transactions older than the oldest one still running
 * are read (`pg_snapshot_xmin` of the statement's own snapshot): every event committed later has
 * a larger xid, so what is read is a stable prefix of the (xid, id) order and a cursor into it
 * never skips or repeats an event. See the messaging migration's header.
 */
import type { Sql, Tx } from "../../_shared/db.ts";
import { type Cursor, formatCursor } from "./cursor.ts";
import { ifGiven, pageLimit, where } from "../core/paging.ts";

export interface RealtimeEvent {
  id: string;
  topic: string;
  event: string;
  payload: unknown;
  createdAt: string;
}

export interface EventPage {
  events: (RealtimeEvent & { cursor: Cursor })[];
  /** Committed events wait beyond the horizon (an older transaction is still running). */
  pending: boolean;
  /** More events than the limit are readable now. */
  more: boolean;
}

interface Row {
  xid: string;
  id: string;
  topic: string;
  event: string;
  payload: unknown;
  created_at: Date;
  pending: boolean;
}

/** The cursor of "now": everything already below the horizon is in the past. */
export async function currentCursor(db: Sql | Tx): Promise<Cursor> {
  const [row] = await db<
    { xmin: string }[]
  >`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`;
  return { xid: BigInt(row.xmin), id: 0n };
}

/**
 * Events after `after`, in order, up to `limit`; only `topics` when given (user reads go through
 * `asUser`, so RLS applies the topic rule to every row as well).
 */
export async function readEvents(
  db: Sql | Tx,
  after: Cursor,
  limit: number,
  topics?: string[],
): Promise<EventPage> {
  const rows = await db<Row[]>`
    select e.xid::text as xid, e.id::text as id, e.topic, e.event, e.payload, e.created_at,
           e.xid >= pg_snapshot_xmin(pg_current_snapshot()) as pending
    from app.events e
    ${
    where(db, [
      db`(e.xid, e.id) > (${after.xid.toString()}::text::xid8, ${after.id.toString()}::bigint)`,
      ifGiven(topics, (list) => db`e.topic = any(${list}::text[])`),
    ])
  }
    order by e.xid, e.id
    limit ${pageLimit(limit)}`;
  const events: EventPage["events"] = [];
  let pending = false;
  for (const row of rows.slice(0, limit)) {
    if (row.pending) {
      pending = true;
      break;
    }
    const cursor = { xid: BigInt(row.xid), id: BigInt(row.id) };
    events.push({
      id: formatCursor(cursor),
      topic: row.topic,
      event: row.event,
      payload: row.payload,
      createdAt: row.created_at.toISOString(),
      cursor,
    });
  }
  const more = !pending && rows.length > limit;
  return { events, pending, more };
}
