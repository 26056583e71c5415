-- Agora's schema as it is now, domain signin: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124120000_signin.sql
--   supabase/migrations/20261128090000_signin_layout_comments.sql
--   supabase/migrations/20261128090100_signin_live_sessions.sql
--   supabase/migrations/20261129100000_signin_function_names_as_text.sql
--   supabase/migrations/20261129100200_signin_one_policy_per_operation.sql
--   supabase/migrations/20261130040100_signin_account_export_stream.sql
--   supabase/migrations/20261206000300_signin_export_streams_every_list.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- table app.status_changes
-- created in 20261124120000_signin.sql; last changed in 20261129100200_signin_one_policy_per_operation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.status_changes (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    previous_status app.user_status NOT NULL,
    new_status app.user_status NOT NULL,
    changed_by uuid,
    reason text NOT NULL,
    sessions_revoked integer DEFAULT 0 NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT status_changes_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500))),
    CONSTRAINT status_changes_sessions_revoked_check CHECK ((sessions_revoked >= 0))
);

COMMENT ON TABLE app.status_changes IS 'The history of suspensions and reactivations (who, why, before and after, how many sessions ended), written only by app.change_user_status in the same transaction as the change.';

ALTER TABLE app.status_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.status_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.status_changes
    ADD CONSTRAINT status_changes_pkey PRIMARY KEY (id);

CREATE INDEX status_changes_changed_by_idx ON app.status_changes USING btree (changed_by);

CREATE INDEX status_changes_user_id_idx ON app.status_changes USING btree (user_id, changed_at DESC);

ALTER TABLE ONLY app.status_changes
    ADD CONSTRAINT status_changes_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.status_changes
    ADD CONSTRAINT status_changes_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.status_changes ENABLE ROW LEVEL SECURITY;

