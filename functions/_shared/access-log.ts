/**
 * The access log of /api requests, written off the request path: entries are queued in memory
 * and flushed in one insert every `intervalMs` or when `batchSize` entries wait. A request never
 * waits for its log line. On shutdown, `close()` flushes what is left.
 *
 * The batch travels as one JSON document (`json_to_recordset`): this runs for every request, and
 * `JSON.stringify` is native, where encoding eight parameter arrays element by element was a
 * measurable share of a request's CPU. (COPY would be cheaper still for Postgres, but postgres.js
 * never settles a COPY the server refuses, which would stall the log for good.)
 */
import type { Sql } from "./db.ts";
import type { Logger } from "./logger.ts";

export interface AccessEntry {
  requestId: string;
  userId: string | null;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  ip: string | null;
  /** When the request ended, epoch milliseconds. */
  at: number;
}

export interface AccessLog {
  push(entry: AccessEntry): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * `sql` is the log's own connection (a pool of one, closed by `close()`), so a large batch never
 * queues the app's queries behind it. Batches are written one after the other.
 */
export function createAccessLog(
  sql: Sql,
  log: Logger,
  opts: { intervalMs?: number; batchSize?: number; maxQueue?: number } = {},
): AccessLog {
  const intervalMs = opts.intervalMs ?? 500;
  const batchSize = opts.batchSize ?? 500;
  const maxQueue = opts.maxQueue ?? 50_000;
  let queue: AccessEntry[] = [];
  let flushing: Promise<void> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const write = async (batch: AccessEntry[]) => {
    try {
      await sql`
        insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
        select "requestId", "userId", method, route, status, "durationMs", ip, to_timestamp(at / 1000.0)
        from json_to_recordset(${JSON.stringify(batch)}::text::json) as entry(
          "requestId" text, "userId" uuid, method text, route text, status smallint,
          "durationMs" real, ip inet, at float8)`;
    } catch (err) {
      log("error", "access log batch not written", { entries: batch.length, error: String(err) });
    }
  };

  const flush = () => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (queue.length === 0) return flushing;
    const batch = queue;
    queue = [];
    flushing = flushing.then(() => write(batch));
    return flushing;
  };

  return {
    push(entry) {
      if (queue.length >= maxQueue) return; // shed load rather than grow without bound
      queue.push(entry);
      if (queue.length >= batchSize) void flush();
      else if (timer === undefined) timer = setTimeout(() => void flush(), intervalMs);
    },
    flush,
    async close() {
      await flush();
      await sql.end({ timeout: 5 });
    },
  };
}
