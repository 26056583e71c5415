/*
 * Foundation: users and roles, identities, sessions, the secrets behind sign-in (magic links,
 * refresh tokens), Postgres-backed rate limits, security events, the access log, role changes and
 * the versioned system configuration with its defaults, and the people directory.
 *
 * Schemas: `app` holds what users and admins read through RLS; `app_private` holds secrets and
 * server-only state (no grants to the API roles at all). Nothing here is destructive.
 *
 * Relies on what hosted Supabase provides (locally: sql/local/): roles anon/authenticated/
 * service_role, auth.uid(), schema `extensions`. The why of every table and function is in its
 * `comment on`; the current body of every function is in supabase/schema/<domain>.sql.
 */

create extension if not exists pg_trgm with schema extensions;
create extension if not exists pg_cron;

create schema if not exists app;
create schema if not exists app_private;
comment on schema app is 'Agora data read and written by users through RLS.';
comment on schema app_private is 'Agora secrets and server-only state; never granted to API roles.';

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

-- Declared in rank order: enum comparison (`role >= 'MEMBER'`) is rank comparison.
create type app.user_role as enum ('VISITOR', 'SUBSCRIBER', 'MEMBER', 'CONFIDENTIAL', 'ADMIN');
create type app.user_status as enum ('active', 'suspended');
create type app.security_severity as enum ('info', 'warning', 'critical');
comment on type app.user_role is
  'The five roles in rank order, so that enum comparison is rank comparison.';
comment on type app.user_status is 'A suspended user authenticates nothing and is in no list.';
comment on type app.security_severity is 'How urgently an admin should look at a security event.';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.users (
  id uuid primary key default gen_random_uuid(),
  email text not null check (char_length(email) between 3 and 320 and email ~ '^[^@\s]+@[^@\s]+$'),
  name text not null default '' check (char_length(name) <= 200),
  image text check (char_length(image) <= 2048),
  role app.user_role not null default 'SUBSCRIBER',
  status app.user_status not null default 'active',
  wallet_address text check (wallet_address ~ '^0x[0-9a-fA-F]{40}$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_sign_in_at timestamptz
);
comment on table app.users is
  'People on the platform, their role and status. The role here, not the one in a token, is what every check reads, so a change counts on the next statement.';

create table app.identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  provider text not null check (provider in ('email', 'google', 'apple', 'wallet')),
  provider_user_id text not null check (char_length(provider_user_id) between 1 and 320),
  email text,
  created_at timestamptz not null default now(),
  last_used_at timestamptz not null default now(),
  unique (provider, provider_user_id)
);
comment on table app.identities is
  'How a person proves who they are: one row per provider account (email, google, apple, wallet).';

create table app.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  provider text not null,
  ip inet,
  user_agent text check (char_length(user_agent) <= 1024),
  created_at timestamptz not null default now(),
  refreshed_at timestamptz,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text check (char_length(revoked_reason) <= 200)
);
comment on table app.sessions is
  'A signed-in device. Every request checks its row, so revoking it kills its access tokens at once; a revoked or expired session authenticates nothing.';

create table app_private.refresh_tokens (
  id bigint generated always as identity primary key,
  session_id uuid not null references app.sessions (id) on delete cascade,
  token_hash text not null unique,
  parent_id bigint references app_private.refresh_tokens (id) on delete cascade,
  created_at timestamptz not null default now(),
  spent_at timestamptz
);
comment on table app_private.refresh_tokens is
  'Opaque refresh tokens as SHA-256 hashes. parent_id links each to the one it replaced: that is how reuse of a spent token is told apart from the grace allowed to its parent.';

