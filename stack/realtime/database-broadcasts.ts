/**
 * The local gateway's feed of database broadcasts: the rows `realtime.send()` commits to
 * `realtime.messages`, announced by `pg_notify('realtime_messages', …)` (sql/local/20_realtime.sql)
 * on the process's session connection.
 *
 * A NOTIFY reaches only a connection that listens when the transaction commits. When Postgres
 * restarts, the API's pool reconnects on the next request while the session connection is still
 * reconnecting: a message sent in that moment is committed, announced to nobody, and a client
 * whose WebSocket to the gateway stayed open never learns that it missed it (its next event may
 * be hours away). Hosted Realtime reads these rows from the write-ahead log and misses none; here,
 * every time the channel is listened to again (postgres.js re-listens after a reconnection), the
 * rows inserted since shortly before the newest one delivered are read from the table, and those
 * not delivered yet go out then, in insertion order. Ids delivered within that margin are
 * remembered, so a row is delivered once whether it came by NOTIFY, by the catch-up or both.
 */
import type { Listener, Sql } from "../../functions/_shared/db.ts";
import type { Logger } from "../../functions/_shared/logger.ts";

/** A `realtime.messages` row as the gateway delivers it. */
export interface BroadcastRow {
  id: string;
  topic: string;
  event: string | null;
  private: boolean;
  extension: string;
  payload: unknown;
  /** `inserted_at` as Postgres prints a `timestamp` (the database's clock). */
  insertedAt: string;
}

export interface DatabaseBroadcasts {
  /** Resolves once the channel is listened to. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * How far before the newest delivered row a catch-up reads: a transaction that inserted its row
 * earlier but committed later (its NOTIFY comes at commit) is still found, up to this long.
 */
export const CATCH_UP_MARGIN_MS = 10_000;
const CATCH_UP_LIMIT = 10_000;

/** Milliseconds of a `timestamp` text, for comparing two of them (both in the database's zone). */
const millis = (timestamp: string) => Date.parse(timestamp.replace(" ", "T") + "Z");

export function databaseBroadcasts(options: {
  sql: Sql;
  listener: Pick<Listener, "listen">;
  log: Logger;
  /** Delivers one broadcast row (extension `broadcast`) to the gateway's subscribers. */
  deliver(row: BroadcastRow): void;
}): DatabaseBroadcasts {
  const { sql, log } = options;
  /** Ids delivered, with their `inserted_at` in milliseconds, within the margin of the newest. */
  const delivered = new Map<string, number>();
  let newest: string | null = null;
  /** The database's clock at the first listen: nothing before it is this process's to deliver. */
  let firstListen: Promise<string | null> | null = null;
  const databaseNow = () =>
    sql<{ now: string }[]>`select localtimestamp::text as now`.then((r) => r[0].now);
  let closed = false;
  let catchingUp: Promise<void> | null = null;

  const deliverOnce = (row: BroadcastRow) => {
    if (row.extension !== "broadcast" || typeof row.topic !== "string") return;
    if (delivered.has(row.id)) return;
    const at = millis(row.insertedAt);
    delivered.set(row.id, at);
    if (newest === null || at > millis(newest)) newest = row.insertedAt;
    if (delivered.size > 1_000) {
      const horizon = millis(newest) - CATCH_UP_MARGIN_MS;
      for (const [id, t] of delivered) if (t < horizon) delivered.delete(id);
    }
    options.deliver(row);
  };

  const readRows = (where: "id" | "since", value: string) =>
    sql<BroadcastRow[]>`
      select id, topic, event, private, extension, payload, inserted_at::text as "insertedAt"
      from realtime.messages
      where extension = 'broadcast' and ${
      where === "id"
        ? sql`id = ${value}::uuid`
        : sql`inserted_at >= ${value}::timestamp - make_interval(secs => ${
          CATCH_UP_MARGIN_MS / 1000
        })`
    }
      order by inserted_at, id
      limit ${CATCH_UP_LIMIT}`;

  const onNotify = async (text: string) => {
    try {
      const row = JSON.parse(text) as Partial<BroadcastRow> & { id: string };
      // Over NOTIFY's size limit the notification carries the id only: the row is read.
      if (row.topic === undefined || row.insertedAt === undefined) {
        for (const full of await readRows("id", row.id)) deliverOnce(full);
      } else {
        deliverOnce({ private: false, event: null, payload: null, ...row } as BroadcastRow);
      }
    } catch (err) {
      log("warn", "database broadcast not delivered", { error: String(err) });
    }
  };

  /** Delivers what was committed while nobody listened (after the first listen only). */
  const catchUp = async () => {
    for (let attempt = 0; !closed; attempt++) {
      try {
        const since = newest ?? (await firstListen) ?? await databaseNow();
        const rows = await readRows("since", since);
        for (const row of rows) deliverOnce(row);
        if (rows.length === CATCH_UP_LIMIT) {
          log("warn", "database broadcast catch-up stopped at its limit", { rows: rows.length });
        }
        return;
      } catch (err) {
        if (attempt === 0) {
          log("warn", "database broadcast catch-up failed; trying again", { error: String(err) });
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 5_000)));
      }
    }
  };

  const onListen = () => {
    if (firstListen === null) {
      firstListen = databaseNow().catch(() => null);
      return;
    }
    catchingUp = (catchingUp ?? Promise.resolve()).then(catchUp);
  };

  const handle = options.listener.listen(
    "realtime_messages",
    (text) => void onNotify(text),
    onListen,
  );
  return {
    ready: handle.then(() => {}),
    async close() {
      closed = true;
      await (await handle.catch(() => null))?.unlisten().catch(() => {});
      await catchingUp?.catch(() => {});
    },
  };
}
