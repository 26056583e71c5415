/**
 * Chat: the conversation list (with unread counts, kept live) and the open conversation. On a
 * phone-sized screen one of the two shows at a time: the list at /chat, a conversation at
 * /chat/<id> with a way back.
 *
 * How the list stays live: it is in the query cache (`CONVERSATIONS`), marked stale (debounced) whenever
 * something happens in one of its conversations, which reads it again for everything showing it;
 * a message of the open conversation updates its item in the cache instead (`showMessage`). The
 * open conversation's events come from its own feed (with the transport's
 * full fallback); the other listed conversations are followed over the WebSocket only, because on
 * SSE or long-polling each topic would hold an HTTP connection of the six a browser allows per
 * host; without a socket the list is read again every 20 s instead. `user:<id>` says when the user
 * joins or leaves one. A feed delivers from the moment it is up, so the list is read again when
 * one comes up: what happened between the list's read and then is not lost. (When MESSAGE notifications land on `user:<id>`, they can replace the side
 * feeds: docs/web.md.)
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { type Answer, client, data, describeError, FRESH } from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";
import { liveStatus, onFeedChange, subscribe } from "../../lib/live.ts";
import { navigate } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { userEvents } from "../../lib/user-events.ts";
import type { PageProps } from "../../lib/page.ts";
import { ConversationList } from "./ConversationList.tsx";
import { ConversationView } from "./ConversationView.tsx";
import { NewConversationDialog } from "./NewConversation.tsx";
import { MessageSearch, SearchResults } from "./MessageSearch.tsx";
import type { Message } from "./types.ts";

const SIDE_FEEDS = 20;
const SIDE_FEEDS_DELAY_MS = 800;
const OFFLINE_REFRESH_MS = 20_000;
/** A list item's preview holds the first 280 characters of its last message, as the API's. */
const PREVIEW_CHARS = 280;

/** The conversation list's key in the query cache (its first 50, newest activity first). */
export const CONVERSATIONS = ["conversations"] as const;

