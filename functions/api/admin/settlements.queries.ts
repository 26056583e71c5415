/**
 * Queries of /api/admin/settlements (admin/settlements.routes.ts), run as the ADMIN: RLS
 * (`settlements_select_vendor_or_admin`) shows every settlement; a run goes through the ADMIN-checked
 * `app.run_settlements`, the same settlement the daily job makes.
 */
import type { Tx } from "../../_shared/db.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";
import type { SettlementJson } from "../store/store.schemas.ts";

export type SettlementStatus = "pending" | "paid" | "held" | "failed";

/** Settlements, newest first. */
export async function listSettlements(
  tx: Tx,
  q: {
    vendorId?: string;
    status?: SettlementStatus;
    after: [string, string] | null;
    limit: number;
  },
) {
  const rows = await tx<{ id: string; settlement: SettlementJson; created_at_key: string }[]>`
    select s.id, app.settlement_json(s) as settlement, s.created_at::text as created_at_key
    from app.settlements s
    ${
    where(tx, [
      ifGiven(q.vendorId, (id) => tx`s.vendor_id = ${id}::uuid`),
      ifGiven(q.status, (status) => tx`s.status = ${status}::app.settlement_status`),
      ifGiven(q.after, ([time, id]) =>
        tx`(s.created_at, s.id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
    order by s.created_at desc, s.id desc
    limit ${pageLimit(q.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  return { items: page.map((r) => r.settlement), nextCursor };
}

/** The daily settlement, now, up to `asOf` (default now). */
export async function runSettlements(tx: Tx, asOf: string | null) {
  const [row] = await tx<
    { result: { runId: string; settlements: SettlementJson[]; orders: number } }[]
  >`
    select app.run_settlements(${asOf}::timestamptz) as result`;
  return row.result;
}
