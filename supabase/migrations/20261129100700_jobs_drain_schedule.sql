/*
 * Hosted, the job queue is drained by pg_cron calling POST /api/internal/jobs/drain through
 * pg_net every few seconds. That schedule holds the project's own URL and service key, so no
 * migration can write it; it was a block of SQL to paste by hand, run nowhere in the tests. It is
 * now one function an operator calls once per project, after putting the URL and the key in
 * Supabase Vault (docs/hosted.md):
 *
 *   select app_private.schedule_job_drain();
 *
 * It checks what the schedule needs before it creates anything, and refuses with what to do
 * (errcode 55000, object_not_in_prerequisite_state) when pg_net is not installed, when Vault or
 * either secret is missing, or when the interval is in seconds and pg_cron is older than 1.5 (the
 * first version with second schedules). Here (Debian's Postgres: no pg_net, no Vault, pg_cron
 * 1.4) it always refuses, which tests/jobs/sql/022-drain-schedule.sql checks, along with the job
 * it schedules where pg_net and Vault exist (stand-ins, in a rolled-back transaction).
 *
 * The scheduled command reads both secrets from Vault at every run, so rotating the key is
 * vault.update_secret alone. Calling the function again replaces the job of the same name.
 *
 * Tables touched: none (cron.job when an operator calls the function). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

create function app_private.schedule_job_drain(
  url_secret text default 'agora_project_url',
  key_secret text default 'agora_service_role_key',
  every text default '5 seconds'
) returns bigint
language plpgsql volatile
set search_path = ''
as $$
declare
  cron_release text;
  cron_version integer[];
  command text;
begin
  if not exists (
    select 1 from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'net' and p.proname = 'http_post'
  ) then
    raise exception 'pg_net is not installed: the drain schedule calls net.http_post'
      using errcode = '55000',
        hint = 'Hosted: create extension pg_net; then call this again. Locally the stack drains the queue itself (functions/api/jobs/worker.ts) and needs no schedule.';
  end if;
  if pg_catalog.to_regclass('vault.decrypted_secrets') is null then
    raise exception 'Supabase Vault is not available: the drain schedule reads the project URL and the service key from it'
      using errcode = '55000', hint = 'Run this on a hosted Supabase project (Vault is part of it).';
  end if;
  if (select pg_catalog.count(*) from vault.decrypted_secrets s
      where s.name operator(pg_catalog.=) any (array[url_secret, key_secret])) operator(pg_catalog.<) 2 then
    raise exception 'Vault has no secret % or no secret %', url_secret, key_secret
      using errcode = '55000',
        hint = pg_catalog.format('select vault.create_secret(''https://<ref>.supabase.co'', %L); select vault.create_secret(''<the service_role key>'', %L);',
          url_secret, key_secret);
  end if;
  -- Major and minor only: Debian's is '1.4-1'.
  select e.extversion, array[m[1]::integer, m[2]::integer] into cron_release, cron_version
  from pg_catalog.pg_extension e, pg_catalog.regexp_match(e.extversion, '^(\d+)\.(\d+)') m
  where e.extname = 'pg_cron';
  if cron_version is null then
    raise exception 'pg_cron is not installed' using errcode = '55000';
  end if;
  if every ~ '^\s*\d+\s+seconds?\s*$' and cron_version operator(pg_catalog.<) array[1, 5] then
    raise exception 'pg_cron % schedules by the minute; "%" needs pg_cron 1.5 or later',
      cron_release, every
      using errcode = '55000',
        hint = 'Hosted Supabase has pg_cron 1.5 or later; elsewhere pass every => ''* * * * *''.';
  end if;
  -- Both secrets are read when the job runs, not now: a rotated key needs no new schedule.
  command := pg_catalog.format($cmd$select net.http_post(
  url := (select decrypted_secret from vault.decrypted_secrets where name = %1$L)
         || '/functions/v1/api/internal/jobs/drain',
  headers := jsonb_build_object(
    'Content-Type', 'application/json',
    'Authorization', 'Bearer ' || (select decrypted_secret from vault.decrypted_secrets where name = %2$L)),
  body := '{}'::jsonb,
  timeout_milliseconds := 30000
)$cmd$, url_secret, key_secret);
  return cron.schedule('agora-drain-jobs', every, command);
end;
$$;
comment on function app_private.schedule_job_drain(text, text, text) is
  'Hosted only, called once per project by an operator: schedules pg_cron job agora-drain-jobs (default every 5 seconds) to POST /functions/v1/api/internal/jobs/drain through pg_net, with the project URL and the service_role key read from the two named Vault secrets at every run. Refuses (55000, with a hint) without pg_net, Vault or either secret, and a schedule in seconds on pg_cron older than 1.5. Returns the cron job id; calling it again replaces the job. docs/hosted.md.';

revoke execute on all functions in schema app, app_private from public;
