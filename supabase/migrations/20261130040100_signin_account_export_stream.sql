/*
 * The account export at any size (issue 30): GET /api/account/export built one jsonb document in
 * Postgres, and a user with 1,000,000 notifications went past jsonb's 256 MB limit after 46 s (an
 * error, no export). The document's notifications are now streamed: app.export_account_streamed
 * returns the document without them (the same checks and security event as app.export_account),
 * and app.export_account_notifications returns them one JSON text per row, which the route reads
 * through a cursor in the same transaction and writes to the response as they come
 * (functions/api/account/account.queries.ts). app.export_account is kept, unchanged, for
 * callers that want the whole document at once (small accounts, tests).
 *
 * Tables touched: none. New functions: app_private.account_export(uuid, text[]),
 * app.export_account_streamed(), app.export_account_notifications(). Nothing destructive.
 */

create function app_private.account_export(target_user_id uuid, left_out text[]) returns jsonb
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
begin
  for p in select e.part, e.function_name from app_private.account_export_parts e
           where e.part <> all(coalesce(left_out, '{}')) order by e.part loop
    execute format('select %s($1)', p.function_name::regprocedure::regproc) using target_user_id into value;
    document := document || jsonb_build_object(p.part, coalesce(value, document -> p.part, 'null'::jsonb));
  end loop;
  return document;
end;
$$;

comment on function app_private.account_export(uuid, text[]) is
  'The account export of one user without the parts named in left_out (they keep the skeleton''s empty value): the parts the route streams (app.export_account_streamed). The contract''s skeleton with every other registered part laid over it.';

revoke execute on function app_private.account_export(uuid, text[]) from public;

create function app.export_account_streamed() returns jsonb
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  document jsonb;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  document := app_private.account_export(me, array['notifications']);
  perform app_private.record_security_event('account.exported', 'info', me,
    jsonb_build_object('parts', (select jsonb_agg(k order by k) from jsonb_object_keys(document) k)));
  return document - 'notifications';
end;
$$;

comment on function app.export_account_streamed() is
  'GET /api/account/export, first statement: the caller''s export document without notifications (the route streams them after it from app.export_account_notifications, in the same transaction), recorded as account.exported. One jsonb document of every notification of a user with 1,000,000 went past jsonb''s 256 MB limit. security definer as app.export_account: it reads the caller''s own rows across domains; it only ever reads the caller''s.';

grant execute on function app.export_account_streamed() to authenticated;

create function app.export_account_notifications() returns setof text
language sql stable security definer
set search_path = ''
as $$
  select jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox,
    -- app_private.iso_time's expression, written out: that function (pinned search_path) is
    -- parsed and planned again on every call, 200 µs a row, 21 of 22 s for 100,000 rows.
    'readAt', to_char(n.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )::text
  from app.notifications n
  where n.user_id = (select auth.uid())
  order by n.created_at, n.id
$$;

comment on function app.export_account_notifications() is
  'GET /api/account/export, second statement: every notification of the caller (those kept only for delivery, inbox false, included), oldest first, one JSON text per row as app_private.account_export_notifications shapes it (its times written out: app_private.iso_time, planned again on every call, cost 200 µs a row); the route reads it through a cursor and writes it to the response part by part, so no document of every notification is ever built. security definer: RLS shows users their inbox rows only; it only ever reads the caller''s.';

grant execute on function app.export_account_notifications() to authenticated;

revoke execute on all functions in schema app, app_private from public;
