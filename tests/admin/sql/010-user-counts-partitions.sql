/*
 * The maintained user counts (app_private.user_counts, read through app.user_counts()) per
 * persona, and the daily partitions of app.access_logs and app.events: created ahead, read only
 * through their parents, a row outside every day caught by the default partition and moved into
 * its day when that partition is made, whole days dropped by retention.
 */
begin;
select plan(31);

do $$
begin
  perform tests.create_user('counts.kim@example.test');
  perform tests.create_user('counts.admin@example.test', 'ADMIN');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- The counters follow inserts, updates and deletes
-- ---------------------------------------------------------------------------------------------

create function pg_temp.drift() returns bigint language sql as $$
  select count(*) from unnest(enum_range(null::app.user_role)) r(role)
  cross join unnest(enum_range(null::app.user_status)) s(status)
  where (select count(*) from app.users u where u.role = r.role and u.status = s.status)
        <> coalesce((select c.n from app_private.user_counts c
                     where c.role = r.role and c.status = s.status), 0)
         + coalesce((select sum(d.delta) from app_private.user_count_deltas d
                     where d.role = r.role and d.status = s.status), 0)
$$;

select is(pg_temp.drift(), 0::bigint, 'After the setup every counter equals its users.');
insert into app.users (email, name, role)
select 'counts.bulk' || g || '@example.test', 'Bulk ' || g, 'MEMBER' from generate_series(1, 7) g;
select is(pg_temp.drift(), 0::bigint, 'An insert of 7 users in one statement counts 7.');
update app.users set role = 'CONFIDENTIAL', status = 'suspended' where email like 'counts.bulk%';
select is(pg_temp.drift(), 0::bigint, 'A role and status change of many rows moves each.');
update app.users set name = 'Renamed' where email = 'counts.bulk1@example.test';
select is(pg_temp.drift(), 0::bigint, 'A change of neither role nor status moves nothing.');
delete from app.users where email like 'counts.bulk%' and email <> 'counts.bulk1@example.test';
select is(pg_temp.drift(), 0::bigint, 'A delete of 6 takes 6 off.');
select cmp_ok(app_private.compact_counters(), '>', 0, 'The deltas are folded into the counts...');
select is(pg_temp.drift(), 0::bigint, '... to the same figures...');
select is((select count(*)::int from app_private.user_count_deltas), 0, '... and none is left.');
select lives_ok($$ select app_private.recount_users() $$, 'The counters can be rebuilt...');
select is(pg_temp.drift(), 0::bigint, '... to the same figures.');

-- ---------------------------------------------------------------------------------------------
-- Who reads them
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok($$ select * from app.user_counts() $$, '42501', null,
  'A visitor cannot read the user counts.');
select tests.clear_authentication();

select tests.authenticate_as(tests.user_id('counts.kim@example.test'));
select throws_ok($$ select * from app.user_counts() $$, '42501', 'only an ADMIN reads the user counts',
  'A user cannot read the user counts.');
select throws_ok($$ select * from app_private.user_counts $$, '42501', null,
  'A user cannot read the counter table.');
select throws_ok($$ select * from app.admin_user_matches('%counts%') $$, '42501', 'only an ADMIN searches users',
  'A user cannot search users.');
select throws_ok($$ select * from app_partitions.access_logs_default $$, '42501', null,
  'A user cannot read a partition of the access log directly.');
select tests.clear_authentication();

select tests.authenticate_as(tests.user_id('counts.admin@example.test'));
select is(
  (select sum(n)::bigint from app.user_counts()),
  (select count(*) from app.users),
  'An ADMIN reads the counts: their sum is every user.');
select is(
  (select n from app.user_counts() where role = 'CONFIDENTIAL' and status = 'suspended'),
  (select count(*) from app.users where role = 'CONFIDENTIAL' and status = 'suspended'),
  'An ADMIN reads the count of one role and status.');
select is(
  (select array_agg(m.role::text) from app.admin_user_matches('%counts.kim@%') m),
  array['SUBSCRIBER'], 'An ADMIN finds a user by a part of the address...');
select is(
  (select count(*)::int from app.admin_user_matches('%counts%', 'suspended')),
  (select count(*)::int from app.users where email like '%counts%' and status = 'suspended'),
  '... and only those of a status when asked.');
select throws_ok($$ select * from app_partitions.events_default $$, '42501', null,
  'Not even an ADMIN reads a partition directly: the parent''s policies apply to reads through it.');
select throws_ok($$ update app_private.user_counts set n = 0 $$, '42501', null,
  'An ADMIN cannot write the counters.');
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- Daily partitions
-- ---------------------------------------------------------------------------------------------

select ok(
  (select count(*) from pg_inherits i join pg_class c on c.oid = i.inhrelid
   where i.inhparent = 'app.access_logs'::regclass
     and c.relname = 'access_logs_p' || to_char((now() at time zone 'UTC')::date + 7, 'YYYYMMDD')) = 1,
  'The access log has its partition a week ahead.');
select ok(
  (select count(*) from pg_inherits i join pg_class c on c.oid = i.inhrelid
   where i.inhparent = 'app.events'::regclass and c.relnamespace = 'app_partitions'::regnamespace
     and not c.relrowsecurity) = 0,
  'Every partition of the events has row level security on (no policies: deny).');

insert into app.access_logs (request_id, method, route, status, duration_ms, created_at)
values ('far-future', 'GET', '/api/test/partitions', 200, 1, now() + interval '30 days');
select is(
  (select tableoid::regclass::text from app.access_logs where request_id = 'far-future'),
  'app_partitions.access_logs_default',
  'A row beyond the partitions made ahead lands in the default partition.');
select is(
  app_private.ensure_daily_partitions('app.access_logs',
    ((now() + interval '30 days') at time zone 'UTC')::date, ((now() + interval '30 days') at time zone 'UTC')::date),
  1, 'Making its day''s partition...');
select is(
  (select tableoid::regclass::text from app.access_logs where request_id = 'far-future'),
  'app_partitions.access_logs_p' || to_char(((now() + interval '30 days') at time zone 'UTC')::date, 'YYYYMMDD'),
  '... moves it there.');

insert into app.events (topic, event, payload, created_at)
values ('user:00000000-0000-0000-0000-000000000000', 'test.old', '{}', now() - interval '1 day');
select is(app_private.ensure_daily_partitions('app.events',
  ((now() - interval '20 days') at time zone 'UTC')::date, ((now() - interval '19 days') at time zone 'UTC')::date),
  2, 'Partitions of past days can be made (the conversion makes them for the rows it moves).');
select cmp_ok(app_private.drop_daily_partitions('app.events', now() - interval '3 days'), '>=', 2,
  'Retention drops the partitions of days older than its cutoff...');
select is((select count(*)::int from app.events where event = 'test.old'), 1,
  '... and keeps the days after it.');
select cmp_ok(app_private.maintain_partitions(), '<=', 2,
  'The hourly job makes what is missing from yesterday to a week ahead (a new day, at most)...');
select is(app_private.maintain_partitions(), 0, '... and nothing when run again.');

select * from finish();
rollback;
