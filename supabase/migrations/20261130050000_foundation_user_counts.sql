/*
 * The admin users list at any size (issue 30): GET /api/admin/users showed the counts by role on
 * every page by counting app.users (a sequential scan: 459 ms at 1M users), and a search that
 * matched nobody walked the whole created_at index looking for a first row.
 *
 * - app_private.user_counts: one row per (role, status), kept exact by statement-level triggers
 *   on app.users (insert, update, delete, truncate). The triggers only append their deltas to
 *   app_private.user_count_deltas (no row is updated, so concurrent writers never wait on each
 *   other, and two multi-statement transactions cannot deadlock on the counters); pg_cron job
 *   agora-compact-counters folds the deltas into the counts every minute. A count is the row
 *   plus its deltas, read in one statement: exact at any moment.
 * - app.user_counts(): the counts, for an ADMIN (42501 otherwise).
 * - app_private.recount_users(): recomputes them from the table (operators, and seeds that
 *   write users with triggers off).
 * - Indexes for a role or status filter in created_at order (a rare role no longer walks every
 *   user looking for a page).
 */

create table app_private.user_counts (
  role app.user_role not null,
  status app.user_status not null,
  n bigint not null default 0,
  primary key (role, status)
);
comment on table app_private.user_counts is
  'How many users hold each (role, status) as of the last compaction; the count now adds the rows of app_private.user_count_deltas (app.user_counts() does). Kept exact by the triggers on app.users (app_private.count_users_*): what the admin users list and the analytics show instead of counting the table. Server only.';
alter table app_private.user_counts enable row level security;

create table app_private.user_count_deltas (
  id bigint generated always as identity primary key,
  role app.user_role not null,
  status app.user_status not null,
  delta bigint not null
);
comment on table app_private.user_count_deltas is
  'Changes to app_private.user_counts not folded in yet: appended by the triggers on app.users (one row per role and status a statement changed), folded in and deleted by app_private.compact_counters (pg_cron, every minute). Append-only for writers, so they never contend for a counter row. Server only.';
alter table app_private.user_count_deltas enable row level security;

create function app_private.apply_user_count_deltas(deltas jsonb) returns void
language sql
set search_path = ''
as $$
  insert into app_private.user_count_deltas (role, status, delta)
  select x.role, x.status, sum(x.delta)::bigint
  from jsonb_to_recordset(deltas) as x(role app.user_role, status app.user_status, delta bigint)
  group by x.role, x.status
  having sum(x.delta) <> 0
$$;
comment on function app_private.apply_user_count_deltas(jsonb) is
  'Appends [{role, status, delta}] (summed per role and status) to app_private.user_count_deltas: an insert, never an update of a shared row, so concurrent writers neither wait nor deadlock.';
revoke all on function app_private.apply_user_count_deltas(jsonb) from public;

create function app_private.count_users_inserted() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.apply_user_count_deltas(coalesce((
    select jsonb_agg(jsonb_build_object('role', n.role, 'status', n.status, 'delta', 1))
    from new_rows n), '[]'));
  return null;
end;
$$;
comment on function app_private.count_users_inserted() is
  'After insert on app.users, once per statement: adds the new rows to app_private.user_counts. security definer: whoever inserts a user (sign-up runs as the server) cannot write the counters directly.';
revoke all on function app_private.count_users_inserted() from public;

create function app_private.count_users_deleted() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.apply_user_count_deltas(coalesce((
    select jsonb_agg(jsonb_build_object('role', o.role, 'status', o.status, 'delta', -1))
    from old_rows o), '[]'));
  return null;
end;
$$;
comment on function app_private.count_users_deleted() is
  'After delete on app.users, once per statement: takes the deleted rows off app_private.user_counts. security definer: an account deletes its own row and may not write the counters.';
revoke all on function app_private.count_users_deleted() from public;

create function app_private.count_users_updated() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.apply_user_count_deltas(coalesce((
    select jsonb_agg(d)
    from (
      select jsonb_build_object('role', o.role, 'status', o.status, 'delta', -1) as d
      from old_rows o join new_rows n on n.id = o.id
      where (o.role, o.status) is distinct from (n.role, n.status)
      union all
      select jsonb_build_object('role', n.role, 'status', n.status, 'delta', 1)
      from old_rows o join new_rows n on n.id = o.id
      where (o.role, o.status) is distinct from (n.role, n.status)
    ) changes), '[]'));
  return null;
end;
$$;
comment on function app_private.count_users_updated() is
  'After update on app.users, once per statement: moves each user whose role or status changed from its old (role, status) counter to its new one. security definer: admins change roles and statuses and may not write the counters.';
revoke all on function app_private.count_users_updated() from public;

create function app_private.count_users_truncated() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from app_private.user_count_deltas;
  update app_private.user_counts set n = 0 where n <> 0;
  return null;
end;
$$;
comment on function app_private.count_users_truncated() is
  'After truncate of app.users (tests, never the app): every counter is zero.';
