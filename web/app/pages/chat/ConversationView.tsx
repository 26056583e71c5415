/**
 * One conversation: its messages (newest at the bottom, older ones loaded on scrolling up), live
 * over `conversation:<id>` (created, updated, deleted, read, typing), who of the others is
 * online (app-wide presence: lib/presence.ts), read marks sent as messages are seen, replies,
 * edits, tombstones and attachments,
 * reactions (`message.reactions`) and threads (a side panel; replies stay out of the main list).
 * The header's menu mutes the conversation (1 hour, 8 hours, until unmuted) or unmutes it, and
 * leaves a group; a message offers Block and Report for its sender. Messages of people the
 * caller blocks are marked (from the caller's own block list, so live ones are too).
 *
 * Order: messages are kept by `seq` (the conversation's commit order), whatever the transport
 * delivered first. Gaps: the page loads the newest page, then follows the topic; when the feed
 * is first up it reads the newest page again and merges it, so nothing that happened in between
 * is missed (the transport itself resumes from its cursor after that).
 */
import { useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { type RealtimeEnvelope, subscribe } from "../../lib/live.ts";
import { Link, navigate } from "../../lib/router.tsx";
import { useStore } from "../../lib/store.ts";
import { clockTime } from "../../lib/format.ts";
import { blockedIds, loadBlocked, setBlocked } from "../../lib/blocks.ts";
import { BlockDialog } from "../../components/BlockDialog.tsx";
import type { User } from "../../lib/session.ts";
import { Avatar } from "../../components/Avatar.tsx";
import { Dialog } from "../../components/Dialog.tsx";
import { ReportDialog } from "../../components/ReportDialog.tsx";
import {
  type Conversation,
  conversationName,
  type Message,
  type MuteState,
  type Reaction,
} from "./types.ts";
import { useParticipantPresence } from "./participant-presence.ts";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { initialState, reducer } from "./conversation-state.ts";
import { MessageItem } from "./MessageItem.tsx";
import { Composer } from "./Composer.tsx";

const PAGE = 30;

/** A page of the conversation's messages, newest first, before `cursor`. */
async function messagesPage(conversationId: string, cursor: string | null) {
  return data(
    await client.GET("/api/conversations/{id}/messages", {
      params: {
        path: { id: conversationId },
        query: { limit: PAGE, ...(cursor ? { cursor } : {}) },
      },
    }),
  );
}

/** A thread: its root and a page of its replies. */
async function thread(rootId: string, limit: number, cursor: string | null) {
  return data(
    await client.GET("/api/messages/{id}/thread", {
      params: { path: { id: rootId }, query: { limit, ...(cursor ? { cursor } : {}) } },
    }),
  );
}

/**
 * The `readFrom` of the answer to a message this page sent: no reactions event of a message can
 * come before the message, so any that arrived before the answer (on a slow link, someone who saw
 * it live and reacted) is newer than the answer's counts, and the merge keeps the event's.
 */
const SENT = 0;

interface TypingEntry {
  expiresAt: number;
}

export function ConversationView(
  { conversationId, conversation, listLoaded, me, onActivity, onMessage, onRead }: {
    conversationId: string;
    conversation: Conversation | null;
    listLoaded: boolean;
    me: User;
    onActivity: () => void;
    /** A message created or edited in this conversation, from its feed: the list's preview. */
    onMessage: (m: Message, created: boolean) => void;
    onRead: (unread: number) => void;
  },
) {
  const [state, dispatch] = useReducer(reducer, undefined, initialState);
  // The reactions tick as of the last render: a read started now is older than any event after it.
  const tick = useRef(0);
  /** Stops following the conversation's topic (set by the effect that follows it). */
  const unfollow = useRef<() => void>(() => {});
  const [following, setFollowing] = useState(0);
  tick.current = state.tick;
  const [readers, setReaders] = useState<Map<string, number>>(new Map());
  const [typing, setTyping] = useState<Map<string, TypingEntry>>(new Map());
  const [replyTo, setReplyTo] = useState<Message | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Message | null>(null);
  const [reporting, setReporting] = useState<Message | null>(null);
  const [blocking, setBlocking] = useState<{ id: string; name: string } | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const [leaving, setLeaving] = useState(false);
  const [muteState, setMuteState] = useState<MuteState | null>(null);
  const blocked = useStore(blockedIds);
  const [notice, setNotice] = useState<string | null>(null);
  const [newBelow, setNewBelow] = useState(false);
  /** The open thread's root, and the cursor to its newer replies (null: all loaded). */
  const [threadRoot, setThreadRoot] = useState<string | null>(null);
  const [threadMore, setThreadMore] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const topSentinel = useRef<HTMLLIElement>(null);
  const stickToBottom = useRef(true);
  const keepOffset = useRef<number | null>(null);
  const markedSeq = useRef(0);
  const callbacks = useRef({ onActivity, onMessage, onRead });
  callbacks.current = { onActivity, onMessage, onRead };

  const all = useMemo(
    () => [...state.byId.values()].sort((a, b) => a.seq - b.seq),
    [state.byId],
  );
  // A thread's replies are shown in its panel only.
  const messages = useMemo(() => all.filter((m) => !m.threadId), [all]);
  const threadReplies = useMemo(
    () => (threadRoot ? all.filter((m) => m.threadId === threadRoot) : []),
    [all, threadRoot],
  );

  useEffect(() => {
    void loadBlocked().catch(() => {});
  }, []);
  useEffect(() => {
    setMuteState(null);
    setMenuOpen(false);
    client.GET("/api/conversations/{id}/settings", {
      params: { path: { id: conversationId } },
      ...FRESH,
    }).then((r) => setMuteState(data(r)), () => {});
  }, [conversationId]);

  /** Mutes for `hours` (null: until unmuted), or unmutes (`hours` false). */
  async function mute(hours: number | null | false) {
    setMenuOpen(false);
    try {
      setMuteState(
        data(
          await client.PUT("/api/conversations/{id}/settings", {
            params: { path: { id: conversationId } },
            body: hours === false
              ? { muted: false }
              : hours === null
              ? { muted: true }
              : { muted: true, mutedUntil: new Date(Date.now() + hours * 3_600_000).toISOString() },
          }),
        ),
      );
    } catch (err) {
      setNotice(describeError(err));
    }
  }

  async function leave() {
    setLeaving(false);
    // Stop following the conversation first: once out of it, a request of the live transport
    // still waiting on its topic would be refused (403) instead of ending quietly.
    unfollow.current();
    try {
      await client.DELETE("/api/conversations/{id}/participants/{userId}", {
        params: { path: { id: conversationId, userId: me.id } },
      });
      onActivity();
      navigate("/chat");
    } catch (err) {
      setNotice(describeError(err));
      setFollowing((n) => n + 1); // still in it: follow it again
    }
  }

  /** Whether the caller blocks this sender: their own list once loaded, the message's mark before. */
  const isBlocked = (m: Message) =>
    !!m.senderId && m.senderId !== me.id &&
    (blocked ? blocked.has(m.senderId) : !!m.senderBlocked);

  /** Reads a root again (its exact reply count and last reply time). */
  function refreshRoot(rootId: string) {
    const readFrom = tick.current;
    void thread(rootId, 1, null)
      .then((t) => dispatch({ type: "merge", messages: [t.root], readFrom }))
      .catch(() => {});
  }

  async function openThread(rootId: string) {
    setThreadRoot(rootId);
    setThreadMore(null);
    await loadThread(rootId, null);
  }

  async function loadThread(rootId: string, cursor: string | null) {
    try {
      const readFrom = tick.current;
      const t = await thread(rootId, 50, cursor);
      dispatch({ type: "merge", messages: [t.root, ...t.items], readFrom });
      setThreadMore(t.nextCursor);
    } catch (err) {
      setNotice(describeError(err));
    }
  }

  async function react(m: Message, emoji: string, present: boolean) {
    try {
      const readFrom = tick.current;
      const r = data(
        present
          ? await client.PUT("/api/messages/{id}/reactions/{emoji}", {
            params: { path: { id: m.id, emoji } },
          })
          : await client.DELETE("/api/messages/{id}/reactions/{emoji}", {
            params: { path: { id: m.id, emoji } },
          }),
      );
      dispatch({ type: "own reactions", id: m.id, reactions: r.reactions, readFrom });
    } catch (err) {
      setNotice(describeError(err));
    }
  }

  // Load the newest page, then follow the topic (again when `following` moves: a leave that
  // failed). `unfollow` stops it early, before leaving.
  useEffect(() => {
    let live = true;
    const newest = () => {
      const readFrom = tick.current;
      return messagesPage(conversationId, null).then((page) => {
        if (!live) return;
        dispatch({ type: "merge", messages: page.items, readFrom });
        return page;
      });
    };
    newest()
      .then((page) => page && dispatch({ type: "older", cursor: page.nextCursor }))
      .catch((err) => live && dispatch({ type: "error", error: describeError(err) }))
      .finally(() => live && dispatch({ type: "loading", loading: false }));

    let caughtUp = false;
    const stop = subscribe(`conversation:${conversationId}`, (e: RealtimeEnvelope) => {
      const payload = e.payload as Record<string, unknown>;
      switch (e.event) {
        case "message.created":
        case "message.updated": {
          const m = payload as unknown as Message;
          dispatch({ type: "merge", messages: [m], fromEvent: true });
          if (e.event === "message.created" && m.threadId) refreshRoot(m.threadId);
          if (e.event === "message.created" && m.senderId) {
            setTyping((t) => {
              if (!t.has(m.senderId!)) return t;
              const next = new Map(t);
              next.delete(m.senderId!);
              return next;
            });
          }
          callbacks.current.onMessage(m, e.event === "message.created");
          break;
        }
        case "message.deleted":
          dispatch({
            type: "deleted",
            id: String(payload.id),
            deletedAt: String(payload.deletedAt),
          });
          if (payload.threadId) refreshRoot(String(payload.threadId));
          callbacks.current.onActivity();
          break;
        case "message.reactions":
          dispatch({
            type: "reactions",
            id: String(payload.messageId),
            reactions: payload.reactions as Reaction[],
          });
          break;
        case "message.read": {
          const userId = String(payload.userId);
          const seq = Number(payload.lastReadSeq);
          if (userId !== me.id) {
            setReaders((r) => {
              if ((r.get(userId) ?? 0) >= seq) return r;
              return new Map(r).set(userId, seq);
            });
          } else if (seq > markedSeq.current) {
            // Read on another device: the list's unread count is read again. This page's own
            // mark needs no read: its answer carried the count (onRead).
            callbacks.current.onActivity();
          }
          break;
        }
        case "typing": {
          const userId = String(payload.userId);
          if (userId === me.id) break;
          setTyping((t) => {
            const next = new Map(t);
            if (payload.isTyping) {
              next.set(userId, { expiresAt: Date.parse(String(payload.expiresAt)) || 0 });
            } else next.delete(userId);
            return next;
          });
          break;
        }
        default:
          // participant.added / participant.removed: the list carries the participants.
          callbacks.current.onActivity();
      }
    }, {
      main: true,
      onLive: () => {
        if (caughtUp) return;
        caughtUp = true;
        void newest().catch(() => {});
      },
    });
    let stopped = false;
    const unfollowThis = () => {
      if (!stopped) stop();
      stopped = true;
    };
    unfollow.current = unfollowThis;
    return () => {
      live = false;
      unfollowThis();
    };
  }, [conversationId, following]);

  // Presence, app-wide: whether each other participant the page shows has the app open anywhere.
  const presence = useParticipantPresence(
    (conversation?.participants ?? []).map((p) => p.userId).filter((id) => id !== me.id),
  );
  const present = presence.present;

  // Typing entries expire on their own.
  useEffect(() => {
    if (!typing.size) return;
    const next = Math.min(...[...typing.values()].map((t) => t.expiresAt));
    const timer = setTimeout(() => {
      setTyping((t) => {
        const now = Date.now();
        const kept = new Map([...t].filter(([, v]) => v.expiresAt > now));
        return kept.size === t.size ? t : kept;
      });
    }, Math.max(100, next - Date.now() + 50));
    return () => clearTimeout(timer);
  }, [typing]);

  // Scrolling: stay at the bottom while there, keep the view still when older messages arrive.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (keepOffset.current !== null) {
      el.scrollTop = el.scrollHeight - keepOffset.current;
      keepOffset.current = null;
    } else if (stickToBottom.current) {
      el.scrollTop = el.scrollHeight;
    } else if (messages.length) {
      setNewBelow(true);
    }
  }, [messages]);

  function onScroll() {
    const el = scroller.current!;
    stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
    if (stickToBottom.current) {
      setNewBelow(false);
      markSeen();
    }
  }

  // Older messages when the top comes into view.
  useEffect(() => {
    const sentinel = topSentinel.current;
    const root = scroller.current;
    if (!sentinel || !root || !state.older || state.loading) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void loadOlder();
    }, { root, rootMargin: "200px 0px 0px 0px" });
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [state.older, state.loading]);

  async function loadOlder() {
    if (!state.older || state.loading) return;
    dispatch({ type: "loading", loading: true });
    try {
      const readFrom = tick.current;
      const page = await messagesPage(conversationId, state.older);
      const el = scroller.current;
      if (el) keepOffset.current = el.scrollHeight - el.scrollTop;
      dispatch({ type: "merge", messages: page.items, readFrom });
      dispatch({ type: "older", cursor: page.nextCursor });
    } catch (err) {
      dispatch({ type: "error", error: describeError(err) });
    } finally {
      dispatch({ type: "loading", loading: false });
    }
  }

  // Read marks: the newest message from someone else, once seen (visible page, at the bottom).
  function markSeen() {
    const newest = [...all].reverse().find((m) => m.senderId !== me.id && !m.deletedAt);
    if (!newest || newest.seq <= markedSeq.current) return;
    if (document.visibilityState !== "visible" || !stickToBottom.current) return;
    markedSeq.current = newest.seq;
    client.PUT("/api/messages/{id}/read", { params: { path: { id: newest.id } } })
      .then(data)
      .then((r) => callbacks.current.onRead(r.unreadCount))
      .catch(() => markedSeq.current = 0);
  }
  useEffect(markSeen, [all]);
  useEffect(() => {
    const onVisible = () => markSeen();
    document.addEventListener("visibilitychange", onVisible);
    return () => document.removeEventListener("visibilitychange", onVisible);
  });

  const people = new Map(conversation?.participants.map((p) => [p.userId, p]) ?? []);
  const name = conversation ? conversationName(conversation, me.id) : "Conversation";
  const onlineIds = present ?? new Set<string>();
  const others = conversation?.participants.filter((p) => p.userId !== me.id) ?? [];
  const onlineOthers = others.filter((p) => onlineIds.has(p.userId));

  // "Seen by": each other reader under the newest loaded message they have read.
  const seenBy = new Map<string, string[]>();
  for (const [userId, seq] of readers) {
    const at = [...messages].reverse().find((m) => m.seq <= seq);
    if (!at) continue;
    const names = seenBy.get(at.id) ?? [];
    names.push(people.get(userId)?.name ?? "Someone");
    seenBy.set(at.id, names);
  }

  const typingNames = [...typing.keys()].map((id) => people.get(id)?.name ?? "Someone");
  const canModerate = me.role === "ADMIN" || conversation?.createdBy === me.id;

  if (!conversation && listLoaded && state.error) {
    return (
      <div class="conversation-missing">
        <p class="error" role="alert">{state.error}</p>
        <Link href="/chat">Back to the conversations</Link>
      </div>
    );
  }

  return (
    <div class="conversation-view" data-conversation-id={conversationId}>
      <header class="conversation-head">
        <Link href="/chat" class="back" aria-label="Back to the conversations">‹</Link>
        <div class="conversation-title">
          <h2 tabIndex={-1}>{name}</h2>
          <p class="participants" data-testid="presence">
            {present === null
              ? <span title="Presence needs the WebSocket">presence unavailable</span>
              : onlineSummary(onlineOthers.map((p) => p.name), presence.everyone)}
          </p>
        </div>
        <ul
          class="participant-avatars"
          aria-label="Participants"
          ref={presence.strip}
          data-presence-watched={presence.watched}
        >
          {conversation?.participants.map((p) => (
            <li
              key={p.userId}
              data-user-id={p.userId}
              title={`${p.name}${onlineIds.has(p.userId) ? " (online)" : ""}`}
            >
              <Link href={`/people/${p.userId}`}>
                <Avatar
                  name={p.name}
                  image={p.image}
                  id={p.userId}
                  size={28}
                  online={present === null ? undefined : onlineIds.has(p.userId)}
                />
                <span class="visually-hidden">
                  {p.name}
                  {onlineIds.has(p.userId) ? ", online" : ""}
                </span>
              </Link>
            </li>
          ))}
        </ul>
        <div class="conversation-menu">
          <button
            type="button"
            class="icon"
            aria-haspopup="menu"
            aria-expanded={menuOpen}
            aria-label="Conversation menu"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            ⋯
          </button>
          {muteState?.muted && (
            <span class="muted-tag" data-testid="muted" title="No push or e-mail, no mentions">
              {muteState.mutedUntil ? `Muted until ${clockTime(muteState.mutedUntil)}` : "Muted"}
            </span>
          )}
          {menuOpen && (
            <ul class="menu" role="menu" aria-label="Conversation">
              {muteState?.muted
                ? (
                  <li role="none">
                    <button type="button" role="menuitem" onClick={() => void mute(false)}>
                      Unmute
                    </button>
                  </li>
                )
                : (
                  <>
                    <li role="none">
                      <button type="button" role="menuitem" onClick={() => void mute(1)}>
                        Mute for 1 hour
                      </button>
                    </li>
                    <li role="none">
                      <button type="button" role="menuitem" onClick={() => void mute(8)}>
                        Mute for 8 hours
                      </button>
                    </li>
                    <li role="none">
                      <button type="button" role="menuitem" onClick={() => void mute(null)}>
                        Mute until I unmute
                      </button>
                    </li>
                  </>
                )}
              {conversation?.type === "group" && (
                <li role="none">
                  <button
                    type="button"
                    role="menuitem"
                    onClick={() => {
                      setMenuOpen(false);
                      setLeaving(true);
                    }}
                  >
                    Leave conversation
                  </button>
                </li>
              )}
            </ul>
          )}
        </div>
      </header>
      <div
        class="messages"
        ref={scroller}
        onScroll={onScroll}
        tabIndex={0}
        role="log"
        aria-label={`Messages in ${name}`}
      >
        <ol class="message-list">
          <li ref={topSentinel} class="history-edge" aria-hidden={state.older ? "true" : undefined}>
            {state.older === null && messages.length > 0 && (
              <span class="muted">This is the start of the conversation.</span>
            )}
            {state.loading && <span class="muted" role="status">Loading messages…</span>}
          </li>
          {!state.loading && messages.length === 0 && (
            <li class="muted empty">No messages yet. Say hello.</li>
          )}
          {messages.map((m) => (
            <MessageItem
              key={m.id}
              message={m}
              mine={m.senderId === me.id}
              sender={m.senderId ? people.get(m.senderId)?.name ?? "Someone" : "Deleted user"}
              replied={m.replyToId ? state.byId.get(m.replyToId) ?? null : undefined}
              repliedSender={(id) => people.get(id)?.name ?? "Someone"}
              seenBy={seenBy.get(m.id)}
              editing={editing === m.id}
              canDelete={m.senderId === me.id || canModerate}
              onReply={() => {
                setEditing(null);
                setReplyTo(m);
              }}
              onEdit={() => {
                setReplyTo(null);
                setEditing(m.id);
              }}
              onCancelEdit={() => setEditing(null)}
              onSaveEdit={async (content) => {
                try {
                  const readFrom = tick.current;
                  const saved = data(
                    await client.PUT("/api/messages/{id}", {
                      params: { path: { id: m.id } },
                      body: { content },
                    }),
                  );
                  dispatch({ type: "merge", messages: [saved], readFrom });
                  setEditing(null);
                } catch (err) {
                  setNotice(
                    err instanceof ApiError && (err.status === 403 || err.status === 422)
                      ? `Not edited: ${err.message}`
                      : describeError(err),
                  );
                }
              }}
              onDelete={() => setDeleting(m)}
              onReact={(emoji, present) => void react(m, emoji, present)}
              onOpenThread={() => void openThread(m.id)}
              onReport={() => setReporting(m)}
              onBlock={() =>
                m.senderId &&
                setBlocking({ id: m.senderId, name: people.get(m.senderId)?.name ?? "Someone" })}
              meId={me.id}
              nameOf={(id) => people.get(id)?.name}
              senderBlocked={isBlocked(m)}
            />
          ))}
        </ol>
      </div>
      {threadRoot && (
        <aside class="thread-panel" aria-label="Thread" data-thread-root={threadRoot}>
          <header class="thread-head">
            <h3>Thread</h3>
            <button
              type="button"
              class="link"
              onClick={() => setThreadRoot(null)}
              aria-label="Close the thread"
            >
              Close
            </button>
          </header>
          <ol class="message-list thread-list">
            {[state.byId.get(threadRoot), ...threadReplies].filter((m): m is Message => !!m)
              .map((m) => (
                <MessageItem
                  key={m.id}
                  message={m}
                  mine={m.senderId === me.id}
                  sender={m.senderId ? people.get(m.senderId)?.name ?? "Someone" : "Deleted user"}
                  replied={undefined}
                  repliedSender={(id) => people.get(id)?.name ?? "Someone"}
                  editing={false}
                  canDelete={m.senderId === me.id || canModerate}
                  onReply={() => {}}
                  onEdit={() => {}}
                  onCancelEdit={() => {}}
                  onSaveEdit={async () => {}}
                  onDelete={() => setDeleting(m)}
                  onReact={(emoji, present) => void react(m, emoji, present)}
                  meId={me.id}
                  nameOf={(id) => people.get(id)?.name}
                  senderBlocked={isBlocked(m)}
                />
              ))}
            {threadMore && (
              <li>
                <button
                  type="button"
                  class="link"
                  onClick={() => void loadThread(threadRoot, threadMore)}
                >
                  Newer replies
                </button>
              </li>
            )}
          </ol>
          <Composer
            conversationId={conversationId}
            threadId={threadRoot}
            participants={conversation?.participants}
            me={me.id}
            replyTo={null}
            replyToSender=""
            onCancelReply={() => {}}
            onSent={(m) => {
              dispatch({ type: "merge", messages: [m], readFrom: SENT });
              refreshRoot(threadRoot);
            }}
          />
        </aside>
      )}
      {newBelow && (
        <button
          type="button"
          class="new-below"
          onClick={() => {
            stickToBottom.current = true;
            scroller.current!.scrollTop = scroller.current!.scrollHeight;
            setNewBelow(false);
            markSeen();
          }}
        >
          New messages below
        </button>
      )}
      <p class="typing" aria-live="polite" data-testid="typing">
        {typingNames.length === 1 && `${typingNames[0]} is typing…`}
        {typingNames.length > 1 && `${typingNames.join(", ")} are typing…`}
      </p>
      {notice && (
        <p class="error" role="alert">
          {notice}{" "}
          <button type="button" class="link" onClick={() => setNotice(null)}>Dismiss</button>
        </p>
      )}
      <Composer
        conversationId={conversationId}
        participants={conversation?.participants}
        me={me.id}
        replyTo={replyTo}
        replyToSender={replyTo?.senderId ? people.get(replyTo.senderId)?.name ?? "Someone" : ""}
        onCancelReply={() => setReplyTo(null)}
        onSent={(m) => {
          setReplyTo(null);
          stickToBottom.current = true;
          dispatch({ type: "merge", messages: [m], readFrom: SENT });
          onActivity();
        }}
      />
      <Dialog
        open={deleting !== null}
        title="Delete this message?"
        onClose={() => setDeleting(null)}
      >
        <p>Everyone in the conversation will see that a message was deleted, not what it said.</p>
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={() => setDeleting(null)}>Keep</button>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              const m = deleting!;
              setDeleting(null);
              try {
                const r = data(
                  await client.DELETE("/api/messages/{id}", { params: { path: { id: m.id } } }),
                );
                dispatch({ type: "deleted", id: r.id, deletedAt: r.deletedAt });
              } catch (err) {
                setNotice(describeError(err));
              }
            }}
          >
            Delete
          </button>
        </div>
      </Dialog>
      <BlockDialog
        name={blocking?.name ?? null}
        onCancel={() => setBlocking(null)}
        onConfirm={async () => {
          const who = blocking!;
          setBlocking(null);
          try {
            await setBlocked(who.id, true);
            setNotice(`You blocked ${who.name}.`);
          } catch (err) {
            setNotice(describeError(err));
          }
        }}
      />
      <Dialog open={leaving} title="Leave this conversation?" onClose={() => setLeaving(false)}>
        <p>You will no longer see its messages. Someone in it can add you again.</p>
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={() => setLeaving(false)}>Stay</button>
          <button type="button" class="danger" onClick={() => void leave()}>Leave</button>
        </div>
      </Dialog>
      <ReportDialog
        subject={reporting ? { type: "message", id: reporting.id } : null}
        what="this message"
        onClose={(sent) => {
          setReporting(null);
          if (sent) setNotice("Thank you: the message was reported to the moderators.");
        }}
      />
    </div>
  );
}

/**
 * "Ana, Ben online": the first three names, then how many more; in a large group only those
 * watched (shown) are known, and the line says so.
 */
function onlineSummary(names: string[], everyone: boolean): string {
  if (!names.length) return everyone ? "nobody else online" : "nobody online among those shown";
  const listed = names.length > 3
    ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`
    : names.join(", ");
  return `${listed} online${everyone ? "" : " among those shown"}`;
}
