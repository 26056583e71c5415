/*
 * One permissive policy per table, role and operation: the status changes table. Each pair (or
 * triple) of permissive policies below was already combined by Postgres with OR for every row;
 * each becomes one policy whose condition is that OR, so every row is visible (or writable) to
 * exactly whom it was before: the same conditions, in one policy. Supabase's Performance Advisor
 * lists two permissive policies for the same role and operation as `multiple_permissive_policies`;
 * tests/core/sql/005-advisors.sql fails on any. The per-persona RLS tests are unchanged.
 *
 * Tables touched: app.status_changes (policies only). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- Was status_changes_select_self and status_changes_select_admin.
drop policy status_changes_select_self on app.status_changes;
drop policy status_changes_select_admin on app.status_changes;
create policy status_changes_select_self_or_admin on app.status_changes for select to authenticated
  using (user_id = (select auth.uid()) or (select app.is_admin()));

revoke execute on all functions in schema app, app_private from public;
