/**
 * The admin area (ADMIN only; a chunk of its own, loaded when first opened): users and roles,
 * configuration and white-label, analytics, security events, the access log.
 *
 * Also the store's side: vendors to review and settlements (run now).
 *
 * Live: the pages follow the `admin` topic and read their data again when something arrives
 * there. The API emits nothing on it yet (docs/realtime.md); the analytics also refresh every
 * minute.
 */
import { useEffect, useState } from "preact/hooks";
import { subscribe } from "../../lib/live.ts";
import { queryClient } from "../../lib/query.ts";
import { ADMIN_KEY } from "./types.ts";
import { Link } from "../../lib/router.tsx";
import { setTitle } from "../../lib/config.ts";
import type { PageProps } from "../../lib/page.ts";
import { UsersSection } from "./Users.tsx";
import { ConfigSection } from "./Config.tsx";
import { AnalyticsSection } from "./Analytics.tsx";
import { AccessLogSection, SecuritySection } from "./Monitoring.tsx";
import { VendorsSection } from "./Vendors.tsx";
import { SettlementsSection } from "./Settlements.tsx";
import { OrdersSection } from "./Orders.tsx";
import { ModerationSection } from "./Moderation.tsx";

const SECTIONS = [
  { id: "users", label: "Users", view: UsersSection },
  { id: "moderation", label: "Moderation", view: ModerationSection },
  { id: "vendors", label: "Vendors", view: VendorsSection },
  { id: "orders", label: "Orders", view: OrdersSection },
  { id: "settlements", label: "Settlements", view: SettlementsSection },
  { id: "config", label: "Configuration", view: ConfigSection },
  { id: "analytics", label: "Analytics", view: AnalyticsSection },
  { id: "security", label: "Security events", view: SecuritySection },
  { id: "access-log", label: "Access log", view: AccessLogSection },
] as const;

export function AdminPage({ params }: PageProps) {
  const section = SECTIONS.find((s) => s.id === (params.section ?? "users"));
  const [tick, setTick] = useState(0);
  // An admin event (a new vendor application, a user's change by another admin): what the cache
  // holds of the admin area is stale, and the open section reads again.
  useEffect(
    () =>
      subscribe("admin", () => {
        void queryClient.invalidateQueries({ queryKey: ADMIN_KEY });
        setTick((n) => n + 1);
      }),
    [],
  );
  useEffect(() => setTitle(section ? `${section.label} · Admin` : "Admin"), [section]);
  const View = section?.view;
  return (
    <div class="admin">
      <nav class="admin-nav" aria-label="Administration">
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.id}>
              <Link
                href={`/admin/${s.id}`}
                aria-current={s.id === section?.id ? "page" : undefined}
              >
                {s.label}
              </Link>
            </li>
          ))}
          <li>
            <Link href="/notifications/send">Send to many</Link>
          </li>
        </ul>
      </nav>
      <div class="admin-body">
        {View ? <View refresh={tick} /> : (
          <>
            <h1>Not found</h1>
            <p>There is no admin section {params.section}.</p>
          </>
        )}
      </div>
    </div>
  );
}
