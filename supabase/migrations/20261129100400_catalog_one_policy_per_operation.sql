/*
 * One permissive policy per table, role and operation: the products table. Each pair (or triple)
 * of permissive policies below was already combined by Postgres with OR for every row; each
 * becomes one policy whose condition is that OR, so every row is visible (or writable) to exactly
 * whom it was before: the same conditions, in one policy. Supabase's Performance Advisor lists two
 * permissive policies for the same role and operation as `multiple_permissive_policies`;
 * tests/core/sql/005-advisors.sql fails on any. The per-persona RLS tests are unchanged.
 *
 * Tables touched: app.products (policies only). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- Was products_select_owner and products_select_admin.
drop policy products_select_owner on app.products;
drop policy products_select_admin on app.products;
create policy products_select_owner_or_admin on app.products for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()) or (select app.is_admin()));

revoke execute on all functions in schema app, app_private from public;
