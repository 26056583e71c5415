/*
 * The analytics page's user figures from rollups kept by the writes (issue 30): the page counted
 * sign-ups over app.users, sign-ins over app.security_events and active users as the distinct
 * users of every session and 30 days of access log on each request (seconds at a year of data).
 *
 * - app_private.analytics_counts: one row per (metric, interval, bucket) for the metrics
 *   `signups` (a user row inserted), `signins` (a security event auth.signin) and `active` (a
 *   user with a session made or refreshed, or a request in the access log, in the bucket), per
 *   UTC day, ISO week and month. Statement-level triggers on app.users, app.security_events,
 *   app.sessions and app.access_logs append their deltas to app_private.analytics_count_deltas
 *   in the writer's transaction (inserts only: writers never wait for a counter row, so
 *   sign-ins do not queue behind each other and cannot deadlock on it); pg_cron job
 *   agora-compact-counters folds them in every minute, and a figure is its row plus its deltas.
 * - app_private.activity_members: which users were active in each open bucket, so a user counts
 *   once per bucket (insert ... on conflict do nothing: of two transactions adding the same user
 *   the second waits for the first and adds nothing if it commits). Members of buckets closed two
 *   days ago are pruned (agora-prune-activity): the count stays.
 * - app.analytics_series(): a zero-filled series of a metric for an ADMIN, what the page reads.
 *
 * Figures are whole buckets: the first bucket of a range that starts mid-bucket counts the whole
 * bucket (it counted only the part in the range). Sign-ups of deleted accounts stay counted;
 * sign-ins stay counted after their security events are pruned. The counts of the data already
 * there are filled by this migration.
 */

create table app_private.analytics_counts (
  metric text not null check (metric in ('signups', 'signins', 'active')),
  bucket_interval text not null check (bucket_interval in ('day', 'week', 'month')),
  bucket timestamptz not null,
  value bigint not null default 0 check (value >= 0),
  primary key (metric, bucket_interval, bucket)
);
comment on table app_private.analytics_counts is
  'The admin analytics'' user figures per UTC day, ISO week and month (sign-ups, sign-ins, active users), kept by the writes (statement triggers on app.users, app.security_events, app.sessions, app.access_logs), so the page reads a row per bucket instead of counting the tables. Server only: read through app.analytics_series().';
alter table app_private.analytics_counts enable row level security;

create table app_private.analytics_count_deltas (
  id bigint generated always as identity primary key,
  metric text not null check (metric in ('signups', 'signins', 'active')),
  bucket_interval text not null check (bucket_interval in ('day', 'week', 'month')),
  bucket timestamptz not null,
  delta bigint not null
);
create index analytics_count_deltas_bucket_idx
  on app_private.analytics_count_deltas (metric, bucket_interval, bucket);
comment on table app_private.analytics_count_deltas is
  'Additions to app_private.analytics_counts not folded in yet: appended by the rollup triggers, folded in and deleted by app_private.compact_counters (pg_cron, every minute). Append-only for writers, so they never contend for a counter row. Server only.';
alter table app_private.analytics_count_deltas enable row level security;

create table app_private.activity_members (
  bucket_interval text not null check (bucket_interval in ('day', 'week', 'month')),
  bucket timestamptz not null,
  user_id uuid not null,
  primary key (bucket_interval, bucket, user_id)
);
create index activity_members_user_id_idx on app_private.activity_members (user_id);
comment on table app_private.activity_members is
  'Which users were active in each open analytics bucket, so a user counts once per bucket in app_private.analytics_counts (metric active). Kept until two days after the bucket closes (app_private.prune_activity_members); a deleted account''s rows go with it. Server only.';
alter table app_private.activity_members enable row level security;

create function app_private.add_analytics_counts(metric text, ats timestamptz[]) returns void
language sql
set search_path = ''
as $$
  insert into app_private.analytics_count_deltas (metric, bucket_interval, bucket, delta)
  select add_analytics_counts.metric, i.name, date_trunc(i.name, a.at, 'UTC'), count(*)
  from unnest(ats) a(at)
  cross join (values ('day'), ('month'), ('week')) i(name)
  where a.at is not null
  group by 1, 2, 3
$$;
comment on function app_private.add_analytics_counts(text, timestamptz[]) is
  'Adds one to a metric''s day, week and month bucket for each time given: appends a delta per bucket (an insert, never an update of a shared row).';
revoke all on function app_private.add_analytics_counts(text, timestamptz[]) from public;

