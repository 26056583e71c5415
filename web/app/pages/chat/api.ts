/** The messaging API as the chat pages use it (shapes: the API contract, "Messaging", "People"). */
import { api, query, upload } from "../../lib/api.ts";
import type { Role } from "../../lib/session.ts";

export interface Participant {
  userId: string;
  name: string;
  image: string | null;
  role: Role;
}

export interface Attachment {
  id: string;
  name: string;
  contentType: string;
  size: number;
  url: string;
}

export interface Message {
  id: string;
  conversationId: string;
  seq: number;
  senderId: string | null;
  content: string;
  replyToId: string | null;
  attachments: Attachment[];
  createdAt: string;
  editedAt: string | null;
  deletedAt: string | null;
  /** The root of the thread this reply is in; null outside threads. */
  threadId: string | null;
  /** On a root with live replies. */
  thread: { replyCount: number; lastReplyAt: string | null } | null;
  reactions: Reaction[];
  /** The participants it mentions (none on a tombstone; absent in events of older servers). */
  mentions?: string[];
  /** In lists: the caller blocks its sender (the page also marks live ones from its own list). */
  senderBlocked?: boolean;
}

/** The caller's mute of a conversation (contract "Community": conversation settings). */
export interface MuteState {
  conversationId: string;
  muted: boolean;
  /** When the mute ends; null when muted until unmuted, or not muted. */
  mutedUntil: string | null;
}

export interface Reaction {
  emoji: string;
  count: number;
  /** Whether the caller is among them (events carry no `me`: the page keeps its own). */
  me: boolean;
}

/** The emoji the picker offers. */
export const COMMON_EMOJI = ["👍", "❤️", "😂", "🎉", "😮", "😢", "🙏", "🔥"];

export interface Conversation {
  id: string;
  type: "direct" | "group";
  title: string | null;
  createdBy: string | null;
  participants: Participant[];
  lastMessage: {
    id: string;
    senderId: string | null;
    content: string;
    attachmentCount: number;
    createdAt: string;
    deletedAt: string | null;
  } | null;
  unreadCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface Person {
  id: string;
  name: string;
  image: string | null;
  role: Role;
}

/** A search result (contract "Community": GET /api/messages/search). */
export interface SearchResult {
  message: Message;
  conversation: { id: string; type: "direct" | "group"; title: string | null };
  /** HTML-escaped text whose only markup is `<mark>` (render with `Highlight`, never as HTML). */
  highlight: string;
}

export const chatApi = {
  search: (q: string, opts: { cursor?: string | null; signal?: AbortSignal } = {}) =>
    api.get<Page<SearchResult>>(
      `/api/messages/search${query({ q, limit: 20, cursor: opts.cursor })}`,
      { signal: opts.signal },
    ),
  conversations: (opts: { limit?: number; cursor?: string | null; search?: string } = {}) =>
    api.get<Page<Conversation>>(
      `/api/conversations${query({ limit: opts.limit, cursor: opts.cursor, search: opts.search })}`,
    ),
  createConversation: (
    body: { type: "direct" | "group"; participantIds: string[]; title?: string },
  ) => api.post<Conversation>("/api/conversations", body),
  messages: (conversationId: string, opts: { limit?: number; cursor?: string | null } = {}) =>
    api.get<Page<Message>>(
      `/api/conversations/${conversationId}/messages${
        query({ limit: opts.limit, cursor: opts.cursor })
      }`,
    ),
  messagesAfter: (conversationId: string, after: string, cursor?: string | null) =>
    api.get<Page<Message>>(
      `/api/conversations/${conversationId}/messages${query({ after, cursor, limit: 200 })}`,
    ),
  send: (
    conversationId: string,
    body: {
      content: string;
      replyToId?: string;
      attachmentIds?: string[];
      threadId?: string;
      mentions?: string[];
    },
    idempotencyKey: string,
  ) =>
    api.post<Message>(`/api/conversations/${conversationId}/messages`, body, {
      headers: { "idempotency-key": idempotencyKey },
    }),
  edit: (id: string, content: string) => api.put<Message>(`/api/messages/${id}`, { content }),
  remove: (id: string) => api.delete<{ id: string; deletedAt: string }>(`/api/messages/${id}`),
  markRead: (id: string) =>
    api.put<{ conversationId: string; lastReadMessageId: string; unreadCount: number }>(
      `/api/messages/${id}/read`,
    ),
  react: (id: string, emoji: string, present: boolean) => {
    const path = `/api/messages/${id}/reactions/${encodeURIComponent(emoji)}`;
    type Answer = { messageId: string; reactions: Reaction[] };
    return present ? api.put<Answer>(path) : api.delete<Answer>(path);
  },
  thread: (id: string, opts: { limit?: number; cursor?: string | null } = {}) =>
    api.get<{ root: Message; items: Message[]; nextCursor: string | null }>(
      `/api/messages/${id}/thread${query({ limit: opts.limit, cursor: opts.cursor })}`,
    ),
  typing: (conversationId: string, isTyping: boolean) =>
    api.post<{ expiresAt: string }>(`/api/conversations/${conversationId}/typing`, { isTyping }),
  upload: (file: File, onProgress: (fraction: number) => void, signal?: AbortSignal) =>
    upload<Omit<Attachment, "url">>("/api/attachments", file, onProgress, signal),
  settings: (conversationId: string) =>
    api.get<MuteState>(`/api/conversations/${conversationId}/settings`, { fresh: true }),
  /** `{ muted: true }` until unmuted, `{ mutedUntil }` until then, `{ muted: false }` clears. */
  mute: (conversationId: string, body: { muted?: boolean; mutedUntil?: string }) =>
    api.put<MuteState>(`/api/conversations/${conversationId}/settings`, body),
  /** Leaves a group (DELETE .../participants/<own id>). */
  leave: (conversationId: string, me: string) =>
    api.delete<{ removed: true }>(`/api/conversations/${conversationId}/participants/${me}`),
  /** The user directory (contract "People"); SUBSCRIBER and up, the caller left out. */
  people: (search: string, signal?: AbortSignal) =>
    api.get<Page<Person>>(`/api/users${query({ search, limit: 20 })}`, { signal }),
};

/** What the chat shows as a conversation's name. */
export function conversationName(c: Conversation, me: string): string {
  if (c.title) return c.title;
  const others = c.participants.filter((p) => p.userId !== me).map((p) => p.name);
  return others.length ? others.join(", ") : "Just you";
}
