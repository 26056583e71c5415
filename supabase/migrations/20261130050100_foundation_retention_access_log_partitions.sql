/*
 * Retention in the configuration, and the access log partitioned by day (issue 30).
 *
 * - The configuration gets a `retention` section (app_private.config_defaults, a new version):
 *   how long each append-only table keeps its rows. The prune jobs read it when they run
 *   (app.config_int), so a change counts from the next run; docs/retention.md lists them.
 * - app.access_logs becomes a table partitioned by day on created_at (UTC), its partitions in
 *   the schema app_partitions (one per day, created a week ahead by pg_cron job
 *   agora-maintain-partitions, plus a default partition that catches a row no day partition
 *   covers). Retention drops whole partitions instead of deleting rows. The primary key is
 *   (id, created_at): a unique key of a partitioned table must hold its partition key.
 * - Its indexes fit the admin list: (created_at desc, id desc) for the newest-first pages (the
 *   BRIN index left a sequential scan and a sort), (route, created_at desc, id desc) for the
 *   route filter and (user_id, created_at desc, id desc) for a user's requests.
 * - app_private.prune_logs() drops the access log's partitions past retention.accessLogDays and
 *   deletes security events past retention.securityEventDays.
 *
 * The conversion renames the table, creates the partitioned one and moves every row in this
 * migration's transaction: the access log is locked (ACCESS EXCLUSIVE) meanwhile, so the API's
 * log writer waits (its batches queue in memory, up to 50,000 entries) and the admin access-log
 * page waits; measured here at about 10 s per million rows.
 */

-- Retention settings ---------------------------------------------------------------------------

create or replace function app_private.config_defaults() returns jsonb
language sql
immutable
set search_path = ''
as $$
  select '{
    "system": {
      "platformName": "Agora", "defaultRole": "SUBSCRIBER", "maintenanceMode": false,
      "signupsOpen": true
    },
    "features": {
      "messaging": true, "store": true, "wallet": true, "notifications": true,
      "signIn": { "email": true, "google": true, "apple": true, "wallet": true }
    },
    "security": { "freshSignInSeconds": 600 },
    "limits": {
      "messageMaxLength": 10000, "messageEditWindowMinutes": 15,
      "attachmentMaxBytes": 10485760, "groupMaxParticipants": 100
    },
    "whiteLabel": {
      "brandName": "Agora", "logoUrl": null, "primaryColor": "#1f6feb", "customDomain": null,
      "supportEmail": null
    },
    "store": {
      "currency": "USD", "commissionBps": 500, "reservationMinutes": 15, "autoCompleteDays": 14,
      "settlementHourUtc": 1
    },
    "wallet": {
      "chainId": 31337, "confirmations": 1, "pendingTtlSeconds": 600, "exportsPerDay": 3,
      "contracts": {
        "multicall3": null, "utility": null, "governance": null, "staking": null,
        "erc721": [], "erc1155": []
      }
    },
    "notifications": {
      "bulkMaxRecipients": 1000000,
      "defaults": {
        "OPPORTUNITY": { "inApp": true, "push": true, "email": false },
        "MESSAGE": { "inApp": true, "push": true, "email": false },
        "ENTITY": { "inApp": true, "push": true, "email": false },
        "SYSTEM": { "inApp": true, "push": true, "email": true },
        "WALLET": { "inApp": true, "push": true, "email": false }
      }
    },
    "retention": {
      "accessLogDays": 90, "securityEventDays": 365, "eventDays": 3, "doneJobDays": 3,
      "deadJobDays": 30, "deliveryDays": 90, "realtimeMessageHours": 72
    }
  }'::jsonb

$$;

-- Daily partitions -----------------------------------------------------------------------------

create schema app_partitions;
comment on schema app_partitions is
  'The daily partitions of the append-only tables (app.access_logs, app.events): created and dropped by app_private.ensure_daily_partitions and app_private.drop_daily_partitions, read through their parent tables (whose policies apply). No API role may use the schema.';
revoke all on schema app_partitions from public;

create function app_private.ensure_daily_partitions(parent regclass, from_day date, to_day date)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  part_schema text := 'app_partitions';
  base text := (select c.relname from pg_catalog.pg_class c where c.oid = parent);
  key text;
  day date;
  name text;
  low timestamptz;
  high timestamptz;
  default_part text := base || '_default';
  created integer := 0;
  moved bigint;
