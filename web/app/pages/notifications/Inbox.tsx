/**
 * The inbox: the caller's notifications, newest first, with the API's filters (type, unread only,
 * search in title and text, since), "Load more" on the keyset cursor, mark one or all read,
 * delete. A notification whose data names something the app shows links there (links.ts), and
 * following the link marks it read.
 *
 * Live, from `user:<id>` (lib/user-events.ts): `notification.created` puts a new notification at
 * the top when it passes the filters, `notification.read` marks it read (or drops it from "unread
 * only"), `notification.read_all` (one event for read-all, from any tab or device) marks every
 * listed unread one up to its `upTo` read, `notification.deleted` removes it. Events that come while a page is being read wait
 * for it and are applied to it; when the user's feed comes up or changes transport, the first
 * page is read again and merged (what is older than it stays).
 */
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { describeError } from "../../lib/api.ts";
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
  notificationsApi,
  type NotificationType,
  TYPE_LABELS,
  TYPE_SHORT,
  TYPES,
} from "./api.ts";
import { isOrderNotification, targetOf } from "./links.ts";

const PAGE_SIZE = 20;

interface Filters {
  type: NotificationType | "";
  unreadOnly: boolean;
  search: string;
  /** A `datetime-local` value (the browser's time), or "". */
  since: string;
}

const NO_FILTERS: Filters = { type: "", unreadOnly: false, search: "", since: "" };

interface Listed {
  items: Notification[];
  cursor: string | null;
}

function queryOf(f: Filters) {
  return {
    type: f.type,
    unread: f.unreadOnly ? "true" as const : "" as const,
    search: f.search.trim(),
    since: f.since ? new Date(f.since).toISOString() : "",
  };
}

