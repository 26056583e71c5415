-- Agora's schema as it is now, domain jobs: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121090100_jobs.sql
--   supabase/migrations/20261128100000_jobs_kind_leases.sql
--   supabase/migrations/20261128100100_jobs_release_gone_workers.sql
--   supabase/migrations/20261129100700_jobs_drain_schedule.sql
--   supabase/migrations/20261129110000_jobs_prune_cron_runs.sql
--   supabase/migrations/20261130050300_jobs_retention.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app_private.job_state
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app_private.job_state AS ENUM (
    'queued',
    'running',
    'done',
    'dead'
);

COMMENT ON TYPE app_private.job_state IS 'queued: waits for run_at; running: claimed under a lease (locked_until); done: succeeded; dead: failed its last attempt or failed permanently, kept for operators.';

-- ---------------------------------------------------------------------------------------------
-- table app_private.jobs
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.jobs (
    id bigint NOT NULL,
    kind text NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    state app_private.job_state DEFAULT 'queued'::app_private.job_state NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 10 NOT NULL,
    last_error text,
    dedupe_key text,
    claim_token uuid,
    claimed_by text,
    locked_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT jobs_claim_held CHECK (((state = 'running'::app_private.job_state) = ((claim_token IS NOT NULL) AND (locked_until IS NOT NULL)))),
    CONSTRAINT jobs_dedupe_key_check CHECK (((length(dedupe_key) >= 1) AND (length(dedupe_key) <= 300))),
    CONSTRAINT jobs_finished CHECK (((state = ANY (ARRAY['done'::app_private.job_state, 'dead'::app_private.job_state])) = (finished_at IS NOT NULL))),
    CONSTRAINT jobs_kind_check CHECK ((kind ~ '^[a-z][a-z0-9_.:-]{0,99}$'::text)),
    CONSTRAINT jobs_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 100))),
    CONSTRAINT jobs_payload_check CHECK ((jsonb_typeof(payload) = 'object'::text))
);

COMMENT ON TABLE app_private.jobs IS 'The one job queue: work that calls the outside world, run by the api function''s drain (or the local stack''s worker). Server only: RLS on, no policies, no grants to API roles.';

COMMENT ON COLUMN app_private.jobs.kind IS 'Which handler runs it (functions/api/jobs/registry.ts), e.g. storage.delete.';

COMMENT ON COLUMN app_private.jobs.payload IS 'The handler''s input, a JSON object. Never secrets: operators read this table.';

COMMENT ON COLUMN app_private.jobs.run_at IS 'Not before this time: the enqueue time, or when the next retry is due.';

COMMENT ON COLUMN app_private.jobs.attempts IS 'Claims so far, the current one included.';

COMMENT ON COLUMN app_private.jobs.dedupe_key IS 'Optional: enqueueing the same key again returns the existing job (until it is pruned).';

COMMENT ON COLUMN app_private.jobs.claim_token IS 'Set by each claim; complete and fail must present it (a stale worker cannot).';

COMMENT ON COLUMN app_private.jobs.locked_until IS 'The lease: past it, a running job is claimable again (its worker is presumed gone).';

ALTER TABLE app_private.jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.jobs
    ADD CONSTRAINT jobs_dedupe_key_key UNIQUE (dedupe_key);

ALTER TABLE ONLY app_private.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

CREATE INDEX jobs_due_idx ON app_private.jobs USING btree (run_at, id) WHERE (state = ANY (ARRAY['queued'::app_private.job_state, 'running'::app_private.job_state]));

CREATE INDEX jobs_finished_idx ON app_private.jobs USING btree (state, finished_at) WHERE (state = ANY (ARRAY['done'::app_private.job_state, 'dead'::app_private.job_state]));

CREATE INDEX jobs_lease_idx ON app_private.jobs USING btree (locked_until) WHERE (state = 'running'::app_private.job_state);

ALTER TABLE app_private.jobs ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app_private.claim_jobs
-- created in 20261121090100_jobs.sql; last changed in 20261128100000_jobs_kind_leases.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer DEFAULT 10, leases interval[] DEFAULT NULL::interval[]) RETURNS SETOF app_private.jobs
    LANGUAGE plpgsql
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
begin
  if batch is null or batch < 1 or batch > 1000 then
    raise exception 'batch must be between 1 and 1000' using errcode = '22023';
  end if;
  if leases is not null and (
    cardinality(leases) <> cardinality(kinds)
    or exists (select from unnest(leases) l where l is null or l <= interval '0')
  ) then
    raise exception 'leases must be positive, one per kind' using errcode = '22023';
  end if;

  update app_private.jobs j
  set state = 'dead', finished_at = now(), claim_token = null, locked_until = null,
      last_error = 'the lease ran out on the last attempt (the worker stopped or timed out)'
  where j.id in (
    select x.id from app_private.jobs x
    where x.state = 'running' and x.locked_until < now() and x.attempts >= x.max_attempts
      and x.kind = any(kinds)
    for update skip locked
  );

  return query
  update app_private.jobs j
  set state = 'running', attempts = j.attempts + 1, claim_token = gen_random_uuid(),
      claimed_by = worker, started_at = now(),
      locked_until = now() + coalesce(leases[array_position(kinds, j.kind)], interval '60 seconds')
  where j.id in (
    select x.id from app_private.jobs x
    where x.state in ('queued', 'running') and x.run_at <= now() and x.kind = any(kinds)
      and (x.state = 'queued' or (x.locked_until < now() and x.attempts < x.max_attempts))
    order by x.run_at, x.id
    limit batch
    for update skip locked
  )
  returning j.*;
