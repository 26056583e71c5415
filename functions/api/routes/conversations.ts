/**
 * /api/conversations: list and create conversations, read and send messages, typing, and the
 * group creator's participant changes. SUBSCRIBER and above (see app.ts); every query runs as the
 * user, so RLS decides what exists: a conversation the caller is not in is a 404.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../context.ts";
import {
  decodeCursor,
  encodeCursor,
  errors,
  json,
  jsonBody,
  limitParam,
  router,
  signedIn,
} from "../openapi.ts";
import { type Tx, withUser } from "../../_shared/db.ts";
import { badRequest, notFound } from "../../_shared/errors.ts";
import { sha256Hex } from "../../_shared/crypto.ts";
import { claimsOf } from "../session-claims.ts";
import { type MessageJson, messageSchema } from "./message-schema.ts";

export const conversations = router();

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

interface ConversationRow {
  id: string;
  type: "direct" | "group";
  title: string | null;
  created_by: string | null;
  created_at: Date;
  last_activity_at: Date;
  activity_key: string;
  last_message: MessageJson | null;
  unread_count: number;
}

/**
 * The caller's conversations, newest activity first, as list items. `ids` narrows to given
 * conversations (the create route reads back the one it made).
 */
async function listConversations(
  tx: Tx,
  opts: {
    ids?: string[];
    type?: "direct" | "group";
    search?: string;
    after?: [string, string] | null;
    limit: number;
  },
) {
  const pattern = opts.search ? `%${opts.search.toLowerCase().replace(/[\\%_]/g, "\\$&")}%` : null;
  const [afterTime, afterId] = opts.after ?? [null, null];
  const rows = await tx<ConversationRow[]>`
    select c.id, c.type, c.title, c.created_by, c.created_at, c.last_activity_at,
           c.last_activity_at::text as activity_key,
           (select app.message_json(m) from app.messages m
             where m.conversation_id = c.id order by m.seq desc limit 1) as last_message,
           (select count(*)::int from app.messages m
             where m.conversation_id = c.id and m.seq > p.last_read_seq and m.deleted_at is null
               and m.sender_id is distinct from p.user_id) as unread_count
    from app.conversation_participants p
    join app.conversations c on c.id = p.conversation_id
    where p.user_id = auth.uid()
      and (${opts.ids ?? null}::uuid[] is null or c.id = any(${opts.ids ?? null}::uuid[]))
      and (${opts.type ?? null}::app.conversation_type is null or c.type = ${opts.type ?? null})
      and (${pattern}::text is null
           or lower(coalesce(c.title, '')) like ${pattern}
           or exists (select 1 from app.conversation_profiles(array[c.id]) pr
                      where pr.user_id <> auth.uid() and lower(pr.name) like ${pattern}))
      -- ::text first: a timestamptz parameter would lose its microseconds through a JS Date.
      and (${afterTime}::text is null
           or (c.last_activity_at, c.id) < (${afterTime}::text::timestamptz, ${afterId}::uuid))
    order by c.last_activity_at desc, c.id desc
    limit ${opts.limit + 1}`;
  const page = rows.slice(0, opts.limit);
  const profiles = page.length
    ? await tx<
      {
        conversation_id: string;
        user_id: string;
        name: string;
        image: string | null;
        role: (typeof ROLES)[number];
      }[]
    >`
      select * from app.conversation_profiles(${page.map((r) => r.id)}::uuid[])`
    : [];
  const items = page.map((row) => ({
    id: row.id,
    type: row.type,
    title: row.title,
    createdBy: row.created_by,
    participants: profiles
      .filter((p) => p.conversation_id === row.id)
      .map((p) => ({ userId: p.user_id, name: p.name, image: p.image, role: p.role })),
    lastMessage: row.last_message
      ? {
        id: row.last_message.id,
        senderId: row.last_message.senderId,
        content: row.last_message.content.slice(0, 280),
        attachmentCount: row.last_message.attachments.length,
        createdAt: row.last_message.createdAt,
        deletedAt: row.last_message.deletedAt,
      }
      : null,
    unreadCount: row.unread_count,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.last_activity_at.toISOString(),
  }));
  const last = page[page.length - 1];
  const nextCursor = rows.length > opts.limit && last
    ? encodeCursor([last.activity_key, last.id])
    : null;
  return { items, nextCursor };
}

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
        z.object({ items: z.array(conversationSchema), nextCursor: z.string().nullable() }),
        "A page",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = q.cursor
      ? decodeCursor(q.cursor, ["string", "string"]) as [string, string]
      : null;
    const page = await withUser(
      c.get("deps").sql,
      claimsOf(c.get("user")!),
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
    const result = await withUser(c.get("deps").sql, claimsOf(c.get("user")!), async (tx) => {
      const [made] = await tx<{ conversation_id: string; created: boolean }[]>`
        select * from app.create_conversation(${body.type}, ${body.participantIds}::uuid[], ${
        body.title ?? null
      })`;
      const { items } = await listConversations(tx, { ids: [made.conversation_id], limit: 1 });
      return { conversation: items[0], created: made.created };
    });
    return c.json(result.conversation, result.created ? 201 : 200);
  },
);

