/**
 * Every page of the web client: its path, who may open it, the feature flag it belongs to, its
 * entry in the navigation, and how it loads. A page loaded with `import()` becomes a chunk of its
 * own (esbuild code splitting), fetched when first opened: the first page stays small.
 *
 * Adding a domain's page (docs/web.md, "Adding a page"): a row here; the page under
 * pages/<domain>/ with its API module (pages/<domain>/api.ts) and its live topics (subscribe() from
 * lib/live.ts); a browser test in tests/web/. Planned, once their APIs exist (not before: a page
 * must work against the real API):
 *   /notifications (features.notifications; the bell goes into `headerWidgets` below),
 *   /store, /store/products/:id, /store/cart, /store/orders (features.store), /vendor,
 *   /wallet (features.wallet), /account (sessions list, export, deletion),
 *   /admin/vendors and user suspension in /admin/users.
 */
import type { ComponentType } from "preact";
import type { Features } from "./lib/config.ts";
import type { Role } from "./lib/session.ts";
import { SignInPage } from "./pages/SignIn.tsx";
import { ChatPage } from "./pages/chat/ChatPage.tsx";

export interface PageProps {
  params: Record<string, string>;
}

export type Page = ComponentType<PageProps>;

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
    path: "/admin/:section?",
    title: "Administration",
    access: "signed-in",
    minRole: "ADMIN",
    nav: { label: "Admin", prefix: "/admin" },
    page: () => import("./pages/admin/AdminPage.tsx").then((m) => m.AdminPage),
  },
];

/** Small live widgets in the header, next to the connection status (e.g. a notification bell). */
export const headerWidgets: ComponentType[] = [];

/** Where a signed-in user lands. */
export const HOME = "/chat";
