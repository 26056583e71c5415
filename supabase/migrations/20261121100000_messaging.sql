/*
 * Messaging: conversations (direct and group), participants with read watermarks, messages with
 * their earlier versions, attachments, idempotency keys for sends, and the durable event log
 * that makes all of it live (SSE, long-poll, and Realtime through realtime.send()).
 *
 * Ordering, the part that is easy to get wrong:
 * - Messages carry `seq`, a per-conversation counter taken from the conversation row while the
 *   sender's transaction holds that row's lock until commit: within a conversation, seq order is
 *   commit order, so `after=<message>` catch-up never skips a message committed late.
 * - Events carry the writing transaction's id (xid8) and an identity. A plain sequence is not in
 *   commit order, but readers only ever read events of transactions older than the oldest one
 *   still running (`pg_snapshot_xmin`): every future event has a larger xid, so the set read is a
 *   stable prefix of the order (xid, id) and a cursor in that order never skips or repeats.
 *
 * Tables: app.conversations, app.conversation_participants, app.messages, app.message_versions,
 * app.attachments, app.events, app_private.idempotency_keys. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.conversation_type as enum ('direct', 'group');

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

/* A conversation; `last_seq` hands out message numbers, `direct_key` keeps one direct per pair. */
create table app.conversations (
  id uuid primary key default gen_random_uuid(),
  type app.conversation_type not null,
  title text check (char_length(title) between 1 and 200),
  created_by uuid references app.users (id) on delete set null,
  direct_key text unique,
  last_seq bigint not null default 0,
  created_at timestamptz not null default now(),
  last_activity_at timestamptz not null default now(),
  constraint conversations_direct_key check ((type = 'direct') = (direct_key is not null)),
  constraint conversations_direct_untitled check (type = 'group' or title is null)
);
comment on table app.conversations is 'Direct (two people) and group conversations.';

/* Who is in a conversation, and how far each has read (a watermark that only moves forward). */
create table app.conversation_participants (
  conversation_id uuid not null references app.conversations (id) on delete cascade,
  user_id uuid not null references app.users (id) on delete cascade,
  added_by uuid references app.users (id) on delete set null,
  joined_at timestamptz not null default now(),
  last_read_seq bigint not null default 0,
  last_read_message_id uuid,
  last_read_at timestamptz,
  primary key (conversation_id, user_id)
);
comment on table app.conversation_participants is 'Participants and their read watermarks.';

/* Messages. A deleted message is a tombstone: content empty, attachments gone, place kept. */
create table app.messages (
  id uuid primary key default gen_random_uuid(),
  conversation_id uuid not null references app.conversations (id) on delete cascade,
  seq bigint not null,
  sender_id uuid references app.users (id) on delete set null,
  content text not null,
  reply_to_id uuid references app.messages (id) on delete set null,
  created_at timestamptz not null default now(),
  edited_at timestamptz,
  deleted_at timestamptz,
  unique (conversation_id, seq),
  constraint messages_content_length check (
    (deleted_at is null and char_length(content) between 1 and 10000)
    or (deleted_at is not null and content = '')
  )
);
comment on table app.messages is 'Messages, in per-conversation commit order (seq).';

/* Earlier versions of edited messages: the history an edit must not erase. */
create table app.message_versions (
  id bigint generated always as identity primary key,
  message_id uuid not null references app.messages (id) on delete cascade,
  content text not null,
  written_at timestamptz not null,
  replaced_at timestamptz not null default now()
);
comment on table app.message_versions is 'Earlier contents of edited messages.';

/* Uploaded files: owned by the uploader until attached (once) to one of their messages. */
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
comment on table app.attachments is 'Files, visible to their uploader and to the participants of the conversation they are attached in.';

/* The durable event log behind SSE, long-polling and Realtime. See the header for its order. */
create table app.events (
  id bigint generated always as identity primary key,
  xid xid8 not null default pg_current_xact_id(),
  topic text not null check (char_length(topic) between 1 and 200),
  event text not null check (event ~ '^[a-z_]+(\.[a-z_]+)*$'),
  payload jsonb not null,
  created_at timestamptz not null default now()
);
comment on table app.events is 'Durable realtime events, read in (xid, id) order below the running-transaction horizon.';

