/** The admin API as the admin pages use it (API contract, "Administration"). */
import { api, query } from "../../lib/api.ts";
import type { Role } from "../../lib/session.ts";

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
  [domain: string]: unknown;
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
  durationMs: number;
  ip: string | null;
  createdAt: string;
}

export type ConfigDocument = Record<string, Record<string, unknown>>;

type Filters = Record<string, string | number | undefined | null>;

export const adminApi = {
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
