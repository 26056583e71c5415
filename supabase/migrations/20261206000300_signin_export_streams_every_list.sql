/*
 * The account export streams every list that grows with a person's use, not only their
 * notifications (issue 30: "the account export works for any size"; docs/account.md).
 *
 * Only the notifications were streamed. The rest of the document was one jsonb value, and the
 * growth benchmark's heavy user at x10 (a tenth of the review's size) already had 33 MB of
 * orders, 29 MB of wallet transactions and 27 MB of messages in it (compressed sizes): at the
 * review's size each of them alone passes jsonb's 256 MB limit, and the export fails as the
 * notifications' did.
 *
 * Now a part that is a list registers a rows function (user id) returning setof text, one JSON
 * text per element, in the export's order (app_private.account_export_parts.rows_function).
 * The part's jsonb function is that list aggregated, so each element has one definition. A part
 * that is an object holding a list (the wallet and its transactions) names the list's key
 * (rows_key): its function returns the object without it. This migration streams the lists of
 * the signin domain's parts (conversations, messages, notifications); the orders
 * (20261206000310_store_account_export_rows.sql) and the wallet's transactions
 * (20261206000320_wallet_export_rows.sql) follow.
 *
 * The route (functions/api/account/account.queries.ts) asks app.export_account_streamed for the
 * document without the streamed lists, app.export_account_streamed_parts for the lists, and reads
 * each through a cursor over app.export_account_rows(part), in the same transaction.
 * app.export_account (the whole document, for small accounts and tests) and
 * app_private.account_export keep their results: the same document, key for key.
 *
 * Tables touched: app_private.account_export_parts (two columns, three rows updated).
 */

alter table app_private.account_export_parts
  add column rows_function text
    constraint account_export_parts_rows_function_check check (rows_function is null or (
      rows_function ~ '^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\(' and to_regprocedure(rows_function) is not null)),
  add column rows_key text
    constraint account_export_parts_rows_key_check check (rows_key ~ '^[a-z][A-Za-z]*$'),
  add constraint account_export_parts_rows_key_needs_rows check (rows_key is null or rows_function is not null);

comment on column app_private.account_export_parts.rows_function is
  'For a part that grows with the person''s use: its function (user_id uuid) returning setof text, one JSON text per element of the list, in the export''s order; the route streams it (app.export_account_rows) instead of building the list in the document. Null for a part that stays small. Schema-qualified text, checked as function_name.';
comment on column app_private.account_export_parts.rows_key is
  'With rows_function, when the part is an object holding the list (the wallet''s transactions): the list''s key. The part''s function then returns the object without it. Null when the part is the list itself.';

-- ---------------------------------------------------------------------------------------------
-- The lists, one element per row
-- ---------------------------------------------------------------------------------------------

create function app_private.account_export_conversations_rows(target_user_id uuid)
returns setof text
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', c.id, 'type', c.type, 'title', c.title, 'isCreator', c.created_by = target_user_id,
    'createdAt', app_private.iso_time(c.created_at), 'joinedAt', app_private.iso_time(p.joined_at),
    'lastReadMessageId', p.last_read_message_id, 'lastReadAt', app_private.iso_time(p.last_read_at)
  )::text
  from app.conversation_participants p join app.conversations c on c.id = p.conversation_id
  where p.user_id = target_user_id
  order by p.joined_at, c.id
$$;

comment on function app_private.account_export_conversations_rows(uuid) is
  'Export part `conversations`, an element per row: the conversations the person takes part in and how far they read, in the order they joined; nothing about the other people in them.';
revoke all on function app_private.account_export_conversations_rows(uuid) from public;

create function app_private.account_export_messages_rows(target_user_id uuid)
returns setof text
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', m.id, 'conversationId', m.conversation_id, 'content', m.content, 'replyToId', m.reply_to_id,
    'createdAt', app_private.iso_time(m.created_at), 'editedAt', app_private.iso_time(m.edited_at),
    'deletedAt', app_private.iso_time(m.deleted_at),
    'attachments', coalesce((
      select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name, 'contentType', a.content_type,
                                          'size', a.size, 'url', '/api/attachments/' || a.id::text)
                       order by a.created_at, a.id)
      from app.attachments a where a.message_id = m.id), '[]'::jsonb),
    'earlierVersions', coalesce((
      select jsonb_agg(jsonb_build_object('content', v.content, 'writtenAt', app_private.iso_time(v.written_at),
                                          'replacedAt', app_private.iso_time(v.replaced_at))
                       order by v.replaced_at, v.id)
      from app.message_versions v where v.message_id = m.id), '[]'::jsonb)
  )::text
  from app.messages m where m.sender_id = target_user_id
  order by m.created_at, m.id
