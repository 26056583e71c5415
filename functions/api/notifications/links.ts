/**
 * The page of the web client a notification is about, for its e-mail (and anything else that
 * links out of the platform): every notification the platform writes names its object in `data`
 * (docs/notifications.md, "Where each notification links"). The web client's inbox follows the
 * same table (web/app/pages/notifications/links.ts).
 *
 * | data | page |
 * |---|---|
 * | `conversationId` (messages, a digest, being added to a conversation) | `/chat/<conversationId>` |
 * | `orderId` (order moves, payments, refunds: the buyer's and the shop owner's) | `/store/orders/<orderId>` (the shop's owner is taken from there to `/vendor/orders/<orderId>`) |
 * | `transactionId` (wallet transactions) | `/wallet` |
 * | `kind: "vendor.status_changed"` | `/vendor` |
 * | `kind: "wallet.key_exported"` | `/account` (the sessions, to check who exported) |
 * | `kind: "role.changed"` | `/account` |
 * | anything else (a report reviewed, an ADMIN's own or bulk notification) | `/notifications` (the inbox, where it is) |
 *
 * Only ids shaped like ids become part of a path: an ADMIN may put anything in `data`.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const id = (v: unknown): string | null => (typeof v === "string" && UUID.test(v) ? v : null);

/** The path (from the site's root) a notification with this data is about. */
export function notificationPath(data: Record<string, unknown> | null | undefined): string {
  const d = data ?? {};
  const conversation = id(d.conversationId);
  if (conversation) return `/chat/${conversation}`;
  const order = id(d.orderId);
  if (order) return `/store/orders/${order}`;
  if (id(d.transactionId)) return "/wallet";
  if (d.kind === "vendor.status_changed") return "/vendor";
  if (d.kind === "wallet.key_exported" || d.kind === "role.changed") return "/account";
  return "/notifications";
}

/** The full address of that page on the site (`AGORA_SITE_URL`). */
export function notificationUrl(siteUrl: string, data: Record<string, unknown> | null): string {
  return `${siteUrl.replace(/\/+$/, "")}${notificationPath(data)}`;
}
