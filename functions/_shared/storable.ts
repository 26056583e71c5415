/**
 * Text from a request made storable, in one place. Postgres refuses NUL in `text` and `jsonb`,
 * and `jsonb` refuses a lone UTF-16 surrogate (a JSON escape such as `\ud800` with no partner),
 * so a record carrying either would be lost whole: an audit event must never be. Both become
 * U+FFFD, the replacement character, which says "something unreadable stood here".
 */

/** The text with NUL and lone surrogates replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.toWellFormed().replaceAll("\u0000", "\ufffd");
}

/**
 * A JSON-like value with every string in it (keys too) made storable; other values as they are.
 *
 * @example
 * sql.json(storable({ reason: "x \ud800" })) // { reason: "x \ufffd" }
 */
export function storable<T>(value: T): T {
  if (typeof value === "string") return storableText(value) as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [storableText(key), storable(item)]),
    ) as T;
  }
  return value;
}
