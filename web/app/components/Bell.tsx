/**
 * The header's notification bell: a link to the inbox with the live count of unread
 * notifications (lib/unread.ts), named for screen readers ("Notifications, 3 unread"). New
 * notifications are announced politely, once each time the count rises; a falling count (the
 * user reading) is not announced. Hidden while `features.notifications` is off.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { config } from "../lib/config.ts";
import { currentLocation, Link } from "../lib/router.tsx";
import { session } from "../lib/session.ts";
import { useStore } from "../lib/store.ts";
import { followUnread, unread } from "../lib/unread.ts";

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

  if (!on) return null;
  const label = count === null
    ? "Notifications"
    : `Notifications, ${count === 0 ? "none" : count} unread`;
  return (
    <>
      <Link
        href="/notifications"
        class="bell"
        aria-label={label}
        title={label}
        data-testid="bell"
        data-count={count ?? ""}
        aria-current={where.path === "/notifications" ? "page" : undefined}
      >
        <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false">
          <path d="M12 2.5a1.5 1.5 0 0 0-1.5 1.5v.7A6.5 6.5 0 0 0 5.5 11v4.2L3.8 17a1 1 0 0 0 .7 1.7h15a1 1 0 0 0 .7-1.7l-1.7-1.8V11a6.5 6.5 0 0 0-5-6.3V4A1.5 1.5 0 0 0 12 2.5Zm-2.4 17.2a2.5 2.5 0 0 0 4.8 0Z" />
        </svg>
        {count
          ? <span class="bell-count" aria-hidden="true">{count > 99 ? "99+" : count}</span>
          : null}
      </Link>
      <span class="visually-hidden" aria-live="polite">{said}</span>
    </>
  );
}
