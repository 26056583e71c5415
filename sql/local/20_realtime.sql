/*
 * The Realtime pieces hosted Supabase provides: `realtime.messages` (what Broadcast from the
 * database writes, and what private-channel RLS policies are written against),
 * `realtime.topic()` (the channel being authorized) and `realtime.send()` (broadcast from SQL).
 * Hosted, `realtime.messages` is partitioned by day and read by the Realtime cluster; locally it
 * is a plain table and every insert is announced with pg_notify so the local gateway can deliver
 * it (the payload carries only the row id: NOTIFY payloads are limited to 8000 bytes).
 */
create schema if not exists realtime;
grant usage on schema realtime to anon, authenticated, service_role;

create table if not exists realtime.messages (
  topic text not null,
  extension text not null,
  payload jsonb,
  event text,
  private boolean default false,
  updated_at timestamp not null default now(),
  inserted_at timestamp not null default now(),
  id uuid not null default gen_random_uuid(),
  primary key (id, inserted_at)
);
create index if not exists messages_inserted_at_topic_index
  on realtime.messages (inserted_at desc, topic)
  where extension = 'broadcast' and private is true;

alter table realtime.messages enable row level security;
grant select, insert, update on realtime.messages to anon, authenticated, service_role;

create or replace function realtime.topic() returns text
language sql stable
as $$
  select nullif(current_setting('realtime.topic', true), '')::text
$$;
grant execute on function realtime.topic() to anon, authenticated, service_role;

create or replace function realtime.send(payload jsonb, event text, topic text, private boolean default true)
returns void
language plpgsql
as $$
begin
  begin
    perform set_config('realtime.topic', topic, true);
    insert into realtime.messages (payload, event, topic, private, extension)
    values (payload, event, topic, private, 'broadcast');
  exception
    when others then
      -- Hosted behaviour: a failed broadcast never fails the caller's transaction.
      raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
end;
$$;
grant execute on function realtime.send(jsonb, text, text, boolean) to anon, authenticated, service_role;

-- Local only: announce every committed row to the local gateway (NOTIFY is delivered at commit,
-- in commit order). The row travels in the notification when it fits NOTIFY's 8000-byte limit;
-- otherwise only its id does and the gateway reads the row. insertedAt is where the gateway's
-- catch-up starts after its connection was down (stack/realtime/database-broadcasts.ts).
create or replace function realtime.notify_local_gateway() returns trigger
language plpgsql
as $$
declare
  body text := jsonb_build_object(
    'id', new.id, 'topic', new.topic, 'event', new.event, 'private', new.private,
    'extension', new.extension, 'payload', new.payload, 'insertedAt', new.inserted_at
  )::text;
begin
  if octet_length(body) > 7900 then
    body := jsonb_build_object('id', new.id)::text;
  end if;
  perform pg_notify('realtime_messages', body);
  return null;
end;
$$;
drop trigger if exists notify_local_gateway on realtime.messages;
create trigger notify_local_gateway after insert on realtime.messages
  for each row execute function realtime.notify_local_gateway();

/*
 * Local only: client broadcasts crossing between gateway processes whose payload does not fit in
 * a NOTIFY. Unlogged and short-lived: rows are read within milliseconds and pruned after a minute.
 */
create unlogged table if not exists realtime.local_fanout (
  id bigint generated always as identity primary key,
  body jsonb not null,
  created_at timestamptz not null default now()
);
alter table realtime.local_fanout enable row level security;
revoke all on realtime.local_fanout from public, anon, authenticated;
