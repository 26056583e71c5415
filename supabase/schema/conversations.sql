-- Agora's schema as it is now, domain conversations: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121100200_conversations.sql
--   supabase/migrations/20261130020000_conversations_mute_block.sql
--   supabase/migrations/20261130030000_conversations_growth.sql
--   supabase/migrations/20261201040000_conversations_unread_buckets.sql
--   supabase/migrations/20261202000100_conversations_search_cap.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.conversation_type
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.conversation_type AS ENUM (
    'direct',
    'group'
);

COMMENT ON TYPE app.conversation_type IS 'Direct: exactly two people, one per pair. Group: a titled set with a creator.';

GRANT ALL ON TYPE app.conversation_type TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.conversation_participants
-- created in 20261121100200_conversations.sql; last changed in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.conversation_participants (
    conversation_id uuid NOT NULL,
    user_id uuid NOT NULL,
    added_by uuid,
    joined_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_seq bigint DEFAULT 0 NOT NULL,
    last_read_message_id uuid,
    last_read_at timestamp with time zone,
    unread_count integer DEFAULT 0 NOT NULL,
    last_activity_at timestamp with time zone NOT NULL
);

COMMENT ON TABLE app.conversation_participants IS 'Who takes part in a conversation, and each one''s read watermark (only moves forward).';

COMMENT ON COLUMN app.conversation_participants.unread_count IS 'The messages of the conversation after last_read_seq that are not tombstones and not this participant''s own: a counter kept exact by the triggers of app.messages and the read mark''s guard (docs/conversations.md).';

COMMENT ON COLUMN app.conversation_participants.last_activity_at IS 'A copy of the conversation''s last_activity_at, kept by triggers, so a user''s conversations are listed newest activity first from one index.';

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_pkey PRIMARY KEY (conversation_id, user_id);

CREATE INDEX conversation_participants_added_by_idx ON app.conversation_participants USING btree (added_by);

CREATE INDEX conversation_participants_user_activity_idx ON app.conversation_participants USING btree (user_id, last_activity_at DESC, conversation_id DESC);

CREATE TRIGGER participants_events AFTER INSERT OR DELETE ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.participant_events();

CREATE TRIGGER participants_guard_block BEFORE INSERT ON app.conversation_participants FOR EACH ROW WHEN (((new.added_by IS NOT NULL) AND (new.added_by <> new.user_id))) EXECUTE FUNCTION app_private.guard_participant_block();

CREATE TRIGGER participants_guard_read_mark BEFORE UPDATE OF conversation_id, user_id, added_by, joined_at, last_read_seq, last_read_message_id, last_read_at ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.guard_read_mark();

CREATE TRIGGER participants_notify AFTER INSERT ON app.conversation_participants REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.conversation_notifications();

CREATE TRIGGER participants_read_mark_events AFTER UPDATE OF last_read_seq ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.read_mark_events();

CREATE TRIGGER participants_read_notifications AFTER UPDATE OF last_read_seq ON app.conversation_participants FOR EACH ROW WHEN ((new.last_read_seq > old.last_read_seq)) EXECUTE FUNCTION app_private.conversation_read_notifications();

