/**
 * Database access. One pool per process, plus one session connection for LISTEN (`createListener`);
 * user requests reach the database only through
 * `withUser` (role `authenticated` and the JWT claims, set for the transaction only, so RLS
 * decides) or `withAnon`. Handlers call them through `asUser` and `asAnonymous`
 * (functions/api/core/doors.ts), which take the claims the session middleware set; `withUser`
 * directly is for code that has claims but no request. The pool's own rights are used only by
 * the named server paths listed in docs/authorization.md (sign-in, session checks, rate limits,
 * security events, access logs).
 */
import net from "node:net";
import postgres from "postgres";
import type { Logger } from "./logger.ts";
import { isConnectionGone } from "./errors.ts";

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;

/** Claims put into `request.jwt.claims`: what `auth.uid()`, `auth.jwt()` and RLS read. */
export interface DbClaims {
  sub: string;
  role: "authenticated";
  session_id: string;
  email?: string;
  [key: string]: unknown;
}

/**
 * Seconds a connection waits before connecting again after its last one failed: postgres.js's
 * default grows with every failure of any connection of the pool (the count is shared) up to 20 s,
 * so after a three-second restart of Postgres queries waited up to 13 s for a connection. Here it
 * doubles from 50 ms to at most half a second, with jitter so the pool's connections do not all
 * knock at once: the API answers again within a second of Postgres accepting connections
 * (tests/core/database-restart.test.ts), and a database that stays down is asked twice a second
 * per connection, each attempt a refused TCP connect.
 */
function reconnectDelay(failures: number): number {
  return Math.min(0.05 * 2 ** Math.max(0, failures - 1), 0.5) * (0.75 + Math.random() / 4);
}

/**
 * Opens the pool. Notices are dropped; errors surface through the queries that hit them.
 *
 * `prepare`: named prepared statements, parsed once per connection and reused (the default). Off
 * for a transaction-mode pooler (Supavisor's port 6543, PgBouncer's `pool_mode = transaction`):
 * there each transaction may run on another server connection, where a statement prepared on the
 * first does not exist ("prepared statement "…" does not exist") or another client's of the same
 * name does ("… already exists"). Off, every query goes as an unnamed statement, parsed each time
 * (docs/configuration.md#the-connection-budget).
 */
export function createPool(url: string, max: number, opts: { prepare?: boolean } = {}): Sql {
  const options = {
    max,
    prepare: opts.prepare ?? true,
    idle_timeout: 60,
    // A connection opened while the database restarts can stay silent (its packets lost): the
    // queries queued on it wait this long, then fail as 503. Ten times a slow hosted handshake.
    connect_timeout: 5,
    backoff: reconnectDelay,
    onnotice: () => {},
    connection: { application_name: "agora-api" },
    // Documented ("Custom socket" in postgres.js's README) but missing from its type declarations.
    socket: noDelaySocket,
    types: { date: TIMES },
  };
  return postgres(url, options);
}

/**
 * What LISTEN needs: a connection that stays the process's own (a session), which a
 * transaction-mode pooler cannot give (a LISTEN there lands on a server connection that goes back
 * to the pool when the statement ends, and its notifications reach nobody). The event hub, the
 * job worker and the local stack's Realtime gateway and chain funder listen here, never on the
 * pool. postgres.js opens one connection for all of a `Sql`'s channels, on first `listen`, and
 * opens it again after it drops (re-listening every channel); `end` closes it.
 */
export type Listener = Pick<Sql, "listen" | "end">;

/**
 * The process's one session connection, for LISTEN only, at the session URL
 * (`AGORA_DB_SESSION_URL`, falling back to the pool's): a direct connection to Postgres, or a
 * session-mode pooler. Nothing connects until the first `listen`.
 */
export function createListener(url: string): Listener {
  return postgres(url, {
    max: 1,
    connect_timeout: 5,
    backoff: reconnectDelay,
    onnotice: () => {},
    connection: { application_name: "agora-api-listen" },
  });
}

