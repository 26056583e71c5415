/**
 * The chat's message search: a search box above the conversation list; while it holds a query,
 * the results (best match first, then newest) take the list's place, each with its highlighted
 * excerpt and a link to its conversation.
 *
 * The highlight comes HTML-escaped with `<mark>` as its only markup. It is never given to the
 * page as HTML: `Highlight` splits it at the `<mark>` tags and turns the five entities the API
 * writes back into text, so whatever a message holds is shown as text, and only the marks are
 * elements.
 */
import { client, data, describeError } from "../../lib/client.ts";
import { useEffect, useState } from "preact/hooks";
import { Link } from "../../lib/router.tsx";
import { shortTime } from "../../lib/format.ts";
import type { SearchResult } from "./types.ts";

const MIN_CHARS = 3;
const DEBOUNCE_MS = 250;

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
};

/** The text of an escaped piece: the API's five entities back to characters, nothing else. */
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]);

/** A highlight as text and `<mark>` elements (see the header). */
export function Highlight({ html }: { html: string }) {
  const parts = html.split(/(<mark>[\s\S]*?<\/mark>)/);
  return (
    <span class="search-highlight">
      {parts.map((part, i) =>
        part.startsWith("<mark>") && part.endsWith("</mark>")
          ? <mark key={i}>{unescape(part.slice(6, -7))}</mark>
          : unescape(part)
      )}
    </span>
  );
}

/** Whether `q` has a word the API searches for (at least three characters). */
export const searchable = (q: string) =>
  q.trim().split(/\s+/).some((w) => [...w].length >= MIN_CHARS);

export function MessageSearch(
  { query, onQuery }: { query: string; onQuery: (q: string) => void },
) {
  return (
    <form role="search" class="chat-search" onSubmit={(e) => e.preventDefault()}>
      <label class="visually-hidden" for="message-search">Search messages</label>
      <input
        id="message-search"
        type="search"
        placeholder="Search messages"
        value={query}
        maxLength={200}
        onInput={(e) => onQuery(e.currentTarget.value)}
      />
    </form>
  );
}

export function SearchResults({ query }: { query: string }) {
  const [results, setResults] = useState<SearchResult[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [next, setNext] = useState<string | null>(null);

  useEffect(() => {
    setResults(null);
    setError(null);
    if (!searchable(query)) return;
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const page = data(
          await client.GET("/api/messages/search", {
            params: { query: { q: query.trim(), limit: 20 } },
            signal: controller.signal,
          }),
        );
        setResults(page.items);
        setNext(page.nextCursor);
      } catch (err) {
        if (!controller.signal.aborted) setError(describeError(err));
      }
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [query]);

  async function more() {
    if (!next) return;
    try {
      const page = data(
        await client.GET("/api/messages/search", {
          params: { query: { q: query.trim(), limit: 20, ...(next ? { cursor: next } : {}) } },
        }),
      );
      setResults((list) => [...(list ?? []), ...page.items]);
      setNext(page.nextCursor);
    } catch (err) {
      setError(describeError(err));
    }
  }

  if (!searchable(query)) {
    return <p class="muted">Type at least {MIN_CHARS} characters to search your messages.</p>;
  }
  if (error) return <p class="error" role="alert">{error}</p>;
  if (results === null) return <p class="muted" role="status">Searching…</p>;
  if (!results.length) return <p class="muted" role="status">No messages found.</p>;
  return (
    <div>
      <ul class="search-results" data-testid="search-results" aria-label="Search results">
        {results.map((r) => (
          <li key={r.message.id}>
            <Link
              href={`/chat/${r.conversation.id}`}
              class="search-result"
              data-message-id={r.message.id}
            >
              <span class="conversation-top">
                <span class="conversation-name">
                  {r.conversation.title ?? "Direct conversation"}
                </span>
                <time dateTime={r.message.createdAt}>{shortTime(r.message.createdAt)}</time>
              </span>
              <Highlight html={r.highlight} />
            </Link>
          </li>
        ))}
      </ul>
      {next && <button type="button" onClick={() => void more()}>More results</button>}
    </div>
  );
}
