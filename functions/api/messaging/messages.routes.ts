/**
 * /api/messages/:id: edit (author, within the edit window), delete (author, group creator or
 * ADMIN; a tombstone stays) and read marks. SUBSCRIBER and above (the gate below). Queries:
 * messaging/messages.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { deleteMessage, editMessage, markRead } from "./messages.queries.ts";
import { messageContent, messageSchema } from "./message.schemas.ts";

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
