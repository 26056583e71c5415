-- Agora's schema as it is now, domain events: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121100000_events.sql
--   supabase/migrations/20261130050200_events_partitions.sql
--   supabase/migrations/20261201020000_events_presence_topics.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- table app.events
-- created in 20261121100000_events.sql; last changed in 20261130050200_events_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.events (
    id bigint NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    topic text NOT NULL,
    event text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT events_event_check CHECK ((event ~ '^[a-z_]+(\.[a-z_]+)*$'::text)),
    CONSTRAINT events_topic_check CHECK (((char_length(topic) >= 1) AND (char_length(topic) <= 200)))
)
PARTITION BY RANGE (created_at);

COMMENT ON TABLE app.events IS 'Durable realtime events, read in (xid, id) order below the running-transaction horizon so a cursor never skips or repeats, whatever order concurrent writers commit in. Partitioned by day on created_at (partitions in app_partitions, made ahead by agora-maintain-partitions); retention (retention.eventDays) drops whole days.';

ALTER TABLE app.events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id, created_at);

CREATE INDEX events_order_idx ON ONLY app.events USING btree (xid, id);

CREATE INDEX events_topic_order_idx ON ONLY app.events USING btree (topic, xid, id);

ALTER TABLE app.events ENABLE ROW LEVEL SECURITY;

CREATE POLICY events_select_readable ON app.events FOR SELECT TO authenticated USING ((topic IN ( SELECT app.readable_topics() AS readable_topics)));

