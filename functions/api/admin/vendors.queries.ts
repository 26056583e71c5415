/**
 * Queries of /api/admin/vendors (admin/vendors.routes.ts), run as the ADMIN: RLS
 * (`vendors_select_owner_or_admin`) shows every vendor; decisions go through `app.set_vendor_status`.
 */
import type { Tx } from "../../_shared/db.ts";
import { ifGiven, likePattern, pageLimit, slicePage, where } from "../core/paging.ts";
import type { VendorJson } from "../store/store.schemas.ts";

export type VendorStatus = "pending" | "approved" | "rejected" | "suspended";

/** Every vendor with the owner's fields, newest first. */
export async function listAdminVendors(
  tx: Tx,
  q: { status?: VendorStatus; search?: string; after: [string, string] | null; limit: number },
) {
  const pattern = likePattern(q.search);
  const rows = await tx<{ id: string; vendor: VendorJson; created_at_key: string }[]>`
    select v.id, app.vendor_json(v, true) as vendor, v.created_at::text as created_at_key
    from app.vendors v
    ${
    where(tx, [
      ifGiven(q.status, (status) => tx`v.status = ${status}::app.vendor_status`),
      ifGiven(pattern, (p) => tx`(lower(v.name) like ${p} or lower(v.contact_email) like ${p})`),
      ifGiven(q.after, ([time, id]) =>
        tx`(v.created_at, v.id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
    order by v.created_at desc, v.id desc
    limit ${pageLimit(q.limit)}`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  return { items: page.map((r) => r.vendor), nextCursor };
}

/** An ADMIN's decision on a vendor (status, reason, commission). */
export async function setVendorStatus(
  tx: Tx,
  id: string,
  decision: { status: Exclude<VendorStatus, "pending">; reason: string; commissionBps?: number },
): Promise<VendorJson> {
  const [row] = await tx<{ vendor: VendorJson }[]>`
    select app.set_vendor_status(
      ${id}::uuid, ${decision.status}::app.vendor_status, ${decision.reason},
      ${decision.commissionBps ?? null}::integer
    ) as vendor`;
  return row.vendor;
}