/**
 * postgres.js's own handling of dates and times, but for what it sends: a string goes to Postgres
 * as it is. Its default sends every value of a date or time parameter through a JavaScript
 * `Date`, which keeps milliseconds only: a cursor's time or a `since` of
 * `2026-01-02T03:04:05.123456Z` became `.123`, and rows up to a millisecond off were listed or
 * skipped. Postgres reads the API's ISO strings itself, to the microsecond. Read values are
 * still `Date`s, as before.
 */
const TIMES = {
  to: 1184,
  from: [1082, 1114, 1184],
  serialize: (value: unknown) =>
    typeof value === "string" ? value : (value instanceof Date ? value : new Date(value as number))
      .toISOString(),
  parse: (text: string) => new Date(text),
};

/**
 * A connection's socket with Nagle's algorithm off. postgres.js leaves it on, so a message
 * written while an earlier one is still unacknowledged (a query pipelined behind another, a
 * COPY's end behind its data) waits for the server's delayed ACK: up to 40 ms on Linux. Every
 * message postgres.js writes is a whole protocol unit, so there is nothing for Nagle to merge.
 */
function noDelaySocket(options: { host: string[]; port: number[]; path?: string | false }) {
  const socket = options.path
    ? net.connect(options.path)
    : net.connect(options.port[0], options.host[0]);
  socket.setNoDelay(true);
  return socket;
}

/**
 * Runs `fn` in one transaction as the signed-in user: role `authenticated` and the claims are
 * set with `set_config(..., true)`, so they end with the transaction and never leak to the next
 * user of the pooled connection.
 *
 * @example
 * const rows = await withUser(sql, claims, (tx) => tx`select id from app.users`);
 */
export function withUser<T>(sql: Sql, claims: DbClaims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return sql.begin((tx) => {
    // Not awaited: the claims travel in the same round trip as the first query of `fn`
    // (postgres.js pipelines queries on the connection, in order). Should it fail, the
    // transaction is aborted and every later statement fails with it: nothing runs unclaimed.
    tx`select set_config('role', 'authenticated', true),
              set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`.catch(() => {});
    return fn(tx);
  }) as Promise<T>;
}

/** Runs `fn` in one transaction as an anonymous visitor (role `anon`). */
export function withAnon<T>(sql: Sql, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    await tx`select set_config('role', 'anon', true),
                    set_config('request.jwt.claims', '{"role":"anon"}', true)`;
    return await fn(tx);
  }) as Promise<T>;
}

/**
 * Keeps the process alive through postgres.js 3.4.9's one known uncatchable fault, for where
 * patches/ does not apply (hosted Edge Functions resolve `npm:postgres` themselves). When a
 * connection closes while a transaction is running, the driver sends the transaction's `rollback`
 * on it anyway and schedules the write on a timer; the timer finds the socket gone and throws a
 * TypeError no caller can catch, which ends the process with every request in it
 * (patches/README.md). The patched driver settles that query with `CONNECTION_CLOSED` instead;
 * this guard is the second line: it stops exactly that error (a TypeError raised in the driver's
 * `nextWrite`) from ending the process, logs it, and leaves every other uncaught error fatal;
 * likewise a rejection nobody handled whose error says the database connection is gone.
 * Installed once per process by the entry points (functions/api/index.ts, stack/cli.ts).
 */
export function guardDriverFaults(log: Logger): void {
  if (guarded) return;
  guarded = true;
  globalThis.addEventListener("error", (event) => {
    if (!isDriverWriteAfterClose(event.error)) return;
    event.preventDefault();
    log("error", "database driver: a write after its connection closed was dropped", {
      error: String(event.error),
    });
  });
  // A connection's end that reached a promise nobody awaited any more (seen once in a few
  // hundred restarts: EPIPE, "This socket has been ended by the other party"): the request it
  // belonged to has already failed with 503; ending the process would fail every other one.
  globalThis.addEventListener("unhandledrejection", (event) => {
    if (!isConnectionGone(event.reason)) return;
    event.preventDefault();
    log("warn", "database: a connection ended under a promise nobody awaited", {
      error: String(event.reason),
    });
  });
}
let guarded = false;

/** The driver's write-after-close fault (see `guardDriverFaults`). */
export function isDriverWriteAfterClose(err: unknown): boolean {
  return err instanceof TypeError && /\bnextWrite\b[^\n]*postgres/.test(err.stack ?? "");
}
