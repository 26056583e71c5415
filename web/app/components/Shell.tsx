/**
 * The frame of every page: a skip link, the header (brand from the white-label, navigation from
 * routes.ts, header widgets, the live-connection indicator, the user and sign-out) and <main>.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { cart, cartCount, lastAdded } from "../lib/cart.ts";
import { config } from "../lib/config.ts";
import { currentLocation, Link, navigate } from "../lib/router.tsx";
import { accountSuspended, roleAtLeast, session, signOut } from "../lib/session.ts";
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
  const inCart = cartCount(useStore(cart));
  async function leave() {
    setBusy(true);
    try {
      await signOut();
    } finally {
      setBusy(false);
      navigate("/signin");
    }
  }
  const storeOn = cfg?.features.store !== false;
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
        {!bare && (nav.length > 0 || user) && (
          <PhoneMenu>
            {user && (
              <p class="menu-who" data-testid="menu-who">
                Signed in as <strong>{user.name}</strong>{" "}
                <span class="role-badge">{user.role}</span>
              </p>
            )}
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
              {user && storeOn && (
                <li>
                  <Link href="/store/cart">Cart ({inCart})</Link>
                </li>
              )}
              {user && (
                <li>
                  <Link href="/account">Your account</Link>
                </li>
              )}
            </ul>
            {user && (
              <button type="button" class="secondary small" disabled={busy} onClick={leave}>
                Sign out
              </button>
            )}
          </PhoneMenu>
        )}
        {!bare && nav.length > 0 && (
          <nav aria-label="Main" class="main-nav">
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
            {storeOn && <CartLink here={where.path === "/store/cart"} />}
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
            <button type="button" class="secondary sign-out" disabled={busy} onClick={leave}>
              Sign out
            </button>
          </div>
        )}
        {!user && !bare && (
          <div class="header-end">
            {storeOn && <CartLink here={where.path === "/store/cart"} />}
            <Link
              class="button secondary small"
              href={`/signin?next=${encodeURIComponent(where.path + location.search)}`}
            >
              Sign in
            </Link>
          </div>
        )}
      </header>
      {!user && <SuspendedNotice />}
      <main id="main" tabIndex={-1}>{children}</main>
      {storeOn && <CartToast />}
    </>
  );
}

/**
 * On a phone-sized screen the header keeps one row: the navigation, the cart, the person's name
 * and sign-out move into this menu (a button with `aria-expanded`; Escape closes it and gives
 * the focus back, as does a navigation or a click elsewhere). Hidden by the style sheet on wider
 * screens, where they are in the header itself.
 */
function PhoneMenu({ children }: { children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  const where = useStore(currentLocation);
  const button = useRef<HTMLButtonElement>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const id = useId();
  useEffect(() => setOpen(false), [where.path]);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", away);
    return () => document.removeEventListener("pointerdown", away);
  }, [open]);
  return (
    <div
      class="phone-menu"
      ref={wrap}
      onKeyDown={(e) => {
        if (e.key === "Escape" && open) {
          e.stopPropagation();
          setOpen(false);
          button.current?.focus();
        }
      }}
    >
      <button
        type="button"
        ref={button}
        class="menu-toggle"
        aria-expanded={open}
        aria-controls={id}
        data-testid="menu-toggle"
        onClick={() => setOpen(!open)}
      >
        Menu
      </button>
      {open && (
        <nav id={id} class="menu-panel" aria-label="Menu" data-testid="menu-panel">
          {children}
        </nav>
      )}
    </div>
  );
}

/**
 * Why a person who was signed in sees the visitor's view: their account is suspended (the session
 * says so, GET /api/auth/session `suspended`). With the white label's support address, as the
 * sign-in page says it.
 */
function SuspendedNotice() {
  const suspended = useStore(accountSuspended);
  const support = useStore(config)?.whiteLabel.supportEmail;
  if (!suspended) return null;
  return (
    <div class="notice suspended-notice" role="status" data-testid="suspended-notice">
      <p>
        <strong>Your account is suspended.</strong>{" "}
        You can look around as a visitor, but you cannot sign in, buy or send anything. {support
          ? (
            <>
              If you think this is a mistake, write to <a href={`mailto:${support}`}>{support}</a>.
            </>
          )
          : "If you think this is a mistake, contact the site's support."}
      </p>
    </div>
  );
}

/** The cart in the header, with the number of items in it (kept in this browser, lib/cart.ts). */
function CartLink({ here }: { here: boolean }) {
  const count = cartCount(useStore(cart));
  return (
    <Link
      href="/store/cart"
      class="header-cart"
      data-testid="header-cart"
      aria-current={here ? "page" : undefined}
    >
      Cart
      {count > 0 && <span class="nav-badge" data-testid="header-cart-count">{count}</span>}
      <span class="visually-hidden">
        {count === 0 ? " (empty)" : ` (${count} item${count === 1 ? "" : "s"})`}
      </span>
    </Link>
  );
}

/**
 * "Added … to your cart", for a few seconds, fixed at the bottom of the viewport: a polite live
 * region that is always in the page (a region added together with its text is often not read).
 */
function CartToast() {
  const added = useStore(lastAdded);
  const [shown, setShown] = useState<typeof added>(null);
  useEffect(() => {
    setShown(added);
    if (!added) return;
    const timer = setTimeout(() => setShown(null), 6000);
    return () => clearTimeout(timer);
  }, [added?.at]);
  return (
    <div class="toast-region" role="status" aria-live="polite" data-testid="cart-toast">
      {shown && (
        <p class="toast">
          {shown.text} <Link href="/store/cart">View the cart</Link>
          <button
            type="button"
            class="icon"
            aria-label="Dismiss"
            onClick={() => setShown(null)}
          >
            ×
          </button>
        </p>
      )}
    </div>
  );
}
