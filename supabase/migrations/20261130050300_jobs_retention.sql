/*
 * Retention of the job queue and of notification deliveries from the configuration (issue 30).
 *
 * - app_private.prune_jobs() reads retention.doneJobDays (default 3) and retention.deadJobDays
 *   (default 30) when its arguments are not given (agora-prune-jobs calls it without).
 * - app_private.prune_notification_deliveries() (agora-prune-deliveries, hourly): finished
 *   deliveries (sent, failed, pruned) older than retention.deliveryDays (default 90) go; queued
 *   ones are never touched. The notifications analytics count deliveries by the time of their
 *   outcome, so they cover that many days.
 */

create or replace function app_private.prune_jobs(done_for interval default null, dead_for interval default null)
returns integer
language sql
set search_path = ''
as $$
  with gone as (
    delete from app_private.jobs j
    where (j.state = 'done' and j.finished_at < now()
             - coalesce(done_for, make_interval(days => app.config_int('retention', 'doneJobDays'))))
       or (j.state = 'dead' and j.finished_at < now()
             - coalesce(dead_for, make_interval(days => app.config_int('retention', 'deadJobDays'))))
    returning 1
  )
  select count(*)::integer from gone
$$;
comment on function app_private.prune_jobs(interval, interval) is
  'pg_cron (agora-prune-jobs): deletes done jobs older than done_for and dead ones older than dead_for (by default retention.doneJobDays, 3, and retention.deadJobDays, 30, of the configuration); returns how many.';

create function app_private.prune_notification_deliveries() returns integer
language sql
set search_path = ''
as $$
  with gone as (
    delete from app_private.notification_deliveries d
    where d.finished_at < now() - make_interval(days => app.config_int('retention', 'deliveryDays'))
    returning 1
  )
  select count(*)::integer from gone
$$;
comment on function app_private.prune_notification_deliveries() is
  'pg_cron (agora-prune-deliveries, hourly): deletes finished notification deliveries (sent, failed, pruned) older than retention.deliveryDays (default 90); queued ones stay whatever their age. Returns how many.';
revoke all on function app_private.prune_notification_deliveries() from public;

select cron.schedule('agora-prune-deliveries', '47 * * * *', 'select app_private.prune_notification_deliveries()');
