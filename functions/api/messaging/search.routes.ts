/**
 * GET /api/messages/search: the messages the caller can read now that contain every word of the
 * query, best match first, then newest, each with a highlighted excerpt. SUBSCRIBER and above
 * (the gate below). Queries: messaging/search.queries.ts; the index and the plan: docs/search.md.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, limitParam, pageOf, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { messageSchema } from "./message.schemas.ts";
import { searchCursor, searchMessages, searchTerms } from "./search.queries.ts";

export const messageSearch = router();

messageSearch.use("*", requireRole("SUBSCRIBER"));

const searchResult = z.object({
  message: messageSchema,
  conversation: z.object({
    id: z.uuid(),
    type: z.enum(["direct", "group"]),
    title: z.string().nullable(),
  }),
  highlight: z.string().openapi({
    description: "An excerpt of the message around the first match: every match wrapped in " +
      "`<mark>`, every other character HTML-escaped (`&amp;`, `&lt;`, `&gt;`, `&quot;`, " +
      "`&#39;`), so it may be shown as HTML as it is; `…` where the excerpt cuts the text",
    example: "…see you at the <mark>meeting</mark> &amp; bring &lt;notes&gt;",
  }),
}).openapi("MessageSearchResult");

messageSearch.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "searchMessages",
    summary: "Search the messages the caller can read",
    description: "Case-insensitive, in any language: every word of `q` that has at least 3 " +
      "characters must occur in the message (as a word, the start of a word, or inside one: " +
      "Japanese and Chinese need no spaces); shorter words are left out, and a query with no " +
      "such word is 400. Only the conversations the caller is in now, never a deleted message; " +
      "`conversationId` narrows to one of them (404 for a conversation the caller is not in). " +
      "Best match first (whole words before word starts before inside a word), then newest.",
    security: signedIn,
    request: {
      query: z.object({
        q: z.string().max(500).openapi({ example: "meeting" }),
        conversationId: z.uuid().optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(pageOf(searchResult), "A page of results"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const terms = searchTerms(q.q);
    const cursor = searchCursor(q.cursor);
    const page = await asUser(
      c,
      (tx) =>
        searchMessages(tx, { terms, conversationId: q.conversationId, cursor, limit: q.limit }),
    );
    return c.json(page, 200);
  },
);
