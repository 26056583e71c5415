/**
 * The side navigation of an area with sections (the wallet, the shop, notifications, the admin
 * area): a list of links on the left on a desktop, a wrapping row of tabs on a phone.
 */
import type { ComponentChildren } from "preact";
import { Link } from "../lib/router.tsx";

export interface Section {
  id: string;
  label: string;
  href: string;
  /** Text after the label (a count). */
  badge?: string | number | null;
}

export function Area(
  { label, sections, current, children }: {
    label: string;
    sections: Section[];
    current: string | undefined;
    children: ComponentChildren;
  },
) {
  return (
    <div class="admin area">
      <nav class="admin-nav" aria-label={label}>
        <ul>
          {sections.map((s) => (
            <li key={s.id}>
              <Link href={s.href} aria-current={s.id === current ? "page" : undefined}>
                {s.label}
                {s.badge !== undefined && s.badge !== null && s.badge !== "" && (
                  <span class="nav-badge">{s.badge}</span>
                )}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div class="admin-body">{children}</div>
    </div>
  );
}
