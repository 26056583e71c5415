/**
 * Queries of /api/conversations (messaging/conversations.routes.ts), run as the caller: RLS decides what
 * exists. Messages of a conversation are in messaging/messages.queries.ts.
 */
import type { Tx } from "../../_shared/db.ts";
import type { Role } from "../core/context.ts";
import { ifGiven, likePattern, pageLimit, slicePage, where } from "../core/paging.ts";

/** The API's timestamps with microseconds, as app.message_object writes them. */
const ISO_MICROS = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

interface ConversationRow {
  id: string;
  type: "direct" | "group";
  title: string | null;
  created_by: string | null;
  created_at: Date;
  last_activity_at: Date;
  /** last_activity_at with its microseconds (a JS Date drops them), for the cursor. */
  activity_key: string;
  last_message: LastMessage | null;
  unread_count: number;
}

/** The list item's preview of the newest message, built in SQL (see listConversations). */
interface LastMessage {
  id: string;
  senderId: string | null;
  content: string;
  attachmentCount: number;
  createdAt: string;
  deletedAt: string | null;
}

interface ProfileRow {
  conversation_id: string;
  user_id: string;
  name: string;
  image: string | null;
  role: Role;
}

/**
 * The caller's conversations, newest activity first, as list items. `ids` narrows to given
 * conversations (the create route reads back the one it made).
 */
export async function listConversations(
  tx: Tx,
  opts: {
    ids?: string[];
    type?: "direct" | "group";
    search?: string;
    /** The last row of the previous page: [last activity as text, id]. */
    after?: [string, string] | null;
    limit: number;
  },
) {
  const pattern = likePattern(opts.search);
  // A search first finds a page of matching ids (app.search_my_conversations: through the
  // trigram indexes of names and titles, or the caller's conversations newest first for a
  // common term); the rows are then read as the caller, under RLS, like any page.
  const matched = pattern === null ? null : (await tx<{ id: string }[]>`
    select conversation_id as id from app.search_my_conversations(
      ${pattern}, ${opts.type ?? null}::app.conversation_type,
      ${opts.after?.[0] ?? null}::timestamptz, ${opts.after?.[1] ?? null}::uuid,
      ${pageLimit(opts.limit)})`).map((r) => r.id);
  if (matched?.length === 0) return { items: [], nextCursor: null };
  // One page of the caller's participant rows through their index on (user_id, activity desc,
  // id desc); unread is the row's maintained counter (docs/conversations.md). The newest
  // message's preview is only what the item shows, not app.message_json: its reactions, thread
  // and block check cost about 1 ms a row (a heavy user's page: 63-127 ms against 11-13 ms).
  const rows = await tx<ConversationRow[]>`
    select c.id, c.type, c.title, c.created_by, c.created_at, p.last_activity_at,
           p.last_activity_at::text as activity_key,
           (select jsonb_build_object(
                     'id', m.id, 'senderId', m.sender_id, 'content', left(m.content, 280),
                     'attachmentCount', case when m.deleted_at is null then (
                       select count(*) from app.attachments a where a.message_id = m.id) else 0 end,
                     'createdAt', to_char(m.created_at at time zone 'UTC', ${ISO_MICROS}),
                     'deletedAt', to_char(m.deleted_at at time zone 'UTC', ${ISO_MICROS}))
             from app.messages m
             where m.conversation_id = c.id order by m.seq desc limit 1) as last_message,
           p.unread_count
    from app.conversation_participants p
    join app.conversations c on c.id = p.conversation_id
    ${
    where(tx, [
      tx`p.user_id = (select auth.uid())`,
      ifGiven(opts.ids, (ids) => tx`p.conversation_id = any(${ids}::uuid[])`),
      ifGiven(matched, (ids) => tx`p.conversation_id = any(${ids}::uuid[])`),
      ifGiven(opts.type, (type) => tx`c.type = ${type}::app.conversation_type`),
      ifGiven(opts.after, ([time, id]) =>
        tx`(p.last_activity_at, p.conversation_id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
    order by p.last_activity_at desc, p.conversation_id desc
    limit ${pageLimit(opts.limit)}`;
  const { rows: page, nextCursor } = slicePage(
    rows,
    opts.limit,
    (r) => [r.activity_key, r.id],
  );
  const profiles = page.length
    ? await tx<ProfileRow[]>`
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
    lastMessage: row.last_message,
    unreadCount: row.unread_count,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.last_activity_at.toISOString(),
  }));
  return { items, nextCursor };
}

/**
 * Creates a conversation (`app.create_conversation` checks the rules; a direct pair that exists
 * is returned, `created: false`) and reads it back as a list item.
 */
export async function createConversation(
  tx: Tx,
  input: { type: "direct" | "group"; participantIds: string[]; title: string | null },
) {
  const [made] = await tx<{ conversation_id: string; created: boolean }[]>`
    select * from app.create_conversation(
      ${input.type}, ${input.participantIds}::uuid[], ${input.title})`;
  const { items } = await listConversations(tx, { ids: [made.conversation_id], limit: 1 });
  return { conversation: items[0], created: made.created };
}

/** Sends a typing signal, throttled per user and conversation; false when it was dropped. */
export async function sendTyping(
  tx: Tx,
  conversationId: string,
  isTyping: boolean,
  throttleMs: number,
): Promise<boolean> {
  const [row] = await tx<{ sent: boolean }[]>`
    select app.send_typing(${conversationId}, ${isTyping}, ${throttleMs}) as sent`;
  return row.sent;
}

/** Adds people to a group (its creator only); the ids of those who were not in yet. */
export async function addParticipants(
  tx: Tx,
  conversationId: string,
  userIds: string[],
): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    select x as id from app.add_participants(${conversationId}, ${userIds}::uuid[]) x`;
  return rows.map((r) => r.id);
}

/** Removes someone from a group (its creator), or the caller themselves. */
export async function removeParticipant(
  tx: Tx,
  conversationId: string,
  userId: string,
): Promise<void> {
  await tx`select app.remove_participant(${conversationId}, ${userId})`;
}
