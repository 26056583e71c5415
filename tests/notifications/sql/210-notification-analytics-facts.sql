/*
 * The notifications analytics read the analytics facts (20261204000000): app.notifications
 * (by created_at) and app_private.notification_deliveries (by finished_at) are folded from a
 * mark; an insert runs no fact trigger and counts at once from the live tail; marking read
 * moves the read figures of the creation bucket through a statement trigger (read-all: a delta
 * row per bucket, not per notification); a delivery's outcome counts by its time; the fold
 * changes no figure; deletes (the user's, retention's) leave the figures as they were; the
 * median time to read is within its stated bound of the exact one on a spread of values.
 */
begin;
select plan(28);

select tests.create_user('nf.adm@example.test', 'ADMIN');
select tests.create_user('nf.kim@example.test', 'MEMBER');
select tests.create_user('nf.lee@example.test', 'MEMBER');
select tests.user_id('nf.adm@example.test') as adm \gset
select tests.user_id('nf.kim@example.test') as kim \gset
select tests.user_id('nf.lee@example.test') as lee \gset

-- The notifications' figures from the tables, counted independently of the definitions.
create function pg_temp.counted() returns table (metric text, bucket_interval text, bucket timestamptz, key text, value numeric)
language sql as $$
  with i(name) as (values ('hour'), ('day'), ('week'), ('month'))
  select 'notifications.created', i.name, date_trunc(i.name, n.created_at, 'UTC'), n.type::text, count(*)::numeric
  from app.notifications n, i where n.inbox group by 2, 3, 4
  union all
  select 'notifications.read', i.name, date_trunc(i.name, n.created_at, 'UTC'), n.type::text, count(*)
  from app.notifications n, i where n.inbox and n.read_at is not null group by 2, 3, 4
  union all
  select 'notification_deliveries.finished', i.name, date_trunc(i.name, d.finished_at, 'UTC'),
         d.channel || ' ' || d.status || ' ' || n.type, count(*)
  from app_private.notification_deliveries d join app.notifications n on n.id = d.notification_id, i
  where d.finished_at is not null group by 2, 3, 4
$$;
-- The same figures as the readers see them: rollup rows, deltas and the rows above the marks.
create function pg_temp.rolled() returns table (metric text, bucket_interval text, bucket timestamptz, key text, value numeric)
language sql as $$
  select r.metric, r.bucket_interval, r.bucket, r.key, sum(r.value)
  from (
    select f.metric, f.bucket_interval, f.bucket, f.key, f.value from app_private.analytics_facts f
    where f.metric in ('notifications.created', 'notifications.read', 'notification_deliveries.finished')
    union all
    select d.metric, d.bucket_interval, d.bucket, d.key, d.delta from app_private.analytics_fact_deltas d
    where d.metric in ('notifications.created', 'notifications.read', 'notification_deliveries.finished')
    union all
    select m.metric, i.name, l.bucket, l.key, l.value
    from unnest(array['notifications.created', 'notifications.read', 'notification_deliveries.finished']) m(metric)
    cross join (values ('hour'), ('day'), ('week'), ('month')) i(name)
    cross join lateral app_private.analytics_fact_tail(m.metric, i.name) l
  ) r
  group by 1, 2, 3, 4
  having sum(r.value) <> 0
$$;
create function pg_temp.drift() returns bigint
language sql as $$
  select count(*) from pg_temp.counted() c
  full join pg_temp.rolled() r using (metric, bucket_interval, bucket, key)
  where c.value is distinct from r.value
$$;
-- A figure of today's notifications as the page shows it (ADMIN).
create function pg_temp.today(field text, only_type app.notification_type default null) returns numeric
language sql as $$
  select (app.notification_analytics(now() - interval '1 minute', now(), 'day', only_type) -> 'totals' ->> field)::numeric
$$;

select is(
  (select array_agg(source order by source) from app_private.analytics_fold_marks),
  array['app.messages', 'app.notifications', 'app.orders', 'app_private.notification_deliveries'],
  'Notifications and deliveries are folded from a mark, as messages and orders.');