GRANT SELECT ON TABLE app.events TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.can_read_topic
-- created in 20261121100000_events.sql; last changed in 20261201020000_events_presence_topics.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.can_read_topic(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if topic like 'presence:%' then
    return app.can_see_presence(topic);
  end if;
  return exists (select 1 from app.readable_topics_among(array[topic]) t);
end;
$$;

COMMENT ON FUNCTION app.can_read_topic(topic text) IS 'Whether the caller may read one realtime topic: app.readable_topics_among of that one topic (the rule of app.readable_topics, checked by key), so one rule serves every transport; presence:<user id> topics (Realtime presence only, no events) by app.can_see_presence.';

REVOKE ALL ON FUNCTION app.can_read_topic(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_read_topic(topic text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.can_see_presence
-- created in 20261201020000_events_presence_topics.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.can_see_presence(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  uuid_re constant text := '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
  target uuid;
begin
  if me is null or topic is null or topic not like 'presence:%' or substr(topic, 10) !~ uuid_re then
    return false;
  end if;
  -- The topic rule's gate first (a live session, SUBSCRIBER or above): the caller's own user topic.
  if not exists (select 1 from app.readable_topics_among(array['user:' || me::text])) then
    return false;
  end if;
  target := substr(topic, 10)::uuid;
  if target = me then
    return true;
  end if;
  return exists (
      select 1
      from app.conversation_participants mine
      join app.conversation_participants theirs
        on theirs.conversation_id = mine.conversation_id and theirs.user_id = target
      where mine.user_id = me)
    and not exists (
      select 1 from app.user_blocks b where b.blocker_id = target and b.blocked_id = me);
end;
$_$;

COMMENT ON FUNCTION app.can_see_presence(topic text) IS 'Whether the caller may see who is online on presence:<user id>: that user themself, or anyone sharing a conversation with them whom they do not block (a live session and SUBSCRIBER or above first, as app.readable_topics_among). Presence is app-wide (a person is online while any page of the app is open), so it is shown only to people who already share a conversation. security definer: it reads memberships, blocks and sessions the caller may not read; it returns a boolean.';

REVOKE ALL ON FUNCTION app.can_see_presence(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_see_presence(topic text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.can_write_topic
-- created in 20261121100000_events.sql; last changed in 20261201020000_events_presence_topics.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.can_write_topic(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (topic like 'conversation:%' and app.can_read_topic(topic))
    or (topic = 'presence:' || auth.uid()::text and app.can_see_presence(topic));
end;
$$;

COMMENT ON FUNCTION app.can_write_topic(topic text) IS 'Whether the caller may broadcast or track presence on a realtime topic: participants of a conversation may (presence, client-side signals); a person on their own presence:<user id> topic (app-wide presence); user: and admin topics are written by the server only (realtime.send), never by clients. security definer: it reads memberships through app.can_read_topic; it returns a boolean.';

REVOKE ALL ON FUNCTION app.can_write_topic(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_write_topic(topic text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.readable_topics
-- created in 20261121100000_events.sql; last changed in 20261128090100_signin_live_sessions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.readable_topics() RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  -- A signed-out (revoked) session reads nothing, on any transport, even before its token expires.
  if session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or not exists (
       select 1 from app_private.live_sessions(array[session_claim::uuid]) l where l.id = me
     ) then
    return;
  end if;
  return next 'user:' || me::text;
  if app.is_admin() then
    return next 'admin';
  end if;
  return query
    select 'conversation:' || p.conversation_id::text
    from app.conversation_participants p where p.user_id = me;
  -- The owner reads its vendor's topic (orders of the vendor), whatever the vendor's status.
  return query
    select 'vendor:' || v.id::text from app.vendors v where v.owner_id = me;
end;
$_$;

COMMENT ON FUNCTION app.readable_topics() IS 'THE topic rule, as the set of topics the current user may read: conversation:<id> for participants (active users of at least SUBSCRIBER), user:<id> for that user, vendor:<id> for the vendor''s owner, admin for ADMINs; only for a live session (app_private.live_sessions: not revoked, not expired, the user active), so signout or suspension ends realtime access at once. Every transport uses it: SSE and long-poll through app.can_read_topic, Realtime through the realtime.messages policy, the app.events policy as a set (evaluated once per statement, not per event row). security definer: it reads memberships, vendors and sessions the caller may not read, and returns only the caller''s own topics.';

REVOKE ALL ON FUNCTION app.readable_topics() FROM PUBLIC;
GRANT ALL ON FUNCTION app.readable_topics() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.emit_ephemeral
-- created in 20261121100000_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  envelope jsonb := jsonb_build_object(
    'id', 'ephemeral.' || gen_random_uuid()::text,
    'topic', topic,
    'event', event,
    'payload', payload,
    'createdAt', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  );
begin
  perform realtime.send(envelope, event, topic, true);
  perform set_config('realtime.topic', '', true);
  perform pg_notify('agora_ephemeral', envelope::text);
end;
$$;

COMMENT ON FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) IS 'Ephemeral events (typing): delivered to live subscribers only, never stored in app.events. Hosted Realtime gets them through realtime.send, API processes through NOTIFY. security definer for the same reason as emit_event.';

REVOKE ALL ON FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.emit_event
-- created in 20261121100000_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.emit_event(topic text, event text, payload jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  row app.events;
begin
  insert into app.events (topic, event, payload) values (topic, event, payload) returning * into row;
  perform realtime.send(
    jsonb_build_object(
      'id', row.xid::text || '.' || row.id::text,
      'topic', row.topic,
      'event', row.event,
      'payload', row.payload,
      'createdAt', to_char(row.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    ),
    event, topic, true
  );
  -- realtime.send sets realtime.topic for the transaction; clear it so nothing later relies on it.
  perform set_config('realtime.topic', '', true);
  -- Wakes the event hubs of every API process; NOTIFY is delivered at commit.
  perform pg_notify('agora_events', '');
end;
$$;

COMMENT ON FUNCTION app_private.emit_event(topic text, event text, payload jsonb) IS 'Appends a durable event and hands the same envelope to Realtime; its id is the event''s cursor (<xid>.<id>), the same on every transport, so clients remove duplicates. security definer: triggers write events on behalf of whichever user caused them.';

REVOKE ALL ON FUNCTION app_private.emit_event(topic text, event text, payload jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_events
-- created in 20261121100000_events.sql; last changed in 20261130050200_events_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_events(keep_days integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform app_private.drop_daily_partitions('app.events',
    pg_catalog.now() - pg_catalog.make_interval(days => coalesce(keep_days, app.config_int('retention', 'eventDays'))));
end;
$$;

COMMENT ON FUNCTION app_private.prune_events(keep_days integer) IS 'The event log keeps retention.eventDays (default 3; keep_days when given) and at most a day more: long enough for any client to resume, short enough to stay small. Drops whole daily partitions. Run by pg_cron (agora-prune-events).';

REVOKE ALL ON FUNCTION app_private.prune_events(keep_days integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_realtime_messages
-- created in 20261130050200_events_partitions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_realtime_messages() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
declare
  gone integer := 0;
begin
  if pg_catalog.to_regclass('realtime.messages') is null
     or (select c.relkind from pg_catalog.pg_class c where c.oid = 'realtime.messages'::regclass) <> 'r' then
    return 0;  -- Hosted: Supabase Realtime partitions and prunes its own table.
  end if;
  execute 'delete from realtime.messages where inserted_at < now()::timestamp - $1'
    using pg_catalog.make_interval(hours => app.config_int('retention', 'realtimeMessageHours'));
  get diagnostics gone = row_count;
  return gone;
end;
$_$;

COMMENT ON FUNCTION app_private.prune_realtime_messages() IS 'pg_cron (agora-prune-realtime-messages): on the local stack, where realtime.messages is a plain table of our own (sql/local/20_realtime.sql), deletes its rows older than retention.realtimeMessageHours (default 72). Hosted, realtime.messages is Supabase Realtime''s table, partitioned by day and pruned by Realtime itself: nothing is done. Returns how many rows went.';

REVOKE ALL ON FUNCTION app_private.prune_realtime_messages() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- policy realtime.messages.realtime_messages_insert_topic
-- created in 20261121100000_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE POLICY realtime_messages_insert_topic ON realtime.messages AS PERMISSIVE FOR INSERT TO authenticated
  WITH CHECK (((topic = ( SELECT realtime.topic() AS topic)) AND (extension = ANY (ARRAY['broadcast'::text, 'presence'::text])) AND ( SELECT app.can_write_topic(( SELECT realtime.topic() AS topic)) AS can_write_topic)));

-- ---------------------------------------------------------------------------------------------
-- policy realtime.messages.realtime_messages_select_topic
-- created in 20261121100000_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE POLICY realtime_messages_select_topic ON realtime.messages AS PERMISSIVE FOR SELECT TO authenticated
  USING (((topic = ( SELECT realtime.topic() AS topic)) AND ( SELECT app.can_read_topic(( SELECT realtime.topic() AS topic)) AS can_read_topic)));

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-events
-- created in 20261121100000_events.sql; last changed in 20261130050200_events_partitions.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: */10 * * * *
-- command:
--   select app_private.prune_events()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-realtime-messages
-- created in 20261130050200_events_partitions.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: */10 * * * *
-- command:
--   select app_private.prune_realtime_messages()
