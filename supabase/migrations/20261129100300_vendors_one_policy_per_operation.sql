/*
 * One permissive policy per table, role and operation: the vendors and vendor decisions tables.
 * Each pair (or triple) of permissive policies below was already combined by Postgres with OR for
 * every row; each becomes one policy whose condition is that OR, so every row is visible (or
 * writable) to exactly whom it was before: the same conditions, in one policy. Supabase's
 * Performance Advisor lists two permissive policies for the same role and operation as
 * `multiple_permissive_policies`; tests/core/sql/005-advisors.sql fails on any. The per-persona
 * RLS tests are unchanged.
 *
 * Tables touched: app.vendors, app.vendor_decisions (policies only). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- Was vendors_select_owner and vendors_select_admin.
drop policy vendors_select_owner on app.vendors;
drop policy vendors_select_admin on app.vendors;
create policy vendors_select_owner_or_admin on app.vendors for select to authenticated
  using ((owner_id = (select auth.uid()) and (select app.has_role('SUBSCRIBER'))) or (select app.is_admin()));

-- Was vendor_decisions_select_owner and vendor_decisions_select_admin.
drop policy vendor_decisions_select_owner on app.vendor_decisions;
drop policy vendor_decisions_select_admin on app.vendor_decisions;
create policy vendor_decisions_select_owner_or_admin on app.vendor_decisions for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()) or (select app.is_admin()));

revoke execute on all functions in schema app, app_private from public;