select is(
  (select count(*)::int from pg_trigger
   where tgrelid in ('app.notifications'::regclass, 'app_private.notification_deliveries'::regclass)
     and tgname like '%facts%' and ((tgtype & 4) <> 0 or (tgtype & 8) <> 0)),
  0, 'No fact trigger runs on an insert or a delete of a notification or a delivery.');

-- The marks just below this transaction's rows: everything earlier is folded (a recount), and
-- the rows written here 5 s "ago" are above the marks until the fold below.
select app_private.recount_analytics_facts();
update app_private.analytics_fold_marks set folded_before = now() - interval '10 seconds'
where source in ('app.notifications', 'app_private.notification_deliveries');
select is(pg_temp.drift(), 0::bigint, 'After a recount the figures equal the tables.');

select tests.authenticate_as(:'adm');
select pg_temp.today('created') as b_created, pg_temp.today('read') as b_read,
       pg_temp.today('created', 'WALLET') as b_wallet, pg_temp.today('read', 'WALLET') as b_wallet_read \gset
select tests.clear_authentication();
select count(*) as b_deltas from app_private.analytics_fact_deltas \gset

-- 60 notifications created 5 s ago: one to kim, 50 to lee (read-all below), 9 hidden or WALLET.
insert into app.notifications (user_id, type, title, body, created_at, inbox)
select :'kim'::uuid, 'SYSTEM'::app.notification_type, 'one', '', now() - interval '5 seconds', true
union all
select :'lee'::uuid, 'SYSTEM', 'many ' || g, '', now() - interval '5 seconds', true from generate_series(1, 50) g
union all
select :'lee'::uuid, 'WALLET', 'wallet ' || g, '', now() - interval '5 seconds', true from generate_series(1, 4) g
union all
select :'lee'::uuid, 'WALLET', 'hidden ' || g, '', now() - interval '5 seconds', false from generate_series(1, 5) g;
insert into app_private.notification_deliveries (notification_id, channel, device_id)
select n.id, 'email', null from app.notifications n where n.user_id = :'lee' and n.type = 'WALLET' and n.inbox;

select tests.authenticate_as(:'adm');
select is(pg_temp.today('created') - :'b_created'::numeric, 55::numeric,
  'Inbox notifications created seconds ago count at once, from the live tail (hidden ones not).');
select is(pg_temp.today('created', 'WALLET') - :'b_wallet'::numeric, 4::numeric,
  'The type filter narrows the figure to that type.');
select tests.clear_authentication();
select is((select count(*) from app_private.analytics_fact_deltas) - :'b_deltas'::bigint, 0::bigint,
  'The inserts appended no delta.');

-- Outcomes as app_private.record_deliveries writes them, in a transaction begun 3 s ago (its
-- now()), so that the fold below can take them in.
update app_private.notification_deliveries d set status = 'sent', finished_at = now() - interval '3 seconds'
where d.notification_id in (select n.id from app.notifications n where n.user_id = :'lee' and n.type = 'WALLET' and n.title in ('wallet 1', 'wallet 2'));
update app_private.notification_deliveries d set status = 'failed', finished_at = now() - interval '3 seconds', error_code = 'x'
where d.notification_id in (select n.id from app.notifications n where n.user_id = :'lee' and n.type = 'WALLET' and n.title = 'wallet 3');
select tests.authenticate_as(:'adm');
select results_eq(
  $$ select x from jsonb_array_elements(app.notification_analytics(date_trunc('day', now()), now(), 'day', 'WALLET') -> 'byChannel') x
     where x ->> 'channel' = 'email' $$,
  $$ values ('{"channel": "email", "sent": 2, "failed": 1}'::jsonb) $$,
  'Delivery outcomes count at once by the time of their outcome, by the notification''s type.');
select tests.clear_authentication();
select is((select count(*) from app_private.analytics_fact_deltas) - :'b_deltas'::bigint, 0::bigint,
  'An outcome appended no delta (it is above the mark).');
select is(pg_temp.drift(), 0::bigint, 'The figures equal the tables before the fold.');

-- The fold: every figure the same before and after.
select tests.authenticate_as(:'adm');
select app.notification_analytics(date_trunc('day', now()) - interval '1 day', now(), 'hour') as before_fold \gset
select tests.clear_authentication();
select cmp_ok(app_private.fold_analytics_facts(interval '0'), '>=', 63,
  'The fold takes in the 60 notifications and the 3 outcomes.');
