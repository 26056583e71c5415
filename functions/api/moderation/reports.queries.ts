/** Queries of POST /api/reports (moderation/reports.routes.ts), run as the reporter. */
import type { Tx } from "../../_shared/db.ts";

export interface NewReport {
  subject: { type: "message" | "user" | "product" | "vendor"; id: string };
  reason: "spam" | "abuse" | "fraud" | "other";
  note?: string;
}

/** Creates a report through `app.create_report`, which checks what the reporter may see. */
export async function createReport(tx: Tx, report: NewReport) {
  const [row] = await tx<{ id: string; reason: NewReport["reason"]; created_at: string }[]>`
    select r.id, r.reason::text,
           to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at
    from app.create_report(${report.subject.type}::app.report_subject_type, ${report.subject.id}::uuid,
                           ${report.reason}::app.report_reason, ${report.note ?? null}) r`;
  return {
    id: row.id,
    status: "open" as const,
    subject: report.subject,
    reason: row.reason,
    createdAt: row.created_at,
  };
}
