/**
 * Path routing with the History API: `navigate()`, `<Link>`, and `matchPath()` for the route
 * table in routes.ts. The server answers every page path with index.html (stack/web-static.ts;
 * a static host needs the same fallback, docs/web.md).
 */
import type { ComponentChildren, PartialAnchorHTMLAttributes, TargetedMouseEvent } from "preact";
import { createStore } from "./store.ts";

export interface Location {
  path: string;
  query: URLSearchParams;
  /** Increases with every navigation, also to the same path (pages refresh on it). */
  seq: number;
}

const here = (seq: number): Location => ({
  path: location.pathname,
  query: new URLSearchParams(location.search),
  seq,
});

export const currentLocation = createStore<Location>(here(0));

type NavigationListener = (to: Location) => void;
const beforeListeners = new Set<NavigationListener>();
/** Called on every navigation (e.g. the session is read again: roles may have changed). */
export function onNavigate(listener: NavigationListener): () => void {
  beforeListeners.add(listener);
  return () => beforeListeners.delete(listener);
}

function changed() {
  const next = here(currentLocation.get().seq + 1);
  for (const listener of [...beforeListeners]) listener(next);
  currentLocation.set(next);
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = new URL(to, location.href);
  if (url.origin !== location.origin) {
    location.assign(url);
    return;
  }
  if (opts.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  changed();
}

addEventListener("popstate", changed);

/** `/chat/:id` against `/chat/42` gives `{ id: "42" }`; a trailing `?` makes a part optional. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const have = path.split("/").filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < Math.max(want.length, have.length); i++) {
    const part = want[i];
    if (part === undefined) return null;
    const optional = part.endsWith("?");
    const name = part.replace(/^:|\?$/g, "");
    if (have[i] === undefined) {
      if (optional) continue;
      return null;
    }
    if (part.startsWith(":")) params[name] = decodeURIComponent(have[i]);
    else if (part !== have[i]) return null;
  }
  return params;
}

type LinkProps = Omit<PartialAnchorHTMLAttributes<HTMLAnchorElement>, "href" | "role"> & {
  href: string;
  children?: ComponentChildren;
};

/** An ordinary link (it works with a middle click or a new tab) that navigates in place. */
export function Link({ href, onClick, ...rest }: LinkProps) {
  return (
    <a
      href={href}
      onClick={(e: TargetedMouseEvent<HTMLAnchorElement>) => {
        if (typeof onClick === "function") onClick(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        navigate(href);
      }}
      {...rest}
    />
  );
}