CREATE TRIGGER participants_start BEFORE INSERT ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.start_participant();

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_added_by_fkey FOREIGN KEY (added_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.conversation_participants ENABLE ROW LEVEL SECURITY;

CREATE POLICY participants_select_participant ON app.conversation_participants FOR SELECT TO authenticated USING ((( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role) AND ((user_id = ( SELECT auth.uid() AS uid)) OR app.is_participant(conversation_id))));

CREATE POLICY participants_update_self ON app.conversation_participants FOR UPDATE TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.conversation_participants TO authenticated;

GRANT UPDATE(last_read_seq) ON TABLE app.conversation_participants TO authenticated;

GRANT UPDATE(last_read_message_id) ON TABLE app.conversation_participants TO authenticated;

GRANT UPDATE(last_read_at) ON TABLE app.conversation_participants TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.conversation_settings
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.conversation_settings (
    conversation_id uuid NOT NULL,
    user_id uuid NOT NULL,
    muted_until timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app.conversation_settings IS 'A participant''s own settings for one conversation: muted_until (''infinity'' until unmuted; a past time means not muted). While muted, the conversation''s notifications are not pushed or mailed and mentions notify nothing (app_private.notify_rows). Gone with the participant row (leaving).';

ALTER TABLE ONLY app.conversation_settings
    ADD CONSTRAINT conversation_settings_pkey PRIMARY KEY (user_id, conversation_id);

CREATE INDEX conversation_settings_conversation_id_idx ON app.conversation_settings USING btree (conversation_id, user_id);

ALTER TABLE ONLY app.conversation_settings
    ADD CONSTRAINT conversation_settings_conversation_id_user_id_fkey FOREIGN KEY (conversation_id, user_id) REFERENCES app.conversation_participants(conversation_id, user_id) ON DELETE CASCADE;

ALTER TABLE app.conversation_settings ENABLE ROW LEVEL SECURITY;

CREATE POLICY conversation_settings_select_self ON app.conversation_settings FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.conversation_settings TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.conversations
-- created in 20261121100200_conversations.sql; last changed in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.conversations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    type app.conversation_type NOT NULL,
    title text,
    created_by uuid,
    direct_key text,
    last_seq bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_activity_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT conversations_direct_key CHECK (((type = 'direct'::app.conversation_type) = (direct_key IS NOT NULL))),
    CONSTRAINT conversations_direct_untitled CHECK (((type = 'group'::app.conversation_type) OR (title IS NULL))),
    CONSTRAINT conversations_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
)
WITH (fillfactor='70');

COMMENT ON TABLE app.conversations IS 'Direct and group conversations. last_seq hands out message numbers under the row''s lock (commit order within a conversation); direct_key keeps one direct conversation per pair. Unindexed activity columns and fillfactor 70 keep the per-message update HOT.';

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_direct_key_key UNIQUE (direct_key);

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (id);

CREATE INDEX conversations_created_by_idx ON app.conversations USING btree (created_by);

CREATE INDEX conversations_title_search_idx ON app.conversations USING gin (lower(title) extensions.gin_trgm_ops) WHERE (title IS NOT NULL);

CREATE TRIGGER conversations_copy_activity AFTER UPDATE OF last_activity_at ON app.conversations FOR EACH ROW WHEN (((pg_trigger_depth() = 0) AND (new.last_activity_at IS DISTINCT FROM old.last_activity_at))) EXECUTE FUNCTION app_private.copy_conversation_activity();

CREATE TRIGGER conversations_facts_deleted AFTER DELETE ON app.conversations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.conversations_facts_changed();

CREATE TRIGGER conversations_facts_inserted AFTER INSERT ON app.conversations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.conversations_facts_changed();

CREATE TRIGGER conversations_facts_truncated AFTER TRUNCATE ON app.conversations FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER conversations_facts_updated AFTER UPDATE ON app.conversations FOR EACH ROW WHEN ((old.created_at IS DISTINCT FROM new.created_at)) EXECUTE FUNCTION app_private.conversations_facts_changed();

CREATE TRIGGER conversations_guard_block BEFORE INSERT ON app.conversations FOR EACH ROW WHEN ((new.type = 'direct'::app.conversation_type)) EXECUTE FUNCTION app_private.guard_direct_block();

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_created_by_fkey FOREIGN KEY (created_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.conversations ENABLE ROW LEVEL SECURITY;

CREATE POLICY conversations_select_participant ON app.conversations FOR SELECT TO authenticated USING ((( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role) AND (EXISTS ( SELECT 1
   FROM app.conversation_participants p
  WHERE ((p.conversation_id = conversations.id) AND (p.user_id = ( SELECT auth.uid() AS uid)))
 OFFSET 0))));

GRANT SELECT ON TABLE app.conversations TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.user_blocks
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.user_blocks (
    blocker_id uuid NOT NULL,
    blocked_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT user_blocks_check CHECK ((blocker_id <> blocked_id))
);

COMMENT ON TABLE app.user_blocks IS 'Who blocks whom (written only by app.set_block). The blocked person cannot start a direct conversation with the blocker, send into one, or add them to a group (AG403 blocked, by triggers), and their mentions of the blocker notify nothing; in shared groups their messages arrive marked senderBlocked for the blocker. Visible to the blocker and ADMINs only, never to the blocked person.';

ALTER TABLE ONLY app.user_blocks
    ADD CONSTRAINT user_blocks_pkey PRIMARY KEY (blocker_id, blocked_id);

CREATE INDEX user_blocks_blocked_id_idx ON app.user_blocks USING btree (blocked_id, blocker_id);

CREATE INDEX user_blocks_blocker_id_created_at_idx ON app.user_blocks USING btree (blocker_id, created_at DESC, blocked_id DESC);

ALTER TABLE ONLY app.user_blocks
    ADD CONSTRAINT user_blocks_blocked_id_fkey FOREIGN KEY (blocked_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.user_blocks
    ADD CONSTRAINT user_blocks_blocker_id_fkey FOREIGN KEY (blocker_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.user_blocks ENABLE ROW LEVEL SECURITY;

CREATE POLICY user_blocks_select_blocker_or_admin ON app.user_blocks FOR SELECT TO authenticated USING (((blocker_id = ( SELECT auth.uid() AS uid)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.user_blocks TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.message_seq_buckets
-- created in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.message_seq_buckets (
    conversation_id uuid NOT NULL,
    bucket bigint NOT NULL,
    live integer NOT NULL
);

COMMENT ON TABLE app_private.message_seq_buckets IS 'Live (not tombstoned) messages of a conversation per bucket of 1,000 seqs (bucket = seq / 1000), thread replies included: what app_private.count_unread_between sums instead of counting the messages a read mark passes. Kept by app_private.count_live_message (a send) and app_private.uncount_live_message (a tombstone); messages are never deleted one by one (only with their conversation, which cascades here). Rebuilt by app_private.recount_message_buckets. Server only.';

ALTER TABLE ONLY app_private.message_seq_buckets
    ADD CONSTRAINT message_seq_buckets_pkey PRIMARY KEY (conversation_id, bucket);

ALTER TABLE ONLY app_private.message_seq_buckets
    ADD CONSTRAINT message_seq_buckets_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE app_private.message_seq_buckets ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.add_participants
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) RETURNS SETOF uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  conv app.conversations;
  max_participants integer := app.config_int('limits', 'groupMaxParticipants');
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' or conv.created_by is distinct from me or not app.has_role('SUBSCRIBER') then
    raise exception 'only the group''s creator adds people' using errcode = 'AG403';
  end if;
  if (select count(*) from app.users u where u.id = any(user_ids) and u.status = 'active' and u.role >= 'SUBSCRIBER')
     <> (select count(distinct x) from unnest(user_ids) x) then
    raise exception 'every participant must be an active user who can message' using errcode = 'AG422';
  end if;
  if (select count(*) from app.conversation_participants p where p.conversation_id = conv.id)
     + (select count(distinct x) from unnest(user_ids) x
        where not exists (select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = x))
     > max_participants then
    raise exception 'a group has at most % participants', max_participants using errcode = 'AG422';
  end if;
  return query
    insert into app.conversation_participants (conversation_id, user_id, added_by)
    select conv.id, x, me from (select distinct unnest(user_ids) as x) ids
    on conflict do nothing
    returning user_id;
end;
$$;

COMMENT ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) IS 'The group''s creator adds people (the conversation row lock serializes additions against the size limit). Returns the ids actually added; people already in are skipped. security definer as app.create_conversation.';

REVOKE ALL ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.conversation_mute
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.conversation_mute(target_conversation_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  until timestamptz;
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  select s.muted_until into until from app.conversation_settings s
  where s.user_id = (select auth.uid()) and s.conversation_id = target_conversation_id
    and s.muted_until > now();
  return jsonb_build_object(
    'conversationId', target_conversation_id,
    'muted', until is not null,
    'mutedUntil', case when until is not null and until <> 'infinity'
                       then to_char(until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') end);
end;
$$;

COMMENT ON FUNCTION app.conversation_mute(target_conversation_id uuid) IS 'The caller''s mute of one conversation, { conversationId, muted, mutedUntil } (mutedUntil null when muted until unmuted, or not muted; a mute whose time passed is not muted). AG404 for a conversation the caller is not in. security definer: one participant lookup, as app.is_participant; it reads the caller''s own row only.';

REVOKE ALL ON FUNCTION app.conversation_mute(target_conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.conversation_mute(target_conversation_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.conversation_profiles
-- created in 20261121100200_conversations.sql; last changed in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.conversation_profiles(conversation_ids uuid[]) RETURNS TABLE(conversation_id uuid, user_id uuid, name text, image text, role app.user_role)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select p.conversation_id, u.id, u.name, u.image, u.role
  from (select distinct x as id from unnest(conversation_ids) x) ids
  -- The caller's own row of each conversation asked for, by primary key (a lateral subquery
  -- with `offset 0` is probed per id, never joined against all the caller's memberships).
  cross join lateral (
    select 1 from app.conversation_participants me
    where me.conversation_id = ids.id and me.user_id = (select auth.uid())
    offset 0) mine
  join app.conversation_participants p on p.conversation_id = ids.id
  join app.users u on u.id = p.user_id
  where (select app.has_role('SUBSCRIBER'))
  order by p.conversation_id, p.joined_at, u.id
$$;

COMMENT ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) IS 'Display profiles (name, image, role; never e-mail) of the people who share a conversation with the caller, for the given conversations (membership checked per conversation by primary key, so the cost follows the page). security definer: app.users shows a user only their own row.';

REVOKE ALL ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.create_conversation
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text DEFAULT NULL::text) RETURNS TABLE(conversation_id uuid, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  others uuid[];
  max_participants integer := app.config_int('limits', 'groupMaxParticipants');
  key text;
  new_id uuid;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'messaging needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  select coalesce(array_agg(distinct p), '{}') into others from unnest(participant_ids) as p where p <> me;
  if (select count(*) from app.users u where u.id = any(others) and u.status = 'active' and u.role >= 'SUBSCRIBER')
     <> cardinality(others) then
    raise exception 'every participant must be an active user who can message' using errcode = 'AG422';
  end if;
  if conversation_type = 'direct' then
    if cardinality(others) <> 1 then
      raise exception 'a direct conversation has exactly two people' using errcode = 'AG400';
    end if;
    if conversation_title is not null then
      raise exception 'a direct conversation has no title' using errcode = 'AG400';
    end if;
    key := least(me, others[1])::text || ':' || greatest(me, others[1])::text;
    insert into app.conversations (type, created_by, direct_key)
    values ('direct', me, key)
    on conflict (direct_key) do nothing
    returning id into new_id;
    if new_id is null then
      return query select c.id, false from app.conversations c where c.direct_key = key;
      return;
    end if;
  else
    if conversation_title is null or char_length(trim(conversation_title)) = 0 then
      raise exception 'a group conversation needs a title' using errcode = 'AG400';
    end if;
    if cardinality(others) + 1 > max_participants then
      raise exception 'a group has at most % participants', max_participants using errcode = 'AG422';
    end if;
    insert into app.conversations (type, title, created_by)
    values ('group', trim(conversation_title), me)
    returning id into new_id;
  end if;
  insert into app.conversation_participants (conversation_id, user_id, added_by)
  select new_id, p, me from unnest(array_prepend(me, others)) as p;
  return query select new_id, true;
end;
$$;

COMMENT ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) IS 'Creates a conversation, or returns the existing direct one between the same two people (from either side; concurrent creations meet on the unique direct_key). Returns the id and whether it was created. security definer: it adds other people as participants, which no policy lets a user do; every rule is checked here.';

REVOKE ALL ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.is_participant
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.is_participant(target_conversation_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = (select auth.uid())
  ) and app.has_role('SUBSCRIBER');
end;
$$;

COMMENT ON FUNCTION app.is_participant(target_conversation_id uuid) IS 'Whether the current user takes part in one conversation (and may use it): one primary-key lookup, cheaper than the whole set for single-conversation checks. security definer as app.my_conversation_ids.';

REVOKE ALL ON FUNCTION app.is_participant(target_conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.is_participant(target_conversation_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.list_blocked
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.list_blocked(after_at timestamp with time zone, after_id uuid, max_rows integer) RETURNS TABLE(id uuid, name text, image text, blocked_at text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'blocking needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  return query
    select u.id, u.name, u.image, b.created_at::text
    from app.user_blocks b join app.users u on u.id = b.blocked_id
    where b.blocker_id = (select auth.uid())
      and (after_id is null or (b.created_at, b.blocked_id) < (after_at, after_id))
    order by b.created_at desc, b.blocked_id desc
    limit least(greatest(coalesce(max_rows, 50), 1), 201);
end;
$$;

COMMENT ON FUNCTION app.list_blocked(after_at timestamp with time zone, after_id uuid, max_rows integer) IS 'GET /api/users/blocked: the people the caller blocks (id, name, image; suspended ones too, so they can be unblocked), newest block first, in keyset pages after (after_at, after_id). security definer: app.users shows a user only their own row; public fields only.';

REVOKE ALL ON FUNCTION app.list_blocked(after_at timestamp with time zone, after_id uuid, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.list_blocked(after_at timestamp with time zone, after_id uuid, max_rows integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.mark_unread
-- created in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.mark_unread(target_conversation_id uuid, from_message_id uuid) RETURNS TABLE(conversation_id uuid, last_read_message_id uuid, unread_count bigint)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  before_seq bigint;
  before_id uuid;
  p app.conversation_participants;
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  select * into m from app.messages x where x.id = from_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if m.conversation_id <> target_conversation_id then
    raise exception 'the message is not in this conversation' using errcode = 'AG422';
  end if;
  select x.seq, x.id into before_seq, before_id from app.messages x
  where x.conversation_id = target_conversation_id and x.seq < m.seq
  order by x.seq desc limit 1;
  -- Only back: a message already unread leaves the mark where it is.
  perform set_config('app.read_mark_back', target_conversation_id::text || ':' || me::text, true);
  update app.conversation_participants cp
  set last_read_seq = coalesce(before_seq, 0), last_read_message_id = before_id
  where cp.conversation_id = target_conversation_id and cp.user_id = me
    and cp.last_read_seq > coalesce(before_seq, 0);
  perform set_config('app.read_mark_back', '', true);
  select * into p from app.conversation_participants cp
  where cp.conversation_id = target_conversation_id and cp.user_id = me;
  return query select p.conversation_id, p.last_read_message_id, p.unread_count::bigint;
end;
$$;

COMMENT ON FUNCTION app.mark_unread(target_conversation_id uuid, from_message_id uuid) IS 'Moves the caller''s read mark back to just before a message of the conversation (the previous message, or nothing before the first), so that message and the later ones are unread again; a mark already before it stays. AG404 when the caller is not a participant or cannot see the message, AG422 for a message of another conversation. Returns the mark and the unread count. security invoker: RLS decides which rows the caller reaches; the guard lets the mark move back only for the row named in app.read_mark_back.';

REVOKE ALL ON FUNCTION app.mark_unread(target_conversation_id uuid, from_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.mark_unread(target_conversation_id uuid, from_message_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.my_conversation_ids
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.my_conversation_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- plpgsql keeps its plan across calls (see app.has_role).
  if app.has_role('SUBSCRIBER') then
    return query
      select p.conversation_id from app.conversation_participants p where p.user_id = (select auth.uid());
  end if;
end;
$$;

COMMENT ON FUNCTION app.my_conversation_ids() IS 'The conversations the current user takes part in and may use (an active user of at least SUBSCRIBER; a participant demoted to VISITOR or suspended sees nothing until reinstated). security definer so policies on the participants table can use it without recursing into their own policies; it returns only the caller''s memberships.';

REVOKE ALL ON FUNCTION app.my_conversation_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_conversation_ids() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.readable_topics_among
-- created in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.readable_topics_among(candidates text[]) RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  session_claim text := auth.jwt() ->> 'session_id';
  uuid_re constant text := '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  if session_claim is null or session_claim !~ uuid_re or not exists (
       select 1 from app_private.live_sessions(array[session_claim::uuid]) l where l.id = me
     ) then
    return;
  end if;
  return query
    select distinct t from unnest(candidates) t
    where t = 'user:' || me::text
       or (t = 'admin' and app.is_admin())
       or (t like 'conversation:%' and exists (
             select 1 from app.conversation_participants p
             where p.conversation_id = case when substr(t, 14) ~ uuid_re then substr(t, 14)::uuid end
               and p.user_id = me))
       or (t like 'vendor:%' and exists (
             select 1 from app.vendors v
             where v.id = case when substr(t, 8) ~ uuid_re then substr(t, 8)::uuid end
               and v.owner_id = me));
end;
$_$;

COMMENT ON FUNCTION app.readable_topics_among(candidates text[]) IS 'The topic rule of app.readable_topics applied to the given topics only: those among them the caller may read now (each checked by key: their own user topic, admin for ADMINs, a conversation they take part in, a vendor they own; a live session and SUBSCRIBER or above first). For the SSE and long-poll topic check and app.can_read_topic, whose cost then follows the topics asked for, not the caller''s memberships. pgTAP checks it agrees with app.readable_topics. security definer as app.readable_topics.';

REVOKE ALL ON FUNCTION app.readable_topics_among(candidates text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.readable_topics_among(candidates text[]) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.remove_participant
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  conv app.conversations;
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' then
    raise exception 'people cannot be removed from a direct conversation' using errcode = 'AG422';
  end if;
  if target_user_id <> me and conv.created_by is distinct from me then
    raise exception 'only the group''s creator removes people' using errcode = 'AG403';
  end if;
  delete from app.conversation_participants p
  where p.conversation_id = conv.id and p.user_id = target_user_id;
  if not found then
    raise exception 'not a participant' using errcode = 'AG404';
  end if;
  -- A group is never left without someone to manage it: the longest-standing participant takes
  -- over from a creator who leaves; a group nobody is in any more is removed.
  if conv.created_by = target_user_id then
    update app.conversations c set created_by = (
      select p.user_id from app.conversation_participants p
      where p.conversation_id = conv.id order by p.joined_at, p.user_id limit 1
    ) where c.id = conv.id;
  end if;
  if not exists (select 1 from app.conversation_participants p where p.conversation_id = conv.id) then
    delete from app.conversations c where c.id = conv.id;
  end if;
end;
$$;

COMMENT ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) IS 'The group''s creator removes someone; anyone may leave a group; direct conversations are fixed. A creator who leaves hands the group to the longest-standing participant; an empty group is removed. security definer as app.create_conversation.';

REVOKE ALL ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.search_my_conversations
-- created in 20261130030000_conversations_growth.sql; last changed in 20261202000100_conversations_search_cap.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.search_my_conversations(pattern text, conversation_type app.conversation_type DEFAULT NULL::app.conversation_type, after_activity timestamp with time zone DEFAULT NULL::timestamp with time zone, after_id uuid DEFAULT NULL::uuid, max_rows integer DEFAULT 51) RETURNS TABLE(conversation_id uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  cap constant integer := 5000;
  by_name uuid[];
  by_title uuid[];
begin
  if me is null or not app.has_role('SUBSCRIBER') or pattern is null then
    return;
  end if;
  -- Through the trigram indexes: conversations with someone else whose name matches, and
  -- titles that match, each up to `cap`.
  by_name := array(
    select o.conversation_id from app.users u
    join app.conversation_participants o on o.user_id = u.id
    where lower(u.name) like pattern and u.id <> me
    limit cap + 1);
  by_title := array(
    select c.id from app.conversations c
    where lower(c.title) like pattern and c.title is not null
    limit cap + 1);
  if cardinality(by_name) <= cap and cardinality(by_title) <= cap then
    -- A rarer term: the caller's rows among those candidates (a primary-key probe each), newest
    -- first.
    return query
      select p.conversation_id
      from (select distinct x from unnest(by_name || by_title) x) cand
      join app.conversation_participants p on p.conversation_id = cand.x and p.user_id = me
      join app.conversations c on c.id = p.conversation_id
      where (conversation_type is null or c.type = conversation_type)
        and (after_id is null or (p.last_activity_at, p.conversation_id) < (after_activity, after_id))
      order by p.last_activity_at desc, p.conversation_id desc
      limit max_rows;
    return;
  end if;
  -- A common term: the caller's conversations newest first (their index), each tested on its
  -- own (`offset 0` keeps the test per row, so the walk stops when the page is full).
  return query
    select p.conversation_id from app.conversation_participants p
    cross join lateral (
      select 1 from app.conversations c
      where c.id = p.conversation_id
        and (conversation_type is null or c.type = conversation_type)
        and (lower(coalesce(c.title, '')) like pattern or exists (
          select 1 from app.conversation_participants o join app.users u on u.id = o.user_id
          where o.conversation_id = p.conversation_id and o.user_id <> me and lower(u.name) like pattern
          offset 0))
      offset 0) matched
    where p.user_id = me
      and (after_id is null or (p.last_activity_at, p.conversation_id) < (after_activity, after_id))
    order by p.last_activity_at desc, p.conversation_id desc
    limit max_rows;
end;
$$;

COMMENT ON FUNCTION app.search_my_conversations(pattern text, conversation_type app.conversation_type, after_activity timestamp with time zone, after_id uuid, max_rows integer) IS 'The ids of a page of the caller''s conversations whose title or another participant''s name is like the pattern (lowercase, `%` around), newest activity first, after the (activity, id) given. A term matching at most 5,000 participations and titles is found through the trigram indexes of names and titles (a primary-key probe per candidate); a commoner one walks the caller''s conversations newest first until the page is full. security definer: it reads other people''s names and memberships; it returns only the caller''s own conversations.';

REVOKE ALL ON FUNCTION app.search_my_conversations(pattern text, conversation_type app.conversation_type, after_activity timestamp with time zone, after_id uuid, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.search_my_conversations(pattern text, conversation_type app.conversation_type, after_activity timestamp with time zone, after_id uuid, max_rows integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.set_block
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.set_block(target uuid, block boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'blocking needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  if target = me then
    raise exception 'you cannot block yourself' using errcode = 'AG422';
  end if;
  if block then
    if not exists (select 1 from app.users u where u.id = target and u.status = 'active') then
      raise exception 'user not found' using errcode = 'AG404';
    end if;
    insert into app.user_blocks (blocker_id, blocked_id) values (me, target) on conflict do nothing;
  else
    delete from app.user_blocks b where b.blocker_id = me and b.blocked_id = target;
  end if;
  return jsonb_build_object('userId', target, 'blocked', block);
end;
$$;

COMMENT ON FUNCTION app.set_block(target uuid, block boolean) IS 'PUT (block true) and DELETE /api/users/{id}/block: blocks an active user (AG404 for one who is not, as their profile is; AG422 for oneself) or unblocks anyone; idempotent both ways. Nothing is sent to the blocked person. security definer: it checks that the user is active, which app.users shows no one else, and writes app.user_blocks, which has no user write grants (the caller''s own rows only).';

REVOKE ALL ON FUNCTION app.set_block(target uuid, block boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app.set_block(target uuid, block boolean) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.set_conversation_mute
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.set_conversation_mute(target_conversation_id uuid, mute boolean, until timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if mute is false then
    if until is not null then
      raise exception 'mutedUntil goes with muted: true' using errcode = 'AG400';
    end if;
    delete from app.conversation_settings s
    where s.user_id = me and s.conversation_id = target_conversation_id;
  elsif mute or until is not null then
    if until is not null and until <= now() then
      raise exception 'mutedUntil is a time in the future' using errcode = 'AG422';
    end if;
    insert into app.conversation_settings as s (conversation_id, user_id, muted_until)
    values (target_conversation_id, me, coalesce(until, 'infinity'))
    on conflict (user_id, conversation_id)
    do update set muted_until = excluded.muted_until, updated_at = now();
  end if;
  return app.conversation_mute(target_conversation_id);
end;
$$;

COMMENT ON FUNCTION app.set_conversation_mute(target_conversation_id uuid, mute boolean, until timestamp with time zone) IS 'PUT /api/conversations/{id}/settings: mute true mutes until unmuted, with until (a future time, else AG422) until then, until alone the same; mute false clears both (AG400 with until); neither changes nothing. Returns app.conversation_mute. AG404 for a conversation the caller is not in. security definer: the settings table has no user write grants; the caller writes only their own row.';

REVOKE ALL ON FUNCTION app.set_conversation_mute(target_conversation_id uuid, mute boolean, until timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.set_conversation_mute(target_conversation_id uuid, mute boolean, until timestamp with time zone) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.copy_conversation_activity
-- created in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.copy_conversation_activity() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform 1 from app.conversation_participants x
  where x.conversation_id = new.id order by x.user_id for no key update;
  update app.conversation_participants p
  set last_activity_at = new.last_activity_at
  where p.conversation_id = new.id;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.copy_conversation_activity() IS 'When a conversation''s last_activity_at is set other than by a send (trusted server paths, tests), its participants'' copies follow. A send''s own update (inside app_private.assign_message_seq, trigger depth 1) is left to messages_count_unread, which copies it with the counter in one update. security definer: it writes every participant''s row.';

REVOKE ALL ON FUNCTION app_private.copy_conversation_activity() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_live_message
-- created in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_live_message() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app_private.message_seq_buckets as b (conversation_id, bucket, live)
  values (new.conversation_id, new.seq / 1000, 1)
  on conflict (conversation_id, bucket) do update set live = b.live + 1;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_live_message() IS 'After a live message is inserted: one more in its bucket. Fires before messages_count_unread (trigger names sort so), under the conversation''s row lock the send holds, so a bucket row is always locked before the participants'' rows, as the tombstone does too. security definer: the buckets are server only.';

REVOKE ALL ON FUNCTION app_private.count_live_message() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_unread_between
-- created in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_unread_between(conversation uuid, reader uuid, after_seq bigint, upto_seq bigint) RETURNS bigint
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
declare
  first_full bigint := (after_seq + 1000) / 1000;  -- the first bucket wholly after after_seq
  last_full bigint := (upto_seq + 1) / 1000 - 1;   -- the last bucket wholly up to upto_seq
  total bigint;
begin
  if upto_seq <= after_seq then
    return 0;
  end if;
  if last_full - first_full < 2 then
    -- At most four buckets' worth: count the messages themselves.
    select count(*) into total from app.messages m
    where m.conversation_id = conversation and m.seq > after_seq and m.seq <= upto_seq
      and m.deleted_at is null and m.sender_id is distinct from reader;
    return total;
  end if;
  select
    (select count(*) from app.messages m
     where m.conversation_id = conversation
       and ((m.seq > after_seq and m.seq < first_full * 1000)
            or (m.seq > last_full * 1000 + 999 and m.seq <= upto_seq))
       and m.deleted_at is null and m.sender_id is distinct from reader)
    + (select coalesce(sum(b.live), 0) from app_private.message_seq_buckets b
       where b.conversation_id = conversation and b.bucket between first_full and last_full)
    - (select count(*) from app.messages m
       where m.sender_id = reader and m.conversation_id = conversation
         and m.seq between first_full * 1000 and last_full * 1000 + 999 and m.deleted_at is null)
  into total;
  return total;
end;
$$;

COMMENT ON FUNCTION app_private.count_unread_between(conversation uuid, reader uuid, after_seq bigint, upto_seq bigint) IS 'The messages of a conversation with after_seq < seq <= upto_seq that are live and not the reader''s own: what a read mark moving between the two passes over. Whole buckets of 1,000 seqs come from app_private.message_seq_buckets less the reader''s own live messages (index only); the two partial ends, or a short range, are counted row by row; so the cost is bounded by a few thousand index entries whatever the range. Called by the security definer triggers that keep unread_count; no grants.';

REVOKE ALL ON FUNCTION app_private.count_unread_between(conversation uuid, reader uuid, after_seq bigint, upto_seq bigint) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_unread_message
-- created in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_unread_message() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The send holds the conversation's row lock (app_private.assign_message_seq), so these rows
  -- are serialized with every other send; they are locked in user order, as a tombstone takes
  -- them, so the two never deadlock.
  perform 1 from app.conversation_participants x
  where x.conversation_id = new.conversation_id order by x.user_id for no key update;
  update app.conversation_participants p
  set last_activity_at = c.last_activity_at,
      unread_count = p.unread_count + case
        when new.deleted_at is null and p.user_id is distinct from new.sender_id
             and p.last_read_seq < new.seq then 1 else 0 end
  from app.conversations c
  where c.id = new.conversation_id and p.conversation_id = new.conversation_id;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_unread_message() IS 'After a message is inserted: one more unread for every other participant, and the conversation''s new activity on every participant''s row (one update per participant, under the conversation''s row lock the send already holds). security definer: it writes other people''s rows.';

REVOKE ALL ON FUNCTION app_private.count_unread_message() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_direct_block
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_direct_block() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  other uuid;
begin
  other := case when split_part(new.direct_key, ':', 1)::uuid = new.created_by
                then split_part(new.direct_key, ':', 2)::uuid
                else split_part(new.direct_key, ':', 1)::uuid end;
  if exists (select 1 from app.user_blocks b where b.blocker_id = other and b.blocked_id = new.created_by) then
    raise exception 'you cannot message this person' using errcode = 'AG403', hint = 'blocked';
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_direct_block() IS 'Before a direct conversation is inserted (also when it exists and the insert meets its direct_key: a before trigger runs first): refused with AG403 hint blocked when the other person blocks its creator. security definer: the blocked person cannot read the block.';

REVOKE ALL ON FUNCTION app_private.guard_direct_block() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_participant_block
-- created in 20261130020000_conversations_mute_block.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_participant_block() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if exists (select 1 from app.user_blocks b where b.blocker_id = new.user_id and b.blocked_id = new.added_by)
     and not exists (
       select 1 from app.conversation_participants p
       where p.conversation_id = new.conversation_id and p.user_id = new.user_id
     ) then
    raise exception 'you cannot add this person' using errcode = 'AG403', hint = 'blocked';
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_participant_block() IS 'Before someone is added to a conversation by another: refused with AG403 hint blocked when they block the person adding them (a group''s creation and app.add_participants alike). Someone already in is skipped by the insert as before, so re-adding a member reveals nothing. security definer: the adder cannot read the block.';

REVOKE ALL ON FUNCTION app_private.guard_participant_block() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_read_mark
-- created in 20261121100200_conversations.sql; last changed in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_read_mark() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The foreign key's own `set null`: the person who added this participant deleted their account.
  if new.added_by is null and old.added_by is not null
     and not exists (select 1 from app.users u where u.id = old.added_by)
     and new.conversation_id = old.conversation_id and new.user_id = old.user_id
     and new.joined_at = old.joined_at and new.last_read_seq = old.last_read_seq
     and new.last_read_message_id is not distinct from old.last_read_message_id
     and new.last_read_at is not distinct from old.last_read_at then
    return new;
  end if;
  if new.conversation_id <> old.conversation_id or new.user_id <> old.user_id
     or new.joined_at <> old.joined_at or new.added_by is distinct from old.added_by then
    raise exception 'only the read mark of a participant can change' using errcode = '42501';
  end if;
  -- The counter is the triggers' alone: whatever this update says, it starts from the row's.
  new.unread_count := old.unread_count;
  if new.last_read_seq = old.last_read_seq
     or (new.last_read_seq < old.last_read_seq
         and current_setting('app.read_mark_back', true) is distinct from
             new.conversation_id::text || ':' || new.user_id::text) then
    new.last_read_seq := old.last_read_seq;
    new.last_read_message_id := old.last_read_message_id;
    new.last_read_at := old.last_read_at;
    return new;
  end if;
  -- The mark names a message of this conversation at that position (or, moved back before the
  -- first message, nothing at 0).
  if not (new.last_read_seq = 0 and new.last_read_message_id is null) and not exists (
    select 1 from app.messages m
    where m.id = new.last_read_message_id and m.conversation_id = new.conversation_id and m.seq = new.last_read_seq
  ) then
    raise exception 'a read mark names a message of the conversation' using errcode = 'AG422';
  end if;
  -- The row is locked by now (a before-row trigger runs on the newest version, locked) and each
  -- statement here reads a fresh snapshot: a racing send or deletion either is in old.unread_count
  -- and visible below, or waits for this row and then sees the new mark.
  if new.last_read_seq > old.last_read_seq then
    new.unread_count := old.unread_count - app_private.count_unread_between(
      new.conversation_id, new.user_id, old.last_read_seq, new.last_read_seq);
  else
    new.unread_count := old.unread_count + app_private.count_unread_between(
      new.conversation_id, new.user_id, new.last_read_seq, old.last_read_seq);
  end if;
  new.last_read_at := now();
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_read_mark() IS 'Read marks move forward only (back only inside app.mark_unread, which names the row in app.read_mark_back) and name a real message at that position; nothing else of a participant row changes, except the foreign key''s own set null of added_by when that account was deleted. Moves unread_count by the live messages of others the mark passes over (app_private.count_unread_between: bounded cost however far), under the row''s lock. security definer: it reads messages the row''s update may not see.';

REVOKE ALL ON FUNCTION app_private.guard_read_mark() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.participant_events
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.participant_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  p app.conversation_participants := case when tg_op = 'DELETE' then old else new end;
  name text := case when tg_op = 'DELETE' then 'participant.removed' else 'participant.added' end;
  body jsonb;
begin
  body := jsonb_build_object('conversationId', p.conversation_id, 'userId', p.user_id);
  perform app_private.emit_event('conversation:' || p.conversation_id, name, body);
  perform app_private.emit_event('user:' || p.user_id, case when tg_op = 'DELETE' then 'conversation.left' else 'conversation.joined' end, body);
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.participant_events() IS 'Joining and leaving are events on the conversation and, for the person, on their user topic (so a client learns of new conversations live).';

REVOKE ALL ON FUNCTION app_private.participant_events() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.read_mark_events
-- created in 20261121100200_conversations.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.read_mark_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.last_read_seq > old.last_read_seq then
    perform app_private.emit_event('conversation:' || new.conversation_id, 'message.read',
      jsonb_build_object('conversationId', new.conversation_id, 'userId', new.user_id,
                         'lastReadMessageId', new.last_read_message_id, 'lastReadSeq', new.last_read_seq));
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.read_mark_events() IS 'Each forward move of a read mark is a message.read event for the other participants.';

REVOKE ALL ON FUNCTION app_private.read_mark_events() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.recount_message_buckets
-- created in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.recount_message_buckets() RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  written bigint;
begin
  delete from app_private.message_seq_buckets;
  insert into app_private.message_seq_buckets (conversation_id, bucket, live)
  select m.conversation_id, m.seq / 1000, count(*)
  from app.messages m where m.deleted_at is null
  group by 1, 2;
  get diagnostics written = row_count;
  return written;
end;
$$;

COMMENT ON FUNCTION app_private.recount_message_buckets() IS 'Recounts every bucket of app_private.message_seq_buckets from the messages (run by this migration over the existing messages, and by seeds that insert messages with triggers off). Returns the buckets written. Not for a live system''s hot path: it reads every message.';

REVOKE ALL ON FUNCTION app_private.recount_message_buckets() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.start_participant
-- created in 20261130030000_conversations_growth.sql; last changed in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.start_participant() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  last_seq bigint;
begin
  select c.last_activity_at, c.last_seq into new.last_activity_at, last_seq
  from app.conversations c where c.id = new.conversation_id;
  new.unread_count := app_private.count_unread_between(
    new.conversation_id, new.user_id, new.last_read_seq, last_seq);
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.start_participant() IS 'Before a participant row is inserted: its copy of the conversation''s activity, and its unread count (app_private.count_unread_between up to the conversation''s last seq: joining a long group costs a few thousand index entries at most; add_participants holds the conversation''s lock, so no send races it). security definer: it reads messages the new participant may not see yet.';

REVOKE ALL ON FUNCTION app_private.start_participant() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.uncount_live_message
-- created in 20261201040000_conversations_unread_buckets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.uncount_live_message() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app_private.message_seq_buckets b set live = b.live - 1
  where b.conversation_id = new.conversation_id and b.bucket = new.seq / 1000;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.uncount_live_message() IS 'After a message becomes a tombstone: one fewer live in its bucket. Fires before messages_uncount_unread (trigger names sort so): the bucket row first, then the participants'' rows, the order a send takes them in. security definer: the buckets are server only.';

REVOKE ALL ON FUNCTION app_private.uncount_live_message() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.uncount_unread_message
-- created in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.uncount_unread_message() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- Every other participant's row is locked first, in user order as the send takes them (so the
  -- two never deadlock), whatever its mark: a read mark moving back past this message while it
  -- was being deleted counted it as live, and only after that mark commits can the update below
  -- (a fresh snapshot) see where the mark now is. A condition on the mark here would skip such a
  -- row on its old version.
  perform 1 from app.conversation_participants x
  where x.conversation_id = new.conversation_id and x.user_id is distinct from new.sender_id
  order by x.user_id for no key update;
  update app.conversation_participants p
  set unread_count = p.unread_count - 1
  where p.conversation_id = new.conversation_id and p.user_id is distinct from new.sender_id
    and p.last_read_seq < new.seq;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.uncount_unread_message() IS 'After a message becomes a tombstone: one unread fewer for the other participants whose mark is still before it (their rows locked first, then the marks read afresh, so a racing read mark, forward or back, is counted once). A tombstone is final (app_private.guard_message_update), so this runs once per message. security definer: it writes other people''s rows.';

REVOKE ALL ON FUNCTION app_private.uncount_unread_message() FROM PUBLIC;
