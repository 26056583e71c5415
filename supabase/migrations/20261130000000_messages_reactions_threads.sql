-- Replaces functions of other domains:
--   app.message_json (attachments).
/*
 * Reactions and threads on messages (the contract's "Community" section).
 *
 * - app.message_reactions: one row per (message, person, emoji). Counts are never stored: they are
 *   an aggregate over these rows, so 50 people adding the same emoji at once insert 50 rows that
 *   cannot collide (each has its own key) and the count is exact by construction; adding twice is
 *   `on conflict do nothing`, removing one never added deletes nothing. What needs one writer at a
 *   time, per message, is only (a) the limit of 20 distinct emoji and (b) the live event's counts
 *   (each `message.reactions` event must include every change committed before it, and reach
 *   clients, who read events in (xid, id) order, in commit order, so the last one a client sees
 *   is the true state): app.set_reaction takes a transaction-level advisory lock on the message
 *   before its first write and holds it to commit.
 * - app.messages.thread_id: the root of the thread a reply is in (null outside threads). A root
 *   is a message of the same conversation that is not itself in a thread (AG422 otherwise,
 *   checked by the trigger messages_thread_reply, so every insert path obeys it).
 * - app.message_threads: a root's reply count and last reply time, maintained counters. Under
 *   the root's thread row lock: a reply's insert adds one (its trigger runs while the send holds
 *   the conversation's row lock, so replies count in seq order); a reply's deletion takes the
 *   lock first, then subtracts one and reads the newest live reply again in a statement of its
 *   own (so it sees every reply committed before it). Edits change neither. Read by key for every
 *   root in a list, where counting 10,000 replies per root would not do.
 * - A deletion (tombstone) drops the message's reactions; a tombstone keeps its place, threadId
 *   and thread counts.
 * - The message JSON gains threadId, thread and reactions: app.message_object (pure, inlined)
 *   adds threadId and an empty thread and reactions (right for a new message); app.message_json
 *   adds the real ones (app.message_extras) for lists, edits and threads. app.send_message takes
 *   the thread's root; `message.deleted` carries threadId.
 *
 * Nothing destructive: a column, two tables, indexes and triggers are added, functions replaced
 * (the send's two functions with a new parameter: dropped and created again).
 */

-- Tables ---------------------------------------------------------------------------------------

alter table app.messages
  add column thread_id uuid references app.messages (id) on delete cascade;
comment on column app.messages.thread_id is
  'The root message of the thread this reply is in; null for a message outside threads (a root included). Listed only by GET /api/messages/{id}/thread.';

