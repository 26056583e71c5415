/**
 * The inbox: the caller's notifications, newest first, with the API's filters (type, unread only,
 * search in title and text, since), "Load more" on the keyset cursor, mark one or all read,
 * delete. A notification whose data names something the app shows links there (links.ts), and
 * following the link marks it read.
 *
 * The lists live in the query cache (lib/query.ts), one per filter, under
 * `["notifications", "inbox", query]`: "Load more" is its next page. Live, from `user:<id>`
 * (lib/user-events.ts), each event is written into every list in the cache:
 * `notification.created` puts a new notification at the top when it passes the list's filters,
 * `notification.read` marks it read (or drops it from "unread only"), `notification.read_all`
 * (one event for read-all, from any tab or device) marks every listed unread one up to its
 * `upTo` read, `notification.deleted` removes it. A page read while events arrived gets them applied to what it read; when the user's
 * feed comes up or changes transport, the lists are read again (all the pages they had).
 */
import type { InfiniteData } from "@tanstack/query-core";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { client, data, describeError, FRESH } from "../../lib/client.ts";
import { queryClient, refreshPages, useInfiniteQuery } from "../../lib/query.ts";
import { config } from "../../lib/config.ts";
import { fullTime, shortTime } from "../../lib/format.ts";
import { onFeedChange, type RealtimeEnvelope } from "../../lib/live.ts";
import { Link } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { settleUnread, unread } from "../../lib/unread.ts";
import { userEvents } from "../../lib/user-events.ts";
import {
  type InboxPage,
  type Notification,
  type NotificationType,
  TYPE_LABELS,
  TYPE_SHORT,
  TYPES,
} from "./types.ts";
import { targetOf } from "./links.ts";

const PAGE_SIZE = 20;

interface Filters {
  type: NotificationType | "";
  unreadOnly: boolean;
  search: string;
  /** A `datetime-local` value (the browser's time), or "". */
  since: string;
}

const NO_FILTERS: Filters = { type: "", unreadOnly: false, search: "", since: "" };

/** The API's query for these filters: also the inbox's key in the query cache. */
type InboxQuery = ReturnType<typeof queryOf>;

function queryOf(f: Filters) {
  return {
    type: f.type || undefined,
    unread: f.unreadOnly ? "true" as const : undefined,
    search: f.search.trim() || undefined,
    since: f.since ? new Date(f.since).toISOString() : undefined,
  };
}

/** Every inbox list in the query cache is under this key, with its query after it. */
const INBOX = ["notifications", "inbox"] as const;
type Inbox = InfiniteData<InboxPage, string | null>;

/** What the API would list under this query (for live notifications). */
function passes(q: InboxQuery, n: Notification): boolean {
  if (q.type && n.type !== q.type) return false;
  if (q.unread && n.readAt) return false;
  if (q.since && Date.parse(n.createdAt) < Date.parse(q.since)) return false;
  const text = (q.search ?? "").toLowerCase();
  return !text || n.title.toLowerCase().includes(text) || n.body.toLowerCase().includes(text);
}

