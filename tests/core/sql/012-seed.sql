/*
 * The local seed (supabase/seed.sql) as the admin lists show it: newest first by created_at, then
 * id. So seeded access-log rows and security events are never dated in the future, and their ids
 * follow their times (a list ordered by id and one ordered by time agree). Runs on the seeded
 * test database, before any other test has written to these tables.
 */
begin;
select plan(6);

select ok(
  (select count(*) from app.access_logs where request_id like 'seed-%') > 0
  and (select count(*) from app.security_events where details ->> 'seed' = 'true') > 0,
  'The seed wrote access-log rows and security events.'
);

select is_empty(
  $$ select id, created_at from app.access_logs where request_id like 'seed-%' and created_at > now() $$,
  'No seeded access-log row is dated in the future.'
);
select is_empty(
  $$ select id, created_at from app.security_events where details ->> 'seed' = 'true' and created_at > now() $$,
  'No seeded security event is dated in the future.'
);

select is_empty(
  $$ select a.id, a.created_at, b.id, b.created_at
     from app.access_logs a join app.access_logs b on b.id > a.id and b.created_at < a.created_at
     where a.request_id like 'seed-%' and b.request_id like 'seed-%' $$,
  'Seeded access-log rows: a later id is never an earlier time.'
);
select is_empty(
  $$ select a.id, a.created_at, b.id, b.created_at
     from app.security_events a join app.security_events b on b.id > a.id and b.created_at < a.created_at
     where a.details ->> 'seed' = 'true' and b.details ->> 'seed' = 'true' $$,
  'Seeded security events: a later id is never an earlier time.'
);

select results_eq(
  $$ select id from app.security_events where details ->> 'seed' = 'true' order by created_at desc, id desc $$,
  $$ select id from app.security_events where details ->> 'seed' = 'true' order by id desc $$,
  'Newest first by time, then id, is the same list as newest first by id.'
);

select * from finish();
rollback;
