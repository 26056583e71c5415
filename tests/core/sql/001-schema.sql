/*
 * The shape of the foundation schema and its catalog-level guarantees: the tables and key columns,
 * RLS on every table the project owns (a future table without it fails here, by name), no API-role
 * privileges on server-only state, function execute grants, policies, and the role rank order.
 */
begin;
select plan(75);

-- ---------------------------------------------------------------------------------------------
-- Schemas and tables
-- ---------------------------------------------------------------------------------------------

select has_schema('app', 'The app schema exists.');
select has_schema('app_private', 'The app_private schema exists.');
select has_schema('dev', 'The dev schema (local mailbox) exists.');

select has_table('app', 'users', 'The table app.users exists.');
select has_table('app', 'identities', 'The table app.identities exists.');
select has_table('app', 'sessions', 'The table app.sessions exists.');
select has_table('app', 'security_events', 'The table app.security_events exists.');
select has_table('app', 'access_logs', 'The table app.access_logs exists.');
select has_table('app', 'role_changes', 'The table app.role_changes exists.');
select has_table('app', 'config_versions', 'The table app.config_versions exists.');
select has_table('app_private', 'refresh_tokens', 'The table app_private.refresh_tokens exists.');
select has_table('app_private', 'magic_links', 'The table app_private.magic_links exists.');
select has_table('app_private', 'rate_limits', 'The table app_private.rate_limits exists.');
select has_table('dev', 'mail', 'The table dev.mail exists.');
select has_table('app', 'message_reactions', 'The table app.message_reactions exists.');
select has_table('app', 'message_threads', 'The table app.message_threads exists.');
select has_table('app', 'reports', 'The table app.reports exists (moderation).');
select has_table('app', 'report_snapshots', 'The table app.report_snapshots exists (moderation).');

-- ---------------------------------------------------------------------------------------------
-- Key columns
-- ---------------------------------------------------------------------------------------------

select col_is_pk('app', 'users', 'id', 'Users are keyed by id.');
select col_type_is('app', 'users', 'role', 'app.user_role', 'A user''s role is an app.user_role.');
select col_not_null('app', 'users', 'role', 'Every user has a role.');
select col_type_is('app', 'users', 'status', 'app.user_status', 'A user''s status is an app.user_status.');
select col_is_null('app', 'users', 'email', 'A user''s email is their verified address, or null (a wallet''s account).');
select has_index('app', 'users', 'users_email_key', 'Email addresses have a unique index.');
select col_type_is('app', 'identities', 'user_id', 'uuid', 'An identity belongs to a user by uuid.');
select fk_ok('app', 'identities', 'user_id', 'app', 'users', 'id', 'Identities reference app.users.');
select fk_ok('app', 'sessions', 'user_id', 'app', 'users', 'id', 'Sessions reference app.users.');
select col_type_is('app', 'sessions', 'revoked_at', 'timestamp with time zone', 'A session records when it was revoked.');
select col_not_null('app', 'sessions', 'expires_at', 'Every session expires.');
select fk_ok('app_private', 'refresh_tokens', 'session_id', 'app', 'sessions', 'id', 'Refresh tokens reference app.sessions.');
select col_is_unique('app_private', 'refresh_tokens', 'token_hash', 'Refresh token hashes are unique.');
select col_is_unique('app_private', 'magic_links', 'token_hash', 'Magic-link token hashes are unique.');
select col_is_pk('app_private', 'rate_limits', array['bucket', 'window_start'], 'Rate limits are keyed by bucket and window start.');
select col_type_is('app', 'role_changes', 'new_role', 'app.user_role', 'A role change records the new role.');
select col_is_pk('app', 'config_versions', 'version', 'Configuration versions are keyed by version (the optimistic lock).');
select has_trigger('app', 'users', 'users_guard_update', 'app.users has the guard trigger on update.');

-- ---------------------------------------------------------------------------------------------
-- Row level security everywhere
-- ---------------------------------------------------------------------------------------------

/*
 * Every ordinary and partitioned table (partitions included: they can be queried directly) in
 * every schema the project owns. Left out: the system catalogs and the schemas the platform
 * manages (Postgres, Supabase, pg_cron, the migration history, this test schema), and tables that
 * belong to an extension. A table the project adds anywhere else, `public` included, must have RLS.
 */