create table app_private.magic_links (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  token_hash text not null unique,
  redirect_to text,
  ip inet,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
comment on table app_private.magic_links is
  'Magic-link tokens as SHA-256 hashes: single use, short-lived; a leaked table signs nobody in.';

create table app_private.rate_limits (
  bucket text not null,
  window_start timestamptz not null,
  hits integer not null default 0,
  primary key (bucket, window_start)
);
comment on table app_private.rate_limits is
  'Fixed-window rate-limit counters, in the database so limits hold across many stateless API instances.';

create table app.security_events (
  id bigint generated always as identity primary key,
  type text not null check (type ~ '^[a-z_]+(\.[a-z_]+)*$'),
  severity app.security_severity not null default 'info',
  user_id uuid references app.users (id) on delete set null,
  ip inet,
  user_agent text,
  details jsonb not null default '{}',
  created_at timestamptz not null default now()
);
comment on table app.security_events is
  'What an admin needs to see of security (sign-ins, token reuse, denials, role changes); written by the server only.';

/*
 * No foreign key to app.users: its check is a `select ... for key share` on the user's row for
 * every logged request. A log keeps the id it saw. Time is indexed with BRIN (rows arrive in
 * time order); pages are read newest first by id.
 */
create table app.access_logs (
  id bigint generated always as identity primary key,
  request_id text not null,
  user_id uuid,
  method text not null,
  route text not null,
  status smallint not null,
  duration_ms real not null,
  ip inet,
  created_at timestamptz not null default now()
);
comment on table app.access_logs is
  'One row per /api request, written in batches off the request path by the server only. No foreign key on user_id: checking it cost a row lock per logged request, and a log keeps the id it saw.';

create table app.role_changes (
  id bigint generated always as identity primary key,
  user_id uuid not null references app.users (id) on delete cascade,
  previous_role app.user_role not null,
  new_role app.user_role not null,
  changed_by uuid references app.users (id) on delete set null,
  reason text not null check (char_length(reason) between 1 and 500),
  changed_at timestamptz not null default now()
);
comment on table app.role_changes is
  'The audit trail of role changes (who, why, before and after), written only by a trigger on app.users so it cannot be forged.';

create table app.config_versions (
  version integer primary key check (version > 0),
  config jsonb not null,
  diff jsonb not null default '{}',
  reason text not null check (char_length(reason) between 1 and 500),
  changed_by uuid references app.users (id) on delete set null,
  created_at timestamptz not null default now()
);
comment on table app.config_versions is
  'Versioned system configuration: every version kept, the highest is current, and a stored document may be partial (app_private.config_defaults fills the rest). The primary key is the optimistic lock: two writers that read version N cannot both write N + 1.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create unique index users_email_key on app.users (lower(email));
create index users_created_at_id_idx on app.users (created_at desc, id desc);
create index users_role_idx on app.users (role);
create index users_search_idx on app.users
  using gin ((lower(email) || ' ' || lower(name)) extensions.gin_trgm_ops);
-- The people directory's order and keyset (active users by lower(name), id), and its name search
-- (a substring anywhere in the name: trigrams).
create index users_directory_idx on app.users (lower(name), id) where status = 'active';
create index users_name_search_idx on app.users using gin (lower(name) extensions.gin_trgm_ops);
create index identities_user_id_idx on app.identities (user_id);
create index sessions_user_id_idx on app.sessions (user_id);
create index sessions_created_at_idx on app.sessions (created_at);
create index refresh_tokens_session_id_idx on app_private.refresh_tokens (session_id);
create index refresh_tokens_parent_id_idx on app_private.refresh_tokens (parent_id);
create index magic_links_expires_at_idx on app_private.magic_links (expires_at);
create index rate_limits_window_start_idx on app_private.rate_limits (window_start);
create index security_events_created_at_idx on app.security_events (created_at desc, id desc);
create index security_events_type_idx on app.security_events (type, created_at desc);
create index security_events_user_id_idx on app.security_events (user_id);
create index access_logs_created_at_brin on app.access_logs using brin (created_at);
create index access_logs_user_id_idx on app.access_logs (user_id, id);
create index role_changes_user_id_idx on app.role_changes (user_id, changed_at desc);
create index role_changes_changed_by_idx on app.role_changes (changed_by);
create index config_versions_changed_by_idx on app.config_versions (changed_by);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.touch_updated_at() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
comment on function app_private.touch_updated_at() is
  'Keeps updated_at honest without trusting callers.';

create function app_private.guard_user_update() returns trigger
language plpgsql
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  trusted boolean := me is null and current_user not in ('anon', 'authenticated');
begin
  if new.id <> old.id or new.created_at <> old.created_at then
    raise exception 'user ids and creation times never change' using errcode = '42501';
  end if;
  if not trusted and new.email <> old.email then
    raise exception 'the email address cannot be changed here' using errcode = '42501';
  end if;
  if new.role = old.role and new.status = old.status then
    return new;
  end if;
  if not trusted then
    if not app.is_admin() then
      raise exception 'only an ADMIN changes roles and status' using errcode = '42501';
    end if;
    if old.id = me then
      raise exception 'an ADMIN cannot change their own role or status' using errcode = 'AG422';
    end if;
    if new.role <> old.role and coalesce(current_setting('agora.role_change_reason', true), '') = '' then
      raise exception 'a role change needs a reason (use app.change_user_role)' using errcode = 'AG400';
    end if;
  end if;
  if old.role = 'ADMIN' and old.status = 'active' and (new.role <> 'ADMIN' or new.status <> 'active') then
    perform pg_advisory_xact_lock(hashtext('app.users.active_admins'));
    if not exists (
      select 1 from app.users u
      where u.role = 'ADMIN' and u.status = 'active' and u.id <> old.id
    ) then
      raise exception 'the last active ADMIN cannot be demoted or suspended' using errcode = 'AG422';
    end if;
  end if;
  return new;
end;
$$;
comment on function app_private.guard_user_update() is
  'Users edit their own profile but never their id, email, role or status; only an ADMIN changes roles and status, never their own, and never so that no active ADMIN is left (an advisory lock serializes concurrent demotions, so two admins cannot demote each other into an admin-less platform). A transaction without claims is a trusted server path (sign-in, seed) and passes.';

create function app_private.record_role_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  actor uuid := (select auth.uid());
  why text := coalesce(
    nullif(current_setting('agora.role_change_reason', true), ''), 'changed by a server path'
  );
  client_ip inet;
begin
  insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
  values (new.id, old.role, new.role, actor, why);
  if actor is not null then
    begin
      client_ip := nullif(current_setting('agora.client_ip', true), '')::inet;
    exception when invalid_text_representation then
      client_ip := null;
    end;
    insert into app.security_events (type, severity, user_id, ip, user_agent, details)
    values (
      'admin.role_changed',
      case when 'ADMIN' in (old.role, new.role) then 'critical' else 'warning' end::app.security_severity,
      new.id,
      client_ip,
      left(nullif(current_setting('agora.user_agent', true), ''), 1024),
      jsonb_build_object('by', actor, 'from', old.role, 'to', new.role, 'reason', why)
    );
  end if;
  return null;
end;
$$;
comment on function app_private.record_role_change() is
  'Writes the audit row of every role change and, for a change by a signed-in ADMIN, its '
  'admin.role_changed security event, in the same transaction. security definer: nobody writes '
  'these rows directly.';

create function app_private.guard_session_update() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if auth.uid() is not null or current_user in ('anon', 'authenticated') then
    if old.revoked_at is not null then
      raise exception 'a revoked session cannot change' using errcode = '42501';
    end if;
    new.revoked_at := now();
  end if;
  return new;
end;
$$;
comment on function app_private.guard_session_update() is
  'Users revoke their own sessions and nothing more: the revocation time is the server''s clock (no backdating into the prune window) and a revoked session never changes again.';

create trigger users_touch_updated_at before update on app.users
  for each row execute function app_private.touch_updated_at();
create trigger users_guard_update before update on app.users
  for each row execute function app_private.guard_user_update();
create trigger users_record_role_change after update of role on app.users
  for each row when (old.role is distinct from new.role)
  execute function app_private.record_role_change();
create trigger sessions_guard_update before update on app.sessions
  for each row execute function app_private.guard_session_update();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.users enable row level security;
alter table app.identities enable row level security;
alter table app.sessions enable row level security;
alter table app_private.refresh_tokens enable row level security;
alter table app_private.magic_links enable row level security;
alter table app_private.rate_limits enable row level security;
alter table app.security_events enable row level security;
alter table app.access_logs enable row level security;
alter table app.role_changes enable row level security;
alter table app.config_versions enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

create function app.has_role(required app.user_role) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  -- plpgsql, not sql: policies call this several times per statement, and a non-inlinable SQL
  -- function is parsed and planned again on every call while plpgsql keeps its plan for the
  -- session. `(select auth.uid())` is evaluated once per statement; bare, it parsed the claims
  -- JSON once per row whenever the plan scanned (44 us a call with 41 users, 10 us now).
  return exists (
    select 1 from app.users u
    where u.id = (select auth.uid()) and u.status = 'active' and u.role >= required
  );
end;
$$;
comment on function app.has_role(app.user_role) is
  'Whether the signed-in user is active and holds at least the given role, read from app.users (not from a possibly stale token). security definer because policies on app.users call it: invoker rights would recurse into those policies. It reads one row and returns a boolean.';

create function app.is_admin() returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return app.has_role('ADMIN');
end;
$$;
comment on function app.is_admin() is
  'Shorthand for app.has_role(''ADMIN''), used by every admin policy; plpgsql so its plan is kept.';

create function app.current_user_role() returns app.user_role
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return coalesce(
    (select u.role from app.users u where u.id = (select auth.uid()) and u.status = 'active'),
    'VISITOR'::app.user_role
  );
end;
$$;
comment on function app.current_user_role() is
  'The signed-in user''s current role from the database; VISITOR without an active session user.';

create function app_private.hit_rate_limit(bucket_key text, window_seconds integer)
returns table (hits integer, reset_at timestamptz)
language sql volatile
set search_path = ''
as $$
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    bucket_key,
    to_timestamp(floor(extract(epoch from now()) / window_seconds) * window_seconds),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits, r.window_start + make_interval(secs => window_seconds)
$$;
comment on function app_private.hit_rate_limit(text, integer) is
  'Counts one hit against a fixed window and returns the count and when the window ends. One upsert, so concurrent instances count exactly. Called only by the server''s own connection, before any user transaction.';

create function app_private.prune_auth_state() returns void
language sql volatile
set search_path = ''
as $$
  delete from app_private.rate_limits where window_start < now() - interval '1 day';
  delete from app_private.magic_links where expires_at < now() - interval '1 day';
  delete from app.sessions
    where (revoked_at is not null and revoked_at < now() - interval '30 days')
       or expires_at < now() - interval '30 days';
$$;
comment on function app_private.prune_auth_state() is
  'Housekeeping for sign-in state (old rate-limit windows, used magic links, long-dead sessions), run by pg_cron every 15 minutes.';

create function app_private.prune_logs(keep_days integer default 90) returns void
language sql volatile
set search_path = ''
as $$
  delete from app.access_logs where created_at < now() - make_interval(days => keep_days);
  delete from app.security_events where created_at < now() - make_interval(days => keep_days);
$$;
comment on function app_private.prune_logs(integer) is
  'Keeps access logs and security events for a number of days (90 by default), run by pg_cron daily.';

-- ---------------------------------------------------------------------------------------------
-- Configuration: the one place for defaults
-- ---------------------------------------------------------------------------------------------

create function app_private.config_defaults() returns jsonb
language sql immutable
set search_path = ''
as $$
  select '{
    "system": {
      "platformName": "Agora", "defaultRole": "SUBSCRIBER", "maintenanceMode": false,
      "signupsOpen": true
    },
    "features": {
      "messaging": true, "store": true, "wallet": true, "notifications": true,
      "signIn": { "email": true, "google": true, "apple": true, "wallet": true }
    },
    "security": { "freshSignInSeconds": 600 },
    "limits": {
      "messageMaxLength": 10000, "messageEditWindowMinutes": 15,
      "attachmentMaxBytes": 10485760, "groupMaxParticipants": 100
    },
    "whiteLabel": {
      "brandName": "Agora", "logoUrl": null, "primaryColor": "#1f6feb", "customDomain": null,
      "supportEmail": null
    },
    "store": {
      "currency": "USD", "commissionBps": 500, "reservationMinutes": 15, "autoCompleteDays": 14,
      "settlementHourUtc": 1
    },
    "wallet": {
      "chainId": 31337, "confirmations": 1, "pendingTtlSeconds": 600, "exportsPerDay": 3,
      "contracts": {
        "multicall3": null, "utility": null, "governance": null, "staking": null,
        "erc721": [], "erc1155": []
      }
    },
    "notifications": {
      "bulkMaxRecipients": 1000000,
      "defaults": {
        "OPPORTUNITY": { "inApp": true, "push": true, "email": false },
        "MESSAGE": { "inApp": true, "push": true, "email": false },
        "ENTITY": { "inApp": true, "push": true, "email": false },
        "SYSTEM": { "inApp": true, "push": true, "email": true },
        "WALLET": { "inApp": true, "push": true, "email": false }
      }
    }
  }'::jsonb
