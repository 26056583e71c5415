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

/**
 * Where the first text Postgres cannot store sits in a JSON-like value (a NUL, or a lone
 * surrogate, in a string or a key): its dotted path, `""` for the value itself, or null when
 * everything is storable. The validation of every route refuses such input with a 400 naming
 * this path (core/openapi.ts), so no request can write half of what it carried.
 *
 * @example
 * unstorablePath({ tags: ["ok", "a\u0000b"] }) // "tags.1"
 */
export function unstorablePath(value: unknown, path = ""): string | null {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  if (typeof value === "string") return storableAsIs(value) ? null : path;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorablePath(item, at(String(index)));
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      if (!storableAsIs(key)) return at(storableText(key));
      const found = unstorablePath(item, at(key));
      if (found !== null) return found;
    }
  }
  return null;
}

function storableAsIs(text: string): boolean {
  return text.isWellFormed() && !text.includes("\u0000");
}
