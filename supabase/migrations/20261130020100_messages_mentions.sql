-- Replaces functions of other domains:
--   app.message_json (attachments).
/*
 * Mentions, and blocks on the send path (the contract's "Community" section).
 *
 * - app.messages.mention_ids: the participants a message mentions (at most 50, each once, in the
 *   order given). The message JSON shows them as `mentions` (none on a tombstone).
 * - Trigger messages_mentions (after insert, only for a message that mentions someone): every
 *   mentioned user is a participant of the conversation (AG422 otherwise), and each of them but
 *   the sender gets a MESSAGE notification with data.kind = "mention" through the one
 *   notification path (app_private.notify_many → notify_rows, which drops it for a recipient who
 *   muted the conversation or blocks the sender: 20261130020000_conversations_mute_block.sql).
 * - Trigger messages_guard_block (before insert): a message into a direct conversation whose
 *   other participant blocks the sender is refused (AG403 hint blocked), whatever path inserts
 *   it. In groups messages still arrive: app.message_json shows `senderBlocked: true` to a
 *   reader who blocks the sender, false to everyone else.
 * - app.send_message and app_private.send_message_as take the mentions (dropped and created again
 *   with the new parameter, the thread parameter and every rule of the previous body kept).
 *
 * Nothing destructive: a column, two triggers, functions replaced.
 */

-- Tables ---------------------------------------------------------------------------------------

alter table app.messages
  add column mention_ids uuid[] not null default '{}'
    constraint messages_mention_ids_check check (cardinality(mention_ids) <= 50);
comment on column app.messages.mention_ids is
  'The participants this message mentions (each once, in the order given; at most 50). Shown as `mentions` while the message is not a tombstone; each was notified once, at the send (trigger messages_mentions).';

-- Triggers -------------------------------------------------------------------------------------

create function app_private.guard_message_block() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app_private.guard_message_block() is
  'Before a message is inserted: refused with AG403 hint blocked when it goes into a direct conversation whose other participant blocks the sender (every insert path). Group messages are never refused. security definer: the sender cannot read the block.';

create function app_private.notify_mentions() returns trigger
language plpgsql security definer
set search_path = ''
as $$
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
comment on function app_private.notify_mentions() is
  'After a message that mentions people is inserted: each mentioned user must be a participant (AG422, the send fails), and each but the sender gets a MESSAGE notification with data { kind: "mention", conversationId, messageId, senderId, threadId } through app_private.notify_many (where mutes and blocks drop it). No collapse key: each mention is its own notification. security definer: it reads every participant and writes other users'' inboxes.';

create trigger messages_guard_block before insert on app.messages
  for each row execute function app_private.guard_message_block();
create trigger messages_mentions after insert on app.messages
  for each row when (cardinality(new.mention_ids) > 0) execute function app_private.notify_mentions();

-- Grants ---------------------------------------------------------------------------------------

grant insert (mention_ids) on app.messages to authenticated;

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
    'reactions', '[]'::jsonb,
    'mentions', case when m.deleted_at is null then to_jsonb(m.mention_ids) else '[]'::jsonb end
  )
$$;
comment on function app.message_object(app.messages, jsonb) is
  'The message object from its row and its attachments'' JSON, with threadId, mentions (none on a tombstone) and an empty thread and reactions (right for a message just sent; app.message_json adds the real ones). Inlinable pure SQL with no pinned search_path on purpose (a pin stops inlining; it reads no table and runs with the caller''s rights): inlined it costs nothing per call in lists and is planned once per session inside plpgsql. The send and the event trigger each read the attachments in a statement of their own and call this.';

create or replace function app.message_json(m app.messages) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
  select app.message_object(m, (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id)
    from app.attachments a where a.message_id = m.id
  )) || app.message_extras(m, (select auth.uid()))
     || jsonb_build_object('senderBlocked', exists (
          select 1 from app.user_blocks b
          where b.blocker_id = (select auth.uid()) and b.blocked_id = m.sender_id))
$$;
comment on function app.message_json(app.messages) is
  'The message as the API shows it, attachments, thread counts and reactions (`me` for the caller) read here, and senderBlocked: whether the caller blocks its sender (RLS shows a block to its blocker only, so it is false for everyone else, the blocked person included). For list queries, where it is planned once per query. security invoker: a user sees only what RLS shows them.';

-- The send -------------------------------------------------------------------------------------

drop function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text, uuid);
drop function app.send_message(uuid, text, uuid, uuid[], text, text, uuid);

create function app.send_message(
  target_conversation_id uuid, message_content text, reply_to uuid default null,
  attachment_ids uuid[] default '{}', idempotency_key text default null,
  request_hash text default null, thread_root uuid default null, mentions uuid[] default '{}'
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
comment on function app.send_message(uuid, text, uuid, uuid[], text, text, uuid, uuid[]) is
  'Sends a message in one call: participation (AG404 otherwise), the idempotency key (the first response again, AG409 for another body), the configured length, the insert (RLS: the sender is the caller; the seq trigger checks the reply, the thread trigger the thread''s root: AG422; the block trigger a direct conversation with someone who blocks the caller: AG403 blocked; the mentions trigger that each mentioned user is a participant, AG422, and notifies them) and the attachments (the caller''s own, not yet attached, else AG422). Mentions are kept each once, in the order given. Returns the message as the API shows it. security invoker: every write is the caller''s, under RLS.';
grant execute on function app.send_message(uuid, text, uuid, uuid[], text, text, uuid, uuid[]) to authenticated;

create function app_private.send_message_as(
  claims text, target_conversation_id uuid, message_content text, reply_to uuid,
  attachment_ids uuid[], idempotency_key text, request_hash text, thread_root uuid,
  mentions uuid[] default '{}'
) returns jsonb
language plpgsql
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash, thread_root, coalesce(mentions, '{}'));
end;
$$;
comment on function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text, uuid, uuid[]) is
  'A send in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.send_message under them (RLS as always), so the commit follows at once on the server and the conversation''s row lock is never held across a round trip to the API. Only the API''s own role may call it: it trusts the claims it is given.';

revoke execute on all functions in schema app, app_private from public;
