/*
 * The job queue (supabase/migrations/20261121180000_jobs.sql): no API role, admins and the
 * service role included, can read or change app_private.jobs or call any of its functions; the
 * server's own connection enqueues (dedupe keys give one job), claims (attempts, tokens, leases;
 * an expired lease makes a job claimable again, or dead on its last attempt), completes and fails
 * jobs (backoff growing with jitter, Retry-After, dead letters), prunes them; deleting an
 * attachment, even as a user through app.delete_message, queues its file's removal.
 */
begin;
select plan(69);

do $$
begin
  perform tests.create_user('jobs.member@example.test', 'MEMBER');
  perform tests.create_user('jobs.admin@example.test', 'ADMIN');
end
$$;

select app_private.enqueue_job('test.sql.visible', '{"n": 1}') as visible_id \gset

-- ---------------------------------------------------------------------------------------------
-- Catalog: RLS on, no policies, no privileges for any API role, every object explained
-- ---------------------------------------------------------------------------------------------

select has_table('app_private', 'jobs', 'The table app_private.jobs exists.');
select is(
  (select relrowsecurity from pg_class where oid = 'app_private.jobs'::regclass), true,
  'app_private.jobs has row level security enabled.'
);
select is_empty(
  $$ select policyname from pg_policies where schemaname = 'app_private' and tablename = 'jobs' $$,
  'app_private.jobs has no policies: only the server''s own connection reaches it.'
);
select is_empty(
  $$
    select format('%s has %s', r.role, p.privilege)
    from (values ('anon'), ('authenticated'), ('service_role')) as r (role)
    cross join (values ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) as p (privilege)
    where has_table_privilege(r.role, 'app_private.jobs', p.privilege)
       or (p.privilege in ('SELECT', 'INSERT', 'UPDATE', 'REFERENCES')
           and has_any_column_privilege(r.role, 'app_private.jobs', p.privilege))
  $$,
  'anon, authenticated and service_role hold no privilege on app_private.jobs.'
);
select is_empty(
  $$
    select format('%s may execute %s', r.role, p.oid::regprocedure)
    from pg_proc p
    cross join (values ('anon'), ('authenticated'), ('service_role')) as r (role)
    where p.pronamespace = 'app_private'::regnamespace
      and p.proname in ('enqueue_job', 'job_backoff', 'claim_jobs', 'complete_job', 'fail_job',
                        'next_job_at', 'retry_dead_job', 'prune_jobs', 'queue_storage_deletion',
                        'release_jobs_of', 'running_job_workers', 'schedule_job_drain')
      and has_function_privilege(r.role, p.oid, 'EXECUTE')
  $$,
  'No API role may execute any job queue function.'
);
select is_empty(
  $$
    select format('%s can use schema app_private', r.role)
    from (values ('anon'), ('authenticated'), ('service_role')) as r (role)
    where has_schema_privilege(r.role, 'app_private', 'USAGE')
  $$,
  'No API role can use the app_private schema.'
);
select is(
  (select count(*)::int from pg_proc p
   where p.pronamespace = 'app_private'::regnamespace
     and p.proname in ('enqueue_job', 'job_backoff', 'claim_jobs', 'complete_job', 'fail_job',
                       'next_job_at', 'retry_dead_job', 'prune_jobs', 'queue_storage_deletion',
                       'release_jobs_of', 'running_job_workers', 'schedule_job_drain')
     and obj_description(p.oid, 'pg_proc') is not null),
  12,
  'Every job queue function carries its why as a comment.'
);
select isnt(obj_description('app_private.jobs'::regclass, 'pg_class'), null,
  'app_private.jobs carries its why as a comment.');
select hasnt_table('app_private', 'storage_deletions',
  'The old deletion queue is gone (its keys became storage.delete jobs).');
select hasnt_function('app_private', 'take_storage_deletions',
  'The old deletion queue''s taker is gone.');