function useConversations(openId: string | undefined) {
  // Without a socket the side feeds are silent: the list is read again now and then instead.
  const status = useStore(liveStatus);
  const list = useQuery({
    queryKey: CONVERSATIONS,
    queryFn: async ({ signal }) =>
      data(
        await client.GET("/api/conversations", {
          params: { query: { limit: 50 } },
          signal,
          ...FRESH,
        }),
      ),
    // Read again at each visit (shown from the cache meanwhile): no feed followed it while away.
    staleTime: 0,
    refetchInterval: status.kind === "websocket" ? false : OFFLINE_REFRESH_MS,
  });
  const items = list.data?.items ?? null;
  const error = list.error ? describeError(list.error) : null;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // A read asked for while one is on its way replaces it (the cache cancels the older one).
  const load = useCallback(() => queryClient.invalidateQueries({ queryKey: CONVERSATIONS }), []);

  /**
   * Something happened: read the list again shortly. Events within 250 ms share one read, and a
   * steady stream of them still gets a read every 250 ms.
   */
  const soon = useCallback(() => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      void load();
    }, 250);
  }, [load]);

  useEffect(() => {
    const off = userEvents.on((e) => {
      if (e.event.startsWith("conversation.")) soon();
    });
    // The user's feed starts from the moment it is up (and again after a fallback): a
    // conversation joined before then is read with the list.
    const me = session.get().user?.id;
    const offFeed = me ? onFeedChange(`user:${me}`, () => soon()) : () => {};
    return () => {
      off();
      offFeed();
      clearTimeout(timer.current);
    };
  }, []);

  // The other conversations, over the WebSocket only, after the open one had its start.
  const sideKey = (items ?? []).map((c) => c.id).filter((id) => id !== openId)
    .slice(0, SIDE_FEEDS).sort().join(",");
  useEffect(() => {
    if (!sideKey) return;
    const stops: (() => void)[] = [];
    const start = setTimeout(() => {
      for (const id of sideKey.split(",")) {
        stops.push(subscribe(`conversation:${id}`, (e) => {
          if (e.event !== "typing") soon();
        }, {
          transports: ["websocket"],
          // A feed starts from the moment it is up: what happened between the list's last read
          // and then (this delay, the join) is read with the list again, once for all feeds.
          onLive: () => soon(),
        }));
      }
    }, SIDE_FEEDS_DELAY_MS);
    return () => {
      clearTimeout(start);
      for (const stop of stops) stop();
    };
  }, [sideKey]);

  /** The open conversation's unread count, as its read mark's answer said. */
  const setUnread = useCallback((id: string, unreadCount: number) => {
    queryClient.setQueryData<Answer<"/api/conversations", "get">>(
      CONVERSATIONS,
      (page) =>
        page && {
          ...page,
          items: page.items.map((c) => c.id === id ? { ...c, unreadCount } : c),
        },
    );
  }, []);

  /**
   * A message of the open conversation, from its feed: its list item shows it as its preview (and
   * moves first for a new one) in the cache, without reading the list again; every viewer of a
   * busy conversation would otherwise read their whole list after every message. A conversation
   * not in the list, or an event older than its preview, reads the list as any other change.
   */
  const showMessage = useCallback((m: Message, created: boolean) => {
    let shown = false;
    queryClient.setQueryData<Answer<"/api/conversations", "get">>(CONVERSATIONS, (page) => {
      const item = page?.items.find((c) => c.id === m.conversationId);
      if (!page || !item) return page;
      const last = item.lastMessage;
      const at = Date.parse(m.createdAt);
      if (created ? last && Date.parse(last.createdAt) > at : last?.id !== m.id) return page;
      shown = true;
      const updated = {
        ...item,
        lastMessage: {
          id: m.id,
          senderId: m.senderId,
          content: [...m.content].slice(0, PREVIEW_CHARS).join(""),
          attachmentCount: m.attachments.length,
          createdAt: m.createdAt,
          deletedAt: m.deletedAt,
        },
        updatedAt: created && at > Date.parse(item.updatedAt) ? m.createdAt : item.updatedAt,
      };
      return {
        ...page,
        items: created
          ? [updated, ...page.items.filter((c) => c.id !== item.id)]
          : page.items.map((c) => c.id === item.id ? updated : c),
      };
    });
    if (!shown && created) soon();
  }, [soon]);

  return { items, error, reload: soon, setUnread, showMessage };
}

export function ChatPage({ params }: PageProps) {
  const me = useStore(session).user!;
  const openId = params.conversationId;
  const { items, error, reload, setUnread, showMessage } = useConversations(openId);
  const [creating, setCreating] = useState(false);
  const [searching, setSearching] = useState("");
  const open = items?.find((c) => c.id === openId) ?? null;

  return (
    <div class={`chat ${openId ? "has-open" : "no-open"}`}>
      <aside class="chat-list" aria-label="Conversations">
        <div class="chat-list-head">
          <h1>Chat</h1>
          <button type="button" onClick={() => setCreating(true)}>New conversation</button>
        </div>
        <MessageSearch query={searching} onQuery={setSearching} />
        {searching.trim() ? <SearchResults query={searching} /> : (
          <>
            {error && <p class="error" role="alert">{error}</p>}
            <ConversationList items={items} me={me.id} openId={openId} />
          </>
        )}
      </aside>
      <section class="chat-main" aria-label="Conversation">
        {openId
          ? (
            <ConversationView
              key={openId}
              conversationId={openId}
              conversation={open}
              listLoaded={items !== null}
              me={me}
              onActivity={reload}
              onMessage={showMessage}
              onRead={(unread) => setUnread(openId, unread)}
            />
          )
          : (
            <div class="chat-empty">
              <p>Pick a conversation, or start a new one.</p>
            </div>
          )}
      </section>
      <NewConversationDialog
        open={creating}
        me={me.id}
        onClose={() => setCreating(false)}
        onCreated={(c) => {
          setCreating(false);
          reload();
          navigate(`/chat/${c.id}`);
        }}
      />
    </div>
  );
}
