/*
 * pg_cron's run records (supabase/migrations/20261129110000_jobs_prune_cron_runs.sql):
 * app_private.prune_cron_runs deletes the runs of cron.job_run_details that ended more than its
 * retention ago (7 days unless told), dates a run that never ended by its start and one with no
 * time at all by its runid, never deletes a run still under way, and is scheduled hourly. No API
 * role may call it. (tests/jobs/schedules.test.ts shows pg_cron running it.)
 */
begin;
select plan(13);

select has_function('app_private', 'prune_cron_runs', array['interval'],
  'app_private.prune_cron_runs(interval) exists.');
select isnt(obj_description('app_private.prune_cron_runs(interval)'::regprocedure, 'pg_proc'), null,
  'prune_cron_runs carries its why as a comment.');
select is_empty(
  $$
    select r.role from (values ('anon'), ('authenticated'), ('service_role')) as r (role)
    where has_function_privilege(r.role, 'app_private.prune_cron_runs(interval)', 'EXECUTE')
  $$,
  'No API role may prune pg_cron''s run records.'
);
select results_eq(
  $$ select schedule, command from cron.job where jobname = 'agora-prune-cron-runs' $$,
  $$ values ('53 * * * *'::text, 'select app_private.prune_cron_runs()'::text) $$,
  'pg_cron prunes its own run records every hour.'
);

-- Only this test's runs (the test database's schedules are paused; this keeps it exact anyway).
delete from cron.job_run_details;

-- In runid order: pg_cron numbers runs as it starts them.
insert into cron.job_run_details (jobid, runid, database, username, command, status, return_message, start_time, end_time)
values
  (1, 1001, 'postgres', 'postgres', 'select 1', 'failed', 'server restarted', null, null),
  (1, 1002, 'postgres', 'postgres', 'select 1', 'succeeded', 'SELECT 1', now() - interval '8 days', now() - interval '8 days'),
  (1, 1003, 'postgres', 'postgres', 'select 1', 'failed', 'connection failed', null, now() - interval '8 days'),
  (1, 1004, 'postgres', 'postgres', 'select 1', 'running', null, now() - interval '8 days', null),
  (1, 1005, 'postgres', 'postgres', 'select 1', 'succeeded', 'SELECT 1', now() - interval '1 day', now() - interval '1 day'),
  (1, 1006, 'postgres', 'postgres', 'select 1', 'failed', 'server restarted', null, null),
  (1, 1007, 'postgres', 'postgres', 'select 1', 'starting', null, null, null);

select tests.authenticate_as_anon();
select throws_ok($$ select app_private.prune_cron_runs() $$, '42501', null,
  'An anonymous visitor cannot prune pg_cron''s run records.');
select tests.clear_authentication();

select is(app_private.prune_cron_runs(), 3, 'Pruning with the default retention deletes 3 runs...');
select is_empty($$ select 1 from cron.job_run_details where runid = 1002 $$,
  '... a run that ended 8 days ago,');
select is_empty($$ select 1 from cron.job_run_details where runid = 1003 $$,
  '... a run that failed to connect 8 days ago (no start time),');
select is_empty($$ select 1 from cron.job_run_details where runid = 1001 $$,
  '... and a run with no time that started before one past the retention.');
select results_eq(
  $$ select runid from cron.job_run_details order by runid $$,
  $$ values (1004::bigint), (1005), (1006), (1007) $$,
  'It keeps a run still under way, a run of yesterday, and timeless runs newer than the retention.'
);

select is(app_private.prune_cron_runs('12 hours'), 1, 'A shorter retention deletes more...');
select results_eq(
  $$ select runid from cron.job_run_details order by runid $$,
  $$ values (1004::bigint), (1006), (1007) $$,
  '... the run of yesterday, and still no run under way nor newer.'
);
select is(app_private.prune_cron_runs(), 0, 'Pruning again deletes nothing.');

select * from finish();
rollback;
