-- Agora's schema as it is now, domain attachments: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121100400_attachments.sql
--   supabase/migrations/20261203000000_attachments_messages_json.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- table app.attachments
-- created in 20261121100400_attachments.sql; last changed in 20261130030000_conversations_growth.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.attachments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    uploader_id uuid NOT NULL,
    conversation_id uuid,
    message_id uuid,
    name text NOT NULL,
    content_type text NOT NULL,
    size bigint NOT NULL,
    storage_key text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT attachments_attached_together CHECK (((conversation_id IS NULL) = (message_id IS NULL))),
    CONSTRAINT attachments_content_type_check CHECK (((char_length(content_type) >= 3) AND (char_length(content_type) <= 255))),
    CONSTRAINT attachments_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 255))),
    CONSTRAINT attachments_size_check CHECK ((size >= 0))
);

COMMENT ON TABLE app.attachments IS 'Files: visible to their uploader, and once attached (exactly once, to the uploader''s own message) to the participants of that conversation.';

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_storage_key_key UNIQUE (storage_key);

CREATE INDEX attachments_conversation_id_idx ON app.attachments USING btree (conversation_id);

CREATE INDEX attachments_message_id_idx ON app.attachments USING btree (message_id);

CREATE INDEX attachments_uploader_id_idx ON app.attachments USING btree (uploader_id);

CREATE TRIGGER attachments_guard_update BEFORE UPDATE ON app.attachments FOR EACH ROW EXECUTE FUNCTION app_private.guard_attachment_update();

CREATE TRIGGER attachments_queue_storage_deletion AFTER DELETE ON app.attachments FOR EACH ROW EXECUTE FUNCTION app_private.queue_storage_deletion();

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_uploader_id_fkey FOREIGN KEY (uploader_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app.attachments ENABLE ROW LEVEL SECURITY;

CREATE POLICY attachments_insert_self ON app.attachments FOR INSERT TO authenticated WITH CHECK (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NULL) AND (conversation_id IS NULL)));

CREATE POLICY attachments_select_visible ON app.attachments FOR SELECT TO authenticated USING (((uploader_id = ( SELECT auth.uid() AS uid)) OR (( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role) AND (EXISTS ( SELECT 1
   FROM app.conversation_participants p
  WHERE ((p.conversation_id = attachments.conversation_id) AND (p.user_id = ( SELECT auth.uid() AS uid)))
 OFFSET 0)))));

CREATE POLICY attachments_update_attach ON app.attachments FOR UPDATE TO authenticated USING (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NULL))) WITH CHECK (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NOT NULL)));

GRANT SELECT ON TABLE app.attachments TO authenticated;

GRANT INSERT(uploader_id) ON TABLE app.attachments TO authenticated;

GRANT UPDATE(conversation_id) ON TABLE app.attachments TO authenticated;

GRANT UPDATE(message_id) ON TABLE app.attachments TO authenticated;

GRANT INSERT(name) ON TABLE app.attachments TO authenticated;

GRANT INSERT(content_type) ON TABLE app.attachments TO authenticated;

GRANT INSERT(size) ON TABLE app.attachments TO authenticated;

GRANT INSERT(storage_key) ON TABLE app.attachments TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.attachment_json
-- created in 20261121100400_attachments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.attachment_json(a app.attachments) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', a.id, 'name', a.name, 'contentType', a.content_type, 'size', a.size,
    'url', '/api/attachments/' || a.id::text
  )
$$;

COMMENT ON FUNCTION app.attachment_json(a app.attachments) IS 'One attachment as the API shows it. Inlinable pure SQL with no pinned search_path, like app.message_object and for the same reason.';

REVOKE ALL ON FUNCTION app.attachment_json(a app.attachments) FROM PUBLIC;
GRANT ALL ON FUNCTION app.attachment_json(a app.attachments) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.message_json
-- created in 20261121100400_attachments.sql; last changed in 20261203000000_attachments_messages_json.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.message_json(m app.messages) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select j.json from app.messages_json(array[m.id]) j
$$;

COMMENT ON FUNCTION app.message_json(m app.messages) IS 'The message as the API shows it (app.messages_json of its id, the one definition of the shape): attachments, thread counts and reactions (`me` for the caller), and senderBlocked: whether the caller blocks its sender (RLS shows a block to its blocker only, so it is false for everyone else, the blocked person included). For one message (an edit''s response); a page reads app.messages_json once. Reads the message as stored, so call it after the change is made. security invoker: a user sees only what RLS shows them (null for a message they cannot read).';

