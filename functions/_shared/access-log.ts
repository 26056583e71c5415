/**
 * The access log of /api requests, written off the request path: entries are queued in memory
 * and flushed in one insert every `intervalMs` or when `batchSize` entries wait. A request never
 * waits for its log line. On shutdown, `close()` flushes what is left.
 *
 * The batch travels as one text per column, its values joined by a control character that none
 * of them can hold (request ids are checked, routes are our patterns, IPs are checked), split
 * again by `string_to_array` and zipped by `unnest`: this runs for every request, and a native
 * `join` is the cheapest encoding for the server's one JavaScript thread, where encoding
 * parameter arrays element by element was a measurable share of a request's CPU; for Postgres it
 * is cheaper than the JSON document (`json_to_recordset`) it replaced (measured with `npm run
 * bench -- auth`: 2-3 µs less Postgres CPU per request). (COPY would be cheaper still for
 * Postgres, but postgres.js never settles a COPY the server refuses, which would stall the log
 * for good.)
 */
import type { Sql } from "./db.ts";
import type { Logger } from "./logger.ts";

/** Between a column's values in a batch: a control character none of the values can hold. */
const SEPARATOR = "\x1f";
/** A missing user id or IP. */
const NULL = "\x1e";

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
    const column = (value: (entry: AccessEntry) => string | number | null) =>
      batch.map((entry) => value(entry) ?? NULL).join(SEPARATOR);
    try {
      await sql`
        insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
        select request_id, user_id::uuid, method, route, status::smallint, duration_ms::real,
          ip::inet, to_timestamp(at::float8 / 1000)
        from unnest(
          string_to_array(${column((e) => e.requestId)}, ${SEPARATOR}),
          string_to_array(${column((e) => e.userId)}, ${SEPARATOR}, ${NULL}),
          string_to_array(${column((e) => e.method)}, ${SEPARATOR}),
          string_to_array(${column((e) => e.route)}, ${SEPARATOR}),
          string_to_array(${column((e) => e.status)}, ${SEPARATOR}),
          string_to_array(${column((e) => e.durationMs)}, ${SEPARATOR}),
          string_to_array(${column((e) => e.ip)}, ${SEPARATOR}, ${NULL}),
          string_to_array(${column((e) => e.at)}, ${SEPARATOR})
        ) as entry(request_id, user_id, method, route, status, duration_ms, ip, at)`;
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
