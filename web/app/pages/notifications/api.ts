/** The notifications API as the notification pages use it (API contract, "Notifications"). */
import { api, query } from "../../lib/api.ts";
import type { Role } from "../../lib/session.ts";

export const TYPES = ["OPPORTUNITY", "MESSAGE", "ENTITY", "SYSTEM", "WALLET"] as const;
export type NotificationType = typeof TYPES[number];

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

export const PRIORITIES = ["low", "normal", "high", "critical"] as const;
export type Priority = typeof PRIORITIES[number];

export const CHANNELS = ["inApp", "push", "email"] as const;
export type Channel = typeof CHANNELS[number];

export const CHANNEL_LABELS: Record<Channel, string> = {
  inApp: "In the app",
  push: "Push",
  email: "E-mail",
};

export interface Notification {
  id: string;
  type: NotificationType;
  title: string;
  body: string;
  data: Record<string, unknown>;
  priority: Priority;
  readAt: string | null;
  createdAt: string;
}

export interface InboxPage {
  items: Notification[];
  nextCursor: string | null;
  unreadCount: number;
}

export interface InboxFilters {
  type?: NotificationType | "";
  /** "true": unread only. */
  unread?: "true" | "";
  search?: string;
  /** An ISO time, inclusive. */
  since?: string;
}

export interface QuietHours {
  start: string;
  end: string;
  timeZone: string;
}

export interface Preferences {
  types: Record<NotificationType, Record<Channel, boolean>>;
  quietHours: QuietHours | null;
  updatedAt: string | null;
}

export interface PreferencesPatch {
  types?: Partial<Record<NotificationType, Partial<Record<Channel, boolean>>>>;
  quietHours?: QuietHours | null;
}

export interface BulkRequest {
  audience: { userIds?: string[]; roles?: Role[]; all?: boolean };
  notification: { type: NotificationType; title: string; body: string; priority: Priority };
  channels: Channel[];
}

export interface Batch {
  id: string;
  status: "queued" | "sending" | "done";
  recipients: number;
}

export interface BatchProgress extends Batch {
  created: number;
  pushSent: number;
  pushFailed: number;
  emailSent: number;
  createdAt: string;
  finishedAt: string | null;
}

export const notificationsApi = {
  list: (filters: InboxFilters & { limit?: number; cursor?: string | null }) =>
    api.get<InboxPage>(`/api/notifications${query({ ...filters })}`, { fresh: true }),
  markRead: (id: string) =>
    api.put<{ id: string; readAt: string; unreadCount: number }>(
      `/api/notifications/${id}/read`,
    ),
  markAllRead: () =>
    api.put<{ updated: number; unreadCount: number }>("/api/notifications/read-all"),
  remove: (id: string) => api.delete<{ id: string; deleted: true }>(`/api/notifications/${id}`),
  preferences: () => api.get<Preferences>("/api/notifications/preferences", { fresh: true }),
  savePreferences: (patch: PreferencesPatch) =>
    api.put<Preferences>("/api/notifications/preferences", patch),
  send: (body: BulkRequest, idempotencyKey: string) =>
    api.post<Batch>("/api/notifications/bulk", body, {
      headers: { "idempotency-key": idempotencyKey },
    }),
  batch: (id: string) => api.get<BatchProgress>(`/api/notifications/bulk/${id}`, { fresh: true }),
  /** The caller's shop (to tell a vendor's order notifications from a buyer's); 404 without. */
  myVendorId: () =>
    api.get<{ id: string }>("/api/store/vendors/me", { fresh: true }).then((v) => v.id),
};