create function app_private.record_activity(users uuid[], ats timestamptz[]) returns void
language sql
set search_path = ''
as $$
  with facts as (
    select distinct i.name as bucket_interval, date_trunc(i.name, a.at, 'UTC') as bucket, a.user_id
    from unnest(users, ats) a(user_id, at)
    cross join (values ('day'), ('month'), ('week')) i(name)
    where a.user_id is not null and a.at is not null
  ), added as (
    insert into app_private.activity_members (bucket_interval, bucket, user_id)
    select bucket_interval, bucket, user_id from facts order by 1, 2, 3
    on conflict do nothing
    returning bucket_interval, bucket
  )
  insert into app_private.analytics_count_deltas (metric, bucket_interval, bucket, delta)
  select 'active', bucket_interval, bucket, count(*) from added
  group by 2, 3
$$;
comment on function app_private.record_activity(uuid[], timestamptz[]) is
  'Records that users were active at times (pairs of the two arrays): each user new to a day, week or month bucket becomes its member and adds one to its active count (a delta). Members are inserted in key order, so concurrent writers never deadlock; a user added by two transactions at once counts once (the second waits for the first and adds nothing if it commits).';
revoke all on function app_private.record_activity(uuid[], timestamptz[]) from public;

create function app_private.count_signups() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.add_analytics_counts('signups', (select array_agg(n.created_at) from new_rows n));
  return null;
end;
$$;
comment on function app_private.count_signups() is
  'After insert on app.users, per statement: the new users are sign-ups of their created_at''s buckets. security definer: whoever creates a user may not write the rollups.';
revoke all on function app_private.count_signups() from public;

create function app_private.count_signins() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.add_analytics_counts('signins',
    (select array_agg(n.created_at) from new_rows n where n.type = 'auth.signin'));
  return null;
end;
$$;
comment on function app_private.count_signins() is
  'After insert on app.security_events, per statement: each auth.signin event is a sign-in of its buckets. security definer: the server''s writers may not write the rollups directly.';
revoke all on function app_private.count_signins() from public;

create function app_private.record_session_activity() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform app_private.record_activity(
      (select array_agg(n.user_id order by n.id) from new_rows n),
      (select array_agg(n.created_at order by n.id) from new_rows n));
  else
    perform app_private.record_activity(
      (select array_agg(n.user_id order by n.id) from new_rows n join old_rows o on o.id = n.id
       where n.refreshed_at is distinct from o.refreshed_at),
      (select array_agg(n.refreshed_at order by n.id) from new_rows n join old_rows o on o.id = n.id
       where n.refreshed_at is distinct from o.refreshed_at));
  end if;
  return null;
end;
$$;
comment on function app_private.record_session_activity() is
  'After insert or update on app.sessions, per statement: a session made or refreshed makes its user active in the buckets of that time. security definer: sessions are written by users and the server, the rollups by neither.';
revoke all on function app_private.record_session_activity() from public;

create function app_private.record_request_activity() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.record_activity(
    (select array_agg(n.user_id order by n.id) from new_rows n where n.user_id is not null),
    (select array_agg(n.created_at order by n.id) from new_rows n where n.user_id is not null));
  return null;
end;
$$;
comment on function app_private.record_request_activity() is
  'After insert on app.access_logs, per statement (one per batch of the log writer): each signed-in request makes its user active in the buckets of its time. security definer for the same reason as the other rollup triggers.';
revoke all on function app_private.record_request_activity() from public;

create function app_private.forget_activity() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from app_private.activity_members m where m.user_id in (select o.id from old_rows o);
  return null;
end;
$$;
comment on function app_private.forget_activity() is
  'After delete on app.users, per statement: a deleted account''s memberships of open activity buckets go with it (the counts, which name nobody, stay).';
revoke all on function app_private.forget_activity() from public;

create trigger users_count_signups after insert on app.users
  referencing new table as new_rows
  for each statement execute function app_private.count_signups();
create trigger users_forget_activity after delete on app.users
  referencing old table as old_rows
  for each statement execute function app_private.forget_activity();
create trigger security_events_count_signins after insert on app.security_events
  referencing new table as new_rows
  for each statement execute function app_private.count_signins();
create trigger sessions_record_created after insert on app.sessions
  referencing new table as new_rows
  for each statement execute function app_private.record_session_activity();
create trigger sessions_record_refreshed after update on app.sessions
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.record_session_activity();
create trigger access_logs_record_activity after insert on app.access_logs
  referencing new table as new_rows
  for each statement execute function app_private.record_request_activity();

-- The figures of the data already there.
insert into app_private.analytics_counts (metric, bucket_interval, bucket, value)
select 'signups', i.name, date_trunc(i.name, u.created_at, 'UTC'), count(*)
from app.users u cross join (values ('day'), ('week'), ('month')) i(name)
group by 2, 3
union all
select 'signins', i.name, date_trunc(i.name, e.created_at, 'UTC'), count(*)
from app.security_events e cross join (values ('day'), ('week'), ('month')) i(name)
where e.type = 'auth.signin'
group by 2, 3;

