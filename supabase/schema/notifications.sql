-- Agora's schema as it is now, domain notifications: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124100000_notifications.sql
--   supabase/migrations/20261124150000_inbox_session_check.sql
--   supabase/migrations/20261128110000_notifications_delivery_slices.sql
--   supabase/migrations/20261130040000_notifications_growth.sql
--   supabase/migrations/20261130100000_notifications_digest_lock_order.sql
--   supabase/migrations/20261204000000_notifications_analytics_facts.sql
--   supabase/migrations/20261205000000_notifications_read_marks.sql
--   supabase/migrations/20261205000100_notifications_bulk_accept_counts.sql
--   supabase/migrations/20261206000000_notifications_batch_rerun.sql
--   supabase/migrations/20261207000000_notifications_read_counter_lock.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.notification_batch_status
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.notification_batch_status AS ENUM (
    'queued',
    'sending',
    'done'
);

COMMENT ON TYPE app.notification_batch_status IS 'queued: accepted, nothing written yet; sending: inbox rows written, deliveries going out; done.';

GRANT ALL ON TYPE app.notification_batch_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.notification_priority
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.notification_priority AS ENUM (
    'low',
    'normal',
    'high',
    'critical'
);

COMMENT ON TYPE app.notification_priority IS 'How urgent a notification is, in rank order; critical ignores preferences and quiet hours.';

GRANT ALL ON TYPE app.notification_priority TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.notification_type
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.notification_type AS ENUM (
    'OPPORTUNITY',
    'MESSAGE',
    'ENTITY',
    'SYSTEM',
    'WALLET'
);

COMMENT ON TYPE app.notification_type IS 'What a notification is about; preferences are chosen per type.';

GRANT ALL ON TYPE app.notification_type TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.push_platform
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.push_platform AS ENUM (
    'web',
    'ios',
    'android'
);

COMMENT ON TYPE app.push_platform IS 'The kind of device a push token belongs to.';

GRANT ALL ON TYPE app.push_platform TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app_private.delivery_channel
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app_private.delivery_channel AS ENUM (
    'push',
    'email'
);

COMMENT ON TYPE app_private.delivery_channel IS 'The channels that leave the platform.';

-- ---------------------------------------------------------------------------------------------
-- type app_private.delivery_status
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app_private.delivery_status AS ENUM (
    'queued',
    'sent',
    'failed',
    'pruned'
);

COMMENT ON TYPE app_private.delivery_status IS 'queued: waiting (for its job, quiet hours or a retry); sent: accepted by FCM or the mailer; failed: not delivered, error_code says why; pruned: FCM refused the token, which was deleted.';

-- ---------------------------------------------------------------------------------------------
-- table app.notification_batches
-- created in 20261124100000_notifications.sql; last changed in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.notification_batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    created_by uuid,
    idempotency_key text,
    request_hash text,
    audience jsonb NOT NULL,
    type app.notification_type NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    priority app.notification_priority DEFAULT 'normal'::app.notification_priority NOT NULL,
    channels text[] NOT NULL,
    status app.notification_batch_status DEFAULT 'queued'::app.notification_batch_status NOT NULL,
    recipients integer DEFAULT 0 NOT NULL,
    chunks integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    written integer DEFAULT 0 NOT NULL,
    push_sent integer DEFAULT 0 NOT NULL,
    push_failed integer DEFAULT 0 NOT NULL,
    email_sent integer DEFAULT 0 NOT NULL,
    CONSTRAINT notification_batches_audience_check CHECK ((jsonb_typeof(audience) = 'object'::text)),
    CONSTRAINT notification_batches_body_check CHECK ((char_length(body) <= 2000)),
    CONSTRAINT notification_batches_channels_check CHECK ((((cardinality(channels) >= 1) AND (cardinality(channels) <= 3)) AND (channels <@ ARRAY['inApp'::text, 'push'::text, 'email'::text]))),
    CONSTRAINT notification_batches_chunks_check CHECK ((chunks >= 0)),
    CONSTRAINT notification_batches_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT notification_batches_email_sent_check CHECK ((email_sent >= 0)),
    CONSTRAINT notification_batches_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 255))),
    CONSTRAINT notification_batches_push_failed_check CHECK ((push_failed >= 0)),
    CONSTRAINT notification_batches_push_sent_check CHECK ((push_sent >= 0)),
    CONSTRAINT notification_batches_recipients_check CHECK ((recipients >= 0)),
    CONSTRAINT notification_batches_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200))),
    CONSTRAINT notification_batches_written_check CHECK ((written >= 0))
);

COMMENT ON TABLE app.notification_batches IS 'Bulk sends by ADMINs: the request (audience, notification, channels), its Idempotency-Key and progress. Written only through app.create_notification_batch and the batch jobs; ADMINs read them.';

COMMENT ON COLUMN app.notification_batches.written IS 'Inbox rows the batch''s chunks wrote so far (each chunk adds its own in the transaction that writes them): the progress poll''s created.';

COMMENT ON COLUMN app.notification_batches.push_sent IS 'The batch''s pushes sent so far, added by app_private.count_batch_outcomes as deliveries finish.';

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_idempotency_key UNIQUE (created_by, idempotency_key);

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_pkey PRIMARY KEY (id);

CREATE INDEX notification_batches_created_at_idx ON app.notification_batches USING btree (created_at DESC, id DESC);

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_created_by_fkey FOREIGN KEY (created_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.notification_batches ENABLE ROW LEVEL SECURITY;

CREATE POLICY notification_batches_select_admin ON app.notification_batches FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

GRANT SELECT ON TABLE app.notification_batches TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.notification_counters
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.notification_counters (
    user_id uuid NOT NULL,
    unread integer DEFAULT 0 NOT NULL,
    CONSTRAINT notification_counters_unread_check CHECK ((unread >= 0))
);

COMMENT ON TABLE app.notification_counters IS 'Each user''s unread inbox notifications, kept by the triggers on app.notifications (insert: a statement trigger adding the new unread inbox rows per user; read and delete: row triggers), so GET /api/notifications reads one row instead of counting. Users read their own.';

ALTER TABLE ONLY app.notification_counters
    ADD CONSTRAINT notification_counters_pkey PRIMARY KEY (user_id);

ALTER TABLE ONLY app.notification_counters
    ADD CONSTRAINT notification_counters_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.notification_counters ENABLE ROW LEVEL SECURITY;

CREATE POLICY notification_counters_select_own ON app.notification_counters FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.notification_counters TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.notification_preferences
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.notification_preferences (
    user_id uuid NOT NULL,
    types jsonb DEFAULT '{}'::jsonb NOT NULL,
    quiet_start time without time zone,
    quiet_end time without time zone,
    quiet_time_zone text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notification_preferences_quiet_together CHECK ((((quiet_start IS NULL) = (quiet_end IS NULL)) AND ((quiet_start IS NULL) = (quiet_time_zone IS NULL)))),
    CONSTRAINT notification_preferences_types_check CHECK ((jsonb_typeof(types) = 'object'::text))
);

COMMENT ON TABLE app.notification_preferences IS 'A user''s own choices: per type and channel ({ TYPE: { inApp, push, email } }, only what was chosen) and quiet hours (HH:MM to HH:MM in an IANA time zone, possibly across midnight) that hold push and e-mail back. Users read and write their own row; a trigger validates it.';

ALTER TABLE ONLY app.notification_preferences
    ADD CONSTRAINT notification_preferences_pkey PRIMARY KEY (user_id);

CREATE TRIGGER notification_preferences_validate BEFORE INSERT OR UPDATE ON app.notification_preferences FOR EACH ROW EXECUTE FUNCTION app_private.validate_notification_preferences();

ALTER TABLE ONLY app.notification_preferences
    ADD CONSTRAINT notification_preferences_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.notification_preferences ENABLE ROW LEVEL SECURITY;

CREATE POLICY notification_preferences_insert_own ON app.notification_preferences FOR INSERT TO authenticated WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

CREATE POLICY notification_preferences_select_own ON app.notification_preferences FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

CREATE POLICY notification_preferences_update_own ON app.notification_preferences FOR UPDATE TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.notification_preferences TO authenticated;

GRANT INSERT(user_id) ON TABLE app.notification_preferences TO authenticated;

GRANT INSERT(types),UPDATE(types) ON TABLE app.notification_preferences TO authenticated;

GRANT INSERT(quiet_start),UPDATE(quiet_start) ON TABLE app.notification_preferences TO authenticated;

GRANT INSERT(quiet_end),UPDATE(quiet_end) ON TABLE app.notification_preferences TO authenticated;

GRANT INSERT(quiet_time_zone),UPDATE(quiet_time_zone) ON TABLE app.notification_preferences TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.notification_read_marks
-- created in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.notification_read_marks (
    user_id uuid NOT NULL,
    read_to timestamp with time zone NOT NULL,
    read_at timestamp with time zone NOT NULL
);

COMMENT ON TABLE app.notification_read_marks IS 'Pending read-alls: each row says that every inbox notification of user_id created up to read_to was read at read_at. Written by app.mark_all_notifications_read instead of updating every unread row (one row whatever the inbox), removed by app_private.apply_read_marks once it has written read_at into the rows it covers. A row is covered by the earliest mark with read_to at or after its created_at (app.notification_read_at). Users read their own (readers under RLS compute read times from them); only the server writes.';

ALTER TABLE ONLY app.notification_read_marks
    ADD CONSTRAINT notification_read_marks_pkey PRIMARY KEY (user_id, read_to);

ALTER TABLE ONLY app.notification_read_marks
    ADD CONSTRAINT notification_read_marks_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.notification_read_marks ENABLE ROW LEVEL SECURITY;

CREATE POLICY notification_read_marks_select_own ON app.notification_read_marks FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.notification_read_marks TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.notifications
-- created in 20261124100000_notifications.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.notifications (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    type app.notification_type NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    priority app.notification_priority DEFAULT 'normal'::app.notification_priority NOT NULL,
    collapse_key text,
    batch_id uuid,
    inbox boolean DEFAULT true NOT NULL,
    read_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notifications_body_check CHECK ((char_length(body) <= 2000)),
    CONSTRAINT notifications_collapse_key_check CHECK (((char_length(collapse_key) >= 1) AND (char_length(collapse_key) <= 200))),
    CONSTRAINT notifications_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT notifications_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
)
WITH (fillfactor='80');

COMMENT ON TABLE app.notifications IS 'Each user''s notifications. Rows with inbox = false exist only for delivery (the type''s in-app channel is off) and are never shown. At most one unread row per (user, collapse_key). Written only through app_private.notify_many; users read, mark read and delete their own.';

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

CREATE UNIQUE INDEX notifications_batch_user_key ON app.notifications USING btree (batch_id, user_id) WHERE (batch_id IS NOT NULL);

CREATE UNIQUE INDEX notifications_collapse_key ON app.notifications USING btree (user_id, collapse_key) WHERE ((read_at IS NULL) AND (collapse_key IS NOT NULL));

CREATE INDEX notifications_created_at_brin ON app.notifications USING brin (created_at);

CREATE INDEX notifications_inbox_idx ON app.notifications USING btree (user_id, created_at DESC, id DESC) WHERE inbox;

CREATE INDEX notifications_unread_idx ON app.notifications USING btree (user_id, created_at DESC, id DESC) WHERE (inbox AND (read_at IS NULL));

CREATE TRIGGER notifications_count_new AFTER INSERT ON app.notifications REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_new_notifications();

CREATE TRIGGER notifications_deleted_event AFTER DELETE ON app.notifications FOR EACH ROW WHEN (old.inbox) EXECUTE FUNCTION app_private.notification_deleted_event();

CREATE TRIGGER notifications_facts_truncated AFTER TRUNCATE ON app.notifications FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER notifications_facts_updated AFTER UPDATE ON app.notifications REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.notifications_facts_changed();

CREATE TRIGGER notifications_guard_read BEFORE UPDATE OF read_at ON app.notifications FOR EACH ROW EXECUTE FUNCTION app_private.guard_notification_read();

CREATE TRIGGER notifications_index_new AFTER INSERT ON app.notifications REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.index_new_notifications();

CREATE TRIGGER notifications_read_events AFTER UPDATE ON app.notifications REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.notifications_read_events();

CREATE TRIGGER notifications_reindex_reworded AFTER UPDATE ON app.notifications REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.reindex_reworded_notifications();

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES app.notification_batches(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.notifications ENABLE ROW LEVEL SECURITY;

CREATE POLICY notifications_select_own ON app.notifications FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND inbox));

CREATE POLICY notifications_update_own ON app.notifications FOR UPDATE TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND inbox)) WITH CHECK (((user_id = ( SELECT auth.uid() AS uid)) AND inbox));

GRANT SELECT ON TABLE app.notifications TO authenticated;

GRANT UPDATE(read_at) ON TABLE app.notifications TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.push_devices
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.push_devices (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    token text NOT NULL,
    platform app.push_platform NOT NULL,
    device_name text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT push_devices_device_name_check CHECK ((char_length(device_name) <= 200)),
    CONSTRAINT push_devices_token_check CHECK (((char_length(token) >= 1) AND (char_length(token) <= 1024)))
);

COMMENT ON TABLE app.push_devices IS 'FCM registration tokens, one row per token. A token registered by another user moves to that user (a new row, so deliveries queued for the previous owner never reach the new one). Deleted when FCM says the token is unregistered or invalid. Users see their own devices but never a token (no column grant); registration goes through app.register_push_device.';

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_token_key UNIQUE (token);

CREATE INDEX push_devices_user_id_idx ON app.push_devices USING btree (user_id);

CREATE TRIGGER push_devices_touch BEFORE UPDATE ON app.push_devices FOR EACH ROW EXECUTE FUNCTION app_private.touch_push_device();

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.push_devices ENABLE ROW LEVEL SECURITY;

CREATE POLICY push_devices_select_own ON app.push_devices FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT(id) ON TABLE app.push_devices TO authenticated;

GRANT SELECT(user_id) ON TABLE app.push_devices TO authenticated;

GRANT SELECT(platform) ON TABLE app.push_devices TO authenticated;

GRANT SELECT(device_name) ON TABLE app.push_devices TO authenticated;

GRANT SELECT(created_at) ON TABLE app.push_devices TO authenticated;

GRANT SELECT(updated_at) ON TABLE app.push_devices TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.message_digests
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.message_digests (
    conversation_id uuid NOT NULL,
    digested_seq bigint DEFAULT 0 NOT NULL,
    digested_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT message_digests_digested_seq_check CHECK ((digested_seq >= 0))
);

