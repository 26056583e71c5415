/** The admin API as the admin pages use it (API contract, "Administration"). */
import { api, query } from "../../lib/api.ts";
import type { Role } from "../../lib/session.ts";
import type { Settlement, Vendor } from "../store/api.ts";

export type { Settlement, Vendor };

export interface AdminUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  status: "active" | "suspended";
  createdAt: string;
  lastSignInAt: string | null;
}

export interface RoleChange {
  previousRole: Role;
  newRole: Role;
  changedBy: string;
  changedAt: string;
  reason: string;
}

export interface StatusChange {
  previousStatus: "active" | "suspended";
  newStatus: "active" | "suspended";
  changedBy: string;
  changedAt: string;
  reason: string;
  sessionsRevoked: number;
}

export interface Point {
  t: string;
  value: number;
}

export interface Analytics {
  range: { from: string; to: string; interval: string };
  users: {
    total: number;
    byRole: Record<string, number>;
    byStatus: Record<string, number>;
    signups: Point[];
  };
  activity: { activeUsers: Point[]; signIns: Point[] };
  messaging: {
    totals: { conversations: number; messages: number };
    messages: Point[];
    activeSenders: Point[];
    conversationsCreated: Point[];
  };
  /** The same figures as GET /api/notifications/analytics for the range and interval. */
  notifications?: NotificationFigures;
  [domain: string]: unknown;
}

export interface NotificationCounts {
  created: number;
  read: number;
  pushSent: number;
  pushFailed: number;
}

export interface NotificationFigures {
  totals: NotificationCounts & { pushDelivered: number; emailSent: number };
  byType: (NotificationCounts & { type: string })[];
  byChannel: { channel: "inApp" | "push" | "email"; sent: number; failed: number }[];
  series: (NotificationCounts & { t: string })[];
  readRate: number;
  medianSecondsToRead: number | null;
}

export interface SecurityEvent {
  id: string;
  type: string;
  severity: "info" | "warning" | "critical";
  userId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
  createdAt: string;
}

export interface AccessLogEntry {
  id: string;
  requestId: string;
  userId: string | null;
  method: string;
  route: string;
  status: number;
  /** The class of the status. */
  type: "success" | "redirect" | "client_error" | "server_error";
  durationMs: number;
  ip: string | null;
  createdAt: string;
}

export type ConfigDocument = Record<string, Record<string, unknown>>;

type Filters = Record<string, string | number | undefined | null>;

export type ReportAction = "delete_message" | "suspend_user" | "hide_product";

/** A report in the moderation queue (GET /api/admin/reports). */
export interface AdminReport {
  id: string;
  status: "open" | "dismissed" | "actioned";
  subject: { type: "message" | "user" | "product" | "vendor"; id: string };
  reason: "spam" | "abuse" | "fraud" | "other";
  note: string | null;
  reporter: { id: string; name: string };
  reportCount: number;
  snapshot: Record<string, unknown>;
  action: ReportAction | null;
  resolutionNote: string | null;
  resolvedBy: string | null;
  createdAt: string;
  resolvedAt: string | null;
}

export const adminApi = {
  reports: (filters: { status?: string; type?: string; cursor?: string; limit?: number }) =>
    api.get<{ items: AdminReport[]; nextCursor: string | null }>(
      `/api/admin/reports${query(filters)}`,
    ),
  resolveReport: (
    id: string,
    body: { status: "dismissed" | "actioned"; action?: ReportAction; note: string },
  ) => api.put<AdminReport>(`/api/admin/reports/${id}`, body),
  users: (filters: Filters) =>
    api.get<
      {
        items: AdminUser[];
        nextCursor: string | null;
        counts: { byRole: Record<string, number>; total: number };
      }
    >(`/api/admin/users${query(filters)}`),
  changeRole: (id: string, role: Role, reason: string) =>
    api.put<{ user: AdminUser; change: RoleChange }>(`/api/admin/users/${id}/role`, {
      role,
      reason,
    }),
  changeStatus: (id: string, status: "active" | "suspended", reason: string) =>
    api.put<{ user: AdminUser; change: StatusChange }>(`/api/admin/users/${id}/status`, {
      status,
      reason,
    }),
  signOutUser: (id: string) => api.post<{ revoked: number }>(`/api/admin/users/${id}/signout`),
  vendors: (filters: Filters) =>
    api.get<{ items: Vendor[]; nextCursor: string | null }>(
      `/api/admin/vendors${query(filters)}`,
      { fresh: true },
    ),
  decideVendor: (
    id: string,
    body: { status: "approved" | "rejected" | "suspended"; reason: string; commissionBps?: number },
  ) => api.put<Vendor>(`/api/admin/vendors/${id}/status`, body),
  settlements: (filters: Filters) =>
    api.get<{ items: Settlement[]; nextCursor: string | null }>(
      `/api/admin/settlements${query(filters)}`,
      { fresh: true },
    ),
  runSettlements: (asOf?: string) =>
    api.post<{ runId: string; settlements: Settlement[]; orders: number }>(
      "/api/admin/settlements/run",
      asOf ? { asOf } : {},
    ),
  config: () => api.get<{ version: number; config: ConfigDocument }>("/api/admin/config"),
  saveConfig: (config: unknown, reason: string, expectedVersion: number) =>
    api.put<
      {
        version: number;
        config: ConfigDocument;
        diff: Record<string, { from: unknown; to: unknown }>;
      }
    >("/api/admin/config", { config, reason, expectedVersion }),
  analytics: (filters: Filters) => api.get<Analytics>(`/api/admin/analytics${query(filters)}`),
  securityEvents: (filters: Filters) =>
    api.get<{ items: SecurityEvent[]; nextCursor: string | null }>(
      `/api/admin/security-events${query(filters)}`,
    ),
  accessLogs: (filters: Filters) =>
    api.get<{ items: AccessLogEntry[]; nextCursor: string | null }>(
      `/api/admin/access-logs${query(filters)}`,
    ),
};
