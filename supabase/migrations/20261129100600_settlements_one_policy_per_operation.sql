/*
 * One permissive policy per table, role and operation: the settlements and settlement lines
 * tables. Each pair (or triple) of permissive policies below was already combined by Postgres with
 * OR for every row; each becomes one policy whose condition is that OR, so every row is visible
 * (or writable) to exactly whom it was before: the same conditions, in one policy. Supabase's
 * Performance Advisor lists two permissive policies for the same role and operation as
 * `multiple_permissive_policies`; tests/core/sql/005-advisors.sql fails on any. The per-persona
 * RLS tests are unchanged.
 *
 * Tables touched: app.settlements, app.settlement_lines (policies only). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- Was settlements_select_vendor and settlements_select_admin.
drop policy settlements_select_vendor on app.settlements;
drop policy settlements_select_admin on app.settlements;
create policy settlements_select_vendor_or_admin on app.settlements for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()) or (select app.is_admin()));

-- Was settlement_lines_select_vendor and settlement_lines_select_admin.
drop policy settlement_lines_select_vendor on app.settlement_lines;
drop policy settlement_lines_select_admin on app.settlement_lines;
create policy settlement_lines_select_vendor_or_admin on app.settlement_lines for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()) or (select app.is_admin()));

revoke execute on all functions in schema app, app_private from public;