COMMENT ON TABLE app_private.message_digests IS 'How far each conversation''s messages were told to its participants'' inboxes (the last message seq a digest covered). Server only.';

ALTER TABLE ONLY app_private.message_digests
    ADD CONSTRAINT message_digests_pkey PRIMARY KEY (conversation_id);

ALTER TABLE ONLY app_private.message_digests
    ADD CONSTRAINT message_digests_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE app_private.message_digests ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.message_digests_pending
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.message_digests_pending (
    conversation_id uuid NOT NULL,
    marked_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app_private.message_digests_pending IS 'Conversations with messages waiting for their digest (the MESSAGE notifications of the other participants): one row while any wait. Server only.';

ALTER TABLE ONLY app_private.message_digests_pending
    ADD CONSTRAINT message_digests_pending_pkey PRIMARY KEY (conversation_id);

ALTER TABLE ONLY app_private.message_digests_pending
    ADD CONSTRAINT message_digests_pending_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE app_private.message_digests_pending ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.notification_batch_chunks
-- created in 20261124100000_notifications.sql; last changed in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.notification_batch_chunks (
    batch_id uuid NOT NULL,
    chunk integer NOT NULL,
    first_user_id uuid NOT NULL,
    last_user_id uuid NOT NULL,
    announced_at timestamp with time zone,
    done_at timestamp with time zone,
    written_at timestamp with time zone,
    recipients integer,
    CONSTRAINT notification_batch_chunks_chunk_check CHECK ((chunk >= 0)),
    CONSTRAINT notification_batch_chunks_recipients_check CHECK ((recipients >= 0))
);

COMMENT ON TABLE app_private.notification_batch_chunks IS 'A bulk batch''s recipients in user-id ranges, one job per range: its live events (once, announced_at) and its deliveries. Server only.';

COMMENT ON COLUMN app_private.notification_batch_chunks.written_at IS 'When the chunk''s inbox rows and deliveries were written (app_private.write_batch_chunk, one transaction): a chunk is written once, whatever the job''s retries.';

ALTER TABLE ONLY app_private.notification_batch_chunks
    ADD CONSTRAINT notification_batch_chunks_pkey PRIMARY KEY (batch_id, chunk);

ALTER TABLE ONLY app_private.notification_batch_chunks
    ADD CONSTRAINT notification_batch_chunks_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES app.notification_batches(id) ON DELETE CASCADE;

ALTER TABLE app_private.notification_batch_chunks ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.notification_deliveries
-- created in 20261124100000_notifications.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.notification_deliveries (
    id bigint NOT NULL,
    notification_id uuid NOT NULL,
    channel app_private.delivery_channel NOT NULL,
    device_id uuid,
    status app_private.delivery_status DEFAULT 'queued'::app_private.delivery_status NOT NULL,
    not_before timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    in_flight_since timestamp with time zone,
    in_flight_token uuid,
    error_code text,
    error_message text,
    provider_message_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT notification_deliveries_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT notification_deliveries_email_has_no_device CHECK (((channel = 'push'::app_private.delivery_channel) OR (device_id IS NULL))),
    CONSTRAINT notification_deliveries_error_code_check CHECK ((char_length(error_code) <= 100)),
    CONSTRAINT notification_deliveries_error_message_check CHECK ((char_length(error_message) <= 1000)),
    CONSTRAINT notification_deliveries_finished CHECK (((status = 'queued'::app_private.delivery_status) = (finished_at IS NULL))),
    CONSTRAINT notification_deliveries_in_flight CHECK (((in_flight_since IS NULL) = (in_flight_token IS NULL))),
    CONSTRAINT notification_deliveries_provider_message_id_check CHECK ((char_length(provider_message_id) <= 500))
);

COMMENT ON TABLE app_private.notification_deliveries IS 'Push and e-mail deliveries: one per notification and device (push) or per notification (e-mail), with status, attempts, FCM''s error code and message name. Server only.';

ALTER TABLE app_private.notification_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.notification_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_pkey PRIMARY KEY (id);

CREATE INDEX notification_deliveries_device_id_idx ON app_private.notification_deliveries USING btree (device_id) WHERE (device_id IS NOT NULL);

CREATE UNIQUE INDEX notification_deliveries_email_key ON app_private.notification_deliveries USING btree (notification_id) WHERE (channel = 'email'::app_private.delivery_channel);

CREATE INDEX notification_deliveries_finished_at_idx ON app_private.notification_deliveries USING btree (finished_at) WHERE (finished_at IS NOT NULL);

CREATE INDEX notification_deliveries_notification_id_idx ON app_private.notification_deliveries USING btree (notification_id);

CREATE UNIQUE INDEX notification_deliveries_push_key ON app_private.notification_deliveries USING btree (notification_id, device_id) WHERE (channel = 'push'::app_private.delivery_channel);

CREATE TRIGGER notification_deliveries_batch_outcomes AFTER UPDATE ON app_private.notification_deliveries REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_batch_outcomes();

CREATE TRIGGER notification_deliveries_facts_truncated AFTER TRUNCATE ON app_private.notification_deliveries FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER notification_deliveries_facts_updated AFTER UPDATE ON app_private.notification_deliveries FOR EACH ROW WHEN ((((old.finished_at IS NOT NULL) OR (new.finished_at < now())) AND ((((old.finished_at IS DISTINCT FROM new.finished_at) OR (old.status IS DISTINCT FROM new.status)) OR (old.channel IS DISTINCT FROM new.channel)) OR (old.notification_id IS DISTINCT FROM new.notification_id)))) EXECUTE FUNCTION app_private.notification_deliveries_facts_changed();

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_device_id_fkey FOREIGN KEY (device_id) REFERENCES app.push_devices(id) ON DELETE SET NULL;

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES app.notifications(id) ON DELETE CASCADE;

ALTER TABLE app_private.notification_deliveries ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.notification_search
-- created in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.notification_search (
    notification_id uuid NOT NULL,
    user_id uuid NOT NULL,
    type app.notification_type NOT NULL,
    created_at timestamp with time zone NOT NULL,
    words text NOT NULL
);

COMMENT ON TABLE app_private.notification_search IS 'The inbox''s search index, beside the notifications: one row per inbox notification (its user, type, creation time and lower(title || '' '' || body)), kept by statement triggers on app.notifications (insert; an update that changes a title or body, as a collapse does), deleted with it. A table of its own so that marking read, which rewrites every index entry of the row (read_at is in the unread index''s predicate, so never a HOT update), does not rewrite 50 trigrams: read-all took three times as long with the trigram index on app.notifications. Server only: read through app.inbox_search_ids.';

ALTER TABLE ONLY app_private.notification_search
    ADD CONSTRAINT notification_search_pkey PRIMARY KEY (notification_id);

CREATE INDEX notification_search_words_idx ON app_private.notification_search USING gin (user_id, type, words extensions.gin_trgm_ops) WITH (gin_pending_list_limit='512');

ALTER TABLE ONLY app_private.notification_search
    ADD CONSTRAINT notification_search_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES app.notifications(id) ON DELETE CASCADE;

ALTER TABLE app_private.notification_search ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.notification_write_gates
-- created in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.notification_write_gates (
    user_id uuid NOT NULL
);

COMMENT ON TABLE app_private.notification_write_gates IS 'One row per user who has been notified: the lock that keeps a read-all''s mark exact. Writers of notifications (app_private.notify_rows, write_batch_chunk) lock their recipients'' rows (FOR UPDATE, in user order) before they stamp created_at and hold them until they commit; a read-all that writes a mark locks its row too, so it waits for every row stamped before it and every later row is stamped after its commit. Exclusive, not shared: a read-all waiting behind a stream of shared lockers was never let in (row locks queue only conflicting requests), and exclusive requests queue in order. Writers of one user thus take turns, as they already did at the counter. Nothing else touches these rows: the counters (app.notification_counters) would do, but marking read updates them, and a reader queued behind a waiting read-all while a collapse waited for the reader''s row deadlocked (seen in tests/notifications/read-marks.test.ts). No grants: server only.';

ALTER TABLE ONLY app_private.notification_write_gates
    ADD CONSTRAINT notification_write_gates_pkey PRIMARY KEY (user_id);

ALTER TABLE ONLY app_private.notification_write_gates
    ADD CONSTRAINT notification_write_gates_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app_private.notification_write_gates ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.create_notification
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  target uuid := coalesce(target_user_id, auth.uid());
  written record;
begin
  if me is null then
    raise exception 'sign in to create notifications' using errcode = 'AG403';
  end if;
  if target <> me and not app.is_admin() then
    raise exception 'only an ADMIN notifies other users' using errcode = 'AG403';
  end if;
  if not exists (select 1 from app.users u where u.id = target) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select * into written
  from app_private.notify_many(array[target], notification_type, title, body, data, priority);
  return (select app.notification_json(n) || jsonb_build_object('userId', n.user_id, 'inbox', n.inbox)
          from app.notifications n where n.id = written.notification_id);
end;
$$;

COMMENT ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) IS 'POST /api/notifications: a notification for oneself (target null or one''s own id), or, for an ADMIN, for anyone (AG403 otherwise; AG404 for an unknown user), through app_private.notify_many and its rules. Returns the notification with userId and inbox (false: the recipient''s preferences keep it out of their inbox). security definer: it writes through the one way in, which API roles cannot call; the caller is checked here.';

REVOKE ALL ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.create_notification_batch
-- created in 20261124100000_notifications.sql; last changed in 20261205000100_notifications_bulk_accept_counts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[] DEFAULT ARRAY['inApp'::text, 'push'::text], idempotency_key text DEFAULT NULL::text, request_hash text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
#variable_conflict use_variable
declare
  me uuid := auth.uid();
  b app.notification_batches;
  recipient_count integer;
  max_recipients integer := app.config_int('notifications', 'bulkMaxRecipients');
  kind app.notification_type;
  urgency app.notification_priority;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN sends bulk notifications' using errcode = 'AG403';
  end if;
  if jsonb_typeof(audience) <> 'object'
     or not (audience ? 'userIds' or audience ? 'roles' or coalesce((audience ->> 'all')::boolean, false)) then
    raise exception 'an audience names userIds, roles or all' using errcode = 'AG400';
  end if;
  kind := (notification ->> 'type')::app.notification_type;
  urgency := coalesce(notification ->> 'priority', 'normal')::app.notification_priority;
  if char_length(coalesce(notification ->> 'title', '')) not between 1 and 200
     or char_length(coalesce(notification ->> 'body', '')) > 2000
     or jsonb_typeof(coalesce(notification -> 'data', '{}')) <> 'object'
     or octet_length(coalesce(notification -> 'data', '{}')::text) > 2048 then
    raise exception 'a notification has a title of 1 to 200 characters, a body of at most 2000 and data of at most 2048 bytes'
      using errcode = 'AG400';
  end if;
  if idempotency_key is not null then
    select * into b from app.notification_batches x
    where x.created_by = me and x.idempotency_key = idempotency_key;
    if found then
      if b.request_hash is distinct from request_hash then
        raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
      end if;
      return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', true);
    end if;
  end if;
  -- The audience's size from the maintained user counters (app.user_counts: active users per
  -- role), not by counting the users: everybody, or the roles named, plus the listed users not
  -- among them (ids that are not uuids match nobody, as in app_private.in_audience).
  select coalesce(sum(x.n), 0)::integer into recipient_count
  from app.user_counts() x
  where x.status = 'active'
    and (coalesce((audience ->> 'all')::boolean, false) or coalesce(audience -> 'roles' ? x.role::text, false));
  if jsonb_typeof(audience -> 'userIds') = 'array' then
    recipient_count := recipient_count + (
      select count(*)::integer from app.users u
      where u.id in (select e::uuid from jsonb_array_elements_text(audience -> 'userIds') e
                     where e ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
        and u.status = 'active'
        and not coalesce((audience ->> 'all')::boolean, false)
        and not coalesce(audience -> 'roles' ? u.role::text, false));
  end if;
  if recipient_count > max_recipients then
    raise exception 'this audience has % recipients; a batch has at most %', recipient_count, max_recipients
      using errcode = 'AG422';
  end if;
  insert into app.notification_batches as x
    (created_by, idempotency_key, request_hash, audience, type, title, body, data, priority, channels, recipients)
  values (
    me, idempotency_key, request_hash, audience, kind, notification ->> 'title',
    coalesce(notification ->> 'body', ''), coalesce(notification -> 'data', '{}'), urgency,
    array(select distinct c from unnest(channels) c order by c), recipient_count
  )
  on conflict on constraint notification_batches_idempotency_key do nothing
  returning * into b;
  if b.id is null then
    -- The same key at the same time: the first request's batch, once it committed.
    select * into b from app.notification_batches x
    where x.created_by = me and x.idempotency_key = idempotency_key;
    if b.request_hash is distinct from request_hash then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', true);
  end if;
  perform app_private.enqueue_job('notifications.batch', jsonb_build_object('batchId', b.id), now(),
    'notifications.batch:' || b.id::text);
  return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', false);
end;
$_$;

COMMENT ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) IS 'POST /api/notifications/bulk: accepts a batch (ADMIN only, AG403 otherwise) for an audience ({ userIds?, roles?, all? }: active users only) and queues its notifications.batch job; returns { id, status, recipients, replayed }. recipients comes from the maintained user counters (app.user_counts: active users of every role, or of the roles named) plus the listed users not among those, looked up by id: the accept costs the same for ten or a million people. The same Idempotency-Key with the same request returns the same batch (replayed), with another request AG409. AG422 over notifications.bulkMaxRecipients. security definer: batches and the job queue are written by the server only; the caller is checked here.';

