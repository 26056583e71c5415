/**
 * The app: loads the public configuration and the session, picks the page for the path (routes.ts),
 * guards it (signed in, role, feature flag), and keeps the user's own topic (`user:<id>`) followed
 * while signed in. On every navigation the session is read again, so a role change made by an
 * admin shows on the user's next action.
 */
import { useEffect, useState } from "preact/hooks";
import { config, loadConfig, setTitle } from "../lib/config.ts";
import { type RealtimeEnvelope, stopLive, subscribe } from "../lib/live.ts";
import { stopPresence, trackSelf } from "../lib/presence.ts";
import { currentLocation, matchPath, navigate, onNavigate } from "../lib/router.tsx";
import { loadSession, roleAtLeast, session } from "../lib/session.ts";
import { useStore } from "../lib/store.ts";
import { describeError } from "../lib/client.ts";
import type { Page } from "../lib/page.ts";
import { HOME, type RouteDef, routes } from "../routes.ts";
import { Shell } from "./Shell.tsx";
import { userEvents } from "../lib/user-events.ts";
// The cart empties itself at sign-out, whichever page is open.
import "../lib/cart.ts";

function findRoute(path: string): { route: RouteDef; params: Record<string, string> } | null {
  for (const route of routes) {
    const params = matchPath(route.path, path);
    if (params) return { route, params };
  }
  return null;
}

const loaded = new Map<RouteDef, Page>();

/** The page component of a route, loading its chunk the first time. */
function usePage(route: RouteDef | undefined): { page: Page | null; error: string | null } {
  const [, setTick] = useState(0);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!route || loaded.has(route)) return;
    let live = true;
    Promise.resolve(route.page()).then((page) => {
      loaded.set(route, page);
      if (live) setTick((n) => n + 1);
    }).catch((err) => live && setError(describeError(err)));
    return () => {
      live = false;
    };
  }, [route]);
  return { page: route ? loaded.get(route) ?? null : null, error };
}

export function App() {
  const [boot, setBoot] = useState<"loading" | "ready" | string>("loading");
  const where = useStore(currentLocation);
  const state = useStore(session);
  const cfg = useStore(config);

  useEffect(() => {
    Promise.all([loadConfig(), loadSession()])
      .then(() => setBoot("ready"))
      .catch((err) => setBoot(describeError(err)));
    return onNavigate(() => {
      void loadSession().catch(() => {});
      void loadConfig().catch(() => {});
    });
  }, []);

  // The user's own topic, while signed in: conversations joined and left, and what later domains
  // send there (notifications, orders, wallet). Ended, with the token, at sign-out.
  const userId = state.user?.id;
  useEffect(() => {
    if (!userId || boot !== "ready") return;
    const stop = subscribe(`user:${userId}`, (e: RealtimeEnvelope) => userEvents.emit(e), {
      main: true,
    });
    return () => {
      stop();
      stopLive();
      stopPresence();
    };
  }, [userId, boot]);

  // Presence, app-wide: online while any page of the app is open, signed in (lib/presence.ts).
  const userName = state.user?.name;
  useEffect(() => {
    if (!userId || boot !== "ready") return;
    return trackSelf({ id: userId, name: userName ?? "" });
  }, [userId, userName, boot]);

  const found = findRoute(where.path);
  const { page: PageComponent, error: pageError } = usePage(found?.route);

  // Redirects: home, signed-out users to sign-in, signed-in users away from sign-in.
  useEffect(() => {
    if (boot !== "ready" || state.status === "loading") return;
    if (where.path === "/") {
      navigate(state.status === "signed-in" ? HOME : "/signin", { replace: true });
    } else if (found?.route.access === "signed-in" && state.status === "signed-out") {
      navigate(`/signin?next=${encodeURIComponent(where.path + location.search)}`, {
        replace: true,
      });
    } else if (
      found?.route.path === "/signin" && state.status === "signed-in" && !where.query.has("reauth")
    ) {
      const next = where.query.get("next");
      navigate(next && next.startsWith("/") && !next.startsWith("//") ? next : HOME, {
        replace: true,
      });
    }
  }, [boot, state.status, where.path, where.seq, found?.route]);

  useEffect(() => setTitle(found?.route.title ?? "Not found"), [found?.route, cfg]);

  if (boot === "loading" || state.status === "loading") {
    return <p class="boot" role="status">Loading…</p>;
  }
  if (boot !== "ready") {
    return (
      <main class="boot" id="main">
        <h1>Cannot start</h1>
        <p role="alert">{boot}</p>
        <button type="button" onClick={() => location.reload()}>Try again</button>
      </main>
    );
  }

  let body;
  if (!found) {
    body = <Message title="Page not found" text={`Nothing lives at ${where.path}.`} />;
  } else if (found.route.access === "signed-in" && state.status !== "signed-in") {
    body = null; // redirecting
  } else if (found.route.minRole && !roleAtLeast(state.user?.role, found.route.minRole)) {
    body = (
      <Message
        title="Not allowed"
        text={`This page needs the role ${found.route.minRole}; yours is ${state.user?.role}.`}
      />
    );
  } else if (found.route.feature && cfg && !cfg.features[found.route.feature]) {
    body = <Message title="Turned off" text="An administrator has turned this part off." />;
  } else if (pageError) {
    body = <Message title="Could not load this page" text={pageError} />;
  } else if (!PageComponent) {
    body = <p role="status" class="loading">Loading…</p>;
  } else {
    body = <PageComponent params={found.params} />;
  }
  return <Shell bare={found?.route.path === "/signin"}>{body}</Shell>;
}

function Message({ title, text }: { title: string; text: string }) {
  return (
    <section class="message-page">
      <h1>{title}</h1>
      <p>{text}</p>
    </section>
  );
}
