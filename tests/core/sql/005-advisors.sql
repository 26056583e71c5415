/*
 * What Supabase's Security and Performance Advisors (the lints of supabase/splinter) would list on
 * Agora's objects, checked here so a new policy, function or column that would show in Studio
 * fails the gate. Three lints, written again over the catalog in our own SQL:
 *
 * - multiple_permissive_policies: two permissive policies on one table for the same role and
 *   operation (a policy `to public` counts for every role, `for all` for every operation).
 *   Roles that bypass RLS, pg_* and supabase*admin roles do not count.
 * - function_search_path_mutable: a function with no `search_path` setting. Seven stay, each an
 *   inlinable SQL function with the caller's rights (docs/hosted.md says why, with what pinning
 *   them costs); the list is exact, so an eighth fails.
 * - unsupported_reg_types: a column of a reg* type (or an array of, or a domain over, one), which
 *   pg_upgrade --check refuses (regclass, regtype and regrole included here: none is needed).
 *
 * "Agora's schemas" are every schema but the ones hosted Supabase and Postgres own (the lints skip
 * the same), the `tests` helpers and objects owned by an extension. Each check is run first on a
 * scratch schema built to trip it, so none can pass by finding nothing.
 */
begin;
select plan(7);

create function pg_temp.agora_schema(nspname name) returns boolean
language sql immutable
as $$
  select nspname not like 'pg\_%' and nspname not in (
    'information_schema', 'tests', 'auth', 'cron', 'extensions', 'graphql', 'graphql_public',
    'net', 'pgbouncer', 'pgmq', 'pgsodium', 'pgsodium_masks', 'pgtle', 'realtime', 'repack',
    'storage', 'supabase_functions', 'supabase_migrations', 'vault', 'tiger', 'topology',
    '_timescaledb_cache', '_timescaledb_catalog', '_timescaledb_config', '_timescaledb_internal',
    'pgroonga'
  )
$$;

-- One row per table, role and operation with more than one permissive policy.
create function pg_temp.permissive_overlaps() returns table (finding text)
language sql stable
as $$
  with policy_grants as (
    select n.nspname, c.relname, p.polname, r.rolname, op.operation
    from pg_policy p
    join pg_class c on c.oid = p.polrelid
    join pg_namespace n on n.oid = c.relnamespace
    join pg_roles r on r.oid = any (p.polroles) or p.polroles = array[0::oid]
    cross join lateral unnest(case p.polcmd
      when 'r' then array['select'] when 'a' then array['insert']
      when 'w' then array['update'] when 'd' then array['delete']
      else array['select', 'insert', 'update', 'delete'] end) as op(operation)
    where p.polpermissive
      and c.relkind in ('r', 'p')
      and pg_temp.agora_schema(n.nspname)
      and not r.rolbypassrls
      and r.rolname not like 'pg\_%'
      and r.rolname not like 'supabase%admin'
      and not exists (select 1 from pg_depend d where d.objid = c.oid and d.deptype = 'e')
  )
  select format('%I.%I for %s %s: %s', nspname, relname, rolname, operation,
                string_agg(polname, ', ' order by polname))
  from policy_grants
  group by nspname, relname, rolname, operation
  having count(*) > 1
$$;

-- Every function without a pinned search_path.
create function pg_temp.mutable_search_paths() returns table (finding text)
language sql stable
as $$
  select p.oid::regprocedure::text
  from pg_proc p
  join pg_namespace n on n.oid = p.pronamespace
  where pg_temp.agora_schema(n.nspname)
    and not exists (select 1 from unnest(p.proconfig) as setting where setting like 'search_path=%')
    and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
$$;

