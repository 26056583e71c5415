/**
 * /api/messages/:id: edit (author, within the edit window), delete (author, group creator or
 * ADMIN; a tombstone stays), read marks, reactions and the thread. SUBSCRIBER and above (the
 * gate below). Queries: messaging/messages.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  decodeCursor,
  errors,
  json,
  jsonBody,
  limitParam,
  router,
  signedIn,
} from "../core/openapi.ts";
import { asUser, callerClaims, serverSql } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { deleteMessage, editMessage, listThread, markRead } from "./messages.queries.ts";
import { emojiParam, messageContent, messageSchema, reactionSchema } from "./message.schemas.ts";
import { reactionBatches } from "./reaction-batches.ts";

export const messages = router();

messages.use("*", requireRole("SUBSCRIBER"));

const idParam = z.object({ id: z.uuid() });

messages.openapi(
  createRoute({
    method: "put",
    path: "/{id}",
    operationId: "editMessage",
    summary: "Edit a message (its author, within the edit window)",
    description: "Sets `editedAt` and keeps the earlier version. 403 for another participant, " +
      "422 once the window (a setting, default 15 minutes) has closed or the message is deleted.",
    security: signedIn,
    request: {
      params: idParam,
      body: jsonBody(z.object({ content: messageContent })),
    },
    responses: {
      200: json(messageSchema, "The edited message"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { content } = c.req.valid("json");
    // app.edit_message checks the configured length, as app.send_message does for sends.
    const message = await asUser(c, (tx) => editMessage(tx, id, content));
    return c.json(message, 200);
  },
);

messages.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    operationId: "deleteMessage",
    summary: "Delete a message (author, group creator or ADMIN)",
    description: "Soft: the content and attachments go, a tombstone keeps its place. Deleting " +
      "again answers the same.",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(z.object({ id: z.uuid(), deletedAt: z.string() }), "The tombstone"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    // The attachment rows go with the commit, and their trigger queues `storage.delete` jobs
    // for the files (removed by the job queue's next drain: at once locally, within seconds
    // hosted).
    const row = await asUser(c, (tx) => deleteMessage(tx, id));
    return c.json({ id, deletedAt: row.deleted_at.toISOString() }, 200);
  },
);

messages.openapi(
  createRoute({
    method: "put",
    path: "/{id}/read",
    operationId: "markRead",
    summary: "Mark this message and all before it as read",
    description: "Moves the caller's read watermark forward (never backward); the other " +
      "participants get a `message.read` event.",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(
        z.object({
          conversationId: z.uuid(),
          lastReadMessageId: z.uuid(),
          unreadCount: z.number().int(),
        }),
        "The watermark",
      ),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const watermark = await asUser(c, (tx) => markRead(tx, id));
    return c.json(watermark, 200);
  },
);

// Reactions --------------------------------------------------------------------------------------

const reactionParams = z.object({ id: z.uuid(), emoji: emojiParam });
const reactionsSchema = z.object({
  messageId: z.uuid(),
  reactions: z.array(reactionSchema),
}).openapi("MessageReactions");

for (const present of [true, false]) {
  messages.openapi(
    createRoute({
      method: present ? "put" : "delete",
      path: "/{id}/reactions/{emoji}",
      operationId: present ? "addReaction" : "removeReaction",
      summary: present ? "React to a message with an emoji" : "Take back one's reaction",
      description: present
        ? "Idempotent: adding the same emoji twice counts once. One emoji grapheme, URL-encoded " +
          "(anything else 400); at most 20 different emoji per message (the 21st: 422); never " +
          "on a deleted message (422). Participants only (404 otherwise). The conversation gets " +
          "`message.reactions` with the counts."
        : "Removing a reaction the caller never added is not an error. Participants only (404).",
      security: signedIn,
      request: { params: reactionParams },
      responses: {
        200: json(reactionsSchema, "The message's reactions, `me` for the caller"),
        ...errors(400, 401, 403, 404, ...(present ? [422] as const : [])),
      },
    }),
    async (c) => {
      const { id, emoji } = c.req.valid("param");
      // The hot path: batched per message with the reactions arriving meanwhile, one
      // statement and one commit per batch (messaging/reaction-batches.ts says why).
      const sql = serverSql(c.get("deps"), "message reaction");
      const result = await reactionBatches(sql).set(callerClaims(c), {
        messageId: id,
        emoji,
        present,
      });
      return c.json(result, 200);
    },
  );
}

// The thread -------------------------------------------------------------------------------------

messages.openapi(
  createRoute({
    method: "get",
    path: "/{id}/thread",
    operationId: "listThread",
    summary: "A thread: its root and its replies, oldest first",
    description: "`nextCursor` pages to newer replies. Deleted replies stay as tombstones. A " +
      "reply in a thread has no thread of its own (422).",
    security: signedIn,
    request: {
      params: idParam,
      query: z.object({ limit: limitParam, cursor: z.string().max(200).optional() }),
    },
    responses: {
      200: json(
        z.object({
          root: messageSchema,
          items: z.array(messageSchema),
          nextCursor: z.string().nullable(),
        }),
        "The root and a page of replies",
      ),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const afterSeq = q.cursor ? (decodeCursor(q.cursor, ["number"])[0] as number) : null;
    const page = await asUser(c, (tx) => listThread(tx, id, { afterSeq, limit: q.limit }));
    return c.json(page, 200);
  },
);
