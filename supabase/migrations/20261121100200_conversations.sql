/*
 * Conversations and participants: direct (two people, one per pair) and group conversations,
 * who takes part in each and how far each has read (a watermark that only moves forward), and
 * the membership helpers every messaging policy uses.
 *
 * Tables: app.conversations, app.conversation_participants. Nothing destructive.
 */

create type app.conversation_type as enum ('direct', 'group');
comment on type app.conversation_type is 'Direct: exactly two people, one per pair. Group: a titled set with a creator.';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

/*
 * Every sent message updates its conversation (last_seq, last_activity_at): nothing indexes those
 * columns and pages keep room (fillfactor 70), so that update is HOT and rewrites no index.
 */
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
) with (fillfactor = 70);
comment on table app.conversations is
  'Direct and group conversations. last_seq hands out message numbers under the row''s lock (commit order within a conversation); direct_key keeps one direct conversation per pair. Unindexed activity columns and fillfactor 70 keep the per-message update HOT.';

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
comment on table app.conversation_participants is
  'Who takes part in a conversation, and each one''s read watermark (only moves forward).';

create index conversations_created_by_idx on app.conversations (created_by);
create index conversation_participants_user_id_idx on app.conversation_participants (user_id, conversation_id);
create index conversation_participants_added_by_idx on app.conversation_participants (added_by);

alter table app.conversations enable row level security;
alter table app.conversation_participants enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

create function app.my_conversation_ids() returns setof uuid
language plpgsql stable security definer
set search_path = ''
as $$
begin
  -- plpgsql keeps its plan across calls (see app.has_role).
  if app.has_role('SUBSCRIBER') then
    return query
      select p.conversation_id from app.conversation_participants p where p.user_id = (select auth.uid());
  end if;
end;
$$;
comment on function app.my_conversation_ids() is
  'The conversations the current user takes part in and may use (an active user of at least SUBSCRIBER; a participant demoted to VISITOR or suspended sees nothing until reinstated). security definer so policies on the participants table can use it without recursing into their own policies; it returns only the caller''s memberships.';

create function app.is_participant(target_conversation_id uuid) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = (select auth.uid())
  ) and app.has_role('SUBSCRIBER');
end;
$$;
comment on function app.is_participant(uuid) is
  'Whether the current user takes part in one conversation (and may use it): one primary-key lookup, cheaper than the whole set for single-conversation checks. security definer as app.my_conversation_ids.';

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

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
comment on function app_private.guard_read_mark() is
  'Read marks move forward only and name a real message at that position; nothing else of a participant row changes. security definer: it reads messages the row''s update may not see.';

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
comment on function app_private.read_mark_events() is
  'Each forward move of a read mark is a message.read event for the other participants.';

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
comment on function app_private.participant_events() is
  'Joining and leaving are events on the conversation and, for the person, on their user topic (so a client learns of new conversations live).';

create trigger participants_guard_read_mark before update on app.conversation_participants
  for each row execute function app_private.guard_read_mark();
create trigger participants_read_mark_events after update of last_read_seq on app.conversation_participants
  for each row execute function app_private.read_mark_events();
create trigger participants_events after insert or delete on app.conversation_participants
  for each row execute function app_private.participant_events();

-- ---------------------------------------------------------------------------------------------
-- Policies and grants
-- ---------------------------------------------------------------------------------------------

create policy conversations_select_participant on app.conversations for select to authenticated
  using (id in (select app.my_conversation_ids()));

create policy participants_select_participant on app.conversation_participants for select to authenticated
  using (conversation_id in (select app.my_conversation_ids()));
-- A participant moves their own read mark (the guard trigger lets nothing else change).
create policy participants_update_self on app.conversation_participants for update to authenticated
  using (user_id = (select auth.uid())) with check (user_id = (select auth.uid()));

grant usage on type app.conversation_type to authenticated;
grant select on app.conversations to authenticated;
grant select on app.conversation_participants to authenticated;
grant update (last_read_seq, last_read_message_id, last_read_at) on app.conversation_participants to authenticated;
grant execute on function app.my_conversation_ids() to authenticated;
grant execute on function app.is_participant(uuid) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

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
comment on function app.create_conversation(app.conversation_type, uuid[], text) is
  'Creates a conversation, or returns the existing direct one between the same two people (from either side; concurrent creations meet on the unique direct_key). Returns the id and whether it was created. security definer: it adds other people as participants, which no policy lets a user do; every rule is checked here.';
grant execute on function app.create_conversation(app.conversation_type, uuid[], text) to authenticated;

create function app.add_participants(target_conversation_id uuid, user_ids uuid[]) returns setof uuid
language plpgsql volatile security definer
set search_path = ''
as $$
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
comment on function app.add_participants(uuid, uuid[]) is
  'The group''s creator adds people (the conversation row lock serializes additions against the size limit). Returns the ids actually added; people already in are skipped. security definer as app.create_conversation.';
grant execute on function app.add_participants(uuid, uuid[]) to authenticated;

create function app.remove_participant(target_conversation_id uuid, target_user_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
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
comment on function app.remove_participant(uuid, uuid) is
  'The group''s creator removes someone; anyone may leave a group; direct conversations are fixed. A creator who leaves hands the group to the longest-standing participant; an empty group is removed. security definer as app.create_conversation.';
grant execute on function app.remove_participant(uuid, uuid) to authenticated;

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
comment on function app.conversation_profiles(uuid[]) is
  'Display profiles (name, image, role; never e-mail) of the people who share a conversation with the caller. security definer: app.users shows a user only their own row.';
grant execute on function app.conversation_profiles(uuid[]) to authenticated;

revoke execute on all functions in schema app, app_private from public;