$$;
comment on function app_private.config_defaults() is
  'The default of every configuration setting, and the only place defaults are written: the database enforces limits and runs scheduled work without the API, so it must know them; the API reads the effective document (app.effective_config) and only validates shapes. A new setting is a new version of this function.';

create function app_private.jsonb_merge_deep(base jsonb, patch jsonb) returns jsonb
language sql immutable
set search_path = ''
as $$
  select case
    when jsonb_typeof(base) = 'object' and jsonb_typeof(patch) = 'object' then (
      select coalesce(jsonb_object_agg(
        coalesce(b.key, p.key),
        case when b.key is null then p.value
             when p.key is null then b.value
             else app_private.jsonb_merge_deep(b.value, p.value) end
      ), '{}'::jsonb)
      from jsonb_each(base) b full join jsonb_each(patch) p on p.key = b.key
    )
    when patch is null then base
    else patch
  end
$$;
comment on function app_private.jsonb_merge_deep(jsonb, jsonb) is
  'Objects merged key by key at every depth, anything else replaced by the patch: how a partial stored configuration is laid over the defaults.';

create function app.effective_config() returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
begin
  if current_setting('role', true) in ('anon', 'authenticated') and not app.is_admin() then
    raise exception 'only an ADMIN reads the configuration' using errcode = '42501';
  end if;
  return app_private.jsonb_merge_deep(
    app_private.config_defaults(),
    coalesce((select c.config from app.config_versions c order by c.version desc limit 1), '{}'::jsonb)
  );