insert into app_private.activity_members (bucket_interval, bucket, user_id)
select distinct i.name, date_trunc(i.name, a.at, 'UTC'), a.user_id
from (
  select user_id, created_at as at from app.sessions
  union all
  select user_id, refreshed_at from app.sessions where refreshed_at is not null
  union all
  select user_id, created_at from app.access_logs where user_id is not null
) a
cross join (values ('day'), ('week'), ('month')) i(name);
insert into app_private.analytics_counts (metric, bucket_interval, bucket, value)
select 'active', bucket_interval, bucket, count(*) from app_private.activity_members group by 2, 3;

create function app_private.prune_activity_members() returns integer
language sql
set search_path = ''
as $$
  with gone as (
    delete from app_private.activity_members m
    where m.bucket < date_trunc(m.bucket_interval, now() - interval '2 days', 'UTC')
    returning 1
  )
  select count(*)::integer from gone
$$;
comment on function app_private.prune_activity_members() is
  'pg_cron (agora-prune-activity, hourly): deletes the members of activity buckets that closed more than two days ago (a late access-log batch can still land in yesterday''s); their counts stay in app_private.analytics_counts. Returns how many rows went.';
revoke all on function app_private.prune_activity_members() from public;

select cron.schedule('agora-prune-activity', '13 * * * *', 'select app_private.prune_activity_members()');
select app_private.prune_activity_members();

create function app.analytics_series(metric text, bucket_interval text, range_from timestamptz, range_to timestamptz)
returns table (t timestamptz, value bigint)
language plpgsql
stable
security definer
set search_path = ''
set timezone = 'UTC'
as $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads the analytics' using errcode = '42501';
  end if;
  if metric not in ('signups', 'signins', 'active') or bucket_interval not in ('day', 'week', 'month') then
    raise exception 'unknown metric % or interval %', metric, bucket_interval using errcode = '22023';
  end if;
  return query
    select b.t,
      coalesce((select c.value from app_private.analytics_counts c
                where c.metric = analytics_series.metric
                  and c.bucket_interval = analytics_series.bucket_interval and c.bucket = b.t), 0)
      + coalesce((select sum(d.delta) from app_private.analytics_count_deltas d
                  where d.metric = analytics_series.metric
                    and d.bucket_interval = analytics_series.bucket_interval and d.bucket = b.t), 0)::bigint
    from generate_series(date_trunc(bucket_interval, range_from, 'UTC'), range_to,
                         ('1 ' || bucket_interval)::interval) b(t)
    order by b.t;
end;
$$;
comment on function app.analytics_series(text, text, timestamptz, timestamptz) is
  'GET /api/admin/analytics: a metric (signups, signins, active) per UTC day, ISO week or month from the bucket holding range_from to range_to, zero where nothing happened, from the rollups (app_private.analytics_counts and the deltas not folded in yet): a row per bucket, whatever the size of the tables. ADMIN only (42501). security definer: the rollups are server-only; it returns counts, no person.';
revoke all on function app.analytics_series(text, text, timestamptz, timestamptz) from public;
grant execute on function app.analytics_series(text, text, timestamptz, timestamptz) to authenticated;

create function app_private.compact_counters() returns integer
language plpgsql
set search_path = ''
as $$
declare
  folded integer;
  more integer;
begin
  folded := app_private.compact_user_counts();
  with gone as (
    delete from app_private.analytics_count_deltas d
    returning d.metric, d.bucket_interval, d.bucket, d.delta
  ), sums as (
    select g.metric, g.bucket_interval, g.bucket, sum(g.delta)::bigint as delta, count(*)::integer as rows
    from gone g group by 1, 2, 3
  ), added as (
    insert into app_private.analytics_counts as c (metric, bucket_interval, bucket, value)
    select s.metric, s.bucket_interval, s.bucket, s.delta from sums s order by 1, 2, 3
    on conflict (metric, bucket_interval, bucket) do update set value = c.value + excluded.value
  )
  select coalesce(sum(s.rows), 0)::integer into more from sums s;
  return folded + more;
end;
$$;
comment on function app_private.compact_counters() is
  'pg_cron (agora-compact-counters, every minute): folds the appended deltas of the user counts and of the analytics rollups into their rows, each in the same transaction as their deletion, so a reader (row plus deltas, one statement) sees the same figure before and after. Returns how many delta rows it folded.';
revoke all on function app_private.compact_counters() from public;

select cron.schedule('agora-compact-counters', '* * * * *', 'select app_private.compact_counters()');
select app_private.compact_counters();
