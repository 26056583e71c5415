/**
 * Where a notification leads: its `data` names something the app has a page for. What the
 * platform's sources put there (the SQL that calls `app_private.notify`):
 *
 * | source | data | page |
 * |---|---|---|
 * | conversations, messages | `conversationId`, `messageId`, `count` | `/chat/<conversationId>` |
 * | orders (buyer and the shop's owner) | `kind`, `orderId`, `checkoutId`, `vendorId`, `status` | the buyer's `/store/orders/<orderId>`; the owner's `/vendor/orders/<orderId>` |
 * | vendor decisions | `kind: "vendor.status_changed"`, `vendorId`, `status` | `/vendor` |
 * | wallet transactions | `transactionId`, `status`, `direction` | `/wallet` (the history) |
 * | a key export | `kind: "wallet.key_exported"`, `address` | `/account` (the sessions) |
 * | a role change | `kind: "role.changed"`, the roles | none |
 *
 * An ADMIN's notification may carry any data: only ids shaped like ids become links.
 */
import type { Features } from "../../lib/config.ts";
import type { Notification } from "./types.ts";

export interface Target {
  href: string;
  /** What following the link does, for its accessible description. */
  label: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const id = (v: unknown): string | null => (typeof v === "string" && UUID.test(v) ? v : null);

/** True when the notification tells of an order of a shop (the owner's or a buyer's). */
export function isOrderNotification(n: Notification): boolean {
  return id(n.data.orderId) !== null && id(n.data.vendorId) !== null;
}

/**
 * The page a notification leads to, if any. `vendorId` is the caller's own shop (undefined while
 * unknown), which tells the owner's order notifications from the buyer's: both carry the same
 * data.
 */
export function targetOf(
  n: Notification,
  features: Omit<Features, "signIn">,
  vendorId: string | null | undefined,
): Target | null {
  const d = n.data;
  const conversation = id(d.conversationId);
  if (conversation && features.messaging) {
    return { href: `/chat/${conversation}`, label: "Open the conversation" };
  }
  const order = id(d.orderId);
  if (order && features.store) {
    if (vendorId && id(d.vendorId) === vendorId) {
      return { href: `/vendor/orders/${order}`, label: "Open the order in your shop" };
    }
    return { href: `/store/orders/${order}`, label: "Open the order" };
  }
  if (id(d.transactionId) && features.wallet) {
    return { href: "/wallet", label: "Open the wallet's history" };
  }
  if (d.kind === "vendor.status_changed" && features.store) {
    return { href: "/vendor", label: "Open your shop" };
  }
  if (d.kind === "wallet.key_exported") {
    return { href: "/account", label: "Review your sessions" };
  }
  return null;
}
