/*
 * app.security_events and app.access_logs: written by the server only, read by an ADMIN only.
 * Users see nothing, not even the rows about themselves; visitors have no access.
 */
begin;
select plan(20);

do $$
begin
  perform tests.create_user('monitoring.kim@example.test');
  perform tests.create_user('monitoring.lee@example.test');
  perform tests.create_user('monitoring.admin@example.test', 'ADMIN');

  insert into app.security_events (type, severity, user_id, details) values
    ('test.kim_event', 'warning', tests.user_id('monitoring.kim@example.test'), '{"test": true}'),
    ('test.lee_event', 'info', tests.user_id('monitoring.lee@example.test'), '{"test": true}');
  insert into app.access_logs (request_id, user_id, method, route, status, duration_ms) values
    ('test-kim', tests.user_id('monitoring.kim@example.test'), 'GET', '/api/auth/session', 200, 1.5),
    ('test-lee', tests.user_id('monitoring.lee@example.test'), 'GET', '/api/auth/session', 200, 2.5);
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Self
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('monitoring.kim@example.test'));

select is_empty(
  $$ select * from app.security_events $$,
  'A user sees no security events, not even their own.'
);
select is_empty(
  $$ select * from app.access_logs $$,
  'A user sees no access logs, not even their own.'
);
select throws_ok(
  $$ insert into app.security_events (type, user_id) values ('auth.signin', auth.uid()) $$,
  '42501', 'permission denied for table security_events',
  'A user cannot write a security event.'
);
select throws_ok(
  $$ insert into app.access_logs (request_id, user_id, method, route, status, duration_ms)
     values ('forged', auth.uid(), 'GET', '/', 200, 1) $$,
  '42501', 'permission denied for table access_logs',
  'A user cannot write an access log.'
);
select throws_ok(
  $$ delete from app.security_events where user_id = auth.uid() $$,
  '42501', 'permission denied for table security_events',
  'A user cannot erase their own security events.'
);
select throws_ok(
  $$ update app.access_logs set route = '/elsewhere' where user_id = auth.uid() $$,
  '42501', 'permission denied for table access_logs',
  'A user cannot edit their own access logs.'
);

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select is_empty(
  format('select * from app.security_events where user_id = %L', tests.user_id('monitoring.lee@example.test')),
  'Another user''s security events are invisible.'
);
select is_empty(
  format('select * from app.access_logs where user_id = %L', tests.user_id('monitoring.lee@example.test')),
  'Another user''s access logs are invisible.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.security_events $$,
  '42501', 'permission denied for table security_events',
  'An anonymous visitor cannot read security events.'
);
select throws_ok(
  $$ select * from app.access_logs $$,
  '42501', 'permission denied for table access_logs',
  'An anonymous visitor cannot read access logs.'
);
select throws_ok(
  $$ insert into app.security_events (type) values ('auth.signin') $$,
  '42501', 'permission denied for table security_events',
  'An anonymous visitor cannot write a security event.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('monitoring.admin@example.test'));

select results_eq(
  $$ select type, severity from app.security_events where type like 'test.%' order by type $$,
  $$ values ('test.kim_event', 'warning'::app.security_severity), ('test.lee_event', 'info'::app.security_severity) $$,
  'An ADMIN sees every user''s security events.'
);
select results_eq(
  $$ select request_id from app.access_logs where request_id like 'test-%' order by request_id $$,
  $$ values ('test-kim'), ('test-lee') $$,
  'An ADMIN sees every user''s access logs.'
);
select throws_ok(
  $$ insert into app.security_events (type) values ('admin.forged') $$,
  '42501', 'permission denied for table security_events',
  'An ADMIN cannot write a security event.'
);
select throws_ok(
  $$ insert into app.access_logs (request_id, method, route, status, duration_ms) values ('forged', 'GET', '/', 200, 1) $$,
  '42501', 'permission denied for table access_logs',
  'An ADMIN cannot write an access log.'
);
select throws_ok(
  $$ update app.security_events set severity = 'info' where type = 'test.kim_event' $$,
  '42501', 'permission denied for table security_events',
  'An ADMIN cannot downgrade a security event.'
);
select throws_ok(
  $$ delete from app.security_events $$,
  '42501', 'permission denied for table security_events',
  'An ADMIN cannot erase security events.'
);
select throws_ok(
  $$ delete from app.access_logs $$,
  '42501', 'permission denied for table access_logs',
  'An ADMIN cannot erase access logs.'
);

select tests.clear_authentication();

select results_eq(
  $$ select type, severity from app.security_events where type like 'test.%' order by type $$,
  $$ values ('test.kim_event', 'warning'::app.security_severity), ('test.lee_event', 'info'::app.security_severity) $$,
  'The refused writes left the security events as they were.'
);
select results_eq(
  $$ select request_id, route from app.access_logs where request_id like 'test-%' order by request_id $$,
  $$ values ('test-kim', '/api/auth/session'), ('test-lee', '/api/auth/session') $$,
  'The refused writes left the access logs as they were.'
);

select * from finish();
rollback;
