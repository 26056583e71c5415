/*
 * Messages and their versions: sending (one statement for the API's hot path), editing within the
 * configured window, deleting into tombstones, read marks, typing, the events all of it emits, and
 * the messaging figures of the admin analytics.
 *
 * Ordering: messages carry `seq`, a per-conversation counter taken from the conversation row while
 * the sender's transaction holds that row's lock until commit, so within a conversation seq order
 * is commit order and `after=<message>` catch-up never skips a message committed late.
 *
 * Tables: app.messages, app.message_versions. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

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
comment on table app.messages is
  'Messages in per-conversation commit order (seq). A deleted message is a tombstone: content empty, attachments gone, place kept. The check''s 10000 is the hard ceiling; limits.messageMaxLength may be lower.';

create table app.message_versions (
  id bigint generated always as identity primary key,
  message_id uuid not null references app.messages (id) on delete cascade,
  content text not null,
  written_at timestamptz not null,
  replaced_at timestamptz not null default now()
);
comment on table app.message_versions is
  'Earlier contents of edited messages: the history an edit must not erase.';

create index messages_sender_id_idx on app.messages (sender_id);
-- Only replies need the index (it serves the foreign key's `on delete set null`).
create index messages_reply_to_id_idx on app.messages (reply_to_id) where reply_to_id is not null;
-- Rows arrive in time order: a tiny range index serves analytics ranges.
create index messages_created_at_brin on app.messages using brin (created_at);
create index message_versions_message_id_idx on app.message_versions (message_id);

alter table app.messages enable row level security;
alter table app.message_versions enable row level security;

-- ---------------------------------------------------------------------------------------------
-- The message as the API shows it
-- ---------------------------------------------------------------------------------------------

create function app.message_object(m app.messages, attachments jsonb) returns jsonb
language sql stable
as $$
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
    'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;
comment on function app.message_object(app.messages, jsonb) is
  'The message object from its row and its attachments'' JSON. Inlinable pure SQL with no pinned search_path on purpose (a pin stops inlining; it reads no table and runs with the caller''s rights): inlined it costs nothing per call in lists and is planned once per session inside plpgsql. The send and the event trigger each read the attachments in a statement of their own and call this.';

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.assign_message_seq() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
comment on function app_private.assign_message_seq() is
  'A new message takes the next seq from its conversation; the update holds the conversation row''s lock until commit, so seq order is commit order within the conversation. Also checks a reply points into the same conversation.';

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
comment on function app_private.guard_message_update() is
  'Message edits keep the earlier version in app.message_versions; users change content only, within the configured edit window and length, never on a tombstone. Deletion (deleted_at set) empties the content.';

create function app_private.message_events() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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
                         'deletedAt', to_char(current.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')));
  elsif current.content <> old.content then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.updated',
      app.message_object(current, files));
  end if;
  return null;
end;
$$;
comment on function app_private.message_events() is
  'Durable message.created, message.updated and message.deleted events, emitted at commit (a deferred constraint trigger) so the payload is complete, attachments included; they are read here as the trigger''s owner.';

create trigger messages_assign_seq before insert on app.messages
  for each row execute function app_private.assign_message_seq();
create trigger messages_guard_update before update on app.messages
  for each row execute function app_private.guard_message_update();
create constraint trigger messages_events after insert or update on app.messages
  deferrable initially deferred
  for each row execute function app_private.message_events();

-- ---------------------------------------------------------------------------------------------
-- Policies and grants
-- ---------------------------------------------------------------------------------------------

create policy messages_select_participant on app.messages for select to authenticated
  using (conversation_id in (select app.my_conversation_ids()));
create policy messages_insert_participant on app.messages for insert to authenticated
  with check (sender_id = (select auth.uid()) and app.is_participant(conversation_id));
-- Authors edit their own live messages; the edit window is checked by the guard trigger.
create policy messages_update_author on app.messages for update to authenticated
  using (sender_id = (select auth.uid()) and deleted_at is null and (select app.has_role('SUBSCRIBER')))
  with check (sender_id = (select auth.uid()));

create policy message_versions_select_participant on app.message_versions for select to authenticated
  using (message_id in (
    select m.id from app.messages m where m.conversation_id in (select app.my_conversation_ids())
  ));

grant select on app.messages to authenticated;
grant insert (conversation_id, sender_id, content, reply_to_id) on app.messages to authenticated;
grant update (content) on app.messages to authenticated;
grant select on app.message_versions to authenticated;
grant execute on function app.message_object(app.messages, jsonb) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

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
  me uuid := auth.uid();
  claim jsonb;
  max_length integer;
  attached integer;
  created app.messages;
  files jsonb;
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
  max_length := app.config_int('limits', 'messageMaxLength');
  if char_length(message_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  insert into app.messages (conversation_id, sender_id, content, reply_to_id)
  values (target_conversation_id, me, message_content, reply_to)
  returning * into created;
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
comment on function app.send_message(uuid, text, uuid, uuid[], text, text) is
  'Sends a message in one call: participation (AG404 otherwise), the idempotency key (the first response again, AG409 for another body), the configured length, the insert (RLS: the sender is the caller; the seq trigger checks the reply) and the attachments (the caller''s own, not yet attached, else AG422). Returns the message as the API shows it. security invoker: every write is the caller''s, under RLS.';
grant execute on function app.send_message(uuid, text, uuid, uuid[], text, text) to authenticated;

create function app_private.send_message_as(
  claims text,
  target_conversation_id uuid,
  message_content text,
  reply_to uuid,
  attachment_ids uuid[],
  idempotency_key text,
  request_hash text
) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash);
end;
$$;
comment on function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text) is
  'A send in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.send_message under them (RLS as always), so the commit follows at once on the server and the conversation''s row lock is never held across a round trip to the API. Only the API''s own role may call it: it trusts the claims it is given.';
revoke all on function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text)
  from public, anon, authenticated, service_role;

create function app.edit_message(target_message_id uuid, new_content text) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
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
comment on function app.edit_message(uuid, text) is
  'Edits a message: the author only (AG403 otherwise), within the configured edit window and length (the same limit as sends), never a tombstone. Returns the message JSON. security invoker: RLS decides.';
grant execute on function app.edit_message(uuid, text) to authenticated;

create function app.delete_message(target_message_id uuid)
returns table (conversation_id uuid, deleted_at timestamptz)
language plpgsql volatile security definer
set search_path = ''
as $$
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
comment on function app.delete_message(uuid) is
  'Soft-deletes a message into a tombstone: by its author, the group''s creator, or an ADMIN. The content and the attachments go (the attachments'' delete trigger queues their files'' removal as storage.delete jobs). security definer: the creator and ADMINs act on messages that are not theirs, ADMINs even in conversations they cannot read; each case is checked here.';
grant execute on function app.delete_message(uuid) to authenticated;

create function app.mark_read(target_message_id uuid)
returns table (conversation_id uuid, last_read_message_id uuid, unread_count bigint)
language plpgsql volatile security invoker
set search_path = ''
as $$
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
  return query select p.conversation_id, p.last_read_message_id, (
    select count(*) from app.messages x
    where x.conversation_id = p.conversation_id and x.seq > p.last_read_seq
      and x.deleted_at is null and x.sender_id is distinct from me
  );
end;
$$;
comment on function app.mark_read(uuid) is
  'Moves the caller''s read watermark forward to a message (never backward; the guard trigger keeps the later mark) and returns it with the unread count. security invoker: RLS decides which message and row the caller reaches.';
grant execute on function app.mark_read(uuid) to authenticated;

create function app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer default 2000)
returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
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
comment on function app.send_typing(uuid, boolean, integer) is
  'A participant''s ephemeral typing signal, throttled per user, conversation and state (one per throttle_ms, at least 250; the rest are accepted and dropped). Returns whether it was sent. security definer: it counts in the private rate-limit table; it checks participation first.';
grant execute on function app.send_typing(uuid, boolean, integer) to authenticated;

create function app.admin_messaging_stats(bucket text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
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
  messages as (
    select date_trunc(bucket, m.created_at, 'UTC') as t, count(*)::int as n, count(distinct m.sender_id)::int as senders
    from app.messages m where m.created_at >= range_from and m.created_at < range_to group by 1
  ),
  conversations as (
    select date_trunc(bucket, c.created_at, 'UTC') as t, count(*)::int as n
    from app.conversations c where c.created_at >= range_from and c.created_at < range_to group by 1
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'conversations', (select count(*) from app.conversations),
      'messages', (select count(*) from app.messages where deleted_at is null)
    ),
    'messages', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(m.n, 0)) order by b.t)
                 from buckets b left join messages m on m.t = b.t),
    'activeSenders', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(m.senders, 0)) order by b.t)
                      from buckets b left join messages m on m.t = b.t),
    'conversationsCreated', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(c.n, 0)) order by b.t)
                             from buckets b left join conversations c on c.t = b.t)
  ) into result;
  return result;
end;
$$;
comment on function app.admin_messaging_stats(text, timestamptz, timestamptz) is
  'Messages, active senders and new conversations per interval, zero-filled, with totals: counts only, never content. security definer because ADMINs cannot read conversations they are not in, yet the platform''s figures count them all; it checks the caller is an ADMIN and returns aggregates only.';
grant execute on function app.admin_messaging_stats(text, timestamptz, timestamptz) to authenticated;

revoke execute on all functions in schema app, app_private from public;