/* Idempotent sends: the first response for a key, replayed for 24 h. */
create table app_private.idempotency_keys (
  user_id uuid not null references app.users (id) on delete cascade,
  key text not null check (char_length(key) between 1 and 255),
  scope text not null,
  request_hash text not null,
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (user_id, key)
);
comment on table app_private.idempotency_keys is 'Idempotency keys of sends with their first response.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create index conversations_last_activity_idx on app.conversations (last_activity_at desc, id desc);
create index conversations_created_by_idx on app.conversations (created_by);
create index conversation_participants_user_id_idx on app.conversation_participants (user_id, conversation_id);
create index conversation_participants_added_by_idx on app.conversation_participants (added_by);
create index messages_sender_id_idx on app.messages (sender_id);
create index messages_reply_to_id_idx on app.messages (reply_to_id);
create index messages_created_at_idx on app.messages (created_at);
create index message_versions_message_id_idx on app.message_versions (message_id);
create index attachments_uploader_id_idx on app.attachments (uploader_id);
create index attachments_message_id_idx on app.attachments (message_id);
create index attachments_conversation_id_idx on app.attachments (conversation_id);
create index events_topic_order_idx on app.events (topic, xid, id);
create index events_order_idx on app.events (xid, id);
create index events_created_at_idx on app.events (created_at);
create index idempotency_keys_created_at_idx on app_private.idempotency_keys (created_at);

-- ---------------------------------------------------------------------------------------------
-- Enable RLS
-- ---------------------------------------------------------------------------------------------

alter table app.conversations enable row level security;
alter table app.conversation_participants enable row level security;
alter table app.messages enable row level security;
alter table app.message_versions enable row level security;
alter table app.attachments enable row level security;
alter table app.events enable row level security;
alter table app_private.idempotency_keys enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

/*
 * The conversations the current user takes part in, and may use: an active user of at least
 * SUBSCRIBER (a participant demoted to VISITOR or suspended sees nothing until reinstated).
 * security definer so policies on the participants table itself can use it without recursing
 * into their own policies; it only ever returns the caller's own memberships.
 */
create function app.my_conversation_ids() returns setof uuid
language plpgsql stable security definer
set search_path = ''
as $$
begin
  -- plpgsql keeps its plan across calls (see app.has_role).
  if app.has_role('SUBSCRIBER') then
    return query select p.conversation_id from app.conversation_participants p where p.user_id = auth.uid();
  end if;
end;
$$;

/*
 * "Does the current user take part in this conversation (and may use it)?": one primary-key
 * lookup, for policies and checks on a single conversation (cheaper than the whole set).
 * security definer for the same reason as app.my_conversation_ids.
 */
create function app.is_participant(target_conversation_id uuid) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = auth.uid()
  ) and app.has_role('SUBSCRIBER');
end;
$$;

/*
 * THE topic rule, as the set of topics the current user may read. One rule for every transport:
 * the SSE and long-poll routes and the policies on realtime.messages (hosted Realtime and the
 * local gateway) ask app.can_read_topic (membership of this set); the RLS policy on app.events
 * uses the set directly, so it is computed once per statement rather than once per event row.
 *   conversation:<id>  participants (active users of at least SUBSCRIBER)
 *   user:<id>          that user
 *   admin              ADMINs
 * and only for a live session (the `session_id` claim): signout ends realtime access at once.
 * security definer: it reads memberships and sessions the caller may not read directly; it
 * returns only the caller's own topics.
 */
create function app.readable_topics() returns setof text
language plpgsql stable security definer
set search_path = ''
as $$
begin
  if auth.uid() is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  -- A signed-out (revoked) session reads nothing, on any transport, even before its token expires.
  if not exists (
    select 1 from app.sessions s
    where s.id = (case when (auth.jwt() ->> 'session_id') ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                       then (auth.jwt() ->> 'session_id')::uuid end)
      and s.user_id = auth.uid()
      and s.revoked_at is null and s.expires_at > now()
  ) then
    return;
  end if;
  return next 'user:' || auth.uid()::text;
  if app.is_admin() then
    return next 'admin';
  end if;
  return query
    select 'conversation:' || p.conversation_id::text
    from app.conversation_participants p where p.user_id = auth.uid();