create table app.message_reactions (
  message_id uuid not null references app.messages (id) on delete cascade,
  user_id uuid not null references app.users (id) on delete cascade,
  emoji text not null check (char_length(emoji) between 1 and 32),
  conversation_id uuid not null references app.conversations (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (message_id, user_id, emoji)
);
comment on table app.message_reactions is
  'Who reacted to which message with which emoji: one row each, so counts are an aggregate and exact under any race (no counter to lose an update). conversation_id is the message''s, for the participants'' policy. Written only by app.set_reaction.';

create table app.message_threads (
  root_id uuid primary key references app.messages (id) on delete cascade,
  conversation_id uuid not null references app.conversations (id) on delete cascade,
  reply_count integer not null default 0 check (reply_count >= 0),
  last_reply_at timestamptz
);
comment on table app.message_threads is
  'A thread root''s reply count (live replies) and the time of its newest live reply: counters kept exact under the row''s lock by the reply triggers, so a list shows them by key instead of counting a long thread per root.';

-- Indexes --------------------------------------------------------------------------------------

-- A thread's replies in order: the same cost at its start and its end.
create index messages_thread_id_seq_idx on app.messages (thread_id, seq) where thread_id is not null;
-- A conversation's messages outside threads, newest first, however many replies its threads hold.
create index messages_conversation_id_seq_main_idx on app.messages (conversation_id, seq)
  where thread_id is null;
create index message_reactions_user_id_idx on app.message_reactions (user_id);
create index message_reactions_conversation_id_idx on app.message_reactions (conversation_id);
create index message_threads_conversation_id_idx on app.message_threads (conversation_id);

alter table app.message_reactions enable row level security;
alter table app.message_threads enable row level security;

-- Triggers -------------------------------------------------------------------------------------

create function app_private.count_thread_reply() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app_private.count_thread_reply() is
  'Before a reply in a thread is inserted: checks its root (same conversation, not itself in a thread; AG422) and counts it on the root''s app.message_threads row (its lock serializes the counters). security definer: it writes the counters, which no user may.';

create function app_private.message_tombstoned() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app_private.message_tombstoned() is
  'After a message becomes a tombstone: its reactions go (a tombstone shows none), and a reply is taken off its thread''s counters under the thread row''s lock (the newest live reply read again). Runs once per message: app.delete_message sets deleted_at once, under the message''s row lock. security definer: it writes rows that are not the caller''s.';

create trigger messages_thread_reply before insert on app.messages
  for each row when (new.thread_id is not null) execute function app_private.count_thread_reply();
create trigger messages_tombstoned after update of deleted_at on app.messages
  for each row when (old.deleted_at is null and new.deleted_at is not null)
  execute function app_private.message_tombstoned();

-- Policies and grants --------------------------------------------------------------------------

create policy message_reactions_select_participant on app.message_reactions for select to authenticated
  using (conversation_id in (select app.my_conversation_ids()));
create policy message_threads_select_participant on app.message_threads for select to authenticated
  using (conversation_id in (select app.my_conversation_ids()));

grant select on app.message_reactions to authenticated;
grant select on app.message_threads to authenticated;
grant insert (thread_id) on app.messages to authenticated;

-- The message JSON -----------------------------------------------------------------------------

create or replace function app.message_object(m app.messages, attachments jsonb) returns jsonb
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
    'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'threadId', m.thread_id,
    'thread', null,
    'reactions', '[]'::jsonb
  )
$$;
comment on function app.message_object(app.messages, jsonb) is
  'The message object from its row and its attachments'' JSON, with threadId and an empty thread and reactions (right for a message just sent; app.message_json adds the real ones). Inlinable pure SQL with no pinned search_path on purpose (a pin stops inlining; it reads no table and runs with the caller''s rights): inlined it costs nothing per call in lists and is planned once per session inside plpgsql. The send and the event trigger each read the attachments in a statement of their own and call this.';

create function app.message_reactions_json(target_message_id uuid, viewer uuid) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object('emoji', r.emoji, 'count', r.n, 'me', r.mine)
                            order by r.first_at, r.emoji), '[]'::jsonb)
  from (
    select x.emoji, count(*)::int as n, coalesce(bool_or(x.user_id = viewer), false) as mine,
           min(x.created_at) as first_at
    from app.message_reactions x where x.message_id = target_message_id
    group by x.emoji
  ) r
$$;
comment on function app.message_reactions_json(uuid, uuid) is
  'A message''s reactions as the API shows them, [{ emoji, count, me }], counted from the rows (exact), in the order each emoji first appeared; `me` is whether viewer is among them (false for everyone when viewer is null, as in events). security invoker: RLS shows participants only.';

create function app.message_extras(m app.messages, viewer uuid) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
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
comment on function app.message_extras(app.messages, uuid) is
  'The parts of the message JSON read from other tables: thread (replyCount and lastReplyAt of live replies, null without any) and reactions (none on a tombstone), `me` for viewer. Merged over app.message_object by app.message_json and the update event. security invoker: RLS shows participants only.';

create or replace function app.message_json(m app.messages) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
  select app.message_object(m, (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id)
    from app.attachments a where a.message_id = m.id
  )) || app.message_extras(m, (select auth.uid()))
$$;
comment on function app.message_json(app.messages) is
  'The message as the API shows it, attachments, thread counts and reactions (`me` for the caller) read here. For list queries, where it is planned once per query. security invoker: a user sees only what RLS shows them.';