select is_empty(
  $$
    select format('%I.%I', n.nspname, c.relname)
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p')
      and not c.relrowsecurity
      and n.nspname not like 'pg\_%'
      and n.nspname not in (
        'information_schema', 'extensions', 'cron', 'supabase_migrations', 'auth', 'realtime',
        'storage', 'vault', 'graphql', 'graphql_public', 'pgsodium', 'pgsodium_masks', 'net',
        'supabase_functions', 'pgbouncer', '_realtime', '_analytics', 'tests'
      )
      and not exists (
        select 1 from pg_depend d
        where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e'
      )
  $$,
  'Every project table has row level security enabled (the offending tables are listed otherwise).'
);

select isnt_empty(
  $$ select 1 from pg_class where oid = 'app.users'::regclass and relrowsecurity $$,
  'The RLS check above really looks at app tables (app.users has RLS).'
);

-- ---------------------------------------------------------------------------------------------
-- Server-only state: no privileges for the API roles
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$
    select format('%s has %s on %s', r.role, p.privilege, c.oid::regclass)
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    cross join (values ('anon'), ('authenticated')) as r (role)
    cross join (values ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) as p (privilege)
    where (n.nspname = 'app_private' or (n.nspname = 'dev' and c.relname = 'mail'))
      and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and has_table_privilege(r.role, c.oid, p.privilege)
  $$,
  'anon and authenticated hold no table privilege on any app_private table or on dev.mail.'
);

select is_empty(
  $$
    select format('%s has %s on a column of %s', r.role, p.privilege, c.oid::regclass)
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    cross join (values ('anon'), ('authenticated')) as r (role)
    cross join (values ('SELECT'), ('INSERT'), ('UPDATE'), ('REFERENCES')) as p (privilege)
    where (n.nspname = 'app_private' or (n.nspname = 'dev' and c.relname = 'mail'))
      and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and has_any_column_privilege(r.role, c.oid, p.privilege)
  $$,
  'anon and authenticated hold no column privilege on any app_private table or on dev.mail.'
);

select is_empty(
  $$
    select format('%s has %s on %s', r.role, p.privilege, c.oid::regclass)
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    cross join (values ('anon'), ('authenticated')) as r (role)
    cross join (values ('USAGE'), ('SELECT'), ('UPDATE')) as p (privilege)
    where n.nspname in ('app_private', 'dev') and c.relkind = 'S'
      and has_sequence_privilege(r.role, c.oid, p.privilege)
  $$,
  'anon and authenticated hold no privilege on any app_private or dev sequence.'
);

select is_empty(
  $$
    select format('%s has %s on schema %s', r.role, p.privilege, s.schema)
    from (values ('app_private'), ('dev')) as s (schema)
    cross join (values ('anon'), ('authenticated')) as r (role)
    cross join (values ('USAGE'), ('CREATE')) as p (privilege)
    where has_schema_privilege(r.role, s.schema, p.privilege)
  $$,
  'anon and authenticated can neither use nor create in the app_private and dev schemas.'
);

select is_empty(
  $$
    select format('%s has %s on %s', r.role, p.privilege, c.oid::regclass)
    from pg_class c
    cross join (values ('anon'), ('authenticated')) as r (role)
    cross join (values ('INSERT'), ('DELETE'), ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) as p (privilege)
    where c.relnamespace = 'app'::regnamespace and c.relkind in ('r', 'p')
      and has_table_privilege(r.role, c.oid, p.privilege)
  $$,
  'Neither anon nor authenticated holds a table-wide insert, delete, truncate, references or trigger privilege on any app table.'
);

select is_empty(
  $$
    select format('anon has %s on %s', p.privilege, c.oid::regclass)
    from pg_class c
    cross join (values ('SELECT'), ('INSERT'), ('UPDATE'), ('REFERENCES')) as p (privilege)
    where c.relnamespace = 'app'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and has_any_column_privilege('anon', c.oid, p.privilege)
    union all
    select format('anon has %s on %s', p.privilege, c.oid::regclass)
    from pg_class c
    cross join (values ('DELETE'), ('TRUNCATE'), ('TRIGGER')) as p (privilege)
    where c.relnamespace = 'app'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'f')
      and has_table_privilege('anon', c.oid, p.privilege)
  $$,
  'anon holds no privilege on any app table or view: visitors read only through functions.'
);

select is(
  (
    select array_agg(a.attname::text order by a.attname)
    from pg_attribute a
    where a.attrelid = 'app.users'::regclass and a.attnum > 0 and not a.attisdropped
      and has_column_privilege('authenticated', a.attrelid, a.attnum, 'UPDATE')
  ),
  array['bio', 'image', 'image_attachment_id', 'locale', 'name', 'role', 'status', 'time_zone']::text[],
  'authenticated may update only the profile (name, image, bio, time_zone, locale, image_attachment_id), role and status columns of app.users.'
);