end;
$$;
comment on function app.readable_topics() is
  'The one rule deciding who may read a realtime topic, as the set of the caller''s topics.';

/* The same rule for one topic (routes, realtime.messages policies). */
create function app.can_read_topic(topic text) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return exists (select 1 from app.readable_topics() t where t = topic);
end;
$$;
comment on function app.can_read_topic(text) is
  'Whether the caller may read one realtime topic: membership of app.readable_topics().';

/*
 * Appends a durable event and hands the same envelope to Realtime. The envelope's `id` is the
 * event's cursor (`<xid>.<id>`), identical on every transport so clients can remove duplicates.
 * security definer: events are written by triggers on behalf of whichever user caused them.
 */
create function app_private.emit_event(topic text, event text, payload jsonb) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
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

/*
 * Ephemeral events (typing): delivered to live subscribers only, never stored in app.events.
 * Hosted Realtime gets them through realtime.send (its own short-lived table); API processes
 * through NOTIFY. security definer for the same reason as emit_event.
 */
create function app_private.emit_ephemeral(topic text, event text, payload jsonb) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
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

/*
 * The message as the API shows it (and as events carry it). security invoker: called by a user it
 * shows only attachments RLS lets them see; called from the event triggers it runs as their owner.
 */
create function app.message_json(m app.messages) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
  select jsonb_build_object(
    'id', m.id,
    'conversationId', m.conversation_id,
    'seq', m.seq,
    'senderId', m.sender_id,
    'content', m.content,
    'replyToId', m.reply_to_id,
    'attachments', case when m.deleted_at is not null then '[]'::jsonb else coalesce((
      select jsonb_agg(jsonb_build_object(
        'id', a.id, 'name', a.name, 'contentType', a.content_type, 'size', a.size,
        'url', '/api/attachments/' || a.id::text
      ) order by a.created_at, a.id)
      from app.attachments a where a.message_id = m.id
    ), '[]'::jsonb) end,
    'createdAt', to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'editedAt', to_char(m.edited_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;

/*
 * A numeric setting of the current configuration (limits and the like, never secrets), with a
 * default. security definer: the configuration table is readable by ADMINs only.
 */
create function app.config_int(section text, key text, fallback integer) returns integer
language plpgsql stable security definer
set search_path = ''
as $$
declare
  v text;
begin
  select c.config -> section ->> key into v from app.config_versions c order by c.version desc limit 1;
  return case when v ~ '^-?[0-9]{1,9}$' then v::integer else fallback end;
end;
$$;

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

/*
 * A new message takes the next seq from its conversation. The update holds the conversation
 * row's lock until commit, so seq order is commit order within the conversation.
 */
create function app_private.assign_message_seq() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.reply_to_id is not null and not exists (
    select 1 from app.messages m where m.id = new.reply_to_id and m.conversation_id = new.conversation_id
  ) then
    raise exception 'a reply must point to a message of the same conversation' using errcode = 'AG422';
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

/*
 * Message edits keep the earlier version; only content may change this way, and never on a
 * tombstone. Deletion (deleted_at set) empties content.
 */
create function app_private.guard_message_update() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
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
    -- The edit window holds for every path a user has, not only app.edit_message.
    if current_setting('role', true) in ('anon', 'authenticated') and old.created_at
       < now() - make_interval(mins => app.config_int('limits', 'messageEditWindowMinutes', 15)) then
      raise exception 'the edit window has closed' using errcode = 'AG422';
    end if;
    insert into app.message_versions (message_id, content, written_at)
    values (old.id, old.content, coalesce(old.edited_at, old.created_at));
    new.edited_at := now();
  end if;
  return new;
end;
$$;

/* Durable events for message changes, emitted at commit so the payload is complete. */
create function app_private.message_events() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  current app.messages;
begin
  select * into current from app.messages where id = new.id;
  if not found then
    return null;
  end if;
  if tg_op = 'INSERT' then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.created',
      app.message_json(current));
  elsif current.deleted_at is not null and old.deleted_at is null then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.deleted',
      jsonb_build_object('id', current.id, 'conversationId', current.conversation_id, 'seq', current.seq,
                         'deletedAt', to_char(current.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')));
  elsif current.content <> old.content then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.updated',
      app.message_json(current));
  end if;
  return null;
end;
$$;

/* Read marks move forward only; each move tells the other participants. */
create function app_private.guard_read_mark() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.conversation_id <> old.conversation_id or new.user_id <> old.user_id
     or new.joined_at <> old.joined_at or new.added_by is distinct from old.added_by then
    raise exception 'only the read mark of a participant can change' using errcode = '42501';
  end if;
  if new.last_read_seq <= old.last_read_seq then
    new.last_read_seq := old.last_read_seq;
    new.last_read_message_id := old.last_read_message_id;
    new.last_read_at := old.last_read_at;
    return new;
  end if;
  -- Moving forward: the mark must name a message of this conversation at that position.
  if not exists (
    select 1 from app.messages m
    where m.id = new.last_read_message_id and m.conversation_id = new.conversation_id and m.seq = new.last_read_seq
  ) then
    raise exception 'a read mark names a message of the conversation' using errcode = 'AG422';
  end if;
  new.last_read_at := now();
  return new;
end;
$$;

create function app_private.read_mark_events() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if new.last_read_seq > old.last_read_seq then
    perform app_private.emit_event('conversation:' || new.conversation_id, 'message.read',
      jsonb_build_object('conversationId', new.conversation_id, 'userId', new.user_id,
                         'lastReadMessageId', new.last_read_message_id, 'lastReadSeq', new.last_read_seq));
  end if;
  return null;
end;
$$;

/* Joining and leaving are events on the conversation and, for the person, on their user topic. */
create function app_private.participant_events() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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

create trigger messages_assign_seq before insert on app.messages
  for each row execute function app_private.assign_message_seq();
create trigger messages_guard_update before update on app.messages
  for each row execute function app_private.guard_message_update();
create constraint trigger messages_events after insert or update on app.messages
  deferrable initially deferred
  for each row execute function app_private.message_events();
create trigger participants_guard_read_mark before update on app.conversation_participants
  for each row execute function app_private.guard_read_mark();
create trigger participants_read_mark_events after update of last_read_seq on app.conversation_participants
  for each row execute function app_private.read_mark_events();
create trigger participants_events after insert or delete on app.conversation_participants
  for each row execute function app_private.participant_events();

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy conversations_select_participant on app.conversations for select to authenticated
  using (id in (select app.my_conversation_ids()));

create policy participants_select_participant on app.conversation_participants for select to authenticated
  using (conversation_id in (select app.my_conversation_ids()));
-- A participant moves their own read mark (the guard trigger lets nothing else change).
create policy participants_update_self on app.conversation_participants for update to authenticated
  using (user_id = (select auth.uid())) with check (user_id = (select auth.uid()));

create policy messages_select_participant on app.messages for select to authenticated
  using (conversation_id in (select app.my_conversation_ids()));
create policy messages_insert_participant on app.messages for insert to authenticated
  with check (sender_id = (select auth.uid()) and app.is_participant(conversation_id));
-- Authors edit their own live messages; the edit window is checked by app.edit_message.
create policy messages_update_author on app.messages for update to authenticated
  using (sender_id = (select auth.uid()) and deleted_at is null and (select app.has_role('SUBSCRIBER')))
  with check (sender_id = (select auth.uid()));

create policy message_versions_select_participant on app.message_versions for select to authenticated
  using (message_id in (
    select m.id from app.messages m where m.conversation_id in (select app.my_conversation_ids())
  ));

create policy attachments_select_visible on app.attachments for select to authenticated
  using (
    uploader_id = (select auth.uid())
    or conversation_id in (select app.my_conversation_ids())
  );
create policy attachments_insert_self on app.attachments for insert to authenticated
  with check (uploader_id = (select auth.uid()) and message_id is null and conversation_id is null);
-- Attached once, by the uploader, to a message of theirs (checked by the trigger below).
create policy attachments_update_attach on app.attachments for update to authenticated
  using (uploader_id = (select auth.uid()) and message_id is null)
  with check (uploader_id = (select auth.uid()) and message_id is not null);

-- The caller's topics are computed once per statement, not once per event row.
create policy events_select_readable on app.events for select to authenticated
  using (topic in (select app.readable_topics()));

-- Hosted Realtime (and the local gateway) authorize private-channel joins with this policy.
create policy realtime_messages_select_topic on realtime.messages for select to authenticated
  using (topic = (select realtime.topic()) and (select app.can_read_topic((select realtime.topic()))));

/* An attachment goes only on its uploader's own message, in that message's conversation. */
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
create trigger attachments_guard_update before update on app.attachments
  for each row execute function app_private.guard_attachment_update();

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

revoke all on all tables in schema app_private from public, anon, authenticated;
revoke execute on all functions in schema app_private from public, anon, authenticated;
grant usage on type app.conversation_type to authenticated;

grant select on app.conversations to authenticated;
grant select on app.conversation_participants to authenticated;
grant update (last_read_seq, last_read_message_id, last_read_at) on app.conversation_participants to authenticated;
grant select on app.messages to authenticated;
grant insert (conversation_id, sender_id, content, reply_to_id) on app.messages to authenticated;
grant update (content) on app.messages to authenticated;
grant select on app.message_versions to authenticated;
grant select on app.attachments to authenticated;
grant insert (uploader_id, name, content_type, size, storage_key) on app.attachments to authenticated;
grant update (message_id, conversation_id) on app.attachments to authenticated;
grant select on app.events to authenticated;

grant execute on function app.can_read_topic(text) to authenticated;
grant execute on function app.readable_topics() to authenticated;
grant execute on function app.my_conversation_ids() to authenticated;
grant execute on function app.is_participant(uuid) to authenticated;
grant execute on function app.message_json(app.messages) to authenticated;
grant execute on function app.config_int(text, text, integer) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/*
 * Creates a conversation, or returns the existing direct one between the same two people (from
 * either side; concurrent creations meet on the unique direct_key). Returns the id and whether
 * it was created. security definer: it adds other people as participants, which no policy lets a
 * user do; every rule is checked here explicitly.
 */
create function app.create_conversation(
  conversation_type app.conversation_type,
  participant_ids uuid[],
  conversation_title text default null
) returns table (conversation_id uuid, created boolean)
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  others uuid[];
  max_participants integer := app.config_int('limits', 'groupMaxParticipants', 100);
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
grant execute on function app.create_conversation(app.conversation_type, uuid[], text) to authenticated;

/*
 * The group's creator adds people. security definer for the same reason as create_conversation.
 * Returns the ids actually added (already-present people are skipped).
 */
create function app.add_participants(target_conversation_id uuid, user_ids uuid[]) returns setof uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  conv app.conversations;
  max_participants integer := app.config_int('limits', 'groupMaxParticipants', 100);
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = auth.uid()
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' or conv.created_by is distinct from auth.uid() or not app.has_role('SUBSCRIBER') then
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
    select conv.id, x, auth.uid() from (select distinct unnest(user_ids) as x) ids
    on conflict do nothing
    returning user_id;
end;
$$;
grant execute on function app.add_participants(uuid, uuid[]) to authenticated;

/* The group's creator removes someone; anyone may leave a group. Direct conversations are fixed. */
create function app.remove_participant(target_conversation_id uuid, target_user_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  conv app.conversations;
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = auth.uid()
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' then
    raise exception 'people cannot be removed from a direct conversation' using errcode = 'AG422';
  end if;
  if target_user_id <> auth.uid() and conv.created_by is distinct from auth.uid() then
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
grant execute on function app.remove_participant(uuid, uuid) to authenticated;

/*
 * Sends a message in one call (one round trip for the API): participation (404 otherwise), the
 * idempotency key (the first response again, or 409 for another body), the configured length,
 * the insert (RLS: sender is the caller; the seq trigger checks the reply), and the attachments
 * (the caller's own, not yet attached, else 422). Returns the message as the API shows it.
 * security invoker: every write is the caller's, under RLS.
 */
create function app.send_message(
  target_conversation_id uuid,
  message_content text,
  reply_to uuid default null,
  attachment_ids uuid[] default '{}',
  idempotency_key text default null,
  request_hash text default null
) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
declare
  claim jsonb;
  max_length integer;
  attached integer;
  created app.messages;
  result jsonb;
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
  max_length := app.config_int('limits', 'messageMaxLength', 10000);
  if char_length(message_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  insert into app.messages (conversation_id, sender_id, content, reply_to_id)
  values (target_conversation_id, auth.uid(), message_content, reply_to)
  returning * into created;
  if cardinality(attachment_ids) > 0 then
    update app.attachments a set message_id = created.id, conversation_id = target_conversation_id
    where a.id = any(attachment_ids) and a.uploader_id = auth.uid() and a.message_id is null;
    get diagnostics attached = row_count;
    if attached <> cardinality(attachment_ids) then
      raise exception 'every attachment must be your own upload, not yet attached' using errcode = 'AG422';
    end if;
  end if;
  result := app.message_json(created);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, result);
  end if;
  return result;
end;
$$;
grant execute on function app.send_message(uuid, text, uuid, uuid[], text, text) to authenticated;

/*
 * Edits a message: the author only (RLS), within the configured edit window, never a tombstone.
 * Returns the message JSON.
 */
create function app.edit_message(target_message_id uuid, new_content text) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
declare
  m app.messages;
  window_minutes integer := app.config_int('limits', 'messageEditWindowMinutes', 15);
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
  -- The update re-checks everything under the row lock (RLS: author, not deleted).
  update app.messages set content = new_content where id = m.id and deleted_at is null returning * into m;
  if not found then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  return app.message_json(m);
end;
$$;
grant execute on function app.edit_message(uuid, text) to authenticated;


/*
 * Soft-deletes a message: by its author, the group's creator, or an ADMIN. The content and the
 * attachments go (their files are removed by the API after commit: the returned storage keys);
 * the tombstone keeps its place. security definer: the creator and ADMINs may act on messages
 * that are not theirs, and ADMINs on conversations they cannot read; each case is checked here.
 */
create function app.delete_message(target_message_id uuid)
returns table (conversation_id uuid, deleted_at timestamptz, storage_keys text[])
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  m app.messages;
  conv app.conversations;
  is_participant boolean;
  keys text[];
begin
  select * into m from app.messages where id = target_message_id for update;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  select * into conv from app.conversations c where c.id = m.conversation_id;
  is_participant := exists (
    select 1 from app.conversation_participants p where p.conversation_id = m.conversation_id and p.user_id = auth.uid()
  );
  if not is_participant and not app.is_admin() then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if not (
    (is_participant and m.sender_id = auth.uid() and app.has_role('SUBSCRIBER'))
    or (is_participant and conv.type = 'group' and conv.created_by = auth.uid() and app.has_role('SUBSCRIBER'))
    or app.is_admin()
  ) then
    raise exception 'only the author, the group''s creator or an ADMIN deletes a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    return query select m.conversation_id, m.deleted_at, '{}'::text[];
    return;
  end if;
  with gone as (
    delete from app.attachments a where a.message_id = m.id returning a.storage_key
  ) select coalesce(array_agg(gone.storage_key), '{}') into keys from gone;
  update app.messages set deleted_at = now() where id = m.id returning * into m;
  return query select m.conversation_id, m.deleted_at, keys;
end;
$$;
grant execute on function app.delete_message(uuid) to authenticated;

/*
 * Moves the caller's read watermark forward to a message (never backward). Returns the new
 * watermark and the unread count.
 */
create function app.mark_read(target_message_id uuid)
returns table (conversation_id uuid, last_read_message_id uuid, unread_count bigint)
language plpgsql volatile security invoker
set search_path = ''
as $$
declare
  m app.messages;
  p app.conversation_participants;
begin
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  update app.conversation_participants cp
  set last_read_seq = m.seq, last_read_message_id = m.id, last_read_at = now()
  where cp.conversation_id = m.conversation_id and cp.user_id = auth.uid()
  returning * into p;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  return query select p.conversation_id, p.last_read_message_id, (
    select count(*) from app.messages x
    where x.conversation_id = p.conversation_id and x.seq > p.last_read_seq
      and x.deleted_at is null and x.sender_id is distinct from auth.uid()
  );
end;
$$;
grant execute on function app.mark_read(uuid) to authenticated;

/*
 * Typing: a participant's ephemeral signal, throttled per user and conversation (one per
 * `throttle_ms`; the rest are accepted and dropped). Returns whether it was sent. security
 * definer: it counts in the private rate-limit table; it checks participation first.
 */
create function app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer default 2000)
returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  hits integer;
begin
  if not app.has_role('SUBSCRIBER') or not exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = auth.uid()
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  -- The caller names the throttle (a server setting), but cannot turn it off.
  throttle_ms := least(greatest(throttle_ms, 250), 60000);
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    'typing:' || auth.uid() || ':' || target_conversation_id || ':' || is_typing,
    to_timestamp(floor(extract(epoch from clock_timestamp()) * 1000 / throttle_ms) * throttle_ms / 1000.0),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits into hits;
  if hits > 1 then
    return false;
  end if;
  perform app_private.emit_ephemeral('conversation:' || target_conversation_id, 'typing',
    jsonb_build_object('conversationId', target_conversation_id, 'userId', auth.uid(), 'isTyping', is_typing,
                       'expiresAt', to_char((now() + interval '5 seconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
  return true;
end;
$$;
grant execute on function app.send_typing(uuid, boolean, integer) to authenticated;

/*
 * Idempotency for sends, inside the sender's own transaction. `claim` inserts the key or, when
 * it exists, waits for its first transaction to finish and returns its stored response (or a
 * conflict marker when the body differs). `store` records the response. security definer: the
 * keys live in app_private; both act only on the caller's own keys.
 */
create function app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  existing app_private.idempotency_keys;
begin
  delete from app_private.idempotency_keys k
  where k.user_id = auth.uid() and k.key = idempotency_key and k.created_at < now() - interval '24 hours';
  insert into app_private.idempotency_keys (user_id, key, scope, request_hash)
  values (auth.uid(), idempotency_key, key_scope, body_hash)
  on conflict (user_id, key) do nothing;
  if found then
    return null;
  end if;
  select * into existing from app_private.idempotency_keys k where k.user_id = auth.uid() and k.key = idempotency_key;
  if existing.scope <> key_scope or existing.request_hash <> body_hash then
    return jsonb_build_object('conflict', true);
  end if;
  return jsonb_build_object('response', existing.response);
end;
$$;
grant execute on function app.claim_idempotency_key(text, text, text) to authenticated;

create function app.store_idempotent_response(idempotency_key text, response jsonb) returns void
language sql volatile security definer
set search_path = ''
as $$
  update app_private.idempotency_keys set response = store_idempotent_response.response
  where user_id = auth.uid() and key = idempotency_key
$$;
grant execute on function app.store_idempotent_response(text, jsonb) to authenticated;

/*
 * Display profiles (name, image, role; never email) of the people who share a conversation with
 * the caller. security definer: app.users shows a user only their own row.
 */
create function app.conversation_profiles(conversation_ids uuid[])
returns table (conversation_id uuid, user_id uuid, name text, image text, role app.user_role)
language sql stable security definer
set search_path = ''
as $$
  select p.conversation_id, u.id, u.name, u.image, u.role
  from app.conversation_participants p
  join app.users u on u.id = p.user_id
  where p.conversation_id = any(conversation_ids)
    and p.conversation_id in (select app.my_conversation_ids())
  order by p.conversation_id, p.joined_at, u.id
$$;
grant execute on function app.conversation_profiles(uuid[]) to authenticated;

/* Housekeeping, run by pg_cron: the event log keeps `keep_days` (default 3), keys 24 h. */
create function app_private.prune_events(keep_days integer default 3) returns void
language sql volatile
set search_path = ''
as $$
  delete from app.events where created_at < now() - make_interval(days => keep_days);
  delete from app_private.idempotency_keys where created_at < now() - interval '24 hours';
$$;

select cron.schedule('agora-prune-events', '*/10 * * * *', 'select app_private.prune_events(3)');

-- Deny by default (see the foundation migration): only the explicit grants above stay.
revoke execute on all functions in schema app, app_private from public;
