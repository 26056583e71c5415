-- Agora's schema as it is now, domain foundation: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121090000_foundation.sql
--   supabase/migrations/20261128090200_foundation_config_audit.sql
--   supabase/migrations/20261129100100_foundation_one_policy_per_operation.sql
--   supabase/migrations/20261129160000_foundation_profiles.sql
--   supabase/migrations/20261130050000_foundation_user_counts.sql
--   supabase/migrations/20261130050100_foundation_retention_access_log_partitions.sql
--   supabase/migrations/20261130050400_foundation_analytics_rollups.sql
--   supabase/migrations/20261202000200_foundation_analytics_facts.sql
--   supabase/migrations/20261204010100_foundation_store_top_vendors.sql
--   supabase/migrations/20261206000100_foundation_fact_key_totals_one_statement.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- schema app
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE SCHEMA app;

COMMENT ON SCHEMA app IS 'Agora data read and written by users through RLS.';

GRANT USAGE ON SCHEMA app TO anon;
GRANT USAGE ON SCHEMA app TO authenticated;
GRANT USAGE ON SCHEMA app TO service_role;

-- ---------------------------------------------------------------------------------------------
-- schema app_private
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE SCHEMA app_private;

COMMENT ON SCHEMA app_private IS 'Agora secrets and server-only state; never granted to API roles.';

-- ---------------------------------------------------------------------------------------------
-- type app.security_severity
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.security_severity AS ENUM (
    'info',
    'warning',
    'critical'
);

COMMENT ON TYPE app.security_severity IS 'How urgently an admin should look at a security event.';

GRANT ALL ON TYPE app.security_severity TO anon;
GRANT ALL ON TYPE app.security_severity TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.user_role
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.user_role AS ENUM (
    'VISITOR',
    'SUBSCRIBER',
    'MEMBER',
    'CONFIDENTIAL',
    'ADMIN'
);

COMMENT ON TYPE app.user_role IS 'The five roles in rank order, so that enum comparison is rank comparison.';

GRANT ALL ON TYPE app.user_role TO anon;
GRANT ALL ON TYPE app.user_role TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.user_status
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.user_status AS ENUM (
    'active',
    'suspended'
);

COMMENT ON TYPE app.user_status IS 'A suspended user authenticates nothing and is in no list.';

GRANT ALL ON TYPE app.user_status TO anon;
GRANT ALL ON TYPE app.user_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.access_logs
-- created in 20261121090000_foundation.sql; last changed in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.access_logs (
    id bigint NOT NULL,
    request_id text NOT NULL,
    user_id uuid,
    method text NOT NULL,
    route text NOT NULL,
    status smallint NOT NULL,
    duration_ms real NOT NULL,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
PARTITION BY RANGE (created_at);

COMMENT ON TABLE app.access_logs IS 'One row per /api request, written in batches off the request path by the server only. No foreign key on user_id: checking it cost a row lock per logged request, and a log keeps the id it saw. Partitioned by day on created_at (partitions in app_partitions, made ahead by agora-maintain-partitions); retention (retention.accessLogDays) drops whole days.';

ALTER TABLE app.access_logs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.access_logs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.access_logs
    ADD CONSTRAINT access_logs_pkey PRIMARY KEY (id, created_at);

CREATE INDEX access_logs_created_at_idx ON ONLY app.access_logs USING btree (created_at DESC, id DESC);

CREATE INDEX access_logs_route_idx ON ONLY app.access_logs USING btree (route, created_at DESC, id DESC);

CREATE INDEX access_logs_user_id_idx ON ONLY app.access_logs USING btree (user_id, created_at DESC, id DESC);

CREATE TRIGGER access_logs_record_activity AFTER INSERT ON app.access_logs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.record_request_activity();

ALTER TABLE app.access_logs ENABLE ROW LEVEL SECURITY;

CREATE POLICY access_logs_select_admin ON app.access_logs FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

GRANT SELECT ON TABLE app.access_logs TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.config_versions
-- created in 20261121090000_foundation.sql; last changed in 20261128090200_foundation_config_audit.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.config_versions (
    version integer NOT NULL,
    config jsonb NOT NULL,
    diff jsonb DEFAULT '{}'::jsonb NOT NULL,
    reason text NOT NULL,
    changed_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT config_versions_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500))),
    CONSTRAINT config_versions_version_check CHECK ((version > 0))
);

COMMENT ON TABLE app.config_versions IS 'Versioned system configuration: every version kept, the highest is current, and a stored document may be partial (app_private.config_defaults fills the rest). The primary key is the optimistic lock: two writers that read version N cannot both write N + 1.';

ALTER TABLE ONLY app.config_versions
    ADD CONSTRAINT config_versions_pkey PRIMARY KEY (version);

CREATE INDEX config_versions_changed_by_idx ON app.config_versions USING btree (changed_by);

CREATE TRIGGER config_versions_audit AFTER INSERT ON app.config_versions FOR EACH ROW EXECUTE FUNCTION app_private.audit_config_version();

ALTER TABLE ONLY app.config_versions
    ADD CONSTRAINT config_versions_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.config_versions ENABLE ROW LEVEL SECURITY;

CREATE POLICY config_versions_insert_admin ON app.config_versions FOR INSERT TO authenticated WITH CHECK ((( SELECT app.is_admin() AS is_admin) AND (changed_by = ( SELECT auth.uid() AS uid))));

CREATE POLICY config_versions_select_admin ON app.config_versions FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

GRANT SELECT ON TABLE app.config_versions TO authenticated;

GRANT INSERT(version) ON TABLE app.config_versions TO authenticated;

GRANT INSERT(config) ON TABLE app.config_versions TO authenticated;

GRANT INSERT(diff) ON TABLE app.config_versions TO authenticated;

GRANT INSERT(reason) ON TABLE app.config_versions TO authenticated;

GRANT INSERT(changed_by) ON TABLE app.config_versions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.identities
-- created in 20261121090000_foundation.sql; last changed in 20261129100100_foundation_one_policy_per_operation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.identities (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    provider_user_id text NOT NULL,
    email text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT identities_provider_check CHECK ((provider = ANY (ARRAY['email'::text, 'google'::text, 'apple'::text, 'wallet'::text]))),
    CONSTRAINT identities_provider_user_id_check CHECK (((char_length(provider_user_id) >= 1) AND (char_length(provider_user_id) <= 320)))
);

COMMENT ON TABLE app.identities IS 'How a person proves who they are: one row per provider account (email, google, apple, wallet).';

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_provider_provider_user_id_key UNIQUE (provider, provider_user_id);

CREATE INDEX identities_user_id_idx ON app.identities USING btree (user_id);

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.identities ENABLE ROW LEVEL SECURITY;

CREATE POLICY identities_select_self_or_admin ON app.identities FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.identities TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.role_changes
-- created in 20261121090000_foundation.sql; last changed in 20261129100100_foundation_one_policy_per_operation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.role_changes (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    previous_role app.user_role NOT NULL,
    new_role app.user_role NOT NULL,
    changed_by uuid,
    reason text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT role_changes_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500)))
);

COMMENT ON TABLE app.role_changes IS 'The audit trail of role changes (who, why, before and after), written only by a trigger on app.users so it cannot be forged.';

ALTER TABLE app.role_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.role_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_pkey PRIMARY KEY (id);

CREATE INDEX role_changes_changed_by_idx ON app.role_changes USING btree (changed_by);

CREATE INDEX role_changes_user_id_idx ON app.role_changes USING btree (user_id, changed_at DESC);

CREATE TRIGGER role_changes_notify AFTER INSERT ON app.role_changes FOR EACH ROW EXECUTE FUNCTION app_private.role_change_notification();

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.role_changes ENABLE ROW LEVEL SECURITY;

CREATE POLICY role_changes_select_self_or_admin ON app.role_changes FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.role_changes TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.security_events
-- created in 20261121090000_foundation.sql; last changed in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.security_events (
    id bigint NOT NULL,
    type text NOT NULL,
    severity app.security_severity DEFAULT 'info'::app.security_severity NOT NULL,
    user_id uuid,
    ip inet,
    user_agent text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT security_events_type_check CHECK ((type ~ '^[a-z_]+(\.[a-z_]+)*$'::text))
);

COMMENT ON TABLE app.security_events IS 'What an admin needs to see of security (sign-ins, token reuse, denials, role changes); written by the server only.';

ALTER TABLE app.security_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.security_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.security_events
    ADD CONSTRAINT security_events_pkey PRIMARY KEY (id);

CREATE INDEX security_events_created_at_idx ON app.security_events USING btree (created_at DESC, id DESC);

CREATE INDEX security_events_type_idx ON app.security_events USING btree (type, created_at DESC);

CREATE INDEX security_events_user_id_idx ON app.security_events USING btree (user_id);

CREATE TRIGGER security_events_count_signins AFTER INSERT ON app.security_events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_signins();

ALTER TABLE ONLY app.security_events
    ADD CONSTRAINT security_events_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.security_events ENABLE ROW LEVEL SECURITY;

CREATE POLICY security_events_select_admin ON app.security_events FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

GRANT SELECT ON TABLE app.security_events TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.sessions
-- created in 20261121090000_foundation.sql; last changed in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    ip inet,
    user_agent text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    refreshed_at timestamp with time zone,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text,
    authenticated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT sessions_revoked_reason_check CHECK ((char_length(revoked_reason) <= 200)),
    CONSTRAINT sessions_user_agent_check CHECK ((char_length(user_agent) <= 1024))
);

COMMENT ON TABLE app.sessions IS 'A signed-in device. Every request checks its row, so revoking it kills its access tokens at once; a revoked or expired session authenticates nothing.';

COMMENT ON COLUMN app.sessions.provider IS 'How the session was opened: email, google, apple or wallet (the access token''s amr).';

COMMENT ON COLUMN app.sessions.authenticated_at IS 'When the person proved who they are for this session (the sign-in that opened it): the access token''s auth_time, unchanged by refreshes. A sign-in is fresh while this is within security.freshSignInSeconds.';

ALTER TABLE ONLY app.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);

CREATE INDEX sessions_created_at_idx ON app.sessions USING btree (created_at);

CREATE INDEX sessions_user_id_idx ON app.sessions USING btree (user_id);

CREATE TRIGGER sessions_guard_update BEFORE UPDATE ON app.sessions FOR EACH ROW EXECUTE FUNCTION app_private.guard_session_update();

CREATE TRIGGER sessions_record_created AFTER INSERT ON app.sessions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.record_session_activity();

CREATE TRIGGER sessions_record_refreshed AFTER UPDATE ON app.sessions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.record_session_activity();

ALTER TABLE ONLY app.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.sessions ENABLE ROW LEVEL SECURITY;

CREATE POLICY sessions_select_self_or_admin ON app.sessions FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

CREATE POLICY sessions_update_self ON app.sessions FOR UPDATE TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND (revoked_at IS NULL))) WITH CHECK (((user_id = ( SELECT auth.uid() AS uid)) AND (revoked_at IS NOT NULL)));

GRANT SELECT ON TABLE app.sessions TO authenticated;

GRANT UPDATE(revoked_at) ON TABLE app.sessions TO authenticated;

GRANT UPDATE(revoked_reason) ON TABLE app.sessions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.users
-- created in 20261121090000_foundation.sql; last changed in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text,
    name text DEFAULT app_private.new_account_name() NOT NULL,
    image text,
    role app.user_role DEFAULT 'SUBSCRIBER'::app.user_role NOT NULL,
    status app.user_status DEFAULT 'active'::app.user_status NOT NULL,
    wallet_address text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_sign_in_at timestamp with time zone,
    bio text,
    time_zone text,
    locale text,
    image_attachment_id uuid,
    CONSTRAINT users_bio_check CHECK ((char_length(bio) <= 500)),
    CONSTRAINT users_email_check CHECK ((((char_length(email) >= 3) AND (char_length(email) <= 320)) AND (email ~ '^[^@\s]+@[^@\s]+$'::text))),
    CONSTRAINT users_image_check CHECK ((char_length(image) <= 2048)),
    CONSTRAINT users_locale_check CHECK (((char_length(locale) >= 2) AND (char_length(locale) <= 64))),
    CONSTRAINT users_name_check CHECK ((char_length(name) <= 200)),
    CONSTRAINT users_time_zone_check CHECK (((char_length(time_zone) >= 1) AND (char_length(time_zone) <= 64))),
    CONSTRAINT users_wallet_address_check CHECK ((wallet_address ~ '^0x[0-9a-fA-F]{40}$'::text))
);

