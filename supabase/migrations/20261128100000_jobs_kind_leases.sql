/*
 * Leases per job kind. A drain claims every kind its process can run in one statement, and that
 * statement gave every job the longest lease of any kind (300 s, a bulk send's chunk): a payment's
 * application or a transfer's broadcast interrupted by a crash waited five minutes to be tried
 * again. Now each claimed job is leased for its own kind's time, passed beside the kinds
 * (`leases[i]` is `kinds[i]`'s), so a crashed job is claimable again after its own lease.
 */
drop function app_private.claim_jobs(text[], text, integer, interval);

create function app_private.claim_jobs(
  kinds text[],
  worker text,
  batch integer default 10,
  leases interval[] default null
) returns setof app_private.jobs
language plpgsql volatile
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
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
comment on function app_private.claim_jobs(text[], text, integer, interval[]) is
  'Claims up to batch due jobs of the given kinds (queued and due, or running with an expired '
  'lease) with for update skip locked; each gets attempts + 1, a new claim_token and the lease of '
  'its own kind (leases[i] for kinds[i]; 60 s when leases is null), so a job a crash interrupted '
  'is claimable again after its kind''s lease, not the longest of the kinds claimed together. '
  'Dead-letters jobs whose lease expired on their last attempt.';
revoke all on function app_private.claim_jobs(text[], text, integer, interval[]) from public;
