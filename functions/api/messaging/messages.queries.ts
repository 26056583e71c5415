/**
 * Queries of messages: the list and the send under /api/conversations/:id/messages
 * (messaging/conversations.routes.ts), and edits, deletes and read marks under /api/messages/:id
 * (messaging/messages.routes.ts). All run as the caller; the send through its one-statement door.
 */
import type { DbClaims, Sql, Tx } from "../../_shared/db.ts";
import { notFound, unprocessable } from "../../_shared/errors.ts";
import type { MessageJson } from "./message.schemas.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";

/** Cursor kinds: older pages (newest first) and catch-up pages (`after`, oldest first). */
export type MessageCursor = ["before" | "after", number];

/**
 * A page of a conversation's messages: newest first (older pages by cursor), or, from an
 * `after` message or an "after" cursor, the newer ones oldest first. 404 when the caller is not
 * a participant (RLS hides the conversation) or `after` is not one of its messages.
 */
export async function listMessages(
  tx: Tx,
  conversationId: string,
  q: { cursor: MessageCursor | null; after?: string; limit: number },
) {
  const [conversation] = await tx`select id from app.conversations where id = ${conversationId}`;
  if (!conversation) throw notFound("Conversation not found.");
  let cursor = q.cursor;
  if (!cursor && q.after) {
    const [anchor] = await tx<{ seq: number }[]>`
      select seq::int from app.messages where id = ${q.after} and conversation_id = ${conversationId}`;
    if (!anchor) throw notFound("The `after` message is not in this conversation.");
    cursor = ["after", anchor.seq];
  }
  const forward = cursor?.[0] === "after";
  const bound = cursor?.[1];
  // The page's ids, then their JSON in one call (app.messages_json), in the page's order.
  const rows = await tx<{ json: MessageJson; seq: number }[]>`
    select j.json, j.seq::int as seq from app.messages_json(array(
      select m.id from app.messages m
      ${
    where(tx, [
      tx`m.conversation_id = ${conversationId}`,
      // A thread's replies are listed by its root's /thread only.
      tx`m.thread_id is null`,
      ifGiven(bound, (seq) => forward ? tx`m.seq > ${seq}::bigint` : tx`m.seq < ${seq}::bigint`),
    ])
  }
      order by ${forward ? tx`m.seq asc` : tx`m.seq desc`}
      limit ${pageLimit(q.limit)})) j
    order by ${forward ? tx`j.seq asc` : tx`j.seq desc`}`;
  const { rows: page, nextCursor } = slicePage(
    rows,
    q.limit,
    (last) => [forward ? "after" : "before", last.seq],
  );
  return { items: page.map((r) => r.json), nextCursor };
}

/**
 * The whole send in one statement (`app_private.send_message_as`, see its comment): it sets the
 * role and `claims` for its own transaction, then `app.send_message` does participation,
 * idempotency, the length limit, the insert and the attachments under RLS as the caller. One
 * statement, so one round trip and a commit right on the server: the hot path of messaging.
 * `claims` are the caller's (`callerClaims(c)`), as `asUser` would set them.
 */
export async function sendMessageAs(
  sql: Sql,
  claims: DbClaims,
  input: {
    conversationId: string;
    content: string;
    replyToId: string | null;
    attachmentIds: string[];
    idempotencyKey: string | null;
    requestHash: string | null;
    threadId: string | null;
    mentions: string[];
  },
): Promise<MessageJson> {
  const [{ message }] = await sql<{ message: MessageJson }[]>`
    select app_private.send_message_as(
      ${JSON.stringify(claims)}, ${input.conversationId}, ${input.content},
      ${input.replyToId}, ${input.attachmentIds}::uuid[], ${input.idempotencyKey},
      ${input.requestHash}, ${input.threadId}, ${input.mentions}::uuid[]) as message`;
  return message;
}

export interface ReactionsJson {
  messageId: string;
  reactions: { emoji: string; count: number; me: boolean }[];
}

/** One reaction of a batch: the caller's claims and what they asked for. */
export interface ReactionItem {
  claims: DbClaims;
  emoji: string;
  present: boolean;
}

