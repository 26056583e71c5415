-- Agora's schema as it is now, domain messages: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121100300_messages.sql
--   supabase/migrations/20261129170000_messages_search.sql
--   supabase/migrations/20261130000000_messages_reactions_threads.sql
--   supabase/migrations/20261130020100_messages_mentions.sql
--   supabase/migrations/20261201010000_messages_reaction_batches.sql
--   supabase/migrations/20261202000000_messages_search_tiers.sql
--   supabase/migrations/20261203000100_messages_search_statistics.sql
--   supabase/migrations/20261204010000_messages_search_top_tier.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- table app.message_reactions
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.message_reactions (
    message_id uuid NOT NULL,
    user_id uuid NOT NULL,
    emoji text NOT NULL,
    conversation_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT message_reactions_emoji_check CHECK (((char_length(emoji) >= 1) AND (char_length(emoji) <= 32)))
);

COMMENT ON TABLE app.message_reactions IS 'Who reacted to which message with which emoji: one row each, so counts are an aggregate and exact under any race (no counter to lose an update). conversation_id is the message''s, for the participants'' policy. Written only by app.set_reaction.';

ALTER TABLE ONLY app.message_reactions
    ADD CONSTRAINT message_reactions_pkey PRIMARY KEY (message_id, user_id, emoji);

CREATE INDEX message_reactions_conversation_id_idx ON app.message_reactions USING btree (conversation_id);

CREATE INDEX message_reactions_user_id_idx ON app.message_reactions USING btree (user_id);

ALTER TABLE ONLY app.message_reactions
    ADD CONSTRAINT message_reactions_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.message_reactions
    ADD CONSTRAINT message_reactions_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.message_reactions
    ADD CONSTRAINT message_reactions_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.message_reactions ENABLE ROW LEVEL SECURITY;

CREATE POLICY message_reactions_select_participant ON app.message_reactions FOR SELECT TO authenticated USING ((conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

GRANT SELECT ON TABLE app.message_reactions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.message_threads
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.message_threads (
    root_id uuid NOT NULL,
    conversation_id uuid NOT NULL,
    reply_count integer DEFAULT 0 NOT NULL,
    last_reply_at timestamp with time zone,
    CONSTRAINT message_threads_reply_count_check CHECK ((reply_count >= 0))
);

COMMENT ON TABLE app.message_threads IS 'A thread root''s reply count (live replies) and the time of its newest live reply: counters kept exact under the row''s lock by the reply triggers, so a list shows them by key instead of counting a long thread per root.';

ALTER TABLE ONLY app.message_threads
    ADD CONSTRAINT message_threads_pkey PRIMARY KEY (root_id);

CREATE INDEX message_threads_conversation_id_idx ON app.message_threads USING btree (conversation_id);

ALTER TABLE ONLY app.message_threads
    ADD CONSTRAINT message_threads_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.message_threads
    ADD CONSTRAINT message_threads_root_id_fkey FOREIGN KEY (root_id) REFERENCES app.messages(id) ON DELETE CASCADE;

ALTER TABLE app.message_threads ENABLE ROW LEVEL SECURITY;

CREATE POLICY message_threads_select_participant ON app.message_threads FOR SELECT TO authenticated USING ((conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

GRANT SELECT ON TABLE app.message_threads TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.message_versions
-- created in 20261121100300_messages.sql; last changed in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.message_versions (
    id bigint NOT NULL,
    message_id uuid NOT NULL,
    content text NOT NULL,
    written_at timestamp with time zone NOT NULL,
    replaced_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app.message_versions IS 'Earlier contents of edited messages: the history an edit must not erase.';

ALTER TABLE app.message_versions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.message_versions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.message_versions
    ADD CONSTRAINT message_versions_pkey PRIMARY KEY (id);

CREATE INDEX message_versions_message_id_idx ON app.message_versions USING btree (message_id);

ALTER TABLE ONLY app.message_versions
    ADD CONSTRAINT message_versions_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

ALTER TABLE app.message_versions ENABLE ROW LEVEL SECURITY;

CREATE POLICY message_versions_select_participant ON app.message_versions FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.messages m
  WHERE (m.id = message_versions.message_id))));

GRANT SELECT ON TABLE app.message_versions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.messages
-- created in 20261121100300_messages.sql; last changed in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.messages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation_id uuid NOT NULL,
    seq bigint NOT NULL,
    sender_id uuid,
    content text NOT NULL,
    reply_to_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    edited_at timestamp with time zone,
    deleted_at timestamp with time zone,
    thread_id uuid,
    mention_ids uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    CONSTRAINT messages_content_length CHECK ((((deleted_at IS NULL) AND ((char_length(content) >= 1) AND (char_length(content) <= 10000))) OR ((deleted_at IS NOT NULL) AND (content = ''::text)))),
    CONSTRAINT messages_mention_ids_check CHECK ((cardinality(mention_ids) <= 50))
);

COMMENT ON TABLE app.messages IS 'Messages in per-conversation commit order (seq). A deleted message is a tombstone: content empty, attachments gone, place kept. The check''s 10000 is the hard ceiling; limits.messageMaxLength may be lower.';

COMMENT ON COLUMN app.messages.thread_id IS 'The root message of the thread this reply is in; null for a message outside threads (a root included). Listed only by GET /api/messages/{id}/thread.';

COMMENT ON COLUMN app.messages.mention_ids IS 'The participants this message mentions (each once, in the order given; at most 50). Shown as `mentions` while the message is not a tombstone; each was notified once, at the send (trigger messages_mentions).';

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_conversation_id_seq_key UNIQUE (conversation_id, seq);

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id);

CREATE INDEX messages_content_trgm ON app.messages USING gin (lower(content) extensions.gin_trgm_ops);
ALTER INDEX app.messages_content_trgm ALTER COLUMN 1 SET STATISTICS 1000;

CREATE INDEX messages_content_words ON app.messages USING gin (to_tsvector('simple'::regconfig, content));

CREATE INDEX messages_conversation_id_seq_main_idx ON app.messages USING btree (conversation_id, seq) WHERE (thread_id IS NULL);

CREATE INDEX messages_created_at_brin ON app.messages USING brin (created_at);

CREATE INDEX messages_created_at_id_idx ON app.messages USING btree (created_at, id);

CREATE INDEX messages_reply_to_id_idx ON app.messages USING btree (reply_to_id) WHERE (reply_to_id IS NOT NULL);

CREATE INDEX messages_sender_conversation_seq_idx ON app.messages USING btree (sender_id, conversation_id, seq) INCLUDE (deleted_at);

CREATE INDEX messages_thread_id_seq_idx ON app.messages USING btree (thread_id, seq) WHERE (thread_id IS NOT NULL);

CREATE TRIGGER messages_assign_seq BEFORE INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.assign_message_seq();

