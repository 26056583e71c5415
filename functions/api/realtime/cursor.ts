/**
 * Event cursors: `<xid>.<id>`, the position of an event in the log's (xid8, id) order. Opaque to
 * clients; the same string is the event's `id` on every transport and the SSE `id:` field.
 */
import { badRequest } from "../../_shared/errors.ts";

export interface Cursor {
  xid: bigint;
  id: bigint;
}

const CURSOR = /^(\d{1,20})\.(\d{1,19})$/;

export function parseCursor(text: string, field = "cursor"): Cursor {
  const match = CURSOR.exec(text.trim());
  if (!match) {
    throw badRequest("Invalid cursor.", [{ path: field, message: "not a cursor from this API" }]);
  }
  return { xid: BigInt(match[1]), id: BigInt(match[2]) };
}

export function formatCursor(cursor: Cursor): string {
  return `${cursor.xid}.${cursor.id}`;
}

export function compareCursors(a: Cursor, b: Cursor): number {
  if (a.xid !== b.xid) return a.xid < b.xid ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}
