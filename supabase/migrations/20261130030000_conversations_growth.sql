-- Replaces functions of other domains:
--   app.can_read_topic (events), app.mark_read (messages).
/*
 * Messaging at a year's size (issue 30): every read of a conversation list, a read mark, a topic
 * check and a policy costs what its page costs, however many conversations the caller is in and
 * however long a conversation is. docs/conversations.md says why.
 *
 * - app.conversation_participants gains two maintained columns:
 *   - last_activity_at: the conversation's own last_activity_at, copied onto every participant's
 *     row (by the send's trigger, and by a trigger on a direct update of the conversation), so
 *     the list reads one page of the caller's rows through an index on
 *     (user_id, last_activity_at desc, conversation_id desc) instead of joining and sorting all.
 *   - unread_count: today's unread count kept exact by the writes: the messages after the
 *     participant's read mark that are not tombstones and not their own. +1 for the others on a
 *     send (messages_count_unread), -1 for those who had it unread when it becomes a tombstone
 *     (messages_uncount_unread), and moved by the read mark's own guard trigger by the messages it
 *     passes over (or recounted above the mark when that is fewer), under the participant row's
 *     lock with a fresh snapshot, so racing sends, deletions and marks stay exact.
 *   The send itself (app.send_message) is unchanged: the counters are kept by triggers on
 *   app.messages, whatever function inserts.
 * - app.mark_unread: PUT /api/conversations/:id/unread moves the caller's mark back to just
 *   before a message (the guard lets a mark move back only inside it).
 * - Policies on conversations, participants, messages, message versions and attachments check
 *   the membership of the row's own conversation (an EXISTS on the primary key, or
 *   app.is_participant) instead of building the caller's whole set (app.my_conversation_ids()).
 * - app.conversation_profiles checks membership per conversation; app.search_my_conversations
 *   finds the caller's conversations matching a search through the trigram indexes of names and
 *   titles (or, when the term is common, walks the caller's conversations by activity).
 * - app.readable_topics_among: the topic rule applied to given topics only (the SSE and
 *   long-poll check every 15 s, and app.can_read_topic), not to every topic the caller may read.
 *
 * Tables touched: app.conversation_participants (two columns, backfilled once; an index
 * replaces conversation_participants_user_id_idx), app.conversations (a trigram index on titles).
 * Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Maintained columns of participant rows
-- ---------------------------------------------------------------------------------------------

alter table app.conversation_participants
  add column unread_count integer not null default 0,
  add column last_activity_at timestamptz;

comment on column app.conversation_participants.unread_count is
  'The messages of the conversation after last_read_seq that are not tombstones and not this participant''s own: a counter kept exact by the triggers of app.messages and the read mark''s guard (docs/conversations.md).';
comment on column app.conversation_participants.last_activity_at is
  'A copy of the conversation''s last_activity_at, kept by triggers, so a user''s conversations are listed newest activity first from one index.';

-- The guard now fires only when the read mark or a column that must not change is set, so the
-- counters' own updates (unread_count, last_activity_at) pass without it.
drop trigger participants_guard_read_mark on app.conversation_participants;

update app.conversation_participants p
set last_activity_at = c.last_activity_at,
    unread_count = (
      select count(*) from app.messages m
      where m.conversation_id = p.conversation_id and m.seq > p.last_read_seq
        and m.deleted_at is null and m.sender_id is distinct from p.user_id)
from app.conversations c
where c.id = p.conversation_id;

alter table app.conversation_participants alter column last_activity_at set not null;

drop index app.conversation_participants_user_id_idx;
create index conversation_participants_user_activity_idx
  on app.conversation_participants (user_id, last_activity_at desc, conversation_id desc);

-- ---------------------------------------------------------------------------------------------
-- The read mark's guard: forward only (back only through app.mark_unread), and the counter
-- ---------------------------------------------------------------------------------------------

create or replace function app_private.guard_read_mark() returns trigger
language plpgsql security definer set search_path = '' as $$
declare
  last_seq bigint;
  passed bigint;
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
    select c.last_seq into last_seq from app.conversations c where c.id = new.conversation_id;
    if new.last_read_seq - old.last_read_seq <= last_seq - new.last_read_seq then
      select count(*) into passed from app.messages m
      where m.conversation_id = new.conversation_id
        and m.seq > old.last_read_seq and m.seq <= new.last_read_seq
        and m.deleted_at is null and m.sender_id is distinct from new.user_id;
      new.unread_count := old.unread_count - passed;
    else
      -- Fewer messages above the new mark than passed over: count those instead.
      select count(*) into new.unread_count from app.messages m
      where m.conversation_id = new.conversation_id and m.seq > new.last_read_seq
        and m.deleted_at is null and m.sender_id is distinct from new.user_id;
    end if;
  else
    select count(*) into passed from app.messages m
    where m.conversation_id = new.conversation_id
      and m.seq > new.last_read_seq and m.seq <= old.last_read_seq
      and m.deleted_at is null and m.sender_id is distinct from new.user_id;
    new.unread_count := old.unread_count + passed;
  end if;
  new.last_read_at := now();
  return new;
end;
$$;

comment on function app_private.guard_read_mark() is
  'Read marks move forward only (back only inside app.mark_unread, which names the row in app.read_mark_back) and name a real message at that position; nothing else of a participant row changes, except the foreign key''s own set null of added_by when that account was deleted. Moves unread_count by the messages the mark passes over (or recounts those above the new mark when fewer), under the row''s lock. security definer: it reads messages the row''s update may not see.';

create trigger participants_guard_read_mark
  before update of conversation_id, user_id, added_by, joined_at, last_read_seq, last_read_message_id, last_read_at
  on app.conversation_participants
  for each row execute function app_private.guard_read_mark();

-- A new participant: the conversation's activity, and today's unread count from a mark at 0
-- (every live message of the others; someone who left and comes back gets their own excluded).
create function app_private.start_participant() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  select c.last_activity_at into new.last_activity_at from app.conversations c where c.id = new.conversation_id;
  select count(*) into new.unread_count from app.messages m
  where m.conversation_id = new.conversation_id and m.seq > new.last_read_seq
    and m.deleted_at is null and m.sender_id is distinct from new.user_id;
  return new;
end;
$$;

comment on function app_private.start_participant() is
  'Before a participant row is inserted: its copy of the conversation''s activity, and its unread count counted once (joining a long group costs one count; add_participants holds the conversation''s lock, so no send races it). security definer: it reads messages the new participant may not see yet.';

revoke all on function app_private.start_participant() from public;

create trigger participants_start before insert on app.conversation_participants
  for each row execute function app_private.start_participant();

-- ---------------------------------------------------------------------------------------------
-- The send and the tombstone keep the counters
-- ---------------------------------------------------------------------------------------------

create function app_private.count_unread_message() returns trigger
language plpgsql security definer set search_path = '' as $$
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

comment on function app_private.count_unread_message() is
  'After a message is inserted: one more unread for every other participant, and the conversation''s new activity on every participant''s row (one update per participant, under the conversation''s row lock the send already holds). security definer: it writes other people''s rows.';

revoke all on function app_private.count_unread_message() from public;

create trigger messages_count_unread after insert on app.messages
  for each row execute function app_private.count_unread_message();

create function app_private.uncount_unread_message() returns trigger
language plpgsql security definer set search_path = '' as $$
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

comment on function app_private.uncount_unread_message() is
  'After a message becomes a tombstone: one unread fewer for the other participants whose mark is still before it (their rows locked first, then the marks read afresh, so a racing read mark, forward or back, is counted once). A tombstone is final (app_private.guard_message_update), so this runs once per message. security definer: it writes other people''s rows.';

revoke all on function app_private.uncount_unread_message() from public;

-- Named to run after messages_tombstoned (threads, on branch community-reactions), so a deletion
-- takes a thread's row before the participants' rows, in the order a reply's send takes them.
create trigger messages_uncount_unread after update of deleted_at on app.messages
  for each row when (old.deleted_at is null and new.deleted_at is not null)
  execute function app_private.uncount_unread_message();

-- A conversation's activity set directly (not by a send, whose trigger copies it itself).
create function app_private.copy_conversation_activity() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  perform 1 from app.conversation_participants x
  where x.conversation_id = new.id order by x.user_id for no key update;
  update app.conversation_participants p
  set last_activity_at = new.last_activity_at
  where p.conversation_id = new.id;
  return null;
end;
$$;

comment on function app_private.copy_conversation_activity() is
  'When a conversation''s last_activity_at is set other than by a send (trusted server paths, tests), its participants'' copies follow. A send''s own update (inside app_private.assign_message_seq, trigger depth 1) is left to messages_count_unread, which copies it with the counter in one update. security definer: it writes every participant''s row.';

revoke all on function app_private.copy_conversation_activity() from public;

create trigger conversations_copy_activity after update of last_activity_at on app.conversations
  for each row when (pg_trigger_depth() = 0 and new.last_activity_at is distinct from old.last_activity_at)
  execute function app_private.copy_conversation_activity();

-- ---------------------------------------------------------------------------------------------
-- Mark unread from a message (PUT /api/conversations/:id/unread)
-- ---------------------------------------------------------------------------------------------

create function app.mark_unread(target_conversation_id uuid, from_message_id uuid)
returns table (conversation_id uuid, last_read_message_id uuid, unread_count bigint)
language plpgsql set search_path = '' as $$
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

comment on function app.mark_unread(target_conversation_id uuid, from_message_id uuid) is
  'Moves the caller''s read mark back to just before a message of the conversation (the previous message, or nothing before the first), so that message and the later ones are unread again; a mark already before it stays. AG404 when the caller is not a participant or cannot see the message, AG422 for a message of another conversation. Returns the mark and the unread count. security invoker: RLS decides which rows the caller reaches; the guard lets the mark move back only for the row named in app.read_mark_back.';

revoke all on function app.mark_unread(uuid, uuid) from public;
grant execute on function app.mark_unread(uuid, uuid) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- mark_read returns the counter
-- ---------------------------------------------------------------------------------------------

create or replace function app.mark_read(target_message_id uuid)
returns table (conversation_id uuid, last_read_message_id uuid, unread_count bigint)
language plpgsql set search_path = '' as $$
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

comment on function app.mark_read(target_message_id uuid) is
  'Moves the caller''s read watermark forward to a message (never backward; the guard trigger keeps the later mark) and returns it with the unread count (the row''s maintained counter, moved by the guard by the messages passed over). security invoker: RLS decides which message and row the caller reaches.';

-- ---------------------------------------------------------------------------------------------
-- Policies: the membership of the row's own conversation
-- ---------------------------------------------------------------------------------------------
-- `offset 0` keeps each `exists` a probe of the participants' primary key per row: without it
-- the planner may turn it into a hash of all the caller's memberships, and inside a per-row
-- subquery (a list's last message, a message's attachments) that hash is built again per row.

drop policy participants_select_participant on app.conversation_participants;
create policy participants_select_participant on app.conversation_participants
  for select to authenticated
  using ((select app.has_role('SUBSCRIBER'))
         and (user_id = (select auth.uid()) or app.is_participant(conversation_id)));

drop policy conversations_select_participant on app.conversations;
create policy conversations_select_participant on app.conversations
  for select to authenticated
  using ((select app.has_role('SUBSCRIBER')) and exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = conversations.id and p.user_id = (select auth.uid()) offset 0));

drop policy messages_select_participant on app.messages;
create policy messages_select_participant on app.messages
  for select to authenticated
  using ((select app.has_role('SUBSCRIBER')) and exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = messages.conversation_id and p.user_id = (select auth.uid()) offset 0));

drop policy message_versions_select_participant on app.message_versions;
create policy message_versions_select_participant on app.message_versions
  for select to authenticated
  using (exists (select 1 from app.messages m where m.id = message_versions.message_id));

drop policy attachments_select_visible on app.attachments;
create policy attachments_select_visible on app.attachments
  for select to authenticated
  using (uploader_id = (select auth.uid())
         or ((select app.has_role('SUBSCRIBER')) and exists (
           select 1 from app.conversation_participants p
           where p.conversation_id = attachments.conversation_id and p.user_id = (select auth.uid()) offset 0)));

-- ---------------------------------------------------------------------------------------------
-- Profiles and the list's search
-- ---------------------------------------------------------------------------------------------

create or replace function app.conversation_profiles(conversation_ids uuid[])
returns table (conversation_id uuid, user_id uuid, name text, image text, role app.user_role)
language sql stable security definer set search_path = '' as $$
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

comment on function app.conversation_profiles(conversation_ids uuid[]) is
  'Display profiles (name, image, role; never e-mail) of the people who share a conversation with the caller, for the given conversations (membership checked per conversation by primary key, so the cost follows the page). security definer: app.users shows a user only their own row.';

create index conversations_title_search_idx on app.conversations
  using gin (lower(title) extensions.gin_trgm_ops) where title is not null;

create function app.search_my_conversations(
  pattern text,
  conversation_type app.conversation_type default null,
  after_activity timestamptz default null,
  after_id uuid default null,
  max_rows integer default 51
) returns table (conversation_id uuid)
language plpgsql stable security definer set search_path = '' as $$
declare
  me uuid := auth.uid();
  cap constant integer := 1000;
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
    -- A rare term: the caller's rows among those few (a primary-key probe each), newest first.
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

comment on function app.search_my_conversations(text, app.conversation_type, timestamptz, uuid, integer) is
  'The ids of a page of the caller''s conversations whose title or another participant''s name is like the pattern (lowercase, `%` around), newest activity first, after the (activity, id) given. A term matching at most 1,000 participations and titles is found through the trigram indexes of names and titles; a commoner one walks the caller''s conversations newest first until the page is full. security definer: it reads other people''s names and memberships; it returns only the caller''s own conversations.';

revoke all on function app.search_my_conversations(text, app.conversation_type, timestamptz, uuid, integer) from public;
grant execute on function app.search_my_conversations(text, app.conversation_type, timestamptz, uuid, integer) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- The topic rule for given topics
-- ---------------------------------------------------------------------------------------------

create function app.readable_topics_among(candidates text[]) returns setof text
language plpgsql stable security definer set search_path = '' as $_$
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

comment on function app.readable_topics_among(candidates text[]) is
  'The topic rule of app.readable_topics applied to the given topics only: those among them the caller may read now (each checked by key: their own user topic, admin for ADMINs, a conversation they take part in, a vendor they own; a live session and SUBSCRIBER or above first). For the SSE and long-poll topic check and app.can_read_topic, whose cost then follows the topics asked for, not the caller''s memberships. pgTAP checks it agrees with app.readable_topics. security definer as app.readable_topics.';

revoke all on function app.readable_topics_among(text[]) from public;
grant execute on function app.readable_topics_among(text[]) to authenticated;

create or replace function app.can_read_topic(topic text) returns boolean
language plpgsql stable security definer set search_path = '' as $$
begin
  return exists (select 1 from app.readable_topics_among(array[topic]) t);
end;
$$;

comment on function app.can_read_topic(topic text) is
  'Whether the caller may read one realtime topic: app.readable_topics_among of that one topic (the rule of app.readable_topics, checked by key), so one rule serves every transport.';