COMMENT ON TABLE app.users IS 'People on the platform, their role and status. The role here, not the one in a token, is what every check reads, so a change counts on the next statement.';

COMMENT ON COLUMN app.users.email IS 'The account''s verified e-mail address (a magic link was followed, or Google or Apple said it is verified), or null: an account made by a wallet, or by a provider that did not vouch for the address. Sign-ins link to an account only through this address, so an unverified address is never stored here.';

COMMENT ON COLUMN app.users.bio IS 'What the person says about themselves, up to 500 characters, shown on their profile; null when none.';

COMMENT ON COLUMN app.users.time_zone IS 'The person''s IANA time zone (Europe/Berlin), checked by the API against the runtime''s list; null when not set. Private: shown only to the person.';

COMMENT ON COLUMN app.users.locale IS 'The person''s BCP 47 language tag (de-CH), stored canonical as the API makes it; null when not set. Private: shown only to the person.';

COMMENT ON COLUMN app.users.image_attachment_id IS 'The uploaded image (one of the person''s own attachments, an image type) their profile shows, served by GET /api/users/{id}/image; null when the picture is not an upload. users_guard_profile keeps image in step with it.';

ALTER TABLE ONLY app.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

CREATE INDEX users_created_at_id_idx ON app.users USING btree (created_at DESC, id DESC);

CREATE INDEX users_directory_idx ON app.users USING btree (lower(name), id) WHERE (status = 'active'::app.user_status);

CREATE UNIQUE INDEX users_email_key ON app.users USING btree (lower(email));

CREATE INDEX users_image_attachment_id_idx ON app.users USING btree (image_attachment_id) WHERE (image_attachment_id IS NOT NULL);

CREATE INDEX users_name_search_idx ON app.users USING gin (lower(name) extensions.gin_trgm_ops);

CREATE INDEX users_role_created_at_idx ON app.users USING btree (role, created_at DESC, id DESC);

CREATE INDEX users_search_idx ON app.users USING gin ((((COALESCE(lower(email), ''::text) || ' '::text) || lower(name))) extensions.gin_trgm_ops);

CREATE INDEX users_status_created_at_idx ON app.users USING btree (status, created_at DESC, id DESC);

CREATE TRIGGER users_count_deleted AFTER DELETE ON app.users REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_users_deleted();

CREATE TRIGGER users_count_inserted AFTER INSERT ON app.users REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_users_inserted();

CREATE TRIGGER users_count_signups AFTER INSERT ON app.users REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_signups();

CREATE TRIGGER users_count_truncated AFTER TRUNCATE ON app.users FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_users_truncated();

CREATE TRIGGER users_count_updated AFTER UPDATE ON app.users REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_users_updated();

CREATE TRIGGER users_forget_activity AFTER DELETE ON app.users REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.forget_activity();

CREATE TRIGGER users_forget_fact_members AFTER DELETE ON app.users REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.forget_fact_members();

CREATE TRIGGER users_guard_delete BEFORE DELETE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.guard_user_delete();

CREATE TRIGGER users_guard_profile BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.guard_profile();

CREATE TRIGGER users_guard_update BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.guard_user_update();

CREATE TRIGGER users_publish_profile AFTER UPDATE ON app.users FOR EACH ROW WHEN (((old.name IS DISTINCT FROM new.name) OR (old.image IS DISTINCT FROM new.image) OR (old.bio IS DISTINCT FROM new.bio) OR (old.role IS DISTINCT FROM new.role))) EXECUTE FUNCTION app_private.publish_profile();

CREATE TRIGGER users_record_role_change AFTER UPDATE OF role ON app.users FOR EACH ROW WHEN ((old.role IS DISTINCT FROM new.role)) EXECUTE FUNCTION app_private.record_role_change();

CREATE TRIGGER users_touch_updated_at BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

ALTER TABLE ONLY app.users
    ADD CONSTRAINT users_image_attachment_id_fkey FOREIGN KEY (image_attachment_id) REFERENCES app.attachments(id) ON DELETE SET NULL;

ALTER TABLE app.users ENABLE ROW LEVEL SECURITY;