end;
$$;
comment on function app.effective_config() is
  'The current configuration with every default filled in: what the API reads. security definer because app.config_versions is readable by admins only, so an API role gets it only as an ADMIN; the server''s own connection (no API role) always may. The public part is app.public_config.';

create function app.config_int(section text, key text) returns integer
language plpgsql stable security definer
set search_path = ''
as $$
declare
  v jsonb;
begin
  select c.config -> section -> key into v from app.config_versions c order by c.version desc limit 1;
  v := coalesce(v, app_private.config_defaults() -> section -> key);
  if jsonb_typeof(v) = 'number' then
    return v::text::integer;
  end if;
  raise exception 'configuration setting %.% is not a number', section, key using errcode = 'AG500';
end;
$$;
comment on function app.config_int(text, text) is
  'A numeric setting of the current configuration (limits and the like, never secrets), with its default from app_private.config_defaults. security definer: the configuration table is readable by ADMINs only; it returns one number.';

-- ---------------------------------------------------------------------------------------------
-- Policies (one per operation and role; deny by default)
-- ---------------------------------------------------------------------------------------------

create policy users_select_self on app.users for select to authenticated
  using (id = (select auth.uid()));
create policy users_select_admin on app.users for select to authenticated
  using ((select app.is_admin()));
create policy users_update_self on app.users for update to authenticated
  using (id = (select auth.uid())) with check (id = (select auth.uid()));