CREATE POLICY status_changes_select_self_or_admin ON app.status_changes FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.status_changes TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.account_erasure_steps
-- created in 20261124120000_signin.sql; last changed in 20261129100000_signin_function_names_as_text.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.account_erasure_steps (
    domain text NOT NULL,
    function_name text NOT NULL,
    "position" integer NOT NULL,
    description text NOT NULL,
    CONSTRAINT account_erasure_steps_description_check CHECK (((char_length(description) >= 1) AND (char_length(description) <= 500))),
    CONSTRAINT account_erasure_steps_domain_check CHECK ((domain ~ '^[a-z][a-z_]*$'::text)),
    CONSTRAINT account_erasure_steps_function_name_check CHECK (((function_name ~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\('::text) AND (to_regprocedure(function_name) IS NOT NULL)))
);

COMMENT ON TABLE app_private.account_erasure_steps IS 'The one list of what an account deletion does beyond the foreign keys, one step per domain, run in position order by app.delete_account before the user row is deleted.';

COMMENT ON COLUMN app_private.account_erasure_steps.function_name IS 'The step''s function (user_id uuid) returning void, schema-qualified (`app_private.account_erase_<domain>(uuid)`); text, not regprocedure, so pg_upgrade can upgrade the database. The check constraint refuses a name that is not schema-qualified or names no function.';

ALTER TABLE ONLY app_private.account_erasure_steps
    ADD CONSTRAINT account_erasure_steps_function_name_key UNIQUE (function_name);

ALTER TABLE ONLY app_private.account_erasure_steps
    ADD CONSTRAINT account_erasure_steps_pkey PRIMARY KEY (domain);

ALTER TABLE ONLY app_private.account_erasure_steps
    ADD CONSTRAINT account_erasure_steps_position_key UNIQUE ("position");

ALTER TABLE app_private.account_erasure_steps ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.account_export_parts
-- created in 20261124120000_signin.sql; last changed in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.account_export_parts (
    part text NOT NULL,
    function_name text NOT NULL,
    description text NOT NULL,
    rows_function text,
    rows_key text,
    CONSTRAINT account_export_parts_description_check CHECK (((char_length(description) >= 1) AND (char_length(description) <= 500))),
    CONSTRAINT account_export_parts_function_name_check CHECK (((function_name ~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\('::text) AND (to_regprocedure(function_name) IS NOT NULL))),
    CONSTRAINT account_export_parts_part_check CHECK ((part ~ '^[a-z][A-Za-z]*$'::text)),
    CONSTRAINT account_export_parts_rows_function_check CHECK (((rows_function IS NULL) OR ((rows_function ~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\('::text) AND (to_regprocedure(rows_function) IS NOT NULL)))),
    CONSTRAINT account_export_parts_rows_key_check CHECK ((rows_key ~ '^[a-z][A-Za-z]*$'::text)),
    CONSTRAINT account_export_parts_rows_key_needs_rows CHECK (((rows_key IS NULL) OR (rows_function IS NOT NULL)))
);

COMMENT ON TABLE app_private.account_export_parts IS 'The one list of the account export''s parts: the document key and the function (user_id uuid) returning jsonb that fills it. A domain adds its row in its migration; tests/account/sql/430-account-export.sql checks that every account_export_* function is listed and that no part holds a secret.';

COMMENT ON COLUMN app_private.account_export_parts.function_name IS 'The part''s function (user_id uuid) returning jsonb, schema-qualified (`app_private.account_export_<part>(uuid)`); text, not regprocedure, so pg_upgrade can upgrade the database. The check constraint refuses a name that is not schema-qualified or names no function.';

COMMENT ON COLUMN app_private.account_export_parts.rows_function IS 'For a part that grows with the person''s use: its function (user_id uuid) returning setof text, one JSON text per element of the list, in the export''s order; the route streams it (app.export_account_rows) instead of building the list in the document. Null for a part that stays small. Schema-qualified text, checked as function_name.';

COMMENT ON COLUMN app_private.account_export_parts.rows_key IS 'With rows_function, when the part is an object holding the list (the wallet''s transactions): the list''s key. The part''s function then returns the object without it. Null when the part is the list itself.';

ALTER TABLE ONLY app_private.account_export_parts
    ADD CONSTRAINT account_export_parts_function_name_key UNIQUE (function_name);

ALTER TABLE ONLY app_private.account_export_parts
    ADD CONSTRAINT account_export_parts_pkey PRIMARY KEY (part);

ALTER TABLE app_private.account_export_parts ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.oauth_flows
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.oauth_flows (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    provider text NOT NULL,
    state_hash text NOT NULL,
    nonce_hash text NOT NULL,
    code_verifier text,
    binding_hash text,
    client_challenge text,
    redirect_to text,
    link_user_id uuid,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    exchange_code_hash text,
    exchange_expires_at timestamp with time zone,
    exchanged_at timestamp with time zone,
    result_identity jsonb,
    result_authenticated_at timestamp with time zone,
    CONSTRAINT oauth_flows_bound CHECK (((binding_hash IS NULL) <> (client_challenge IS NULL))),
    CONSTRAINT oauth_flows_client_challenge_check CHECK ((client_challenge ~ '^[A-Za-z0-9_-]{43}$'::text)),
    CONSTRAINT oauth_flows_code_verifier_check CHECK (((char_length(code_verifier) >= 43) AND (char_length(code_verifier) <= 128))),
    CONSTRAINT oauth_flows_exchange CHECK ((((exchange_code_hash IS NULL) = (exchange_expires_at IS NULL)) AND ((exchange_code_hash IS NULL) = (result_authenticated_at IS NULL)) AND ((exchange_code_hash IS NULL) OR (client_challenge IS NOT NULL)) AND ((result_identity IS NULL) OR (exchange_code_hash IS NOT NULL)))),
    CONSTRAINT oauth_flows_provider_check CHECK ((provider = ANY (ARRAY['google'::text, 'apple'::text]))),
    CONSTRAINT oauth_flows_redirect_to_check CHECK ((char_length(redirect_to) <= 2048)),
    CONSTRAINT oauth_flows_result_identity_check CHECK ((jsonb_typeof(result_identity) = 'object'::text))
);

COMMENT ON TABLE app_private.oauth_flows IS 'OAuth sign-ins in progress (Google, Apple): hashes of state and nonce, the PKCE verifier until the callback, the browser binding (hash of a cookie value) or the integrator''s PKCE challenge, where to send the browser afterwards and, for an explicit link, the signed-in user. Single use, ten minutes. An integrator flow''s verified identity waits here (result_identity) behind a single-use exchange code: which account it signs in to, or links to, is decided only when the holder of the verifier exchanges it, and the identity is cleared then. Server only.';

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_exchange_code_hash_key UNIQUE (exchange_code_hash);

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_state_hash_key UNIQUE (state_hash);

CREATE INDEX oauth_flows_expires_at_idx ON app_private.oauth_flows USING btree (expires_at);

CREATE INDEX oauth_flows_link_user_id_idx ON app_private.oauth_flows USING btree (link_user_id);

ALTER TABLE ONLY app_private.oauth_flows
    ADD CONSTRAINT oauth_flows_link_user_id_fkey FOREIGN KEY (link_user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app_private.oauth_flows ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.siwe_nonces
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.siwe_nonces (
    nonce_hash text NOT NULL,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

COMMENT ON TABLE app_private.siwe_nonces IS 'Nonces handed out by GET /api/auth/nonce for Sign-In with Ethereum, as SHA-256 hashes: single use (spent by one conditional update when a signed message is accepted), ten minutes. Server only.';

ALTER TABLE ONLY app_private.siwe_nonces
    ADD CONSTRAINT siwe_nonces_pkey PRIMARY KEY (nonce_hash);

CREATE INDEX siwe_nonces_expires_at_idx ON app_private.siwe_nonces USING btree (expires_at);

ALTER TABLE app_private.siwe_nonces ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.change_user_status
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) RETURNS app.status_changes
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  caller uuid := app_private.lock_admin_caller();
  previous app.user_status;
  target_role app.user_role;
  revoked integer := 0;
  change app.status_changes;
begin
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a status change needs a reason' using errcode = 'AG400';
  end if;
  select u.status, u.role into previous, target_role from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if target_user_id = caller then
    raise exception 'an ADMIN cannot change their own status' using errcode = 'AG422';
  end if;
  if previous = new_status then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_status, caller, change_reason, 0, now())::app.status_changes;
  end if;
  -- The guard trigger refuses suspending the last active ADMIN.
  update app.users set status = new_status where id = target_user_id;
  if new_status = 'suspended' then
    revoked := app_private.revoke_sessions(target_user_id, 'suspended');
  end if;
  insert into app.status_changes (user_id, previous_status, new_status, changed_by, reason, sessions_revoked)
  values (target_user_id, previous, new_status, caller, change_reason, revoked)
  returning * into change;
  perform app_private.record_security_event(
    case when new_status = 'suspended' then 'admin.user_suspended' else 'admin.user_reactivated' end,
    case when new_status = 'suspended' and target_role = 'ADMIN' then 'critical'
         when new_status = 'suspended' then 'warning' else 'info' end::app.security_severity,
    target_user_id,
    jsonb_build_object('by', caller, 'from', previous, 'to', new_status, 'reason', change_reason,
                       'sessionsRevoked', revoked)
  );
  return change;
end;
$$;

COMMENT ON FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) IS 'An ADMIN suspends or reactivates another user, with a reason: a suspension ends every session of the user at once; the change, its history row (app.status_changes) and its security event commit together. Serialized with role changes; the caller''s row stays share-locked until commit. security definer: it ends another user''s sessions and writes the history and the event, which no API role may do directly; every rule is checked here.';

REVOKE ALL ON FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.delete_account
-- created in 20261124120000_signin.sql; last changed in 20261129100000_signin_function_names_as_text.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.delete_account() RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
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
$_$;

COMMENT ON FUNCTION app.delete_account() IS 'The caller deletes their own account: needs a fresh sign-in (AG403 reauthentication_required), never the last active ADMIN (AG422). Runs the erasure steps (app_private.account_erasure_steps), removes sign-in state naming the person and its id from the access log (and queues account.erase_access_logs for log lines still being written), then the user row (every foreign key cascades or sets null), the user topic''s events, and records account.deleted. Every session ends with its row. security definer: it deletes the caller''s row and rows across domains that no API role may delete; it only ever touches the caller''s.';

REVOKE ALL ON FUNCTION app.delete_account() FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_account() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.export_account
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.export_account() RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  document jsonb;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  document := app_private.account_export(me);
  perform app_private.record_security_event('account.exported', 'info', me,
    jsonb_build_object('parts', (select jsonb_agg(k order by k) from jsonb_object_keys(document) k)));
  return document;
end;
$$;

COMMENT ON FUNCTION app.export_account() IS 'The caller''s data as one JSON document (app_private.account_export), recorded as account.exported. security definer: it reads the caller''s own rows across domains, messages in conversations they left included, which RLS would hide; it only ever reads the caller''s.';

REVOKE ALL ON FUNCTION app.export_account() FROM PUBLIC;
GRANT ALL ON FUNCTION app.export_account() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.export_account_rows
-- created in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.export_account_rows(part text) RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := (select auth.uid());
  rows_function text;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  select e.rows_function into rows_function from app_private.account_export_parts e
  where e.part = export_account_rows.part and e.rows_function is not null;
  if rows_function is null then
    raise exception 'no streamed export part %', part using errcode = '22023';
  end if;
  return query execute format('select r from %s($1) r', rows_function::regprocedure::regproc) using me;
end;
$_$;

COMMENT ON FUNCTION app.export_account_rows(part text) IS 'GET /api/account/export, after app.export_account_streamed: one streamed list of the caller''s export (a part with a rows_function), one JSON text per element in the export''s order; the route reads it through a cursor and writes it part by part, so no list is ever built as one value. A part that streams nothing: 22023. security definer: the rows span domains and RLS (messages in conversations the caller left, notifications kept only for delivery); it only ever reads the caller''s.';

REVOKE ALL ON FUNCTION app.export_account_rows(part text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.export_account_rows(part text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.export_account_streamed
-- created in 20261130040100_signin_account_export_stream.sql; last changed in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.export_account_streamed() RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  streamed text[] := array(select e.part from app_private.account_export_parts e where e.rows_function is not null);
  document jsonb;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  document := app_private.account_export(me, streamed);
  perform app_private.record_security_event('account.exported', 'info', me,
    jsonb_build_object('parts', (select jsonb_agg(k order by k) from jsonb_object_keys(document) k)));
  -- The lists themselves come next, from app.export_account_rows.
  return document - array(select e.part from app_private.account_export_parts e
                          where e.rows_function is not null and e.rows_key is null);
end;
$$;

COMMENT ON FUNCTION app.export_account_streamed() IS 'GET /api/account/export, first statement: the caller''s export document without the lists the route streams after it (app.export_account_streamed_parts; each from app.export_account_rows, in the same transaction): their keys are absent, and an object holding a list (the wallet) is there without it. Recorded as account.exported. Built whole, the heavy user''s orders, wallet transactions or messages would each pass jsonb''s 256 MB limit at a million users, as the notifications of a user with 1,000,000 did. security definer as app.export_account: it reads the caller''s own rows across domains; it only ever reads the caller''s.';

REVOKE ALL ON FUNCTION app.export_account_streamed() FROM PUBLIC;
GRANT ALL ON FUNCTION app.export_account_streamed() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.export_account_streamed_parts
-- created in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.export_account_streamed_parts() RETURNS TABLE(part text, rows_key text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select e.part, e.rows_key from app_private.account_export_parts e
  where e.rows_function is not null
  order by e.part
$$;

COMMENT ON FUNCTION app.export_account_streamed_parts() IS 'GET /api/account/export: the parts whose lists the route streams, in order, and for an object holding its list the list''s key (null: the part is the list). security definer: the registry is server-only; it holds names only.';

REVOKE ALL ON FUNCTION app.export_account_streamed_parts() FROM PUBLIC;
GRANT ALL ON FUNCTION app.export_account_streamed_parts() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.has_fresh_sign_in
-- created in 20261124120000_signin.sql; last changed in 20261128090100_signin_live_sessions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.has_fresh_sign_in() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if (select auth.uid()) is null or session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    return false;
  end if;
  return exists (
    select 1 from app_private.live_sessions(array[session_claim::uuid]) l
    where l.id = (select auth.uid())
      and l.auth_ms > extract(epoch from now()
        - make_interval(secs => app.config_int('security', 'freshSignInSeconds'))) * 1000
  );
end;
$_$;

COMMENT ON FUNCTION app.has_fresh_sign_in() IS 'Whether the caller''s session (the session_id claim) is live (app_private.live_sessions: not revoked, not expired, the user active) and was opened by a sign-in within security.freshSignInSeconds: what deleting the account and exporting a wallet key need. The API checks the same first (functions/api/core/middleware/freshness.ts); this is the database''s own check. security definer: it reads the caller''s session row and the configuration.';

REVOKE ALL ON FUNCTION app.has_fresh_sign_in() FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_fresh_sign_in() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.sign_out_user
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.sign_out_user(target_user_id uuid) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  caller uuid := app_private.lock_admin_caller();
  revoked integer;
begin
  if not exists (select 1 from app.users u where u.id = target_user_id) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  revoked := app_private.revoke_sessions(target_user_id, 'admin_signout');
  perform app_private.record_security_event('admin.sessions_revoked', 'warning', target_user_id,
    jsonb_build_object('by', caller, 'sessionsRevoked', revoked));
  return revoked;
end;
$$;

COMMENT ON FUNCTION app.sign_out_user(target_user_id uuid) IS 'An ADMIN ends every live session of a user at once (the user may sign in again); recorded as admin.sessions_revoked in the same transaction. Returns how many ended. security definer: no API role may end another user''s sessions; the caller is checked as in app.change_user_status.';

REVOKE ALL ON FUNCTION app.sign_out_user(target_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.sign_out_user(target_user_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.unlink_identity
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.unlink_identity(target_identity_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := (select auth.uid());
  identity app.identities;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to unlink an identity' using errcode = '42501';
  end if;
  -- The user's row lock serializes unlinks (and links, which lock it too): two at once cannot
  -- both see a second identity and leave none.
  perform 1 from app.users u where u.id = me for update;
  select * into identity from app.identities i where i.id = target_identity_id and i.user_id = me;
  if not found then
    raise exception 'identity not found' using errcode = 'AG404';
  end if;
  if identity.provider = 'email' then
    raise exception 'the e-mail identity is the account''s own address and cannot be unlinked'
      using errcode = 'AG422';
  end if;
  if (select count(*) from app.identities i where i.user_id = me) <= 1 then
    raise exception 'the last identity of an account cannot be unlinked' using errcode = 'AG422';
  end if;
  delete from app.identities i where i.id = identity.id;
  perform app_private.record_security_event('auth.identity_unlinked', 'warning', me,
    jsonb_build_object('provider', identity.provider, 'identityId', identity.id));
end;
$$;

COMMENT ON FUNCTION app.unlink_identity(target_identity_id uuid) IS 'The signed-in user removes one of their sign-in identities (Google, Apple, a wallet); never the last one, never the e-mail identity (magic links reach the account through its address anyway). Recorded as auth.identity_unlinked in the same transaction. security definer: identities have no delete grant; ownership and the rules are checked here, under the user''s row lock.';

REVOKE ALL ON FUNCTION app.unlink_identity(target_identity_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.unlink_identity(target_identity_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_erase_messaging
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_erase_messaging(target_user_id uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  g record;
begin
  -- Their messages become tombstones (content emptied by the guard trigger; message.deleted
  -- events go out at commit), their earlier versions go, and their files (the delete trigger
  -- queues each file's removal).
  delete from app.message_versions v
  using app.messages m where m.id = v.message_id and m.sender_id = target_user_id;
  delete from app.attachments a where a.uploader_id = target_user_id;
  update app.messages m set deleted_at = now()
  where m.sender_id = target_user_id and m.deleted_at is null;
  -- A group they created passes to its longest-standing other participant, as when a creator
  -- leaves; a group nobody else is in goes.
  for g in
    select c.id from app.conversations c
    where c.type = 'group'
      and exists (select 1 from app.conversation_participants p
                  where p.conversation_id = c.id and p.user_id = target_user_id)
    for update of c
  loop
    if not exists (select 1 from app.conversation_participants p
                   where p.conversation_id = g.id and p.user_id <> target_user_id) then
      delete from app.conversations c where c.id = g.id;
    else
      update app.conversations c set created_by = (
        select p.user_id from app.conversation_participants p
        where p.conversation_id = g.id and p.user_id <> target_user_id
        order by p.joined_at, p.user_id limit 1
      ) where c.id = g.id and c.created_by = target_user_id;
    end if;
  end loop;
end;
$$;

COMMENT ON FUNCTION app_private.account_erase_messaging(target_user_id uuid) IS 'Erasure step `messaging`: the person''s messages become tombstones (their place kept for the others), earlier versions and files go, groups they created pass to the longest-standing other participant and groups left empty are removed. Their memberships go with the user row (cascade).';

REVOKE ALL ON FUNCTION app_private.account_erase_messaging(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export
-- created in 20261124120000_signin.sql; last changed in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select app_private.account_export(target_user_id, '{}'::text[])
$$;

COMMENT ON FUNCTION app_private.account_export(target_user_id uuid) IS 'The account export of one user as one document (app.export_account: small accounts, tests): app_private.account_export with nothing left out, every list built in.';

CREATE FUNCTION app_private.account_export(target_user_id uuid, left_out text[]) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
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
  list jsonb;
begin
  for p in select e.part, e.function_name, e.rows_function, e.rows_key
           from app_private.account_export_parts e order by e.part loop
    if p.part = any(coalesce(left_out, '{}')) and p.rows_key is null then
      continue;
    end if;
    execute format('select %s($1)', p.function_name::regprocedure::regproc) using target_user_id into value;
    -- An object holding a list: the list is added here unless the route streams it.
    if value is not null and p.rows_key is not null and not p.part = any(coalesce(left_out, '{}')) then
      execute format('select coalesce(jsonb_agg(r.e::jsonb order by r.n), ''[]''::jsonb) from %s($1) with ordinality r (e, n)',
                     p.rows_function::regprocedure::regproc)
        using target_user_id into list;
      value := value || jsonb_build_object(p.rows_key, list);
    end if;
    document := document || jsonb_build_object(p.part, coalesce(value, document -> p.part, 'null'::jsonb));
  end loop;
  return document;
end;
$_$;

COMMENT ON FUNCTION app_private.account_export(target_user_id uuid, left_out text[]) IS 'The account export of one user without the lists of the parts named in left_out: the parts the route streams (app.export_account_streamed). A part that is a list is left at the skeleton''s empty value; a part that is an object holding a list (rows_key) is the object without that list. The contract''s skeleton with every other registered part laid over it.';

REVOKE ALL ON FUNCTION app_private.account_export(target_user_id uuid) FROM PUBLIC;

REVOKE ALL ON FUNCTION app_private.account_export(target_user_id uuid, left_out text[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_conversations
-- created in 20261124120000_signin.sql; last changed in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_conversations(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_conversations_rows(target_user_id) with ordinality r (e, n)
$$;

COMMENT ON FUNCTION app_private.account_export_conversations(target_user_id uuid) IS 'Export part `conversations`: the list of app_private.account_export_conversations_rows (the conversations the person takes part in and how far they read; nothing about the other people in them).';

REVOKE ALL ON FUNCTION app_private.account_export_conversations(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_conversations_rows
-- created in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_conversations_rows(target_user_id uuid) RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', c.id, 'type', c.type, 'title', c.title, 'isCreator', c.created_by = target_user_id,
    'createdAt', app_private.iso_time(c.created_at), 'joinedAt', app_private.iso_time(p.joined_at),
    'lastReadMessageId', p.last_read_message_id, 'lastReadAt', app_private.iso_time(p.last_read_at)
  )::text
  from app.conversation_participants p join app.conversations c on c.id = p.conversation_id
  where p.user_id = target_user_id
  order by p.joined_at, c.id
$$;

COMMENT ON FUNCTION app_private.account_export_conversations_rows(target_user_id uuid) IS 'Export part `conversations`, an element per row: the conversations the person takes part in and how far they read, in the order they joined; nothing about the other people in them.';

REVOKE ALL ON FUNCTION app_private.account_export_conversations_rows(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_identities
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_identities(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', i.id, 'provider', i.provider, 'providerUserId', i.provider_user_id, 'email', i.email,
    'createdAt', app_private.iso_time(i.created_at), 'lastUsedAt', app_private.iso_time(i.last_used_at)
  ) order by i.created_at, i.id), '[]'::jsonb)
  from app.identities i where i.user_id = target_user_id
$$;

COMMENT ON FUNCTION app_private.account_export_identities(target_user_id uuid) IS 'Export part `identities`: how the person signs in (provider, the provider''s id for them, the address it gave).';

REVOKE ALL ON FUNCTION app_private.account_export_identities(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_messages
-- created in 20261124120000_signin.sql; last changed in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_messages(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_messages_rows(target_user_id) with ordinality r (e, n)
$$;

COMMENT ON FUNCTION app_private.account_export_messages(target_user_id uuid) IS 'Export part `messages`: the list of app_private.account_export_messages_rows (every message the person wrote, in conversations they left too, with its files and earlier versions).';

REVOKE ALL ON FUNCTION app_private.account_export_messages(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_messages_rows
-- created in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_messages_rows(target_user_id uuid) RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', m.id, 'conversationId', m.conversation_id, 'content', m.content, 'replyToId', m.reply_to_id,
    'createdAt', app_private.iso_time(m.created_at), 'editedAt', app_private.iso_time(m.edited_at),
    'deletedAt', app_private.iso_time(m.deleted_at),
    'attachments', coalesce((
      select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name, 'contentType', a.content_type,
                                          'size', a.size, 'url', '/api/attachments/' || a.id::text)
                       order by a.created_at, a.id)
      from app.attachments a where a.message_id = m.id), '[]'::jsonb),
    'earlierVersions', coalesce((
      select jsonb_agg(jsonb_build_object('content', v.content, 'writtenAt', app_private.iso_time(v.written_at),
                                          'replacedAt', app_private.iso_time(v.replaced_at))
                       order by v.replaced_at, v.id)
      from app.message_versions v where v.message_id = m.id), '[]'::jsonb)
  )::text
  from app.messages m where m.sender_id = target_user_id
  order by m.created_at, m.id
$$;

COMMENT ON FUNCTION app_private.account_export_messages_rows(target_user_id uuid) IS 'Export part `messages`, an element per row: every message the person wrote (in conversations they left too), oldest first, with its files and earlier versions.';

REVOKE ALL ON FUNCTION app_private.account_export_messages_rows(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_notifications
-- created in 20261124120000_signin.sql; last changed in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_notifications(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_notifications_rows(target_user_id) with ordinality r (e, n)
$$;

COMMENT ON FUNCTION app_private.account_export_notifications(target_user_id uuid) IS 'Export part `notifications`: the list of app_private.account_export_notifications_rows (every notification of the person, those kept only for delivery included; readAt as every reader shows it).';

REVOKE ALL ON FUNCTION app_private.account_export_notifications(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_notifications_rows
-- created in 20261206000300_signin_export_streams_every_list.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_notifications_rows(target_user_id uuid) RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox,
    -- app_private.iso_time's expression, written out: that function (pinned search_path) is
    -- parsed and planned again on every call, 200 µs a row, 21 of 22 s for 100,000 rows.
    -- Read, or covered by a pending read-all: app.notification_read_at, called only for the
    -- unread rows up to the newest mark (the max is computed once).
    'readAt', to_char(coalesce(n.read_at,
                        case when n.created_at <= (select max(m.read_to) from app.notification_read_marks m
                                                   where m.user_id = target_user_id)
                             then app.notification_read_at(n) end)
                      at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )::text
  from app.notifications n
  where n.user_id = target_user_id
  order by n.created_at, n.id
$$;

COMMENT ON FUNCTION app_private.account_export_notifications_rows(target_user_id uuid) IS 'Export part `notifications`, an element per row: every notification of the person (those kept only for delivery, inbox false, included), oldest first. readAt is the read time as every reader shows it (app.notification_read_at: a pending read-all''s time for the rows it covers). Its times are written out: app_private.iso_time is planned again on every call, 200 µs a row.';

REVOKE ALL ON FUNCTION app_private.account_export_notifications_rows(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_preferences
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_preferences(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'types', coalesce(p.types, '{}'::jsonb),
    'quietHours', case when p.quiet_start is null then null else jsonb_build_object(
      'start', to_char(p.quiet_start, 'HH24:MI'), 'end', to_char(p.quiet_end, 'HH24:MI'),
      'timeZone', p.quiet_time_zone) end,
    'updatedAt', app_private.iso_time(p.updated_at),
    'pushDevices', coalesce((
      select jsonb_agg(jsonb_build_object(
        'id', d.id, 'platform', d.platform, 'deviceName', d.device_name,
        'createdAt', app_private.iso_time(d.created_at), 'updatedAt', app_private.iso_time(d.updated_at)
      ) order by d.created_at, d.id)
      from app.push_devices d where d.user_id = target_user_id), '[]'::jsonb)
  )
  from (select target_user_id as id) me
  left join app.notification_preferences p on p.user_id = me.id
$$;

COMMENT ON FUNCTION app_private.account_export_preferences(target_user_id uuid) IS 'Export part `preferences`: the notification choices per type and channel, quiet hours, and the push devices registered (platform and name; never the device''s token).';

REVOKE ALL ON FUNCTION app_private.account_export_preferences(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_profile
-- created in 20261124120000_signin.sql; last changed in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_profile(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', u.id, 'email', u.email, 'name', u.name, 'image', u.image, 'bio', u.bio,
    'timeZone', u.time_zone, 'locale', u.locale, 'role', u.role,
    'status', u.status, 'walletAddress', u.wallet_address,
    'createdAt', app_private.iso_time(u.created_at), 'updatedAt', app_private.iso_time(u.updated_at),
    'lastSignInAt', app_private.iso_time(u.last_sign_in_at),
    'roleHistory', coalesce((
      select jsonb_agg(jsonb_build_object(
        'previousRole', rc.previous_role, 'newRole', rc.new_role, 'changedBy', rc.changed_by,
        'reason', rc.reason, 'changedAt', app_private.iso_time(rc.changed_at)) order by rc.changed_at, rc.id)
      from app.role_changes rc where rc.user_id = u.id), '[]'::jsonb),
    'statusHistory', coalesce((
      select jsonb_agg(jsonb_build_object(
        'previousStatus', sc.previous_status, 'newStatus', sc.new_status, 'changedBy', sc.changed_by,
        'reason', sc.reason, 'changedAt', app_private.iso_time(sc.changed_at)) order by sc.changed_at, sc.id)
      from app.status_changes sc where sc.user_id = u.id), '[]'::jsonb)
  )
  from app.users u where u.id = target_user_id
$$;

COMMENT ON FUNCTION app_private.account_export_profile(target_user_id uuid) IS 'Export part `profile`: the user row (bio, time zone and locale included) and its role and status history.';

REVOKE ALL ON FUNCTION app_private.account_export_profile(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_sessions
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_sessions(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', s.id, 'provider', s.provider, 'ip', host(s.ip), 'userAgent', s.user_agent,
    'createdAt', app_private.iso_time(s.created_at),
    'authenticatedAt', app_private.iso_time(s.authenticated_at),
    'lastSeenAt', app_private.iso_time(greatest(s.created_at, s.refreshed_at)),
    'expiresAt', app_private.iso_time(s.expires_at),
    'revokedAt', app_private.iso_time(s.revoked_at), 'revokedReason', s.revoked_reason
  ) order by s.created_at, s.id), '[]'::jsonb)
  from app.sessions s where s.user_id = target_user_id
$$;

COMMENT ON FUNCTION app_private.account_export_sessions(target_user_id uuid) IS 'Export part `sessions`: every session still on record (live, ended, expired), never a token or its hash.';

REVOKE ALL ON FUNCTION app_private.account_export_sessions(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_user_delete
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_user_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if old.role = 'ADMIN' and old.status = 'active' then
    -- The same lock as demotions and suspensions (app_private.guard_user_update).
    perform pg_advisory_xact_lock(hashtext('app.users.active_admins'));
    if not exists (
      select 1 from app.users u where u.role = 'ADMIN' and u.status = 'active' and u.id <> old.id
    ) then
      raise exception 'the last active ADMIN cannot be deleted' using errcode = 'AG422';
    end if;
  end if;
  return old;
end;
$$;

COMMENT ON FUNCTION app_private.guard_user_delete() IS 'No path deletes the last active ADMIN: an account deletion of the only one is refused (AG422). The advisory lock is the one demotions and suspensions take, so two admins deleting themselves at once cannot leave none.';

REVOKE ALL ON FUNCTION app_private.guard_user_delete() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.iso_time
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.iso_time(t timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

COMMENT ON FUNCTION app_private.iso_time(t timestamp with time zone) IS 'A time as the API writes it (ISO-8601, UTC, microseconds), for the export''s parts.';

REVOKE ALL ON FUNCTION app_private.iso_time(t timestamp with time zone) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.live_sessions
-- created in 20261128090100_signin_live_sessions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.live_sessions(session_ids uuid[]) RETURNS TABLE(id uuid, email text, name text, image text, role app.user_role, wallet_address text, session_id uuid, provider text, expires_ms double precision, auth_ms double precision)
    LANGUAGE sql STABLE
    AS $$
  -- By session id only, so the plan is the primary key's whatever the array holds; the caller
  -- compares the user id its token named.
  select u.id, u.email, u.name, u.image, u.role, u.wallet_address, s.id, s.provider,
         (extract(epoch from s.expires_at) * 1000)::float8,
         (extract(epoch from s.authenticated_at) * 1000)::float8
  from app.sessions s join app.users u on u.id = s.user_id
  where s.id operator(pg_catalog.=) any(session_ids)
    and s.revoked_at is null
    and s.expires_at operator(pg_catalog.>) pg_catalog.now()
    and u.status operator(pg_catalog.=) 'active'
$$;

COMMENT ON FUNCTION app_private.live_sessions(session_ids uuid[]) IS 'The live-session rule, written once: of the given sessions, those not revoked, not expired and whose user is active, each with its user''s public fields and the times (epoch ms) the API''s session check needs. The API''s check (functions/api/auth/session-lookup.ts), the inbox page, the readable topics and the fresh sign-in check all read it. The caller compares the user id it expects. Plain SQL without a pinned search_path so that it is inlined into the caller''s statement (a third of the cost of a call); every name is qualified and it has no rights of its own. Only server code and security definer functions call it.';

REVOKE ALL ON FUNCTION app_private.live_sessions(session_ids uuid[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.lock_admin_caller
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.lock_admin_caller() RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  caller uuid := (select auth.uid());
  caller_is_admin boolean;
begin
  if caller is null then
    raise exception 'only an ADMIN does this' using errcode = '42501';
  end if;
  perform pg_advisory_xact_lock(hashtext('app.change_user_role'));
  select u.role = 'ADMIN' and u.status = 'active' into caller_is_admin
  from app.users u where u.id = caller
  for share;
  if not coalesce(caller_is_admin, false) then
    raise exception 'only an ADMIN does this' using errcode = '42501';
  end if;
  return caller;
end;
$$;

COMMENT ON FUNCTION app_private.lock_admin_caller() IS 'Serializes an ADMIN''s change to a user with role changes (the advisory lock app.change_user_role takes), then share-locks the caller''s row and checks it is an active ADMIN; returns the caller. A demotion or suspension of the caller either committed before (and the change is refused) or waits for this transaction.';

REVOKE ALL ON FUNCTION app_private.lock_admin_caller() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_security_event
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  client_ip inet;
begin
  begin
    client_ip := nullif(current_setting('agora.client_ip', true), '')::inet;
  exception when invalid_text_representation then
    client_ip := null;
  end;
  insert into app.security_events (type, severity, user_id, ip, user_agent, details)
  values (event_type, event_severity, subject_user_id, client_ip,
          left(nullif(current_setting('agora.user_agent', true), ''), 1024), event_details);
end;
$$;

COMMENT ON FUNCTION app_private.record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb) IS 'A security event written inside the transaction of the change it describes, with the client address and user agent the API put in agora.client_ip and agora.user_agent: the change and its record commit together or not at all. Called by the security definer API functions below.';

REVOKE ALL ON FUNCTION app_private.record_security_event(event_type text, event_severity app.security_severity, subject_user_id uuid, event_details jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.revoke_sessions
-- created in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid DEFAULT NULL::uuid) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  revoked integer;
begin
  update app.sessions s set revoked_at = now(), revoked_reason = why
  where s.user_id = target_user_id and s.revoked_at is null
    and (keep_session_id is null or s.id <> keep_session_id);
  get diagnostics revoked = row_count;
  return revoked;
end;
$$;

COMMENT ON FUNCTION app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid) IS 'Ends every live session of a user (but keep_session_id), at once: the session check of every request and the topic rule read app.sessions. Returns how many ended.';

REVOKE ALL ON FUNCTION app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid) FROM PUBLIC;