select is(
  (select schedule from cron.job where jobname = 'agora-prune-jobs'), '41 * * * *',
  'pg_cron prunes finished jobs every hour.'
);
select is(
  (select prosecdef from pg_proc where oid = 'app_private.queue_storage_deletion()'::regprocedure), true,
  'The attachment trigger function is security definer (users delete attachments through cascades).'
);

-- ---------------------------------------------------------------------------------------------
-- Personas: a member, an ADMIN, an anonymous visitor, the service role
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('jobs.member@example.test'));

select throws_ok($$ select * from app_private.jobs $$, '42501', null,
  'A member cannot read the job queue.');
select throws_ok($$ insert into app_private.jobs (kind) values ('storage.delete') $$, '42501', null,
  'A member cannot insert a job.');
select throws_ok($$ select app_private.enqueue_job('storage.delete', '{"key": "x"}') $$, '42501', null,
  'A member cannot enqueue a job (storage.delete of another user''s file, say).');
select throws_ok($$ select * from app_private.claim_jobs(array['storage.delete'], 'me') $$, '42501', null,
  'A member cannot claim jobs.');
select throws_ok(
  format($$ select app_private.complete_job(%s, gen_random_uuid()) $$, :'visible_id'), '42501', null,
  'A member cannot complete a job.');
select throws_ok(
  format($$ select app_private.fail_job(%s, gen_random_uuid(), 'x') $$, :'visible_id'), '42501', null,
  'A member cannot fail a job.');

select tests.authenticate_as(tests.user_id('jobs.admin@example.test'));

select throws_ok($$ select * from app_private.jobs $$, '42501', null,
  'An ADMIN cannot read the job queue either.');
select throws_ok($$ update app_private.jobs set state = 'queued' $$, '42501', null,
  'An ADMIN cannot change jobs.');
select throws_ok($$ delete from app_private.jobs $$, '42501', null,
  'An ADMIN cannot delete jobs.');
select throws_ok(
  format($$ select app_private.retry_dead_job(%s) $$, :'visible_id'), '42501', null,
  'An ADMIN cannot revive dead jobs through the API roles.');
select throws_ok($$ select app_private.prune_jobs() $$, '42501', null,
  'An ADMIN cannot prune jobs.');
select throws_ok($$ select app_private.next_job_at(array['storage.delete']) $$, '42501', null,
  'An ADMIN cannot probe the queue''s timing.');

select tests.authenticate_as_anon();

select throws_ok($$ select * from app_private.jobs $$, '42501', null,
  'An anonymous visitor cannot read the job queue.');
select throws_ok($$ select app_private.enqueue_job('storage.delete', '{"key": "x"}') $$, '42501', null,
  'An anonymous visitor cannot enqueue a job.');
select throws_ok($$ select * from app_private.claim_jobs(array['storage.delete'], 'me') $$, '42501', null,
  'An anonymous visitor cannot claim jobs.');

select tests.clear_authentication();
set local role service_role;

select throws_ok($$ select * from app_private.jobs $$, '42501', null,
  'The service_role (RLS bypass, API key) cannot read the job queue: it has no grants.');
select throws_ok($$ select app_private.enqueue_job('storage.delete', '{"key": "x"}') $$, '42501', null,
  'The service_role cannot enqueue a job.');
select throws_ok($$ select * from app_private.claim_jobs(array['storage.delete'], 'me') $$, '42501', null,
  'The service_role cannot claim jobs (the drain goes through the API, not PostgREST).');

reset role;

-- ---------------------------------------------------------------------------------------------
-- The server's own connection: enqueue and dedupe
-- ---------------------------------------------------------------------------------------------