end;
$$;

COMMENT ON FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer, leases interval[]) IS 'Claims up to batch due jobs of the given kinds (queued and due, or running with an expired lease) with for update skip locked; each gets attempts + 1, a new claim_token and the lease of its own kind (leases[i] for kinds[i]; 60 s when leases is null), so a job a crash interrupted is claimable again after its kind''s lease, not the longest of the kinds claimed together. Dead-letters jobs whose lease expired on their last attempt.';

REVOKE ALL ON FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer, leases interval[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.complete_job
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.complete_job(job_id bigint, token uuid) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update app_private.jobs j
  set state = 'done', finished_at = now(), claim_token = null, locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token;
  return found;
end;
$$;

COMMENT ON FUNCTION app_private.complete_job(job_id bigint, token uuid) IS 'Records success of a claimed job (its claim_token must match); false if the lease was lost.';

REVOKE ALL ON FUNCTION app_private.complete_job(job_id bigint, token uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.enqueue_job
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.enqueue_job(kind text, payload jsonb DEFAULT '{}'::jsonb, run_at timestamp with time zone DEFAULT now(), dedupe_key text DEFAULT NULL::text, max_attempts integer DEFAULT 10) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  job_id bigint;
begin
  insert into app_private.jobs (kind, payload, run_at, dedupe_key, max_attempts)
  values (
    enqueue_job.kind, coalesce(enqueue_job.payload, '{}'), coalesce(enqueue_job.run_at, now()),
    enqueue_job.dedupe_key, coalesce(enqueue_job.max_attempts, 10)
  )
  on conflict on constraint jobs_dedupe_key_key do nothing
  returning id into job_id;
  if job_id is null then
    select j.id into job_id from app_private.jobs j where j.dedupe_key = enqueue_job.dedupe_key;
    return job_id;
  end if;
  perform pg_notify('agora_jobs', enqueue_job.kind);
  return job_id;
end;
$$;

COMMENT ON FUNCTION app_private.enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer) IS 'Queues a job (kind, payload, not before run_at, at most max_attempts attempts) and NOTIFYs agora_jobs at commit; with a dedupe_key already taken, returns that job instead. For SQL functions and triggers (security definer) and the server''s own connection.';

REVOKE ALL ON FUNCTION app_private.enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fail_job
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval DEFAULT NULL::interval, permanent boolean DEFAULT false) RETURNS app_private.job_state
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  result app_private.job_state;
begin
  update app_private.jobs j
  set state = case when coalesce(permanent, false) or j.attempts >= j.max_attempts
                   then 'dead' else 'queued' end::app_private.job_state,
      run_at = case when coalesce(permanent, false) or j.attempts >= j.max_attempts then j.run_at
                    when retry_after is not null then now() + greatest(retry_after, interval '0')
                    else now() + app_private.job_backoff(j.attempts) end,
      finished_at = case when coalesce(permanent, false) or j.attempts >= j.max_attempts
                         then now() end,
      last_error = left(coalesce(error, 'failed'), 2000),
      claim_token = null,
      locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token
  returning j.state into result;
  return result;
end;
$$;

COMMENT ON FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean) IS 'Records a failed attempt of a claimed job: queued again after retry_after or the backoff, or dead when permanent or out of attempts. Returns the new state, null if the lease was lost.';

REVOKE ALL ON FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.job_backoff
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.job_backoff(attempts integer) RETURNS interval
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select make_interval(secs => d / 2 + random() * d / 2)
  from (select least(3600, 10 * power(2, greatest(attempts, 1) - 1)) as d) x
$$;

COMMENT ON FUNCTION app_private.job_backoff(attempts integer) IS 'Backoff after a failed attempt: min(10 s * 2^(attempts-1), 1 h), jittered within its upper half.';

