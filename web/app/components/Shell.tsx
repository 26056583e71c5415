/**
 * The frame of every page: a skip link, the header (brand from the white-label, navigation from
 * routes.ts, header widgets, the live-connection indicator, the user and sign-out) and <main>.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { config } from "../lib/config.ts";
import { currentLocation, Link, navigate } from "../lib/router.tsx";
import { roleAtLeast, session, signOut } from "../lib/session.ts";
import { useStore } from "../lib/store.ts";
import { headerWidgets, HOME, routes } from "../routes.ts";
import { Avatar } from "./Avatar.tsx";
import { Brand } from "./Brand.tsx";
import { LiveIndicator } from "./LiveIndicator.tsx";

export function Shell({ children, bare }: { children: ComponentChildren; bare?: boolean }) {
  const state = useStore(session);
  const cfg = useStore(config);
  const where = useStore(currentLocation);
  const user = state.user;
  const [busy, setBusy] = useState(false);
  const nav = routes.filter((r) =>
    r.nav && (user || r.publicNav) && (!r.minRole || roleAtLeast(user?.role, r.minRole)) &&
    (!r.feature || cfg?.features[r.feature] !== false)
  );
  return (
    <>
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="app-header">
        <Link href={user ? HOME : "/signin"} class="brand-link">
          <Brand />
        </Link>
        {!bare && nav.length > 0 && (
          <nav aria-label="Main">
            <ul>
              {nav.map((r) => (
                <li key={r.path}>
                  <Link
                    href={r.nav!.prefix}
                    aria-current={where.path.startsWith(r.nav!.prefix) ? "page" : undefined}
                  >
                    {r.nav!.label}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {user && (
          <div class="header-end">
            {headerWidgets.map((Widget, i) => <Widget key={i} />)}
            <LiveIndicator />
            <Link
              href="/account"
              class="who"
              data-testid="who"
              aria-current={where.path === "/account" ? "page" : undefined}
              title="Your account: profile, sessions, export, deletion"
            >
              <Avatar id={user.id} name={user.name} image={user.image} size={24} />{" "}
              <span class="who-name" data-testid="who-name">{user.name}</span>{" "}
              <span class="role-badge" data-testid="role">{user.role}</span>
              <span class="visually-hidden">(your account)</span>
            </Link>
            <button
              type="button"
              class="secondary"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                try {
                  await signOut();
                } finally {
                  setBusy(false);
                  navigate("/signin");
                }
              }}
            >
              Sign out
            </button>
          </div>
        )}
        {!user && !bare && (
          <div class="header-end">
            <Link
              class="button secondary small"
              href={`/signin?next=${encodeURIComponent(where.path + location.search)}`}
            >
              Sign in
            </Link>
          </div>
        )}
      </header>
      <main id="main" tabIndex={-1}>{children}</main>
    </>
  );
}