select app_private.enqueue_job('test.sql.a', '{"n": 1}', now(), 'test:dedupe') as dedupe_id \gset
select is(
  app_private.enqueue_job('test.sql.a', '{"n": 2}', now(), 'test:dedupe'), :'dedupe_id'::bigint,
  'Enqueueing with a dedupe key already taken returns the existing job.'
);
select is(
  (select payload from app_private.jobs where dedupe_key = 'test:dedupe'), '{"n": 1}'::jsonb,
  'The existing job is left as it was.'
);
select throws_ok($$ select app_private.enqueue_job('test.sql.a', '[1, 2]') $$, '23514', null,
  'A payload is a JSON object (23514).');
select throws_ok($$ select app_private.enqueue_job('Not A Kind!', '{}') $$, '23514', null,
  'A kind is a lowercase name (23514).');
select throws_ok($$ select app_private.enqueue_job('test.sql.a', '{}', now(), null, 0) $$, '23514', null,
  'A job has at least one attempt (23514).');

-- ---------------------------------------------------------------------------------------------
-- Claim, complete, fail
-- ---------------------------------------------------------------------------------------------

select app_private.enqueue_job('test.sql.b', '{"n": 1}', now(), null, 3) as b_id \gset
select app_private.enqueue_job('test.sql.b', '{"n": 2}', now() + interval '1 hour') as later_id \gset
select app_private.enqueue_job('test.sql.other', '{"n": 3}') as other_id \gset

create temp table claimed on commit drop as
  select * from app_private.claim_jobs(array['test.sql.b'], 'pgtap-worker', 10, array[interval '1 minute']);

select is((select array_agg(id) from claimed), array[:'b_id'::bigint],
  'A claim takes the due jobs of its kinds only: not a job due later, not another kind.');
select results_eq(
  format($$ select state::text, attempts, claimed_by, locked_until = now() + interval '1 minute',
                   claim_token is not null
            from app_private.jobs where id = %s $$, :'b_id'),
  $$ values ('running', 1, 'pgtap-worker', true, true) $$,
  'A claimed job is running, with one more attempt, the worker''s name, a token and a lease.'
);
select is_empty(
  $$ select * from app_private.claim_jobs(array['test.sql.b'], 'second-worker') $$,
  'A running job under its lease is not claimed again.'
);
select is(
  app_private.complete_job(:'b_id', gen_random_uuid()), false,
  'Completing with another token does nothing (false).'
);
select is(
  app_private.fail_job(:'b_id', gen_random_uuid(), 'x'), null,
  'Failing with another token does nothing (null).'
);

select is(
  app_private.fail_job(:'b_id', (select claim_token from claimed), 'provider down'), 'queued'::app_private.job_state,
  'A failed attempt with attempts left goes back to the queue.'
);
select results_eq(
  format($$ select run_at - now() between interval '5 seconds' and interval '10 seconds',
                   last_error, claim_token is null and locked_until is null, finished_at is null
            from app_private.jobs where id = %s $$, :'b_id'),
  $$ values (true, 'provider down', true, true) $$,
  'It is due again after the first backoff (5 to 10 s), with the error kept and the claim released.'
);

-- The lease: a claim whose lease ran out is claimable again.
update app_private.jobs set run_at = now() where id = :'b_id';
select claim_token as second_token from app_private.claim_jobs(array['test.sql.b'], 'crashing-worker') \gset
update app_private.jobs set locked_until = now() - interval '1 second' where id = :'b_id';
select results_eq(
  $$ select attempts, claimed_by from app_private.claim_jobs(array['test.sql.b'], 'next-worker') $$,
  $$ values (3, 'next-worker') $$,
  'A running job whose lease ran out (its worker crashed) is claimed again, as its next attempt.'
);
select is(
  app_private.complete_job(:'b_id', :'second_token'), false,
  'The crashed worker''s token no longer completes the job.'
);
select is(
  app_private.fail_job(:'b_id', (select claim_token from app_private.jobs where id = :'b_id'), 'again'),
  'dead'::app_private.job_state,
  'A failure on the last attempt dead-letters the job.'
);
select results_eq(
  format($$ select state::text, attempts, finished_at is not null, last_error
            from app_private.jobs where id = %s $$, :'b_id'),
  $$ values ('dead', 3, true, 'again') $$,
  'A dead job keeps its attempts, its last error and when it died.'
);
select is_empty(
  $$ select * from app_private.claim_jobs(array['test.sql.b'], 'any-worker') $$,
  'A dead job is never claimed.'
);
select is(app_private.retry_dead_job(:'b_id'), true, 'An operator can put a dead job back.');
select results_eq(
  format($$ select state::text, attempts, finished_at is null from app_private.jobs where id = %s $$, :'b_id'),
  $$ values ('queued', 0, true) $$,
  'It is queued again with a fresh set of attempts.'
);
select is(app_private.retry_dead_job(:'b_id'), false, 'Only dead jobs can be put back.');

