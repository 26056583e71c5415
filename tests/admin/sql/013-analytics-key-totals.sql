/*
 * app_private.fact_key_totals (the store section's top vendors): a metric's total per key over a
 * range's buckets equals the sum of its buckets as app_private.fact_series returns them (rollup
 * rows and deltas), for daily ranges whose whole ISO weeks it reads from the weekly rows (ranges
 * starting and ending on any weekday, inside one week, over several, across a month's end), for
 * weekly and monthly ranges, and for the keys asked only. Server only.
 */
begin;
select plan(9);

-- Sixty days of a made-up metric for three keys (no table's tail: 'test.' is no source), its
-- weeks and months summed from the days as the fold keeps every interval from the same facts,
-- and deltas not yet folded on some days, weeks and months.
create temporary table days as
select 'test.sales'::text as metric, d::timestamptz as bucket, k as key,
       ((extract(doy from d)::int * 7 + ascii(k)) % 13 + 1)::numeric as value
from generate_series(timestamptz '2031-02-20', timestamptz '2031-04-20', interval '1 day') d,
     unnest(array['a', 'b', 'c']) k
where not (k = 'c' and extract(dow from d) = 3);
insert into app_private.analytics_facts (metric, bucket_interval, bucket, key, value)
select metric, 'day', bucket, key, value from days
union all
select metric, i, date_trunc(i, bucket, 'UTC'), key, sum(value)
from days, unnest(array['week', 'month']) i group by metric, i, date_trunc(i, bucket, 'UTC'), key;
insert into app_private.analytics_fact_deltas (metric, bucket_interval, bucket, key, delta)
select 'test.sales', i, date_trunc(i, b, 'UTC'), k, v
from (values (timestamptz '2031-03-04 10:00', 'a', 5::numeric), ('2031-03-18 23:00', 'b', -2),
             ('2031-04-01 00:00', 'c', 40), ('2031-02-22 12:00', 'a', 1)) x(b, k, v),
     unnest(array['day', 'week', 'month']) i;

-- The reference: every bucket of the range from fact_series, summed per key.
create function pg_temp.by_buckets(bucket_interval text, range_from timestamptz, range_to timestamptz)
returns table (key text, value numeric) language sql as $$
  select s.key, sum(s.value) from app_private.fact_series('test.sales', bucket_interval, range_from, range_to) s
  group by s.key
$$;
create temporary table ranges as
select * from (values
  ('day', timestamptz '2031-03-05 13:00', timestamptz '2031-03-29 02:00'),  -- Wednesday to Saturday
  ('day', '2031-03-03 00:00', '2031-03-16 23:59'),                          -- Monday to Sunday
  ('day', '2031-03-04 00:00', '2031-03-07 00:00'),                          -- inside one week
  ('day', '2031-02-20 00:00', '2031-04-20 12:00'),                          -- everything
  ('day', '2031-03-10 00:00', '2031-03-10 00:00'),                          -- one day
  ('week', '2031-03-05 13:00', '2031-04-02 02:00'),
  ('month', '2031-02-25 00:00', '2031-04-02 00:00')) r(bucket_interval, range_from, range_to);

select is(
  (select count(*)::int from ranges r
   where exists (
     (select * from pg_temp.by_buckets(r.bucket_interval, r.range_from, r.range_to)
      except select * from app_private.fact_key_totals('test.sales', r.bucket_interval, r.range_from, r.range_to))
     union all
     (select * from app_private.fact_key_totals('test.sales', r.bucket_interval, r.range_from, r.range_to)
      except select * from pg_temp.by_buckets(r.bucket_interval, r.range_from, r.range_to)))),
  0, 'Every range''s totals per key equal the sum of its buckets, deltas included.');
select isnt(
  (select count(*)::int from app_private.fact_key_totals('test.sales', 'day', '2031-03-05 13:00', '2031-03-29 02:00')),
  0, 'The totals are not empty (the comparison above compares something).');

-- Whole weeks come from the weekly rows: change a weekly row alone and a range holding that week
-- moves with it, a range holding only some of its days does not.
update app_private.analytics_facts set value = value + 1000
where metric = 'test.sales' and bucket_interval = 'week' and bucket = '2031-03-10' and key = 'a';
select is(
  (select value from app_private.fact_key_totals('test.sales', 'day', '2031-03-03', '2031-03-16 12:00') where key = 'a')
  - (select value from pg_temp.by_buckets('day', '2031-03-03', '2031-03-16 12:00') where key = 'a'),
  1000::numeric, 'A daily range reads its whole ISO weeks from the weekly rows.');
select is(
  (select value from app_private.fact_key_totals('test.sales', 'day', '2031-03-11', '2031-03-16 12:00') where key = 'a'),
  (select value from pg_temp.by_buckets('day', '2031-03-11', '2031-03-16 12:00') where key = 'a'),
  'A week the range holds only part of is read day by day.');
update app_private.analytics_facts set value = value - 1000
where metric = 'test.sales' and bucket_interval = 'week' and bucket = '2031-03-10' and key = 'a';

select set_eq(
  $$ select * from app_private.fact_key_totals('test.sales', 'day', '2031-03-05 13:00', '2031-03-29 02:00', array['b', 'zz']) $$,
  $$ select * from pg_temp.by_buckets('day', '2031-03-05 13:00', '2031-03-29 02:00') where key = 'b' $$,
  'Given keys, only theirs, with the same totals.');
select is(
  (select count(*)::int from app_private.fact_key_totals('test.sales', 'day', '2031-03-05', '2031-03-29', '{}')),
  0, 'No keys given, none returned.');
select is(
  (select count(*)::int from app_private.fact_key_totals('test.none', 'day', '2031-03-05', '2031-03-29')),
  0, 'A metric with no rows has no totals.');

select ok(
  not has_function_privilege('authenticated', 'app_private.fact_key_totals(text, text, timestamptz, timestamptz, text[])', 'EXECUTE')
  and not has_function_privilege('anon', 'app_private.fact_key_totals(text, text, timestamptz, timestamptz, text[])', 'EXECUTE'),
  'Only the server reads the rollups.');
select is(
  (select p.proconfig @> array['plan_cache_mode=force_custom_plan'] from pg_proc p
   where p.oid = 'app_private.fact_key_totals(text, text, timestamptz, timestamptz, text[])'::regprocedure),
  true, 'Each call is planned for its range.');

select * from finish();
rollback;