-- Every column (of a table, index, view or composite type) whose type is a reg* type, an array
-- of one, or a domain over one.
create function pg_temp.reg_type_columns() returns table (finding text)
language sql stable
as $$
  select format('%I.%I.%I %s', n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod))
  from pg_attribute a
  join pg_class c on c.oid = a.attrelid
  join pg_namespace n on n.oid = c.relnamespace
  join pg_type t on t.oid = a.atttypid
  where a.attnum > 0 and not a.attisdropped
    and pg_temp.agora_schema(n.nspname)
    and exists (
      select 1 from pg_type r
      where r.typnamespace = 'pg_catalog'::regnamespace and r.typname like 'reg%'
        and r.oid in (t.oid, t.typelem, t.typbasetype)
    )
$$;

-- ---------------------------------------------------------------------------------------------
-- The checks find what they look for
-- ---------------------------------------------------------------------------------------------

create schema advisor_scratch;
create table advisor_scratch.notes (id integer, owner_id uuid, handler regprocedure);
alter table advisor_scratch.notes enable row level security;
create policy notes_select_self on advisor_scratch.notes for select to authenticated
  using (owner_id = (select auth.uid()));
create policy notes_select_admin on advisor_scratch.notes for select to authenticated
  using ((select app.is_admin()));
create policy notes_all_admin on advisor_scratch.notes for all to public
  using ((select app.is_admin()));
create function advisor_scratch.twice(x integer) returns integer language sql immutable
  as $$ select x * 2 $$;
create domain advisor_scratch.handler as regproc;
create table advisor_scratch.handlers (names regprocedure[], main advisor_scratch.handler);

select results_eq(
  $$ select finding from pg_temp.permissive_overlaps() where finding like 'advisor\_scratch.%'
     order by 1 $$,
  $$ values ('advisor_scratch.notes for authenticated select: notes_all_admin, notes_select_admin, notes_select_self') $$,
  'The policy check finds permissive policies overlapping on a role and operation (`to public` and `for all` included), and only there.'
);
select results_eq(
  $$ select finding from pg_temp.mutable_search_paths() where finding like 'advisor\_scratch.%' $$,
  $$ values ('advisor_scratch.twice(integer)') $$,
  'The search_path check finds a function without a pinned search_path.'
);
select set_eq(
  $$ select finding from pg_temp.reg_type_columns() where finding like 'advisor\_scratch.%' $$,
  array[
    'advisor_scratch.notes.handler regprocedure',
    'advisor_scratch.handlers.names regprocedure[]',
    'advisor_scratch.handlers.main advisor_scratch.handler'
  ],
  'The reg* check finds reg* columns, arrays of them and domains over them.'
);
drop schema advisor_scratch cascade;

-- ---------------------------------------------------------------------------------------------
-- Agora's objects
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$ select finding from pg_temp.permissive_overlaps() $$,
  'multiple_permissive_policies: no table has two permissive policies for one role and operation (merge them into one, conditions joined with or).'
);
select set_eq(
  $$ select finding from pg_temp.mutable_search_paths() $$,
  array[
    'app.attachment_json(app.attachments)',
    'app.message_object(app.messages,jsonb)',
    'app.notification_json(app.notifications)',
    'app_private.in_audience(app.users,jsonb)',
    'app_private.live_sessions(uuid[])',
    'app_private.quiet_until(time without time zone,time without time zone,text,timestamp with time zone)',
    'app_private.wants(jsonb,app.notification_type,text,jsonb)'
  ],
  'function_search_path_mutable: only the seven inlined SQL builders of docs/hosted.md leave search_path unset (any other function sets it).'
);
select is_empty(
  $$ select finding from pg_temp.reg_type_columns() $$,
  'unsupported_reg_types: no column of Agora''s schemas has a reg* type (pg_upgrade --check refuses them).'
);
select is(
  (select count(*)::integer from pg_attribute a
   where a.attrelid in ('app_private.account_export_parts'::regclass, 'app_private.account_erasure_steps'::regclass)
     and a.attname = 'function_name' and a.atttypid = 'text'::regtype),
  2,
  'The export parts and erasure steps name their functions as text.'
);

select * from finish();
rollback;