create policy users_update_admin on app.users for update to authenticated
  using ((select app.is_admin())) with check ((select app.is_admin()));

create policy identities_select_self on app.identities for select to authenticated
  using (user_id = (select auth.uid()));
create policy identities_select_admin on app.identities for select to authenticated
  using ((select app.is_admin()));

create policy sessions_select_self on app.sessions for select to authenticated
  using (user_id = (select auth.uid()));
create policy sessions_select_admin on app.sessions for select to authenticated
  using ((select app.is_admin()));
-- A user can revoke their own live sessions and nothing else: the new row must be revoked.
create policy sessions_update_self on app.sessions for update to authenticated
  using (user_id = (select auth.uid()) and revoked_at is null)
  with check (user_id = (select auth.uid()) and revoked_at is not null);

create policy security_events_select_admin on app.security_events for select to authenticated
  using ((select app.is_admin()));
create policy access_logs_select_admin on app.access_logs for select to authenticated
  using ((select app.is_admin()));

create policy role_changes_select_self on app.role_changes for select to authenticated
  using (user_id = (select auth.uid()));
create policy role_changes_select_admin on app.role_changes for select to authenticated
  using ((select app.is_admin()));
-- No insert policy: rows come only from the trigger on app.users (app_private.record_role_change).

create policy config_versions_select_admin on app.config_versions for select to authenticated
  using ((select app.is_admin()));
