/*
 * A server killed (SIGKILL, a crash, the machine's OOM killer) leaves the jobs it had claimed
 * `running` until their leases run out. A long-lived worker that starts again on the same machine
 * knows which of those claims belong to processes that no longer exist there, and gives them
 * back at once, so a killed and restarted local stack resumes its interrupted jobs (a transfer's
 * broadcast, a bulk send's chunk) when it starts, not a lease later.
 */
create function app_private.release_jobs_of(workers text[]) returns integer
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.release_jobs_of(text[]) is
  'Ends the leases of the running jobs claimed by the given workers (processes known to be gone: '
  'jobs/worker.ts checks them on its own machine when it starts), so the next claim takes them '
  'again now instead of when their leases run out. Their claim tokens stay, so a worker that was '
  'not gone after all cannot record an outcome over the new claim. Returns how many.';
revoke all on function app_private.release_jobs_of(text[]) from public;

/* The workers with running jobs, for that check. */
create function app_private.running_job_workers() returns setof text
language sql stable
set search_path = ''
as $$
  select distinct claimed_by from app_private.jobs where state = 'running' and claimed_by is not null
$$;
comment on function app_private.running_job_workers() is
  'The workers (host:pid:tag) holding running jobs: what a starting worker checks against the '
  'processes of its own machine (release_jobs_of).';
revoke all on function app_private.running_job_workers() from public;
