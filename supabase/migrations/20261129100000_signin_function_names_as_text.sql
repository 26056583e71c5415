/*
 * The account export parts and erasure steps name their functions as text, not regprocedure.
 * pg_upgrade --check refuses a user table with a column of a reg* type that names a catalog row
 * by oid (regproc, regprocedure, regoper, regoperator, regconfig, regdictionary, regnamespace,
 * regcollation): the oids are not kept by an upgrade. Supabase's in-place major-version upgrade
 * runs that check first, and its Security Advisor lists such columns as `unsupported_reg_types`.
 *
 * Each name becomes regprocedure's text, schema-qualified (`app_private.account_export_profile(uuid)`,
 * as the migrations inserted them). A check constraint keeps what the type checked, and that the
 * name is schema-qualified: app_private.account_export and app.delete_account run with
 * search_path = '' and must find it. Both now cast the text when they call (`::regprocedure::regproc`);
 * their bodies are otherwise unchanged.
 *
 * Tables touched: app_private.account_export_parts, app_private.account_erasure_steps (column
 * type; the rows are kept, each as the text of its name). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

-- regprocedure's text is the schema-qualified name wherever the schema is not on the search
-- path; with an empty one, only pg_catalog's types (uuid) go unqualified.
select pg_catalog.set_config('search_path', '', true);

alter table app_private.account_export_parts
  alter column function_name type text using function_name::text,
  add constraint account_export_parts_function_name_check check (
    function_name ~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\(' and to_regprocedure(function_name) is not null
  );
comment on column app_private.account_export_parts.function_name is
  'The part''s function (user_id uuid) returning jsonb, schema-qualified (`app_private.account_export_<part>(uuid)`); text, not regprocedure, so pg_upgrade can upgrade the database. The check constraint refuses a name that is not schema-qualified or names no function.';

alter table app_private.account_erasure_steps
  alter column function_name type text using function_name::text,
  add constraint account_erasure_steps_function_name_check check (
    function_name ~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\(' and to_regprocedure(function_name) is not null
  );
comment on column app_private.account_erasure_steps.function_name is
  'The step''s function (user_id uuid) returning void, schema-qualified (`app_private.account_erase_<domain>(uuid)`); text, not regprocedure, so pg_upgrade can upgrade the database. The check constraint refuses a name that is not schema-qualified or names no function.';

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

create or replace function app_private.account_export(target_user_id uuid) returns jsonb
language plpgsql stable
set search_path = ''
as $$
declare
  -- Every key of the contract, with the value of a domain that has nothing (or no part yet).
  document jsonb := jsonb_build_object(
    'exportedAt', app_private.iso_time(now()),
    'profile', null, 'identities', '[]'::jsonb, 'sessions', '[]'::jsonb,
    'conversations', '[]'::jsonb, 'messages', '[]'::jsonb, 'notifications', '[]'::jsonb,
    'preferences', null, 'orders', '[]'::jsonb, 'vendor', null, 'wallet', null
  );
  p record;
  value jsonb;
begin
  for p in select e.part, e.function_name from app_private.account_export_parts e order by e.part loop
    execute format('select %s($1)', p.function_name::regprocedure::regproc) using target_user_id into value;
    document := document || jsonb_build_object(p.part, coalesce(value, document -> p.part, 'null'::jsonb));
  end loop;
  return document;
end;
$$;

create or replace function app.delete_account() returns timestamptz
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  victim app.users;
  step record;
  wallets text[];
begin
  if me is null then
    raise exception 'sign in to delete your account' using errcode = '42501';
  end if;
  if not app.has_fresh_sign_in() then
    raise exception 'deleting the account needs a fresh sign-in' using errcode = 'AG403',
      hint = 'reauthentication_required';
  end if;
  select * into victim from app.users u where u.id = me for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select coalesce(array_agg(lower(i.provider_user_id)), '{}') into wallets
  from app.identities i where i.user_id = me and i.provider = 'wallet';
  for step in select s.function_name from app_private.account_erasure_steps s order by s.position loop
    execute format('select %s($1)', step.function_name::regprocedure::regproc) using me;
  end loop;
  -- Sign-in state that names the person but has no key to the user row.
  if victim.email is not null then
    delete from app_private.magic_links l where lower(l.email) = lower(victim.email);
    delete from app_private.rate_limits r where r.bucket = 'signin:email:' || lower(victim.email);
  end if;
  delete from app_private.rate_limits r
  where r.bucket = any (select 'signin:wallet:' || w from unnest(wallets) w);
  update app.access_logs l set user_id = null where l.user_id = me;
  -- Log lines still on their way from the API instances (written in batches) are nulled later.
  perform app_private.enqueue_job('account.erase_access_logs', jsonb_build_object('userId', me),
    now() + interval '2 minutes', 'account.erase_access_logs:' || me::text);
  -- The row: identities, sessions (and their refresh tokens), memberships, files, histories and
  -- every other domain's rows cascade; what others keep (messages, security events, orders)
  -- sets the person to null. The guard trigger refuses the last active ADMIN.
  delete from app.users u where u.id = me;
  delete from app.events e where e.topic = 'user:' || me::text;
  perform app_private.record_security_event('account.deleted', 'warning', null,
    jsonb_build_object('userId', me, 'role', victim.role));
  return now();
end;
$$;

revoke execute on all functions in schema app, app_private from public;
