/*
 * app.events partitioned by day, its retention from the configuration, and the local Realtime
 * rows pruned (issue 30).
 *
 * - app.events becomes a table partitioned by day on created_at (UTC), partitions in
 *   app_partitions made a week ahead by agora-maintain-partitions (as the access log's). The
 *   primary key is (id, created_at) (a unique key of a partitioned table holds its partition
 *   key); ids stay unique, from the one identity sequence. Readers are unchanged: they read in
 *   (xid, id) order through the same indexes, one per partition, merged.
 * - app_private.prune_events() drops the partitions past retention.eventDays (default 3): a
 *   client can resume from any event of the last three days, as before.
 * - app_private.prune_realtime_messages() (agora-prune-realtime-messages, every 10 minutes):
 *   locally realtime.messages is the stack's own plain table (sql/local/20_realtime.sql) and
 *   gets a row per durable event and typing signal; rows older than
 *   retention.realtimeMessageHours (default 72) go. Hosted, realtime.messages is Supabase
 *   Realtime's own table, partitioned by day, whose partitions Realtime creates and drops
 *   itself: the function leaves a partitioned realtime.messages alone.
 *
 * The conversion takes an ACCESS EXCLUSIVE lock on app.events while its rows move (three days
 * of events): writers of events wait for it.
 */

-- The rename takes an ACCESS EXCLUSIVE lock, held to the end of the migration.
alter table app.events rename to events_unpartitioned;
alter sequence app.events_id_seq rename to events_unpartitioned_id_seq;
alter index app.events_pkey rename to events_unpartitioned_pkey;
drop index app.events_created_at_brin;
drop index app.events_order_idx;
drop index app.events_topic_order_idx;
drop policy events_select_readable on app.events_unpartitioned;

create table app.events (
  id bigint generated always as identity,
  xid xid8 not null default pg_current_xact_id(),
  topic text not null constraint events_topic_check check (char_length(topic) between 1 and 200),
  event text not null constraint events_event_check check (event ~ '^[a-z_]+(\.[a-z_]+)*$'),
  payload jsonb not null,
  created_at timestamptz not null default now(),
  primary key (id, created_at)
) partition by range (created_at);
comment on table app.events is
  'Durable realtime events, read in (xid, id) order below the running-transaction horizon so a cursor never skips or repeats, whatever order concurrent writers commit in. Partitioned by day on created_at (partitions in app_partitions, made ahead by agora-maintain-partitions); retention (retention.eventDays) drops whole days.';
alter table app.events enable row level security;
create policy events_select_readable on app.events for select to authenticated
  using (topic in (select app.readable_topics()));
grant select on app.events to authenticated;

select app_private.ensure_daily_partitions('app.events',
  (least((select min(created_at) from app.events_unpartitioned), now() - interval '1 day') at time zone 'UTC')::date,
  ((now() + interval '7 days') at time zone 'UTC')::date);

insert into app.events (id, xid, topic, event, payload, created_at) overriding system value
select id, xid, topic, event, payload, created_at from app.events_unpartitioned;
select setval('app.events_id_seq',
  coalesce((select max(id) from app.events_unpartitioned), 0) + 1, false);
drop table app.events_unpartitioned;

create index events_order_idx on app.events (xid, id);
create index events_topic_order_idx on app.events (topic, xid, id);

create or replace function app_private.prune_events(keep_days integer default null) returns void
language plpgsql
set search_path = ''
as $$
begin
  perform app_private.drop_daily_partitions('app.events',
    pg_catalog.now() - pg_catalog.make_interval(days => coalesce(keep_days, app.config_int('retention', 'eventDays'))));
end;
$$;
comment on function app_private.prune_events(integer) is
  'The event log keeps retention.eventDays (default 3; keep_days when given) and at most a day more: long enough for any client to resume, short enough to stay small. Drops whole daily partitions. Run by pg_cron (agora-prune-events).';

select cron.unschedule('agora-prune-events');
select cron.schedule('agora-prune-events', '*/10 * * * *', 'select app_private.prune_events()');

create function app_private.prune_realtime_messages() returns integer
language plpgsql
set search_path = ''
as $$
declare
  gone integer := 0;
begin
  if pg_catalog.to_regclass('realtime.messages') is null
     or (select c.relkind from pg_catalog.pg_class c where c.oid = 'realtime.messages'::regclass) <> 'r' then
    return 0;  -- Hosted: Supabase Realtime partitions and prunes its own table.
  end if;
  execute 'delete from realtime.messages where inserted_at < now()::timestamp - $1'
    using pg_catalog.make_interval(hours => app.config_int('retention', 'realtimeMessageHours'));
  get diagnostics gone = row_count;
  return gone;
end;
$$;
comment on function app_private.prune_realtime_messages() is
  'pg_cron (agora-prune-realtime-messages): on the local stack, where realtime.messages is a plain table of our own (sql/local/20_realtime.sql), deletes its rows older than retention.realtimeMessageHours (default 72). Hosted, realtime.messages is Supabase Realtime''s table, partitioned by day and pruned by Realtime itself: nothing is done. Returns how many rows went.';
revoke all on function app_private.prune_realtime_messages() from public;

select cron.schedule('agora-prune-realtime-messages', '*/10 * * * *', 'select app_private.prune_realtime_messages()');
