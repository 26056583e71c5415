/**
 * Where a sign-in may send the browser afterwards (`redirectTo`). The check is made on the URL
 * the browser will follow, not on the string: browsers drop tabs and line breaks anywhere in a URL
 * and leading or trailing spaces and control characters, and read `\` as `/`, so
 * `"/\t/evil.example"` is `//evil.example` to them. So:
 *
 * - anything holding a control character, a backslash or any whitespace (Unicode's too) is
 *   refused outright: a legitimate destination never needs one unescaped;
 * - what remains must be a path (`/` not followed by another `/`) or an absolute http(s) URL;
 * - it is parsed with the WHATWG URL parser (the browsers' own) against the site, and its origin
 *   must be one of the allowed origins; a URL with credentials (`user@`) is refused;
 * - the answer is the parsed, normalized URL, so the `Location` header says exactly what was
 *   checked.
 */

/** C0 controls, DEL, C1 controls, backslash, and every Unicode space or invisible separator. */
// deno-lint-ignore no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\\\s\u180e\u200b-\u200d\u2060\ufeff]/u;

/**
 * The absolute URL to redirect to, or null when `redirectTo` may not be followed.
 *
 * @example
 * safeRedirect("/welcome", { siteUrl: "http://localhost:54321", allowedOrigins: [...] })
 * // "http://localhost:54321/welcome"
 */
export function safeRedirect(
  redirectTo: string,
  opts: { siteUrl: string; allowedOrigins: readonly string[] },
): string | null {
  if (!redirectTo || FORBIDDEN.test(redirectTo)) return null;
  const isPath = redirectTo.startsWith("/") && !redirectTo.startsWith("//");
  if (!isPath && !/^https?:\/\//i.test(redirectTo)) return null;
  let url: URL;
  try {
    url = isPath ? new URL(redirectTo, opts.siteUrl) : new URL(redirectTo);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username || url.password) return null;
  if (!opts.allowedOrigins.includes(url.origin)) return null;
  return url.href;
}
