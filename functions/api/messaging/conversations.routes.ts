/**
 * /api/conversations: list and create conversations, read and send messages, typing, and the
 * group creator's participant changes. SUBSCRIBER and above (the gate below); every query runs
 * as the user, so RLS decides what exists: a conversation the caller is not in is a 404.
 * Queries: messaging/conversations.queries.ts and messaging/messages.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../core/context.ts";
import {
  decodeCursor,
  errors,
  json,
  jsonBody,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { badRequest } from "../../_shared/errors.ts";
import { sha256Hex } from "../../_shared/crypto.ts";
import { asUser, callerClaims, serverSql } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import {
  addParticipants,
  createConversation,
  listConversations,
  removeParticipant,
  sendTyping,
} from "./conversations.queries.ts";
import { listMessages, markUnread, type MessageCursor, sendMessageAs } from "./messages.queries.ts";
import { messageContent, messageSchema } from "./message.schemas.ts";

export const conversations = router();

conversations.use("*", requireRole("SUBSCRIBER"));

const uuidParam = z.object({ id: z.uuid() });

const participantSchema = z.object({
  userId: z.uuid(),
  name: z.string(),
  image: z.string().nullable(),
  role: z.enum(ROLES),
});

const lastMessageSchema = z.object({
  id: z.uuid(),
  senderId: z.uuid().nullable(),
  content: z.string().openapi({ description: "The first 280 characters" }),
  attachmentCount: z.number().int(),
  createdAt: z.string(),
  deletedAt: z.string().nullable(),
}).nullable();

export const conversationSchema = z.object({
  id: z.uuid(),
  type: z.enum(["direct", "group"]),
  title: z.string().nullable(),
  createdBy: z.uuid().nullable(),
  participants: z.array(participantSchema),
  lastMessage: lastMessageSchema,
  unreadCount: z.number().int(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime().openapi({ description: "Time of the latest activity" }),
}).openapi("Conversation");

// GET /api/conversations -----------------------------------------------------------------------

conversations.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listConversations",
    summary: "The caller's conversations, newest activity first",
    description: "`search` matches the title or a participant's name. Each item has the last " +
      "message's preview and the caller's unread count.",
    security: signedIn,
    request: {
      query: z.object({
        limit: limitParam,
        cursor: z.string().max(500).optional(),
        type: z.enum(["direct", "group"]).optional(),
        search: z.string().trim().min(1).max(200).optional(),
      }),
    },
    responses: {
      200: json(
        pageOf(conversationSchema),
        "A page",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const page = await asUser(
      c,
      (tx) => listConversations(tx, { type: q.type, search: q.search, after, limit: q.limit }),
    );
    return c.json(page, 200);
  },
);

// POST /api/conversations ----------------------------------------------------------------------

conversations.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createConversation",
    summary: "Create a conversation",
    description: "Direct: exactly one other person; creating it again, from either side, " +
      "returns the existing one (200). Group: a title and up to 100 participants; the caller " +
      "becomes its creator.",
    security: signedIn,
    request: {
      body: jsonBody(z.object({
        type: z.enum(["direct", "group"]),
        participantIds: z.array(z.uuid()).min(1).max(99),
        title: z.string().trim().min(1).max(200).optional(),
      })),
    },
    responses: {
      200: json(conversationSchema, "The existing direct conversation"),
      201: json(conversationSchema, "Created"),
      ...errors(400, 401, 403, 422),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const result = await asUser(c, (tx) =>
      createConversation(tx, {
        type: body.type,
        participantIds: body.participantIds,
        title: body.title ?? null,
      }));
    return c.json(result.conversation, result.created ? 201 : 200);
  },
);

// GET /api/conversations/:id/messages ----------------------------------------------------------

conversations.openapi(
  createRoute({
    method: "get",
    path: "/{id}/messages",
    operationId: "listMessages",
    summary: "Messages of a conversation",
    description: "Newest first; `nextCursor` pages to older messages. With `after=<messageId>`, " +
      "the messages newer than that one, oldest first (`nextCursor` continues the catch-up). " +
      "Deleted messages stay as tombstones. Replies in threads are not listed here (see " +
      "`GET /api/messages/{id}/thread`).",
    security: signedIn,
    request: {
      params: uuidParam,
      query: z.object({
        limit: limitParam,
        cursor: z.string().max(200).optional(),
        after: z.uuid().optional(),
      }),
    },
    responses: {
      200: json(
        pageOf(messageSchema),
        "A page",
      ),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    let cursor: MessageCursor | null = null;
    if (q.cursor) {
      const decoded = decodeCursor(q.cursor, ["string", "number"]) as MessageCursor;
      if (decoded[0] !== "before" && decoded[0] !== "after") throw badRequest("Invalid cursor.");
      cursor = decoded;
    }
    const page = await asUser(
      c,
      (tx) => listMessages(tx, id, { cursor, after: q.after, limit: q.limit }),
    );
    return c.json(page, 200);
  },
);

// POST /api/conversations/:id/messages ---------------------------------------------------------

const sendMessageBody = z.object({
  content: messageContent,
  replyToId: z.uuid().optional(),
  attachmentIds: z.array(z.uuid()).max(10).optional(),
  threadId: z.uuid().optional().openapi({
    description: "Reply in this thread: a root message of the same conversation that is not " +
      "itself a reply in a thread (422 otherwise)",
  }),
  mentions: z.array(z.uuid()).max(50).optional().openapi({
    description: "People this message mentions: participants of the conversation only (422 " +
      'otherwise). Each gets a MESSAGE notification with `data.kind = "mention"`, unless they ' +
      "muted the conversation or block the sender",
  }),
});

conversations.openapi(
  createRoute({
    method: "post",
    path: "/{id}/messages",
    operationId: "sendMessage",
    summary: "Send a message",
    description: "With `Idempotency-Key`, the same key and body within 24 h replay the first " +
      "response; the same key with another body is 409. Attachments must be the caller's own " +
      "uploads, not yet attached.",
    security: signedIn,
    request: {
      params: uuidParam,
      headers: z.object({ "idempotency-key": z.string().min(1).max(255).optional() }),
      body: jsonBody(sendMessageBody),
    },
    responses: { 201: json(messageSchema, "The message"), ...errors(400, 401, 403, 404, 409, 422) },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const key = c.req.valid("header")["idempotency-key"] ?? null;
    const attachmentIds = [...new Set(body.attachmentIds ?? [])];
    const hash = key
      ? await sha256Hex(JSON.stringify([
        id,
        body.content,
        body.replyToId ?? null,
        attachmentIds,
        // Only when given: a key sent before threads existed keeps its hash.
        ...(body.threadId ? [body.threadId] : []),
        ...(body.mentions?.length ? [{ mentions: body.mentions }] : []),
      ]))
      : null;
    // The hot path: one statement as the caller (messaging/messages.queries.ts says why).
    const sql = serverSql(c.get("deps"), "message send");
    const message = await sendMessageAs(sql, callerClaims(c), {
      conversationId: id,
      content: body.content,
      replyToId: body.replyToId ?? null,
      attachmentIds,
      idempotencyKey: key,
      requestHash: hash,
      threadId: body.threadId ?? null,
      mentions: body.mentions ?? [],
    });
    return c.json(message, 201);
  },
);

// POST /api/conversations/:id/typing -----------------------------------------------------------

conversations.openapi(
  createRoute({
    method: "post",
    path: "/{id}/typing",
    operationId: "sendTyping",
    summary: "Say the caller is (or stopped) typing",
    description: "An ephemeral `typing` event to live subscribers, never stored, expiring after " +
      "about 5 s. Throttled per user and conversation: extra calls are accepted and dropped " +
      "(`sent: false`).",
    security: signedIn,
    request: { params: uuidParam, body: jsonBody(z.object({ isTyping: z.boolean() })) },
    responses: {
      202: json(z.object({ expiresAt: z.iso.datetime(), sent: z.boolean() }), "Accepted"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { isTyping } = c.req.valid("json");
    const throttleMs = c.get("deps").settings.typingThrottleMs;
    const sent = await asUser(c, (tx) => sendTyping(tx, id, isTyping, throttleMs));
    return c.json({ expiresAt: new Date(Date.now() + 5_000).toISOString(), sent }, 202);
  },
);

// PUT /api/conversations/:id/unread -------------------------------------------------------------

conversations.openapi(
  createRoute({
    method: "put",
    path: "/{id}/unread",
    operationId: "markUnread",
    summary: "Mark a conversation unread from a message on",
    description: "Moves the caller's read mark back to just before `fromMessageId` (the " +
      "message before it, or no mark before the first), so that message and every later one " +
      "count as unread again; a mark already before it stays. Participants only: 404 for a " +
      "conversation the caller is not in and for a message they cannot see, 422 for a message " +
      "of another conversation of theirs. The other participants get no event.",
    security: signedIn,
    request: { params: uuidParam, body: jsonBody(z.object({ fromMessageId: z.uuid() })) },
    responses: {
      200: json(
        z.object({
          conversationId: z.uuid(),
          lastReadMessageId: z.uuid().nullable(),
          unreadCount: z.number().int(),
        }),
        "The watermark",
      ),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { fromMessageId } = c.req.valid("json");
    const watermark = await asUser(c, (tx) => markUnread(tx, id, fromMessageId));
    return c.json(watermark, 200);
  },
);

// Participants (group creator) -----------------------------------------------------------------

conversations.openapi(
  createRoute({
    method: "post",
    path: "/{id}/participants",
    operationId: "addParticipants",
    summary: "Add people to a group (its creator only)",
    security: signedIn,
    request: {
      params: uuidParam,
      body: jsonBody(z.object({ userIds: z.array(z.uuid()).min(1).max(99) })),
    },
    responses: {
      200: json(
        z.object({ added: z.array(z.uuid()) }),
        "Who was added (people already in are skipped)",
      ),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const { userIds } = c.req.valid("json");
    const added = await asUser(c, (tx) => addParticipants(tx, id, userIds));
    return c.json({ added }, 200);
  },
);

conversations.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/participants/{userId}",
    operationId: "removeParticipant",
    summary: "Remove someone from a group (its creator), or leave it (oneself)",
    security: signedIn,
    request: { params: z.object({ id: z.uuid(), userId: z.uuid() }) },
    responses: {
      200: json(z.object({ removed: z.literal(true) }), "Removed"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id, userId } = c.req.valid("param");
    await asUser(c, (tx) => removeParticipant(tx, id, userId));
    return c.json({ removed: true as const }, 200);
  },
);
