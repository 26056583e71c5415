/**
 * The signed-in user's count of unread notifications, for the header's bell (on the first page:
 * kept small), the inbox and the tab's title.
 *
 * Read from `GET /api/notifications?limit=1` (`unreadCount`), then kept current by the live
 * events on `user:<id>`: `notification.created` adds one when the notification is unread (only
 * inbox notifications are announced), `notification.read` takes one off, `notification.read_all`
 * (read-all: one event for all it read) sets the count it carries, `notification.deleted`
 * takes one off when the deleted one was unread. The count is read again from the API:
 * - when the user's feed comes up or changes transport (a first subscription starts from the
 *   moment it connects, so what happened between the first read and then is not in the events);
 * - two seconds after the last of a burst of events, or after the page's own changes: an event
 *   can tell of a change the first read already counted (a bulk send's inbox rows are written
 *   before their events go out), so the count settles on the server's figure.
 */
import { client, data, FRESH } from "./client.ts";
import { setTitleCount } from "./config.ts";
import { onFeedChange } from "./live.ts";
import { createStore } from "./store.ts";
import { userEvents } from "./user-events.ts";

/** null while unknown (signed out, notifications off, not read yet). */
export const unread = createStore<number | null>(null);
// The tab's title leads with the count ("(3) Chat · Agora"), nothing when there is none.
unread.subscribe(setTitleCount);

const SETTLE_MS = 2_000;
let owner: string | null = null;
let generation = 0;
let settleTimer: ReturnType<typeof setTimeout> | undefined;
let stopFeed: (() => void) | null = null;

/** Reads the count again; an answer overtaken by a later read is dropped. */
export function refreshUnread(): Promise<void> {
  if (!owner) return Promise.resolve();
  const mine = ++generation;
  const who = owner;
  return client.GET("/api/notifications", { params: { query: { limit: 1 } }, ...FRESH })
    .then(data)
    .then((page) => {
      if (mine === generation && who === owner) unread.set(page.unreadCount);
    })
    .catch(() => {
      // The next event or feed change reads again; the bell keeps what it showed.
    });
}

/** Reads the count again shortly, once, however many changes come meanwhile. */
export function settleUnread(): void {
  clearTimeout(settleTimer);
  settleTimer = setTimeout(() => void refreshUnread(), SETTLE_MS);
}

/** Follows this user's count (null: nobody, or notifications off). */
export function followUnread(userId: string | null): void {
  if (userId === owner) return;
  owner = userId;
  generation++;
  clearTimeout(settleTimer);
  stopFeed?.();
  stopFeed = null;
  unread.set(null);
  if (!userId) return;
  stopFeed = onFeedChange(`user:${userId}`, () => void refreshUnread());
  void refreshUnread();
}

interface Announced {
  id: string;
  readAt: string | null;
}

userEvents.on((e) => {
  if (!owner || !e.event.startsWith("notification.")) return;
  if (e.event === "notification.read_all") {
    // One event for many read at once (read-all): it carries the count after it.
    unread.set((e.payload as { unreadCount: number }).unreadCount);
    settleUnread();
    return;
  }
  const n = e.payload as Announced;
  let delta = 0;
  if (e.event === "notification.created" && !n.readAt) delta = 1;
  else if (e.event === "notification.read") delta = -1;
  else if (e.event === "notification.deleted" && !n.readAt) delta = -1;
  const count = unread.get();
  if (delta && count !== null) unread.set(Math.max(0, count + delta));
  settleUnread();
});