$$;

comment on function app_private.account_export_messages_rows(uuid) is
  'Export part `messages`, an element per row: every message the person wrote (in conversations they left too), oldest first, with its files and earlier versions.';
revoke all on function app_private.account_export_messages_rows(uuid) from public;

create function app_private.account_export_notifications_rows(target_user_id uuid)
returns setof text
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox,
    -- app_private.iso_time's expression, written out: that function (pinned search_path) is
    -- parsed and planned again on every call, 200 µs a row, 21 of 22 s for 100,000 rows.
    -- Read, or covered by a pending read-all: app.notification_read_at, called only for the
    -- unread rows up to the newest mark (the max is computed once).
    'readAt', to_char(coalesce(n.read_at,
                        case when n.created_at <= (select max(m.read_to) from app.notification_read_marks m
                                                   where m.user_id = target_user_id)
                             then app.notification_read_at(n) end)
                      at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )::text
  from app.notifications n
  where n.user_id = target_user_id
  order by n.created_at, n.id
$$;

comment on function app_private.account_export_notifications_rows(uuid) is
  'Export part `notifications`, an element per row: every notification of the person (those kept only for delivery, inbox false, included), oldest first. readAt is the read time as every reader shows it (app.notification_read_at: a pending read-all''s time for the rows it covers). Its times are written out: app_private.iso_time is planned again on every call, 200 µs a row.';
revoke all on function app_private.account_export_notifications_rows(uuid) from public;

-- ---------------------------------------------------------------------------------------------
-- The parts: each list aggregated from its rows (one definition of an element)
-- ---------------------------------------------------------------------------------------------

create or replace function app_private.account_export_conversations(target_user_id uuid)
returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_conversations_rows(target_user_id) with ordinality r (e, n)
$$;

comment on function app_private.account_export_conversations(uuid) is
  'Export part `conversations`: the list of app_private.account_export_conversations_rows (the conversations the person takes part in and how far they read; nothing about the other people in them).';

create or replace function app_private.account_export_messages(target_user_id uuid)
returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_messages_rows(target_user_id) with ordinality r (e, n)
$$;

comment on function app_private.account_export_messages(uuid) is
  'Export part `messages`: the list of app_private.account_export_messages_rows (every message the person wrote, in conversations they left too, with its files and earlier versions).';

create or replace function app_private.account_export_notifications(target_user_id uuid)
returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_notifications_rows(target_user_id) with ordinality r (e, n)
$$;

comment on function app_private.account_export_notifications(uuid) is
  'Export part `notifications`: the list of app_private.account_export_notifications_rows (every notification of the person, those kept only for delivery included; readAt as every reader shows it).';

update app_private.account_export_parts set rows_function = 'app_private.account_export_conversations_rows(uuid)'
where part = 'conversations';
update app_private.account_export_parts set rows_function = 'app_private.account_export_messages_rows(uuid)'
where part = 'messages';
update app_private.account_export_parts set rows_function = 'app_private.account_export_notifications_rows(uuid)'
where part = 'notifications';
-- ---------------------------------------------------------------------------------------------
-- The composer, and what the route calls
-- ---------------------------------------------------------------------------------------------

create or replace function app_private.account_export(target_user_id uuid, left_out text[])
returns jsonb
language plpgsql stable
set search_path = ''
as $$
declare
  -- Every key of the contract, with the value of a domain that has nothing (or no part yet).
  document jsonb := jsonb_build_object(
    'exportedAt', app_private.iso_time(now()),
    'profile', null, 'identities', '[]'::jsonb, 'sessions', '[]'::jsonb,
    'conversations', '[]'::jsonb, 'messages', '[]'::jsonb, 'notifications', '[]'::jsonb,
    'preferences', null, 'orders', '[]'::jsonb, 'vendor', null, 'wallet', null
  );
  p record;
  value jsonb;
  list jsonb;