CREATE POLICY users_select_self_or_admin ON app.users FOR SELECT TO authenticated USING (((id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

CREATE POLICY users_update_self_or_admin ON app.users FOR UPDATE TO authenticated USING (((id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin))) WITH CHECK (((id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.users TO authenticated;

GRANT UPDATE(name) ON TABLE app.users TO authenticated;

GRANT UPDATE(image) ON TABLE app.users TO authenticated;

GRANT UPDATE(role) ON TABLE app.users TO authenticated;

GRANT UPDATE(status) ON TABLE app.users TO authenticated;

GRANT UPDATE(bio) ON TABLE app.users TO authenticated;

GRANT UPDATE(time_zone) ON TABLE app.users TO authenticated;

GRANT UPDATE(locale) ON TABLE app.users TO authenticated;

GRANT UPDATE(image_attachment_id) ON TABLE app.users TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.activity_members
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.activity_members (
    bucket_interval text NOT NULL,
    bucket timestamp with time zone NOT NULL,
    user_id uuid NOT NULL,
    CONSTRAINT activity_members_bucket_interval_check CHECK ((bucket_interval = ANY (ARRAY['day'::text, 'week'::text, 'month'::text])))
);

COMMENT ON TABLE app_private.activity_members IS 'Which users were active in each open analytics bucket, so a user counts once per bucket in app_private.analytics_counts (metric active). Kept until two days after the bucket closes (app_private.prune_activity_members); a deleted account''s rows go with it. Server only.';

ALTER TABLE ONLY app_private.activity_members
    ADD CONSTRAINT activity_members_pkey PRIMARY KEY (bucket_interval, bucket, user_id);

CREATE INDEX activity_members_user_id_idx ON app_private.activity_members USING btree (user_id);

ALTER TABLE app_private.activity_members ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.analytics_count_deltas
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.analytics_count_deltas (
    id bigint NOT NULL,
    metric text NOT NULL,
    bucket_interval text NOT NULL,
    bucket timestamp with time zone NOT NULL,
    delta bigint NOT NULL,
    CONSTRAINT analytics_count_deltas_bucket_interval_check CHECK ((bucket_interval = ANY (ARRAY['day'::text, 'week'::text, 'month'::text]))),
    CONSTRAINT analytics_count_deltas_metric_check CHECK ((metric = ANY (ARRAY['signups'::text, 'signins'::text, 'active'::text])))
);

COMMENT ON TABLE app_private.analytics_count_deltas IS 'Additions to app_private.analytics_counts not folded in yet: appended by the rollup triggers, folded in and deleted by app_private.compact_counters (pg_cron, every minute). Append-only for writers, so they never contend for a counter row. Server only.';

ALTER TABLE app_private.analytics_count_deltas ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.analytics_count_deltas_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.analytics_count_deltas
    ADD CONSTRAINT analytics_count_deltas_pkey PRIMARY KEY (id);

CREATE INDEX analytics_count_deltas_bucket_idx ON app_private.analytics_count_deltas USING btree (metric, bucket_interval, bucket);

ALTER TABLE app_private.analytics_count_deltas ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.analytics_counts
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.analytics_counts (
    metric text NOT NULL,
    bucket_interval text NOT NULL,
    bucket timestamp with time zone NOT NULL,
    value bigint DEFAULT 0 NOT NULL,
    CONSTRAINT analytics_counts_bucket_interval_check CHECK ((bucket_interval = ANY (ARRAY['day'::text, 'week'::text, 'month'::text]))),
    CONSTRAINT analytics_counts_metric_check CHECK ((metric = ANY (ARRAY['signups'::text, 'signins'::text, 'active'::text]))),
    CONSTRAINT analytics_counts_value_check CHECK ((value >= 0))
);

COMMENT ON TABLE app_private.analytics_counts IS 'The admin analytics'' user figures per UTC day, ISO week and month (sign-ups, sign-ins, active users), kept by the writes (statement triggers on app.users, app.security_events, app.sessions, app.access_logs), so the page reads a row per bucket instead of counting the tables. Server only: read through app.analytics_series().';

ALTER TABLE ONLY app_private.analytics_counts
    ADD CONSTRAINT analytics_counts_pkey PRIMARY KEY (metric, bucket_interval, bucket);

ALTER TABLE app_private.analytics_counts ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.analytics_fact_deltas
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.analytics_fact_deltas (
    id bigint NOT NULL,
    metric text NOT NULL,
    bucket_interval text NOT NULL,
    bucket timestamp with time zone NOT NULL,
    key text DEFAULT ''::text NOT NULL,
    delta numeric NOT NULL,
    CONSTRAINT analytics_fact_deltas_bucket_interval_check CHECK ((bucket_interval = ANY (ARRAY['hour'::text, 'day'::text, 'week'::text, 'month'::text, 'all'::text])))
);

COMMENT ON TABLE app_private.analytics_fact_deltas IS 'Changes to app_private.analytics_facts not folded in yet: appended by the fact triggers (one row per metric, bucket and key a statement changed), folded in and deleted by app_private.compact_counters (pg_cron agora-compact-counters, every minute). Append-only for writers, so they never contend for a counter row. Server only.';

ALTER TABLE app_private.analytics_fact_deltas ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.analytics_fact_deltas_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.analytics_fact_deltas
    ADD CONSTRAINT analytics_fact_deltas_pkey PRIMARY KEY (id);

CREATE INDEX analytics_fact_deltas_bucket_idx ON app_private.analytics_fact_deltas USING btree (metric, bucket_interval, bucket, key);

ALTER TABLE app_private.analytics_fact_deltas ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.analytics_fact_members
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.analytics_fact_members (
    metric text NOT NULL,
    bucket_interval text NOT NULL,
    bucket timestamp with time zone NOT NULL,
    user_id uuid NOT NULL,
    CONSTRAINT analytics_fact_members_bucket_interval_check CHECK ((bucket_interval = ANY (ARRAY['day'::text, 'week'::text, 'month'::text])))
);

COMMENT ON TABLE app_private.analytics_fact_members IS 'Which users a distinct-user metric (messages.senders: who sent a message) counted in each open bucket, so a user counts once per bucket. Kept until two days after the bucket closes (app_private.prune_activity_members); a deleted account''s rows go with it. Server only.';

ALTER TABLE ONLY app_private.analytics_fact_members
    ADD CONSTRAINT analytics_fact_members_pkey PRIMARY KEY (metric, bucket_interval, bucket, user_id);

CREATE INDEX analytics_fact_members_user_id_idx ON app_private.analytics_fact_members USING btree (user_id);

ALTER TABLE app_private.analytics_fact_members ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.analytics_facts
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.analytics_facts (
    metric text NOT NULL,
    bucket_interval text NOT NULL,
    bucket timestamp with time zone NOT NULL,
    key text DEFAULT ''::text NOT NULL,
    value numeric DEFAULT 0 NOT NULL,
    CONSTRAINT analytics_facts_bucket_interval_check CHECK ((bucket_interval = ANY (ARRAY['hour'::text, 'day'::text, 'week'::text, 'month'::text, 'all'::text])))
);

COMMENT ON TABLE app_private.analytics_facts IS 'The admin analytics'' messaging, store, wallet and notifications figures: a count or sum per metric, UTC day, ISO week or month (the notifications'' metrics also per UTC hour; or a total now: interval all, bucket -infinity) and key (an order status, a vendor id, a token, a notification type), as of the last compaction; a figure adds the rows of app_private.analytics_fact_deltas and the folded tables'' rows above their marks. Kept by the fold and the triggers app_private.<table>_facts_changed on the tables the metrics count, so the page reads a row per bucket instead of counting them. Server only: read through the app.admin_*_stats functions and app.notification_analytics.';

ALTER TABLE ONLY app_private.analytics_facts
    ADD CONSTRAINT analytics_facts_pkey PRIMARY KEY (metric, bucket_interval, bucket, key);

ALTER TABLE app_private.analytics_facts ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.analytics_fold_marks
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.analytics_fold_marks (
    source text NOT NULL,
    folded_before timestamp with time zone NOT NULL,
    CONSTRAINT analytics_fold_marks_source_check CHECK ((source = ANY (ARRAY['app.messages'::text, 'app.orders'::text, 'app.notifications'::text, 'app_private.notification_deliveries'::text])))
);

COMMENT ON TABLE app_private.analytics_fold_marks IS 'For the tables whose inserts pay no fact trigger (app.messages, app.orders, app.notifications, app_private.notification_deliveries): the rows whose clock (created_at; finished_at for deliveries) is before folded_before are in app_private.analytics_facts (and their later changes in the deltas); those from it on are read live by the readers and folded by app_private.fold_analytics_facts (agora-compact-counters, every minute), which moves the mark. Server only.';

ALTER TABLE ONLY app_private.analytics_fold_marks
    ADD CONSTRAINT analytics_fold_marks_pkey PRIMARY KEY (source);

ALTER TABLE app_private.analytics_fold_marks ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.magic_links
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.magic_links (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    token_hash text NOT NULL,
    redirect_to text,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

COMMENT ON TABLE app_private.magic_links IS 'Magic-link tokens as SHA-256 hashes: single use, short-lived; a leaked table signs nobody in.';

ALTER TABLE ONLY app_private.magic_links
    ADD CONSTRAINT magic_links_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app_private.magic_links
    ADD CONSTRAINT magic_links_token_hash_key UNIQUE (token_hash);

CREATE INDEX magic_links_expires_at_idx ON app_private.magic_links USING btree (expires_at);

ALTER TABLE app_private.magic_links ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.rate_limits
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.rate_limits (
    bucket text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer DEFAULT 0 NOT NULL
);

COMMENT ON TABLE app_private.rate_limits IS 'Fixed-window rate-limit counters, in the database so limits hold across many stateless API instances.';

ALTER TABLE ONLY app_private.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket, window_start);

CREATE INDEX rate_limits_window_start_idx ON app_private.rate_limits USING btree (window_start);

ALTER TABLE app_private.rate_limits ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.refresh_tokens
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.refresh_tokens (
    id bigint NOT NULL,
    session_id uuid NOT NULL,
    token_hash text NOT NULL,
    parent_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    spent_at timestamp with time zone
);

COMMENT ON TABLE app_private.refresh_tokens IS 'Opaque refresh tokens as SHA-256 hashes. parent_id links each to the one it replaced: that is how reuse of a spent token is told apart from the grace allowed to its parent.';

ALTER TABLE app_private.refresh_tokens ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.refresh_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash);

CREATE INDEX refresh_tokens_parent_id_idx ON app_private.refresh_tokens USING btree (parent_id);

CREATE INDEX refresh_tokens_session_id_idx ON app_private.refresh_tokens USING btree (session_id);

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES app_private.refresh_tokens(id) ON DELETE CASCADE;

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES app.sessions(id) ON DELETE CASCADE;

ALTER TABLE app_private.refresh_tokens ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.user_count_deltas
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.user_count_deltas (
    id bigint NOT NULL,
    role app.user_role NOT NULL,
    status app.user_status NOT NULL,
    delta bigint NOT NULL
);

COMMENT ON TABLE app_private.user_count_deltas IS 'Changes to app_private.user_counts not folded in yet: appended by the triggers on app.users (one row per role and status a statement changed), folded in and deleted by app_private.compact_counters (pg_cron, every minute). Append-only for writers, so they never contend for a counter row. Server only.';

ALTER TABLE app_private.user_count_deltas ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.user_count_deltas_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.user_count_deltas
    ADD CONSTRAINT user_count_deltas_pkey PRIMARY KEY (id);

ALTER TABLE app_private.user_count_deltas ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.user_counts
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.user_counts (
    role app.user_role NOT NULL,
    status app.user_status NOT NULL,
    n bigint DEFAULT 0 NOT NULL
);

COMMENT ON TABLE app_private.user_counts IS 'How many users hold each (role, status) as of the last compaction; the count now adds the rows of app_private.user_count_deltas (app.user_counts() does). Kept exact by the triggers on app.users (app_private.count_users_*): what the admin users list and the analytics show instead of counting the table. Server only.';

ALTER TABLE ONLY app_private.user_counts
    ADD CONSTRAINT user_counts_pkey PRIMARY KEY (role, status);

ALTER TABLE app_private.user_counts ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.admin_store_stats
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204010100_foundation_store_top_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.admin_store_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
    AS $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  with buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ),
  sales as (select s.t, s.value from app_private.fact_series('orders.sales', bucket, range_from, range_to) s),
  paid as (select s.t, s.value from app_private.fact_series('orders.paid', bucket, range_from, range_to) s),
  top as (
    select s.key, s.value as sales
    from app_private.fact_key_totals('orders.vendor_sales', bucket, range_from, range_to) s
    where s.value <> 0
    order by s.value desc, s.key
    limit 10
  ),
  vendors as (
    select t.key, t.sales, coalesce(p.value, 0) as orders
    from top t
    left join app_private.fact_key_totals('orders.vendor_paid', bucket, range_from, range_to,
                                          array(select t2.key from top t2)) p on p.key = t.key
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'sales', (select coalesce(sum(s.value), 0) from sales s),
      'paidOrders', (select coalesce(sum(p.value), 0) from paid p)
    ),
    'sales', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join sales s on s.t = b.t),
    'orders', app_private.fact_series_json('orders.created', bucket, range_from, range_to),
    'ordersByStatus', (
      select jsonb_object_agg(st.status, coalesce(x.value, 0))
      from unnest(enum_range(null::app.order_status)) st(status)
      left join app_private.fact_totals('orders.status') x on x.key = st.status::text
    ),
    'topVendors', coalesce((
      select jsonb_agg(jsonb_build_object('id', v.key::uuid, 'name', coalesce(ve.name, ''),
                                          'sales', v.sales, 'orders', v.orders)
                       order by v.sales desc, v.key)
      from vendors v left join app.vendors ve on ve.id = v.key::uuid
    ), '[]'::jsonb)
  ) into result;
  return result;
end;
$$;

COMMENT ON FUNCTION app.admin_store_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'The store section of GET /api/admin/analytics: sales (totals of orders paid in each UTC day, ISO week or month, refunds not deducted, minor units), paid orders, orders created, zero-filled, whole buckets; orders by status now; the top ten vendors by sales in the range''s buckets (name as the vendor is named now). From the rollups (app_private.analytics_facts, its deltas and the orders not yet folded), a row per bucket and vendor with sales in it, whatever the number of orders, summed per vendor in one pass (app_private.fact_key_totals); the ten vendors'' paid orders only for them. security definer: the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';

REVOKE ALL ON FUNCTION app.admin_store_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_store_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.admin_user_matches
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.admin_user_matches(pattern text, only_status app.user_status DEFAULT NULL::app.user_status) RETURNS TABLE(id uuid, role app.user_role, created_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER ROWS 20
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.admin_user_matches(pattern text, only_status app.user_status) IS 'GET /api/admin/users?search=: the users whose e-mail or name matches a LIKE pattern (lower case), found through users_search_idx (trigram). Under the caller''s RLS the pattern could not use the index: LIKE is not leakproof, so Postgres tests it only after the users policy, on every row. ADMIN only (42501), who may read every user anyway. security definer for that reason; it returns ids, roles and creation times only.';

REVOKE ALL ON FUNCTION app.admin_user_matches(pattern text, only_status app.user_status) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_user_matches(pattern text, only_status app.user_status) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.analytics_series
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.analytics_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS TABLE(t timestamp with time zone, value bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
    AS $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads the analytics' using errcode = '42501';
  end if;
  if metric not in ('signups', 'signins', 'active') or bucket_interval not in ('day', 'week', 'month') then
    raise exception 'unknown metric % or interval %', metric, bucket_interval using errcode = '22023';
  end if;
  return query
    select b.t,
      coalesce((select c.value from app_private.analytics_counts c
                where c.metric = analytics_series.metric
                  and c.bucket_interval = analytics_series.bucket_interval and c.bucket = b.t), 0)
      + coalesce((select sum(d.delta) from app_private.analytics_count_deltas d
                  where d.metric = analytics_series.metric
                    and d.bucket_interval = analytics_series.bucket_interval and d.bucket = b.t), 0)::bigint
    from generate_series(date_trunc(bucket_interval, range_from, 'UTC'), range_to,
                         ('1 ' || bucket_interval)::interval) b(t)
    order by b.t;
end;
$$;

COMMENT ON FUNCTION app.analytics_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'GET /api/admin/analytics: a metric (signups, signins, active) per UTC day, ISO week or month from the bucket holding range_from to range_to, zero where nothing happened, from the rollups (app_private.analytics_counts and the deltas not folded in yet): a row per bucket, whatever the size of the tables. ADMIN only (42501). security definer: the rollups are server-only; it returns counts, no person.';

REVOKE ALL ON FUNCTION app.analytics_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.analytics_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.change_user_role
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) RETURNS app.role_changes
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) IS 'An ADMIN changes another user''s role: recorded with its reason (and, through the trigger, its security event) in the same transaction, or refused with nothing changed. Serialized with other role changes; the caller''s own row stays share-locked until commit.';

REVOKE ALL ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.config_int
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.config_int(section text, key text) RETURNS integer
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.config_int(section text, key text) IS 'A numeric setting of the current configuration (limits and the like, never secrets), with its default from app_private.config_defaults. security definer: the configuration table is readable by ADMINs only; it returns one number.';

REVOKE ALL ON FUNCTION app.config_int(section text, key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.config_int(section text, key text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.current_user_role
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.current_user_role() RETURNS app.user_role
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return coalesce(
    (select u.role from app.users u where u.id = (select auth.uid()) and u.status = 'active'),
    'VISITOR'::app.user_role
  );
end;
$$;

COMMENT ON FUNCTION app.current_user_role() IS 'The signed-in user''s current role from the database; VISITOR without an active session user.';

REVOKE ALL ON FUNCTION app.current_user_role() FROM PUBLIC;
GRANT ALL ON FUNCTION app.current_user_role() TO anon;
GRANT ALL ON FUNCTION app.current_user_role() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.effective_config
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.effective_config() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.effective_config() IS 'The current configuration with every default filled in: what the API reads. security definer because app.config_versions is readable by admins only, so an API role gets it only as an ADMIN; the server''s own connection (no API role) always may. The public part is app.public_config.';

REVOKE ALL ON FUNCTION app.effective_config() FROM PUBLIC;
GRANT ALL ON FUNCTION app.effective_config() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.has_role
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.has_role(required app.user_role) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.has_role(required app.user_role) IS 'Whether the signed-in user is active and holds at least the given role, read from app.users (not from a possibly stale token). security definer because policies on app.users call it: invoker rights would recurse into those policies. It reads one row and returns a boolean.';

REVOKE ALL ON FUNCTION app.has_role(required app.user_role) FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_role(required app.user_role) TO anon;
GRANT ALL ON FUNCTION app.has_role(required app.user_role) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.is_admin
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.is_admin() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return app.has_role('ADMIN');
end;
$$;

COMMENT ON FUNCTION app.is_admin() IS 'Shorthand for app.has_role(''ADMIN''), used by every admin policy; plpgsql so its plan is kept.';

REVOKE ALL ON FUNCTION app.is_admin() FROM PUBLIC;
GRANT ALL ON FUNCTION app.is_admin() TO anon;
GRANT ALL ON FUNCTION app.is_admin() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.list_people
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.list_people(search text DEFAULT NULL::text, after_name text DEFAULT NULL::text, after_id uuid DEFAULT NULL::uuid, max_rows integer DEFAULT 50) RETURNS TABLE(id uuid, name text, image text, role app.user_role)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.list_people(search text, after_name text, after_id uuid, max_rows integer) IS 'The people directory: id, name, image and role of active users other than the caller, for SUBSCRIBER and above, searched by name, in keyset pages. security definer: app.users shows a user only their own row; this returns public fields only, never an e-mail.';

REVOKE ALL ON FUNCTION app.list_people(search text, after_name text, after_id uuid, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.list_people(search text, after_name text, after_id uuid, max_rows integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.profile_image
-- created in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.profile_image(target uuid) RETURNS TABLE(content_type text, storage_key text, size bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'profiles need the SUBSCRIBER role' using errcode = '42501';
  end if;
  return query
    select a.content_type, a.storage_key, a.size
    from app.users u join app.attachments a on a.id = u.image_attachment_id
    where u.id = target and u.status = 'active';
end;
$$;

COMMENT ON FUNCTION app.profile_image(target uuid) IS 'GET /api/users/{id}/image: the stored file of an active user''s uploaded profile picture, for SUBSCRIBER and above (whoever may see the profile); no row for a suspended, deleted or unknown user or one without an uploaded picture. security definer: the upload is not attached to any conversation of the caller''s, so attachment RLS would hide it; this returns only the file the profile names.';

REVOKE ALL ON FUNCTION app.profile_image(target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.profile_image(target uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.public_config
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.public_config() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.public_config() IS 'The public part of the configuration (white-label and feature flags, defaults filled in), for anyone, signed in or not. security definer because app.config_versions is readable by admins only; it returns only these two sections, never the rest.';

REVOKE ALL ON FUNCTION app.public_config() FROM PUBLIC;
GRANT ALL ON FUNCTION app.public_config() TO anon;
GRANT ALL ON FUNCTION app.public_config() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.user_counts
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.user_counts() RETURNS TABLE(role app.user_role, status app.user_status, n bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.user_counts() IS 'How many users hold each role and status, from the maintained counters (app_private.user_counts plus the deltas not folded in yet): GET /api/admin/users and the analytics. ADMIN only (42501). security definer: the counters are server-only; it returns counts, no person.';

REVOKE ALL ON FUNCTION app.user_counts() FROM PUBLIC;
GRANT ALL ON FUNCTION app.user_counts() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.user_profile
-- created in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.user_profile(target uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'profiles need the SUBSCRIBER role' using errcode = '42501';
  end if;
  return (
    select app_private.public_profile_json(u) from app.users u
    where u.id = target and u.status = 'active'
  );
end;
$$;

COMMENT ON FUNCTION app.user_profile(target uuid) IS 'GET /api/users/{id}: an active user''s public profile (id, name, image, bio, role; never an e-mail) for SUBSCRIBER and above, or null (a suspended, deleted or unknown user: 404). security definer: app.users shows a user only their own row.';

REVOKE ALL ON FUNCTION app.user_profile(target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.user_profile(target uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.add_analytics_counts
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.add_analytics_counts(metric text, ats timestamp with time zone[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.analytics_count_deltas (metric, bucket_interval, bucket, delta)
  select add_analytics_counts.metric, i.name, date_trunc(i.name, a.at, 'UTC'), count(*)
  from unnest(ats) a(at)
  cross join (values ('day'), ('month'), ('week')) i(name)
  where a.at is not null
  group by 1, 2, 3
$$;

COMMENT ON FUNCTION app_private.add_analytics_counts(metric text, ats timestamp with time zone[]) IS 'Adds one to a metric''s day, week and month bucket for each time given: appends a delta per bucket (an insert, never an update of a shared row).';

REVOKE ALL ON FUNCTION app_private.add_analytics_counts(metric text, ats timestamp with time zone[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_fact_definitions
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_fact_definitions() RETURNS TABLE(source text, folded boolean, watched text, facts text, clock text)
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
  -- facts: a VALUES list over the row `r` of (metric, at, key, value): `at` picks the day, week
  -- and month buckets (and hour for the notifications' metrics), '-infinity' means a total now,
  -- null means no fact. clock: a folded table's column the mark is on.
  values
    ('app.conversations', false, 'created_at', $f$
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) $f$, null),
    ('app.messages', true, 'created_at, deleted_at', $f$
      values ('messages.sent', r.created_at, '', 1::numeric),
             ('messages.live', case when r.deleted_at is null then '-infinity'::timestamptz end, '',
              1::numeric) $f$, 'created_at'),
    ('app.notifications', true, 'created_at, read_at, type, inbox', $f$
      values ('notifications.created', case when r.inbox then r.created_at end, r.type::text, 1::numeric),
             ('notifications.read', case when r.inbox and r.read_at is not null then r.created_at end,
              r.type::text, 1::numeric),
             ('notifications.read_seconds', case when r.inbox and r.read_at is not null then r.created_at end,
              -- The bin of seconds to read: 0 for [0, 1 s), k >= 1 for [2^((k-1)/8), 2^(k/8)) s.
              r.type::text || ' ' || case
                when extract(epoch from r.read_at - r.created_at)::double precision < 1 then 0
                else 1 + floor(8 * ln(extract(epoch from r.read_at - r.created_at)::double precision)
                               / ln(2::double precision))::integer end,
              1::numeric) $f$, 'created_at'),
    ('app.orders', true, 'created_at, paid_at, status, total, vendor_id', $f$
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) $f$, 'created_at'),
    ('app.wallets', false, 'created_at, exported_at', $f$
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) $f$, null),
    ('app.wallet_transactions', false,
     'status, direction, confirmed_at, amount, chain_id, token_kind, token_address, token_symbol, token_decimals', $f$
      values ('wallet_transactions.all', '-infinity'::timestamptz,
              r.status::text || ' ' || r.direction::text, 1::numeric),
             ('wallet_transactions.volume',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              r.amount),
             ('wallet_transactions.transfers',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              1::numeric) $f$, null),
    ('app_private.notification_deliveries', true, 'finished_at, status, channel, notification_id', $f$
      values ('notification_deliveries.finished', r.finished_at,
              r.channel::text || ' ' || r.status::text || ' '
                || (select n.type::text from app.notifications n where n.id = r.notification_id),
              1::numeric) $f$, 'finished_at')
$_$;

COMMENT ON FUNCTION app_private.analytics_fact_definitions() IS 'What each row of a counted table contributes to app_private.analytics_facts: the table, whether its inserts are folded by the job from a mark (folded) or appended as deltas by statement triggers, the columns whose change moves its facts (an update of other columns is skipped), its facts as SQL over the row r, and for a folded table its clock (the column the mark is on: created_at; finished_at for deliveries, counted by the time of their outcome). One definition serves the fold, the readers'' live tail, the recount and the generated triggers, so they cannot disagree (app.notifications'' statement trigger is written out for read-all''s sake and checked against a recount by the tests).';

REVOKE ALL ON FUNCTION app_private.analytics_fact_definitions() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_fact_select
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_fact_select(rows_sql text, facts text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
  select format($q$
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (%s) r
    cross join lateral (%s) f(metric, at, key, value)
    join (values ('all'), ('hour'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
     and (i.name <> 'hour' or f.metric like 'notification%%')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 $q$,
    rows_sql, facts)
$_$;

COMMENT ON FUNCTION app_private.analytics_fact_select(rows_sql text, facts text) IS 'Builds the query of the facts of some rows (rows_sql: the rows with a sign column, +1 or -1), summed per metric, bucket interval, bucket and key: for the triggers, the fold, the recount and the readers'' live tail. Hour buckets for the notifications'' metrics only (notifications.*, notification_deliveries.*: GET /api/notifications/analytics offers interval=hour; the admin page does not).';

REVOKE ALL ON FUNCTION app_private.analytics_fact_select(rows_sql text, facts text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_fact_sql
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_fact_sql(target text, rows_sql text, facts text) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $_$
  select format($q$
    insert into %s as c (metric, bucket_interval, bucket, key, %s)
    select x.* from (%s) x
    order by 1, 2, 3, 4 %s $q$,
    target, case when target = 'app_private.analytics_facts' then 'value' else 'delta' end,
    app_private.analytics_fact_select(rows_sql, facts),
    case when target = 'app_private.analytics_facts'
      then 'on conflict (metric, bucket_interval, bucket, key) do update set value = c.value + excluded.value'
      else '' end)
$_$;

COMMENT ON FUNCTION app_private.analytics_fact_sql(target text, rows_sql text, facts text) IS 'Builds the statement that adds the facts of some rows (rows_sql: the rows with a sign column, +1 or -1) to app_private.analytics_fact_deltas or, for the fold and the recount, app_private.analytics_facts (added to the rows there), in key order.';

REVOKE ALL ON FUNCTION app_private.analytics_fact_sql(target text, rows_sql text, facts text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_fact_tail
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_fact_tail(metric text, bucket_interval text) RETURNS TABLE(bucket timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  if metric = 'messages.senders' then
    if bucket_interval <> 'all' then
      return query select * from app_private.message_senders_tail(bucket_interval);
    end if;
  elsif metric like 'messages.%' then
    return query select * from app_private.messages_facts_tail(metric, bucket_interval);
  elsif metric like 'orders.%' then
    return query select * from app_private.orders_facts_tail(metric, bucket_interval);
  elsif metric like 'notifications.%' then
    return query select * from app_private.notifications_facts_tail(metric, bucket_interval);
  elsif metric like 'notification_deliveries.%' then
    return query select * from app_private.notification_deliveries_facts_tail(metric, bucket_interval);
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.analytics_fact_tail(metric text, bucket_interval text) IS 'A metric''s facts in one bucket interval of the rows not yet folded (a folded table''s rows from its mark on: messages, orders, notifications, deliveries); none for the tables kept by deltas. The readers add them in the same statement as the rollup rows and deltas.';

REVOKE ALL ON FUNCTION app_private.analytics_fact_tail(metric text, bucket_interval text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_facts_truncated
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_facts_truncated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  prefix text := tg_table_name || '.%';
begin
  delete from app_private.analytics_fact_deltas d where d.metric like prefix;
  delete from app_private.analytics_facts f where f.metric like prefix;
  delete from app_private.analytics_fact_members m where m.metric like prefix;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.analytics_facts_truncated() IS 'After truncate of a counted table (tests, never the app): its metrics are empty.';

REVOKE ALL ON FUNCTION app_private.analytics_facts_truncated() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_fold_horizon
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_fold_horizon(margin interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  horizon timestamptz;
begin
  -- Another role's sessions show no xact_start unless the reader may read all statistics: a
  -- horizon that missed one would fold past a transaction still to commit.
  if not pg_has_role('pg_read_all_stats', 'usage') then
    raise exception 'the fold''s horizon needs pg_read_all_stats (grant pg_read_all_stats to %)', current_user
      using errcode = '42501';
  end if;
  select least(now() - margin, min(a.xact_start)) into horizon
  from pg_catalog.pg_stat_activity a
  where a.datname = current_database() and a.pid <> pg_backend_pid() and a.xact_start is not null
    and a.backend_type in ('client backend', 'background worker');
  return horizon;
end;
$$;

COMMENT ON FUNCTION app_private.analytics_fold_horizon(margin interval) IS 'Where app_private.fold_analytics_facts may move a mark: min(now() - margin, the start of the oldest transaction in progress in this database, other than this one). created_at defaults to the writing transaction''s start, so every row created before it is committed and visible to a statement that begins afterwards. Call it before the statements that read the rows (pg_stat_activity is read once per transaction). security definer: it must see every session''s transaction start (pg_read_all_stats).';

REVOKE ALL ON FUNCTION app_private.analytics_fold_horizon(margin interval) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_fold_mark
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_fold_mark(source text) RETURNS timestamp with time zone
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  mark timestamptz;
begin
  -- Shared with every other change; exclusive for the fold while it moves the marks.
  perform pg_advisory_xact_lock_shared(hashtext('app_private.analytics_fold_marks'));
  if current_setting('transaction_isolation') = 'read committed' then
    -- A new snapshot, taken after the lock: the mark as the last fold committed it.
    select m.folded_before into mark from app_private.analytics_fold_marks m
    where m.source = analytics_fold_mark.source;
  else
    -- The transaction's snapshot may predate the last fold: for share fails (40001) if it does.
    select m.folded_before into mark from app_private.analytics_fold_marks m
    where m.source = analytics_fold_mark.source
    for share;
  end if;
  return mark;
end;
$$;

COMMENT ON FUNCTION app_private.analytics_fold_mark(source text) IS 'For the triggers of a change to a folded table''s row: its mark (rows created before it are folded, so their change is a delta; rows after it are read or folded as they are then), holding the marks'' advisory lock shared until the transaction ends, so app_private.fold_analytics_facts (which takes it exclusive) cannot move the mark between this read and the change''s commit.';

REVOKE ALL ON FUNCTION app_private.analytics_fold_mark(source text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.apply_user_count_deltas
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.apply_user_count_deltas(deltas jsonb) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.user_count_deltas (role, status, delta)
  select x.role, x.status, sum(x.delta)::bigint
  from jsonb_to_recordset(deltas) as x(role app.user_role, status app.user_status, delta bigint)
  group by x.role, x.status
  having sum(x.delta) <> 0
$$;

COMMENT ON FUNCTION app_private.apply_user_count_deltas(deltas jsonb) IS 'Appends [{role, status, delta}] (summed per role and status) to app_private.user_count_deltas: an insert, never an update of a shared row, so concurrent writers neither wait nor deadlock.';

REVOKE ALL ON FUNCTION app_private.apply_user_count_deltas(deltas jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.audit_config_version
-- created in 20261128090200_foundation_config_audit.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.audit_config_version() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.record_security_event(
    'admin.config_changed',
    'warning',
    new.changed_by,
    jsonb_build_object(
      'version', new.version,
      'keys', (select coalesce(jsonb_agg(k order by k), '[]'::jsonb)
               from jsonb_object_keys(new.diff) k),
      'reason', new.reason
    )
  );
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.audit_config_version() IS 'Writes admin.config_changed (the version, the changed keys, the reason) in the transaction that saves a configuration version, so the change and its record commit together or not at all. security definer: an ADMIN saves versions under RLS, and security events are written by the server only.';

REVOKE ALL ON FUNCTION app_private.audit_config_version() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.compact_counters
-- created in 20261130050400_foundation_analytics_rollups.sql; last changed in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.compact_counters() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  folded integer;
  more integer;
  facts integer;
begin
  -- First: the fold takes the marks' lock before this transaction updates a fact row, as every
  -- writer of fact rows does (a compaction and a fold in the other order would deadlock).
  folded := app_private.fold_analytics_facts();
  folded := folded + app_private.compact_user_counts();
  with gone as (
    delete from app_private.analytics_count_deltas d
    returning d.metric, d.bucket_interval, d.bucket, d.delta
  ), sums as (
    select g.metric, g.bucket_interval, g.bucket, sum(g.delta)::bigint as delta, count(*)::integer as rows
    from gone g group by 1, 2, 3
  ), added as (
    insert into app_private.analytics_counts as c (metric, bucket_interval, bucket, value)
    select s.metric, s.bucket_interval, s.bucket, s.delta from sums s order by 1, 2, 3
    on conflict (metric, bucket_interval, bucket) do update set value = c.value + excluded.value
  )
  select coalesce(sum(s.rows), 0)::integer into more from sums s;
  with gone as (
    delete from app_private.analytics_fact_deltas d
    returning d.metric, d.bucket_interval, d.bucket, d.key, d.delta
  ), sums as (
    select g.metric, g.bucket_interval, g.bucket, g.key, sum(g.delta) as delta, count(*)::integer as rows
    from gone g group by 1, 2, 3, 4
  ), added as (
    insert into app_private.analytics_facts as c (metric, bucket_interval, bucket, key, value)
    select s.metric, s.bucket_interval, s.bucket, s.key, s.delta from sums s order by 1, 2, 3, 4
    on conflict (metric, bucket_interval, bucket, key) do update set value = c.value + excluded.value
  )
  select coalesce(sum(s.rows), 0)::integer into facts from sums s;
  return folded + more + facts;
end;
$$;

COMMENT ON FUNCTION app_private.compact_counters() IS 'pg_cron (agora-compact-counters, every minute): folds the appended deltas of the user counts, of the user analytics rollups and of the analytics facts into their rows, each in the same transaction as their deletion, so a reader (row plus deltas, one statement) sees the same figure before and after; first the new messages and orders (app_private.fold_analytics_facts). Returns how many delta rows and rows it folded.';

REVOKE ALL ON FUNCTION app_private.compact_counters() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.compact_user_counts
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.compact_user_counts() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.compact_user_counts() IS 'Folds app_private.user_count_deltas into app_private.user_counts in one transaction (the deltas it deleted, nothing written meanwhile), so readers see the same sums before and after. Run by app_private.compact_counters (pg_cron agora-compact-counters, every minute). Returns how many delta rows it folded.';

REVOKE ALL ON FUNCTION app_private.compact_user_counts() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.config_defaults
-- created in 20261121090000_foundation.sql; last changed in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.config_defaults() RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
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
    },
    "retention": {
      "accessLogDays": 90, "securityEventDays": 365, "eventDays": 3, "doneJobDays": 3,
      "deadJobDays": 30, "deliveryDays": 90, "realtimeMessageHours": 72
    }
  }'::jsonb

$$;

COMMENT ON FUNCTION app_private.config_defaults() IS 'The default of every configuration setting, and the only place defaults are written: the database enforces limits and runs scheduled work without the API, so it must know them; the API reads the effective document (app.effective_config) and only validates shapes. A new setting is a new version of this function.';

REVOKE ALL ON FUNCTION app_private.config_defaults() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.conversations_facts_changed
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.conversations_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
        begin
          if tg_op = 'INSERT' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select 1 as sign, n.* from new_rows n) r
    cross join lateral (
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          elsif tg_op = 'DELETE' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, o.* from old_rows o) r
    cross join lateral (
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          else
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, old.* union all select 1 as sign, new.*) r
    cross join lateral (
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          end if;
          return null;
        end;
        $$;

COMMENT ON FUNCTION app_private.conversations_facts_changed() IS 'After insert or delete on app.conversations (per statement) and after an update of a watched column (per row): appends the analytics facts added (+) and removed (-) to app_private.analytics_fact_deltas, an insert and never an update of a shared row. Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write app.conversations and may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.conversations_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_signins
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_signins() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.add_analytics_counts('signins',
    (select array_agg(n.created_at) from new_rows n where n.type = 'auth.signin'));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_signins() IS 'After insert on app.security_events, per statement: each auth.signin event is a sign-in of its buckets. security definer: the server''s writers may not write the rollups directly.';

REVOKE ALL ON FUNCTION app_private.count_signins() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_signups
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_signups() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.add_analytics_counts('signups', (select array_agg(n.created_at) from new_rows n));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_signups() IS 'After insert on app.users, per statement: the new users are sign-ups of their created_at''s buckets. security definer: whoever creates a user may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.count_signups() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_users_deleted
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_users_deleted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.apply_user_count_deltas(coalesce((
    select jsonb_agg(jsonb_build_object('role', o.role, 'status', o.status, 'delta', -1))
    from old_rows o), '[]'));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_users_deleted() IS 'After delete on app.users, once per statement: takes the deleted rows off app_private.user_counts. security definer: an account deletes its own row and may not write the counters.';

REVOKE ALL ON FUNCTION app_private.count_users_deleted() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_users_inserted
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_users_inserted() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.apply_user_count_deltas(coalesce((
    select jsonb_agg(jsonb_build_object('role', n.role, 'status', n.status, 'delta', 1))
    from new_rows n), '[]'));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_users_inserted() IS 'After insert on app.users, once per statement: adds the new rows to app_private.user_counts. security definer: whoever inserts a user (sign-up runs as the server) cannot write the counters directly.';

REVOKE ALL ON FUNCTION app_private.count_users_inserted() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_users_truncated
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_users_truncated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app_private.user_count_deltas;
  update app_private.user_counts set n = 0 where n <> 0;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_users_truncated() IS 'After truncate of app.users (tests, never the app): every counter is zero.';

REVOKE ALL ON FUNCTION app_private.count_users_truncated() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_users_updated
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_users_updated() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.count_users_updated() IS 'After update on app.users, once per statement: moves each user whose role or status changed from its old (role, status) counter to its new one. security definer: admins change roles and statuses and may not write the counters.';

REVOKE ALL ON FUNCTION app_private.count_users_updated() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.drop_daily_partitions
-- created in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.drop_daily_partitions(parent regclass, before timestamp with time zone) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  part record;
  dropped integer := 0;
  key text;
begin
  perform pg_catalog.set_config('lock_timeout', '5s', true);
  for part in
    select c.oid::regclass as rel,
           pg_catalog.substring(pg_catalog.pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)')::timestamptz as high
    from pg_catalog.pg_inherits i
    join pg_catalog.pg_class c on c.oid = i.inhrelid
    where i.inhparent = parent and pg_catalog.pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
    order by 2
  loop
    exit when part.high is null or part.high > before;
    execute pg_catalog.format('drop table %s', part.rel);
    dropped := dropped + 1;
  end loop;
  -- Old rows that landed in the default partition go row by row (normally there are none).
  select a.attname into key
  from pg_catalog.pg_partitioned_table p
  join pg_catalog.pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
  where p.partrelid = parent;
  for part in
    select c.oid::regclass as rel from pg_catalog.pg_inherits i
    join pg_catalog.pg_class c on c.oid = i.inhrelid
    where i.inhparent = parent and pg_catalog.pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
  loop
    execute pg_catalog.format('delete from %s where %I < %L', part.rel, key, before);
  end loop;
  return dropped;
end;
$$;

COMMENT ON FUNCTION app_private.drop_daily_partitions(parent regclass, before timestamp with time zone) IS 'Retention by partition: drops every daily partition of parent whose whole day ends at or before `before` (so rows are kept at least until then, at most a day longer), and deletes older rows from its default partition. Waits at most 5 s for the lock a drop needs; a run that gives up is repeated by the next. Returns how many partitions it dropped.';

REVOKE ALL ON FUNCTION app_private.drop_daily_partitions(parent regclass, before timestamp with time zone) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.ensure_daily_partitions
-- created in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.ensure_daily_partitions(parent regclass, from_day date, to_day date) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
  part_schema text := 'app_partitions';
  base text := (select c.relname from pg_catalog.pg_class c where c.oid = parent);
  key text;
  day date;
  name text;
  low timestamptz;
  high timestamptz;
  default_part text := base || '_default';
  created integer := 0;
  moved bigint;
begin
  -- The partition key's column (one column, range by day).
  select a.attname into key
  from pg_catalog.pg_partitioned_table p
  join pg_catalog.pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
  where p.partrelid = parent;
  if key is null then
    raise exception '% is not a partitioned table', parent using errcode = '22023';
  end if;
  -- Waits for running readers at most this long, then gives up until the next run (partitions
  -- are made days ahead): queued behind a long query, the lock would block every writer.
  perform pg_catalog.set_config('lock_timeout', '5s', true);
  if pg_catalog.to_regclass(part_schema || '.' || default_part) is null then
    execute pg_catalog.format('create table %I.%I partition of %s default',
      part_schema, default_part, parent);
    execute pg_catalog.format('alter table %I.%I enable row level security', part_schema, default_part);
  end if;
  day := from_day;
  while day <= to_day loop
    name := base || '_p' || pg_catalog.to_char(day, 'YYYYMMDD');
    if pg_catalog.to_regclass(part_schema || '.' || name) is null then
      low := day::timestamp at time zone 'UTC';
      high := (day + 1)::timestamp at time zone 'UTC';
      -- Rows of that day that fell into the default partition move into the new one first
      -- (attaching a range the default partition still holds rows of fails).
      execute pg_catalog.format('create table %I.%I (like %s including defaults including constraints)',
        part_schema, name, parent);
      execute pg_catalog.format(
        'with gone as (delete from %1$I.%2$I where %3$I >= %4$L and %3$I < %5$L returning *) '
        'insert into %1$I.%6$I select * from gone',
        part_schema, default_part, key, low, high, name);
      get diagnostics moved = row_count;
      execute pg_catalog.format('alter table %s attach partition %I.%I for values from (%L) to (%L)',
        parent, part_schema, name, low, high);
      execute pg_catalog.format('alter table %I.%I enable row level security', part_schema, name);
      created := created + 1;
    end if;
    day := day + 1;
  end loop;
  return created;
end;
$_$;

COMMENT ON FUNCTION app_private.ensure_daily_partitions(parent regclass, from_day date, to_day date) IS 'Creates the missing daily partitions (UTC days) of a table partitioned by range on a timestamp, from from_day to to_day, in schema app_partitions as <table>_pYYYYMMDD, and its default partition <table>_default; rows of a new day found in the default partition move into it. RLS is on for each (no policies: read them through the parent). Waits at most 5 s for a lock. Returns how many it created. Run by app_private.maintain_partitions (pg_cron).';

REVOKE ALL ON FUNCTION app_private.ensure_daily_partitions(parent regclass, from_day date, to_day date) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fact_key_totals
-- created in 20261204010100_foundation_store_top_vendors.sql; last changed in 20261206000100_foundation_fact_key_totals_one_statement.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fact_key_totals(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone, only_keys text[] DEFAULT NULL::text[]) RETURNS TABLE(key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET plan_cache_mode TO 'force_custom_plan'
    AS $$
declare
  first_bucket timestamptz := date_trunc(bucket_interval, range_from, 'UTC');
  -- Daily buckets: the whole ISO weeks among them are read from the weekly rows, a row per key
  -- instead of seven (the same rows summed: every interval is kept from the same facts).
  -- (For weeks and months the range [weeks_from, weeks_to) is empty.)
  weeks_from timestamptz := case when bucket_interval = 'day'
    then date_trunc('week', first_bucket + interval '6 days', 'UTC') else first_bucket end;
  weeks_to timestamptz := case when bucket_interval = 'day'
    then greatest(date_trunc('week', date_trunc('day', range_to, 'UTC') + interval '1 day', 'UTC'),
                  date_trunc('week', first_bucket + interval '6 days', 'UTC')) else first_bucket end;
begin
  return query
    select x.key, sum(x.value)
    from (
      select c.key, c.value from app_private.analytics_facts c
      where c.metric = fact_key_totals.metric and (only_keys is null or c.key = any(only_keys))
        and ((c.bucket_interval = fact_key_totals.bucket_interval and c.bucket >= first_bucket and c.bucket <= range_to
              and not (c.bucket >= weeks_from and c.bucket < weeks_to))
             or (c.bucket_interval = 'week' and c.bucket >= weeks_from and c.bucket < weeks_to))
      union all
      select d.key, d.delta from app_private.analytics_fact_deltas d
      where d.metric = fact_key_totals.metric and (only_keys is null or d.key = any(only_keys))
        and ((d.bucket_interval = fact_key_totals.bucket_interval and d.bucket >= first_bucket and d.bucket <= range_to
              and not (d.bucket >= weeks_from and d.bucket < weeks_to))
             or (d.bucket_interval = 'week' and d.bucket >= weeks_from and d.bucket < weeks_to))
      union all
      select l.key, l.value
      from app_private.analytics_fact_tail(fact_key_totals.metric, fact_key_totals.bucket_interval) l
      where l.bucket >= first_bucket and l.bucket <= range_to and (only_keys is null or l.key = any(only_keys))
    ) x
    group by 1;
end;
$$;

COMMENT ON FUNCTION app_private.fact_key_totals(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone, only_keys text[]) IS 'A metric''s total per key over the buckets from the one holding range_from to the one holding range_to (the same figures as summing app_private.fact_series: rollup rows, their deltas and the rows not yet folded), in one pass grouped by key; only the keys given when only_keys is not null. Daily buckets read the whole ISO weeks among them from the weekly rows (seven times fewer rows; every interval is kept from the same facts). Keys whose total is zero may be returned. For rankings over a range (the store section''s top vendors), where grouping by bucket first costs a group per bucket and key.';

REVOKE ALL ON FUNCTION app_private.fact_key_totals(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone, only_keys text[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fact_series
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fact_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS TABLE(t timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  -- plpgsql, not sql: its plan is kept per connection instead of made again on every call
  -- (docs/conventions.md, Plans); the stats functions call it several times a request.
  return query
    select x.bucket, x.key, sum(x.value)
    from (
      select c.bucket, c.key, c.value from app_private.analytics_facts c
      where c.metric = fact_series.metric and c.bucket_interval = fact_series.bucket_interval
        and c.bucket >= date_trunc(fact_series.bucket_interval, range_from, 'UTC') and c.bucket <= range_to
      union all
      select d.bucket, d.key, d.delta from app_private.analytics_fact_deltas d
      where d.metric = fact_series.metric and d.bucket_interval = fact_series.bucket_interval
        and d.bucket >= date_trunc(fact_series.bucket_interval, range_from, 'UTC') and d.bucket <= range_to
      union all
      select l.bucket, l.key, l.value
      from app_private.analytics_fact_tail(fact_series.metric, fact_series.bucket_interval) l
      where l.bucket >= date_trunc(fact_series.bucket_interval, range_from, 'UTC') and l.bucket <= range_to
    ) x
    group by 1, 2;
end;
$$;

COMMENT ON FUNCTION app_private.fact_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'A metric''s buckets from the one holding range_from to the one holding range_to, per key, from the rollup rows plus their deltas plus the rows not yet folded (app_private.analytics_fact_tail) in one statement (exact while the fold is late). Buckets with nothing are absent. For the app.admin_*_stats functions.';

REVOKE ALL ON FUNCTION app_private.fact_series(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fact_series_json
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fact_series_json(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
    AS $$
begin
  -- plpgsql for its kept plan, as app_private.fact_series.
  return (
    select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
    from generate_series(date_trunc(fact_series_json.bucket_interval, range_from, 'UTC'), range_to,
                         ('1 ' || fact_series_json.bucket_interval)::interval) b(t)
    left join app_private.fact_series(fact_series_json.metric, fact_series_json.bucket_interval,
                                      range_from, range_to) s on s.t = b.t);
end;
$$;

COMMENT ON FUNCTION app_private.fact_series_json(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'A keyless metric''s series as the admin analytics show it: [{t, value}] for every bucket from the one holding range_from to the one holding range_to, zero-filled, from app_private.fact_series. For the app.admin_*_stats functions.';

REVOKE ALL ON FUNCTION app_private.fact_series_json(metric text, bucket_interval text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fact_total
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fact_total(metric text) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (select coalesce(sum(t.value), 0)::bigint from app_private.fact_totals(metric) t);
end;
$$;

COMMENT ON FUNCTION app_private.fact_total(metric text) IS 'A metric''s total now over every key (0 when none).';

REVOKE ALL ON FUNCTION app_private.fact_total(metric text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fact_totals
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fact_totals(metric text) RETURNS TABLE(key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return query
    select x.key, sum(x.value)
    from (
      select c.key, c.value from app_private.analytics_facts c
      where c.metric = fact_totals.metric and c.bucket_interval = 'all' and c.bucket = '-infinity'
      union all
      select d.key, d.delta from app_private.analytics_fact_deltas d
      where d.metric = fact_totals.metric and d.bucket_interval = 'all' and d.bucket = '-infinity'
      union all
      select l.key, l.value from app_private.analytics_fact_tail(fact_totals.metric, 'all') l
    ) x
    group by 1;
end;
$$;

COMMENT ON FUNCTION app_private.fact_totals(metric text) IS 'A metric''s totals now, per key, from the rollup rows plus their deltas plus the rows not yet folded (app_private.analytics_fact_tail) in one statement. For the app.admin_*_stats functions.';

REVOKE ALL ON FUNCTION app_private.fact_totals(metric text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fold_analytics_facts
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fold_analytics_facts(margin interval DEFAULT '00:00:05'::interval, batch integer DEFAULT 100000) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
  horizon timestamptz;
  src record;
  upto timestamptz;
  nth timestamptz;
  rows_sql text;
  n integer;
  folded integer := 0;
  attempt integer;
begin
  -- No change to a folded row commits while the marks move: one that began before is waited
  -- for (it is committed before the rows are read below), one that begins after waits for the
  -- commit and sees the new mark (app_private.analytics_fold_mark). Tried rather than queued
  -- for: a fold waiting in the lock's queue would hold up every change behind it, and a
  -- transaction that changes two messages could wait for one of those (a deadlock). Given up
  -- after about 5 s (the next run folds more; the figures stay exact meanwhile).
  for attempt in 1..50 loop
    exit when pg_try_advisory_xact_lock(hashtext('app_private.analytics_fold_marks'));
    if attempt = 50 then
      raise warning 'analytics fold skipped: changes to folded tables held its lock for 5 s';
      return 0;
    end if;
    perform pg_sleep(0.1);
  end loop;
  -- Read before the statements below take their snapshots: a transaction in progress now
  -- began at or after the horizon, so every row below it is committed and visible to them.
  begin
    horizon := app_private.analytics_fold_horizon(margin);
  exception when insufficient_privilege then
    -- Skipped, not failed: the rest of agora-compact-counters goes on, and every figure stays
    -- exact (the readers add the rows above the marks); only the live tail grows until the grant.
    raise warning 'analytics fold skipped: %', sqlerrm;
    return 0;
  end;
  for src in
    select k.source, k.folded_before, d.facts, d.clock
    from app_private.analytics_fold_marks k
    join app_private.analytics_fact_definitions() d on d.source = k.source
    order by k.source
  loop
    continue when horizon is null or horizon <= src.folded_before;
    -- At most about `batch` rows a run (a fold far behind catches up run by run): up to the
    -- clock of the batch-th row, every row of that instant included. The clock is the
    -- writing transaction's start (created_at; a delivery's finished_at).
    execute format('select t.%1$I from %2$s t where t.%1$I >= $1 and t.%1$I < $2
                    order by t.%1$I offset $3 limit 1', src.clock, src.source)
      into nth using src.folded_before, horizon, greatest(batch, 1) - 1;
    upto := case when nth is null then horizon else least(horizon, nth + interval '1 microsecond') end;
    update app_private.analytics_fold_marks k set folded_before = upto where k.source = src.source;
    rows_sql := format('select 1 as sign, t.* from %s t where t.%I >= %L and t.%I < %L',
                       src.source, src.clock, src.folded_before, src.clock, upto);
    execute app_private.analytics_fact_sql('app_private.analytics_facts', rows_sql, src.facts);
    execute format('select count(*)::integer from %2$s t where t.%1$I >= $1 and t.%1$I < $2',
                   src.clock, src.source)
      into n using src.folded_before, upto;
    folded := folded + n;
    if src.source = 'app.messages' then
      -- Active senders: members inserted by the batch, once per bucket (key order: no deadlock
      -- with another writer of members), the new ones counted.
      with senders as (
        select distinct i.name as bucket_interval, date_trunc(i.name, m.created_at, 'UTC') as bucket,
               m.sender_id as user_id
        from app.messages m
        cross join (values ('day'), ('week'), ('month')) i(name)
        where m.created_at >= src.folded_before and m.created_at < upto and m.sender_id is not null
      ), added as (
        insert into app_private.analytics_fact_members (metric, bucket_interval, bucket, user_id)
        select 'messages.senders', s.bucket_interval, s.bucket, s.user_id from senders s order by 2, 3, 4
        on conflict do nothing
        returning bucket_interval, bucket
      )
      insert into app_private.analytics_facts as c (metric, bucket_interval, bucket, value)
      select 'messages.senders', a.bucket_interval, a.bucket, count(*) from added a
      group by 2, 3
      order by 2, 3
      on conflict (metric, bucket_interval, bucket, key) do update set value = c.value + excluded.value;
    end if;
  end loop;
  return folded;
end;
$_$;

COMMENT ON FUNCTION app_private.fold_analytics_facts(margin interval, batch integer) IS 'Run by app_private.compact_counters (agora-compact-counters, every minute): for each folded table (app.messages, app.orders, app.notifications, app_private.notification_deliveries), adds the facts of its rows whose clock (created_at; finished_at for deliveries) is from its mark up to the horizon (app_private.analytics_fold_horizon: now() - margin, or the start of the oldest transaction in progress if earlier; at most about batch rows a run) to app_private.analytics_facts and the batch''s senders to the members, and moves the mark, in one transaction: a reader (rollups plus the rows from the mark on, one statement) sees the same figure before and after. margin 5 seconds: see the migration 20261202000200''s header. Returns how many rows it folded.';

REVOKE ALL ON FUNCTION app_private.fold_analytics_facts(margin interval, batch integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.forget_activity
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.forget_activity() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app_private.activity_members m where m.user_id in (select o.id from old_rows o);
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.forget_activity() IS 'After delete on app.users, per statement: a deleted account''s memberships of open activity buckets go with it (the counts, which name nobody, stay).';

REVOKE ALL ON FUNCTION app_private.forget_activity() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.forget_fact_members
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.forget_fact_members() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app_private.analytics_fact_members m where m.user_id in (select o.id from old_rows o);
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.forget_fact_members() IS 'After delete on app.users, per statement: a deleted account''s memberships of open buckets go with it (the counts, which name nobody, stay).';

REVOKE ALL ON FUNCTION app_private.forget_fact_members() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_profile
-- created in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_profile() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  picture app.attachments;
begin
  -- A name a person or an ADMIN sets: 1 to 64 characters, trimmed, no control characters.
  -- (Names made at sign-up are not checked here: they come from providers, cut to 64.)
  if new.name is distinct from old.name and (
       char_length(new.name) not between 1 and 64
       or new.name <> btrim(new.name)
       or new.name ~ '[\x01-\x1f\x7f-\x9f]') then
    raise exception 'a name has 1 to 64 characters, no control characters and no spaces around it'
      using errcode = 'AG400', detail = '[{"path":"name","message":"1 to 64 characters"}]';
  end if;
  if new.image_attachment_id is distinct from old.image_attachment_id then
    if new.image_attachment_id is null then
      new.image := null;
    else
      select a.* into picture from app.attachments a where a.id = new.image_attachment_id;
      if not found or picture.uploader_id <> new.id then
        raise exception 'no such upload of yours' using errcode = 'AG404';
      end if;
      if picture.content_type not in ('image/png', 'image/jpeg', 'image/gif', 'image/webp') then
        raise exception 'a profile picture is a PNG, JPEG, GIF or WebP image' using errcode = 'AG415';
      end if;
      new.image := '/api/users/' || new.id::text || '/image?v=' || new.image_attachment_id::text;
    end if;
  elsif new.image is distinct from old.image and new.image_attachment_id is not null then
    -- The picture was replaced by a URL: the upload is no longer the profile's.
    new.image_attachment_id := null;
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_profile() IS 'Profile rules the database keeps whoever writes: a changed name has 1-64 characters, trimmed, without control characters (AG400); image_attachment_id is an upload of the user''s own (AG404 otherwise, so another person''s file is indistinguishable from none) with an image type (AG415), and sets image to its URL (null removes it). security definer: it reads the upload whatever RLS would show the writer, and decides by uploader_id itself.';

REVOKE ALL ON FUNCTION app_private.guard_profile() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_session_update
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_session_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.guard_session_update() IS 'Users revoke their own sessions and nothing more: the revocation time is the server''s clock (no backdating into the prune window) and a revoked session never changes again.';

REVOKE ALL ON FUNCTION app_private.guard_session_update() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_user_update
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_user_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.guard_user_update() IS 'Users edit their own profile but never their id, email, role or status; only an ADMIN changes roles and status, never their own, and never so that no active ADMIN is left (an advisory lock serializes concurrent demotions, so two admins cannot demote each other into an admin-less platform). A transaction without claims is a trusted server path (sign-in, seed) and passes.';

REVOKE ALL ON FUNCTION app_private.guard_user_update() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.hit_rate_limit
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) RETURNS TABLE(hits integer, reset_at timestamp with time zone)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    bucket_key,
    to_timestamp(floor(extract(epoch from now()) / window_seconds) * window_seconds),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits, r.window_start + make_interval(secs => window_seconds)
$$;

COMMENT ON FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) IS 'Counts one hit against a fixed window and returns the count and when the window ends. One upsert, so concurrent instances count exactly. Called only by the server''s own connection, before any user transaction.';

REVOKE ALL ON FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.jsonb_merge_deep
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) IS 'Objects merged key by key at every depth, anything else replaced by the patch: how a partial stored configuration is laid over the defaults.';

REVOKE ALL ON FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.maintain_partitions
-- created in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.maintain_partitions() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  parent regclass;
  created integer := 0;
begin
  for parent in
    -- The tables whose partitions are made here (theirs are in app_partitions; their indexes'
    -- partitions are there too, and inherit from the parents' indexes).
    select distinct i.inhparent::regclass from pg_catalog.pg_inherits i
    join pg_catalog.pg_class c on c.oid = i.inhrelid
    where c.relnamespace = 'app_partitions'::regnamespace and c.relkind in ('r', 'p')
    order by 1
  loop
    created := created + app_private.ensure_daily_partitions(parent,
      (pg_catalog.now() at time zone 'UTC')::date - 1,
      (pg_catalog.now() at time zone 'UTC')::date + 7);
  end loop;
  return created;
end;
$$;

COMMENT ON FUNCTION app_private.maintain_partitions() IS 'pg_cron (agora-maintain-partitions, hourly): makes sure every table partitioned by day into app_partitions (app.access_logs, app.events) has its partitions from yesterday to a week ahead, so a write never lands in the default partition while the job runs. Returns how many partitions it created.';

REVOKE ALL ON FUNCTION app_private.maintain_partitions() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.message_senders_tail
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.message_senders_tail(bucket_interval text) RETURNS TABLE(bucket timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return query
    with senders as (
      select distinct date_trunc(message_senders_tail.bucket_interval, m.created_at, 'UTC') as bucket,
             m.sender_id
      from app.messages m
      where m.created_at >= (select k.folded_before from app_private.analytics_fold_marks k
                             where k.source = 'app.messages')
        and m.created_at <= 'infinity'::timestamptz
        and m.sender_id is not null
    )
    select s.bucket, ''::text, count(*)::numeric
    from senders s
    where not exists (
      select 1 from app_private.analytics_fact_members f
      where f.metric = 'messages.senders' and f.bucket_interval = message_senders_tail.bucket_interval
        and f.bucket = s.bucket and f.user_id = s.sender_id)
    group by 1;
end;
$$;

COMMENT ON FUNCTION app_private.message_senders_tail(bucket_interval text) IS 'Active senders not yet folded: per bucket of the interval, the distinct senders of the messages created from the fold''s mark on who are not yet members of the bucket (app_private.analytics_fact_members). The readers add them to messages.senders in the same statement.';

REVOKE ALL ON FUNCTION app_private.message_senders_tail(bucket_interval text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.messages_facts_changed
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.messages_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
        declare
          mark timestamptz := app_private.analytics_fold_mark('app.messages');
        begin
          if tg_op = 'DELETE' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, o.* from old_rows o where o.created_at < mark) r
    cross join lateral (
      values ('messages.sent', r.created_at, '', 1::numeric),
             ('messages.live', case when r.deleted_at is null then '-infinity'::timestamptz end, '',
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          else
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, old.* where old.created_at < mark
           union all
           select 1 as sign, new.* where new.created_at < mark) r
    cross join lateral (
      values ('messages.sent', r.created_at, '', 1::numeric),
             ('messages.live', case when r.deleted_at is null then '-infinity'::timestamptz end, '',
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          end if;
          return null;
        end;
        $$;

COMMENT ON FUNCTION app_private.messages_facts_changed() IS 'After delete on app.messages (per statement) and after an update of a watched column (per row): for the rows created before the fold''s mark (already in the rollups), appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas; rows from the mark on are read live and folded as they are then. Inserts run no trigger (the job folds them). Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write app.messages and may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.messages_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.messages_facts_tail
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.messages_facts_tail(metric text, bucket_interval text) RETURNS TABLE(bucket timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  -- Written out rather than generated from the definitions as the orders' tail is: the
  -- generated query (a row per fact, interval and message, summed as numeric) took 42-46 ms for
  -- 5,600 messages, these 4-7 ms. tests/admin/analytics-facts.test.ts checks them against a
  -- recount. The upper bound 'infinity' changes no row but makes the mark's unknown value a
  -- range to the planner (0.5 % of the rows, not a third): the index's range read, in the plan
  -- PL/pgSQL keeps.
  if metric = 'messages.sent' and bucket_interval <> 'all' then
    return query
      select date_trunc(messages_facts_tail.bucket_interval, m.created_at, 'UTC'), ''::text,
             count(*)::numeric
      from app.messages m
      where m.created_at >= (select k.folded_before from app_private.analytics_fold_marks k
                             where k.source = 'app.messages')
        and m.created_at <= 'infinity'::timestamptz
      group by 1;
  elsif metric = 'messages.live' and bucket_interval = 'all' then
    return query
      select '-infinity'::timestamptz, ''::text, count(*)::numeric
      from app.messages m
      where m.created_at >= (select k.folded_before from app_private.analytics_fold_marks k
                             where k.source = 'app.messages')
        and m.created_at <= 'infinity'::timestamptz
        and m.deleted_at is null
      having count(*) > 0;
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.messages_facts_tail(metric text, bucket_interval text) IS 'messages.sent (per bucket) and messages.live (interval all) of the messages created from the fold''s mark on, not yet in app_private.analytics_facts (a range read of messages_created_at_id_idx: at most a minute and a margin of sends): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. The same facts as app_private.analytics_fact_definitions() gives a message.';

REVOKE ALL ON FUNCTION app_private.messages_facts_tail(metric text, bucket_interval text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.new_account_name
-- created in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.new_account_name() RETURNS text
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select 'Member ' || lpad((floor(random() * 10000))::int::text, 4, '0')
$$;

COMMENT ON FUNCTION app_private.new_account_name() IS 'The name a new account starts with when its provider gives none ("Member 4821"), until the person sets their own: never the e-mail''s local part, which would show part of the address to everyone who sees the name. Not unique; ids tell people apart.';

REVOKE ALL ON FUNCTION app_private.new_account_name() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.orders_facts_changed
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.orders_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
        declare
          mark timestamptz := app_private.analytics_fold_mark('app.orders');
        begin
          if tg_op = 'DELETE' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, o.* from old_rows o where o.created_at < mark) r
    cross join lateral (
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          else
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, old.* where old.created_at < mark
           union all
           select 1 as sign, new.* where new.created_at < mark) r
    cross join lateral (
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          end if;
          return null;
        end;
        $$;

COMMENT ON FUNCTION app_private.orders_facts_changed() IS 'After delete on app.orders (per statement) and after an update of a watched column (per row): for the rows created before the fold''s mark (already in the rollups), appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas; rows from the mark on are read live and folded as they are then. Inserts run no trigger (the job folds them). Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write app.orders and may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.orders_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.orders_facts_tail
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.orders_facts_tail(metric text, bucket_interval text) RETURNS TABLE(bucket timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
        begin
          -- The metric and interval filter the facts before they are summed.
          return query
            select x.bucket, x.key, x.value
            from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select 1 as sign, r.* from app.orders r
           where r.created_at >= (select m.folded_before from app_private.analytics_fold_marks m
                                  where m.source = 'app.orders')
             and r.created_at <= 'infinity'::timestamptz) r
    cross join lateral (
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
            where x.metric = orders_facts_tail.metric
              and x.bucket_interval = orders_facts_tail.bucket_interval;
        end;
        $$;

COMMENT ON FUNCTION app_private.orders_facts_tail(metric text, bucket_interval text) IS 'A metric''s facts in one bucket interval of the rows of app.orders created from the fold''s mark on, not yet in app_private.analytics_facts (a range read of at most a minute and a margin of rows): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. Written by migration 20261202000200 from app_private.analytics_fact_definitions().';

REVOKE ALL ON FUNCTION app_private.orders_facts_tail(metric text, bucket_interval text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_activity_members
-- created in 20261130050400_foundation_analytics_rollups.sql; last changed in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_activity_members() RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with gone as (
    delete from app_private.activity_members m
    where m.bucket < date_trunc(m.bucket_interval, now() - interval '2 days', 'UTC')
    returning 1
  ), gone_facts as (
    delete from app_private.analytics_fact_members m
    where m.bucket < date_trunc(m.bucket_interval, now() - interval '2 days', 'UTC')
    returning 1
  )
  select ((select count(*) from gone) + (select count(*) from gone_facts))::integer
$$;

COMMENT ON FUNCTION app_private.prune_activity_members() IS 'pg_cron (agora-prune-activity, hourly): deletes the members of activity and active-sender buckets that closed more than two days ago (a late access-log batch can still land in yesterday''s); their counts stay in the rollups. Returns how many rows went.';

REVOKE ALL ON FUNCTION app_private.prune_activity_members() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_auth_state
-- created in 20261121090000_foundation.sql; last changed in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_auth_state() RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app_private.rate_limits where window_start < now() - interval '1 day';
  delete from app_private.magic_links where expires_at < now() - interval '1 day';
  delete from app_private.oauth_flows
    where expires_at < now() - interval '1 day'
      and (exchange_expires_at is null or exchange_expires_at < now() - interval '1 day');
  -- A verified identity nobody exchanged is not kept past its code.
  update app_private.oauth_flows set result_identity = null
    where result_identity is not null and exchange_expires_at < now();
  delete from app_private.siwe_nonces where expires_at < now() - interval '1 day';
  delete from app.sessions
    where (revoked_at is not null and revoked_at < now() - interval '30 days')
       or expires_at < now() - interval '30 days';
$$;

COMMENT ON FUNCTION app_private.prune_auth_state() IS 'Housekeeping for sign-in state (old rate-limit windows, used magic links, finished OAuth flows and wallet nonces, long-dead sessions), run by pg_cron every 15 minutes.';

REVOKE ALL ON FUNCTION app_private.prune_auth_state() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_logs
-- created in 20261121090000_foundation.sql; last changed in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_logs(keep_days integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform app_private.drop_daily_partitions('app.access_logs',
    pg_catalog.now() - pg_catalog.make_interval(days => coalesce(keep_days, app.config_int('retention', 'accessLogDays'))));
  delete from app.security_events
  where created_at < pg_catalog.now() - pg_catalog.make_interval(days => coalesce(keep_days, app.config_int('retention', 'securityEventDays')));
end;
$$;

COMMENT ON FUNCTION app_private.prune_logs(keep_days integer) IS 'pg_cron (agora-prune-logs, daily): drops the access log''s daily partitions older than retention.accessLogDays (default 90) and deletes security events older than retention.securityEventDays (default 365); keep_days, when given, replaces both.';

REVOKE ALL ON FUNCTION app_private.prune_logs(keep_days integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.public_profile_json
-- created in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.public_profile_json(u app.users) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object('id', u.id, 'name', u.name, 'image', u.image, 'bio', u.bio,
    'role', u.role)
$$;

COMMENT ON FUNCTION app_private.public_profile_json(u app.users) IS 'A person''s public profile as GET /api/users/{id} and the profile.updated event show it: id, name, image, bio and role; never the e-mail, time zone or locale.';

REVOKE ALL ON FUNCTION app_private.public_profile_json(u app.users) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.publish_profile
-- created in 20261129160000_foundation_profiles.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.publish_profile() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.emit_event('user:' || new.id::text, 'profile.updated',
    app_private.public_profile_json(new));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.publish_profile() IS 'Emits profile.updated on user:<id> with the public profile when the name, image, bio or role changed, so the person''s other tabs and devices show it at once. security definer: app_private.emit_event is not the writer''s to call.';

REVOKE ALL ON FUNCTION app_private.publish_profile() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_activity
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_activity(users uuid[], ats timestamp with time zone[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with facts as (
    select distinct i.name as bucket_interval, date_trunc(i.name, a.at, 'UTC') as bucket, a.user_id
    from unnest(users, ats) a(user_id, at)
    cross join (values ('day'), ('month'), ('week')) i(name)
    where a.user_id is not null and a.at is not null
  ), added as (
    insert into app_private.activity_members (bucket_interval, bucket, user_id)
    select bucket_interval, bucket, user_id from facts order by 1, 2, 3
    on conflict do nothing
    returning bucket_interval, bucket
  )
  insert into app_private.analytics_count_deltas (metric, bucket_interval, bucket, delta)
  select 'active', bucket_interval, bucket, count(*) from added
  group by 2, 3
$$;

COMMENT ON FUNCTION app_private.record_activity(users uuid[], ats timestamp with time zone[]) IS 'Records that users were active at times (pairs of the two arrays): each user new to a day, week or month bucket becomes its member and adds one to its active count (a delta). Members are inserted in key order, so concurrent writers never deadlock; a user added by two transactions at once counts once (the second waits for the first and adds nothing if it commits).';

REVOKE ALL ON FUNCTION app_private.record_activity(users uuid[], ats timestamp with time zone[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_request_activity
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_request_activity() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.record_activity(
    (select array_agg(n.user_id order by n.id) from new_rows n where n.user_id is not null),
    (select array_agg(n.created_at order by n.id) from new_rows n where n.user_id is not null));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.record_request_activity() IS 'After insert on app.access_logs, per statement (one per batch of the log writer): each signed-in request makes its user active in the buckets of its time. security definer for the same reason as the other rollup triggers.';

REVOKE ALL ON FUNCTION app_private.record_request_activity() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_role_change
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_role_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.record_role_change() IS 'Writes the audit row of every role change and, for a change by a signed-in ADMIN, its admin.role_changed security event, in the same transaction. security definer: nobody writes these rows directly.';

REVOKE ALL ON FUNCTION app_private.record_role_change() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_session_activity
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_session_activity() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if tg_op = 'INSERT' then
    perform app_private.record_activity(
      (select array_agg(n.user_id order by n.id) from new_rows n),
      (select array_agg(n.created_at order by n.id) from new_rows n));
  else
    perform app_private.record_activity(
      (select array_agg(n.user_id order by n.id) from new_rows n join old_rows o on o.id = n.id
       where n.refreshed_at is distinct from o.refreshed_at),
      (select array_agg(n.refreshed_at order by n.id) from new_rows n join old_rows o on o.id = n.id
       where n.refreshed_at is distinct from o.refreshed_at));
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.record_session_activity() IS 'After insert or update on app.sessions, per statement: a session made or refreshed makes its user active in the buckets of that time. security definer: sessions are written by users and the server, the rollups by neither.';

REVOKE ALL ON FUNCTION app_private.record_session_activity() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.recount_analytics_facts
-- created in 20261202000200_foundation_analytics_facts.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.recount_analytics_facts() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  def record;
  horizon timestamptz;
begin
  -- Writers wait while the facts are rebuilt, so none of their deltas is lost. The tables first,
  -- then the marks' lock, in the order a writer's change takes them.
  for def in select * from app_private.analytics_fact_definitions() d order by d.source loop
    execute format('lock table %s in share row exclusive mode', def.source);
  end loop;
  perform pg_advisory_xact_lock(hashtext('app_private.analytics_fold_marks'));
  lock table app_private.analytics_facts in exclusive mode;
  lock table app_private.analytics_fact_deltas in exclusive mode;
  lock table app_private.analytics_fact_members in exclusive mode;
  lock table app_private.analytics_fold_marks in exclusive mode;
  -- The folded tables are counted up to a horizon (a transaction begun earlier may still insert
  -- below now()); their rows from it on are the readers' live tail until the next fold.
  horizon := app_private.analytics_fold_horizon(interval '0');
  delete from app_private.analytics_fact_deltas;
  delete from app_private.analytics_facts;
  delete from app_private.analytics_fact_members;
  insert into app_private.analytics_fold_marks as k (source, folded_before)
  select d.source, horizon from app_private.analytics_fact_definitions() d where d.folded
  on conflict (source) do update set folded_before = excluded.folded_before;
  for def in select * from app_private.analytics_fact_definitions() d order by d.source loop
    execute app_private.analytics_fact_sql('app_private.analytics_facts',
      format('select 1 as sign, t.* from %s t', def.source)
        || case when def.folded then format(' where t.%I < %L', def.clock, horizon) else '' end,
      def.facts);
  end loop;
  insert into app_private.analytics_fact_members (metric, bucket_interval, bucket, user_id)
  select distinct 'messages.senders', i.name, date_trunc(i.name, m.created_at, 'UTC'), m.sender_id
  from app.messages m cross join (values ('day'), ('week'), ('month')) i(name)
  where m.sender_id is not null and m.created_at < horizon;
  insert into app_private.analytics_facts (metric, bucket_interval, bucket, value)
  select m.metric, m.bucket_interval, m.bucket, count(*)
  from app_private.analytics_fact_members m group by 1, 2, 3;
  perform app_private.prune_activity_members();
end;
$$;

COMMENT ON FUNCTION app_private.recount_analytics_facts() IS 'Rebuilds app_private.analytics_facts from the counted tables (full scans; their writers wait meanwhile) and sets the marks of the folded tables to the horizon (app_private.analytics_fold_horizon): after rows were written with triggers off (a bulk load with session_replication_role = replica) or with a clock below the mark (a backfill), or should an operator doubt the figures. It counts the rows there are: active senders of removed messages, deleted notifications and the deliveries retention pruned (older than retention.deliveryDays), which the rollups keep as history, are counted no more.';

REVOKE ALL ON FUNCTION app_private.recount_analytics_facts() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.recount_users
-- created in 20261130050000_foundation_user_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.recount_users() RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.recount_users() IS 'Rebuilds app_private.user_counts from app.users (a full count, writers of users wait meanwhile): after rows were written with triggers off (a bulk load with session_replication_role = replica), or should an operator doubt the counters.';

REVOKE ALL ON FUNCTION app_private.recount_users() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.touch_updated_at
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.touch_updated_at() IS 'Keeps updated_at honest without trusting callers.';

REVOKE ALL ON FUNCTION app_private.touch_updated_at() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.wallet_transactions_facts_changed
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.wallet_transactions_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
        begin
          if tg_op = 'INSERT' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select 1 as sign, n.* from new_rows n) r
    cross join lateral (
      values ('wallet_transactions.all', '-infinity'::timestamptz,
              r.status::text || ' ' || r.direction::text, 1::numeric),
             ('wallet_transactions.volume',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              r.amount),
             ('wallet_transactions.transfers',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          elsif tg_op = 'DELETE' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, o.* from old_rows o) r
    cross join lateral (
      values ('wallet_transactions.all', '-infinity'::timestamptz,
              r.status::text || ' ' || r.direction::text, 1::numeric),
             ('wallet_transactions.volume',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              r.amount),
             ('wallet_transactions.transfers',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          else
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, old.* union all select 1 as sign, new.*) r
    cross join lateral (
      values ('wallet_transactions.all', '-infinity'::timestamptz,
              r.status::text || ' ' || r.direction::text, 1::numeric),
             ('wallet_transactions.volume',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              r.amount),
             ('wallet_transactions.transfers',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          end if;
          return null;
        end;
        $$;

COMMENT ON FUNCTION app_private.wallet_transactions_facts_changed() IS 'After insert or delete on app.wallet_transactions (per statement) and after an update of a watched column (per row): appends the analytics facts added (+) and removed (-) to app_private.analytics_fact_deltas, an insert and never an update of a shared row. Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write app.wallet_transactions and may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.wallet_transactions_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.wallets_facts_changed
-- created in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.wallets_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
        begin
          if tg_op = 'INSERT' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select 1 as sign, n.* from new_rows n) r
    cross join lateral (
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          elsif tg_op = 'DELETE' then
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, o.* from old_rows o) r
    cross join lateral (
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          else
            
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, old.* union all select 1 as sign, new.*) r
    cross join lateral (
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
          end if;
          return null;
        end;
        $$;

COMMENT ON FUNCTION app_private.wallets_facts_changed() IS 'After insert or delete on app.wallets (per statement) and after an update of a watched column (per row): appends the analytics facts added (+) and removed (-) to app_private.analytics_fact_deltas, an insert and never an update of a shared row. Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write app.wallets and may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.wallets_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-compact-counters
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: * * * * *
-- command:
--   select app_private.compact_counters()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-maintain-partitions
-- created in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 7 * * * *
-- command:
--   select app_private.maintain_partitions()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-activity
-- created in 20261130050400_foundation_analytics_rollups.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 13 * * * *
-- command:
--   select app_private.prune_activity_members()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-auth-state
-- created in 20261121090000_foundation.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: */15 * * * *
-- command:
--   select app_private.prune_auth_state()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-logs
-- created in 20261121090000_foundation.sql; last changed in 20261130050100_foundation_retention_access_log_partitions.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 17 3 * * *
-- command:
--   select app_private.prune_logs()