/** The inbox's order: newest first, then by id (the API's keyset). */
function order(a: Notification, b: Notification): number {
  return Date.parse(b.createdAt) - Date.parse(a.createdAt) ||
    (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** `notification.read_all`: one event for a statement that read many (read-all). */
interface ReadAll {
  count: number;
  readAt: string;
  /** The newest notification it read: every one listed up to it that was unread is read now. */
  upTo: string;
  unreadCount: number;
}

/** A live event (or the answer of the page's own action) applied to one list's pages. */
function applyEvent(inbox: Inbox, e: RealtimeEnvelope, q: InboxQuery): Inbox {
  if (e.event === "notification.read_all") {
    const { readAt, upTo } = e.payload as ReadAll;
    const limit = Date.parse(upTo);
    const isRead = (x: Notification) => !x.readAt && Date.parse(x.createdAt) <= limit;
    if (!inbox.pages.some((page) => page.items.some(isRead))) return inbox;
    return {
      ...inbox,
      pages: inbox.pages.map((page) => ({
        ...page,
        items: q.unread
          ? page.items.filter((x) => !isRead(x))
          : page.items.map((x) => isRead(x) ? { ...x, readAt } : x),
      })),
    };
  }
  const n = e.payload as Notification;
  let pages = inbox.pages.map((page) => ({
    ...page,
    items: page.items.filter((x) => x.id !== n.id),
  }));
  const had = pages.some((page, i) => page.items.length !== inbox.pages[i].items.length);
  if (e.event === "notification.created") {
    if (!passes(q, n)) return inbox;
    pages[0] = { ...pages[0], items: [n, ...pages[0].items].sort(order) };
  } else if (e.event === "notification.read") {
    if (!had) return inbox;
    if (!q.unread) {
      pages = inbox.pages.map((page) => ({
        ...page,
        items: page.items.map((x) => x.id === n.id ? { ...x, readAt: n.readAt } : x),
      }));
    }
  } else if (e.event !== "notification.deleted" || !had) return inbox;
  return { ...inbox, pages };
}

/**
 * Events seen lately, numbered: a list read while they arrived gets them applied to what it
 * read (an answer can be older than the event), as the cache holds them for what it had.
 */
let seq = 0;
const recent: { seq: number; at: number; e: RealtimeEnvelope }[] = [];

/** Applies an event to every inbox list in the cache. */
function toEveryInbox(e: RealtimeEnvelope): void {
  for (const query of queryClient.getQueryCache().findAll({ queryKey: INBOX })) {
    const q = query.queryKey[2] as InboxQuery;
    queryClient.setQueryData<Inbox>(query.queryKey, (inbox) => inbox && applyEvent(inbox, e, q));
  }
}

userEvents.on((e) => {
  if (!e.event.startsWith("notification.")) return;
  const now = Date.now();
  recent.push({ seq: ++seq, at: now, e });
  while (recent.length && (recent[0].at < now - 60_000 || recent.length > 200)) recent.shift();
  toEveryInbox(e);
});

async function readPage(q: InboxQuery, cursor: string | null): Promise<InboxPage> {
  const since = seq;
  const page = data(
    await client.GET("/api/notifications", {
      params: { query: { ...q, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      ...FRESH,
    }),
  );
  let inbox: Inbox = { pages: [page], pageParams: [cursor] };
  for (const r of recent) {
    if (r.seq <= since) continue;
    // A later page takes no new notification: those go to the top.
    if (cursor && r.e.event === "notification.created") continue;
    inbox = applyEvent(inbox, r.e, q);
  }
  return inbox.pages[0];
}

export function Inbox() {
  const me = useStore(session).user;
  const userId = me?.id;
  const cfg = useStore(config);
  const count = useStore(unread);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [actionError, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const ids = { type: useId(), unread: useId(), search: useId(), since: useId() };

  const q = queryOf(filters);
  const inbox = useInfiniteQuery({
    queryKey: [...INBOX, q],
    queryFn: ({ pageParam }) => readPage(q, pageParam),
    initialPageParam: null as string | null,
    getNextPageParam: (last: InboxPage) => last.nextCursor,
    // Live events keep it current; a new filter reads at once. A list left for another filter
    // is dropped (gcTime 0): coming back to a filter reads its first page again, not every page
    // it had grown to.
    staleTime: 0,
    gcTime: 0,
  });
  // Every notification once, in the order of the pages (a later page may repeat one that moved).
  const listed = inbox.data
    ? (() => {
      const seen = new Set<string>();
      return inbox.data.pages.flatMap((page) => page.items).filter((n) =>
        !seen.has(n.id) && seen.add(n.id)
      );
    })()
    : inbox.error
    ? []
    : null;
  const error = actionError ?? (inbox.error ? describeError(inbox.error) : null);

  // When the user's feed comes up or changes transport, what came meanwhile is read again.
  useEffect(() => {
    if (!userId) return;
    return onFeedChange(
      `user:${userId}`,
      () => void refreshPages(INBOX),
    );
  }, [userId]);

  // Order notifications lead the shop's owner to the shop's order, the buyer to the order: the
  // session names the person's shop (null without one), so nobody asks GET /api/store/vendors/me.
  const vendorId = me?.vendor === undefined ? undefined : me.vendor?.id ?? null;

  async function loadMore() {
    setError(null);
    await inbox.fetchNextPage();
  }

  async function markRead(n: Notification) {
    setBusy(n.id);
    try {
      const answer = data(
        await client.PUT("/api/notifications/{id}/read", { params: { path: { id: n.id } } }),
      );
      toEveryInbox(
        {
          event: "notification.read",
          payload: { ...n, readAt: answer.readAt },
        } as RealtimeEnvelope,
      );
      setSaid(`Marked “${n.title}” read.`);
      settleUnread();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(null);
    }
  }

  async function remove(n: Notification) {
    setBusy(n.id);
    try {
      await client.DELETE("/api/notifications/{id}", { params: { path: { id: n.id } } });
      toEveryInbox({ event: "notification.deleted", payload: n } as RealtimeEnvelope);
      setSaid(`Deleted “${n.title}”.`);
      settleUnread();
      // The button pressed is gone: the list keeps the focus.
      listRef.current?.focus();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(null);
    }
  }

  async function markAll() {
    setBusy("all");
    try {
      const answer = data(await client.PUT("/api/notifications/read-all"));
      const now = new Date().toISOString();
      for (const query of queryClient.getQueryCache().findAll({ queryKey: INBOX })) {
        const unreadOnly = !!(query.queryKey[2] as InboxQuery).unread;
        queryClient.setQueryData<Inbox>(query.queryKey, (was) =>
          was && {
            ...was,
            pages: was.pages.map((page) => ({
              ...page,
              items: unreadOnly
                ? []
                : page.items.map((n) => (n.readAt ? n : { ...n, readAt: now })),
            })),
          });
      }
      setSaid(
        answer.updated === 1 ? "Marked 1 notification read." : `Marked ${answer.updated} read.`,
      );
      settleUnread();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(null);
    }
  }

  const filtered = !!(filters.type || filters.unreadOnly || filters.search.trim() || filters.since);
  const features = cfg?.features ??
    { messaging: true, store: true, wallet: true, notifications: true };

  return (
    <section class="inbox">
      <div class="card-head">
        <h1>Notifications</h1>
        <p class="muted" data-testid="inbox-unread">
          {count === null ? "" : count === 0 ? "Nothing unread" : `${count} unread`}
        </p>
        <button
          type="button"
          class="secondary"
          disabled={busy !== null || count === 0}
          onClick={markAll}
        >
          Mark all read
        </button>
      </div>
      <form
        class="filters"
        role="search"
        aria-label="Filter notifications"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters({ ...draft });
        }}
      >
        <div>
          <label for={ids.type}>Type</label>
          <select
            id={ids.type}
            value={draft.type}
            onChange={(e) => {
              const next = { ...draft, type: e.currentTarget.value as Filters["type"] };
              setDraft(next);
              setFilters(next);
            }}
          >
            <option value="">Any type</option>
            {TYPES.map((t) => <option key={t} value={t}>{TYPE_LABELS[t]}</option>)}
          </select>
        </div>
        <div>
          <label for={ids.search}>Search title and text</label>
          <input
            id={ids.search}
            type="search"
            value={draft.search}
            maxLength={200}
            onInput={(e) => setDraft({ ...draft, search: e.currentTarget.value })}
          />
        </div>
        <div>
          <label for={ids.since}>Since</label>
          <input
            id={ids.since}
            type="datetime-local"
            value={draft.since}
            onInput={(e) => setDraft({ ...draft, since: e.currentTarget.value })}
          />
        </div>
        <div class="check">
          <input
            id={ids.unread}
            type="checkbox"
            checked={draft.unreadOnly}
            onChange={(e) => {
              const next = { ...draft, unreadOnly: e.currentTarget.checked };
              setDraft(next);
              setFilters(next);
            }}
          />
          <label for={ids.unread}>Unread only</label>
        </div>
        <div class="filter-actions">
          <button type="submit">Apply filters</button>
          {filtered && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setDraft(NO_FILTERS);
                setFilters(NO_FILTERS);
              }}
            >
              Clear filters
            </button>
          )}
        </div>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      <p class="visually-hidden" role="status">{said}</p>
      {listed === null
        ? <p class="muted" role="status">Loading…</p>
        : listed.length === 0
        ? (
          <p data-testid="inbox-empty">
            {filtered ? "No notification matches these filters." : "No notifications yet."}
          </p>
        )
        : (
          <ul
            class="plain-list notifications"
            data-testid="notifications"
            ref={listRef}
            tabIndex={-1}
            aria-label="Notifications, newest first"
          >
            {listed.map((n) => (
              <Item
                key={n.id}
                n={n}
                target={targetOf(n, features, vendorId)}
                busy={busy === n.id || busy === "all"}
                onRead={() => markRead(n)}
                onDelete={() => remove(n)}
              />
            ))}
          </ul>
        )}
      {inbox.hasNextPage && (
        <button
          type="button"
          class="secondary"
          disabled={inbox.isFetchingNextPage}
          onClick={loadMore}
        >
          Load more
        </button>
      )}
    </section>
  );
}