begin
  for p in select e.part, e.function_name, e.rows_function, e.rows_key
           from app_private.account_export_parts e order by e.part loop
    if p.part = any(coalesce(left_out, '{}')) and p.rows_key is null then
      continue;
    end if;
    execute format('select %s($1)', p.function_name::regprocedure::regproc) using target_user_id into value;
    -- An object holding a list: the list is added here unless the route streams it.
    if value is not null and p.rows_key is not null and not p.part = any(coalesce(left_out, '{}')) then
      execute format('select coalesce(jsonb_agg(r.e::jsonb order by r.n), ''[]''::jsonb) from %s($1) with ordinality r (e, n)',
                     p.rows_function::regprocedure::regproc)
        using target_user_id into list;
      value := value || jsonb_build_object(p.rows_key, list);
    end if;
    document := document || jsonb_build_object(p.part, coalesce(value, document -> p.part, 'null'::jsonb));
  end loop;
  return document;
end;
$$;

comment on function app_private.account_export(uuid, text[]) is
  'The account export of one user without the lists of the parts named in left_out: the parts the route streams (app.export_account_streamed). A part that is a list is left at the skeleton''s empty value; a part that is an object holding a list (rows_key) is the object without that list. The contract''s skeleton with every other registered part laid over it.';

-- The whole document: the same composer, nothing left out (it knew nothing of rows_key).
create or replace function app_private.account_export(target_user_id uuid)
returns jsonb
language sql stable
set search_path = ''
as $$
  select app_private.account_export(target_user_id, '{}'::text[])
$$;

comment on function app_private.account_export(uuid) is
  'The account export of one user as one document (app.export_account: small accounts, tests): app_private.account_export with nothing left out, every list built in.';

drop function app.export_account_notifications();

create or replace function app.export_account_streamed()
returns jsonb
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  streamed text[] := array(select e.part from app_private.account_export_parts e where e.rows_function is not null);
  document jsonb;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  document := app_private.account_export(me, streamed);
  perform app_private.record_security_event('account.exported', 'info', me,
    jsonb_build_object('parts', (select jsonb_agg(k order by k) from jsonb_object_keys(document) k)));
  -- The lists themselves come next, from app.export_account_rows.
  return document - array(select e.part from app_private.account_export_parts e
                          where e.rows_function is not null and e.rows_key is null);
end;
$$;

comment on function app.export_account_streamed() is
  'GET /api/account/export, first statement: the caller''s export document without the lists the route streams after it (app.export_account_streamed_parts; each from app.export_account_rows, in the same transaction): their keys are absent, and an object holding a list (the wallet) is there without it. Recorded as account.exported. Built whole, the heavy user''s orders, wallet transactions or messages would each pass jsonb''s 256 MB limit at a million users, as the notifications of a user with 1,000,000 did. security definer as app.export_account: it reads the caller''s own rows across domains; it only ever reads the caller''s.';

create function app.export_account_streamed_parts()
returns table (part text, rows_key text)
language sql stable security definer
set search_path = ''
as $$
  select e.part, e.rows_key from app_private.account_export_parts e
  where e.rows_function is not null
  order by e.part
$$;

comment on function app.export_account_streamed_parts() is
  'GET /api/account/export: the parts whose lists the route streams, in order, and for an object holding its list the list''s key (null: the part is the list). security definer: the registry is server-only; it holds names only.';
revoke all on function app.export_account_streamed_parts() from public;
grant execute on function app.export_account_streamed_parts() to authenticated;

create function app.export_account_rows(part text)
returns setof text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  rows_function text;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  select e.rows_function into rows_function from app_private.account_export_parts e
  where e.part = export_account_rows.part and e.rows_function is not null;
  if rows_function is null then
    raise exception 'no streamed export part %', part using errcode = '22023';
  end if;
  return query execute format('select r from %s($1) r', rows_function::regprocedure::regproc) using me;
end;
$$;

comment on function app.export_account_rows(text) is
  'GET /api/account/export, after app.export_account_streamed: one streamed list of the caller''s export (a part with a rows_function), one JSON text per element in the export''s order; the route reads it through a cursor and writes it part by part, so no list is ever built as one value. A part that streams nothing: 22023. security definer: the rows span domains and RLS (messages in conversations the caller left, notifications kept only for delivery); it only ever reads the caller''s.';
revoke all on function app.export_account_rows(text) from public;
grant execute on function app.export_account_rows(text) to authenticated;
