/**
 * Every page of the web client: its path, who may open it, the feature flag it belongs to, its
 * entry in the navigation, and how it loads. A page loaded with `import()` becomes a chunk of its
 * own (esbuild code splitting), fetched when first opened: the first page stays small.
 *
 * Adding a domain's page (docs/web.md, "Adding a page"): a row here; the page under
 * pages/<domain>/ calling the typed client (lib/client.ts), reading through the query cache
 * (lib/query.ts), with its live topics (subscribe() from lib/live.ts); a browser test in tests/web/. Every domain's pages are chunks of their own, loaded
 * when first opened; sign-in, chat and the header's bell are on the first page.
 */
import type { ComponentType } from "preact";
import type { Features } from "./lib/config.ts";
import type { Role } from "./lib/session.ts";
import type { Page } from "./lib/page.ts";
import { SignInPage } from "./pages/SignIn.tsx";
import { ChatPage } from "./pages/chat/ChatPage.tsx";
import { Bell } from "./components/Bell.tsx";

export interface RouteDef {
  /** `/chat/:id`; a trailing `?` makes a part optional. */
  path: string;
  /** For the document title. */
  title: string;
  access: "public" | "signed-in";
  /** The lowest role that may open it (the API decides anyway; this keeps links honest). */
  minRole?: Role;
  /** Hidden while this feature is off in the configuration. */
  feature?: Exclude<keyof Features, "signIn">;
  /** An entry in the header's navigation: active for paths under `prefix`. */
  nav?: { label: string; prefix: string };
  /** Shown to signed-out visitors too (public pages only); the header then offers sign-in. */
  publicNav?: boolean;
  page: () => Page | Promise<Page>;
}

export const routes: RouteDef[] = [
  { path: "/signin", title: "Sign in", access: "public", page: () => SignInPage },
  {
    path: "/chat/:conversationId?",
    title: "Chat",
    access: "signed-in",
    minRole: "SUBSCRIBER",
    feature: "messaging",
    nav: { label: "Chat", prefix: "/chat" },
    page: () => ChatPage,
  },
  {
    path: "/store",
    title: "Store",
    access: "public",
    feature: "store",
    nav: { label: "Store", prefix: "/store" },
    publicNav: true,
    page: () => import("./pages/store/StorePage.tsx").then((m) => m.CatalogPage),
  },
  {
    path: "/store/products/:productId",
    title: "Product",
    access: "public",
    feature: "store",
    page: () => import("./pages/store/StorePage.tsx").then((m) => m.ProductPage),
  },
  {
    path: "/store/cart",
    title: "Cart",
    access: "public",
    feature: "store",
    page: () => import("./pages/store/StorePage.tsx").then((m) => m.CartPage),
  },
  {
    path: "/store/checkout/:checkoutId",
    title: "Checkout",
    access: "signed-in",
    minRole: "SUBSCRIBER",
    feature: "store",
    page: () => import("./pages/store/StorePage.tsx").then((m) => m.CheckoutPage),
  },
  {
    path: "/store/orders/:orderId?",
    title: "Orders",
    access: "signed-in",
    minRole: "SUBSCRIBER",
    feature: "store",
    page: () => import("./pages/store/StorePage.tsx").then((m) => m.OrdersPage),
  },
  {
    path: "/vendor/:section?/:orderId?",
    title: "Sell",
    access: "signed-in",
    minRole: "SUBSCRIBER",
    feature: "store",
    nav: { label: "Sell", prefix: "/vendor" },
    page: () => import("./pages/vendor/VendorPage.tsx").then((m) => m.VendorPage),
  },
  {
    path: "/wallet/:section?",
    title: "Wallet",
    access: "signed-in",
    minRole: "SUBSCRIBER",
    feature: "wallet",
    nav: { label: "Wallet", prefix: "/wallet" },
    page: () => import("./pages/wallet/WalletPage.tsx").then((m) => m.WalletPage),
  },
  {
    path: "/notifications",
    title: "Notifications",
    access: "signed-in",
    feature: "notifications",
    page: () => import("./pages/notifications/NotificationsPage.tsx").then((m) => m.InboxPage),
  },
  {
    path: "/notifications/preferences",
    title: "Notification preferences",
    access: "signed-in",
    feature: "notifications",
    page: () =>
      import("./pages/notifications/NotificationsPage.tsx").then((m) => m.PreferencesPage),
  },
  {
    path: "/notifications/send",
    title: "Send a notification",
    access: "signed-in",
    minRole: "ADMIN",
    feature: "notifications",
    page: () => import("./pages/notifications/NotificationsPage.tsx").then((m) => m.BulkPage),
  },
  {
    path: "/profile",
    title: "Profile",
    access: "signed-in",
    page: () => import("./pages/profile/ProfilePage.tsx").then((m) => m.ProfilePage),
  },
  {
    path: "/people/:userId",
    title: "Person",
    access: "signed-in",
    minRole: "SUBSCRIBER",
    page: () => import("./pages/people/PersonPage.tsx").then((m) => m.PersonPage),
  },
  {
    path: "/account",
    title: "Account",
    access: "signed-in",
    page: () => import("./pages/account/AccountPage.tsx").then((m) => m.AccountPage),
  },
  {
    path: "/admin/:section?",
    title: "Administration",
    access: "signed-in",
    minRole: "ADMIN",
    nav: { label: "Admin", prefix: "/admin" },
    page: () => import("./pages/admin/AdminPage.tsx").then((m) => m.AdminPage),
  },
];

/**
 * Small live widgets in the header, next to the connection status: the notification bell (its
 * count of unread notifications, live; it links to the inbox).
 */
export const headerWidgets: ComponentType[] = [Bell];

/** Where a signed-in user lands. */
export const HOME = "/chat";