create policy config_versions_insert_admin on app.config_versions for insert to authenticated
  with check ((select app.is_admin()) and changed_by = (select auth.uid()));

-- app_private tables have RLS on and no policies: only the server's own connection uses them.

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

revoke all on schema app_private from public, anon, authenticated;
revoke all on all tables in schema app_private from public, anon, authenticated;
revoke execute on all functions in schema app_private from public, anon, authenticated;

grant usage on schema app to anon, authenticated, service_role;
grant usage on type app.user_role, app.user_status, app.security_severity to anon, authenticated;

grant select on app.users to authenticated;
grant update (name, image, role, status) on app.users to authenticated;
grant select on app.identities to authenticated;
grant select on app.sessions to authenticated;
grant update (revoked_at, revoked_reason) on app.sessions to authenticated;
grant select on app.security_events to authenticated;
grant select on app.access_logs to authenticated;
grant select on app.role_changes to authenticated;
grant select on app.config_versions to authenticated;
grant insert (version, config, diff, reason, changed_by) on app.config_versions to authenticated;

revoke execute on all functions in schema app from public, anon, authenticated;
grant execute on function app.has_role(app.user_role) to anon, authenticated;
grant execute on function app.is_admin() to anon, authenticated;
grant execute on function app.current_user_role() to anon, authenticated;
grant execute on function app.config_int(text, text) to authenticated;
grant execute on function app.effective_config() to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/*
 * Concurrency: role changes run one at a time (a transaction-level advisory lock, taken first),
 * so of two admins demoting each other the second sees the first's change and is refused. The
 * caller's own row is then share-locked until commit and checked: a demotion or suspension of the
 * caller by any other path either committed before (and the change is refused) or waits for this
 * transaction to end. So everything after the check, the update, the record and whatever the API
 * reads back through RLS in the same transaction, runs as the ADMIN the caller was when checked.
 */
create function app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text)
returns app.role_changes
language plpgsql volatile security invoker
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
  caller_is_admin boolean;
  previous app.user_role;
  change app.role_changes;
