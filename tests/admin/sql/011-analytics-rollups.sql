/*
 * The analytics rollups (app_private.analytics_counts, app_private.activity_members): kept by the
 * writes of users, security events, sessions and access-log batches, a user active once per
 * bucket however often, read by an ADMIN only through app.analytics_series().
 */
begin;
select plan(16);

create function pg_temp.figure(metric text, bucket_interval text, at timestamptz) returns bigint
language sql as $$
  select coalesce((select c.value from app_private.analytics_counts c
    where c.metric = figure.metric and c.bucket_interval = figure.bucket_interval
      and c.bucket = date_trunc(figure.bucket_interval, figure.at, 'UTC')), 0)
   + coalesce((select sum(d.delta) from app_private.analytics_count_deltas d
    where d.metric = figure.metric and d.bucket_interval = figure.bucket_interval
      and d.bucket = date_trunc(figure.bucket_interval, figure.at, 'UTC')), 0)::bigint
$$;
create temporary table before_figures as
select m.metric, i.name as bucket_interval, pg_temp.figure(m.metric, i.name, now()) as value
from (values ('signups'), ('signins'), ('active')) m(metric)
cross join (values ('day'), ('week'), ('month')) i(name);
create function pg_temp.added(metric text, bucket_interval text) returns bigint
language sql as $$
  select pg_temp.figure(added.metric, added.bucket_interval, now()) - b.value
  from before_figures b where b.metric = added.metric and b.bucket_interval = added.bucket_interval
$$;

do $$
begin
  perform tests.create_user('rollups.kim@example.test');
  perform tests.create_user('rollups.lee@example.test');
  perform tests.create_user('rollups.admin@example.test', 'ADMIN');
end
$$;

select is(pg_temp.added('signups', 'day'), 3::bigint, 'Three new users are three sign-ups today...');
select is(pg_temp.added('signups', 'month'), 3::bigint, '... and this month.');

insert into app.security_events (type, user_id) values
  ('auth.signin', tests.user_id('rollups.kim@example.test')),
  ('auth.signin', tests.user_id('rollups.kim@example.test')),
  ('auth.refresh_reuse', tests.user_id('rollups.kim@example.test'));
select is(pg_temp.added('signins', 'week'), 2::bigint, 'Two auth.signin events are two sign-ins; another type is none.');

-- tests.create_user made a session each? Count activity from here on.
delete from before_figures where metric = 'active';
insert into before_figures
select 'active', i.name, pg_temp.figure('active', i.name, now())
from (values ('day'), ('week'), ('month')) i(name);

insert into app.access_logs (request_id, user_id, method, route, status, duration_ms)
select 'rollup-' || g, tests.user_id(case when g % 2 = 0 then 'rollups.kim@example.test' else 'rollups.lee@example.test' end),
       'GET', '/api/test/rollups', 200, 1
from generate_series(1, 10) g;
insert into app.access_logs (request_id, user_id, method, route, status, duration_ms)
values ('rollup-again', tests.user_id('rollups.kim@example.test'), 'GET', '/api/test/rollups', 200, 1),
       ('rollup-anonymous', null, 'GET', '/api/test/rollups', 200, 1);
insert into app.sessions (user_id, provider, expires_at)
values (tests.user_id('rollups.kim@example.test'), 'email', now() + interval '1 day');
select ok(pg_temp.added('active', 'day') <= 2,
  'Ten requests, another batch, and a session of two users add at most two active users today (fewer if they were active already)...');
select is(
  (select count(*)::int from app_private.activity_members
   where bucket_interval = 'day' and bucket = date_trunc('day', now(), 'UTC')
     and user_id in (tests.user_id('rollups.kim@example.test'), tests.user_id('rollups.lee@example.test'))),
  2, '... both are members of today''s bucket once...');
select is(
  pg_temp.figure('active', 'day', now()),
  (select count(*) from app_private.activity_members
   where bucket_interval = 'day' and bucket = date_trunc('day', now(), 'UTC')),
  '... and today''s count is its members.');
select lives_ok($$ select app_private.compact_counters() $$, 'Folding the deltas in...');
select is(
  (select value from app_private.analytics_counts
   where metric = 'active' and bucket_interval = 'day' and bucket = date_trunc('day', now(), 'UTC')),
  (select count(*) from app_private.activity_members
   where bucket_interval = 'day' and bucket = date_trunc('day', now(), 'UTC')),
  '... leaves the same figure in the row.');

update app.sessions set refreshed_at = now() + interval '40 days'
where user_id = tests.user_id('rollups.kim@example.test');
select is(pg_temp.figure('active', 'day', now() + interval '40 days'), 1::bigint,
  'A refreshed session makes its user active on the day of the refresh.');

delete from app.users where id = tests.user_id('rollups.lee@example.test');
select is(
  (select count(*)::int from app_private.activity_members m
   where m.user_id not in (select id from app.users)
     and m.bucket >= date_trunc('month', now(), 'UTC')),
  0, 'A deleted account leaves no membership behind (its counts stay).');

select lives_ok($$ select app_private.prune_activity_members() $$, 'The prune runs.');

-- ---------------------------------------------------------------------------------------------
-- Who reads them
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok($$ select * from app.analytics_series('signups', 'day', now() - interval '1 day', now()) $$,
  '42501', null, 'A visitor cannot read the analytics.');
select tests.clear_authentication();

select tests.authenticate_as(tests.user_id('rollups.kim@example.test'));
select throws_ok($$ select * from app.analytics_series('signups', 'day', now() - interval '1 day', now()) $$,
  '42501', 'only an ADMIN reads the analytics', 'A user cannot read the analytics.');
select throws_ok($$ select * from app_private.analytics_counts $$, '42501', null,
  'A user cannot read the rollups.');
select tests.clear_authentication();

-- What the series must say, read by the test's own role (the rollups are server-only).
create temporary table expected as
select array[pg_temp.figure('signups', 'day', now() - interval '2 days'),
             pg_temp.figure('signups', 'day', now() - interval '1 day'),
             pg_temp.figure('signups', 'day', now())] as points;
grant select on expected to authenticated;

select tests.authenticate_as(tests.user_id('rollups.admin@example.test'));
select is(
  (select array_agg(value order by t) from app.analytics_series('signups', 'day', now() - interval '2 days', now())),
  (select points from expected),
  'An ADMIN reads a zero-filled series, a point per day from the day of `from`.');
select throws_ok($$ select * from app.analytics_series('revenue', 'day', now() - interval '1 day', now()) $$,
  '22023', null, 'An unknown metric is refused.');
select tests.clear_authentication();

select * from finish();
rollback;
