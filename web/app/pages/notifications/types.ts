/**
 * The notification pages' names for the API's types and values. The types themselves come from
 * the OpenAPI document (lib/api-schema.d.ts, through lib/client.ts): nothing here is typed by hand.
 */
import type { Answer, RequestBody, Schema } from "../../lib/client.ts";

export type Notification = Schema<"Notification">;
export type NotificationType = Notification["type"];
export const TYPES: readonly NotificationType[] = [
  "OPPORTUNITY",
  "MESSAGE",
  "ENTITY",
  "SYSTEM",
  "WALLET",
];

/** What each type is called on the pages. */
export const TYPE_LABELS: Record<NotificationType, string> = {
  OPPORTUNITY: "Opportunities and applications",
  MESSAGE: "Messages and conversations",
  ENTITY: "Updates and invitations",
  SYSTEM: "Platform: account, orders, shop",
  WALLET: "Wallet transactions",
};

/** The short name of each type, on each notification. */
export const TYPE_SHORT: Record<NotificationType, string> = {
  OPPORTUNITY: "Opportunity",
  MESSAGE: "Message",
  ENTITY: "Update",
  SYSTEM: "Platform",
  WALLET: "Wallet",
};

export type Priority = Notification["priority"];
export const PRIORITIES: readonly Priority[] = ["low", "normal", "high", "critical"];

export type Channel = NonNullable<BulkRequest["channels"]>[number];
export const CHANNELS: readonly Channel[] = ["inApp", "push", "email"];

export const CHANNEL_LABELS: Record<Channel, string> = {
  inApp: "In the app",
  push: "Push",
  email: "E-mail",
};

export type InboxPage = Answer<"/api/notifications", "get">;
export type Preferences = Schema<"NotificationPreferences">;
export type PreferencesPatch = RequestBody<"/api/notifications/preferences", "put">;
export type QuietHours = NonNullable<Preferences["quietHours"]>;
export type BulkRequest = RequestBody<"/api/notifications/bulk", "post">;
export type Batch = Answer<"/api/notifications/bulk", "post">;
export type BatchProgress = Answer<"/api/notifications/bulk/{id}", "get">;
