-- Unread counts in constant time, however far a read mark moves (issue 30).
--
-- A read mark that moves far (the first mark-read in a long group, a mark moved back by a long
-- way, a person joining a long group) counted the live messages it passed one by one: 142 ms for
-- 50,000 of them at the growth benchmark's large size, and the issue's million-message group
-- would take seconds. Live messages are now also counted per conversation in buckets of 1,000
-- seqs, kept by the send and the tombstone (which already serialise on the conversation's row
-- and its participants' rows). A range is then its whole buckets' sums, at most 2 × 999 rows at
-- its two ends, less the reader's own live messages in the whole buckets (an index of each
-- sender's messages by conversation and seq).

create table app_private.message_seq_buckets (
  conversation_id uuid not null references app.conversations (id) on delete cascade,
  bucket bigint not null,
  live integer not null,
  primary key (conversation_id, bucket)
);
comment on table app_private.message_seq_buckets is
  'Live (not tombstoned) messages of a conversation per bucket of 1,000 seqs (bucket = seq / 1000), thread replies included: what app_private.count_unread_between sums instead of counting the messages a read mark passes. Kept by app_private.count_live_message (a send) and app_private.uncount_live_message (a tombstone); messages are never deleted one by one (only with their conversation, which cascades here). Rebuilt by app_private.recount_message_buckets. Server only.';
alter table app_private.message_seq_buckets enable row level security;

-- Each sender's messages by conversation and seq, with whether they are tombstones: the reader's
-- own live messages in a range, from the index alone. It starts with sender_id, so it also serves
-- the foreign key's set null when an account is deleted, in place of the old one-column index.
create index messages_sender_conversation_seq_idx on app.messages (sender_id, conversation_id, seq)
  include (deleted_at);
drop index app.messages_sender_id_idx;

create function app_private.recount_message_buckets() returns bigint
language plpgsql
set search_path = ''
as $$
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
comment on function app_private.recount_message_buckets() is
  'Recounts every bucket of app_private.message_seq_buckets from the messages (run by this migration over the existing messages, and by seeds that insert messages with triggers off). Returns the buckets written. Not for a live system''s hot path: it reads every message.';
revoke all on function app_private.recount_message_buckets() from public;

select app_private.recount_message_buckets();

create function app_private.count_live_message() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  insert into app_private.message_seq_buckets as b (conversation_id, bucket, live)
  values (new.conversation_id, new.seq / 1000, 1)
  on conflict (conversation_id, bucket) do update set live = b.live + 1;
  return null;
end;
$$;
comment on function app_private.count_live_message() is
  'After a live message is inserted: one more in its bucket. Fires before messages_count_unread (trigger names sort so), under the conversation''s row lock the send holds, so a bucket row is always locked before the participants'' rows, as the tombstone does too. security definer: the buckets are server only.';
revoke all on function app_private.count_live_message() from public;

create trigger messages_count_live after insert on app.messages
for each row when (new.deleted_at is null) execute function app_private.count_live_message();

create function app_private.uncount_live_message() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  update app_private.message_seq_buckets b set live = b.live - 1
  where b.conversation_id = new.conversation_id and b.bucket = new.seq / 1000;
  return null;
end;
$$;
comment on function app_private.uncount_live_message() is
  'After a message becomes a tombstone: one fewer live in its bucket. Fires before messages_uncount_unread (trigger names sort so): the bucket row first, then the participants'' rows, the order a send takes them in. security definer: the buckets are server only.';
revoke all on function app_private.uncount_live_message() from public;

create trigger messages_uncount_live after update of deleted_at on app.messages
for each row when (old.deleted_at is null and new.deleted_at is not null)
execute function app_private.uncount_live_message();

create function app_private.count_unread_between(
  conversation uuid, reader uuid, after_seq bigint, upto_seq bigint
) returns bigint
language plpgsql stable
set search_path = ''
as $$
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
comment on function app_private.count_unread_between(uuid, uuid, bigint, bigint) is
  'The messages of a conversation with after_seq < seq <= upto_seq that are live and not the reader''s own: what a read mark moving between the two passes over. Whole buckets of 1,000 seqs come from app_private.message_seq_buckets less the reader''s own live messages (index only); the two partial ends, or a short range, are counted row by row; so the cost is bounded by a few thousand index entries whatever the range. Called by the security definer triggers that keep unread_count; no grants.';
revoke all on function app_private.count_unread_between(uuid, uuid, bigint, bigint) from public;

create or replace function app_private.guard_read_mark() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app_private.guard_read_mark() is
  'Read marks move forward only (back only inside app.mark_unread, which names the row in app.read_mark_back) and name a real message at that position; nothing else of a participant row changes, except the foreign key''s own set null of added_by when that account was deleted. Moves unread_count by the live messages of others the mark passes over (app_private.count_unread_between: bounded cost however far), under the row''s lock. security definer: it reads messages the row''s update may not see.';

create or replace function app_private.start_participant() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app_private.start_participant() is
  'Before a participant row is inserted: its copy of the conversation''s activity, and its unread count (app_private.count_unread_between up to the conversation''s last seq: joining a long group costs a few thousand index entries at most; add_participants holds the conversation''s lock, so no send races it). security definer: it reads messages the new participant may not see yet.';
