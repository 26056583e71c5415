/**
 * The admin pages' types, from the OpenAPI document (lib/api-schema.d.ts through lib/client.ts):
 * nothing here is typed by hand.
 */
import type { Answer, Schema } from "../../lib/client.ts";

export type AdminUser = Schema<"AdminUser">;
export type RoleChange = Answer<"/api/admin/users/{id}/role", "put">["change"];
export type StatusChange = Answer<"/api/admin/users/{id}/status", "put">["change"];
export type Vendor = Schema<"Vendor">;
export type Settlement = Schema<"Settlement">;
export type Analytics = Answer<"/api/admin/analytics", "get">;
export type NotificationFigures = Schema<"NotificationAnalytics">;
export type Point = Analytics["users"]["signups"][number];
export type SecurityEvent = Schema<"SecurityEvent">;
export type AccessLogEntry = Schema<"AccessLog">;
export type ConfigDocument = Answer<"/api/admin/config", "get">["config"];
export type AdminOrder = Schema<"AdminOrder">;
export type AdminReport = Schema<"AdminReport">;
export type ReportAction = NonNullable<AdminReport["action"]>;

/** Everything the admin pages keep in the query cache is under this key. */
export const ADMIN_KEY = ["admin"] as const;
