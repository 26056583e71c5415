/*
 * pg_cron records every run of every job in cron.job_run_details and never deletes one: the
 * every-minute jobs alone add about 4,300 rows a day, forever. This prunes the runs that ended
 * more than 7 days ago (long enough to read last week's failures), hourly.
 *
 * Tables touched: cron.job_run_details (pg_cron's; rows deleted, nothing else). Destructive only
 * for run records past the retention.
 */

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------

/*
 * A run is dated by its end (or its start, when it never ended: pg_cron marks a run that was under
 * way when the server stopped `failed` without an end time). A run with neither time (it failed
 * before it began, e.g. a connection refused) is dated by its runid: runids are handed out as
 * runs are started, so one below the newest run already past the retention started before it. A
 * run still `starting` or `running` is never deleted.
 */
create function app_private.prune_cron_runs(keep interval default '7 days') returns integer
language sql volatile
set search_path = ''
as $$
  with past as (
    select max(d.runid) as runid
    from cron.job_run_details d
    where coalesce(d.end_time, d.start_time) < now() - keep
  ),
  gone as (
    delete from cron.job_run_details d
    using past
    where d.status not in ('starting', 'running')
      and (coalesce(d.end_time, d.start_time) < now() - keep
           or (d.start_time is null and d.end_time is null and d.runid < past.runid))
    returning 1
  )
  select count(*)::integer from gone
$$;
comment on function app_private.prune_cron_runs(interval) is
  'pg_cron (agora-prune-cron-runs): deletes the records of pg_cron''s runs '
  '(cron.job_run_details) that ended more than keep ago, which pg_cron itself never deletes; '
  'runs still under way are kept. Returns how many.';

-- ---------------------------------------------------------------------------------------------
-- Schedules
-- ---------------------------------------------------------------------------------------------

select cron.schedule('agora-prune-cron-runs', '53 * * * *', 'select app_private.prune_cron_runs()');

revoke execute on all functions in schema app, app_private from public;