REVOKE ALL ON FUNCTION app_private.job_backoff(attempts integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.next_job_at
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.next_job_at(kinds text[]) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select least(
    (select min(j.run_at) from app_private.jobs j
      where j.state = 'queued' and j.kind = any(kinds)),
    (select min(j.locked_until) from app_private.jobs j
      where j.state = 'running' and j.kind = any(kinds))
  )
$$;

COMMENT ON FUNCTION app_private.next_job_at(kinds text[]) IS 'The next time a job of these kinds becomes claimable (due run_at or lease end); null if none. The local worker sets its timer by it.';

REVOKE ALL ON FUNCTION app_private.next_job_at(kinds text[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_cron_runs
-- created in 20261129110000_jobs_prune_cron_runs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_cron_runs(keep interval DEFAULT '7 days'::interval) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.prune_cron_runs(keep interval) IS 'pg_cron (agora-prune-cron-runs): deletes the records of pg_cron''s runs (cron.job_run_details) that ended more than keep ago, which pg_cron itself never deletes; runs still under way are kept. Returns how many.';

REVOKE ALL ON FUNCTION app_private.prune_cron_runs(keep interval) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_jobs
-- created in 20261121090100_jobs.sql; last changed in 20261130050300_jobs_retention.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_jobs(done_for interval DEFAULT NULL::interval, dead_for interval DEFAULT NULL::interval) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.prune_jobs(done_for interval, dead_for interval) IS 'pg_cron (agora-prune-jobs): deletes done jobs older than done_for and dead ones older than dead_for (by default retention.doneJobDays, 3, and retention.deadJobDays, 30, of the configuration); returns how many.';

REVOKE ALL ON FUNCTION app_private.prune_jobs(done_for interval, dead_for interval) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_notification_deliveries
-- created in 20261130050300_jobs_retention.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_notification_deliveries() RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with gone as (
    delete from app_private.notification_deliveries d
    where d.finished_at < now() - make_interval(days => app.config_int('retention', 'deliveryDays'))
    returning 1
  )
  select count(*)::integer from gone
$$;

COMMENT ON FUNCTION app_private.prune_notification_deliveries() IS 'pg_cron (agora-prune-deliveries, hourly): deletes finished notification deliveries (sent, failed, pruned) older than retention.deliveryDays (default 90); queued ones stay whatever their age. Returns how many.';

REVOKE ALL ON FUNCTION app_private.prune_notification_deliveries() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.release_jobs_of
-- created in 20261128100100_jobs_release_gone_workers.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.release_jobs_of(workers text[]) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  released integer;
begin
  update app_private.jobs j
  set locked_until = now()
  where j.state = 'running' and j.claimed_by = any(workers) and j.locked_until > now();
  get diagnostics released = row_count;
  return released;
end;
$$;

COMMENT ON FUNCTION app_private.release_jobs_of(workers text[]) IS 'Ends the leases of the running jobs claimed by the given workers (processes known to be gone: jobs/worker.ts checks them on its own machine when it starts), so the next claim takes them again now instead of when their leases run out. Their claim tokens stay, so a worker that was not gone after all cannot record an outcome over the new claim. Returns how many.';

REVOKE ALL ON FUNCTION app_private.release_jobs_of(workers text[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.retry_dead_job
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.retry_dead_job(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  job_kind text;
begin
  update app_private.jobs j
  set state = 'queued', attempts = 0, run_at = now(), finished_at = null
  where j.id = job_id and j.state = 'dead'
  returning j.kind into job_kind;
  if job_kind is null then
    return false;
  end if;
  perform pg_notify('agora_jobs', job_kind);
  return true;
end;
$$;

COMMENT ON FUNCTION app_private.retry_dead_job(job_id bigint) IS 'Operators: puts a dead job back in the queue, due now, with its attempts reset (after fixing the cause). last_error is kept until the next outcome.';

REVOKE ALL ON FUNCTION app_private.retry_dead_job(job_id bigint) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.running_job_workers
-- created in 20261128100100_jobs_release_gone_workers.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.running_job_workers() RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select distinct claimed_by from app_private.jobs where state = 'running' and claimed_by is not null
$$;

COMMENT ON FUNCTION app_private.running_job_workers() IS 'The workers (host:pid:tag) holding running jobs: what a starting worker checks against the processes of its own machine (release_jobs_of).';

REVOKE ALL ON FUNCTION app_private.running_job_workers() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.schedule_job_drain
-- created in 20261129100700_jobs_drain_schedule.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.schedule_job_drain(url_secret text DEFAULT 'agora_project_url'::text, key_secret text DEFAULT 'agora_service_role_key'::text, every text DEFAULT '5 seconds'::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
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
$_$;

COMMENT ON FUNCTION app_private.schedule_job_drain(url_secret text, key_secret text, every text) IS 'Hosted only, called once per project by an operator: schedules pg_cron job agora-drain-jobs (default every 5 seconds) to POST /functions/v1/api/internal/jobs/drain through pg_net, with the project URL and the service_role key read from the two named Vault secrets at every run. Refuses (55000, with a hint) without pg_net, Vault or either secret, and a schedule in seconds on pg_cron older than 1.5. Returns the cron job id; calling it again replaces the job. docs/hosted.md.';

REVOKE ALL ON FUNCTION app_private.schedule_job_drain(url_secret text, key_secret text, every text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-cron-runs
-- created in 20261129110000_jobs_prune_cron_runs.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 53 * * * *
-- command:
--   select app_private.prune_cron_runs()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-deliveries
-- created in 20261130050300_jobs_retention.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 47 * * * *
-- command:
--   select app_private.prune_notification_deliveries()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-jobs
-- created in 20261121090100_jobs.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 41 * * * *
-- command:
--   select app_private.prune_jobs()