CREATE TRIGGER messages_count_live AFTER INSERT ON app.messages FOR EACH ROW WHEN ((new.deleted_at IS NULL)) EXECUTE FUNCTION app_private.count_live_message();

CREATE TRIGGER messages_count_unread AFTER INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.count_unread_message();

CREATE CONSTRAINT TRIGGER messages_events AFTER INSERT OR UPDATE ON app.messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION app_private.message_events();

CREATE TRIGGER messages_facts_deleted AFTER DELETE ON app.messages REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.messages_facts_changed();

CREATE TRIGGER messages_facts_truncated AFTER TRUNCATE ON app.messages FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER messages_facts_updated AFTER UPDATE ON app.messages FOR EACH ROW WHEN (((old.created_at IS DISTINCT FROM new.created_at) OR (old.deleted_at IS DISTINCT FROM new.deleted_at))) EXECUTE FUNCTION app_private.messages_facts_changed();

CREATE TRIGGER messages_guard_block BEFORE INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.guard_message_block();

CREATE TRIGGER messages_guard_update BEFORE UPDATE ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.guard_message_update();

CREATE TRIGGER messages_mark_digest AFTER INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.mark_message_digest();

CREATE TRIGGER messages_mentions AFTER INSERT ON app.messages FOR EACH ROW WHEN ((cardinality(new.mention_ids) > 0)) EXECUTE FUNCTION app_private.notify_mentions();

CREATE TRIGGER messages_thread_reply BEFORE INSERT ON app.messages FOR EACH ROW WHEN ((new.thread_id IS NOT NULL)) EXECUTE FUNCTION app_private.count_thread_reply();

CREATE TRIGGER messages_tombstoned AFTER UPDATE OF deleted_at ON app.messages FOR EACH ROW WHEN (((old.deleted_at IS NULL) AND (new.deleted_at IS NOT NULL))) EXECUTE FUNCTION app_private.message_tombstoned();

CREATE TRIGGER messages_uncount_live AFTER UPDATE OF deleted_at ON app.messages FOR EACH ROW WHEN (((old.deleted_at IS NULL) AND (new.deleted_at IS NOT NULL))) EXECUTE FUNCTION app_private.uncount_live_message();

CREATE TRIGGER messages_uncount_unread AFTER UPDATE OF deleted_at ON app.messages FOR EACH ROW WHEN (((old.deleted_at IS NULL) AND (new.deleted_at IS NOT NULL))) EXECUTE FUNCTION app_private.uncount_unread_message();

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_reply_to_id_fkey FOREIGN KEY (reply_to_id) REFERENCES app.messages(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_sender_id_fkey FOREIGN KEY (sender_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_thread_id_fkey FOREIGN KEY (thread_id) REFERENCES app.messages(id) ON DELETE CASCADE;

ALTER TABLE app.messages ENABLE ROW LEVEL SECURITY;

CREATE POLICY messages_insert_participant ON app.messages FOR INSERT TO authenticated WITH CHECK (((sender_id = ( SELECT auth.uid() AS uid)) AND app.is_participant(conversation_id)));

CREATE POLICY messages_select_participant ON app.messages FOR SELECT TO authenticated USING ((( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role) AND (EXISTS ( SELECT 1
   FROM app.conversation_participants p
  WHERE ((p.conversation_id = messages.conversation_id) AND (p.user_id = ( SELECT auth.uid() AS uid)))
 OFFSET 0))));

CREATE POLICY messages_update_author ON app.messages FOR UPDATE TO authenticated USING (((sender_id = ( SELECT auth.uid() AS uid)) AND (deleted_at IS NULL) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role))) WITH CHECK ((sender_id = ( SELECT auth.uid() AS uid)));

GRANT SELECT ON TABLE app.messages TO authenticated;

GRANT INSERT(conversation_id) ON TABLE app.messages TO authenticated;

GRANT INSERT(sender_id) ON TABLE app.messages TO authenticated;

GRANT INSERT(content),UPDATE(content) ON TABLE app.messages TO authenticated;

GRANT INSERT(reply_to_id) ON TABLE app.messages TO authenticated;

GRANT INSERT(thread_id) ON TABLE app.messages TO authenticated;

GRANT INSERT(mention_ids) ON TABLE app.messages TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.admin_messaging_stats
-- created in 20261121100300_messages.sql; last changed in 20261202000200_foundation_analytics_facts.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
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
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'conversations', app_private.fact_total('conversations.all'),
      'messages', app_private.fact_total('messages.live')
    ),
    'messages', app_private.fact_series_json('messages.sent', bucket, range_from, range_to),
    'activeSenders', app_private.fact_series_json('messages.senders', bucket, range_from, range_to),
    'conversationsCreated', app_private.fact_series_json('conversations.created', bucket, range_from, range_to)
  ) into result;
  return result;
end;
$$;

COMMENT ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'Messages sent (deleted ones included), active senders (users who sent a message) and new conversations per UTC day, ISO week or month, zero-filled, whole buckets, with totals (conversations, messages not deleted): counts only, never content, from the rollups (app_private.analytics_facts, its deltas and the rows not yet folded), a row per bucket whatever the size of the tables. security definer because ADMINs cannot read conversations they are not in and the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';