-- Events ---------------------------------------------------------------------------------------

create or replace function app_private.message_events() returns trigger
language plpgsql security definer
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
                         'deletedAt', to_char(current.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                         'threadId', current.thread_id));
  elsif current.content <> old.content then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.updated',
      app.message_object(current, files) || app.message_extras(current, null));
  end if;
  return null;
end;
$$;
comment on function app_private.message_events() is
  'Durable message.created, message.updated and message.deleted events, emitted at commit (a deferred constraint trigger) so the payload is complete, attachments included; they are read here as the trigger''s owner. An update''s payload carries the thread counts and reactions with `me` false (it goes to every participant); a deletion''s carries threadId.';

-- Reactions ------------------------------------------------------------------------------------

create function app.set_reaction(target_message_id uuid, reaction text, present boolean) returns jsonb
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app.set_reaction(uuid, text, boolean) is
  'Adds (present) or removes the caller''s reaction: participants at least SUBSCRIBER (AG404 otherwise, as for other messages), never on a tombstone (AG422; removing answers no reactions), up to 20 distinct emoji (AG422). Idempotent both ways; a change emits message.reactions on the conversation (counts without `me`). Returns { messageId, reactions } for the caller. security definer: it locks the message row, which RLS lets only its author do, and writes the reactions table, which has no user grants; it checks participation itself.';

create function app_private.set_reaction_as(claims text, target_message_id uuid, reaction text, present boolean)
returns jsonb
language plpgsql
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.set_reaction(target_message_id, reaction, present);
end;
$$;
comment on function app_private.set_reaction_as(text, uuid, text, boolean) is
  'A reaction in one statement, for the hot path (as app_private.send_message_as for sends): sets the caller''s role and claims for this statement''s own transaction and runs app.set_reaction, so its per-message lock is held only until the commit that follows at once on the server, never across a round trip. Only the API''s own role may call it: it trusts the claims it is given.';

-- The send -------------------------------------------------------------------------------------

drop function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text);
drop function app.send_message(uuid, text, uuid, uuid[], text, text);

create function app.send_message(
  target_conversation_id uuid, message_content text, reply_to uuid default null,
  attachment_ids uuid[] default '{}', idempotency_key text default null,
  request_hash text default null, thread_root uuid default null
) returns jsonb
language plpgsql
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
  -- Two statements, so each keeps one plan (a null thread_root is folded into the other).
  if thread_root is null then
    insert into app.messages (conversation_id, sender_id, content, reply_to_id)
    values (target_conversation_id, me, message_content, reply_to)
    returning * into created;
  else
    insert into app.messages (conversation_id, sender_id, content, reply_to_id, thread_id)
    values (target_conversation_id, me, message_content, reply_to, thread_root)
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
comment on function app.send_message(uuid, text, uuid, uuid[], text, text, uuid) is
  'Sends a message in one call: participation (AG404 otherwise), the idempotency key (the first response again, AG409 for another body), the configured length, the insert (RLS: the sender is the caller; the seq trigger checks the reply, the thread trigger the thread''s root: AG422) and the attachments (the caller''s own, not yet attached, else AG422). Returns the message as the API shows it. security invoker: every write is the caller''s, under RLS.';
grant execute on function app.send_message(uuid, text, uuid, uuid[], text, text, uuid) to authenticated;

create function app_private.send_message_as(
  claims text, target_conversation_id uuid, message_content text, reply_to uuid,
  attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid
) returns jsonb
language plpgsql
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash, thread_root);
end;
$$;
comment on function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text, uuid) is
  'A send in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.send_message under them (RLS as always), so the commit follows at once on the server and the conversation''s row lock is never held across a round trip to the API. Only the API''s own role may call it: it trusts the claims it is given.';

grant execute on function app.message_reactions_json(uuid, uuid) to authenticated;
grant execute on function app.message_extras(app.messages, uuid) to authenticated;
grant execute on function app.set_reaction(uuid, text, boolean) to authenticated;

revoke execute on all functions in schema app, app_private from public;
