/**
 * Queries of /api/admin/reports (admin/reports.routes.ts), run as the ADMIN (RLS:
 * reports_select_reporter_or_admin, report_snapshots_select_admin). The resolution is
 * app.resolve_report's.
 */
import type { Tx } from "../../_shared/db.ts";
import { type Fragment, ifGiven, pageLimit, setClient, slicePage, where } from "../core/paging.ts";
import type { AdminReport } from "../moderation/reports.schemas.ts";

interface ReportRow extends Omit<AdminReport, "subject" | "reporter"> {
  subjectType: AdminReport["subject"]["type"];
  subjectId: string;
  reporterId: string;
  reporterName: string;
  createdAtKey: string;
}

function reportRows(tx: Tx, conditions: (Fragment | null)[], limit: number) {
  return tx<ReportRow[]>`
    select r.id, r.status::text as status, r.subject_type::text as "subjectType",
           r.subject_id as "subjectId", r.reason::text as reason, r.note,
           r.reporter_id as "reporterId", u.name as "reporterName",
           (select count(*)::int from app.reports o
            where o.subject_type = r.subject_type and o.subject_id = r.subject_id
              and o.status = 'open') as "reportCount",
           s.snapshot, r.action::text as action, r.resolution_note as "resolutionNote",
           r.resolved_by as "resolvedBy",
           to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "createdAt",
           to_char(r.resolved_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "resolvedAt",
           r.created_at::text as "createdAtKey"
    from app.reports r
    join app.report_snapshots s on s.id = r.snapshot_id
    join app.users u on u.id = r.reporter_id
    ${where(tx, conditions)}
    order by r.created_at, r.id
    limit ${limit}`;
}

const toReport = (row: ReportRow): AdminReport => ({
  id: row.id,
  status: row.status,
  subject: { type: row.subjectType, id: row.subjectId },
  reason: row.reason,
  note: row.note,
  reporter: { id: row.reporterId, name: row.reporterName },
  reportCount: row.reportCount,
  snapshot: row.snapshot,
  action: row.action,
  resolutionNote: row.resolutionNote,
  resolvedBy: row.resolvedBy,
  createdAt: row.createdAt,
  resolvedAt: row.resolvedAt,
});

/** A page of reports of one status (default open), oldest first. */
export async function listReports(
  tx: Tx,
  q: {
    status: AdminReport["status"];
    type?: AdminReport["subject"]["type"];
    after: [string, string] | null;
    limit: number;
  },
) {
  const rows = await reportRows(tx, [
    tx`r.status = ${q.status}::app.report_status`,
    ifGiven(q.type, (type) => tx`r.subject_type = ${type}::app.report_subject_type`),
    ifGiven(
      q.after,
      ([time, id]) => tx`(r.created_at, r.id) > (${time}::timestamptz, ${id}::uuid)`,
    ),
  ], pageLimit(q.limit));
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.createdAtKey, r.id]);
  return { items: page.map(toReport), nextCursor };
}

/** One report as the queue shows it, or null. */
export async function readReport(tx: Tx, id: string): Promise<AdminReport | null> {
  const [row] = await reportRows(tx, [tx`r.id = ${id}::uuid`], 1);
  return row ? toReport(row) : null;
}

/**
 * Resolves a report (and every open report on its subject) through app.resolve_report: the
 * action, the security event (with this request's address) and the reporters' notifications in
 * this one transaction; then reads it back.
 */
export async function resolveReport(
  tx: Tx,
  id: string,
  resolution: {
    status: "dismissed" | "actioned";
    action?: AdminReport["action"];
    note: string;
  },
  client: { ip: string | null; userAgent: string | null },
): Promise<AdminReport> {
  await setClient(tx, client);
  await tx`select app.resolve_report(${id}::uuid, ${resolution.status}::app.report_status,
                                     ${resolution.action ?? null}::app.moderation_action,
                                     ${resolution.note})`;
  return (await readReport(tx, id))!;
}