REVOKE ALL ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.delete_message
-- created in 20261121100300_messages.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.delete_message(target_message_id uuid) RETURNS TABLE(conversation_id uuid, deleted_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  conv app.conversations;
  is_participant boolean;
begin
  select * into m from app.messages where id = target_message_id for update;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  select * into conv from app.conversations c where c.id = m.conversation_id;
  is_participant := exists (
    select 1 from app.conversation_participants p where p.conversation_id = m.conversation_id and p.user_id = me
  );
  if not is_participant and not app.is_admin() then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if not (
    (is_participant and m.sender_id = me and app.has_role('SUBSCRIBER'))
    or (is_participant and conv.type = 'group' and conv.created_by = me and app.has_role('SUBSCRIBER'))
    or app.is_admin()
  ) then
    raise exception 'only the author, the group''s creator or an ADMIN deletes a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    return query select m.conversation_id, m.deleted_at;
    return;
  end if;
  delete from app.attachments a where a.message_id = m.id;
  update app.messages set deleted_at = now() where id = m.id returning * into m;
  return query select m.conversation_id, m.deleted_at;
end;
$$;

COMMENT ON FUNCTION app.delete_message(target_message_id uuid) IS 'Soft-deletes a message into a tombstone: by its author, the group''s creator, or an ADMIN. The content and the attachments go (the attachments'' delete trigger queues their files'' removal as storage.delete jobs). security definer: the creator and ADMINs act on messages that are not theirs, ADMINs even in conversations they cannot read; each case is checked here.';

REVOKE ALL ON FUNCTION app.delete_message(target_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_message(target_message_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.edit_message
-- created in 20261121100300_messages.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.edit_message(target_message_id uuid, new_content text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  m app.messages;
  window_minutes integer := app.config_int('limits', 'messageEditWindowMinutes');
  max_length integer := app.config_int('limits', 'messageMaxLength');
begin
  -- No FOR UPDATE here: under RLS it would hide the row from non-authors, who must get 403.
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if m.sender_id is distinct from auth.uid() then
    raise exception 'only the author edits a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  if m.created_at < now() - make_interval(mins => window_minutes) then
    raise exception 'the edit window (% minutes) has closed', window_minutes using errcode = 'AG422';
  end if;
  if char_length(new_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  -- The update re-checks everything under the row lock (RLS: author, not deleted).
  update app.messages set content = new_content where id = m.id and deleted_at is null returning * into m;
  if not found then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  return app.message_json(m);
end;
$$;

COMMENT ON FUNCTION app.edit_message(target_message_id uuid, new_content text) IS 'Edits a message: the author only (AG403 otherwise), within the configured edit window and length (the same limit as sends), never a tombstone. Returns the message JSON. security invoker: RLS decides.';

REVOKE ALL ON FUNCTION app.edit_message(target_message_id uuid, new_content text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.edit_message(target_message_id uuid, new_content text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.mark_read
-- created in 20261121100300_messages.sql; last changed in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.mark_read(target_message_id uuid) RETURNS TABLE(conversation_id uuid, last_read_message_id uuid, unread_count bigint)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  p app.conversation_participants;
begin
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  update app.conversation_participants cp
  set last_read_seq = m.seq, last_read_message_id = m.id, last_read_at = now()
  where cp.conversation_id = m.conversation_id and cp.user_id = me
  returning * into p;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  return query select p.conversation_id, p.last_read_message_id, p.unread_count::bigint;
end;
$$;

COMMENT ON FUNCTION app.mark_read(target_message_id uuid) IS 'Moves the caller''s read watermark forward to a message (never backward; the guard trigger keeps the later mark) and returns it with the unread count (the row''s maintained counter, moved by the guard by the messages passed over). security invoker: RLS decides which message and row the caller reaches.';

REVOKE ALL ON FUNCTION app.mark_read(target_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.mark_read(target_message_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.message_extras
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.message_extras(m app.messages, viewer uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'thread', (
      select jsonb_build_object(
        'replyCount', t.reply_count,
        'lastReplyAt', to_char(t.last_reply_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
      from app.message_threads t where t.root_id = m.id and t.reply_count > 0
    ),
    'reactions', case when m.deleted_at is null then app.message_reactions_json(m.id, viewer)
                      else '[]'::jsonb end
  )
$$;

COMMENT ON FUNCTION app.message_extras(m app.messages, viewer uuid) IS 'The parts of the message JSON read from other tables: thread (replyCount and lastReplyAt of live replies, null without any) and reactions (none on a tombstone), `me` for viewer. Merged over app.message_object by app.message_json and the update event. security invoker: RLS shows participants only.';

REVOKE ALL ON FUNCTION app.message_extras(m app.messages, viewer uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_extras(m app.messages, viewer uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.message_object
-- created in 20261121100300_messages.sql; last changed in 20261130020100_messages_mentions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.message_object(m app.messages, attachments jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', m.id,
    'conversationId', m.conversation_id,
    'seq', m.seq,
    'senderId', m.sender_id,
    'content', m.content,
    'replyToId', m.reply_to_id,
    'attachments', case when m.deleted_at is null then coalesce(attachments, '[]'::jsonb) else '[]'::jsonb end,
    'createdAt', to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'editedAt', to_char(m.edited_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'threadId', m.thread_id,
    'thread', null,
    'reactions', '[]'::jsonb,
    'mentions', case when m.deleted_at is null then to_jsonb(m.mention_ids) else '[]'::jsonb end
  )
$$;

COMMENT ON FUNCTION app.message_object(m app.messages, attachments jsonb) IS 'The message object from its row and its attachments'' JSON, with threadId, mentions (none on a tombstone) and an empty thread and reactions (right for a message just sent; app.message_json adds the real ones). Inlinable pure SQL with no pinned search_path on purpose (a pin stops inlining; it reads no table and runs with the caller''s rights): inlined it costs nothing per call in lists and is planned once per session inside plpgsql. The send and the event trigger each read the attachments in a statement of their own and call this.';

REVOKE ALL ON FUNCTION app.message_object(m app.messages, attachments jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_object(m app.messages, attachments jsonb) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.message_reactions_json
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.message_reactions_json(target_message_id uuid, viewer uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object('emoji', r.emoji, 'count', r.n, 'me', r.mine)
                            order by r.first_at, r.emoji), '[]'::jsonb)
  from (
    select x.emoji, count(*)::int as n, coalesce(bool_or(x.user_id = viewer), false) as mine,
           min(x.created_at) as first_at
    from app.message_reactions x where x.message_id = target_message_id
    group by x.emoji
  ) r
$$;

COMMENT ON FUNCTION app.message_reactions_json(target_message_id uuid, viewer uuid) IS 'A message''s reactions as the API shows them, [{ emoji, count, me }], counted from the rows (exact), in the order each emoji first appeared; `me` is whether viewer is among them (false for everyone when viewer is null, as in events). security invoker: RLS shows participants only.';

REVOKE ALL ON FUNCTION app.message_reactions_json(target_message_id uuid, viewer uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_reactions_json(target_message_id uuid, viewer uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.search_messages
-- created in 20261129170000_messages_search.sql; last changed in 20261204010000_messages_search_top_tier.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.search_messages(terms text[], in_conversation uuid DEFAULT NULL::uuid, after_score integer DEFAULT NULL::integer, after_created_at timestamp with time zone DEFAULT NULL::timestamp with time zone, after_id uuid DEFAULT NULL::uuid, max_rows integer DEFAULT 51) RETURNS TABLE(message_id uuid, score integer, created_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  ids uuid[];
  membership text;
  term_filter text;
  words tsquery[];
  prefixes tsquery[];
  all_words tsquery;
  any_prefix tsquery;
  ranked integer;
  top integer;
  tier integer;
  tier_filter text;
  wanted integer := max_rows;
  got integer;
  walk constant integer := 4000;
  top_at timestamptz;
  top_id uuid;
  top_known boolean := false;
  edge_at timestamptz;
  edge_id uuid;
  query text;
  plan jsonb;
  dense boolean;
  estimate float8;
  top_estimate float8 := 0;
  share float8;
  tier_terms text;
  unindexed_terms text;
  total float8;
  caller_rows float8;
begin
  if coalesce(cardinality(terms), 0) not between 1 and 8
     or exists (select 1 from unnest(terms) t where t is null or char_length(t) < 3 or char_length(t) > 200) then
    raise exception 'a search has 1 to 8 terms of 3 to 200 characters' using errcode = 'AG400';
  end if;
  if max_rows is null or max_rows not between 1 and 201 then
    raise exception 'max_rows is 1 to 201' using errcode = 'AG400';
  end if;
  -- What the caller may read now: the conversations they are in (none for a user below
  -- SUBSCRIBER or suspended, see app.my_conversation_ids). Someone who left is no longer in it.
  -- The rule of app.my_conversation_ids, but at most 1,001 ids: more are not needed (below).
  if app.has_role('SUBSCRIBER') then
    ids := array(select p.conversation_id from app.conversation_participants p
                 where p.user_id = auth.uid() limit 1001);
  else
    ids := '{}';
  end if;
  if in_conversation is not null then
    if cardinality(ids) = 0 or not exists (
      select 1 from app.conversation_participants p
      where p.conversation_id = in_conversation and p.user_id = auth.uid()
    ) then
      raise exception 'conversation not found' using errcode = 'AG404';
    end if;
    ids := array[in_conversation];
  end if;
  if cardinality(ids) = 0 then
    return;
  end if;
  -- Up to 1,000 conversations as a literal (the planner estimates it, ANDs it with the
  -- conversations' index or hashes it); more as a semi-join on the caller's participant rows,
  -- the same rows app.my_conversation_ids read (its role check passed above).
  membership := case when cardinality(ids) <= 1000
    then format('m.conversation_id = any(%L::uuid[])', ids)
    else format('m.conversation_id in (select p.conversation_id from app.conversation_participants p where p.user_id = %L::uuid)', auth.uid())
  end;
  -- One `like` per term, as literals (`\`, `%` and `_` taken literally): every match contains
  -- every term. Words and prefixes: full-text search with the `simple` configuration (a term
  -- without a word, only punctuation, scores 0).
  select string_agg(format('and lower(m.content) like %L',
           '%' || replace(replace(replace(lower(t), '\', '\\'), '%', '\%'), '_', '\_') || '%'), ' '),
         -- The same conditions in a form no index matches (`|| ''` changes no value): for the
         -- top tier, whose whole words the words index finds more cheaply (below).
         string_agg(format('and (lower(m.content) || '''') like %L',
           '%' || replace(replace(replace(lower(t), '\', '\\'), '%', '\%'), '_', '\_') || '%'), ' '),
         array_agg(case when numnode(plainto_tsquery('simple', t)) > 0 then plainto_tsquery('simple', t) end),
         array_agg(case when numnode(plainto_tsquery('simple', t)) > 0
                   then (plainto_tsquery('simple', t)::text || ':*')::tsquery end)
    into term_filter, unindexed_terms, words, prefixes
    from unnest(terms) t;
  -- The terms that can score (with a word), and what every tier's condition is made of: all of
  -- them whole words (the top tier), any of them starting a word (any tier above 0).
  ranked := 0;
  for i in 1 .. cardinality(terms) loop
    if words[i] is not null then
      ranked := ranked + 1;
      all_words := case when all_words is null then words[i] else all_words && words[i] end;
      any_prefix := case when any_prefix is null then prefixes[i] else any_prefix || prefixes[i] end;
    end if;
  end loop;
  top := 2 * ranked;
  -- How many messages match? The planner's estimates (planning only, nothing run): of the rows
  -- containing every term, from the trigram index expression's statistics, and of the rows
  -- holding every term as a whole word (the top tier), from the words index's.
  execute format('explain (format json) select 1 from app.messages m where true %s', term_filter)
    into plan;
  estimate := (plan->0->'Plan'->>'Plan Rows')::float8;
  total := greatest((select c.reltuples from pg_catalog.pg_class c where c.oid = 'app.messages'::regclass), 1);
  if ranked > 0 then
    execute format('explain (format json) select 1 from app.messages m where to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', all_words)
      into plan;
    top_estimate := least((plan->0->'Plan'->>'Plan Rows')::float8, estimate);
  end if;
  if cardinality(ids) <= 1000 then
    -- The caller's share of the messages (their conversations' last_seq against the table).
    select coalesce(sum(c.last_seq), 0) into caller_rows from app.conversations c where c.id = any(ids);
    share := caller_rows / total;
    -- Dense: the newest `walk` messages (any conversation's) are expected to hold a page of
    -- the caller's matches, and reading them first is cheaper than any index.
    dense := estimate * share * walk / total >= max_rows;
    -- Few matches expected for this caller: score them all and take the page, one query.
    -- Unless the top tier alone is expected to fill the page several times over: then one
    -- query of that tier (the words index and the conversations', no trigram index and no
    -- scoring) is cheaper, and usually the only one.
    if estimate * share
         < coalesce(nullif(current_setting('agora.search_score_all_below', true), '')::float8, 2000)
       and top_estimate * share < 4 * max_rows then
      return query execute format($q$
        select m.id, s.score, m.created_at
        from app.messages m
        cross join lateral (
          select coalesce(sum(case when v @@ w.word then 2 when v @@ w.prefix then 1 else 0 end), 0)::integer
          -- offset 0: one to_tsvector per message, not one per use of v
          from (select to_tsvector('simple', m.content) as v offset 0) tv, unnest($5, $6) as w(word, prefix)
        ) as s(score)
        where %s and m.deleted_at is null %s
          and ($3::uuid is null or (s.score, m.created_at, m.id) < ($1, $2, $3))
        order by s.score desc, m.created_at desc, m.id desc
        limit $4
      $q$, membership, term_filter)
      using after_score, after_created_at, after_id, max_rows, words, prefixes;
      return;
    end if;
  else
    -- A caller in more than 1,000 conversations goes by tiers without counting; the matches
    -- are dense when at least 1 in 100 messages holds them.
    dense := estimate >= 0.01 * total;
  end if;
  -- Best match first: tier by tier from the cursor's (or the top one), newest first within a
  -- tier, each tier asked only for what the page still lacks.
  if after_id is not null and after_score is null then
    return;  -- no row sorts after a cursor without a score
  end if;
  tier := case when after_id is null then top else least(after_score, top) end;
  while tier >= 0 and wanted > 0 loop
    -- The tier as conditions on the message's words (to_tsvector, as messages_content_words
    -- indexes it): exact for the top tier (every term a whole word), for tier 0 (no term starts
    -- a word) and for every tier of one term; a middle tier of several terms adds the score.
    tier_filter := case
      when ranked = 0 then 'true'
      when tier = top then format('to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', all_words)
      when tier = 0 then format('not to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', any_prefix)
      when ranked = 1 then format('to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery and not to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', any_prefix, all_words)
      else format('to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery and (select coalesce(sum(case when v @@ w.word then 2 when v @@ w.prefix then 1 else 0 end), 0) from (select to_tsvector(''simple''::regconfig, m.content) as v offset 0) tv, unnest($5, $6) as w(word, prefix)) = %s', any_prefix, tier)
    end;
    -- The top tier's whole words imply the terms, so the `like` only filters the rows the words
    -- index found (every term has a word); otherwise the trigram index finds them.
    tier_terms := case when tier = top and ranked = cardinality(terms) then unindexed_terms else term_filter end;
    query := format($q$
      select s.id, %s, s.created_at from (
        select m.id, m.created_at
        from /* from */ app.messages m
        where %s and m.deleted_at is null %s
          and %s
          and ($3::uuid is null or (m.created_at, m.id) < ($2, $3))
          and /* range */ true
        -- offset 0: the matches first, then their sort; never a walk of the whole table newest
        -- first, which the planner may pick for a sparse tier and which reads until it finds them
        offset 0) s
      order by s.created_at desc, s.id desc
      limit $4
    $q$, tier, membership, tier_terms, tier_filter);
    -- First the newest `walk` messages before the tier's cursor (any conversation's): their
    -- position is one index read; the tier's rows among them are found by that range (the
    -- planner walks it newest first), enough when the caller's matches are dense. Then, only
    -- if the page still lacks rows, the older ones, the planner choosing the indexes.
    if not dense then
      edge_id := null;
    elsif tier = after_score and after_id is not null then
      select m.created_at, m.id into edge_at, edge_id from app.messages m
      where (m.created_at, m.id) < (after_created_at, after_id)
      order by m.created_at desc, m.id desc offset walk - 1 limit 1;
    else
      if not top_known then
        select m.created_at, m.id into top_at, top_id from app.messages m
        order by m.created_at desc, m.id desc offset walk - 1 limit 1;
        top_known := true;
      end if;
      edge_at := top_at;
      edge_id := top_id;
    end if;
    if edge_id is null then
      -- Sparse matches, or fewer than `walk` messages before the cursor: one query.
      return query execute query
      using after_score, case when tier = after_score then after_created_at end,
            case when tier = after_score then after_id end, wanted, words, prefixes;
      get diagnostics got = row_count;
      wanted := wanted - got;
    else
      -- `offset 0`: only that range from its index, every other condition tested on its rows
      -- (the planner would otherwise AND in the word and trigram indexes, whole posting lists).
      return query execute replace(query, '/* from */ app.messages m',
        '(select * from app.messages m where (m.created_at, m.id) >= ($7, $8) offset 0) m')
      using after_score, case when tier = after_score then after_created_at end,
            case when tier = after_score then after_id end, wanted, words, prefixes, edge_at, edge_id;
      get diagnostics got = row_count;
      wanted := wanted - got;
      if wanted > 0 then
        return query execute replace(query, '/* range */ true', '(m.created_at, m.id) < ($7, $8)')
        using after_score, null::timestamptz, null::uuid, wanted, words, prefixes, edge_at, edge_id;
        get diagnostics got = row_count;
        wanted := wanted - got;
      end if;
    end if;
    tier := tier - 1;
  end loop;
end;
$_$;

COMMENT ON FUNCTION app.search_messages(terms text[], in_conversation uuid, after_score integer, after_created_at timestamp with time zone, after_id uuid, max_rows integer) IS 'Message search for GET /api/messages/search: the messages (not tombstones) of the caller''s current conversations, or of one of them (AG404 when the caller is not in it), whose lowercased content contains every term (3 to 200 characters each, at most 8), best match first (per term: a whole word 2, a word''s start 1, inside a word 0; full-text search with the simple configuration), then newest; a page starts after the (score, created_at, id) given. Returns ids only: the caller reads the messages themselves under RLS. When few matches are expected for the caller (the planner''s estimate of the term times the caller''s share of the messages, under 2,000 or the session setting agora.search_score_all_below), and the top tier (every term a whole word) is not expected to hold four pages of them, it scores them all and sorts; otherwise it reads one score tier at a time, newest first with a limit, and stops when the page is full, so the cost follows the page rather than the number of matches, and the top tier is found by the words index (by the trigram index when a term has no word) (docs/search.md). Both give the same rows in the same order. security definer so that the trigram and word indexes serve the conditions (under RLS a non-leakproof condition may not run before the policy, so no index could take it); the restriction to the caller''s conversations is explicit here, from app.my_conversation_ids. Each tier''s query is planned with its terms (dynamic SQL, literals), since the best plan depends on how common they are.';

REVOKE ALL ON FUNCTION app.search_messages(terms text[], in_conversation uuid, after_score integer, after_created_at timestamp with time zone, after_id uuid, max_rows integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.search_messages(terms text[], in_conversation uuid, after_score integer, after_created_at timestamp with time zone, after_id uuid, max_rows integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.send_message
-- created in 20261121100300_messages.sql; last changed in 20261130020100_messages_mentions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid DEFAULT NULL::uuid, attachment_ids uuid[] DEFAULT '{}'::uuid[], idempotency_key text DEFAULT NULL::text, request_hash text DEFAULT NULL::text, thread_root uuid DEFAULT NULL::uuid, mentions uuid[] DEFAULT '{}'::uuid[]) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  claim jsonb;
  max_length integer;
  attached integer;
  created app.messages;
  files jsonb;
  result jsonb;
  mentioned uuid[] := '{}';
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if idempotency_key is not null then
    claim := app.claim_idempotency_key(idempotency_key, 'send_message', request_hash);
    if claim ? 'conflict' then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    if jsonb_typeof(claim -> 'response') = 'object' then
      return claim -> 'response';
    end if;
  end if;
  max_length := app.config_int('limits', 'messageMaxLength');
  if char_length(message_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  if cardinality(mentions) > 0 then
    -- Each once, in the order first given; the trigger messages_mentions checks and notifies.
    select coalesce(array_agg(x.id order by x.first), '{}') into mentioned
    from (select t.id, min(t.i) as first from unnest(mentions) with ordinality t (id, i)
          where t.id is not null group by t.id) x;
  end if;
  -- Two statements, so each keeps one plan (a null thread_root is folded into the other).
  if thread_root is null then
    insert into app.messages (conversation_id, sender_id, content, reply_to_id, mention_ids)
    values (target_conversation_id, me, message_content, reply_to, mentioned)
    returning * into created;
  else
    insert into app.messages (conversation_id, sender_id, content, reply_to_id, thread_id, mention_ids)
    values (target_conversation_id, me, message_content, reply_to, thread_root, mentioned)
    returning * into created;
  end if;
  if cardinality(attachment_ids) > 0 then
    update app.attachments a set message_id = created.id, conversation_id = target_conversation_id
    where a.id = any(attachment_ids) and a.uploader_id = me and a.message_id is null;
    get diagnostics attached = row_count;
    if attached <> cardinality(attachment_ids) then
      raise exception 'every attachment must be your own upload, not yet attached' using errcode = 'AG422';
    end if;
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) into files
    from app.attachments a where a.message_id = created.id;
  end if;
  result := app.message_object(created, files);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, result);
  end if;
  return result;
end;
$$;

COMMENT ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid, mentions uuid[]) IS 'Sends a message in one call: participation (AG404 otherwise), the idempotency key (the first response again, AG409 for another body), the configured length, the insert (RLS: the sender is the caller; the seq trigger checks the reply, the thread trigger the thread''s root: AG422; the block trigger a direct conversation with someone who blocks the caller: AG403 blocked; the mentions trigger that each mentioned user is a participant, AG422, and notifies them) and the attachments (the caller''s own, not yet attached, else AG422). Mentions are kept each once, in the order given. Returns the message as the API shows it. security invoker: every write is the caller''s, under RLS.';

REVOKE ALL ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid, mentions uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid, mentions uuid[]) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.send_typing
-- created in 20261121100300_messages.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer DEFAULT 2000) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  hits integer;
begin
  if not app.has_role('SUBSCRIBER') or not exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  -- The caller names the throttle (a server setting), but cannot turn it off.
  throttle_ms := least(greatest(throttle_ms, 250), 60000);
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    'typing:' || me || ':' || target_conversation_id || ':' || is_typing,
    to_timestamp(floor(extract(epoch from clock_timestamp()) * 1000 / throttle_ms) * throttle_ms / 1000.0),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits into hits;
  if hits > 1 then
    return false;
  end if;
  perform app_private.emit_ephemeral('conversation:' || target_conversation_id, 'typing',
    jsonb_build_object('conversationId', target_conversation_id, 'userId', me, 'isTyping', is_typing,
                       'expiresAt', to_char((now() + interval '5 seconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
  return true;
end;
$$;

COMMENT ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) IS 'A participant''s ephemeral typing signal, throttled per user, conversation and state (one per throttle_ms, at least 250; the rest are accepted and dropped). Returns whether it was sent. security definer: it counts in the private rate-limit table; it checks participation first.';

REVOKE ALL ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.set_reaction
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.set_reaction(target_message_id uuid, reaction text, present boolean) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  changed integer;
  summary jsonb;
begin
  select * into m from app.messages where id = target_message_id;
  if not found or not app.has_role('SUBSCRIBER') or not exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = m.conversation_id and p.user_id = me
  ) then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  -- One writer per message from here to commit, taken before this transaction writes anything
  -- (its first write, the row lock below, gives it its transaction id): clients read events in
  -- (xid, id) order, so the ids must be handed out in the order the lock is. Every statement
  -- below then sees all changes committed before (a fresh snapshot each): the limit holds, and
  -- each event's counts include all earlier ones.
  perform pg_advisory_xact_lock(hashtext('app.message_reactions'), hashtext(m.id::text));
  -- Key share: a deletion in progress (app.delete_message holds the row for update) commits
  -- first and this reads the tombstone; one that starts later waits for this transaction.
  select * into m from app.messages where id = target_message_id for key share;
  if m.deleted_at is not null then
    if present then
      raise exception 'a deleted message takes no reactions' using errcode = 'AG422';
    end if;
    return jsonb_build_object('messageId', m.id, 'reactions', '[]'::jsonb);
  end if;
  if present then
    insert into app.message_reactions (message_id, user_id, emoji, conversation_id)
    values (m.id, me, reaction, m.conversation_id)
    on conflict do nothing;
  else
    delete from app.message_reactions r
    where r.message_id = m.id and r.user_id = me and r.emoji = reaction;
  end if;
  get diagnostics changed = row_count;
  -- One aggregate under the lock serves the answer, the limit (one entry per distinct emoji)
  -- and the event: the lock is the hot message's bottleneck, so nothing is read twice in it.
  summary := app.message_reactions_json(m.id, me);
  if changed > 0 then
    if present and jsonb_array_length(summary) > 20 then
      raise exception 'a message has at most 20 different reactions' using errcode = 'AG422';
    end if;
    perform app_private.emit_event('conversation:' || m.conversation_id, 'message.reactions',
      jsonb_build_object('messageId', m.id, 'reactions',
        (select coalesce(jsonb_agg(e.value - 'me' order by e.n), '[]'::jsonb)
         from jsonb_array_elements(summary) with ordinality e(value, n))));
  end if;
  return jsonb_build_object('messageId', m.id, 'reactions', summary);
end;
$$;

COMMENT ON FUNCTION app.set_reaction(target_message_id uuid, reaction text, present boolean) IS 'Adds (present) or removes the caller''s reaction: participants at least SUBSCRIBER (AG404 otherwise, as for other messages), never on a tombstone (AG422; removing answers no reactions), up to 20 distinct emoji (AG422). Idempotent both ways; a change emits message.reactions on the conversation (counts without `me`). Returns { messageId, reactions } for the caller. security definer: it locks the message row, which RLS lets only its author do, and writes the reactions table, which has no user grants; it checks participation itself.';

REVOKE ALL ON FUNCTION app.set_reaction(target_message_id uuid, reaction text, present boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app.set_reaction(target_message_id uuid, reaction text, present boolean) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.assign_message_seq
-- created in 20261121100300_messages.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.assign_message_seq() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A nested `if`: as one condition the planner folded the known null and made a custom plan on
  -- every insert.
  if new.reply_to_id is not null then
    if not exists (
      select 1 from app.messages m where m.id = new.reply_to_id and m.conversation_id = new.conversation_id
    ) then
      raise exception 'a reply must point to a message of the same conversation' using errcode = 'AG422';
    end if;
  end if;
  update app.conversations c set last_seq = c.last_seq + 1, last_activity_at = now()
  where c.id = new.conversation_id
  returning c.last_seq into new.seq;
  if new.seq is null then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.assign_message_seq() IS 'A new message takes the next seq from its conversation; the update holds the conversation row''s lock until commit, so seq order is commit order within the conversation. Also checks a reply points into the same conversation.';

REVOKE ALL ON FUNCTION app_private.assign_message_seq() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_thread_reply
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_thread_reply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  root app.messages;
begin
  select * into root from app.messages m where m.id = new.thread_id;
  if not found or root.conversation_id <> new.conversation_id or root.thread_id is not null then
    raise exception 'a thread''s root is a message of the same conversation that is not itself in a thread'
      using errcode = 'AG422';
  end if;
  -- Runs after messages_assign_seq (trigger names in order), under the conversation's row lock:
  -- this reply is the newest of its thread.
  insert into app.message_threads as t (root_id, conversation_id, reply_count, last_reply_at)
  values (root.id, root.conversation_id, 1, new.created_at)
  on conflict (root_id) do update set reply_count = t.reply_count + 1, last_reply_at = excluded.last_reply_at;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.count_thread_reply() IS 'Before a reply in a thread is inserted: checks its root (same conversation, not itself in a thread; AG422) and counts it on the root''s app.message_threads row (its lock serializes the counters). security definer: it writes the counters, which no user may.';

REVOKE ALL ON FUNCTION app_private.count_thread_reply() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_message_block
-- created in 20261130020100_messages_mentions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_message_block() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The first probe is empty for nearly every sender (nobody blocks them): one index lookup.
  if exists (select 1 from app.user_blocks b where b.blocked_id = new.sender_id)
     and exists (
       select 1 from app.conversations c
       join app.conversation_participants p on p.conversation_id = c.id and p.user_id <> new.sender_id
       join app.user_blocks b on b.blocker_id = p.user_id and b.blocked_id = new.sender_id
       where c.id = new.conversation_id and c.type = 'direct'
     ) then
    raise exception 'you cannot message this person' using errcode = 'AG403', hint = 'blocked';
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_message_block() IS 'Before a message is inserted: refused with AG403 hint blocked when it goes into a direct conversation whose other participant blocks the sender (every insert path). Group messages are never refused. security definer: the sender cannot read the block.';

REVOKE ALL ON FUNCTION app_private.guard_message_block() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_message_update
-- created in 20261121100300_messages.sql; last changed in 20261124120000_signin.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_message_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A foreign key's own `set null`: the author's account or the message replied to was deleted.
  -- Nothing else may change with it; the referenced row must really be gone.
  if (new.sender_id is null and old.sender_id is not null
      and not exists (select 1 from app.users u where u.id = old.sender_id))
     or (new.reply_to_id is null and old.reply_to_id is not null
         and not exists (select 1 from app.messages m where m.id = old.reply_to_id)) then
    if new.id = old.id and new.conversation_id = old.conversation_id and new.seq = old.seq
       and new.content = old.content and new.created_at = old.created_at
       and new.edited_at is not distinct from old.edited_at
       and new.deleted_at is not distinct from old.deleted_at
       and (new.sender_id is not distinct from old.sender_id or new.sender_id is null)
       and (new.reply_to_id is not distinct from old.reply_to_id or new.reply_to_id is null) then
      return new;
    end if;
  end if;
  -- Users change content only; trusted server paths (no API role) may also fix metadata.
  -- (The `role` setting, not current_user: this function runs with its owner's rights.)
  if current_setting('role', true) in ('anon', 'authenticated') and (
     new.id <> old.id or new.conversation_id <> old.conversation_id or new.seq <> old.seq
     or new.sender_id is distinct from old.sender_id or new.created_at <> old.created_at
     or new.reply_to_id is distinct from old.reply_to_id) then
    raise exception 'only the content of a message can change' using errcode = '42501';
  end if;
  if old.deleted_at is not null then
    raise exception 'a deleted message cannot change' using errcode = 'AG422';
  end if;
  if new.deleted_at is not null then
    new.content := '';
    new.edited_at := old.edited_at;
    return new;
  end if;
  if new.content <> old.content then
    -- The edit window and the length limit hold for every path a user has, not only app.edit_message.
    if current_setting('role', true) in ('anon', 'authenticated') then
      if old.created_at < now() - make_interval(mins => app.config_int('limits', 'messageEditWindowMinutes')) then
        raise exception 'the edit window has closed' using errcode = 'AG422';
      end if;
      if char_length(new.content) > app.config_int('limits', 'messageMaxLength') then
        raise exception 'a message has at most % characters', app.config_int('limits', 'messageMaxLength')
          using errcode = 'AG400';
      end if;
    end if;
    insert into app.message_versions (message_id, content, written_at)
    values (old.id, old.content, coalesce(old.edited_at, old.created_at));
    new.edited_at := now();
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_message_update() IS 'Message edits keep the earlier version in app.message_versions; users change content only, within the configured edit window and length, never on a tombstone. Deletion (deleted_at set) empties the content. The foreign keys'' own set null (the author''s account or the replied-to message deleted) passes, tombstones included, when nothing else changes and the referenced row is gone.';

REVOKE ALL ON FUNCTION app_private.guard_message_update() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.message_events
-- created in 20261121100300_messages.sql; last changed in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.message_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  current app.messages;
  files jsonb;
begin
  select * into current from app.messages where id = new.id;
  if not found then
    return null;
  end if;
  if tg_op = 'INSERT' or (current.deleted_at is null and current.content <> old.content) then
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) into files
    from app.attachments a where a.message_id = current.id;
  end if;
  if tg_op = 'INSERT' then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.created',
      app.message_object(current, files));
  elsif current.deleted_at is not null and old.deleted_at is null then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.deleted',
      jsonb_build_object('id', current.id, 'conversationId', current.conversation_id, 'seq', current.seq,
                         'deletedAt', to_char(current.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                         'threadId', current.thread_id));
  elsif current.content <> old.content then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.updated',
      app.message_object(current, files) || app.message_extras(current, null));
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.message_events() IS 'Durable message.created, message.updated and message.deleted events, emitted at commit (a deferred constraint trigger) so the payload is complete, attachments included; they are read here as the trigger''s owner. An update''s payload carries the thread counts and reactions with `me` false (it goes to every participant); a deletion''s carries threadId.';

REVOKE ALL ON FUNCTION app_private.message_events() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.message_tombstoned
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.message_tombstoned() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app.message_reactions r where r.message_id = new.id;
  if new.thread_id is not null then
    -- The lock first, in a statement of its own: the next statement's snapshot then holds every
    -- reply committed before this one took it.
    perform 1 from app.message_threads t where t.root_id = new.thread_id for update;
    update app.message_threads t
    set reply_count = t.reply_count - 1,
        last_reply_at = (
          select r.created_at from app.messages r
          where r.thread_id = new.thread_id and r.deleted_at is null
          order by r.seq desc limit 1
        )
    where t.root_id = new.thread_id;
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.message_tombstoned() IS 'After a message becomes a tombstone: its reactions go (a tombstone shows none), and a reply is taken off its thread''s counters under the thread row''s lock (the newest live reply read again). Runs once per message: app.delete_message sets deleted_at once, under the message''s row lock. security definer: it writes rows that are not the caller''s.';

REVOKE ALL ON FUNCTION app_private.message_tombstoned() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.notify_mentions
-- created in 20261130020100_messages_mentions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.notify_mentions() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  conversation app.conversations;
  sender_name text;
  recipients uuid[];
begin
  if exists (
    select 1 from unnest(new.mention_ids) x
    where not exists (select 1 from app.conversation_participants p
                      where p.conversation_id = new.conversation_id and p.user_id = x)
  ) then
    raise exception 'only participants of the conversation can be mentioned' using errcode = 'AG422';
  end if;
  select array_agg(x) into recipients from unnest(new.mention_ids) x where x is distinct from new.sender_id;
  if recipients is null then
    return null;
  end if;
  select * into conversation from app.conversations c where c.id = new.conversation_id;
  select coalesce(nullif(u.name, ''), 'Someone') into sender_name from app.users u where u.id = new.sender_id;
  sender_name := coalesce(sender_name, 'Someone');
  perform app_private.notify_many(
    recipients,
    'MESSAGE',
    left(coalesce(conversation.title, sender_name), 200),
    left(sender_name || ' mentioned you: ' || new.content, 200),
    jsonb_build_object('kind', 'mention', 'conversationId', new.conversation_id, 'messageId', new.id,
                       'senderId', new.sender_id, 'threadId', new.thread_id),
    'normal',
    null
  );
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.notify_mentions() IS 'After a message that mentions people is inserted: each mentioned user must be a participant (AG422, the send fails), and each but the sender gets a MESSAGE notification with data { kind: "mention", conversationId, messageId, senderId, threadId } through app_private.notify_many (where mutes and blocks drop it). No collapse key: each mention is its own notification. security definer: it reads every participant and writes other users'' inboxes.';

REVOKE ALL ON FUNCTION app_private.notify_mentions() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.send_message_as
-- created in 20261121100300_messages.sql; last changed in 20261130020100_messages_mentions.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid, mentions uuid[] DEFAULT '{}'::uuid[]) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash, thread_root, coalesce(mentions, '{}'));
end;
$$;

COMMENT ON FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid, mentions uuid[]) IS 'A send in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.send_message under them (RLS as always), so the commit follows at once on the server and the conversation''s row lock is never held across a round trip to the API. Only the API''s own role may call it: it trusts the claims it is given.';

REVOKE ALL ON FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid, mentions uuid[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.set_reaction_as
-- created in 20261130000000_messages_reactions_threads.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.set_reaction_as(claims text, target_message_id uuid, reaction text, present boolean) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.set_reaction(target_message_id, reaction, present);
end;
$$;

COMMENT ON FUNCTION app_private.set_reaction_as(claims text, target_message_id uuid, reaction text, present boolean) IS 'A reaction in one statement, for the hot path (as app_private.send_message_as for sends): sets the caller''s role and claims for this statement''s own transaction and runs app.set_reaction, so its per-message lock is held only until the commit that follows at once on the server, never across a round trip. Only the API''s own role may call it: it trusts the claims it is given.';

REVOKE ALL ON FUNCTION app_private.set_reaction_as(claims text, target_message_id uuid, reaction text, present boolean) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.set_reactions_as
-- created in 20261201010000_messages_reaction_batches.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.set_reactions_as(target_message_id uuid, items jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  m app.messages;
  item jsonb;
  me uuid;
  reaction text;
  present boolean;
  changed integer;
  any_changed boolean := false;
  outcomes jsonb := '[]'::jsonb;
  counts jsonb;
  failed_code text;
  failed_message text;
  failed_hint text;
  failed_detail text;
begin
  -- The lock of app.set_reaction (its comment says why it comes before the first write: events
  -- are read in (xid, id) order, so ids must be handed out in lock order), then the message row
  -- in key share (a deletion in progress commits first; one that starts later waits for us).
  perform pg_advisory_xact_lock(hashtext('app.message_reactions'), hashtext(target_message_id::text));
  select * into m from app.messages where id = target_message_id for key share;
  for item in select value from jsonb_array_elements(items) loop
    begin
      -- The item's caller, for auth.uid() and app.has_role, until the next item's.
      perform set_config('request.jwt.claims', item ->> 'claims', true);
      me := auth.uid();
      reaction := item ->> 'emoji';
      present := (item ->> 'present')::boolean;
      if m.id is null or me is null or not app.has_role('SUBSCRIBER') or not exists (
        select 1 from app.conversation_participants p
        where p.conversation_id = m.conversation_id and p.user_id = me
      ) then
        raise exception 'message not found' using errcode = 'AG404';
      end if;
      if m.deleted_at is not null then
        if present then
          raise exception 'a deleted message takes no reactions' using errcode = 'AG422';
        end if;
      elsif present then
        insert into app.message_reactions (message_id, user_id, emoji, conversation_id)
        values (m.id, me, reaction, m.conversation_id)
        on conflict do nothing;
        get diagnostics changed = row_count;
        -- A new distinct emoji (nobody else has it) is the only change that can pass the limit.
        if changed > 0 and not exists (
          select 1 from app.message_reactions x
          where x.message_id = m.id and x.emoji = reaction and x.user_id <> me
        ) and (
          select count(distinct x.emoji) from app.message_reactions x where x.message_id = m.id
        ) > 20 then
          raise exception 'a message has at most 20 different reactions' using errcode = 'AG422';
        end if;
        any_changed := any_changed or changed > 0;
      else
        delete from app.message_reactions r
        where r.message_id = m.id and r.user_id = me and r.emoji = reaction;
        get diagnostics changed = row_count;
        any_changed := any_changed or changed > 0;
      end if;
      outcomes := outcomes || jsonb_build_array(jsonb_build_object('userId', me));
    exception when others then
      -- This item's changes are rolled back to its savepoint; the batch goes on.
      get stacked diagnostics failed_code = returned_sqlstate, failed_message = message_text,
        failed_hint = pg_exception_hint, failed_detail = pg_exception_detail;
      outcomes := outcomes || jsonb_build_array(jsonb_build_object('error', jsonb_build_object(
        'code', failed_code, 'message', failed_message,
        'hint', nullif(failed_hint, ''), 'detail', nullif(failed_detail, ''))));
    end;
  end loop;
  perform set_config('request.jwt.claims', '', true);
  -- One aggregate after the whole batch serves every answer and the event.
  select coalesce(jsonb_agg(e.value - 'me' order by e.n), '[]'::jsonb) into counts
  from jsonb_array_elements(app.message_reactions_json(target_message_id, null))
    with ordinality e(value, n);
  if any_changed then
    perform app_private.emit_event('conversation:' || m.conversation_id, 'message.reactions',
      jsonb_build_object('messageId', m.id, 'reactions', counts));
  end if;
  return jsonb_build_object('reactions', counts, 'items', (
    select coalesce(jsonb_agg(case when o.value ? 'error' then o.value
      else jsonb_build_object('mine', (
        select coalesce(jsonb_agg(x.emoji), '[]'::jsonb) from app.message_reactions x
        where x.message_id = target_message_id and x.user_id = (o.value ->> 'userId')::uuid))
      end order by o.n), '[]'::jsonb)
    from jsonb_array_elements(outcomes) with ordinality o(value, n)));
end;
$$;

COMMENT ON FUNCTION app_private.set_reactions_as(target_message_id uuid, items jsonb) IS 'A batch of reactions to one message in one transaction (group commit, the API''s hot path): items is [{ claims, emoji, present }], each applied as its caller with app.set_reaction''s rules (participants at least SUBSCRIBER, else AG404; never added to a tombstone, AG422; at most 20 distinct emoji, AG422; idempotent both ways) in a block of its own, so a failing item is rolled back alone. Under app.set_reaction''s per-message lock; one message.reactions event per batch that changed anything, with the counts after it. Returns { reactions: counts after the batch, without `me`; items: per item, in order, { mine: the caller''s emoji after the batch } or { error: { code, message, hint, detail } } }. Only the API''s own role may call it: it trusts the claims it is given.';

REVOKE ALL ON FUNCTION app_private.set_reactions_as(target_message_id uuid, items jsonb) FROM PUBLIC;
