/**
 * /api/messages/:id: edit (author, within the edit window), delete (author, group creator or
 * ADMIN; a tombstone stays) and read marks. SUBSCRIBER and above (see app.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, router, signedIn } from "../openapi.ts";
import { withUser } from "../../_shared/db.ts";

import { claimsOf } from "../session-claims.ts";
import { type MessageJson, messageSchema } from "./message-schema.ts";

export const messages = router();

const idParam = z.object({ id: z.uuid() });

messages.openapi(
  createRoute({
    method: "put",
    path: "/{id}",
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
    // app.edit_message checks the configured length, as app.send_message does for sends.
    const message = await withUser(c.get("deps").sql, claimsOf(c.get("user")!), async (tx) => {
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
    const [row] = await withUser(
      c.get("deps").sql,
      claimsOf(c.get("user")!),
      (tx) => tx<{ deleted_at: Date }[]>`select deleted_at from app.delete_message(${id})`,
    );
    return c.json({ id, deletedAt: row.deleted_at.toISOString() }, 200);
  },
);

messages.openapi(
  createRoute({
    method: "put",
    path: "/{id}/read",
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