select is(
  (
    select array_agg(a.attname::text order by a.attname)
    from pg_attribute a
    where a.attrelid = 'app.sessions'::regclass and a.attnum > 0 and not a.attisdropped
      and has_column_privilege('authenticated', a.attrelid, a.attnum, 'UPDATE')
  ),
  array['revoked_at', 'revoked_reason']::text[],
  'authenticated may update only the revoked_at and revoked_reason columns of app.sessions.'
);

-- ---------------------------------------------------------------------------------------------
-- Function execute grants
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$
    select format('%s can execute %s', r.role, p.oid::regprocedure)
    from pg_proc p
    cross join (values ('anon'), ('authenticated')) as r (role)
    where p.pronamespace = 'app_private'::regnamespace
      and has_function_privilege(r.role, p.oid, 'EXECUTE')
  $$,
  'No app_private function (hit_rate_limit, the trigger and pruning functions) is executable by anon or authenticated.'
);

select ok(
  not has_function_privilege('anon', 'app_private.hit_rate_limit(text, integer)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.hit_rate_limit(text, integer)', 'EXECUTE'),
  'app_private.hit_rate_limit is not executable by anon or authenticated.'
);

select ok(
  has_function_privilege('authenticated', 'app.change_user_role(uuid, app.user_role, text)', 'EXECUTE'),
  'authenticated can execute app.change_user_role (the function itself refuses non-admins).'
);

select ok(
  not has_function_privilege('anon', 'app.change_user_role(uuid, app.user_role, text)', 'EXECUTE'),
  'anon cannot execute app.change_user_role.'
);
select is(
  (select array_agg(p.proname::text order by p.proname)
   from pg_proc p
   where p.pronamespace = 'app'::regnamespace and has_function_privilege('anon', p.oid, 'EXECUTE')),
  array['current_user_role', 'get_product', 'has_role', 'is_admin', 'list_vendors', 'product_image', 'public_config', 'search_products']::text[],
  'anon can execute exactly app.current_user_role, app.has_role, app.is_admin, app.public_config and the public store reads (app.get_product, app.list_vendors, app.search_products, app.product_image).'
);