function Item(
  { n, target, busy, onRead, onDelete }: {
    n: Notification;
    target: ReturnType<typeof targetOf>;
    busy: boolean;
    onRead: () => void;
    onDelete: () => void;
  },
) {
  const unreadNow = !n.readAt;
  return (
    <li
      class={`notification${unreadNow ? " unread" : ""}`}
      data-notification-id={n.id}
      data-read={unreadNow ? "false" : "true"}
    >
      <div class="notification-text">
        <p class="notification-meta small">
          <span class={`type-tag type-${n.type.toLowerCase()}`}>{TYPE_SHORT[n.type]}</span>
          {(n.priority === "high" || n.priority === "critical") && (
            <span class="priority">{n.priority === "critical" ? "Critical" : "Important"}</span>
          )}
          <time dateTime={n.createdAt} title={fullTime(n.createdAt)}>{shortTime(n.createdAt)}</time>
          {unreadNow && <span class="unread-mark">Unread</span>}
        </p>
        <h2 class="notification-title">
          {target
            ? (
              <Link
                href={target.href}
                title={target.label}
                onClick={() => {
                  if (!unreadNow) return;
                  void client.PUT("/api/notifications/{id}/read", {
                    params: { path: { id: n.id } },
                  })
                    .then(settleUnread, () => {});
                }}
              >
                {n.title}
              </Link>
            )
            : n.title}
        </h2>
        {n.body && <p class="notification-body">{n.body}</p>}
      </div>
      <div class="row-actions">
        {unreadNow && (
          <button
            type="button"
            class="secondary small"
            disabled={busy}
            onClick={onRead}
            aria-label={`Mark read: ${n.title}`}
          >
            Mark read
          </button>
        )}
        <button
          type="button"
          class="secondary small"
          disabled={busy}
          onClick={onDelete}
          aria-label={`Delete: ${n.title}`}
        >
          Delete
        </button>
      </div>
    </li>
  );
}
