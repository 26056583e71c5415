/*
 * One job queue for all work that calls the outside world (push, e-mail, Stripe, the chain,
 * attachment files): a row per job in app_private.jobs, claimed with `for update skip locked`
 * under a lease, retried with exponential backoff and jitter (or after the delay the handler was
 * told, e.g. an HTTP 429's Retry-After), dead-lettered after its last attempt. The `api` function
 * drains it through `POST /api/internal/jobs/drain` (service key only: hosted, pg_cron calls it
 * through pg_net, docs/operations.md); the local stack drains it itself, woken by NOTIFY
 * `agora_jobs`. Handlers live in functions/api/jobs/.
 *
 * Tables: app_private.jobs. Done jobs are pruned after 3 days, dead ones after 30 (pg_cron).
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

/* Where a job is in its life; only `queued` and `running` jobs can still run. */
create type app_private.job_state as enum ('queued', 'running', 'done', 'dead');
comment on type app_private.job_state is
  'queued: waits for run_at; running: claimed under a lease (locked_until); done: succeeded; '
  'dead: failed its last attempt or failed permanently, kept for operators.';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

/*
 * The queue. A job is claimed by setting state running, a fresh claim_token and a lease
 * (locked_until); only the holder of the token can complete or fail it, so a worker that outlived
 * its lease cannot overwrite the outcome of the worker that took the job over. A claim whose lease
 * runs out (the process crashed or hung) is claimable again: a job runs at least once, and may run
 * twice, so every handler is idempotent.
 */
create table app_private.jobs (
  id bigint generated always as identity primary key,
  kind text not null check (kind ~ '^[a-z][a-z0-9_.:-]{0,99}$'),
  payload jsonb not null default '{}' check (jsonb_typeof(payload) = 'object'),
  state app_private.job_state not null default 'queued',
  run_at timestamptz not null default now(),
  attempts integer not null default 0 check (attempts >= 0),
  max_attempts integer not null default 10 check (max_attempts between 1 and 100),
  last_error text,
  dedupe_key text check (length(dedupe_key) between 1 and 300),
  claim_token uuid,
  claimed_by text,
  locked_until timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  constraint jobs_dedupe_key_key unique (dedupe_key),
  constraint jobs_claim_held check ((state = 'running') = (claim_token is not null and locked_until is not null)),
  constraint jobs_finished check ((state in ('done', 'dead')) = (finished_at is not null))
);
comment on table app_private.jobs is
  'The one job queue: work that calls the outside world, run by the api function''s drain (or '
  'the local stack''s worker). Server only: RLS on, no policies, no grants to API roles.';
comment on column app_private.jobs.kind is
  'Which handler runs it (functions/api/jobs/registry.ts), e.g. storage.delete.';
comment on column app_private.jobs.payload is
  'The handler''s input, a JSON object. Never secrets: operators read this table.';
comment on column app_private.jobs.run_at is
  'Not before this time: the enqueue time, or when the next retry is due.';
comment on column app_private.jobs.attempts is 'Claims so far, the current one included.';
comment on column app_private.jobs.dedupe_key is
  'Optional: enqueueing the same key again returns the existing job (until it is pruned).';
comment on column app_private.jobs.claim_token is
  'Set by each claim; complete and fail must present it (a stale worker cannot).';
comment on column app_private.jobs.locked_until is
  'The lease: past it, a running job is claimable again (its worker is presumed gone).';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- The claim path and the next wake-up: jobs that can still run, oldest due first.
