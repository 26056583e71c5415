/*
 * One permissive policy per table, role and operation: the checkouts and orders tables. Each pair
 * (or triple) of permissive policies below was already combined by Postgres with OR for every row;
 * each becomes one policy whose condition is that OR, so every row is visible (or writable) to
 * exactly whom it was before: the same conditions, in one policy. Supabase's Performance Advisor
 * lists two permissive policies for the same role and operation as `multiple_permissive_policies`;
 * tests/core/sql/005-advisors.sql fails on any. The per-persona RLS tests are unchanged.
 *
 * Tables touched: app.checkouts, app.orders (policies only). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- Was checkouts_select_buyer and checkouts_select_admin.
drop policy checkouts_select_buyer on app.checkouts;
drop policy checkouts_select_admin on app.checkouts;
create policy checkouts_select_buyer_or_admin on app.checkouts for select to authenticated
  using ((buyer_id = (select auth.uid()) and (select app.has_role('SUBSCRIBER'))) or (select app.is_admin()));

-- Was orders_select_buyer and orders_select_vendor and orders_select_admin.
drop policy orders_select_buyer on app.orders;
drop policy orders_select_vendor on app.orders;
drop policy orders_select_admin on app.orders;
create policy orders_select_buyer_vendor_or_admin on app.orders for select to authenticated
  using ((buyer_id = (select auth.uid()) and (select app.has_role('SUBSCRIBER')))
    or vendor_id in (select app.my_vendor_ids())
    or (select app.is_admin()));

revoke execute on all functions in schema app, app_private from public;