// GET /api/conversations/:id/messages ----------------------------------------------------------

/** Cursor kinds: older pages (newest first) and catch-up pages (`after`, oldest first). */
type MessageCursor = ["before" | "after", number];

conversations.openapi(
  createRoute({
    method: "get",
    path: "/{id}/messages",
    operationId: "listMessages",
    summary: "Messages of a conversation",
    description: "Newest first; `nextCursor` pages to older messages. With `after=<messageId>`, " +
      "the messages newer than that one, oldest first (`nextCursor` continues the catch-up). " +
      "Deleted messages stay as tombstones.",
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
        z.object({ items: z.array(messageSchema), nextCursor: z.string().nullable() }),
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
    const page = await withUser(c.get("deps").sql, claimsOf(c.get("user")!), async (tx) => {
      const [conversation] = await tx`select id from app.conversations where id = ${id}`;
      if (!conversation) throw notFound("Conversation not found.");
      if (!cursor && q.after) {
        const [anchor] = await tx<{ seq: number }[]>`
          select seq::int from app.messages where id = ${q.after} and conversation_id = ${id}`;
        if (!anchor) throw notFound("The `after` message is not in this conversation.");
        cursor = ["after", anchor.seq];
      }
      const forward = cursor?.[0] === "after";
      const bound = cursor?.[1] ?? null;
      const rows = forward
        ? await tx<{ json: MessageJson; seq: number }[]>`
          select app.message_json(m) as json, m.seq::int as seq from app.messages m
          where m.conversation_id = ${id} and m.seq > ${bound}
          order by m.seq asc limit ${q.limit + 1}`
        : await tx<{ json: MessageJson; seq: number }[]>`
          select app.message_json(m) as json, m.seq::int as seq from app.messages m
          where m.conversation_id = ${id} and (${bound}::bigint is null or m.seq < ${bound})
          order by m.seq desc limit ${q.limit + 1}`;
      const items = rows.slice(0, q.limit);
      const last = items[items.length - 1];
      return {
        items: items.map((r) => r.json),
        nextCursor: rows.length > q.limit && last
          ? encodeCursor([forward ? "after" : "before", last.seq])
          : null,
      };
    });
    return c.json(page, 200);
  },
);

// POST /api/conversations/:id/messages ---------------------------------------------------------

const sendMessageBody = z.object({
  content: z.string().min(1).max(10_000),
  replyToId: z.uuid().optional(),
  attachmentIds: z.array(z.uuid()).max(10).optional(),
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
      ? await sha256Hex(JSON.stringify([id, body.content, body.replyToId ?? null, attachmentIds]))
      : null;
    // One call does the whole send (app.send_message): participation, idempotency, the length
    // limit, the insert and the attachments, under RLS as the caller. One statement, so one round
    // trip and a commit right on the server: app_private.send_message_as sets the role and the
    // claims for that statement's transaction only (the migration explains why).
    const [{ message }] = await c.get("deps").sql<{ message: MessageJson }[]>`
      select app_private.send_message_as(
        ${JSON.stringify(claimsOf(c.get("user")!))}, ${id}, ${body.content},
        ${body.replyToId ?? null}, ${attachmentIds}::uuid[], ${key}, ${hash}) as message`;
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
    const deps = c.get("deps");
    const [row] = await withUser(
      deps.sql,
      claimsOf(c.get("user")!),
      (tx) =>
        tx<
          { sent: boolean }[]
        >`select app.send_typing(${id}, ${isTyping}, ${deps.settings.typingThrottleMs}) as sent`,
    );
    return c.json({ expiresAt: new Date(Date.now() + 5_000).toISOString(), sent: row.sent }, 202);
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
    const rows = await withUser(
      c.get("deps").sql,
      claimsOf(c.get("user")!),
      (tx) =>
        tx<{ id: string }[]>`select x as id from app.add_participants(${id}, ${userIds}::uuid[]) x`,
    );
    return c.json({ added: rows.map((r) => r.id) }, 200);
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
    await withUser(
      c.get("deps").sql,
      claimsOf(c.get("user")!),
      (tx) => tx`select app.remove_participant(${id}, ${userId})`,
    );
    return c.json({ removed: true as const }, 200);
  },
);
