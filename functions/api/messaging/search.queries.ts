/**
 * Message search (GET /api/messages/search, messaging/search.routes.ts). The search itself is
 * `app.search_messages` (security definer: restricted to the caller's current conversations, so
 * that the trigram index can serve it; docs/search.md); the messages, their conversations and
 * attachments are then read as the caller, under RLS, in the same statement.
 */
import type { Tx } from "../../_shared/db.ts";
import { badRequest, notFound } from "../../_shared/errors.ts";
import { decodeCursor, encodeCursor } from "../core/openapi.ts";
import type { MessageJson } from "./message.schemas.ts";

/** A term is at least this many characters (code points) long; trigrams need three. */
export const MIN_TERM_CHARS = 3;
/** At most this many terms in a search. */
export const MAX_TERMS = 8;

/** The cursor of a search page: the last row's score, created_at (as text) and id. */
export type SearchCursor = [number, string, string];

/**
 * The terms of a search: its words (split on white space, NFC), each at least MIN_TERM_CHARS
 * characters; shorter words are left out ("at 5 pm" searches for nothing it could index), and
 * a search with no term left is 400.
 */
export function searchTerms(q: string): string[] {
  const words = q.normalize("NFC").trim().split(/\s+/u).filter(Boolean);
  const terms = [...new Set(words.filter((w) => [...w].length >= MIN_TERM_CHARS))];
  if (!terms.length) {
    throw badRequest(`Search for at least ${MIN_TERM_CHARS} characters.`, [
      { path: "q", message: `needs a word of at least ${MIN_TERM_CHARS} characters` },
    ]);
  }
  if (terms.length > MAX_TERMS) {
    throw badRequest(`Search for at most ${MAX_TERMS} words.`, [
      { path: "q", message: `at most ${MAX_TERMS} words of ${MIN_TERM_CHARS} or more characters` },
    ]);
  }
  return terms;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A search page's cursor, or null on the first page; 400 for anything else. */
export function searchCursor(cursor: string | undefined): SearchCursor | null {
  if (!cursor) return null;
  const key = decodeCursor(cursor, ["number", "string", "string"]) as SearchCursor;
  if (!Number.isInteger(key[0]) || !TIMESTAMP.test(key[1]) || !UUID.test(key[2])) {
    throw badRequest("Invalid cursor.", [{
      path: "cursor",
      message: "not a cursor from this list",
    }]);
  }
  return key;
}

/** HTML-escapes every character that means something in HTML text or an attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]);
}

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** How much of a message a highlight shows: about this many characters around the first match. */
const EXCERPT_CHARS = 160;
const EXCERPT_BEFORE = 40;

/**
 * The highlight of a message: an excerpt around the first match, every occurrence of every term
 * wrapped in `<mark>`, every other character HTML-escaped ("…" where the excerpt cuts the text).
 * Matching compares character by character in lower case (code points, so an emoji or a CJK
 * character is never split).
 */
export function highlight(content: string, terms: string[]): string {
  const chars = [...content];
  const lower = chars.map((ch) => ch.toLowerCase());
  const marked = new Array<boolean>(chars.length).fill(false);
  for (const term of terms) {
    const t = [...term].map((ch) => ch.toLowerCase());
    for (let i = 0; i + t.length <= lower.length; i++) {
      let j = 0;
      while (j < t.length && lower[i + j] === t[j]) j++;
      if (j === t.length) marked.fill(true, i, i + t.length);
    }
  }
  const first = Math.max(0, marked.indexOf(true));
  let start = Math.max(0, first - EXCERPT_BEFORE);
  const end = Math.min(chars.length, start + EXCERPT_CHARS);
  start = Math.max(0, Math.min(start, end - EXCERPT_CHARS));
  let out = start > 0 ? "…" : "";
  for (let i = start; i < end;) {
    let k = i;
    while (k < end && marked[k] === marked[i]) k++;
    const text = escapeHtml(chars.slice(i, k).join(""));
    out += marked[i] ? `<mark>${text}</mark>` : text;
    i = k;
  }
  return out + (end < chars.length ? "…" : "");
}

interface SearchRow {
  message: MessageJson;
  conversation: { id: string; type: "direct" | "group"; title: string | null };
  score: number;
  created_key: string;
  id: string;
}

/**
 * A page of search results, best match first, then newest: `{ message, conversation, highlight }`
 * items and the next page's cursor. 404 when `conversationId` is not one of the caller's.
 */
export async function searchMessages(
  tx: Tx,
  q: { terms: string[]; conversationId?: string; cursor: SearchCursor | null; limit: number },
) {
  if (q.conversationId) {
    // Checked here as well as in app.search_messages: the statement below need not run the
    // function at all (with no conversation visible to the caller, the planner may read the
    // empty side of a join first and skip it), and then its AG404 would never be raised.
    const [visible] = await tx`select id from app.conversations where id = ${q.conversationId}`;
    if (!visible) throw notFound("Conversation not found.");
  }
  const [score, createdAt, id] = q.cursor ?? [null, null, null];
  // The matches, then their messages' JSON in one call (app.messages_json), as the caller.
  const rows = await tx<SearchRow[]>`
    with s as materialized (
      select * from app.search_messages(${q.terms}::text[], ${q.conversationId ?? null}::uuid,
        ${score}::integer, ${createdAt}::timestamptz, ${id}::uuid, ${q.limit + 1})
    )
    select j.json as message,
      jsonb_build_object('id', c.id, 'type', c.type, 'title', c.title) as conversation,
      s.score, s.created_at::text as created_key, s.message_id as id
    from s
    join app.messages_json(array(select s.message_id from s)) j on j.id = s.message_id
    join app.conversations c on c.id = j.conversation_id
    order by s.score desc, s.created_at desc, s.message_id desc`;
  // The search's last row decides whether another page exists, even if RLS hid a row of it.
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    items: page.map((r) => ({
      message: r.message,
      conversation: r.conversation,
      highlight: highlight(r.message.content, q.terms),
    })),
    nextCursor: rows.length > q.limit && last
      ? encodeCursor([last.score, last.created_key, last.id])
      : null,
  };
}
