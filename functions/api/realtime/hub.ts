/**
 * The event hub of one API process: one LISTEN (on the process's session connection, never the
 * pool: `deps.listener`), one reader of the event log, and the
 * local subscribers (SSE streams, waiting long-polls). Commits NOTIFY `agora_events`; the hub then
 * reads what is new once, with the server's own rights (a named server path: subscribers were
 * authorized by the topic rule when they subscribed), and hands each event to the subscribers of
 * its topic. Reads coalesce: a burst of commits costs one query, not one per commit per
 * subscriber. Typing arrives on `agora_ephemeral` and goes to live subscribers only.
 *
 * The hub starts on first use, so processes that never stream never hold a LISTEN connection; a
 * start that failed is tried again by the next subscriber.
 */
import type { Listener, Sql } from "../../_shared/db.ts";
import type { Logger } from "../../_shared/logger.ts";
import { ApiError } from "../../_shared/errors.ts";
import { compareCursors, type Cursor } from "./cursor.ts";
import { currentCursor, readEvents, type RealtimeEvent } from "./events.ts";

declare module "../core/context.ts" {
  interface Deps {
    /** Live delivery of the event log to this process's SSE and long-poll subscribers. */
    hub: EventHub;
  }
}

export interface HubSubscriber {
  topics: ReadonlySet<string>;
  /** A durable event, in log order, with its cursor. */
  durable(event: RealtimeEvent & { cursor: Cursor }): void;
  /** An ephemeral event (typing): no cursor, not stored. */
  ephemeral(event: RealtimeEvent): void;
  /** The hub is closing (the process stops): end the stream or answer the poll now. */
  closed?(): void;
}

export interface EventHub {
  /** Registers a subscriber; resolves once the hub is listening. Returns the unsubscribe. */
  subscribe(subscriber: HubSubscriber): Promise<() => void>;
  close(): Promise<void>;
}

const BATCH = 1000;
/** How soon to look again when committed events wait behind an older running transaction. */
const PENDING_RETRY_MS = 3;

export function createEventHub(
  sql: Sql,
  listener: Pick<Listener, "listen">,
  log: Logger,
): EventHub {
  const subscribers = new Set<HubSubscriber>();
  let started: Promise<void> | null = null;
  let unlisten: (() => Promise<void>)[] = [];
  let cursor: Cursor | null = null;
  let reading = false;
  let again = false;
  let closed = false;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const dispatch = (event: RealtimeEvent & { cursor: Cursor }) => {
    for (const s of subscribers) {
      if (s.topics.has(event.topic)) {
        try {
          s.durable(event);
        } catch (err) {
          log("warn", "subscriber failed", { error: String(err) });
        }
      }
    }
  };

  /** Reads everything new (coalescing concurrent wake-ups) and dispatches it in order. */
  const read = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        if (!cursor) cursor = await currentCursor(sql);
        let page;
        do {
          page = await readEvents(sql, cursor, BATCH);
          for (const event of page.events) {
            if (compareCursors(event.cursor, cursor) > 0) {
              cursor = event.cursor;
              dispatch(event);
            }
          }
        } while (page.more && !closed);
        if (page.pending && !closed && retry === undefined) {
          retry = setTimeout(() => {
            retry = undefined;
            void read();
          }, PENDING_RETRY_MS);
        }
      } while (again && !closed);
    } catch (err) {
      log("error", "event hub read failed", { error: String(err) });
      if (!closed && retry === undefined) {
        retry = setTimeout(() => {
          retry = undefined;
          void read();
        }, 250);
      }
    } finally {
      reading = false;
    }
  };

  const onEphemeral = (text: string) => {
    let event: RealtimeEvent;
    try {
      event = JSON.parse(text);
    } catch {
      return;
    }
    for (const s of subscribers) {
      if (s.topics.has(event.topic)) s.ephemeral(event);
    }
  };

  const start = async () => {
    const handles: { unlisten: () => Promise<void> }[] = [];
    try {
      cursor = await currentCursor(sql);
      // onlisten runs on every (re)connection: anything committed while disconnected is read then.
      handles.push(await listener.listen("agora_events", () => void read(), () => void read()));
      handles.push(await listener.listen("agora_ephemeral", onEphemeral));
    } catch (err) {
      await Promise.all(handles.map((h) => h.unlisten().catch(() => {})));
      throw err;
    }
    unlisten = handles.map((h) => h.unlisten);
  };

  return {
    async subscribe(subscriber) {
      // The process is stopping (a deploy, a restart): a poll or stream that arrives now is told
      // to come back (503 with Retry-After, as while the database is away), not a 500.
      if (closed) {
        throw new ApiError(
          "unavailable",
          "The service is restarting; try again in a moment.",
          undefined,
          { "Retry-After": "1" },
        );
      }
      subscribers.add(subscriber);
      // A failed start is forgotten, so the next subscribe tries again (a database restart or a
      // full connection table must not break live delivery until the process restarts).
      started ??= start().catch((err) => {
        started = null;
        throw err;
      });
      try {
        await started;
      } catch (err) {
        subscribers.delete(subscriber);
        throw err;
      }
      return () => {
        subscribers.delete(subscriber);
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      // Open SSE streams and waiting long-polls end now: a server shutting down waits for its
      // in-flight responses, and a stream never finishes by itself.
      for (const s of [...subscribers]) {
        try {
          s.closed?.();
        } catch (err) {
          log("warn", "subscriber failed to close", { error: String(err) });
        }
      }
      subscribers.clear();
      await Promise.all(unlisten.map((u) => u().catch(() => {})));
    },
  };
}