-- Completing.
select claim_token as c_token from app_private.claim_jobs(array['test.sql.b'], 'w') \gset
select is(app_private.complete_job(:'b_id', :'c_token'), true, 'The claim''s holder completes the job.');
select results_eq(
  format($$ select state::text, finished_at is not null, claim_token is null from app_private.jobs where id = %s $$, :'b_id'),
  $$ values ('done', true, true) $$,
  'A completed job is done, with its finishing time.'
);
select is(app_private.complete_job(:'b_id', :'c_token'), false, 'A job completes once.');

-- Retry-After and permanent failures.
select app_private.enqueue_job('test.sql.c', '{}') as c_id \gset
select claim_token as c1 from app_private.claim_jobs(array['test.sql.c'], 'w') \gset
select app_private.fail_job(:'c_id', :'c1', 'HTTP 429', interval '120 seconds') as ignored \gset
select is(
  (select run_at - now() from app_private.jobs where id = :'c_id'), interval '120 seconds',
  'A retry-after given by the handler replaces the backoff.'
);
update app_private.jobs set run_at = now() where id = :'c_id';
select claim_token as c2 from app_private.claim_jobs(array['test.sql.c'], 'w') \gset
select app_private.fail_job(:'c_id', :'c2', 'HTTP 429', interval '-5 seconds') as ignored \gset
select is(
  (select run_at from app_private.jobs where id = :'c_id'), now(),
  'A negative retry-after means now, never the past.'
);
select claim_token as c3 from app_private.claim_jobs(array['test.sql.c'], 'w') \gset
select is(
  app_private.fail_job(:'c_id', :'c3', 'invalid payload', null, true), 'dead'::app_private.job_state,
  'A permanent failure dead-letters the job with attempts left.'
);

-- A lease that runs out on the last attempt.
select app_private.enqueue_job('test.sql.d', '{}', now(), null, 1) as d_id \gset
select 1 as ignored from app_private.claim_jobs(array['test.sql.d'], 'doomed-worker') \gset
update app_private.jobs set locked_until = now() - interval '1 second' where id = :'d_id';
select is_empty(
  $$ select * from app_private.claim_jobs(array['test.sql.d'], 'w') $$,
  'A job whose lease ran out on its last attempt is not run again...'
);
select results_eq(
  format($$ select state::text, last_error like 'the lease ran out%%' from app_private.jobs where id = %s $$, :'d_id'),
  $$ values ('dead', true) $$,
  '...it is dead-lettered, saying why.'
);

-- ---------------------------------------------------------------------------------------------
-- Backoff: exponential, capped, with jitter in the upper half
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$
    select n, min(d), max(d)
    from (select n, extract(epoch from app_private.job_backoff(n)) as d
          from generate_series(1, 12) n cross join generate_series(1, 200)) s
    group by n
    having min(d) < least(3600, 10 * 2 ^ (n - 1)) / 2 or max(d) > least(3600, 10 * 2 ^ (n - 1))
  $$,
  'The backoff after attempt n lies between half and all of min(10 s * 2^(n-1), 1 h).'
);
select cmp_ok(
  (select count(distinct app_private.job_backoff(3)) from generate_series(1, 50)), '>', 40::bigint,
  'The backoff is jittered: jobs that failed together retry apart.'
);
select ok(
  (select max(extract(epoch from app_private.job_backoff(n)))
   from generate_series(1, 5) n cross join generate_series(1, 100))
  <= (select min(extract(epoch from app_private.job_backoff(6))) from generate_series(1, 100)),
  'Delays grow: every delay after attempt 6 is at least any delay after attempts 1 to 5.'
);

