/*
 * Attachments: uploaded files, owned by their uploader until attached (once) to one of their
 * messages, then visible to that conversation's participants; the attachments' part of the
 * message JSON; and cleanup: every deleted attachment row queues a `storage.delete` job for its
 * file (storage lives outside the database), and uploads never attached are collected after a day.
 *
 * Tables: app.attachments. Nothing destructive beyond the pruning described.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.attachments (
  id uuid primary key default gen_random_uuid(),
  uploader_id uuid not null references app.users (id) on delete cascade,
  conversation_id uuid references app.conversations (id) on delete cascade,
  message_id uuid references app.messages (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 255),
  content_type text not null check (char_length(content_type) between 3 and 255),
  size bigint not null check (size >= 0),
  storage_key text not null unique,
  created_at timestamptz not null default now(),
  constraint attachments_attached_together check ((conversation_id is null) = (message_id is null))
);
comment on table app.attachments is
  'Files: visible to their uploader, and once attached (exactly once, to the uploader''s own message) to the participants of that conversation.';


create index attachments_uploader_id_idx on app.attachments (uploader_id);
create index attachments_message_id_idx on app.attachments (message_id);
create index attachments_conversation_id_idx on app.attachments (conversation_id);

alter table app.attachments enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.guard_attachment_update() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
comment on function app_private.guard_attachment_update() is
  'An attachment''s file never changes, it is attached once, and only to a live message of its uploader in a conversation the uploader takes part in. security definer: it reads messages and participants the update may not see.';

create function app_private.queue_storage_deletion() returns trigger
language plpgsql volatile
security definer
set search_path = ''
as $$
begin
  perform app_private.enqueue_job(
    'storage.delete', jsonb_build_object('key', old.storage_key), now(),
    'storage.delete:' || old.storage_key
  );
  return null;
end;
$$;
comment on function app_private.queue_storage_deletion() is
  'Trigger on app.attachments (after delete): enqueues a storage.delete job for the row''s file. '
  'security definer because users delete attachments through cascades and app_private has no grants.';

create trigger attachments_guard_update before update on app.attachments
  for each row execute function app_private.guard_attachment_update();
create trigger attachments_queue_storage_deletion after delete on app.attachments
  for each row execute function app_private.queue_storage_deletion();

-- ---------------------------------------------------------------------------------------------
-- The attachments' part of the message JSON
-- ---------------------------------------------------------------------------------------------

create function app.attachment_json(a app.attachments) returns jsonb
language sql stable
as $$
  select jsonb_build_object(
    'id', a.id, 'name', a.name, 'contentType', a.content_type, 'size', a.size,
    'url', '/api/attachments/' || a.id::text
  )
$$;
comment on function app.attachment_json(app.attachments) is
  'One attachment as the API shows it. Inlinable pure SQL with no pinned search_path, like app.message_object and for the same reason.';

create function app.message_json(m app.messages) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
  select app.message_object(m, (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id)
    from app.attachments a where a.message_id = m.id
  ))
$$;
comment on function app.message_json(app.messages) is
  'The message as the API shows it, attachments read here. For list queries, where it is planned once per query. security invoker: a user sees only the attachments RLS shows them.';

-- ---------------------------------------------------------------------------------------------
-- Policies and grants
-- ---------------------------------------------------------------------------------------------

create policy attachments_select_visible on app.attachments for select to authenticated
  using (
    uploader_id = (select auth.uid())
    or conversation_id in (select app.my_conversation_ids())
  );
create policy attachments_insert_self on app.attachments for insert to authenticated
  with check (uploader_id = (select auth.uid()) and message_id is null and conversation_id is null);
-- Attached once, by the uploader, to a message of theirs (checked by the guard trigger).
create policy attachments_update_attach on app.attachments for update to authenticated
  using (uploader_id = (select auth.uid()) and message_id is null)
  with check (uploader_id = (select auth.uid()) and message_id is not null);

grant select on app.attachments to authenticated;
grant insert (uploader_id, name, content_type, size, storage_key) on app.attachments to authenticated;
grant update (message_id, conversation_id) on app.attachments to authenticated;
grant execute on function app.attachment_json(app.attachments) to authenticated;
grant execute on function app.message_json(app.messages) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- Cleanup
-- ---------------------------------------------------------------------------------------------

create function app_private.collect_orphan_attachments(older_than interval default '24 hours') returns void
language sql volatile
set search_path = ''
as $$
  delete from app.attachments where message_id is null and created_at < now() - older_than
$$;
comment on function app_private.collect_orphan_attachments(interval) is
  'Uploads never attached within older_than are dropped (their files queued by the delete trigger). Run hourly by pg_cron.';

select cron.schedule('agora-collect-orphan-attachments', '23 * * * *', 'select app_private.collect_orphan_attachments()');

revoke execute on all functions in schema app, app_private from public;
