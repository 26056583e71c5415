/**
 * Whether the other participants of the open conversation are online, for every one the page
 * shows, with at most `MAX_WATCHED` presence channels (one per person watched: lib/presence.ts).
 *
 * A conversation with up to `MAX_WATCHED` others watches them all. A larger group watches those
 * whose avatar is in view in the participants' strip (a row that scrolls sideways), and a few
 * either side of it: scrolling joins the channels of those coming into view and leaves those gone
 * out of it, so any participant shows their online state once scrolled to, whatever the group's
 * size. Where the strip is not shown (a phone's narrow header), nobody's avatar is on screen: the
 * summary line then follows the first `MAX_WATCHED`.
 */
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { MAX_WATCHED, presenceWatcher } from "../../lib/presence.ts";

export interface ParticipantPresence {
  /** Who is online among those watched, or null while presence is unknown. */
  present: Set<string> | null;
  /** How many are watched now (the strip's `data-presence-watched`). */
  watched: number;
  /** Whether everyone is watched (else: those shown). */
  everyone: boolean;
  /** The participants' strip: its items carry `data-user-id`. */
  strip: RefObject<HTMLUListElement | null>;
}

export function useParticipantPresence(otherIds: string[]): ParticipantPresence {
  const strip = useRef<HTMLUListElement>(null);
  const [present, setPresent] = useState<Set<string> | null>(null);
  const [watched, setWatched] = useState(0);
  const key = otherIds.join(",");
  const everyone = otherIds.length <= MAX_WATCHED;
  useEffect(() => {
    setPresent(null);
    if (!otherIds.length) return;
    const watcher = presenceWatcher(setPresent);
    const watch = (ids: string[]) => {
      watcher.watch(ids);
      setWatched(Math.min(ids.length, MAX_WATCHED));
    };
    if (everyone || !strip.current) {
      watch(otherIds);
      return () => watcher.stop();
    }
    const list = strip.current;
    const inView = new Set<string>();
    const others = new Set(otherIds);
    // In the strip's order, so the cap keeps the ones nearest its start.
    const update = () => {
      if (!list.getClientRects().length) return watch(otherIds);
      watch(otherIds.filter((id) => inView.has(id)));
    };
    const observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const id = (entry.target as HTMLElement).dataset.userId;
        if (!id || !others.has(id)) continue;
        if (entry.isIntersecting) inView.add(id);
        else inView.delete(id);
      }
      update();
    }, { root: list, rootMargin: "0px 64px" });
    for (const item of list.querySelectorAll<HTMLElement>("[data-user-id]")) {
      observer.observe(item);
    }
    addEventListener("resize", update);
    update();
    return () => {
      observer.disconnect();
      removeEventListener("resize", update);
      watcher.stop();
    };
  }, [key]);
  return { present, watched, everyone, strip };
}