create index jobs_due_idx on app_private.jobs (run_at, id) where state in ('queued', 'running');
-- Expired leases (and the last attempt's lease, which dead-letters the job).
create index jobs_lease_idx on app_private.jobs (locked_until) where state = 'running';
-- Pruning, and operators listing dead jobs.
create index jobs_finished_idx on app_private.jobs (state, finished_at) where state in ('done', 'dead');

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app_private.jobs enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions (server only: none is granted to an API role)
-- ---------------------------------------------------------------------------------------------

/*
 * Enqueues a job; returns its id (the existing job's id when `dedupe_key` is already taken).
 * Callable from other SQL functions and triggers; they run it with their owner's rights
 * (security definer), as the API roles have none here. Every new job NOTIFYs `agora_jobs` with
 * its kind at commit: a listening worker drains what is due now and sets its timer for what is
 * due later. NOTIFY folds identical payloads of one transaction, so a bulk delete wakes once.
 */
create function app_private.enqueue_job(
  kind text,
  payload jsonb default '{}',
  run_at timestamptz default now(),
  dedupe_key text default null,
  max_attempts integer default 10
) returns bigint
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.enqueue_job(text, jsonb, timestamptz, text, integer) is
  'Queues a job (kind, payload, not before run_at, at most max_attempts attempts) and NOTIFYs '
  'agora_jobs at commit; with a dedupe_key already taken, returns that job instead. For SQL '
  'functions and triggers (security definer) and the server''s own connection.';

/*
 * The delay before retry number `attempts + 1`: 10 s doubled per attempt, at most an hour, with
 * "equal jitter" (a random point in the upper half), so retries of jobs that failed together
 * spread out while each delay is at least the previous one's ceiling's half: delays grow.
 */
create function app_private.job_backoff(attempts integer) returns interval
language sql volatile
set search_path = ''
as $$
  select make_interval(secs => d / 2 + random() * d / 2)
  from (select least(3600, 10 * power(2, greatest(attempts, 1) - 1)) as d) x
$$;
comment on function app_private.job_backoff(integer) is
  'Backoff after a failed attempt: min(10 s * 2^(attempts-1), 1 h), jittered within its upper half.';

/*
 * Claims up to `batch` due jobs of the given kinds for `lease`: queued jobs whose run_at has come,
 * and running jobs whose lease ran out (their worker crashed or hung). `for update skip locked`,
 * so concurrent drains (processes, instances) each get different jobs and never wait on each
 * other. A job whose lease ran out on its last attempt is dead-lettered here instead of run again.
 * Only the kinds the caller can handle are claimed: a process without a kind's handler (an older
 * deployment) leaves its jobs alone.
 */
create function app_private.claim_jobs(
  kinds text[],
  worker text,
  batch integer default 10,
  lease interval default '60 seconds'
) returns setof app_private.jobs
language plpgsql volatile
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
begin
  if batch is null or batch < 1 or batch > 1000 then
    raise exception 'batch must be between 1 and 1000' using errcode = '22023';
  end if;
  if lease is null or lease <= interval '0' then
    raise exception 'lease must be positive' using errcode = '22023';
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
      claimed_by = worker, locked_until = now() + lease, started_at = now()
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
comment on function app_private.claim_jobs(text[], text, integer, interval) is
  'Claims up to batch due jobs of the given kinds (queued and due, or running with an expired '
  'lease) with for update skip locked; each gets attempts + 1, a new claim_token and a lease. '
  'Dead-letters jobs whose lease expired on their last attempt.';

/* Marks a claimed job done; false when the claim is no longer the caller's (lease taken over). */
create function app_private.complete_job(job_id bigint, token uuid) returns boolean
language plpgsql volatile
set search_path = ''
as $$
begin
  update app_private.jobs j
  set state = 'done', finished_at = now(), claim_token = null, locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token;
  return found;
end;
$$;
comment on function app_private.complete_job(bigint, uuid) is
  'Records success of a claimed job (its claim_token must match); false if the lease was lost.';

/*
 * Records a failed attempt. The job goes back to the queue after `retry_after` when the handler
 * was told when to come back (an HTTP 429 or 503 Retry-After), otherwise after the backoff; it is
 * dead-lettered when `permanent` (retrying cannot help: a bad payload, a refusal) or when this
 * was its last attempt. Returns the new state, or null when the claim is no longer the caller's.
 */
create function app_private.fail_job(
  job_id bigint,
  token uuid,
  error text,
  retry_after interval default null,
  permanent boolean default false
) returns app_private.job_state
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.fail_job(bigint, uuid, text, interval, boolean) is
  'Records a failed attempt of a claimed job: queued again after retry_after or the backoff, or '
  'dead when permanent or out of attempts. Returns the new state, null if the lease was lost.';

/*
 * When a worker handling `kinds` should look again: the earliest run_at of a queued job, or the
 * earliest lease end of a running one (a crashed worker's job). Null when nothing is pending.
 */
create function app_private.next_job_at(kinds text[]) returns timestamptz
language sql stable
set search_path = ''
as $$
  select least(
    (select min(j.run_at) from app_private.jobs j
      where j.state = 'queued' and j.kind = any(kinds)),
    (select min(j.locked_until) from app_private.jobs j
      where j.state = 'running' and j.kind = any(kinds))
  )
$$;
comment on function app_private.next_job_at(text[]) is
  'The next time a job of these kinds becomes claimable (due run_at or lease end); null if none. '
  'The local worker sets its timer by it.';

/* For operators: gives a dead job a fresh set of attempts, due now. */
create function app_private.retry_dead_job(job_id bigint) returns boolean
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.retry_dead_job(bigint) is
  'Operators: puts a dead job back in the queue, due now, with its attempts reset (after fixing '
  'the cause). last_error is kept until the next outcome.';

/*
 * Removes finished jobs: done after `done_for`, dead after `dead_for` (kept longer: they are what
 * an operator investigates). A dedupe key protects only while its job is kept.
 */
create function app_private.prune_jobs(
  done_for interval default '3 days',
  dead_for interval default '30 days'
) returns integer
language sql volatile
set search_path = ''
as $$
  with gone as (
    delete from app_private.jobs j
    where (j.state = 'done' and j.finished_at < now() - done_for)
       or (j.state = 'dead' and j.finished_at < now() - dead_for)
    returning 1
  )
  select count(*)::integer from gone
$$;
comment on function app_private.prune_jobs(interval, interval) is
  'pg_cron (agora-prune-jobs): deletes done jobs older than done_for and dead ones older than '
  'dead_for; returns how many.';

-- ---------------------------------------------------------------------------------------------
-- Grants: none. Revoked explicitly, so a platform default cannot open the queue to an API role.
-- ---------------------------------------------------------------------------------------------

revoke all on app_private.jobs from public, anon, authenticated, service_role;

select cron.schedule('agora-prune-jobs', '41 * * * *', 'select app_private.prune_jobs()');

revoke execute on all functions in schema app, app_private from public;