revoke all on function app_private.count_users_truncated() from public;

create trigger users_count_inserted after insert on app.users
  referencing new table as new_rows
  for each statement execute function app_private.count_users_inserted();
create trigger users_count_deleted after delete on app.users
  referencing old table as old_rows
  for each statement execute function app_private.count_users_deleted();
create trigger users_count_updated after update on app.users
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.count_users_updated();
create trigger users_count_truncated after truncate on app.users
  for each statement execute function app_private.count_users_truncated();

create function app_private.recount_users() returns void
language plpgsql
set search_path = ''
as $$
begin
  -- Writers wait while the counters are rebuilt, so none of their deltas is lost.
  lock table app.users in share row exclusive mode;
  lock table app_private.user_counts in exclusive mode;
  lock table app_private.user_count_deltas in exclusive mode;
  delete from app_private.user_count_deltas;
  delete from app_private.user_counts;
  insert into app_private.user_counts (role, status, n)
  select r.role, s.status, count(u.id)
  from unnest(enum_range(null::app.user_role)) r(role)
  cross join unnest(enum_range(null::app.user_status)) s(status)
  left join app.users u on u.role = r.role and u.status = s.status
  group by r.role, s.status;
end;
$$;
comment on function app_private.recount_users() is
  'Rebuilds app_private.user_counts from app.users (a full count, writers of users wait meanwhile): after rows were written with triggers off (a bulk load with session_replication_role = replica), or should an operator doubt the counters.';
revoke all on function app_private.recount_users() from public;

select app_private.recount_users();

create function app.user_counts() returns table (role app.user_role, status app.user_status, n bigint)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads the user counts' using errcode = '42501';
  end if;
  -- One statement: a compaction moves deltas into the rows atomically, so this sees either.
  return query
    select x.role, x.status, sum(x.n)::bigint
    from (
      select c.role, c.status, c.n from app_private.user_counts c
      union all
      select d.role, d.status, d.delta from app_private.user_count_deltas d
    ) x
    group by x.role, x.status;
end;
$$;
comment on function app.user_counts() is
  'How many users hold each role and status, from the maintained counters (app_private.user_counts plus the deltas not folded in yet): GET /api/admin/users and the analytics. ADMIN only (42501). security definer: the counters are server-only; it returns counts, no person.';
revoke all on function app.user_counts() from public;
grant execute on function app.user_counts() to authenticated;

-- A role or status filter reads its own users newest first instead of filtering all of them.
create index users_role_created_at_idx on app.users (role, created_at desc, id desc);
create index users_status_created_at_idx on app.users (status, created_at desc, id desc);
drop index app.users_role_idx;

create function app_private.compact_user_counts() returns integer
language plpgsql
set search_path = ''
as $$
declare
  folded integer;
begin
  with gone as (
    delete from app_private.user_count_deltas d returning d.role, d.status, d.delta
  ), sums as (
    select g.role, g.status, sum(g.delta)::bigint as delta, count(*)::integer as rows
    from gone g group by g.role, g.status
  ), added as (
    -- A data-modifying CTE runs to its end whether or not it is read.
    insert into app_private.user_counts as c (role, status, n)
    select s.role, s.status, s.delta from sums s order by s.role, s.status
    on conflict (role, status) do update set n = c.n + excluded.n
  )
  select coalesce(sum(s.rows), 0)::integer into folded from sums s;
  return folded;
end;
$$;
comment on function app_private.compact_user_counts() is
  'Folds app_private.user_count_deltas into app_private.user_counts in one transaction (the deltas it deleted, nothing written meanwhile), so readers see the same sums before and after. Run by app_private.compact_counters (pg_cron agora-compact-counters, every minute). Returns how many delta rows it folded.';
revoke all on function app_private.compact_user_counts() from public;

create function app.admin_user_matches(pattern text, only_status app.user_status default null)
returns table (id uuid, role app.user_role, created_at timestamptz)
language plpgsql
stable
-- A search matches few users: without this the planner assumes 1,000 and hashes every user to
-- join them (347 ms for one match at 100,000 users) instead of looking each up by id.
rows 20
security definer
set search_path = ''
as $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN searches users' using errcode = '42501';
  end if;
  return query
    select u.id, u.role, u.created_at from app.users u
    where coalesce(lower(u.email), '') || ' ' || lower(u.name) like pattern
      and (only_status is null or u.status = only_status);
end;
$$;
comment on function app.admin_user_matches(text, app.user_status) is
  'GET /api/admin/users?search=: the users whose e-mail or name matches a LIKE pattern (lower case), found through users_search_idx (trigram). Under the caller''s RLS the pattern could not use the index: LIKE is not leakproof, so Postgres tests it only after the users policy, on every row. ADMIN only (42501), who may read every user anyway. security definer for that reason; it returns ids, roles and creation times only.';
revoke all on function app.admin_user_matches(text, app.user_status) from public;
grant execute on function app.admin_user_matches(text, app.user_status) to authenticated;
