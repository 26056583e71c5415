/*
 * The hosted drain schedule (supabase/migrations/20261129100700_jobs_drain_schedule.sql):
 * app_private.schedule_job_drain refuses, creating nothing, where pg_net, Supabase Vault or its
 * two secrets are missing (here: Debian's Postgres has neither), and a schedule in seconds on
 * pg_cron older than 1.5 (here: 1.4). With stand-ins for pg_net's net.http_post and Vault's
 * decrypted_secrets, in this rolled-back transaction, it schedules agora-drain-jobs, whose command
 * posts to the project's drain route with the service key, both read from Vault when it runs.
 */
begin;
select plan(12);

select has_function('app_private', 'schedule_job_drain', array['text', 'text', 'text'],
  'app_private.schedule_job_drain(url_secret, key_secret, every) exists.');
select ok(
  not has_function_privilege('anon', 'app_private.schedule_job_drain(text, text, text)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.schedule_job_drain(text, text, text)', 'EXECUTE')
  and not has_function_privilege('service_role', 'app_private.schedule_job_drain(text, text, text)', 'EXECUTE'),
  'Only the database owner schedules the drain: no API role may call it.'
);

-- ---------------------------------------------------------------------------------------------
-- Here: no pg_net, no Vault
-- ---------------------------------------------------------------------------------------------

select throws_ok(
  $$ select app_private.schedule_job_drain() $$,
  '55000', 'pg_net is not installed: the drain schedule calls net.http_post',
  'Without pg_net the schedule is refused, saying why.'
);
select is_empty(
  $$ select jobid from cron.job where jobname = 'agora-drain-jobs' $$,
  'No drain job exists here (the local stack drains the queue itself).'
);

-- ---------------------------------------------------------------------------------------------
-- With stand-ins for pg_net and Vault
-- ---------------------------------------------------------------------------------------------

create schema net;
create table net.requests (url text, body jsonb, headers jsonb, timeout_milliseconds integer);
-- pg_net's signature: the request is queued and its id returned.
create function net.http_post(
  url text, body jsonb default '{}', params jsonb default '{}',
  headers jsonb default '{"Content-Type": "application/json"}', timeout_milliseconds integer default 5000
) returns bigint language sql volatile as $$
  insert into net.requests values (url, body, headers, timeout_milliseconds) returning 1::bigint
$$;

select throws_ok(
  $$ select app_private.schedule_job_drain() $$,
  '55000', 'Supabase Vault is not available: the drain schedule reads the project URL and the service key from it',
  'Without Vault the schedule is refused.'
);

create schema vault;
create table vault.decrypted_secrets (name text primary key, decrypted_secret text);
insert into vault.decrypted_secrets values ('agora_project_url', 'https://ref.supabase.co');

select throws_ok(
  $$ select app_private.schedule_job_drain() $$,
  '55000', 'Vault has no secret agora_project_url or no secret agora_service_role_key',
  'Without both secrets in Vault the schedule is refused.'
);

insert into vault.decrypted_secrets values ('agora_service_role_key', 'service-key-1');

select throws_ok(
  $$ select app_private.schedule_job_drain() $$,
  '55000',
  format('pg_cron %s schedules by the minute; "5 seconds" needs pg_cron 1.5 or later',
         (select extversion from pg_extension where extname = 'pg_cron')),
  'A schedule in seconds on pg_cron 1.4 is refused (hosted Supabase has 1.5 or later).'
);
select is_empty(
  $$ select jobid from cron.job where jobname = 'agora-drain-jobs' $$,
  'Every refusal created nothing.'
);

select ok(
  app_private.schedule_job_drain(every => '* * * * *') is not null,
  'With pg_net, Vault and both secrets, a schedule pg_cron supports is created.'
);
select app_private.schedule_job_drain(every => '* * * * *') as again \gset
select is(
  (select string_agg(format('%s %s %s %s', j.jobid, j.jobname, j.schedule, j.active), '; ')
   from cron.job j where j.jobname = 'agora-drain-jobs'),
  format('%s agora-drain-jobs * * * * * t', :again),
  'One job agora-drain-jobs, active, on the schedule asked for (calling again replaced it).'
);

-- The job's command, run as pg_cron runs it, after the key was rotated in Vault.
update vault.decrypted_secrets set decrypted_secret = 'service-key-2' where name = 'agora_service_role_key';
do $$
begin
  execute (select command from cron.job where jobname = 'agora-drain-jobs');
end
$$;
select results_eq(
  $$ select url, body, headers, timeout_milliseconds from net.requests $$,
  $$ values ('https://ref.supabase.co/functions/v1/api/internal/jobs/drain', '{}'::jsonb,
             '{"Content-Type": "application/json", "Authorization": "Bearer service-key-2"}'::jsonb,
             30000) $$,
  'The job posts to the project''s drain route with the service key, both read from Vault when it runs.'
);
select throws_ok(
  $$ select app_private.schedule_job_drain(url_secret => 'other_url') $$,
  '55000', 'Vault has no secret other_url or no secret agora_service_role_key',
  'Other secret names can be given; a missing one is refused.'
);

select * from finish();
rollback;
