/*
 * The event log and the topic rule: the durable log behind SSE, long-polling and Realtime, how
 * events are written (durable and ephemeral), and the one rule deciding who may read or write a
 * realtime topic, on every transport.
 *
 * Ordering, the part that is easy to get wrong: events carry the writing transaction's id (xid8)
 * and an identity. A plain sequence is not in commit order, but readers only ever read events of
 * transactions older than the oldest one still running (`pg_snapshot_xmin`): every future event
 * has a larger xid, so the set read is a stable prefix of the order (xid, id) and a cursor in
 * that order never skips or repeats.
 *
 * Tables: app.events; policies on realtime.messages. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables and indexes
-- ---------------------------------------------------------------------------------------------

create table app.events (
  id bigint generated always as identity primary key,
  xid xid8 not null default pg_current_xact_id(),
  topic text not null check (char_length(topic) between 1 and 200),
  event text not null check (event ~ '^[a-z_]+(\.[a-z_]+)*$'),
  payload jsonb not null,
  created_at timestamptz not null default now()
);
comment on table app.events is
  'Durable realtime events, read in (xid, id) order below the running-transaction horizon so a cursor never skips or repeats, whatever order concurrent writers commit in.';

create index events_topic_order_idx on app.events (topic, xid, id);
create index events_order_idx on app.events (xid, id);
-- Rows arrive in time order: a tiny range index serves the analytics ranges and the pruning.
create index events_created_at_brin on app.events using brin (created_at);

alter table app.events enable row level security;

-- ---------------------------------------------------------------------------------------------
-- The topic rule
-- ---------------------------------------------------------------------------------------------

create function app.readable_topics() returns setof text
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
comment on function app.readable_topics() is
  'THE topic rule, as the set of topics the current user may read: conversation:<id> for participants (active users of at least SUBSCRIBER), user:<id> for that user, admin for ADMINs; only for a live session, so signout ends realtime access at once. Every transport uses it: SSE and long-poll through app.can_read_topic, Realtime through the realtime.messages policy, the app.events policy as a set (evaluated once per statement, not per event row). security definer: it reads memberships and sessions the caller may not read, and returns only the caller''s own topics.';

create function app.can_read_topic(topic text) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return exists (select 1 from app.readable_topics() t where t = topic);
end;
$$;
comment on function app.can_read_topic(text) is
  'Whether the caller may read one realtime topic: membership of app.readable_topics(), so one rule serves every transport.';

create function app.can_write_topic(topic text) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return topic like 'conversation:%' and app.can_read_topic(topic);
end;
$$;
comment on function app.can_write_topic(text) is
  'Whether the caller may broadcast or track presence on a realtime topic: participants of a conversation may (presence, client-side signals); user: and admin topics are written by the server only (realtime.send), never by clients. security definer: it reads memberships through app.can_read_topic; it returns a boolean.';

-- ---------------------------------------------------------------------------------------------
-- Writing events
-- ---------------------------------------------------------------------------------------------

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
comment on function app_private.emit_event(text, text, jsonb) is
  'Appends a durable event and hands the same envelope to Realtime; its id is the event''s cursor (<xid>.<id>), the same on every transport, so clients remove duplicates. security definer: triggers write events on behalf of whichever user caused them.';

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
comment on function app_private.emit_ephemeral(text, text, jsonb) is
  'Ephemeral events (typing): delivered to live subscribers only, never stored in app.events. Hosted Realtime gets them through realtime.send, API processes through NOTIFY. security definer for the same reason as emit_event.';

create function app_private.prune_events(keep_days integer default 3) returns void
language sql volatile
set search_path = ''
as $$
  delete from app.events where created_at < now() - make_interval(days => keep_days);
$$;
comment on function app_private.prune_events(integer) is
  'The event log keeps keep_days (default 3): long enough for any client to resume, short enough to stay small. Run by pg_cron.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- The caller's topics are computed once per statement, not once per event row.
create policy events_select_readable on app.events for select to authenticated
  using (topic in (select app.readable_topics()));

-- Hosted Realtime (and the local gateway) authorize private-channel joins with this policy...
create policy realtime_messages_select_topic on realtime.messages for select to authenticated
  using (topic = (select realtime.topic()) and (select app.can_read_topic((select realtime.topic()))));

-- ...and client broadcasts and presence with this one, by inserting probe rows as the caller.
create policy realtime_messages_insert_topic on realtime.messages for insert to authenticated
  with check (
    topic = (select realtime.topic())
    and extension in ('broadcast', 'presence')
    and (select app.can_write_topic((select realtime.topic())))
  );

-- ---------------------------------------------------------------------------------------------
-- Grants and schedules
-- ---------------------------------------------------------------------------------------------

grant select on app.events to authenticated;
grant execute on function app.readable_topics() to authenticated;
grant execute on function app.can_read_topic(text) to authenticated;
grant execute on function app.can_write_topic(text) to authenticated;

select cron.schedule('agora-prune-events', '*/10 * * * *', 'select app_private.prune_events(3)');

revoke execute on all functions in schema app, app_private from public;
