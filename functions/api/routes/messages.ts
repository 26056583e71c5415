/**
 * /api/messages/:id: edit (author, within the edit window), delete (author, group creator or
 * ADMIN; a tombstone stays) and read marks. SUBSCRIBER and above (see app.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, router, signedIn } from "../openapi.ts";
import { withUser } from "../../_shared/db.ts";
import { badRequest } from "../../_shared/errors.ts";
import { claimsOf } from "../session-claims.ts";
import { sweepStorage } from "../storage-sweeper.ts";
import { type MessageJson, messageSchema } from "./message-schema.ts";

export const messages = router();

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
      body: jsonBody(z.object({ content: z.string().min(1).max(10_000) })),
    },
    responses: {
      200: json(messageSchema, "The edited message"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { content } = c.req.valid("json");
    const message = await withUser(c.get("deps").sql, claimsOf(c.get("user")!), async (tx) => {
      const [{ max }] = await tx<{ max: number }[]>`
        select app.config_int('limits', 'messageMaxLength', 10000) as max`;
      if (content.length > max) {
        throw badRequest(`A message has at most ${max} characters.`, [{
          path: "content",
          message: `at most ${max} characters`,
        }]);
      }
      const [row] = await tx<
        { json: MessageJson }[]
      >`select app.edit_message(${id}, ${content}) as json`;
      return row.json;
    });
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
    const deps = c.get("deps");
    const [row] = await withUser(
      deps.sql,
      claimsOf(c.get("user")!),
      (tx) =>
        tx<{ deleted_at: Date; storage_keys: string[] }[]>`select * from app.delete_message(${id})`,
    );
    // The rows went with the commit and queued their files; remove them now (a failure stays
    // queued for the next sweep).
    if (row.storage_keys.length) await sweepStorage(deps);
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
    const [row] = await withUser(
      c.get("deps").sql,
      claimsOf(c.get("user")!),
      (tx) =>
        tx<{ conversation_id: string; last_read_message_id: string; unread_count: number }[]>`
        select conversation_id, last_read_message_id, unread_count::int from app.mark_read(${id})`,
    );
    return c.json({
      conversationId: row.conversation_id,
      lastReadMessageId: row.last_read_message_id,
      unreadCount: row.unread_count,
    }, 200);
  },
);
