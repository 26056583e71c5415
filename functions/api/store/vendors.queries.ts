/**
 * Queries of /api/store/vendors (store/vendors.routes.ts). The public list runs as `anon`
 * through `app.list_vendors` (approved vendors, public fields); the caller's own vendor, its
 * balances and settlements are read as the caller under RLS (owner policies); applying goes
 * through `app.apply_for_vendor`. `setPayoutAccount` is a server path (the provider's account id
 * is recorded with the pool's rights: no API role may write it).
 */
import type { Sql, Tx } from "../../_shared/db.ts";
import { notFound } from "../../_shared/errors.ts";
import type { SettlementJson, VendorJson } from "./store.schemas.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";

/** Approved vendors, newest first (public fields only). */
export async function listPublicVendors(
  tx: Tx,
  q: { search?: string; after: [string, string] | null; limit: number },
) {
  const rows = await tx<{ vendor: VendorJson; sort_key: string }[]>`
    select vendor, sort_key from app.list_vendors(
      ${q.search ?? null}, ${q.after?.[0] ?? null}, ${q.after?.[1] ?? null}::uuid,
      ${pageLimit(q.limit)})`;
  const { rows: page, nextCursor } = slicePage(
    rows,
    q.limit,
    (r) => [r.sort_key, r.vendor.id],
  );
  return { items: page.map((r) => r.vendor), nextCursor };
}

/** Applies for a vendor (pending); 409 while the caller has a live one. */
export async function applyForVendor(
  tx: Tx,
  input: { name: string; description: string; contactEmail: string; country: string },
): Promise<VendorJson> {
  const [row] = await tx<{ vendor: VendorJson }[]>`
    select app.apply_for_vendor(
      ${input.name}, ${input.description}, ${input.contactEmail}, ${input.country}
    ) as vendor`;
  return row.vendor;
}

interface OwnVendorRow {
  id: string;
  status: string;
  contact_email: string;
  country: string;
  payout_account_id: string | null;
  vendor: VendorJson;
  pending: string;
  settled: string;
  awaiting: string;
}

/**
 * The caller's vendor: the live one (pending, approved or suspended), else the latest rejected;
 * 404 without any. With its balances: `pending` (paid orders not settled yet, gross), `settled`
 * (settlements paid out, net) and `awaitingPayout` (settled, not transferred yet, net).
 */
export async function ownVendor(tx: Tx, opts: { currency: string; liveOnly?: boolean }) {
  const [row] = await tx<OwnVendorRow[]>`
    select v.id, v.status, v.contact_email, v.country, v.payout_account_id,
           app.vendor_json(v, true) as vendor,
           -- Maintained by the writes on app.orders (issue 30): not a sum of every order.
           coalesce(app.vendor_pending(v.id), 0)::text as pending,
           (select coalesce(sum(s.net), 0) from app.settlements s
             where s.vendor_id = v.id and s.status = 'paid')::text as settled,
           (select coalesce(sum(s.net), 0) from app.settlements s
             where s.vendor_id = v.id and s.status in ('pending', 'held') and s.net > 0
               and s.carried_into is null)::text as awaiting
    from app.vendors v
    ${
    where(tx, [
      tx`v.owner_id = (select auth.uid())`,
      opts.liveOnly ? tx`v.status in ('pending', 'approved', 'suspended')` : null,
    ])
  }
    order by (v.status <> 'rejected') desc, v.created_at desc
    limit 1`;
  if (!row) throw notFound("You have no vendor.");
  const money = (amount: string) => ({ amount: Number(amount), currency: opts.currency });
  return {
    row,
    vendor: {
      ...row.vendor,
      balances: {
        pending: money(row.pending),
        settled: money(row.settled),
        awaitingPayout: money(row.awaiting),
      },
    },
  };
}

/**
 * The caller's vendor as `ownVendor` picks it (the live one, else the latest rejected), only its
 * id and status, or null without one: what GET /api/auth/session says of the user's shop, so
 * that a client asks GET /api/store/vendors/me (404 without a shop) only when there is one.
 */
export async function ownVendorRef(
  tx: Tx,
): Promise<{ id: string; status: "pending" | "approved" | "rejected" | "suspended" } | null> {
  const [row] = await tx<
    { id: string; status: "pending" | "approved" | "rejected" | "suspended" }[]
  >`
    select v.id, v.status::text as status from app.vendors v
    where v.owner_id = (select auth.uid())
    order by (v.status <> 'rejected') desc, v.created_at desc
    limit 1`;
  return row ?? null;
}

/** The settlements of the caller's vendors, newest first. */
export async function ownSettlements(
  tx: Tx,
  q: { after: [string, string] | null; limit: number },
) {
  const limit = pageLimit(q.limit);
  // A page of each of the caller's vendors, read down settlements_vendor_idx with the vendor's
  // id as a value, then merged (a semi-join on app.my_vendor_ids() walked the global index).
  const rows = await tx<{ id: string; settlement: SettlementJson; created_at_key: string }[]>`
    select (x.s).id, app.settlement_json(x.s) as settlement,
           (x.s).created_at::text as created_at_key
    from app.my_vendor_ids() as mine (vendor_id)
    cross join lateral (
      select s from app.settlements s
      ${
    where(tx, [
      tx`s.vendor_id = mine.vendor_id`,
      ifGiven(q.after, ([time, id]) =>
        tx`(s.created_at, s.id) < (${time}::timestamptz, ${id}::uuid)`),
    ])
  }
      order by s.created_at desc, s.id desc
      limit ${limit}
    ) x
    order by (x.s).created_at desc, (x.s).id desc
    limit ${limit}`;
  const { rows: page, nextCursor } = slicePage(rows, q.limit, (r) => [r.created_at_key, r.id]);
  return { items: page.map((r) => r.settlement), nextCursor };
}

/** Server path: records the Connect account made for a vendor (once). */
export async function setPayoutAccount(sql: Sql, vendorId: string, accountId: string) {
  await sql`select app_private.set_payout_account(${vendorId}::uuid, ${accountId})`;
}