REVOKE ALL ON FUNCTION app.message_json(m app.messages) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_json(m app.messages) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.messages_json
-- created in 20261203000000_attachments_messages_json.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.messages_json(ids uuid[]) RETURNS TABLE(id uuid, conversation_id uuid, thread_id uuid, seq bigint, json jsonb)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select m.id, m.conversation_id, m.thread_id, m.seq,
    app.message_object(m, att.list) || jsonb_build_object(
      'thread', th.thread,
      'reactions', case when m.deleted_at is null then coalesce(rx.list, '[]'::jsonb)
                        else '[]'::jsonb end,
      'senderBlocked', exists (
        select 1 from app.user_blocks b
        where b.blocker_id = (select auth.uid()) and b.blocked_id = m.sender_id))
  from unnest(ids) with ordinality as i(id, n)
  join app.messages m on m.id = i.id
  left join lateral (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) as list
    from app.attachments a where a.message_id = m.id
  ) att on true
  left join lateral (
    select jsonb_build_object(
      'replyCount', t.reply_count,
      'lastReplyAt', to_char(t.last_reply_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    ) as thread
    from app.message_threads t where t.root_id = m.id and t.reply_count > 0
  ) th on true
  left join lateral (
    select jsonb_agg(jsonb_build_object('emoji', r.emoji, 'count', r.n, 'me', r.mine)
                     order by r.first_at, r.emoji) as list
    from (
      select x.emoji, count(*)::int as n,
             coalesce(bool_or(x.user_id = (select auth.uid())), false) as mine,
             min(x.created_at) as first_at
      from app.message_reactions x where x.message_id = m.id
      group by x.emoji
    ) r
  ) rx on true
  order by i.n
$$;

COMMENT ON FUNCTION app.messages_json(ids uuid[]) IS 'The messages of ids as the API shows them, in the order of ids (RLS leaves out what the caller cannot read): attachments, thread counts, reactions (`me` for the caller) and senderBlocked, as app.message_json gives one. For pages (history, threads, search): the page''s rows are built in one query, planned and started once, instead of one function call per row (about 0.5 ms a row). Also returns each message''s conversation, thread and seq for the caller''s cursor. security invoker: a user sees only what RLS shows them.';

REVOKE ALL ON FUNCTION app.messages_json(ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.messages_json(ids uuid[]) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.collect_orphan_attachments
-- created in 20261121100400_attachments.sql; last changed in 20261130080100_catalog_product_images.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.collect_orphan_attachments(older_than interval DEFAULT '24:00:00'::interval) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  -- A picture its product stopped showing is no longer the product's.
  delete from app.product_images i
  using app.products p
  where p.id = i.product_id and i.created_at < now() - older_than
    and not (('/api/store/images/' || i.attachment_id::text) = any (p.images));
  delete from app.attachments a
  where a.message_id is null and a.created_at < now() - older_than
    and not exists (select 1 from app.users u where u.image_attachment_id = a.id)
    and not exists (select 1 from app.product_images i where i.attachment_id = a.id);
$$;

COMMENT ON FUNCTION app_private.collect_orphan_attachments(older_than interval) IS 'Uploads never attached within older_than, and neither a profile picture nor a product''s picture, are dropped (their files queued by the delete trigger); a product picture the product stopped showing within older_than stops being one first. Run hourly by pg_cron.';

REVOKE ALL ON FUNCTION app_private.collect_orphan_attachments(older_than interval) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_attachment_update
-- created in 20261121100400_attachments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_attachment_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.id <> old.id or new.uploader_id <> old.uploader_id or new.storage_key <> old.storage_key
     or new.name <> old.name or new.content_type <> old.content_type or new.size <> old.size then
    raise exception 'an attachment''s file never changes' using errcode = '42501';
  end if;
  if old.message_id is not null and current_setting('role', true) in ('anon', 'authenticated') then
    raise exception 'an attachment is attached once' using errcode = 'AG409';
  end if;
  if new.message_id is not null and not exists (
    select 1 from app.messages m
    join app.conversation_participants p on p.conversation_id = m.conversation_id and p.user_id = new.uploader_id
    where m.id = new.message_id and m.sender_id = new.uploader_id and m.conversation_id = new.conversation_id
      and m.deleted_at is null
  ) then
    raise exception 'an attachment goes on a live message of its uploader, who takes part in the conversation'
      using errcode = 'AG422';
  end if;
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_attachment_update() IS 'An attachment''s file never changes, it is attached once, and only to a live message of its uploader in a conversation the uploader takes part in. security definer: it reads messages and participants the update may not see.';

REVOKE ALL ON FUNCTION app_private.guard_attachment_update() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.queue_storage_deletion
-- created in 20261121100400_attachments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.queue_storage_deletion() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.enqueue_job(
    'storage.delete', jsonb_build_object('key', old.storage_key), now(),
    'storage.delete:' || old.storage_key
  );
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.queue_storage_deletion() IS 'Trigger on app.attachments (after delete): enqueues a storage.delete job for the row''s file. security definer because users delete attachments through cascades and app_private has no grants.';

REVOKE ALL ON FUNCTION app_private.queue_storage_deletion() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-collect-orphan-attachments
-- created in 20261121100400_attachments.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 23 * * * *
-- command:
--   select app_private.collect_orphan_attachments()
