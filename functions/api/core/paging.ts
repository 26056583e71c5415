/**
 * Pieces the query modules share: optional filters, `like` patterns and keyset pages. Each query
 * stays one tagged template (postgres.js sends the values as parameters; nothing here builds SQL
 * from strings).
 */
import type postgres from "postgres";
import type { Sql, Tx } from "../../_shared/db.ts";
import { encodeCursor } from "./openapi.ts";

/** A piece of a query (`tx\`…\``), put inside another query: postgres.js sends it with it. */
export type Fragment = postgres.Fragment;

/**
 * The condition built from `value` when a filter was given, or null when it was not (`undefined`
 * or `null`): for `where`. Only the filters that were given reach the query, so Postgres plans
 * each combination for what it asks (an index on the filtered column can be used), instead of a
 * `($1 is null or col = $1)` that one plan must serve for every combination.
 *
 * @example
 * ifGiven(q.userId, (id) => tx`user_id = ${id}::uuid`)
 */
export function ifGiven<T>(
  value: T | null | undefined,
  condition: (value: T) => Fragment,
): Fragment | null {
  return value === undefined || value === null ? null : condition(value);
}

/**
 * `where a and b and …` of the conditions that apply (nulls are left out); nothing at all when
 * none apply.
 *
 * @example
 * await tx`
 *   select id from app.security_events
 *   ${where(tx, [
 *     ifGiven(q.type, (type) => tx`type = ${type}`),
 *     ifGiven(q.from, (from) => tx`created_at >= ${from}::timestamptz`),
 *   ])}
 *   order by created_at desc, id desc`;
 */
export function where(db: Sql | Tx, conditions: (Fragment | null)[]): Fragment {
  const given = conditions.filter((condition) => condition !== null);
  if (!given.length) return db``;
  const joined = given.slice(1).reduce((all, condition) => db`${all} and ${condition}`, given[0]);
  return db`where ${joined}`;
}

/**
 * The `like` pattern matching `search` anywhere, case-insensitively (compare it with a
 * `lower(...)` column), with `%`, `_` and `\` in the search taken literally; null without a
 * search, for `ifGiven`.
 *
 * @example
 * likePattern("50%_off") // "%50\\%\\_off%"
 * ifGiven(likePattern(q.search), (p) => tx`lower(name) like ${p}`)
 */
export function likePattern(search: string | null | undefined): string | null {
  if (!search) return null;
  return `%${search.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`;
}

/**
 * One page of a keyset list. The query asks for `limit + 1` rows (`pageLimit`): the extra row is
 * never shown, it only says that another page exists. The cursor is the key of the page's last
 * row, so the next page starts right after it whatever was inserted meanwhile.
 *
 * @example
 * const rows = await tx<Row[]>`… order by created_at desc, id desc limit ${pageLimit(q.limit)}`;
 * const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
 * return { items: page.map(toItem), nextCursor };
 */
export function slicePage<R>(
  rows: readonly R[],
  limit: number,
  keyOf: (last: R) => unknown[],
): { rows: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rows: page,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(keyOf(last)) : null,
  };
}

/** The rows a page query asks for: one more than it shows (see `slicePage`). */
export function pageLimit(limit: number): number {
  return limit + 1;
}

/**
 * The client's address and user agent for what SQL records in this transaction (security events
 * written by `app_private.record_security_event`, role changes by their trigger): the settings
 * `agora.client_ip` and `agora.user_agent`, for the transaction only.
 *
 * @example
 * await setClient(tx, { ip: c.get("ip"), userAgent: c.get("userAgent") });
 * await tx`select * from app.change_user_status(${id}, ${status}, ${reason})`;
 */
export async function setClient(
  db: Tx,
  client: { ip: string | null; userAgent: string | null },
): Promise<void> {
  await db`select set_config('agora.client_ip', ${client.ip ?? ""}, true),
                  set_config('agora.user_agent', ${client.userAgent ?? ""}, true)`;
}