begin
  -- The partition key's column (one column, range by day).
  select a.attname into key
  from pg_catalog.pg_partitioned_table p
  join pg_catalog.pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
  where p.partrelid = parent;
  if key is null then
    raise exception '% is not a partitioned table', parent using errcode = '22023';
  end if;
  -- Waits for running readers at most this long, then gives up until the next run (partitions
  -- are made days ahead): queued behind a long query, the lock would block every writer.
  perform pg_catalog.set_config('lock_timeout', '5s', true);
  if pg_catalog.to_regclass(part_schema || '.' || default_part) is null then
    execute pg_catalog.format('create table %I.%I partition of %s default',
      part_schema, default_part, parent);
    execute pg_catalog.format('alter table %I.%I enable row level security', part_schema, default_part);
  end if;
  day := from_day;
  while day <= to_day loop
    name := base || '_p' || pg_catalog.to_char(day, 'YYYYMMDD');
    if pg_catalog.to_regclass(part_schema || '.' || name) is null then
      low := day::timestamp at time zone 'UTC';
      high := (day + 1)::timestamp at time zone 'UTC';
      -- Rows of that day that fell into the default partition move into the new one first
      -- (attaching a range the default partition still holds rows of fails).
      execute pg_catalog.format('create table %I.%I (like %s including defaults including constraints)',
        part_schema, name, parent);
      execute pg_catalog.format(
        'with gone as (delete from %1$I.%2$I where %3$I >= %4$L and %3$I < %5$L returning *) '
        'insert into %1$I.%6$I select * from gone',
        part_schema, default_part, key, low, high, name);
      get diagnostics moved = row_count;
      execute pg_catalog.format('alter table %s attach partition %I.%I for values from (%L) to (%L)',
        parent, part_schema, name, low, high);
      execute pg_catalog.format('alter table %I.%I enable row level security', part_schema, name);
      created := created + 1;
    end if;
    day := day + 1;
  end loop;
  return created;
end;
$$;
comment on function app_private.ensure_daily_partitions(regclass, date, date) is
  'Creates the missing daily partitions (UTC days) of a table partitioned by range on a timestamp, from from_day to to_day, in schema app_partitions as <table>_pYYYYMMDD, and its default partition <table>_default; rows of a new day found in the default partition move into it. RLS is on for each (no policies: read them through the parent). Waits at most 5 s for a lock. Returns how many it created. Run by app_private.maintain_partitions (pg_cron).';
revoke all on function app_private.ensure_daily_partitions(regclass, date, date) from public;

create function app_private.drop_daily_partitions(parent regclass, before timestamptz)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  part record;
  dropped integer := 0;
  key text;
begin
  perform pg_catalog.set_config('lock_timeout', '5s', true);
  for part in
    select c.oid::regclass as rel,
           pg_catalog.substring(pg_catalog.pg_get_expr(c.relpartbound, c.oid), 'TO \(''([^'']+)''\)')::timestamptz as high
    from pg_catalog.pg_inherits i
    join pg_catalog.pg_class c on c.oid = i.inhrelid
    where i.inhparent = parent and pg_catalog.pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT'
    order by 2
  loop
    exit when part.high is null or part.high > before;
    execute pg_catalog.format('drop table %s', part.rel);
    dropped := dropped + 1;
  end loop;
  -- Old rows that landed in the default partition go row by row (normally there are none).
  select a.attname into key
  from pg_catalog.pg_partitioned_table p
  join pg_catalog.pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
  where p.partrelid = parent;
  for part in
    select c.oid::regclass as rel from pg_catalog.pg_inherits i
    join pg_catalog.pg_class c on c.oid = i.inhrelid
    where i.inhparent = parent and pg_catalog.pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'
  loop
    execute pg_catalog.format('delete from %s where %I < %L', part.rel, key, before);
  end loop;
  return dropped;
end;
$$;
comment on function app_private.drop_daily_partitions(regclass, timestamptz) is
  'Retention by partition: drops every daily partition of parent whose whole day ends at or before `before` (so rows are kept at least until then, at most a day longer), and deletes older rows from its default partition. Waits at most 5 s for the lock a drop needs; a run that gives up is repeated by the next. Returns how many partitions it dropped.';
revoke all on function app_private.drop_daily_partitions(regclass, timestamptz) from public;

-- The access log, partitioned -----------------------------------------------------------------