select ok(
  has_function_privilege('anon', 'app.public_config()', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.public_config()', 'EXECUTE'),
  'anon and authenticated can execute app.public_config.'
);

select ok(
  has_function_privilege('anon', 'app.has_role(app.user_role)', 'EXECUTE')
  and has_function_privilege('anon', 'app.is_admin()', 'EXECUTE')
  and has_function_privilege('anon', 'app.current_user_role()', 'EXECUTE'),
  'anon can execute the role helpers has_role, is_admin and current_user_role.'
);

select ok(
  has_function_privilege('authenticated', 'app.has_role(app.user_role)', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.is_admin()', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.current_user_role()', 'EXECUTE'),
  'authenticated can execute the role helpers has_role, is_admin and current_user_role.'
);

select is_empty(
  $$
    select p.oid::regprocedure::text
    from pg_proc p
    where p.pronamespace in ('app'::regnamespace, 'app_private'::regnamespace)
      and p.prosecdef
      and not exists (select 1 from unnest(p.proconfig) as c where c like 'search_path=%')
  $$,
  'Every security definer function in app and app_private pins its search_path.'
);

select isnt_definer('app', 'change_user_role', array['uuid', 'app.user_role', 'text'],
  'app.change_user_role runs with the caller''s rights (RLS and the guard trigger apply).');

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

select policies_are('app', 'users',
  array['users_select_self_or_admin', 'users_update_self_or_admin'],
  'app.users has exactly one select and one update policy, each for the user and ADMINs.');
select policies_are('app', 'identities',
  array['identities_select_self_or_admin'],
  'app.identities has exactly one select policy, for the user and ADMINs.');
select policies_are('app', 'sessions',
  array['sessions_select_self_or_admin', 'sessions_update_self'],
  'app.sessions has exactly the select policy for the user and ADMINs and the self update (revoke) policy.');
select policies_are('app', 'security_events', array['security_events_select_admin'],
  'app.security_events has exactly the admin select policy.');
select policies_are('app', 'access_logs', array['access_logs_select_admin'],
  'app.access_logs has exactly the admin select policy.');
select policies_are('app', 'role_changes',
  array['role_changes_select_self_or_admin'],
  'app.role_changes has exactly one select policy, for the user and ADMINs (no insert policy).');
select policies_are('app', 'config_versions',
  array['config_versions_select_admin', 'config_versions_insert_admin'],
  'app.config_versions has exactly the admin select and insert policies.');
select policies_are('app', 'message_reactions', array['message_reactions_select_participant'],
  'app.message_reactions has exactly the participants'' select policy (app.set_reaction writes).');
select policies_are('app', 'message_threads', array['message_threads_select_participant'],
  'app.message_threads has exactly the participants'' select policy (the reply triggers write).');
select policies_are('app', 'reports', array['reports_select_reporter_or_admin'],
  'app.reports has exactly the select policy for the reporter and ADMINs (written only by app.create_report and app.resolve_report).');
select policies_are('app', 'report_snapshots', array['report_snapshots_select_admin'],
  'app.report_snapshots has exactly the admin select policy.');
select is_empty(
  $$ select format('%I.%I: %s', schemaname, tablename, policyname) from pg_policies where schemaname in ('app_private', 'dev') $$,
  'The app_private tables and dev.mail have no policies at all (RLS on, deny everything).'
);

-- ---------------------------------------------------------------------------------------------
-- Every table and function says why it exists (in its comment, which survives `create or
-- replace` and shows in supabase/schema/<domain>.sql and Supabase Studio)
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$ select format('%I.%I', n.nspname, c.relname)
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname in ('app', 'app_private') and c.relkind in ('r', 'p', 'v', 'm')
       and coalesce(obj_description(c.oid, 'pg_class'), '') = '' $$,
  'Every table and view in app and app_private has a comment saying why it exists.'
);
select is_empty(
  $$ select p.oid::regprocedure::text
     from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('app', 'app_private')
       and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
       and coalesce(obj_description(p.oid, 'pg_proc'), '') = '' $$,
  'Every function in app and app_private has a comment saying why it exists.'
);
select is_empty(
  $$ select t.oid::regtype::text
     from pg_type t join pg_namespace n on n.oid = t.typnamespace
     where n.nspname in ('app', 'app_private') and t.typtype = 'e'
       and coalesce(obj_description(t.oid, 'pg_type'), '') = '' $$,
  'Every enum type in app and app_private has a comment saying what its values mean.'
);

select set_eq(
  $$ select p.oid::regprocedure::text
     from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('app', 'app_private')
       and 'plan_cache_mode=force_generic_plan' = any (p.proconfig) $$,
  $$ values ('app.create_checkout(jsonb,jsonb,text,text,text)'),
            ('app.attach_payment_intent(uuid,text,text,text)'),
            ('app_private.notify_rows(app.notification_type,uuid[],text[],text[],jsonb[],app.notification_priority,text)'),
            ('app_private.digest_conversation(uuid,bigint)'),
            ('app_private.take_deliveries(uuid[],integer,bigint[])'),
            ('app_private.claim_jobs(text[],text,integer,interval[])'),
            ('app_private.create_wallet_transfer(uuid,integer,app.wallet_token_kind,text,text,text,integer,text,uuid,numeric,numeric,numeric,numeric,numeric)'),
            ('app_private.submit_wallet_transaction(uuid,bigint,text,text,numeric,numeric)'),
            ('app_private.finish_wallet_transaction(uuid,app.wallet_transaction_status,bigint,text,numeric,text)') $$,
  'The functions that force generic plans are these (docs/conventions.md, "Plans": each looks rows up by key or by arrays of keys).'
);

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

select enum_has_labels('app', 'user_role', array['VISITOR', 'SUBSCRIBER', 'MEMBER', 'CONFIDENTIAL', 'ADMIN'],
  'The roles are declared in rank order VISITOR, SUBSCRIBER, MEMBER, CONFIDENTIAL, ADMIN.');
select ok(
  'VISITOR'::app.user_role < 'SUBSCRIBER' and 'SUBSCRIBER'::app.user_role < 'MEMBER'
  and 'MEMBER'::app.user_role < 'CONFIDENTIAL' and 'CONFIDENTIAL'::app.user_role < 'ADMIN',
  'Comparing roles compares ranks: VISITOR < SUBSCRIBER < MEMBER < CONFIDENTIAL < ADMIN.'
);
select enum_has_labels('app', 'user_status', array['active', 'suspended'],
  'A user is either active or suspended.');

select * from finish();
rollback;
