/**
 * The session check every signed-in request makes, coalesced.
 *
 * Each request reads its session row and user from Postgres (so signout, suspension and role
 * changes count at once). At low load each check is its own query, sent at once. Under load, the
 * checks that arrive while a query runs wait and then go together in one query (one row per
 * distinct session): the cost of a query is shared instead of repeated. They go as soon as the
 * server's thread has handled every event that was ready (a `setImmediate`), in a query of their
 * own beside the running one, up to `maxInFlight` at once; when all are running, as soon as one
 * answers. Waiting only for the running query's answer left the thread idle while Postgres
 * worked, with every request in hand waiting for the next query (`npm run bench -- auth`).
 *
 * Revocation stays immediate: a check is always answered by a query that started after the check
 * was asked for, so it sees every signout, suspension and role change committed before then.
 */
import { setImmediate } from "node:timers";
import type { Sql } from "../../_shared/db.ts";
import { isUuid } from "../../_shared/jwt.ts";
import type { SessionLookup, SessionUser } from "../core/context.ts";
import { type SessionRow, toSessionUser } from "./sessions.ts";

interface Waiter {
  /** The user the check's token named: the session must be theirs. */
  userId: string;
  resolve(user: SessionUser | null): void;
  reject(error: unknown): void;
}

export function createSessionLookup(sql: Sql, maxInFlight: number): SessionLookup {
  /** Checks waiting for a query, by session id. */
  let waiting = new Map<string, Waiter[]>();
  let inFlight = 0;
  /** A send is scheduled for when the thread has handled what was ready. */
  let sendScheduled = false;

  const sendWaiting = () => {
    sendScheduled = false;
    if (waiting.size && inFlight < maxInFlight) void send();
  };

  const send = async () => {
    const batch = waiting;
    waiting = new Map();
    inFlight++;
    try {
      const sessionIds = [...batch.keys()];
      // The live-session rule is the database's (app_private.live_sessions, by session id only);
      // the user id each check named is compared below, so a session presented with another
      // user's id is no session. The live ones come back as one JSON text, one value for the
      // driver to decode, where ten columns a row were a measurable share of every signed-in
      // request.
      const [{ sessions }] = await sql<{ sessions: string }[]>`
        select coalesce(json_agg(live), '[]')::text as sessions
        from app_private.live_sessions(${sessionIds}::uuid[]) live`;
      const rows: SessionRow[] = JSON.parse(sessions);
      const live = new Map(rows.map((row) => [row.session_id, row]));
      for (const [sessionId, waiters] of batch) {
        const row = live.get(sessionId);
        for (const waiter of waiters) {
          waiter.resolve(row?.id === waiter.userId ? toSessionUser(row) : null);
        }
      }
    } catch (err) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(err);
    } finally {
      inFlight--;
      if (waiting.size) void send();
    }
  };

  return (sessionId, userId) => {
    // Ids come from tokens we signed; anything else is no session rather than a failed query.
    const session = sessionId.toLowerCase();
    const user = userId.toLowerCase();
    if (!isUuid(session) || !isUuid(user)) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const waiter = { userId: user, resolve, reject };
      const waiters = waiting.get(session);
      if (waiters) waiters.push(waiter);
      else waiting.set(session, [waiter]);
      if (inFlight === 0) void send();
      else if (!sendScheduled && inFlight < maxInFlight) {
        sendScheduled = true;
        setImmediate(sendWaiting);
      }
    });
  };
}