-- The rename takes an ACCESS EXCLUSIVE lock, held to the end of the migration.
alter table app.access_logs rename to access_logs_unpartitioned;
alter sequence app.access_logs_id_seq rename to access_logs_unpartitioned_id_seq;
alter index app.access_logs_pkey rename to access_logs_unpartitioned_pkey;
drop index app.access_logs_created_at_brin;
drop index app.access_logs_user_id_idx;

create table app.access_logs (
  id bigint generated always as identity,
  request_id text not null,
  user_id uuid,
  method text not null,
  route text not null,
  status smallint not null,
  duration_ms real not null,
  ip inet,
  created_at timestamptz not null default now(),
  primary key (id, created_at)
) partition by range (created_at);
comment on table app.access_logs is
  'One row per /api request, written in batches off the request path by the server only. No foreign key on user_id: checking it cost a row lock per logged request, and a log keeps the id it saw. Partitioned by day on created_at (partitions in app_partitions, made ahead by agora-maintain-partitions); retention (retention.accessLogDays) drops whole days.';
alter table app.access_logs enable row level security;
create policy access_logs_select_admin on app.access_logs for select to authenticated
  using ((select app.is_admin()));
grant select on app.access_logs to authenticated;

select app_private.ensure_daily_partitions('app.access_logs',
  (least((select min(created_at) from app.access_logs_unpartitioned), now() - interval '1 day') at time zone 'UTC')::date,
  ((now() + interval '7 days') at time zone 'UTC')::date);

insert into app.access_logs
  (id, request_id, user_id, method, route, status, duration_ms, ip, created_at)
  overriding system value
select id, request_id, user_id, method, route, status, duration_ms, ip, created_at
from app.access_logs_unpartitioned;
select setval('app.access_logs_id_seq',
  coalesce((select max(id) from app.access_logs_unpartitioned), 0) + 1, false);
drop table app.access_logs_unpartitioned;

create index access_logs_created_at_idx on app.access_logs (created_at desc, id desc);
create index access_logs_route_idx on app.access_logs (route, created_at desc, id desc);
create index access_logs_user_id_idx on app.access_logs (user_id, created_at desc, id desc);

-- Jobs that read the retention ------------------------------------------------------------------

create function app_private.maintain_partitions() returns integer
language plpgsql
set search_path = ''
as $$
declare
  parent regclass;
  created integer := 0;
begin
  for parent in
    -- The tables whose partitions are made here (theirs are in app_partitions; their indexes'
    -- partitions are there too, and inherit from the parents' indexes).
    select distinct i.inhparent::regclass from pg_catalog.pg_inherits i
    join pg_catalog.pg_class c on c.oid = i.inhrelid
    where c.relnamespace = 'app_partitions'::regnamespace and c.relkind in ('r', 'p')
    order by 1
  loop
    created := created + app_private.ensure_daily_partitions(parent,
      (pg_catalog.now() at time zone 'UTC')::date - 1,
      (pg_catalog.now() at time zone 'UTC')::date + 7);
  end loop;
  return created;
end;
$$;
comment on function app_private.maintain_partitions() is
  'pg_cron (agora-maintain-partitions, hourly): makes sure every table partitioned by day into app_partitions (app.access_logs, app.events) has its partitions from yesterday to a week ahead, so a write never lands in the default partition while the job runs. Returns how many partitions it created.';
revoke all on function app_private.maintain_partitions() from public;

select cron.schedule('agora-maintain-partitions', '7 * * * *', 'select app_private.maintain_partitions()');

create or replace function app_private.prune_logs(keep_days integer default null) returns void
language plpgsql
set search_path = ''
as $$
begin
  perform app_private.drop_daily_partitions('app.access_logs',
    pg_catalog.now() - pg_catalog.make_interval(days => coalesce(keep_days, app.config_int('retention', 'accessLogDays'))));
  delete from app.security_events
  where created_at < pg_catalog.now() - pg_catalog.make_interval(days => coalesce(keep_days, app.config_int('retention', 'securityEventDays')));
end;
$$;
comment on function app_private.prune_logs(integer) is
  'pg_cron (agora-prune-logs, daily): drops the access log''s daily partitions older than retention.accessLogDays (default 90) and deletes security events older than retention.securityEventDays (default 365); keep_days, when given, replaces both.';

select cron.unschedule('agora-prune-logs');
select cron.schedule('agora-prune-logs', '17 3 * * *', 'select app_private.prune_logs()');