/** What the API would list under these filters (for live notifications). */
function passes(f: Filters, n: Notification): boolean {
  if (f.type && n.type !== f.type) return false;
  if (f.unreadOnly && n.readAt) return false;
  if (f.since && Date.parse(n.createdAt) < new Date(f.since).getTime()) return false;
  const q = f.search.trim().toLowerCase();
  return !q || n.title.toLowerCase().includes(q) || n.body.toLowerCase().includes(q);
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

function applyEvent(listed: Listed, e: RealtimeEnvelope, f: Filters): Listed {
  if (e.event === "notification.read_all") {
    const { readAt, upTo } = e.payload as ReadAll;
    const limit = Date.parse(upTo);
    const isRead = (x: Notification) => !x.readAt && Date.parse(x.createdAt) <= limit;
    if (!listed.items.some(isRead)) return listed;
    return {
      ...listed,
      items: f.unreadOnly
        ? listed.items.filter((x) => !isRead(x))
        : listed.items.map((x) => isRead(x) ? { ...x, readAt } : x),
    };
  }
  const n = e.payload as Notification;
  const at = listed.items.findIndex((x) => x.id === n.id);
  const without = at < 0 ? listed.items : listed.items.filter((x) => x.id !== n.id);
  if (e.event === "notification.created") {
    if (!passes(f, n)) return listed;
    return { ...listed, items: [n, ...without].sort(order) };
  }
  if (e.event === "notification.read" && at >= 0) {
    if (f.unreadOnly) return { ...listed, items: without };
    const items = listed.items.slice();
    items[at] = { ...items[at], readAt: n.readAt };
    return { ...listed, items };
  }
  if (e.event === "notification.deleted" && at >= 0) return { ...listed, items: without };
  return listed;
}

/** The first page read again, over what was listed: what is older than it stays. */
function mergeFirst(current: Listed | null, fresh: InboxPage): Listed {
  if (!current || !fresh.nextCursor || !fresh.items.length) {
    return { items: fresh.items, cursor: fresh.nextCursor };
  }
  const last = fresh.items[fresh.items.length - 1];
  const older = current.items.filter((n) => order(last, n) < 0);
  return {
    items: [...fresh.items, ...older],
    cursor: older.length ? current.cursor : fresh.nextCursor,
  };
}

export function Inbox() {
  const userId = useStore(session).user?.id;
  const cfg = useStore(config);
  const count = useStore(unread);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [listed, setListed] = useState<Listed | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState<string | null>(null);
  const [vendorId, setVendorId] = useState<string | null | undefined>(undefined);
  const listRef = useRef<HTMLUListElement>(null);
  const current = useRef(filters);
  current.current = filters;
  // While a page is being read, live events wait here, then apply to what was read.
  const generation = useRef(0);
  const pending = useRef(false);
  const waiting = useRef<RealtimeEnvelope[]>([]);
  const ids = { type: useId(), unread: useId(), search: useId(), since: useId() };

  async function read(mode: "replace" | "merge") {
    const mine = ++generation.current;
    const f = current.current;
    pending.current = true;
    if (mode === "replace") {
      waiting.current = [];
      setListed(null);
    }
    try {
      const page = await notificationsApi.list({ ...queryOf(f), limit: PAGE_SIZE });
      if (mine !== generation.current) return;
      const queued = waiting.current;
      waiting.current = [];
      pending.current = false;
      setListed((was) => {
        let next = mode === "replace"
          ? { items: page.items, cursor: page.nextCursor }
          : mergeFirst(was, page);
        for (const e of queued) next = applyEvent(next, e, f);
        return next;
      });
      setError(null);
    } catch (err) {
      if (mine !== generation.current) return;
      pending.current = false;
      waiting.current = [];
      setError(describeError(err));
      setListed((was) => was ?? { items: [], cursor: null });
    }
  }

  useEffect(() => void read("replace"), [filters]);

  useEffect(() => {
    const off = userEvents.on((e) => {
      if (!e.event.startsWith("notification.")) return;
      if (pending.current) waiting.current.push(e);
      else setListed((was) => was && applyEvent(was, e, current.current));
    });
    const offFeed = userId ? onFeedChange(`user:${userId}`, () => void read("merge")) : () => {};
    return () => {
      off();
      offFeed();
    };
  }, [userId]);

  // Order notifications lead the shop's owner to the shop, the buyer to the order.
  const needsVendor = cfg?.features.store && listed?.items.some(isOrderNotification);
  useEffect(() => {
    if (!needsVendor || vendorId !== undefined) return;
    notificationsApi.myVendorId().then(setVendorId, () => setVendorId(null));
  }, [needsVendor]);

  async function loadMore() {
    if (!listed?.cursor) return;
    try {
      const page = await notificationsApi.list({
        ...queryOf(current.current),
        limit: PAGE_SIZE,
        cursor: listed.cursor,
      });
      setListed((was) => {
        const have = new Set((was?.items ?? []).map((n) => n.id));
        return {
          items: [...(was?.items ?? []), ...page.items.filter((n) => !have.has(n.id))],
          cursor: page.nextCursor,
        };
      });
    } catch (err) {
      setError(describeError(err));
    }
  }

  async function markRead(n: Notification) {
    setBusy(n.id);
    try {
      const answer = await notificationsApi.markRead(n.id);
      setListed((was) =>
        was && applyEvent(
          was,
          {
            event: "notification.read",
            payload: { ...n, readAt: answer.readAt },
          } as RealtimeEnvelope,
          current.current,
        )
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
      await notificationsApi.remove(n.id);
      setListed((was) => was && { ...was, items: was.items.filter((x) => x.id !== n.id) });
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
      const answer = await notificationsApi.markAllRead();
      const now = new Date().toISOString();
      setListed((was) =>
        was && {
          ...was,
          items: current.current.unreadOnly
            ? []
            : was.items.map((n) => (n.readAt ? n : { ...n, readAt: now })),
        }
      );
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
        : listed.items.length === 0
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
            {listed.items.map((n) => (
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
      {listed?.cursor && (
        <button type="button" class="secondary" onClick={loadMore}>Load more</button>
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
                  if (unreadNow) void notificationsApi.markRead(n.id).then(settleUnread, () => {});
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