select ok(
  (select bool_and(k.folded_before = now()) from app_private.analytics_fold_marks k
   where k.source in ('app.notifications', 'app_private.notification_deliveries')),
  'Their marks moved to this transaction''s start (the horizon; nothing of it is folded).');
select tests.authenticate_as(:'adm');
select is(app.notification_analytics(date_trunc('day', now()) - interval '1 day', now(), 'hour'), :'before_fold'::jsonb,
  'The figures are the same after the fold, hour by hour.');
select tests.clear_authentication();
select coalesce(sum(c.value), 0)::int as hour_created from pg_temp.counted() c
where c.metric = 'notifications.created' and c.bucket_interval = 'hour'
  and c.bucket = date_trunc('hour', now() - interval '5 seconds') \gset
select is(
  (select (x ->> 'created')::int from jsonb_array_elements((:'before_fold'::jsonb) -> 'series') x
   where (x ->> 't')::timestamptz = date_trunc('hour', now() - interval '5 seconds')),
  :'hour_created'::int, 'interval=hour: the hour''s point counts the notifications created in that hour.');
select is(jsonb_array_length((:'before_fold'::jsonb) -> 'series'),
  (select count(*)::int from generate_series(date_trunc('day', now()) - interval '1 day', now(), interval '1 hour')),
  'interval=hour: one point per hour of the range, zero-filled.');
select tests.clear_authentication();

-- Marking read, now that they are below the mark: a delta in the creation bucket.
create temporary table folded as
select (select count(*) from app_private.analytics_fact_deltas) as deltas;
select tests.authenticate_as(:'kim');
update app.notifications set read_at = now() where user_id = :'kim' and title = 'one';
select tests.authenticate_as(:'adm');
select is(pg_temp.today('read') - :'b_read'::numeric, 1::numeric,
  'Marking one read counts it read in its creation day.');
select tests.clear_authentication();
select is((select count(*) from app_private.analytics_fact_deltas) - (select deltas from folded), 8::bigint,
  'One read appends 8 delta rows: read and its bin of the histogram, per hour, day, week and month.');

-- Read-all of lee's 54 unread: one statement, one delta row per metric, bucket and key.
select tests.authenticate_as(:'lee');
update app.notifications set read_at = now() where user_id = :'lee' and read_at is null;
select tests.authenticate_as(:'adm');
select is(pg_temp.today('read') - :'b_read'::numeric, 55::numeric,
  'Read-all counts its 54 inbox notifications read (the hidden ones are no figure).');
select is(pg_temp.today('read', 'WALLET') - :'b_wallet_read'::numeric, 4::numeric,
  'read by type: the 4 WALLET ones.');
select tests.clear_authentication();
select is((select count(*) from app_private.analytics_fact_deltas) - (select deltas from folded), 8::bigint + 16,
  'Read-all appended 16 delta rows (2 types x 2 metrics x 4 intervals), not one per notification.');
select is(pg_temp.drift(), 0::bigint, 'The figures equal the tables after the reads.');
select ok(
  (select count(*) = 0 from app_private.notifications_facts_tail('notifications.created', 'day')),
  'Nothing is left in the live tail of this transaction''s past.');

-- History: deleting notifications (the user's DELETE, an account's cascade) and pruning
-- deliveries (retention) leave the figures as they were.
select tests.authenticate_as(:'adm');
select app.notification_analytics(now() - interval '1 minute', now(), 'day') as before_delete \gset
select tests.clear_authentication();
delete from app_private.notification_deliveries d
where d.notification_id in (select n.id from app.notifications n where n.user_id = :'lee');
delete from app.notifications where user_id = :'lee' and title like 'many %';
select tests.authenticate_as(:'adm');
select is(app.notification_analytics(now() - interval '1 minute', now(), 'day'), :'before_delete'::jsonb,
  'Deleted notifications and pruned deliveries stay in the figures (analytics are history).');
select tests.clear_authentication();

select tests.authenticate_as(:'kim');
select throws_ok($$ select app.notification_analytics(now() - interval '1 day', now(), 'hour') $$,
  '42501', null, 'Below ADMIN, the analytics are refused.');