/**
 * What a batch did: the counts after it (without `me`) and, per item in order, the caller's own
 * emoji after it, or the error that item alone raised (a SQLSTATE error's fields, `AG404` /
 * `AG422` with the message for the caller).
 */
export interface ReactionBatchResult {
  reactions: { emoji: string; count: number }[];
  items: (
    | { mine: string[] }
    | { error: { code: string; message: string; hint: string | null; detail: string | null } }
  )[];
}

/**
 * Applies a batch of reactions to one message in one statement, so one transaction and one
 * commit (`app_private.set_reactions_as`, see its comment): each item as its caller, in a block
 * of its own, under the message's lock; one `message.reactions` event for the batch. Called by
 * the coalescer (messaging/reaction-batches.ts), never across a round trip inside the lock.
 */
export async function setReactionsAs(
  sql: Sql,
  messageId: string,
  items: ReactionItem[],
): Promise<ReactionBatchResult> {
  const payload = items.map((i) => ({
    claims: JSON.stringify(i.claims),
    emoji: i.emoji,
    present: i.present,
  }));
  const [{ result }] = await sql<{ result: ReactionBatchResult }[]>`
    select app_private.set_reactions_as(${messageId}, ${
    sql.json(payload as never)
  }::jsonb) as result`;
  return result;
}

/**
 * A thread: its root and a page of its replies, oldest first, keyset on seq (the index on
 * (thread_id, seq) makes the last page cost what the first does). 404 for a message the caller
 * cannot see; 422 for a reply in a thread (it has no thread of its own).
 */
export async function listThread(
  tx: Tx,
  rootId: string,
  q: { afterSeq: number | null; limit: number },
) {
  const [root] = await tx<{ json: MessageJson; thread_id: string | null }[]>`
    select j.json, j.thread_id from app.messages_json(array[${rootId}::uuid]) j`;
  if (!root) throw notFound("Message not found.");
  if (root.thread_id) {
    throw unprocessable("A reply in a thread has no thread of its own; open its root's.");
  }
  const rows = await tx<{ json: MessageJson; seq: number }[]>`
    select j.json, j.seq::int as seq from app.messages_json(array(
      select m.id from app.messages m
      ${
    where(tx, [
      tx`m.thread_id = ${rootId}`,
      ifGiven(q.afterSeq, (seq) => tx`m.seq > ${seq}::bigint`),
    ])
  }
      order by m.seq asc
      limit ${pageLimit(q.limit)})) j
    order by j.seq asc`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (last) => [last.seq]);
  return { root: root.json, items: page.map((r) => r.json), nextCursor };
}

/** Edits a message (its author, within the edit window and length; `app.edit_message` checks). */
export async function editMessage(tx: Tx, id: string, content: string): Promise<MessageJson> {
  const [row] = await tx<{ json: MessageJson }[]>`
    select app.edit_message(${id}, ${content}) as json`;
  return row.json;
}

/** Deletes a message, leaving a tombstone (its files' removal is queued by the database). */
export async function deleteMessage(tx: Tx, id: string) {
  const [row] = await tx<{ deleted_at: Date }[]>`
    select * from app.delete_message(${id})`;
  return row;
}

/** Moves the caller's read watermark up to this message (never back). */
export async function markRead(tx: Tx, id: string) {
  const [row] = await tx<
    { conversation_id: string; last_read_message_id: string; unread_count: number }[]
  >`
    select conversation_id, last_read_message_id, unread_count::int from app.mark_read(${id})`;
  return {
    conversationId: row.conversation_id,
    lastReadMessageId: row.last_read_message_id,
    unreadCount: row.unread_count,
  };
}

/**
 * Moves the caller's read watermark back to just before a message of the conversation (never
 * forward): 404 when the caller is not in it or cannot see the message, 422 for a message of
 * another conversation (`app.mark_unread`).
 */
export async function markUnread(tx: Tx, conversationId: string, fromMessageId: string) {
  const [row] = await tx<
    { conversation_id: string; last_read_message_id: string | null; unread_count: number }[]
  >`
    select conversation_id, last_read_message_id, unread_count::int
    from app.mark_unread(${conversationId}, ${fromMessageId})`;
  return {
    conversationId: row.conversation_id,
    lastReadMessageId: row.last_read_message_id,
    unreadCount: row.unread_count,
  };
}