-- ---------------------------------------------------------------------------------------------
-- Next wake-up and pruning
-- ---------------------------------------------------------------------------------------------

select is(
  app_private.next_job_at(array['test.sql.b']), (select run_at from app_private.jobs where id = :'later_id'),
  'next_job_at gives the earliest run_at of a queued job of the kinds.'
);
select is(app_private.next_job_at(array['test.sql.nothing']), null,
  'next_job_at is null when nothing of the kinds is pending.');

update app_private.jobs set finished_at = now() - interval '4 days' where id = :'b_id';
update app_private.jobs set finished_at = now() - interval '4 days' where id = :'c_id';
select is(app_private.prune_jobs(), 1, 'Pruning removes done jobs older than 3 days...');
select results_eq(
  format($$ select id from app_private.jobs where id in (%s, %s) $$, :'b_id', :'c_id'),
  format($$ values (%s::bigint) $$, :'c_id'),
  '...and keeps dead jobs for 30 days.'
);

-- ---------------------------------------------------------------------------------------------
-- Attachments: a deleted row queues its file's removal, whoever deletes it
-- ---------------------------------------------------------------------------------------------

select tests.create_conversation(tests.user_id('jobs.member@example.test'), 'group',
  array[tests.user_id('jobs.admin@example.test')], 'Jobs') as conv_id \gset
select tests.insert_message(:'conv_id', tests.user_id('jobs.member@example.test'), 'With a file') as msg_id \gset
insert into app.attachments (uploader_id, name, content_type, size, storage_key, message_id, conversation_id)
values (tests.user_id('jobs.member@example.test'), 'f.txt', 'text/plain', 1, 'test/jobs/f.txt', :'msg_id', :'conv_id');

select tests.authenticate_as(tests.user_id('jobs.member@example.test'));
select 1 as ignored from app.delete_message(:'msg_id') \gset
select tests.clear_authentication();

select results_eq(
  $$ select kind, payload, state::text from app_private.jobs where dedupe_key = 'storage.delete:test/jobs/f.txt' $$,
  $$ values ('storage.delete', '{"key": "test/jobs/f.txt"}'::jsonb, 'queued') $$,
  'A member deleting their message queues a storage.delete job for its file (the trigger is security definer).'
);

-- Leases per kind: one claim of two kinds leases each job for its own kind's time.
select app_private.enqueue_job('test.sql.short', '{}') as short_id \gset
select app_private.enqueue_job('test.sql.long', '{}') as long_id \gset
create temp table by_kind on commit drop as
  select id, locked_until - now() as lease from app_private.claim_jobs(
    array['test.sql.short', 'test.sql.long'], 'w', 10,
    array[interval '5 seconds', interval '5 minutes']);
select results_eq(
  'select lease from by_kind order by id',
  $$ values (interval '5 seconds'), (interval '5 minutes') $$,
  'Each claimed job is leased for its own kind''s time, not the longest of the kinds claimed.'
);
select throws_ok(
  $$ select * from app_private.claim_jobs(array['a', 'b'], 'w', 1, array[interval '1 second']) $$,
  '22023', 'leases must be positive, one per kind',
  'A claim gives one lease per kind.'
);
select throws_ok(
  $$ select * from app_private.claim_jobs(array['a'], 'w', 1, array[interval '0 seconds']) $$,
  '22023', 'leases must be positive, one per kind',
  'A lease is positive.'
);

select * from finish();
rollback;