select tests.clear_authentication();

-- The median time to read against the exact one, on spreads of values, a day each in 2019.
-- Below the mark: written with past times, so a recount takes them in.
insert into app.notifications (user_id, type, title, body, created_at, read_at, inbox)
select :'kim', 'SYSTEM', 'spread', '', d.day + interval '1 hour',
       d.day + interval '1 hour' + make_interval(secs => s.seconds), true
from (values
  (1, '2019-05-01'::timestamptz, array[0.4]),
  (2, '2019-05-02', array[1.0, 1000.0]),
  (3, '2019-05-03', array[3.0, 7.5, 86400.0]),
  (4, '2019-05-04', (select array_agg(power(1.2, g)) from generate_series(0, 99) g)),
  (5, '2019-05-05', (select array_agg(round((g * 7919 % 100003)::numeric / 7.0, 3)) from generate_series(1, 101) g)),
  (6, '2019-05-06', (select array_agg(g * 86.4) from generate_series(1, 1000) g)),
  (7, '2019-05-07', array[2.0, 2.0, 2.0, 2.0]),
  (8, '2019-05-08', (select array_agg(30 + g * 0.001) from generate_series(1, 500) g))
) d(n, day, values)
cross join lateral unnest(d.values) s(seconds);
select app_private.recount_analytics_facts();
select tests.authenticate_as(:'adm');
select jsonb_object_agg(d.day::date,
         app.notification_analytics(d.day, d.day + interval '23 hours', 'day', 'SYSTEM') -> 'medianSecondsToRead') as estimated
from generate_series('2019-05-01'::timestamptz, '2019-05-08', interval '1 day') d(day) \gset
select tests.clear_authentication();
create temporary table medians as
select d.day,
       ((:'estimated'::jsonb) ->> d.day::date::text)::numeric as estimated,
       (select percentile_cont(0.5) within group (order by extract(epoch from n.read_at - n.created_at))
        from app.notifications n
        where n.title = 'spread' and n.created_at >= d.day and n.created_at < d.day + interval '1 day')::numeric as exact
from generate_series('2019-05-01'::timestamptz, '2019-05-08', interval '1 day') d(day);
select is(
  (select array_agg(m.day::date order by m.day) from medians m
   where abs(m.estimated - m.exact) > 1 + (power(2, 1 / 8.0) - 1) * m.exact),
  null,
  'The median time to read is within 1 s + 9.1 % of the exact median on every spread (1, 2, 3, 4, 100, 101, 500, 1,000 values).');
select diag(string_agg(format('%s: estimated %s, exact %s', m.day::date, m.estimated, round(m.exact, 3)), '; ' order by m.day))
from medians m;
select ok((select bool_and(m.estimated is not null) from medians m), 'Every spread has a median.');
select ok((select abs(m.estimated - m.exact) < 0.2 * m.exact from medians m where m.day = '2019-05-02'),
  'Two values far apart (1 s and 1,000 s): the mean of the two middle ones, not the lower one.');

-- interval=hour over days: the histogram is read in whole days where it can (fewer rows), the
-- same population as hour by hour.
select results_eq(
  $$ select bucket_interval, first_bucket, last_bucket
     from app_private.analytics_tiles('hour', '2019-05-01 22:00+00', '2019-05-04 03:00+00') $$,
  $$ values ('hour', '2019-05-01 22:00+00'::timestamptz, '2019-05-01 23:00+00'::timestamptz),
            ('day', '2019-05-02 00:00+00', '2019-05-03 00:00+00'),
            ('hour', '2019-05-04 00:00+00', '2019-05-04 02:00+00') $$,
  'Hours up to the first whole day, whole days, the hours after the last one.');
select tests.authenticate_as(:'adm');
select is(
  app.notification_analytics('2019-05-01 00:00+00', '2019-05-08 23:00+00', 'hour', 'SYSTEM') -> 'medianSecondsToRead',
  app.notification_analytics('2019-05-01 00:00+00', '2019-05-08 23:00+00', 'day', 'SYSTEM') -> 'medianSecondsToRead',
  'interval=hour: the median of eight whole days is the one by day.');
select tests.clear_authentication();

select * from finish();
rollback;