begin
  if caller is null then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  perform pg_advisory_xact_lock(hashtext('app.change_user_role'));
  select u.role = 'ADMIN' and u.status = 'active' into caller_is_admin
  from app.users u where u.id = caller
  for share;
  if not coalesce(caller_is_admin, false) then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a role change needs a reason' using errcode = 'AG400';
  end if;
  select u.role into previous from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if previous = new_role then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_role, caller, change_reason, now())::app.role_changes;
  end if;
  perform set_config('agora.role_change_reason', change_reason, true);
  update app.users set role = new_role where id = target_user_id;
  perform set_config('agora.role_change_reason', '', true);
  select * into strict change from app.role_changes rc
  where rc.user_id = target_user_id and rc.changed_by = caller
  order by rc.id desc limit 1;
  return change;
end;
$$;
comment on function app.change_user_role(uuid, app.user_role, text) is
  'An ADMIN changes another user''s role: recorded with its reason (and, through the trigger, its '
  'security event) in the same transaction, or refused with nothing changed. Serialized with '
  'other role changes; the caller''s own row stays share-locked until commit.';
revoke execute on function app.change_user_role(uuid, app.user_role, text) from public, anon;
grant execute on function app.change_user_role(uuid, app.user_role, text) to authenticated;

create function app.list_people(
  search text default null,
  after_name text default null,
  after_id uuid default null,
  max_rows integer default 50
)
returns table (id uuid, name text, image text, role app.user_role)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
  pattern text;
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'the people directory needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  if nullif(search, '') is not null then
    pattern := '%' || replace(replace(replace(lower(search), '\', '\\'), '%', '\%'), '_', '\_') || '%';
  end if;
  return query
    select u.id, u.name, u.image, u.role
    from app.users u
    where u.status = 'active'
      and u.id <> caller
      and (pattern is null or lower(u.name) like pattern)
      and (after_id is null or (lower(u.name), u.id) > (lower(coalesce(after_name, '')), after_id))
    order by lower(u.name), u.id
    limit least(greatest(coalesce(max_rows, 50), 1), 201);
end;
$$;
comment on function app.list_people(text, text, uuid, integer) is
  'The people directory: id, name, image and role of active users other than the caller, for '
  'SUBSCRIBER and above, searched by name, in keyset pages. security definer: app.users shows '
  'a user only their own row; this returns public fields only, never an e-mail.';
revoke execute on function app.list_people(text, text, uuid, integer) from public, anon;
grant execute on function app.list_people(text, text, uuid, integer) to authenticated;

create function app.public_config() returns jsonb
language sql stable security definer
set search_path = ''
as $$
  select jsonb_build_object(
    'version', coalesce(c.version, 0),
    'whiteLabel', merged -> 'whiteLabel',
    'features', merged -> 'features'
  )
  from (select max(v.version) as version from app.config_versions v) c,
       app_private.jsonb_merge_deep(
         app_private.config_defaults(),
         coalesce((select v.config from app.config_versions v order by v.version desc limit 1), '{}'::jsonb)
       ) as merged
$$;
comment on function app.public_config() is
  'The public part of the configuration (white-label and feature flags, defaults filled in), for anyone, signed in or not. security definer because app.config_versions is readable by admins only; it returns only these two sections, never the rest.';
revoke execute on function app.public_config() from public;
grant execute on function app.public_config() to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Data and schedules
-- ---------------------------------------------------------------------------------------------

-- Version 1: every setting at its default (app_private.config_defaults fills them in).
insert into app.config_versions (version, config, reason) values (1, '{}', 'initial configuration');

select cron.schedule('agora-prune-auth-state', '*/15 * * * *', 'select app_private.prune_auth_state()');
select cron.schedule('agora-prune-logs', '17 3 * * *', 'select app_private.prune_logs(90)');

-- Deny by default: Postgres lets PUBLIC (hence anon) execute every new function, and per-schema
-- default privileges cannot take that away, so every migration ends by revoking it; the explicit
-- grants above stay.
revoke execute on all functions in schema app, app_private from public;
