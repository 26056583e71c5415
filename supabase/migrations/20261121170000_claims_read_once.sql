/*
 * A send's database work, halved (docs/realtime.md, "Cost of a send"): the helpers every policy
 * and API function calls read the caller's claims once per statement, and nothing on a send's
 * path is planned again per call.
 *
 * - `auth.uid()` parses the `request.jwt.claims` JSON on every evaluation. Written bare in a
 *   condition (`u.id = auth.uid()`) it is evaluated once per row the plan looks at whenever the
 *   plan scans rather than seeks (a small table, a generic plan): app.has_role took 44 us a call
 *   with 41 users, parsing the same claims for every row. `(select auth.uid())` is an InitPlan,
 *   evaluated once per statement whatever the plan: the form the policies already use.
 * - SQL-language functions that cannot be inlined (a `set search_path`, security definer) are
 *   parsed and planned again on every call; plpgsql keeps its plans for the session. So
 *   app.is_admin and app.current_user_role become plpgsql, as app.has_role already is.
 * - The message JSON (below) and the reply check (at the end) had plans made again on every send.
 *
 * Same signatures, results and grants for every function replaced; two new builders
 * (app.message_object, app.attachment_json).
 */

create or replace function app.has_role(required app.user_role) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  -- plpgsql, not sql: policies call this several times per statement, and a non-inlinable SQL
  -- function is planned again on every call while plpgsql keeps its plan for the session.
  return exists (
    select 1 from app.users u
    where u.id = (select auth.uid()) and u.status = 'active' and u.role >= required
  );
end;
$$;

create or replace function app.is_admin() returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return app.has_role('ADMIN');
end;
$$;

create or replace function app.current_user_role() returns app.user_role
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return coalesce(
    (select u.role from app.users u where u.id = (select auth.uid()) and u.status = 'active'),
    'VISITOR'::app.user_role
  );
end;
$$;

create or replace function app.my_conversation_ids() returns setof uuid
language plpgsql stable security definer
set search_path = ''
as $$
begin
  if app.has_role('SUBSCRIBER') then
    return query
      select p.conversation_id from app.conversation_participants p where p.user_id = (select auth.uid());
  end if;
end;
$$;

create or replace function app.is_participant(target_conversation_id uuid) returns boolean
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

create or replace function app.readable_topics() returns setof text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  -- A signed-out (revoked) session reads nothing, on any transport, even before its token expires.
  if session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or not exists (
       select 1 from app.sessions s
       where s.id = session_claim::uuid and s.user_id = me
         and s.revoked_at is null and s.expires_at > now()
     ) then
    return;
  end if;
  return next 'user:' || me::text;
  if app.is_admin() then
    return next 'admin';
  end if;
  return query
    select 'conversation:' || p.conversation_id::text
    from app.conversation_participants p where p.user_id = me;
end;
$$;

/*
 * The message as the API shows it, in two inlinable parts: the object from the row and its
 * attachments' JSON, and each attachment's object. Pure SQL with no `set search_path` (which
 * would stop the planner from inlining them; they read no table and run with the caller's
 * rights, so the pin protects nothing here): inlined, they cost nothing per call in a list query
 * and are planned once per session inside plpgsql.
 *
 * Why: app.message_json, SQL with a pinned search_path, was parsed and planned on every call
 * from plpgsql, twice per send (the response, the event). As plpgsql it would keep its plan, but
 * it is called by the sender's statement (role authenticated, RLS on the attachments) and by the
 * event trigger (its owner), and the plan cache plans a statement again at every change of role:
 * still 84 us a call. Now each of the two reads the attachments in a statement of its own, under
 * one role each (the sender's reads none when none were attached), and builds the object with
 * these. app.message_json stays SQL for list queries, where it is planned once per query.
 */
create function app.attachment_json(a app.attachments) returns jsonb
language sql stable
as $$
  select jsonb_build_object(
    'id', a.id, 'name', a.name, 'contentType', a.content_type, 'size', a.size,
    'url', '/api/attachments/' || a.id::text
  )
$$;

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

/* Unchanged in what it returns; security invoker as before (the caller sees what RLS shows). */
create or replace function app.message_json(m app.messages) returns jsonb
language sql stable security invoker
set search_path = ''
as $$
  select app.message_object(m, (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id)
    from app.attachments a where a.message_id = m.id
  ))
$$;

create or replace function app.send_message(
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

/* As before; the attachments are read here, as the trigger's owner (see app.message_object). */
create or replace function app_private.message_events() returns trigger
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

/*
 * The reply check only for replies: as one condition (`reply_to_id is not null and not exists
 * (...)`) it got a custom plan on every insert (knowing the value, the planner folds the condition
 * to false, so it always rated a custom plan cheaper than the generic one).
 */
create or replace function app_private.assign_message_seq() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
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

revoke execute on all functions in schema app, app_private from public;
grant execute on function app.attachment_json(app.attachments) to authenticated;
grant execute on function app.message_object(app.messages, jsonb) to authenticated;