REVOKE ALL ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.delete_notification
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.delete_notification(target_notification_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  gone uuid;
begin
  delete from app.notifications n
  where n.id = target_notification_id and n.user_id = auth.uid() and n.inbox
  returning n.id into gone;
  if gone is null then
    raise exception 'notification not found' using errcode = 'AG404';
  end if;
  return jsonb_build_object('id', gone, 'deleted', true);
end;
$$;

COMMENT ON FUNCTION app.delete_notification(target_notification_id uuid) IS 'DELETE /api/notifications/:id: deletes one of the caller''s own inbox notifications; anything else (another user''s, a hidden one, none) is AG404. security definer because no API role holds a table-wide delete; the ownership check is the where clause.';

REVOKE ALL ON FUNCTION app.delete_notification(target_notification_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_notification(target_notification_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.inbox_search_ids
-- created in 20261130040000_notifications_growth.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.inbox_search_ids(only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamp with time zone, bound_time timestamp with time zone, bound_id uuid, wanted integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := (select auth.uid());
  found_ids uuid[];
  marked_to timestamptz;
begin
  if me is null then
    return '{}';
  end if;
  -- A plan made for these values (EXECUTE): the user's share of the table and the term's
  -- trigrams are known to the planner. The search table is server-only (and under RLS the
  -- planner would keep like and enum equality, not leakproof, out of index conditions): this
  -- reads with the owner's rights, the caller's rows only. The words are a necessary condition;
  -- the exact test (title or body) runs on each candidate.
  select coalesce(max(m.read_to), '-infinity') into marked_to
  from app.notification_read_marks m where m.user_id = me;
  execute $q$
    with matching as materialized (
      select s.notification_id as id, s.created_at
      from app_private.notification_search s
      where s.user_id = $1
        and (s.created_at, s.notification_id) < ($6, $7) and s.created_at >= $5
        and ($2::app.notification_type is null or s.type = $2)
        and ($4::text is null or s.words like $4)
    )
    select array(
      select m.id from matching m join app.notifications n on n.id = m.id
      where n.inbox and ($3::boolean is null or (n.read_at is null and n.created_at > $9) = $3)
        and ($4::text is null or lower(n.title) like $4 or lower(n.body) like $4)
      order by m.created_at desc, m.id desc limit $8)
  $q$ into found_ids
  using me, only_type, only_unread, pattern, lower_time, bound_time, bound_id, wanted, marked_to;
  return found_ids;
end;
$_$;

COMMENT ON FUNCTION app.inbox_search_ids(only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamp with time zone, bound_time timestamp with time zone, bound_id uuid, wanted integer) IS 'The second half of a filtered inbox page (app_private.inbox_page_for_session): the ids of the caller''s next `wanted` inbox rows before (bound_time, bound_id) matching the filters (type, unread: neither read nor covered by a pending read-all, a like pattern on title or body), newest first, found through app_private.notification_search (a GIN index on user, type and trigrams) and sorted, instead of walking the inbox. security definer: the search table is server-only; it only ever reads the caller''s rows (auth.uid()) and returns ids, which the page then reads under RLS.';

REVOKE ALL ON FUNCTION app.inbox_search_ids(only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamp with time zone, bound_time timestamp with time zone, bound_id uuid, wanted integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.inbox_search_ids(only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamp with time zone, bound_time timestamp with time zone, bound_id uuid, wanted integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.mark_all_notifications_read
-- created in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.mark_all_notifications_read(direct_limit integer DEFAULT 500) RETURNS TABLE(updated integer, unread integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
#variable_conflict use_column
declare
  me uuid := (select auth.uid());
  was integer;
  marked_to timestamptz;
  newest timestamptz;
  changed integer;
begin
  if me is null then
    raise exception 'Sign in to continue.' using errcode = 'AG401';
  end if;
  select c.unread into was from app.notification_counters c where c.user_id = me;
  if coalesce(was, 0) = 0 then
    return query select 0, 0;
    return;
  end if;
  if was <= direct_limit then
    -- Few: the rows themselves, as before (each row, then the counter in the read events
    -- trigger, which counts and announces them: the order marking one read takes).
    update app.notifications n set read_at = now()
    where n.user_id = me and n.inbox and n.read_at is null
      and n.created_at > coalesce((select max(m.read_to) from app.notification_read_marks m
                                   where m.user_id = me), '-infinity');
    get diagnostics changed = row_count;
    return query select changed, c.unread from app.notification_counters c where c.user_id = me;
    return;
  end if;
  -- Many: the caller's write gate. Writers hold it from before they stamp a row's creation time
  -- to their commit (app_private.notify_rows), so this waits for every row stamped before it,
  -- and rows stamped later are newer than the mark. Then the counter.
  -- No notification row is locked.
  perform 1 from app_private.notification_write_gates g where g.user_id = me for update;
  select c.unread into was from app.notification_counters c where c.user_id = me for update;
  if coalesce(was, 0) = 0 then
    return query select 0, 0;
    return;
  end if;
  select coalesce(max(m.read_to), '-infinity') into marked_to
  from app.notification_read_marks m where m.user_id = me;
  select n.created_at into newest
  from app.notifications n
  where n.user_id = me and n.inbox and n.read_at is null and n.created_at > marked_to
  order by n.created_at desc, n.id desc
  limit 1;
  update app.notification_counters c set unread = 0 where c.user_id = me;
  if newest is null then
    return query select 0, 0;
    return;
  end if;
  insert into app.notification_read_marks (user_id, read_to, read_at) values (me, newest, now());
  perform app_private.emit_event('user:' || me, 'notification.read_all',
    jsonb_build_object('count', was,
                       'readAt', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                       'upTo', to_char(newest at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                       'unreadCount', 0));
  perform app_private.enqueue_job('notifications.read_marks', jsonb_build_object('userId', me), now(),
    'notifications.read_marks:' || me::text || ':' || newest::text);
  return query select was, 0;
end;
$$;

COMMENT ON FUNCTION app.mark_all_notifications_read(direct_limit integer) IS 'PUT /api/notifications/read-all: marks every unread inbox notification of the caller read; returns how many and the unread count left (0). Up to direct_limit unread (the counter) it updates the rows, as before. Beyond, it writes one mark instead (app.notification_read_marks: everything created up to the newest unread row, read now), zeroes the counter, emits notification.read_all { count, readAt, upTo, unreadCount } on user:<id> and queues notifications.read_marks, which writes the rows'' read_at behind it: the request costs the same for 10 or 100,000 unread. For a mark it takes the caller''s row of app_private.notification_write_gates, which writers hold from before they stamp created_at to their commit, so the mark covers exactly the rows this transaction sees; it locks no notification row (the direct way locks rows, then the counter, as marking one read does: no deadlock with a collapse, app_private.notify_rows). security definer: the marks, the counter and the events are server-written; it only ever touches the caller''s rows.';

REVOKE ALL ON FUNCTION app.mark_all_notifications_read(direct_limit integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.mark_all_notifications_read(direct_limit integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.notification_analytics
-- created in 20261124100000_notifications.sql; last changed in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text DEFAULT 'day'::text, only_type app.notification_type DEFAULT NULL::app.notification_type) RETURNS jsonb
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
  if bucket not in ('hour', 'day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  if range_from >= range_to then
    raise exception 'from must be before to' using errcode = 'AG400';
  end if;
  with figures as (
    -- One row per bucket, type and figure kind, from the rollups (whole buckets).
    select s.t, s.key as type, s.value as created, 0::numeric as read, 0::numeric as push_sent,
           0::numeric as push_failed, 0::numeric as email_sent, 0::numeric as email_failed
    from app_private.fact_series('notifications.created', bucket, range_from, range_to) s
    where only_type is null or s.key = only_type::text
    union all
    select s.t, s.key, 0, s.value, 0, 0, 0, 0
    from app_private.fact_series('notifications.read', bucket, range_from, range_to) s
    where only_type is null or s.key = only_type::text
    union all
    -- Deliveries: key 'channel status TYPE'.
    select s.t, split_part(s.key, ' ', 3), 0, 0,
           case when s.key like 'push sent %' then s.value else 0 end,
           case when s.key like 'push failed %' or s.key like 'push pruned %' then s.value else 0 end,
           case when s.key like 'email sent %' then s.value else 0 end,
           case when s.key like 'email failed %' then s.value else 0 end
    from app_private.fact_series('notification_deliveries.finished', bucket, range_from, range_to) s
    where only_type is null or split_part(s.key, ' ', 3) = only_type::text
  ), by_type as (
    select f.type, sum(f.created) as created, sum(f.read) as read, sum(f.push_sent) as push_sent,
           sum(f.push_failed) as push_failed, sum(f.email_sent) as email_sent,
           sum(f.email_failed) as email_failed
    from figures f group by 1
  ), by_t as (
    select f.t, sum(f.created) as created, sum(f.read) as read, sum(f.push_sent) as push_sent,
           sum(f.push_failed) as push_failed
    from figures f group by 1
  ), hist as (
    select h.bin, h.n as c from app_private.notification_read_histogram(bucket, range_from, range_to, only_type) h
  ), cum as (
    select h.bin, h.c, sum(h.c) over (order by h.bin) - h.c as before,
           case when h.bin = 0 then 0 else power(2::numeric, (h.bin - 1) / 8.0) end as lo,
           case when h.bin = 0 then 1 else power(2::numeric, h.bin / 8.0) end as hi
    from hist h
  ), median as (
    -- The middle value (the mean of the two middle ones for an even count), each value
    -- estimated by spreading its bin's values evenly over the bin: every estimate lies in the
    -- bin of the value it stands for, hence the bound in this function's comment.
    select avg(c.lo + (c.hi - c.lo) * (r.k - c.before - 0.5) / c.c) as seconds
    from (select sum(h.c) as n from hist h) t
    cross join lateral (values (floor((t.n + 1) / 2)), (ceil((t.n + 1) / 2))) r(k)
    join cum c on r.k > c.before and r.k <= c.before + c.c
  ), totals as (
    select coalesce(sum(b.created), 0)::bigint as created, coalesce(sum(b.read), 0)::bigint as read,
           coalesce(sum(b.push_sent), 0)::bigint as push_sent,
           coalesce(sum(b.push_failed), 0)::bigint as push_failed,
           coalesce(sum(b.email_sent), 0)::bigint as email_sent,
           coalesce(sum(b.email_failed), 0)::bigint as email_failed,
           (select m.seconds from median m) as median_read
    from by_type b
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'created', t.created, 'read', t.read, 'pushSent', t.push_sent, 'pushDelivered', t.push_sent,
      'pushFailed', t.push_failed, 'emailSent', t.email_sent),
    'byType', (
      select jsonb_agg(jsonb_build_object(
        'type', k.k,
        'created', coalesce(b.created, 0)::bigint, 'read', coalesce(b.read, 0)::bigint,
        'pushSent', coalesce(b.push_sent, 0)::bigint, 'pushFailed', coalesce(b.push_failed, 0)::bigint
      ) order by k.k)
      from unnest(enum_range(null::app.notification_type)) k
      left join by_type b on b.type = k.k::text
      where only_type is null or k.k = only_type
    ),
    'byChannel', jsonb_build_array(
      jsonb_build_object('channel', 'inApp', 'sent', t.created, 'failed', 0),
      jsonb_build_object('channel', 'push', 'sent', t.push_sent, 'failed', t.push_failed),
      jsonb_build_object('channel', 'email', 'sent', t.email_sent, 'failed', t.email_failed)
    ),
    'series', (
      select jsonb_agg(jsonb_build_object(
        't', to_char(b.t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'created', coalesce(s.created, 0)::bigint, 'read', coalesce(s.read, 0)::bigint,
        'pushSent', coalesce(s.push_sent, 0)::bigint, 'pushFailed', coalesce(s.push_failed, 0)::bigint
      ) order by b.t)
      from generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) b(t)
      left join by_t s on s.t = b.t
    ),
    'readRate', case when t.created = 0 then 0 else round(t.read::numeric / t.created, 4) end,
    'medianSecondsToRead', case when t.median_read is null then null else round(t.median_read, 3) end
  ) into result
  from totals t;
  return result;
end;
$$;

COMMENT ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) IS 'GET /api/notifications/analytics and the notifications section of /api/admin/analytics, from the rollups (app_private.analytics_facts, its deltas and the notifications and deliveries not yet folded: a row per bucket, type and key whatever the number of notifications; figures include what happened seconds ago). Whole buckets: the figures are those of the UTC hours, days, ISO weeks or months from the one holding range_from to the one holding range_to. created and read count inbox notifications created in those buckets (read: those of them read since, so readRate = read / created and the median time to read is theirs); push and e-mail count deliveries by the time of their outcome (pushFailed includes pruned tokens; pushDelivered equals pushSent: FCM''s HTTP v1 API reports acceptance, not receipt). Analytics are history: a notification deleted later, or a delivery pruned by retention, stays counted. medianSecondsToRead is interpolated in a histogram of seconds to read (bin 0 = [0, 1 s), bin k = [2^((k-1)/8), 2^(k/8)) s): at most 1 s + 9.1 % of the exact median away (each middle value''s estimate lies in the same bin as the value). byType, byChannel (inApp, push, email) and a zero-filled series. ADMIN only (42501). security definer: ADMINs cannot read other users'' notifications or any delivery row, nor the rollups; it returns counts only.';

REVOKE ALL ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.notification_batch_progress
-- created in 20261124100000_notifications.sql; last changed in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.notification_batch_progress(target_batch_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  b app.notification_batches;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads bulk sends' using errcode = 'AG403';
  end if;
  select * into b from app.notification_batches x where x.id = target_batch_id;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  return jsonb_build_object(
    'id', b.id,
    'status', b.status,
    'recipients', b.recipients,
    'created', b.written,
    'pushSent', b.push_sent,
    'pushFailed', b.push_failed,
    'emailSent', b.email_sent,
    'createdAt', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'finishedAt', to_char(b.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  );
end;
$$;

COMMENT ON FUNCTION app.notification_batch_progress(target_batch_id uuid) IS 'GET /api/notifications/bulk/:id: a batch''s progress from its counters (one row, however big the batch): inbox rows written (each chunk adds its own when it commits), pushes sent and failed, e-mails sent (added as deliveries finish, app_private.count_batch_outcomes). ADMIN only (AG403); AG404 for an unknown batch. security definer: batches are read by ADMINs through this function.';

REVOKE ALL ON FUNCTION app.notification_batch_progress(target_batch_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_batch_progress(target_batch_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.notification_json
-- created in 20261124100000_notifications.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.notification_json(n app.notifications) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', n.id,
    'type', n.type,
    'title', n.title,
    'body', n.body,
    'data', n.data,
    'priority', n.priority,
    'readAt', to_char(app.notification_read_at(n) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;

COMMENT ON FUNCTION app.notification_json(n app.notifications) IS 'The notification as the API and the live events show it (readAt through app.notification_read_at, so a notification a read-all covered is read at that read-all''s time). Inlinable SQL with no pinned search_path on purpose, as app.message_object: it runs with the caller''s rights.';

REVOKE ALL ON FUNCTION app.notification_json(n app.notifications) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_json(n app.notifications) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.notification_preferences_document
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.notification_preferences_document() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  p app.notification_preferences;
begin
  if me is null then
    raise exception 'sign in to read preferences' using errcode = 'AG403';
  end if;
  select * into p from app.notification_preferences x where x.user_id = me;
  return jsonb_build_object(
    'types', (
      select jsonb_object_agg(t::text, jsonb_build_object(
        'inApp', app_private.wants(p.types, t, 'inApp', d.defaults),
        'push', app_private.wants(p.types, t, 'push', d.defaults),
        'email', app_private.wants(p.types, t, 'email', d.defaults)))
      from unnest(enum_range(null::app.notification_type)) t,
           lateral (select app_private.notification_type_defaults(t) as defaults) d
    ),
    'quietHours', case when p.quiet_start is null then null else jsonb_build_object(
      'start', to_char(p.quiet_start, 'HH24:MI'),
      'end', to_char(p.quiet_end, 'HH24:MI'),
      'timeZone', p.quiet_time_zone) end,
    'updatedAt', to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  );
end;
$$;

COMMENT ON FUNCTION app.notification_preferences_document() IS 'GET /api/notifications/preferences: the caller''s effective preferences, every type and channel (their choice, else the configured default), quiet hours or null, updatedAt (null before the first change). security definer: the defaults come from the configuration, readable by ADMINs only; it reads only the caller''s own row.';

REVOKE ALL ON FUNCTION app.notification_preferences_document() FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_preferences_document() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.notification_read_at
-- created in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.notification_read_at(n app.notifications) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(n.read_at, case when n.inbox then (
    select m.read_at from app.notification_read_marks m
    where m.user_id = n.user_id and m.read_to >= n.created_at
    order by m.read_to limit 1) end)
$$;

COMMENT ON FUNCTION app.notification_read_at(n app.notifications) IS 'When a notification was read: its read_at, else the time of the earliest pending read-all that covers it (app.notification_read_marks), else null (unread). Every reader of the read state goes through it or its condition written out (created_at up to the newest mark). The caller''s rights: under RLS a user sees their own marks. Not inlinable (a subquery), so its search_path is pinned; a call costs about 4 µs, and the list calls it only for the rows up to the newest mark.';

REVOKE ALL ON FUNCTION app.notification_read_at(n app.notifications) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_read_at(n app.notifications) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.register_push_device
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text DEFAULT NULL::text) RETURNS TABLE(device_id uuid, platform app.push_platform, created_at timestamp with time zone, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
#variable_conflict use_column
declare
  me uuid := auth.uid();
  existing app.push_devices;
  device app.push_devices;
begin
  if me is null then
    raise exception 'sign in to register a device' using errcode = 'AG403';
  end if;
  if device_token is null or char_length(device_token) not between 1 and 1024 then
    raise exception 'a device token has 1 to 1024 characters' using errcode = 'AG400';
  end if;
  select * into existing from app.push_devices d where d.token = device_token for update;
  if found and existing.user_id = me then
    update app.push_devices d set platform = device_platform, device_name = coalesce(name, d.device_name)
    where d.id = existing.id returning * into device;
    return query select device.id, device.platform, device.created_at, false;
    return;
  end if;
  if found then
    -- Another user's token moves: a new row, so what was queued for them never reaches the caller.
    delete from app.push_devices d where d.id = existing.id;
  end if;
  insert into app.push_devices (user_id, token, platform, device_name)
  values (me, device_token, device_platform, name)
  on conflict (token) do nothing
  returning * into device;
  if device.id is null then
    -- A concurrent registration of the same token won; it is registered, to whoever was first.
    raise exception 'this token is being registered at the same time; try again' using errcode = 'AG409';
  end if;
  return query select device.id, device.platform, device.created_at, true;
end;
$$;

COMMENT ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) IS 'POST /api/notifications/fcm/register: registers an FCM token for the caller (created true), or refreshes it when it is already theirs (created false); a token registered by another user moves to the caller as a new device (deliveries queued for the previous owner then fail as device_gone instead of reaching the caller). security definer: moving a token touches another user''s row, which RLS hides; the token itself is never returned.';

REVOKE ALL ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.unregister_push_device
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.unregister_push_device(device_token text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app.push_devices d where d.token = device_token and d.user_id = auth.uid();
  if not found then
    raise exception 'device not found' using errcode = 'AG404';
  end if;
  return true;
end;
$$;

COMMENT ON FUNCTION app.unregister_push_device(device_token text) IS 'DELETE /api/notifications/fcm/register: removes one of the caller''s own tokens; a token that is not theirs (or unknown) is AG404, so no one learns whose a token is. security definer: no API role may delete devices directly.';

REVOKE ALL ON FUNCTION app.unregister_push_device(device_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.unregister_push_device(device_token text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.update_notification_preferences
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.update_notification_preferences(patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  current_types jsonb;
  merged jsonb;
  quiet jsonb := patch -> 'quietHours';
  has_quiet boolean := patch ? 'quietHours';
begin
  if me is null then
    raise exception 'sign in to change preferences' using errcode = 'AG403';
  end if;
  if jsonb_typeof(patch) <> 'object' or exists (
       select 1 from jsonb_object_keys(patch) k where k not in ('types', 'quietHours')) then
    raise exception 'preferences take types and quietHours' using errcode = 'AG400';
  end if;
  if patch ? 'types' and jsonb_typeof(patch -> 'types') <> 'object' then
    raise exception 'types is an object of types' using errcode = 'AG400';
  end if;
  if has_quiet and jsonb_typeof(quiet) not in ('object', 'null') then
    raise exception 'quietHours is { start, end, timeZone } or null' using errcode = 'AG400';
  end if;
  if has_quiet and jsonb_typeof(quiet) = 'object' and (
       coalesce(quiet ->> 'start', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       or coalesce(quiet ->> 'end', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       or jsonb_typeof(quiet -> 'timeZone') is distinct from 'string') then
    raise exception 'quiet hours are { start: "HH:MM", end: "HH:MM", timeZone }' using errcode = 'AG400';
  end if;
  select p.types into current_types from app.notification_preferences p where p.user_id = me;
  current_types := coalesce(current_types, '{}'::jsonb);
  -- Two levels, type then channel: a patch's channels are laid over the stored ones.
  select coalesce(jsonb_object_agg(k, case
           when jsonb_typeof(patch -> 'types' -> k) = 'object'
             then coalesce(current_types -> k, '{}'::jsonb) || (patch -> 'types' -> k)
           else coalesce(patch -> 'types' -> k, current_types -> k) end), '{}'::jsonb)
  into merged
  from (select jsonb_object_keys(current_types)
        union select jsonb_object_keys(coalesce(patch -> 'types', '{}'::jsonb))) keys (k);
  insert into app.notification_preferences as p (user_id, types, quiet_start, quiet_end, quiet_time_zone)
  values (
    me, merged,
    case when has_quiet then (quiet ->> 'start')::time end,
    case when has_quiet then (quiet ->> 'end')::time end,
    case when has_quiet then quiet ->> 'timeZone' end
  )
  on conflict (user_id) do update set
    types = excluded.types,
    quiet_start = case when has_quiet then excluded.quiet_start else p.quiet_start end,
    quiet_end = case when has_quiet then excluded.quiet_end else p.quiet_end end,
    quiet_time_zone = case when has_quiet then excluded.quiet_time_zone else p.quiet_time_zone end;
  return app.notification_preferences_document();
end;
$_$;

COMMENT ON FUNCTION app.update_notification_preferences(patch jsonb) IS 'PUT /api/notifications/preferences: lays a partial document ({ types?: { TYPE?: { inApp?, push?, email? } }, quietHours?: { start, end, timeZone } | null }) over the caller''s choices and returns the whole effective document. AG400 for unknown keys, types or channels, times that are not HH:MM, an unknown time zone (the row''s trigger checks pg_timezone_names). security invoker: the caller''s own row, under RLS.';

REVOKE ALL ON FUNCTION app.update_notification_preferences(patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.update_notification_preferences(patch jsonb) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.analytics_tiles
-- created in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.analytics_tiles(bucket text, lo timestamp with time zone, hi timestamp with time zone) RETURNS TABLE(bucket_interval text, first_bucket timestamp with time zone, last_bucket timestamp with time zone)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
    AS $$
declare
  coarser text := case bucket when 'hour' then 'day' when 'day' then 'month' end;
  step interval := ('1 ' || bucket)::interval;
  c0 timestamptz;
  c1 timestamptz;
begin
  if lo >= hi then
    return;
  end if;
  if coarser is not null then
    c0 := date_trunc(coarser, lo, 'UTC');
    if c0 < lo then
      c0 := c0 + ('1 ' || coarser)::interval;
    end if;
    c1 := date_trunc(coarser, hi, 'UTC');
    if c0 < c1 then
      if lo < c0 then
        return query select bucket, lo, c0 - step;
      end if;
      return query select * from app_private.analytics_tiles(coarser, c0, c1);
      if c1 < hi then
        return query select bucket, c1, hi - step;
      end if;
      return;
    end if;
  end if;
  return query select bucket, lo, hi - step;
end;
$$;

COMMENT ON FUNCTION app_private.analytics_tiles(bucket text, lo timestamp with time zone, hi timestamp with time zone) IS 'The buckets [lo, hi) of an interval (both bounds on its buckets'' starts) as the fewest whole buckets: hours up to the first whole day, days, hours after the last (and days around whole months likewise), each tile as (interval, its first bucket, its last bucket). A figure summed over a range (the median''s histogram) reads 24 times fewer rows per day this way; weeks are not tiled (they do not make months).';

REVOKE ALL ON FUNCTION app_private.analytics_tiles(bucket text, lo timestamp with time zone, hi timestamp with time zone) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.announce_batch_chunk
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS uuid[]
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  c app_private.notification_batch_chunks;
begin
  update app_private.notification_batch_chunks x set announced_at = now()
  where x.batch_id = target_batch_id and x.chunk = target_chunk and x.announced_at is null
  returning * into c;
  if found then
    perform app_private.emit_event('user:' || n.user_id, 'notification.created', app.notification_json(n))
    from app.notifications n
    where n.batch_id = target_batch_id and n.user_id between c.first_user_id and c.last_user_id and n.inbox;
  else
    select * into c from app_private.notification_batch_chunks x
    where x.batch_id = target_batch_id and x.chunk = target_chunk;
    if not found then
      raise exception 'chunk not found' using errcode = 'AG404';
    end if;
  end if;
  return array(
    select distinct d.notification_id
    from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
    where n.batch_id = target_batch_id and n.user_id between c.first_user_id and c.last_user_id
      and d.status = 'queued'
  );
end;
$$;

COMMENT ON FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'A batch chunk''s live events: notification.created on each recipient''s user:<id>, once (announced_at, set in the same transaction), whatever the job''s retries. Returns the chunk''s notifications that still have queued deliveries. security definer: emit_event on other users'' topics.';

REVOKE ALL ON FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.apply_read_marks
-- created in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.apply_read_marks(target_user_id uuid, batch_size integer DEFAULT 2000) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  mark app.notification_read_marks;
  written integer;
begin
  select * into mark from app.notification_read_marks m
  where m.user_id = target_user_id
  order by m.read_to
  limit 1
  for update;
  if not found then
    return false;
  end if;
  -- The earliest mark covers every unread row created up to its read_to (later marks only
  -- newer ones): its time, written down, a batch at a time through the unread index.
  update app.notifications n set read_at = mark.read_at
  where n.id = any(array(
    select x.id from app.notifications x
    where x.user_id = target_user_id and x.inbox and x.read_at is null and x.created_at <= mark.read_to
    order by x.created_at desc, x.id desc
    limit batch_size));
  get diagnostics written = row_count;
  if written < batch_size then
    delete from app.notification_read_marks m
    where m.user_id = target_user_id and m.read_to = mark.read_to;
  end if;
  return exists (select 1 from app.notification_read_marks m where m.user_id = target_user_id);
end;
$$;

COMMENT ON FUNCTION app_private.apply_read_marks(target_user_id uuid, batch_size integer) IS 'One step of a notifications.read_marks job, in a transaction of its own: writes the read_at of the earliest pending read-all (app.notification_read_marks) into at most batch_size of the rows it covers, and drops the mark once none is left. Returns whether marks remain (the job calls it again). The rows were read already for every reader (app.notification_read_at); the read events trigger skips them (the read-all counted and announced them) and the analytics facts take their read time now. Idempotent: a killed step is redone. Server only.';

REVOKE ALL ON FUNCTION app_private.apply_read_marks(target_user_id uuid, batch_size integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.claim_message_digest
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.claim_message_digest(target_conversation_id uuid) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  upto_seq bigint;
begin
  -- Senders hold the conversation row until they commit: once this lock is granted, every
  -- message numbered so far is committed. New senders wait for this short transaction, then mark
  -- the conversation again.
  select c.last_seq into upto_seq from app.conversations c
  where c.id = target_conversation_id for share;
  delete from app_private.message_digests_pending x where x.conversation_id = target_conversation_id;
  return upto_seq;
end;
$$;

COMMENT ON FUNCTION app_private.claim_message_digest(target_conversation_id uuid) IS 'First half of the notifications.digest job: waits for the conversation''s senders in flight (its row, which each holds for its seq until commit), takes the conversation''s mark away and returns the last message seq, all committed by then. A transaction of its own, so senders wait for it only briefly. Null for a conversation that is gone. security definer: the marks are server-only.';

REVOKE ALL ON FUNCTION app_private.claim_message_digest(target_conversation_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.conversation_notifications
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.conversation_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  joined record;
  adder_name text;
begin
  for joined in
    select a.conversation_id, a.added_by, c.type, c.title,
           array_agg(a.user_id) filter (where a.user_id is distinct from a.added_by) as users
    from added a join app.conversations c on c.id = a.conversation_id
    group by a.conversation_id, a.added_by, c.type, c.title
  loop
    continue when joined.users is null;
    select coalesce(nullif(u.name, ''), 'Someone') into adder_name from app.users u where u.id = joined.added_by;
    adder_name := coalesce(adder_name, 'Someone');
    perform app_private.notify_many(
      joined.users,
      'MESSAGE',
      left(coalesce(joined.title, adder_name), 200),
      case when joined.type = 'group' then adder_name || ' added you to ' || joined.title
           else adder_name || ' started a conversation with you' end,
      jsonb_build_object('conversationId', joined.conversation_id, 'messageId', null, 'count', 0),
      'normal',
      'conversation:' || joined.conversation_id::text
    );
  end loop;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.conversation_notifications() IS 'A new conversation (or being added to a group) gives each person added, but not the one who added them, a MESSAGE notification under the conversation''s collapse key, with count 0: the first message then makes it 1. A statement trigger: one call per conversation however many people join. security definer: it writes other users'' inboxes through app_private.notify_many.';

REVOKE ALL ON FUNCTION app_private.conversation_notifications() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.conversation_read_notifications
-- created in 20261124100000_notifications.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.conversation_read_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app.notifications n set read_at = coalesce(app.notification_read_at(n), now())
  where n.user_id = new.user_id
    and n.collapse_key = 'conversation:' || new.conversation_id::text
    and n.read_at is null
    and coalesce(
      (select m.seq from app.messages m
        where m.id = (n.data ->> 'messageId')::uuid and m.conversation_id = new.conversation_id),
      0) <= new.last_read_seq;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.conversation_read_notifications() IS 'Reading a conversation up to the latest message its MESSAGE notification tells of marks that notification read (and notification.read goes out); a read mark short of it leaves it unread; one a read-all already covers is written down with the read-all''s time (no second event). security definer: notifications are updated by their owner only through RLS, and this runs on the participant row''s update.';

REVOKE ALL ON FUNCTION app_private.conversation_read_notifications() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_batch_outcomes
-- created in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_batch_outcomes() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
begin
  -- Claims and retries leave rows queued: out at once (take_deliveries' hot path).
  if not exists (select 1 from after_rows d where d.status <> 'queued') then
    return null;
  end if;
  -- EXECUTE: planned for this statement's row counts (see notifications_read_events).
  execute $q$
  with finished as (
    select n.batch_id, d.channel, d.status
    from after_rows d
    join before_rows o on o.id = d.id
    join app.notifications n on n.id = d.notification_id
    where o.status = 'queued' and d.status <> 'queued' and n.batch_id is not null
  ), per_batch as (
    select f.batch_id,
           count(*) filter (where f.channel = 'push' and f.status = 'sent')::integer as push_sent,
           count(*) filter (where f.channel = 'push' and f.status in ('failed', 'pruned'))::integer as push_failed,
           count(*) filter (where f.channel = 'email' and f.status = 'sent')::integer as email_sent
    from finished f group by f.batch_id
  )
  update app.notification_batches b
  set push_sent = b.push_sent + p.push_sent, push_failed = b.push_failed + p.push_failed,
      email_sent = b.email_sent + p.email_sent
  from per_batch p where b.id = p.batch_id
  $q$;
  return null;
end;
$_$;

COMMENT ON FUNCTION app_private.count_batch_outcomes() IS 'After any update of deliveries (a statement trigger): the bulk batches'' deliveries that left the queue (sent, failed, pruned, by whatever path) are added to their batch''s counters, so GET /api/notifications/bulk/:id reads one row instead of counting a million. security definer: batches are written by the server only.';

REVOKE ALL ON FUNCTION app_private.count_batch_outcomes() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_new_notifications
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_new_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app.notification_counters as c (user_id, unread)
  select a.user_id, count(*)::integer from added a
  where a.inbox and a.read_at is null
  group by a.user_id
  order by a.user_id
  on conflict (user_id) do update set unread = c.unread + excluded.unread;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_new_notifications() IS 'Adds a statement''s new unread inbox rows to each recipient''s counter: one statement per insert statement, whatever its size (a bulk batch of 100,000 is one upsert; a message folding into unread notifications inserts nothing and adds nothing). Counters are taken in user order, so concurrent inserts never deadlock on them. security definer: the counters are written by the server only.';

REVOKE ALL ON FUNCTION app_private.count_new_notifications() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.digest_conversation
-- created in 20261124100000_notifications.sql; last changed in 20261130100000_notifications_digest_lock_order.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  conversation app.conversations;
  from_seq bigint;
  recipients uuid[];
  titles text[];
  bodies text[];
  datas jsonb[];
begin
  select * into conversation from app.conversations c where c.id = target_conversation_id;
  if not found or upto_seq is null then
    return 0;
  end if;
  insert into app_private.message_digests (conversation_id) values (target_conversation_id)
  on conflict do nothing;
  -- One digest of a conversation at a time; a later one starts where this one ends.
  select d.digested_seq into from_seq from app_private.message_digests d
  where d.conversation_id = target_conversation_id for update;
  if upto_seq <= from_seq then
    return 0;
  end if;
  -- Read marks wait for this digest: one moved meanwhile would not see what it tells of. The
  -- rows are locked in user order, as a send locks them (app_private.count_unread_message), so a
  -- digest and a send never hold one each while waiting for the other's.
  perform 1 from app.conversation_participants p
  where p.conversation_id = target_conversation_id order by p.user_id for share;

  -- Per participant: the live messages of others since the last digest that they have not read
  -- (and sent after they joined), their number and the newest of them.
  with news as (
    select m.id, m.seq, m.sender_id, m.created_at
    from app.messages m
    where m.conversation_id = target_conversation_id and m.seq > from_seq and m.seq <= upto_seq
      and m.deleted_at is null
  ), told as (
    select p.user_id, count(*)::integer as n, (array_agg(x.id order by x.seq desc))[1] as newest
    from app.conversation_participants p
    join news x on x.sender_id is distinct from p.user_id and x.seq > p.last_read_seq
                   and x.created_at >= p.joined_at
    where p.conversation_id = target_conversation_id
    group by p.user_id
  ), shaped as (
    select t.user_id, t.n, m.id as message_id, m.content,
           coalesce((select nullif(u.name, '') from app.users u where u.id = m.sender_id), 'Someone')
             as sender_name
    from told t join app.messages m on m.id = t.newest
  )
  select array_agg(x.user_id order by x.user_id),
         array_agg(left(coalesce(conversation.title, x.sender_name), 200) order by x.user_id),
         array_agg(left(case when conversation.type = 'group' then x.sender_name || ': ' else '' end
                        || x.content, 140) order by x.user_id),
         array_agg(jsonb_build_object('conversationId', target_conversation_id,
                                      'messageId', x.message_id, 'count', x.n) order by x.user_id)
  into recipients, titles, bodies, datas
  from shaped x;

  if recipients is not null then
    perform app_private.notify_rows('MESSAGE', recipients, titles, bodies, datas, 'normal',
                                    'conversation:' || target_conversation_id::text);
  end if;
  update app_private.message_digests d set digested_seq = upto_seq, digested_at = now()
  where d.conversation_id = target_conversation_id;
  return coalesce(cardinality(recipients), 0);
end;
$$;

COMMENT ON FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) IS 'Second half of the notifications.digest job: tells each participant of the conversation''s messages of others after the last digest and up to upto_seq (from claim_message_digest) that they have not read, in one app_private.notify_rows call: under the conversation''s collapse key, one unread MESSAGE notification per participant whose count adds the new messages and whose messageId and preview are the newest one''s (a participant without one gets a new notification, its event and push). Digests of a conversation take turns (its message_digests row); read marks wait for it (the participants'' rows are share-locked in user order, the order a send locks them in, so the two never deadlock). Returns how many participants were told. security definer: it writes other users'' inboxes.';

REVOKE ALL ON FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.finish_batch_chunk
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The batch row's lock serializes the chunks finishing together: each one's check below (a
  -- statement of its own, so a fresh snapshot) sees the others' commits, and the last one sees
  -- them all.
  perform 1 from app.notification_batches b where b.id = target_batch_id for update;
  update app_private.notification_batch_chunks x set done_at = coalesce(x.done_at, now())
  where x.batch_id = target_batch_id and x.chunk = target_chunk;
  if exists (select 1 from app_private.notification_batch_chunks x
             where x.batch_id = target_batch_id and x.done_at is null) then
    return false;
  end if;
  update app.notification_batches set status = 'done', finished_at = coalesce(finished_at, now())
  where id = target_batch_id;
  return true;
end;
$$;

COMMENT ON FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'Marks a batch chunk done; the last one marks the batch done (chunks finishing at the same time take turns on the batch row''s lock, so one of them always sees all done). Returns whether the batch is done. security definer: batches are written by the server only.';

REVOKE ALL ON FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_notification_read
-- created in 20261124100000_notifications.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_notification_read() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- (The `role` setting, not current_user: security definer callers keep the caller's setting.)
  if current_setting('role', true) in ('anon', 'authenticated') then
    if old.read_at is not null then
      new.read_at := old.read_at;
    elsif new.read_at is not null then
      -- A read-all covering the row read it then (app.notification_read_at).
      new.read_at := coalesce(app.notification_read_at(old), now());
    end if;
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_notification_read() IS 'Users only mark notifications read: the time is the server''s (no backdating into the read-time figures), or the time of the read-all that already covers the row (app.notification_read_marks), and a read notification stays read. Fires only when read_at is in the update.';

REVOKE ALL ON FUNCTION app_private.guard_notification_read() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.in_audience
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.in_audience(u app.users, audience jsonb) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select u.status = 'active' and (
    coalesce((audience ->> 'all')::boolean, false)
    or coalesce(audience -> 'userIds' ? u.id::text, false)
    or coalesce(audience -> 'roles' ? u.role::text, false)
  )
$$;

COMMENT ON FUNCTION app_private.in_audience(u app.users, audience jsonb) IS 'Whether a user is in a bulk audience ({ userIds?, roles?, all? }, any of them): active users only, never suspended ones. Inlinable pure SQL (no pinned search_path, see app.notification_json).';

REVOKE ALL ON FUNCTION app_private.in_audience(u app.users, audience jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.inbox_page_for_session
-- created in 20261124150000_inbox_session_check.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) RETURNS TABLE(id uuid, type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, read_at text, created_at text, unread integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
#variable_conflict use_column
declare
  caller_claims text;
  bound_time timestamptz := coalesce(after_time, 'infinity'::timestamptz);
  bound_id uuid := coalesce(after_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid);
  lower_time timestamptz := coalesce(since, '-infinity'::timestamptz);
  -- The rows a filtered page walks in order before it asks the search index.
  walk_limit constant integer := 500;
  walked integer := 0;
  hits uuid[] := '{}';
  hit uuid;
  listed boolean;
  w record;
  -- The newest creation time a pending read-all covers: rows up to it are read.
  marked_to timestamptz;
begin
  -- The live-session rule (app_private.live_sessions), with the pool's own rights, before the
  -- role changes.
  select json_build_object('sub', l.id, 'role', 'authenticated', 'session_id', l.session_id,
                           'email', coalesce(l.email, ''), 'user_role', l.role)::text
    into caller_claims
  from app_private.live_sessions(array[caller_session]) l
  where l.id = caller_user;
  if caller_claims is null then
    -- The message is the API's usual 401 (AG codes' messages reach the caller).
    raise exception 'Sign in to continue.' using errcode = 'AG401';
  end if;
  perform set_config('request.jwt.claims', caller_claims, true);
  perform set_config('role', 'authenticated', true);
  select coalesce(max(m.read_to), '-infinity') into marked_to
  from app.notification_read_marks m where m.user_id = caller_user;
  if only_type is null and only_unread is null and pattern is null then
    return query
      select n.id, n.type, n.title, n.body, n.data, n.priority, (case when n.read_at is null and n.created_at <= marked_to then app.notification_read_at(n) else n.read_at end)::text, n.created_at::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0)
      from app.notifications n
      where n.user_id = (select auth.uid()) and n.inbox
        and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
      order by n.created_at desc, n.id desc
      limit page_limit;
    listed := found;
  else
    -- 1. The next walk_limit rows in inbox order, filtered: a common filter fills the page here.
    --    Unread only walks the unread index (its own statement, so the plan can use it).
    if only_unread then
      for w in
        select n.id, n.created_at,
               (only_type is null or n.type = only_type)
               and (pattern is null or lower(n.title) like pattern or lower(n.body) like pattern) as hit
        from app.notifications n
        where n.user_id = (select auth.uid()) and n.inbox and n.read_at is null
          and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
          and n.created_at > marked_to
        order by n.created_at desc, n.id desc
        limit walk_limit
      loop
        walked := walked + 1;
        bound_time := w.created_at;
        bound_id := w.id;
        if w.hit then
          hits := hits || w.id;
          exit when cardinality(hits) >= page_limit;
        end if;
      end loop;
    else
      for w in
        select n.id, n.created_at,
               (only_type is null or n.type = only_type)
               and (only_unread is null or (n.read_at is null and n.created_at > marked_to) = only_unread)
               and (pattern is null or lower(n.title) like pattern or lower(n.body) like pattern) as hit
        from app.notifications n
        where n.user_id = (select auth.uid()) and n.inbox
          and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
        order by n.created_at desc, n.id desc
        limit walk_limit
      loop
        walked := walked + 1;
        bound_time := w.created_at;
        bound_id := w.id;
        if w.hit then
          hits := hits || w.id;
          exit when cardinality(hits) >= page_limit;
        end if;
      end loop;
    end if;
    -- 2. A rare filter: the rest of the page after the walked rows, from the search index (the
    --    rows matching it, sorted), never the whole inbox.
    if cardinality(hits) < page_limit and walked = walk_limit then
      hits := hits || app.inbox_search_ids(only_type, only_unread, pattern, lower_time,
                                           bound_time, bound_id, page_limit - cardinality(hits));
    end if;
    -- hits is in page order already (the walk's, then the index's after it); each row by its
    -- key: one statement over all of them was planned as a walk of the user's inbox index.
    foreach hit in array hits loop
      return query
        select n.id, n.type, n.title, n.body, n.data, n.priority, (case when n.read_at is null and n.created_at <= marked_to then app.notification_read_at(n) else n.read_at end)::text, n.created_at::text,
               coalesce((select c.unread from app.notification_counters c
                         where c.user_id = (select auth.uid())), 0)
        from app.notifications n
        where n.id = hit and n.inbox;
    end loop;
    listed := cardinality(hits) > 0;
  end if;
  if not listed then
    return query
      select null::uuid, null::app.notification_type, null::text, null::text, null::jsonb,
             null::app.notification_priority, null::text, null::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0);
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) IS 'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path), session check included: the session the access token names must be live and its user active by the one rule, app_private.live_sessions (else AG401), the claims are built from those rows, then the page is read under RLS as role authenticated, newest first, with the unread count (app.notification_counters) on every row; a row a pending read-all covers (app.notification_read_marks, up to its newest creation time) is read at that read-all''s time, and the unread filter starts after it in the unread index; an empty page is one row with a null id carrying the count. One round trip instead of two (the session check, then the page): measured, the round trips and the session query cost more than the page. With a filter (type, unread only, search) it walks at most 500 rows in inbox order (the unread index for unread only) and, when they did not fill the page, takes the rest after them from app_private.notification_search (app.inbox_search_ids: user, type, trigrams of title and body): the cost follows the page, not the inbox (a search matching nothing read a whole inbox of a million). Only the API''s own role may call it, with ids from an access token whose signature it verified.';

REVOKE ALL ON FUNCTION app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.index_new_notifications
-- created in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.index_new_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app_private.notification_search (notification_id, user_id, type, created_at, words)
  select a.id, a.user_id, a.type, a.created_at, lower(a.title || ' ' || a.body)
  from added a where a.inbox;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.index_new_notifications() IS 'After an insert statement into notifications: their inbox rows into app_private.notification_search, one statement whatever its size. security definer: the search table is server-only.';

REVOKE ALL ON FUNCTION app_private.index_new_notifications() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.mark_message_digest
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.mark_message_digest() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app_private.message_digests_pending (conversation_id) values (new.conversation_id)
  on conflict do nothing;
  if found then
    perform app_private.enqueue_job('notifications.digest',
      jsonb_build_object('conversationId', new.conversation_id), now() + interval '1 second',
      'notifications.digest:' || new.conversation_id::text || ':' || new.seq::text);
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.mark_message_digest() IS 'A new message marks its conversation for a digest (app_private.message_digests_pending) and, when the conversation had no mark, queues its notifications.digest job a second later: the send does no notification work of its own. security definer: the marks and the job queue are server-only.';

REVOKE ALL ON FUNCTION app_private.mark_message_digest() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notification_deleted_event
-- created in 20261124100000_notifications.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notification_deleted_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if app.notification_read_at(old) is null then
    update app.notification_counters c set unread = c.unread - 1
    where c.user_id = old.user_id and c.unread > 0;
  end if;
  perform app_private.emit_event('user:' || old.user_id, 'notification.deleted', app.notification_json(old));
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.notification_deleted_event() IS 'When an inbox notification is deleted: one unread fewer if it was unread (not read, nor covered by a read-all: app.notification_read_at), and notification.deleted on user:<id>. security definer as notification_read_event.';

REVOKE ALL ON FUNCTION app_private.notification_deleted_event() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notification_deliveries_facts_changed
-- created in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notification_deliveries_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
    declare
      mark timestamptz := app_private.analytics_fold_mark('app_private.notification_deliveries');
    begin
      
    insert into app_private.analytics_fact_deltas as c (metric, bucket_interval, bucket, key, delta)
    select x.* from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select -1 as sign, old.* where old.finished_at < mark
       union all
       select 1 as sign, new.* where new.finished_at < mark) r
    cross join lateral (
      values ('notification_deliveries.finished', r.finished_at,
              r.channel::text || ' ' || r.status::text || ' '
                || (select n.type::text from app.notifications n where n.id = r.notification_id),
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('hour'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
     and (i.name <> 'hour' or f.metric like 'notification%')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
    order by 1, 2, 3, 4  ;
      return null;
    end;
    $$;

COMMENT ON FUNCTION app_private.notification_deliveries_facts_changed() IS 'After an update of a delivery that was finished already, or that sets a finished_at in the past (by hand: the application''s outcomes set now(), above the fold''s mark, and run nothing), per row: for an outcome before the mark (already in the rollups), appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas. Inserts (folded) and deletes (retention: the figures are history) run nothing. Written by migration 20261204000000 from app_private.analytics_fact_definitions(). security definer: the rollups are server-only.';

REVOKE ALL ON FUNCTION app_private.notification_deliveries_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notification_deliveries_facts_tail
-- created in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notification_deliveries_facts_tail(metric text, bucket_interval text) RETURNS TABLE(bucket timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET max_parallel_workers_per_gather TO '0'
    AS $$
      begin
        -- The metric and interval filter the facts before they are summed. No parallel workers:
        -- the planner cannot know the tail is a minute of rows (its estimate, a range of the
        -- BRIN index, is 200,000 at the growth bench's x10) and launched two for each of the
        -- reader's four tails (15-20 ms each, for no row).
        return query
          select x.bucket, x.key, x.value
          from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select 1 as sign, r.* from app_private.notification_deliveries r
         where r.finished_at >= (select m.folded_before from app_private.analytics_fold_marks m
                          where m.source = 'app_private.notification_deliveries')
           and r.finished_at <= 'infinity'::timestamptz) r
    cross join lateral (
      values ('notification_deliveries.finished', r.finished_at,
              r.channel::text || ' ' || r.status::text || ' '
                || (select n.type::text from app.notifications n where n.id = r.notification_id),
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('hour'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
     and (i.name <> 'hour' or f.metric like 'notification%')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
          where x.metric = notification_deliveries_facts_tail.metric
            and x.bucket_interval = notification_deliveries_facts_tail.bucket_interval;
      end;
      $$;

COMMENT ON FUNCTION app_private.notification_deliveries_facts_tail(metric text, bucket_interval text) IS 'A metric''s facts in one bucket interval of the rows of app_private.notification_deliveries whose finished_at is from the fold''s mark on, not yet in app_private.analytics_facts (at most a minute and a margin of rows): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. Written by migration 20261204000000 from app_private.analytics_fact_definitions().';

REVOKE ALL ON FUNCTION app_private.notification_deliveries_facts_tail(metric text, bucket_interval text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notification_read_histogram
-- created in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notification_read_histogram(bucket text, range_from timestamp with time zone, range_to timestamp with time zone, only_type app.notification_type) RETURNS TABLE(bin integer, n numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
    AS $$
begin
  return query
    select split_part(s.key, ' ', 2)::integer, sum(s.value)
    from app_private.analytics_tiles(bucket, date_trunc(bucket, range_from, 'UTC'),
                                     date_trunc(bucket, range_to, 'UTC') + ('1 ' || bucket)::interval) t
    cross join lateral app_private.fact_series('notifications.read_seconds', t.bucket_interval,
                                                t.first_bucket, t.last_bucket) s
    where only_type is null or split_part(s.key, ' ', 1) = only_type::text
    group by 1
    having sum(s.value) > 0;
end;
$$;

COMMENT ON FUNCTION app_private.notification_read_histogram(bucket text, range_from timestamp with time zone, range_to timestamp with time zone, only_type app.notification_type) IS 'The seconds-to-read histogram (notifications.read_seconds: bin 0 = [0, 1 s), bin k >= 1 = [2^((k-1)/8), 2^(k/8)) s) of the inbox notifications created in the whole buckets from the one holding range_from to the one holding range_to, of one type or all: count per bin, from the rollups and the live tail, read in the fewest buckets (app_private.analytics_tiles). For app.notification_analytics''s median.';

REVOKE ALL ON FUNCTION app_private.notification_read_histogram(bucket text, range_from timestamp with time zone, range_to timestamp with time zone, only_type app.notification_type) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notification_type_defaults
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  fallback jsonb := app_private.config_defaults() #> array['notifications', 'defaults', notification_type::text];
  stored jsonb;
begin
  select c.config #> array['notifications', 'defaults', notification_type::text] into stored
  from app.config_versions c order by c.version desc limit 1;
  return jsonb_build_object(
    'inApp', coalesce((stored ->> 'inApp')::boolean, (fallback ->> 'inApp')::boolean, true),
    'push', coalesce((stored ->> 'push')::boolean, (fallback ->> 'push')::boolean, true),
    'email', coalesce((stored ->> 'email')::boolean, (fallback ->> 'email')::boolean, false)
  );
end;
$$;

COMMENT ON FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) IS 'The channels ({ inApp, push, email }) of one type for users who did not choose: notifications.defaults of the current configuration, each channel falling back to app_private.config_defaults. plpgsql, not SQL, on purpose: it is on the send''s hot path, and a security definer SQL function is planned again on every call (with config_defaults'' JSON parsed each time: about 0.3 ms), while plpgsql keeps its plans for the session. security definer: the configuration is readable by ADMINs only; it returns three booleans.';

REVOKE ALL ON FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notifications_facts_changed
-- created in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notifications_facts_changed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET jit TO 'off'
    SET "TimeZone" TO 'UTC'
    AS $$
declare
  mark timestamptz := app_private.analytics_fold_mark('app.notifications');
begin
  -- The facts of app_private.analytics_fact_definitions() for app.notifications, written out:
  -- the updated rows below the mark are grouped by (hour, type, bin) before they are spread over
  -- the metrics and intervals, so read-all of 50,000 rows appends a row per bucket it touched.
  -- jit off: the transition tables' row estimates make the planner compile the statement
  -- (0.6 s of JIT for a 0.2 s read-all). The buckets are UTC's (the function's time zone).
  insert into app_private.analytics_fact_deltas (metric, bucket_interval, bucket, key, delta)
  -- Every row's facts leave (-1) and arrive (+1); a row whose watched columns did not change
  -- cancels out in the sums (no join of the two transition tables: without statistics on them
  -- the planner sorted both on disk).
  with changed as (
    select -1 as sign, o.type, o.created_at, o.read_at from old_rows o
    where o.created_at < mark and o.inbox
    union all
    select 1, n.type, n.created_at, n.read_at from new_rows n
    where n.created_at < mark and n.inbox
  ), grouped as (
    select date_trunc('hour', c.created_at) as hour, c.type::text as type,
           -- The bin of seconds to read, as in the definitions (null: unread).
           case when c.read_at is null then null
                when extract(epoch from c.read_at - c.created_at)::double precision < 1 then 0
                else 1 + floor(8 * ln(extract(epoch from c.read_at - c.created_at)::double precision)
                               / ln(2::double precision))::integer end as bin,
           sum(c.sign) as n
    from changed c
    group by 1, 2, 3
    having sum(c.sign) <> 0
  ), facts as (
    select 'notifications.created' as metric, g.hour, g.type as key, g.n from grouped g
    union all
    select 'notifications.read', g.hour, g.type, g.n from grouped g where g.bin is not null
    union all
    select 'notifications.read_seconds', g.hour, g.type || ' ' || g.bin, g.n from grouped g where g.bin is not null
  )
  -- No order: the deltas are appended (no row another writer could hold).
  select f.metric, i.name, date_trunc(i.name, f.hour), f.key, sum(f.n)
  from facts f cross join (values ('hour'), ('day'), ('week'), ('month')) i(name)
  group by 1, 2, 3, 4
  having sum(f.n) <> 0;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.notifications_facts_changed() IS 'After update on app.notifications, per statement (transition tables): for the rows created before the fold''s mark (already in the rollups) whose read_at, created_at, type or inbox changed, appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas, grouped first: marking read moves notifications.read and the seconds-to-read histogram of the notification''s creation bucket, and read-all appends a row per (metric, bucket, type, bin), not one per notification. Rows from the mark on are read live and folded as they are then. Inserts run nothing (folded); deletes nothing (the figures are history). The facts of app_private.analytics_fact_definitions(), written out (tests/notifications/sql/208 checks them against a recount). security definer: users mark read and may not write the rollups.';

REVOKE ALL ON FUNCTION app_private.notifications_facts_changed() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notifications_facts_tail
-- created in 20261204000000_notifications_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notifications_facts_tail(metric text, bucket_interval text) RETURNS TABLE(bucket timestamp with time zone, key text, value numeric)
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    SET max_parallel_workers_per_gather TO '0'
    AS $$
      begin
        -- The metric and interval filter the facts before they are summed. No parallel workers:
        -- the planner cannot know the tail is a minute of rows (its estimate, a range of the
        -- BRIN index, is 200,000 at the growth bench's x10) and launched two for each of the
        -- reader's four tails (15-20 ms each, for no row).
        return query
          select x.bucket, x.key, x.value
          from (
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (select 1 as sign, r.* from app.notifications r
         where r.created_at >= (select m.folded_before from app_private.analytics_fold_marks m
                          where m.source = 'app.notifications')
           and r.created_at <= 'infinity'::timestamptz) r
    cross join lateral (
      values ('notifications.created', case when r.inbox then r.created_at end, r.type::text, 1::numeric),
             ('notifications.read', case when r.inbox and r.read_at is not null then r.created_at end,
              r.type::text, 1::numeric),
             ('notifications.read_seconds', case when r.inbox and r.read_at is not null then r.created_at end,
              -- The bin of seconds to read: 0 for [0, 1 s), k >= 1 for [2^((k-1)/8), 2^(k/8)) s.
              r.type::text || ' ' || case
                when extract(epoch from r.read_at - r.created_at)::double precision < 1 then 0
                else 1 + floor(8 * ln(extract(epoch from r.read_at - r.created_at)::double precision)
                               / ln(2::double precision))::integer end,
              1::numeric) ) f(metric, at, key, value)
    join (values ('all'), ('hour'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
     and (i.name <> 'hour' or f.metric like 'notification%')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 ) x
          where x.metric = notifications_facts_tail.metric
            and x.bucket_interval = notifications_facts_tail.bucket_interval;
      end;
      $$;

COMMENT ON FUNCTION app_private.notifications_facts_tail(metric text, bucket_interval text) IS 'A metric''s facts in one bucket interval of the rows of app.notifications whose created_at is from the fold''s mark on, not yet in app_private.analytics_facts (at most a minute and a margin of rows): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. Written by migration 20261204000000 from app_private.analytics_fact_definitions().';

REVOKE ALL ON FUNCTION app_private.notifications_facts_tail(metric text, bucket_interval text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notifications_read_events
-- created in 20261130040000_notifications_growth.sql; last changed in 20261207000000_notifications_read_counter_lock.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notifications_read_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  r record;
begin
  -- Most updates read nothing (a collapse folding a message in): out at once.
  if not exists (select 1 from after_rows n where n.read_at is not null and n.inbox) then
    return null;
  end if;
  -- The counters of the users whose rows became read, locked first, in user order: a read-all by
  -- mark holds its user's counter until it commits, so the statement below (a new snapshot)
  -- sees its mark and leaves the rows it covered alone.
  execute $q$
    select 1 from app.notification_counters c
    where c.user_id in (select n.user_id from after_rows n join before_rows o on o.id = n.id
                        where o.read_at is null and n.read_at is not null and n.inbox)
    order by c.user_id
    for update of c
  $q$;
  -- EXECUTE: planned for this statement's row counts. A cached plan, made when the first
  -- statement of the session read one row, joined 5,000 rows by a nested loop (25 million
  -- comparisons: 45 s instead of 1).
  for r in execute $q$
    with became as (
      select n.user_id, n.id, n.read_at, n.created_at
      from after_rows n join before_rows o on o.id = n.id
      where o.read_at is null and n.read_at is not null and n.inbox
        -- A row a read-all covered was counted and announced by the read-all (its mark).
        and not exists (select 1 from app.notification_read_marks m
                        where m.user_id = n.user_id and m.read_to >= n.created_at)
    ), per_user as (
      select b.user_id, count(*)::integer as n, max(b.read_at) as read_at,
             max(b.created_at) as up_to, (array_agg(b.id))[1] as one_id
      from became b group by b.user_id
    ), counted as (
      update app.notification_counters c set unread = greatest(c.unread - p.n, 0)
      from per_user p where c.user_id = p.user_id
      returning c.user_id, c.unread
    )
    select p.user_id, p.n, p.read_at, p.up_to, p.one_id, coalesce(c.unread, 0) as unread
    from per_user p left join counted c on c.user_id = p.user_id
    order by p.user_id
  $q$
  loop
    if r.n = 1 then
      perform app_private.emit_event('user:' || r.user_id, 'notification.read',
        (select app.notification_json(n) from app.notifications n where n.id = r.one_id));
    else
      perform app_private.emit_event('user:' || r.user_id, 'notification.read_all',
        jsonb_build_object('count', r.n,
                           'readAt', to_char(r.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'upTo', to_char(r.up_to at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'unreadCount', r.unread));
    end if;
  end loop;
  return null;
end;
$_$;

COMMENT ON FUNCTION app_private.notifications_read_events() IS 'After any update of notifications (a statement trigger with its before and after rows): the inbox rows it made read leave their users'' unread counters in one update, and each user gets one event: notification.read (the notification) when one was read, notification.read_all { count, readAt, upTo (the newest read row''s createdAt), unreadCount } when more were (read-all). Rows a pending read-all covers (app.notification_read_marks) are skipped: app.mark_all_notifications_read counted and announced them, and app_private.apply_read_marks only writes down their read_at. The users'' counters are locked first, so a read-all by mark committed meanwhile is seen and its rows are not taken off twice. One event per statement instead of one per row: read-all of 50,000 wrote 50,000 events. security definer: the counters and the event log are written by the server only.';

REVOKE ALL ON FUNCTION app_private.notifications_read_events() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notify
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  written record;
begin
  if recipient is null or not exists (select 1 from app.users u where u.id = recipient) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select * into written
  from app_private.notify_many(array[recipient], notification_type, title, body, data, priority, collapse_key);
  return case when written.shown then written.notification_id end;
end;
$$;

COMMENT ON FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) IS 'Notifies one user (app_private.notify_many''s rules): returns the notification''s id, or null when the recipient''s preferences keep it out of the inbox (it may still be pushed or mailed). AG404 for an unknown user. For other domains'' SQL functions and triggers (orders, vendors, wallet, sign-ins); never granted to API roles. security definer as notify_many.';

REVOKE ALL ON FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notify_many
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select * from app_private.notify_rows(
    notification_type, recipients,
    array_fill(title, array[cardinality(recipients)]),
    array_fill(body, array[cardinality(recipients)]),
    array_fill(coalesce(data, '{}'::jsonb), array[cardinality(recipients)]),
    priority, collapse_key)
$$;

COMMENT ON FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) IS 'The same notification for many recipients in one statement: app_private.notify_rows with one title, body and data for all (its rules apply). security definer as notify_rows; never granted to API roles.';

REVOKE ALL ON FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notify_rows
-- created in 20261124100000_notifications.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  defaults jsonb := app_private.notification_type_defaults(notification_type);
  critical boolean := priority = 'critical';
  r record;
  deliveries integer;
  stamp timestamptz;
begin
  if cardinality(recipients) is distinct from cardinality(titles)
     or cardinality(recipients) is distinct from cardinality(bodies)
     or cardinality(recipients) is distinct from cardinality(datas) then
    raise exception 'one title, body and data per recipient' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(titles) t where t is null or char_length(t) not between 1 and 200) then
    raise exception 'a notification''s title has 1 to 200 characters' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(bodies) b where b is null or char_length(b) > 2000) then
    raise exception 'a notification''s body has at most 2000 characters' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(datas) d
             where d is not null and (jsonb_typeof(d) <> 'object' or octet_length(d::text) > 2048)) then
    raise exception 'a notification''s data is a JSON object of at most 2048 bytes' using errcode = 'AG400';
  end if;
  -- The recipients' write gates, in user order, before the creation time: a read-all that
  -- writes a mark (app.mark_all_notifications_read) takes its gate too, so it waits for the rows
  -- stamped before it and every later row is stamped after its commit, newer than its mark.
  -- Only writers and read-alls touch the gates (see its table comment).
  insert into app_private.notification_write_gates (user_id)
  select u.id from app.users u where u.id = any(recipients) order by u.id
  on conflict (user_id) do nothing;
  perform 1 from app_private.notification_write_gates g
  where g.user_id = any(recipients) order by g.user_id for update;
  stamp := clock_timestamp();
  -- A collapse folds into the unread row with its key; one a pending read-all covers is read,
  -- so it is written down as read first and the notification is new.
  if notify_rows.collapse_key is not null then
    update app.notifications n set read_at = app.notification_read_at(n)
    where n.user_id = any(recipients) and n.collapse_key = notify_rows.collapse_key
      and n.read_at is null and app.notification_read_at(n) is not null;
  end if;
  for r in
    with given as (
      -- One row per recipient (the first, if one is named twice).
      select distinct on (g.uid) g.uid, g.title, g.body,
             case when notify_rows.collapse_key is not null and not coalesce(g.data, '{}') ? 'count'
                  then coalesce(g.data, '{}') || '{"count": 1}'::jsonb
                  else coalesce(g.data, '{}') end as data
      from unnest(recipients, titles, bodies, datas) with ordinality as g (uid, title, body, data, i)
      order by g.uid, g.i
    ), judged as (
      -- Mutes and blocks, here and nowhere else: a conversation the recipient muted (data names
      -- it; compared as text, so data that is not a uuid simply matches nothing) and a sender
      -- the recipient blocks (a mention's data.senderId).
      select g.*,
             exists (select 1 from app.conversation_settings s
                     where s.user_id = g.uid and s.conversation_id::text = g.data ->> 'conversationId'
                       and s.muted_until > now()) as muted,
             (g.data ->> 'kind') is not distinct from 'mention' and exists (
               select 1 from app.user_blocks b
               where b.blocker_id = g.uid and b.blocked_id::text = g.data ->> 'senderId') as blocks_sender
      from given g
    ), decided as (
      select u.id as uid, g.title, g.body, g.data,
             critical or app_private.wants(p.types, notification_type, 'inApp', defaults) as want_inbox,
             (critical or not g.muted)
               and (critical or app_private.wants(p.types, notification_type, 'push', defaults)) as want_push,
             -- No e-mail for people without an address (wallet and some OpenID sign-ins).
             u.email is not null and (critical or not g.muted)
               and (critical or app_private.wants(p.types, notification_type, 'email', defaults)) as want_email,
             case when not critical
                  then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end
               as quiet_until
      from judged g
      join app.users u on u.id = g.uid
      left join app.notification_preferences p on p.user_id = u.id
      -- A mention is not written at all for a muted conversation or a blocked sender.
      -- (`is not distinct from`: data without a kind is not a mention, never null here.)
      where not ((g.data ->> 'kind') is not distinct from 'mention' and (g.muted or g.blocks_sender))
    ), written as (
      insert into app.notifications as n (user_id, type, title, body, data, priority, collapse_key, inbox, created_at)
      select d.uid, notification_type, d.title, d.body, d.data,
             notify_rows.priority, notify_rows.collapse_key, d.want_inbox, stamp
      from decided d
      on conflict (user_id, collapse_key) where read_at is null and collapse_key is not null
      do update set
        title = excluded.title,
        body = excluded.body,
        data = excluded.data || jsonb_build_object('count',
          coalesce((n.data ->> 'count')::integer, 0) + coalesce((excluded.data ->> 'count')::integer, 1)),
        priority = greatest(n.priority, excluded.priority),
        updated_at = now()
      returning n.id, n.user_id, n.inbox, n.xmax = 0 as created
    )
    select w.id, w.user_id, w.inbox, w.created, d.want_push, d.want_email, d.quiet_until
    from written w join decided d on d.uid = w.user_id
  loop
    if r.created then
      if r.inbox then
        perform app_private.emit_event('user:' || r.user_id, 'notification.created',
          (select app.notification_json(n) from app.notifications n where n.id = r.id));
      end if;
      deliveries := 0;
      if r.want_push then
        insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
        select r.id, 'push', d.id, coalesce(r.quiet_until, now())
        from app.push_devices d where d.user_id = r.user_id;
        get diagnostics deliveries = row_count;
      end if;
      if r.want_email then
        insert into app_private.notification_deliveries (notification_id, channel, not_before)
        values (r.id, 'email', coalesce(r.quiet_until, now()));
        deliveries := deliveries + 1;
      end if;
      if deliveries > 0 then
        perform app_private.enqueue_job('notifications.deliver',
          jsonb_build_object('notificationIds', jsonb_build_array(r.id)),
          coalesce(r.quiet_until, now()), 'notifications.deliver:' || r.id::text);
      end if;
    end if;
    recipient_id := r.user_id;
    notification_id := r.id;
    shown := r.inbox;
    is_new := r.created;
    return next;
  end loop;
end;
$$;

COMMENT ON FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) IS 'THE way notifications are written (notify and notify_many call it), for any number of recipients in one statement, each with its own title, body and data. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences, quiet hours and mutes. Mutes and blocks are decided here: a notification whose data.conversationId the recipient muted (app.conversation_settings) gets no push or e-mail (its inbox row, event and count still move); a mention (data.kind = "mention") of a muted conversation or from a sender the recipient blocks (data.senderId, app.user_blocks) is not written at all. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. Each recipient''s write gate (app_private.notification_write_gates) is taken first, in user order, and the rows'' created_at is the clock after that (see app.mark_all_notifications_read); a collapse row a pending read-all covers is written down as read first, so the notification is a new row. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. Unknown recipients are skipped. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

REVOKE ALL ON FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.quiet_until
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
  select case
    when quiet_start is null or quiet_end is null or time_zone is null then null
    when quiet_start < quiet_end then
      case when (at at time zone time_zone)::time >= quiet_start and (at at time zone time_zone)::time < quiet_end
           then ((at at time zone time_zone)::date + quiet_end) at time zone time_zone end
    when (at at time zone time_zone)::time >= quiet_start
      then ((at at time zone time_zone)::date + 1 + quiet_end) at time zone time_zone
    when (at at time zone time_zone)::time < quiet_end
      then ((at at time zone time_zone)::date + quiet_end) at time zone time_zone
  end
$$;

COMMENT ON FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) IS 'When the quiet period that `at` falls in ends, or null when `at` is not in quiet hours. Start and end are wall-clock times in the time zone; a period whose start is after its end crosses midnight (22:00-07:00). Inlinable pure SQL (no pinned search_path, see app.notification_json).';

REVOKE ALL ON FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_deliveries
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_deliveries(outcomes jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  recorded integer;
  refused_devices uuid[];
begin
  with outcome as (
    select * from jsonb_to_recordset(outcomes) as o(
      id bigint, token uuid, outcome text, code text, message text, "providerId" text,
      "retryAfter" double precision
    )
  ), updated as (
    update app_private.notification_deliveries d
    set status = case o.outcome when 'sent' then 'sent' when 'pruned' then 'pruned'
                                when 'failed' then 'failed' else 'queued' end::app_private.delivery_status,
        provider_message_id = left(o."providerId", 500),
        error_code = left(o.code, 100),
        error_message = left(o.message, 1000),
        finished_at = case when o.outcome = 'retry' then null else now() end,
        not_before = case when o.outcome = 'retry'
                          then now() + make_interval(secs => greatest(coalesce(o."retryAfter", 0), 0))
                          else d.not_before end,
        in_flight_since = null,
        in_flight_token = null
    from outcome o
    where d.id = o.id and d.in_flight_token = o.token and d.status = 'queued'
      and o.outcome in ('sent', 'failed', 'pruned', 'retry')
    returning d.device_id, o.outcome
  )
  select count(*)::integer, array_agg(u.device_id) filter (where u.outcome = 'pruned' and u.device_id is not null)
  into recorded, refused_devices
  from updated u;
  -- A statement of its own: the devices' foreign key sets device_id null on the rows just updated.
  if refused_devices is not null then
    delete from app.push_devices dv where dv.id = any(refused_devices);
  end if;
  return recorded;
end;
$$;

COMMENT ON FUNCTION app_private.record_deliveries(outcomes jsonb) IS 'Records the outcomes of claimed deliveries ([{ id, token, outcome: sent | failed | pruned | retry, code, message, providerId, retryAfter }]): sent keeps FCM''s message name, failed and pruned FCM''s error code; pruned also deletes the device (FCM said the token is unregistered or invalid); retry puts the row back in the queue, due after retryAfter seconds. Only a claim''s own token records (a stale attempt cannot overwrite another''s outcome). Returns how many were recorded. Server only.';

REVOKE ALL ON FUNCTION app_private.record_deliveries(outcomes jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.reindex_reworded_notifications
-- created in 20261130040000_notifications_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.reindex_reworded_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
begin
  -- Only a collapse rewords a notification, and only an unread one: reading is out at once.
  if not exists (select 1 from after_rows n where n.read_at is null and n.inbox) then
    return null;
  end if;
  -- EXECUTE: planned for this statement's row counts (see notifications_read_events); the
  -- changed rows first, then the search rows of those only.
  execute $q$
    with changed as materialized (
      select n.id, lower(n.title || ' ' || n.body) as words
      from after_rows n join before_rows o on o.id = n.id
      where (o.title, o.body) is distinct from (n.title, n.body)
    )
    update app_private.notification_search s set words = c.words
    from changed c where s.notification_id = c.id
  $q$;
  return null;
end;
$_$;

COMMENT ON FUNCTION app_private.reindex_reworded_notifications() IS 'After an update statement on notifications: the rows whose title or body changed (a collapse key folding a new message into an unread notification) get their search words again; reading changes neither, and costs only this join. security definer: the search table is server-only.';

REVOKE ALL ON FUNCTION app_private.reindex_reworded_notifications() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.role_change_notification
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.role_change_notification() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.notify(
    new.user_id,
    'SYSTEM',
    'Your role changed',
    format('Your role is now %s (it was %s).', new.new_role, new.previous_role),
    jsonb_build_object('kind', 'role.changed', 'previousRole', new.previous_role, 'newRole', new.new_role)
  );
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.role_change_notification() IS 'A role change gives the user a SYSTEM notification (data.kind role.changed, the roles before and after; never the admin''s reason, which is for the audit trail). security definer: it writes other users'' inboxes through app_private.notify_many.';

REVOKE ALL ON FUNCTION app_private.role_change_notification() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.take_deliveries
-- created in 20261124100000_notifications.sql; last changed in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.take_deliveries(notification_ids uuid[], max_rows integer, tried_ids bigint[]) RETURNS TABLE(delivery_id bigint, attempt_token uuid, channel app_private.delivery_channel, device_token text, platform app.push_platform, email text, notification jsonb, collapse_key text)
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  next_at timestamptz;
  waiting uuid[];
begin
  -- A row still in flight was claimed by an attempt that never recorded its outcome (the process
  -- died after sending, or before): it may have gone out, so it is never sent again.
  update app_private.notification_deliveries d
  set status = 'failed', error_code = 'outcome_unknown', finished_at = now(),
      error_message = 'an earlier attempt was interrupted before its outcome was recorded',
      in_flight_since = null, in_flight_token = null
  where d.notification_id = any(notification_ids) and d.status = 'queued' and d.in_flight_since is not null;

  -- Preferences again, at delivery: a channel turned off since, a recipient suspended since, a
  -- device unregistered since, the conversation muted since; and quiet hours that began since
  -- hold the row back again.
  with kinds as (
    -- The defaults of the types at hand only (one call each, not one per row).
    select x.t, app_private.notification_type_defaults(x.t) as defaults
    from (select distinct n.type from app.notifications n where n.id = any(notification_ids)) x (t)
  ), current_state as (
    select d.id,
           case
             when u.status <> 'active' then 'recipient_suspended'
             when d.channel = 'push' and d.device_id is null then 'device_gone'
             when d.channel = 'email' and u.email is null then 'no_email_address'
             when n.priority <> 'critical'
                  and not app_private.wants(p.types, n.type, d.channel::text, k.defaults) then 'preference_off'
             -- The same mute as app_private.notify_rows decides with.
             when n.priority <> 'critical' and exists (
                    select 1 from app.conversation_settings s
                    where s.user_id = n.user_id and s.conversation_id::text = n.data ->> 'conversationId'
                      and s.muted_until > now()) then 'conversation_muted'
           end as refusal,
           case when n.priority <> 'critical'
                then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end as quiet
    from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    join app.users u on u.id = n.user_id
    join kinds k on k.t = n.type
    left join app.notification_preferences p on p.user_id = n.user_id
    where d.notification_id = any(notification_ids) and d.status = 'queued' and d.not_before <= now()
  ), refused as (
    update app_private.notification_deliveries d
    set status = 'failed', error_code = c.refusal, finished_at = now(),
        error_message = 'not sent: ' || replace(c.refusal, '_', ' ')
    from current_state c
    where d.id = c.id and c.refusal is not null
    returning d.id
  )
  update app_private.notification_deliveries d set not_before = c.quiet
  from current_state c
  where d.id = c.id and c.refusal is null and c.quiet is not null;

  -- Rows not yet due (quiet hours) get a job of their own for when they are.
  select min(d.not_before), array_agg(distinct d.notification_id) into next_at, waiting
  from app_private.notification_deliveries d
  where d.notification_id = any(notification_ids) and d.status = 'queued' and d.not_before > now();
  if next_at is not null then
    perform app_private.enqueue_job('notifications.deliver',
      jsonb_build_object('notificationIds', to_jsonb(waiting)), next_at,
      'notifications.deliver:' || md5(array_to_string(waiting, ',')) || ':' || extract(epoch from next_at)::text);
  end if;

  -- At most max_rows: what the caller sends now. The rest stays queued and unclaimed, so an
  -- attempt that dies costs only the rows it had in flight (they fail as outcome_unknown above,
  -- at the next call); the others are sent by the next attempt. tried_ids: the rows this
  -- attempt already tried and put back for a retry, not taken again before the job's retry.
  return query
  with claimed as (
    update app_private.notification_deliveries d
    set attempts = d.attempts + 1, in_flight_since = now(), in_flight_token = gen_random_uuid()
    where d.id in (
      select x.id from app_private.notification_deliveries x
      where x.notification_id = any(notification_ids) and x.status = 'queued' and x.not_before <= now()
        and x.in_flight_since is null and x.id <> all(coalesce(tried_ids, '{}'))
      order by x.id
      limit greatest(max_rows, 0)
      for update skip locked
    )
    returning d.id, d.in_flight_token, d.channel, d.device_id, d.notification_id
  )
  select c.id, c.in_flight_token, c.channel, dv.token, dv.platform, u.email,
         app.notification_json(n), n.collapse_key
  from claimed c
  join app.notifications n on n.id = c.notification_id
  join app.users u on u.id = n.user_id
  left join app.push_devices dv on dv.id = c.device_id
  order by c.id;
end;
$$;

COMMENT ON FUNCTION app_private.take_deliveries(notification_ids uuid[], max_rows integer, tried_ids bigint[]) IS 'Claims at most max_rows due deliveries of some notifications (except tried_ids, the rows this attempt already tried and put back for a retry) for one attempt (attempts + 1, in_flight_since, a fresh attempt token) and returns what sending needs (device token and platform, e-mail address, the notification); the caller sends them, records them (record_deliveries) and calls again until none is returned, so a crash costs only the rows in flight. Before that: rows an interrupted attempt left in flight fail as outcome_unknown (never sent twice; the caller records every slice before it takes the next, so its own rows are never in flight here); preferences are checked again (a channel turned off since, a suspended recipient, a device gone, the notification''s conversation muted since: failed with that code); quiet hours that began since hold rows back, with a notifications.deliver job queued for when they end. Server only (the job''s connection).';

REVOKE ALL ON FUNCTION app_private.take_deliveries(notification_ids uuid[], max_rows integer, tried_ids bigint[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.touch_push_device
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.touch_push_device() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.touch_push_device() IS 'A device''s updated_at is the time of its last registration.';

REVOKE ALL ON FUNCTION app_private.touch_push_device() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.validate_notification_preferences
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.validate_notification_preferences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  entry record;
  channel record;
begin
  for entry in select * from jsonb_each(new.types) loop
    if entry.key not in ('OPPORTUNITY', 'MESSAGE', 'ENTITY', 'SYSTEM', 'WALLET') then
      raise exception 'unknown notification type %', entry.key using errcode = 'AG400';
    end if;
    if jsonb_typeof(entry.value) <> 'object' then
      raise exception 'the channels of % are an object', entry.key using errcode = 'AG400';
    end if;
    for channel in select * from jsonb_each(entry.value) loop
      if channel.key not in ('inApp', 'push', 'email') or jsonb_typeof(channel.value) <> 'boolean' then
        raise exception 'the channels of % are inApp, push and email, each true or false', entry.key
          using errcode = 'AG400';
      end if;
    end loop;
  end loop;
  if new.quiet_start is not null then
    if extract(second from new.quiet_start) <> 0 or extract(second from new.quiet_end) <> 0 then
      raise exception 'quiet hours start and end on a minute (HH:MM)' using errcode = 'AG400';
    end if;
    if new.quiet_start = new.quiet_end then
      raise exception 'quiet hours start and end at different times' using errcode = 'AG400';
    end if;
    if tg_op = 'INSERT' or new.quiet_time_zone is distinct from old.quiet_time_zone then
      if not exists (select 1 from pg_catalog.pg_timezone_names z where z.name = new.quiet_time_zone) then
        raise exception 'unknown time zone %', new.quiet_time_zone using errcode = 'AG400';
      end if;
    end if;
  end if;
  new.updated_at := now();
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.validate_notification_preferences() IS 'Preferences hold known types and channels with boolean values, and quiet hours on whole minutes, not empty, in a time zone Postgres knows by name (pg_timezone_names, checked only when the zone changes: reading that view costs milliseconds). AG400 otherwise, whatever path wrote the row. security definer: it reads pg_timezone_names whoever writes.';

REVOKE ALL ON FUNCTION app_private.validate_notification_preferences() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.wants
-- created in 20261124100000_notifications.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  select coalesce((choices -> notification_type::text ->> channel)::boolean, (defaults ->> channel)::boolean, false)
$$;

COMMENT ON FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) IS 'Whether a user wants a type on a channel: their own choice, else the default. Inlinable pure SQL with no pinned search_path on purpose (see app.notification_json), so the send''s hot path pays no call per recipient.';

REVOKE ALL ON FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.write_batch_chunk
-- created in 20261130040000_notifications_growth.sql; last changed in 20261205000000_notifications_read_marks.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.write_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  b app.notification_batches;
  c app_private.notification_batch_chunks;
  defaults jsonb;
  critical boolean;
  shown integer;
  total integer;
  stamp timestamptz;
begin
  select * into c from app_private.notification_batch_chunks x
  where x.batch_id = target_batch_id and x.chunk = target_chunk for update;
  if not found then
    raise exception 'chunk not found' using errcode = 'AG404';
  end if;
  if c.written_at is not null then
    return 0;
  end if;
  select * into b from app.notification_batches x where x.id = target_batch_id;
  defaults := app_private.notification_type_defaults(b.type);
  critical := b.priority = 'critical';
  -- The recipients' write gates, then the creation time (as app_private.notify_rows).
  insert into app_private.notification_write_gates (user_id)
  select u.id from app.users u
  where u.id between c.first_user_id and c.last_user_id
    and app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
  order by u.id
  on conflict (user_id) do nothing;
  perform 1 from app_private.notification_write_gates g
  where g.user_id between c.first_user_id and c.last_user_id order by g.user_id for update;
  stamp := clock_timestamp();
  -- (batch_id, user_id) is unique: rows a batch of an earlier release wrote are not written again.
  with decided as (
    select u.id as uid,
           'inApp' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'inApp', defaults)) as want_inbox,
           'push' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'push', defaults)) as want_push,
           'email' = any(b.channels) and u.email is not null
             and (critical or app_private.wants(p.types, b.type, 'email', defaults)) as want_email,
           case when not critical
                then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end as quiet_until
    from app.users u
    left join app.notification_preferences p on p.user_id = u.id
    where u.id between c.first_user_id and c.last_user_id
      and app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
  ), written as (
    insert into app.notifications (user_id, type, title, body, data, priority, batch_id, inbox, created_at)
    select d.uid, b.type, b.title, b.body, b.data, b.priority, b.id, d.want_inbox, stamp from decided d
    on conflict do nothing
    returning id, user_id, inbox
  ), pushes as (
    insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
    select w.id, 'push', dv.id, coalesce(d.quiet_until, now())
    from written w join decided d on d.uid = w.user_id join app.push_devices dv on dv.user_id = w.user_id
    where d.want_push
  ), emails as (
    insert into app_private.notification_deliveries (notification_id, channel, not_before)
    select w.id, 'email', coalesce(d.quiet_until, now())
    from written w join decided d on d.uid = w.user_id
    where d.want_email
  )
  select count(*) filter (where w.inbox)::integer, count(*)::integer into shown, total from written w;
  update app_private.notification_batch_chunks x set written_at = now(), recipients = total
  where x.batch_id = target_batch_id and x.chunk = target_chunk;
  update app.notification_batches x set written = x.written + shown where x.id = target_batch_id;
  return total;
end;
$$;

COMMENT ON FUNCTION app_private.write_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'First step of a notifications.batch_chunk job, in a transaction of its own: writes the chunk''s recipients'' notifications (the batch''s channels, then each user''s choices and quiet hours, critical bypassing them) and their push and e-mail delivery rows, takes the recipients'' write gates before it stamps the rows'' created_at (as notify_rows), marks the chunk written and adds its inbox rows to the batch''s written counter. Once per chunk (written_at, under the chunk row''s lock): a job killed before its commit writes nothing, its rerun writes the chunk whole. Returns the rows written. security definer: it writes every recipient''s inbox.';

REVOKE ALL ON FUNCTION app_private.write_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.write_notification_batch
-- created in 20261124100000_notifications.sql; last changed in 20261206000000_notifications_batch_rerun.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer DEFAULT 1000) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  b app.notification_batches;
  chunk_count integer;
begin
  select * into b from app.notification_batches where id = target_batch_id for update;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  if b.status = 'done' then
    return coalesce(b.chunks, 0);
  end if;
  update app.notification_batches set status = 'sending', started_at = coalesce(started_at, now())
  where id = b.id;
  -- The audience in user-id ranges of chunk_size (ids only: nothing is written per recipient
  -- here); each range is written by its own job, in a transaction of its own. Planned once, in
  -- this one statement: a rerun finds the chunks by reading them (an insert meeting them would
  -- wait for the chunk jobs writing them, which wait for this batch row).
  if not exists (select 1 from app_private.notification_batch_chunks c where c.batch_id = b.id) then
    insert into app_private.notification_batch_chunks (batch_id, chunk, first_user_id, last_user_id)
    select b.id, x.chunk, (array_agg(x.id order by x.id))[1],
           (array_agg(x.id order by x.id desc))[1]
    from (
      select u.id, ((row_number() over (order by u.id)) - 1) / chunk_size as chunk
      from app.users u
      where app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
    ) x
    group by x.chunk;
  end if;
  select count(*)::integer into chunk_count from app_private.notification_batch_chunks c where c.batch_id = b.id;
  update app.notification_batches
  set chunks = chunk_count,
      status = case when chunk_count = 0 then 'done' else 'sending' end::app.notification_batch_status,
      finished_at = case when chunk_count = 0 then now() end
  where id = b.id;
  perform app_private.enqueue_job('notifications.batch_chunk',
            jsonb_build_object('batchId', b.id, 'chunk', c.chunk), now(),
            'notifications.batch_chunk:' || b.id::text || ':' || c.chunk::text)
  from app_private.notification_batch_chunks c
  where c.batch_id = b.id and c.done_at is null;
  return chunk_count;
end;
$$;

COMMENT ON FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer) IS 'The notifications.batch job: splits a batch''s audience (active users who existed when it was accepted) into user-id ranges of chunk_size and queues one notifications.batch_chunk job per range; it writes no notification (app_private.write_batch_chunk does, a range per transaction). Idempotent: the chunks are planned once, in one statement, and a rerun only reads them (so it never waits for the chunk jobs writing them, which wait for the batch row it holds); the jobs are keyed. security definer: it reads every user and writes the server-only chunks.';

REVOKE ALL ON FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer) FROM PUBLIC;
