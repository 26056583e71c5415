/** The shapes of reports (POST /api/reports) and of the admin queue (/api/admin/reports). */
import { z } from "@hono/zod-openapi";

export const SUBJECT_TYPES = ["message", "user", "product", "vendor"] as const;
export const REASONS = ["spam", "abuse", "fraud", "other"] as const;
export const REPORT_STATUSES = ["open", "dismissed", "actioned"] as const;
export const ACTIONS = ["delete_message", "suspend_user", "hide_product"] as const;

export const subjectSchema = z.object({
  type: z.enum(SUBJECT_TYPES),
  id: z.uuid(),
}).openapi("ReportSubject");

const time = z.iso.datetime();

/** What the reporter gets back. */
export const createdReportSchema = z.object({
  id: z.uuid(),
  status: z.literal("open"),
  subject: subjectSchema,
  reason: z.enum(REASONS),
  createdAt: time,
}).openapi("CreatedReport");

/** A report as the admin queue shows it. */
export const adminReportSchema = z.object({
  id: z.uuid(),
  status: z.enum(REPORT_STATUSES),
  subject: subjectSchema,
  reason: z.enum(REASONS),
  note: z.string().nullable().openapi({ description: "The reporter's note" }),
  reporter: z.object({ id: z.uuid(), name: z.string() }),
  reportCount: z.number().int().min(0).openapi({
    description: "Open reports on the same subject (0 once resolved)",
  }),
  snapshot: z.record(z.string(), z.unknown()).openapi({
    description: "The subject as it was when first reported (its `type` and its fields; a " +
      "deleted message's content stays here)",
  }),
  action: z.enum(ACTIONS).nullable(),
  resolutionNote: z.string().nullable().openapi({ description: "The resolving ADMIN's note" }),
  resolvedBy: z.uuid().nullable(),
  createdAt: time,
  resolvedAt: time.nullable(),
}).openapi("AdminReport");

export type AdminReport = z.infer<typeof adminReportSchema>;
