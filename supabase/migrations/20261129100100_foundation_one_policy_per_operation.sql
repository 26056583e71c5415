/*
 * One permissive policy per table, role and operation: the users, identities, sessions and role
 * changes tables. Each pair (or triple) of permissive policies below was already combined by
 * Postgres with OR for every row; each becomes one policy whose condition is that OR, so every row
 * is visible (or writable) to exactly whom it was before: the same conditions, in one policy.
 * Supabase's Performance Advisor lists two permissive policies for the same role and operation as
 * `multiple_permissive_policies`; tests/core/sql/005-advisors.sql fails on any. The per-persona
 * RLS tests are unchanged.
 *
 * Tables touched: app.users, app.identities, app.sessions, app.role_changes (policies only).
 * Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- Was users_select_self and users_select_admin.
drop policy users_select_self on app.users;
drop policy users_select_admin on app.users;
create policy users_select_self_or_admin on app.users for select to authenticated
  using (id = (select auth.uid()) or (select app.is_admin()));

-- Was users_update_self and users_update_admin.
drop policy users_update_self on app.users;
drop policy users_update_admin on app.users;
create policy users_update_self_or_admin on app.users for update to authenticated
  using (id = (select auth.uid()) or (select app.is_admin()))
  with check (id = (select auth.uid()) or (select app.is_admin()));

-- Was identities_select_self and identities_select_admin.
drop policy identities_select_self on app.identities;
drop policy identities_select_admin on app.identities;
create policy identities_select_self_or_admin on app.identities for select to authenticated
  using (user_id = (select auth.uid()) or (select app.is_admin()));

-- Was sessions_select_self and sessions_select_admin.
drop policy sessions_select_self on app.sessions;
drop policy sessions_select_admin on app.sessions;
create policy sessions_select_self_or_admin on app.sessions for select to authenticated
  using (user_id = (select auth.uid()) or (select app.is_admin()));

-- Was role_changes_select_self and role_changes_select_admin.
drop policy role_changes_select_self on app.role_changes;
drop policy role_changes_select_admin on app.role_changes;
create policy role_changes_select_self_or_admin on app.role_changes for select to authenticated
  using (user_id = (select auth.uid()) or (select app.is_admin()));

revoke execute on all functions in schema app, app_private from public;
