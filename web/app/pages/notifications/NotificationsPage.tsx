/**
 * The notifications area (a chunk of its own, loaded when first opened): the inbox
 * (`/notifications`), preferences and quiet hours (`/notifications/preferences`) and, for an
 * ADMIN, a bulk send (`/notifications/send`). The header's bell (components/Bell.tsx) is on the
 * first page and links here.
 */
import type { ComponentChildren } from "preact";
import { Area } from "../../components/SubNav.tsx";
import { roleAtLeast, session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { BulkForm } from "./Bulk.tsx";
import { Inbox } from "./Inbox.tsx";
import { PreferencesForm } from "./Preferences.tsx";

function Frame({ current, children }: { current: string; children: ComponentChildren }) {
  const user = useStore(session).user;
  const sections = [
    { id: "inbox", label: "Inbox", href: "/notifications" },
    { id: "preferences", label: "Preferences", href: "/notifications/preferences" },
    ...(roleAtLeast(user?.role, "ADMIN")
      ? [{ id: "send", label: "Send to many", href: "/notifications/send" }]
      : []),
  ];
  return <Area label="Notifications" sections={sections} current={current}>{children}</Area>;
}

export function InboxPage() {
  return (
    <Frame current="inbox">
      <Inbox />
    </Frame>
  );
}

export function PreferencesPage() {
  return (
    <Frame current="preferences">
      <PreferencesForm />
    </Frame>
  );
}

export function BulkPage() {
  return (
    <Frame current="send">
      <BulkForm />
    </Frame>
  );
}
