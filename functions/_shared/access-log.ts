/**
 * The access log of /api requests, written off the request path: entries are queued in memory
 * and flushed in one multi-row insert every `intervalMs` or when `batchSize` entries wait. A
 * request never waits for its log line. On shutdown, `close()` flushes what is left.
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
  at: Date;
}

export interface AccessLog {
  push(entry: AccessEntry): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

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
        select * from unnest(
          ${sql.array(batch.map((e) => e.requestId))}::text[],
          ${sql.array(batch.map((e) => e.userId) as string[])}::uuid[],
          ${sql.array(batch.map((e) => e.method))}::text[],
          ${sql.array(batch.map((e) => e.route))}::text[],
          ${sql.array(batch.map((e) => e.status))}::smallint[],
          ${sql.array(batch.map((e) => e.durationMs))}::real[],
          ${sql.array(batch.map((e) => e.ip) as string[])}::inet[],
          ${sql.array(batch.map((e) => e.at.toISOString()))}::timestamptz[]
        )`;
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
    close: flush,
  };
}
