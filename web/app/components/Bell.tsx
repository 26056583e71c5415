/**
 * The header's notification bell: a button with the live count of unread notifications
 * (lib/unread.ts), named for screen readers ("Notifications, 3 unread"), that opens a short feed:
 * the 5 newest notifications (title, time, an unread mark; each a link to what it is about, as
 * in the inbox, marking it read on the way), "Mark all read" and "See all" (the inbox). The
 * button says whether the feed is open (`aria-expanded`); Escape or a click elsewhere closes it
 * and Escape gives the focus back to the button. New notifications are announced politely, once
 * each time the count rises; a falling count (the user reading) is not announced. Hidden while
 * `features.notifications` is off.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { client, data, describeError, FRESH } from "../lib/client.ts";
import { config } from "../lib/config.ts";
import { shortTime } from "../lib/format.ts";
import { currentLocation, Link } from "../lib/router.tsx";
import { session } from "../lib/session.ts";
import { useStore } from "../lib/store.ts";
import { followUnread, refreshUnread, settleUnread, unread } from "../lib/unread.ts";
import { targetOf } from "../pages/notifications/links.ts";
import type { Notification } from "../pages/notifications/types.ts";

const FEED_SIZE = 5;

export function Bell() {
  const cfg = useStore(config);
  const user = useStore(session).user;
  const count = useStore(unread);
  const where = useStore(currentLocation);
  const on = !!user && cfg?.features.notifications === true;
  const userId = on ? user.id : null;
  useEffect(() => followUnread(userId), [userId]);
  useEffect(() => () => followUnread(null), []);

  const [said, setSaid] = useState("");
  const before = useRef<number | null>(null);
  useEffect(() => {
    if (count !== null && before.current !== null && count > before.current) {
      setSaid(count === 1 ? "1 unread notification" : `${count} unread notifications`);
    }
    before.current = count;
  }, [count]);

  const [open, setOpen] = useState(false);
  const [feed, setFeed] = useState<Notification[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const feedId = useId();

  // Read the feed when it opens, and again while open when the count moves.
  useEffect(() => {
    if (!open || !on) return;
    let live = true;
    client.GET("/api/notifications", { params: { query: { limit: FEED_SIZE } }, ...FRESH })
      .then((r) => live && setFeed(data(r).items))
      .catch((err) => live && setError(describeError(err)));
    return () => {
      live = false;
    };
  }, [open, on, count]);

  // A navigation or a click elsewhere closes it.
  useEffect(() => setOpen(false), [where.path]);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", away);
    return () => document.removeEventListener("pointerdown", away);
  }, [open]);

  if (!on) return null;
  const label = count === null
    ? "Notifications"
    : `Notifications, ${count === 0 ? "none" : count} unread`;

  function close() {
    setOpen(false);
    button.current?.focus();
  }

  async function markAll() {
    setBusy(true);
    setError(null);
    try {
      data(await client.PUT("/api/notifications/read-all"));
      const now = new Date().toISOString();
      setFeed((list) => list && list.map((n) => (n.readAt ? n : { ...n, readAt: now })));
      unread.set(0);
      void refreshUnread();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  const features = cfg!.features;
  const vendorId = user.vendor === undefined ? undefined : user.vendor?.id ?? null;
  return (
    <div
      class="bell-wrap"
      ref={wrap}
      onKeyDown={(e) => {
        if (e.key === "Escape" && open) {
          e.stopPropagation();
          close();
        }
      }}
    >
      <button
        type="button"
        ref={button}
        class="bell"
        aria-label={label}
        title={label}
        aria-expanded={open}
        aria-controls={feedId}
        data-testid="bell"
        data-count={count ?? ""}
        onClick={() => {
          setError(null);
          setOpen(!open);
        }}
      >
        <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false">
          <path d="M12 2.5a1.5 1.5 0 0 0-1.5 1.5v.7A6.5 6.5 0 0 0 5.5 11v4.2L3.8 17a1 1 0 0 0 .7 1.7h15a1 1 0 0 0 .7-1.7l-1.7-1.8V11a6.5 6.5 0 0 0-5-6.3V4A1.5 1.5 0 0 0 12 2.5Zm-2.4 17.2a2.5 2.5 0 0 0 4.8 0Z" />
        </svg>
        {count
          ? <span class="bell-count" aria-hidden="true">{count > 99 ? "99+" : count}</span>
          : null}
      </button>
      <span class="visually-hidden" aria-live="polite">{said}</span>
      {open && (
        <section
          id={feedId}
          class="bell-feed"
          aria-label="Newest notifications"
          data-testid="bell-feed"
        >
          {error && <p class="error" role="alert">{error}</p>}
          {feed === null && !error && <p class="muted">Loading…</p>}
          {feed?.length === 0 && <p class="muted">No notifications yet.</p>}
          {feed && feed.length > 0 && (
            <ul class="plain-list">
              {feed.map((n) => {
                const target = targetOf(n, features, vendorId);
                const isUnread = !n.readAt;
                return (
                  <li key={n.id} class="bell-item" data-read={isUnread ? "false" : "true"}>
                    {isUnread && <span class="bell-dot" aria-hidden="true" />}
                    <span class="bell-item-title">
                      {target
                        ? (
                          <Link
                            href={target.href}
                            title={target.label}
                            onClick={() => {
                              setOpen(false);
                              if (!isUnread) return;
                              void client.PUT("/api/notifications/{id}/read", {
                                params: { path: { id: n.id } },
                              }).then(settleUnread, () => {});
                            }}
                          >
                            {n.title}
                          </Link>
                        )
                        : n.title}
                      {isUnread && <span class="visually-hidden">&nbsp;(unread)</span>}
                    </span>
                    <time dateTime={n.createdAt}>{shortTime(n.createdAt)}</time>
                  </li>
                );
              })}
            </ul>
          )}
          <div class="bell-feed-actions">
            <button
              type="button"
              class="secondary small"
              disabled={busy || !count}
              onClick={markAll}
            >
              Mark all read
            </button>
            <Link href="/notifications" onClick={() => setOpen(false)}>See all</Link>
          </div>
        </section>
      )}
    </div>
  );
}
