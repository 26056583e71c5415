/*
 * app.change_user_status and app.sign_out_user, per persona: an ADMIN suspends (every session of
 * the user ends, the history row and the security event are written in the same transaction) and
 * reactivates another user, and ends all their sessions; nobody changes their own status; other
 * roles and visitors are refused; the last active ADMIN is never suspended. app.status_changes:
 * a user reads their own history, an ADMIN everyone's, nobody writes it directly.
 */
begin;
select plan(28);

do $$
begin
  perform tests.create_user('status.admin@example.test', 'ADMIN');
  perform tests.create_user('status.ivy@example.test', 'MEMBER');
  perform tests.create_user('status.jack@example.test', 'CONFIDENTIAL');
  insert into app.sessions (user_id, provider, expires_at)
  select tests.user_id('status.ivy@example.test'), 'email', now() + interval '1 day' from generate_series(1, 3);
  insert into app.sessions (user_id, provider, expires_at, revoked_at, revoked_reason)
  values (tests.user_id('status.ivy@example.test'), 'email', now() + interval '1 day', now() - interval '1 hour', 'signout');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('status.admin@example.test'));
select set_config('agora.client_ip', '203.0.113.9', true);

select results_eq(
  format($$ select user_id, previous_status, new_status, changed_by, reason, sessions_revoked
            from app.change_user_status(%L, 'suspended', 'Spam') $$, tests.user_id('status.ivy@example.test')),
  format($$ values (%L::uuid, 'active'::app.user_status, 'suspended'::app.user_status, %L::uuid, 'Spam', 3) $$,
         tests.user_id('status.ivy@example.test'), tests.user_id('status.admin@example.test')),
  'An ADMIN suspends a user and gets the recorded change back: the three live sessions ended.'
);
select tests.clear_authentication();
select is((select status from app.users where id = tests.user_id('status.ivy@example.test')),
  'suspended'::app.user_status, 'The user is suspended.');
select is(
  (select count(*)::int from app.sessions
   where user_id = tests.user_id('status.ivy@example.test') and revoked_at is null),
  0, 'No session of the user is live any more.');
select is(
  (select count(*)::int from app.sessions
   where user_id = tests.user_id('status.ivy@example.test') and revoked_reason = 'suspended'),
  3, 'The ended sessions say why.');
select results_eq(
  format($$ select severity::text, host(ip), details ->> 'by', details ->> 'reason', (details ->> 'sessionsRevoked')::int
            from app.security_events where type = 'admin.user_suspended' and user_id = %L $$,
         tests.user_id('status.ivy@example.test')),
  format($$ values ('warning', '203.0.113.9', %L, 'Spam', 3) $$, tests.user_id('status.admin@example.test')),
  'The suspension wrote its security event, with the client address, in the same transaction.'
);
select tests.authenticate_as(tests.user_id('status.admin@example.test'));

select results_eq(
  format($$ select previous_status, new_status, sessions_revoked from app.change_user_status(%L, 'active', 'Appeal') $$,
         tests.user_id('status.ivy@example.test')),
  $$ values ('suspended'::app.user_status, 'active'::app.user_status, 0) $$,
  'An ADMIN reactivates the user.'
);
select is(
  (select count(*)::int from app.security_events where type = 'admin.user_reactivated'
   and user_id = tests.user_id('status.ivy@example.test')),
  1, 'The reactivation is a security event too.');
select results_eq(
  format($$ select id is null, previous_status, new_status from app.change_user_status(%L, 'active', 'Again') $$,
         tests.user_id('status.ivy@example.test')),
  $$ values (true, 'active'::app.user_status, 'active'::app.user_status) $$,
  'Setting the status a user already has records nothing (no id) and answers the request.'
);
select is((select count(*)::int from app.status_changes where user_id = tests.user_id('status.ivy@example.test')),
  2, 'Two changes are on record.');

select throws_ok(
  format($$ select app.change_user_status(%L, 'suspended', 'Self') $$, tests.user_id('status.admin@example.test')),
  'AG422', null, 'An ADMIN cannot change their own status.');
select throws_ok(
  format($$ select app.change_user_status(%L, 'suspended', '  ') $$, tests.user_id('status.jack@example.test')),
  'AG400', null, 'A status change needs a reason.');
select throws_ok(
  $$ select app.change_user_status('00000000-0000-4000-8000-00000000dead', 'suspended', 'Who') $$,
  'AG404', null, 'An unknown user is AG404.');

select tests.clear_authentication();
insert into app.sessions (user_id, provider, expires_at)
select tests.user_id('status.jack@example.test'), 'google', now() + interval '1 day' from generate_series(1, 2);
select tests.authenticate_as(tests.user_id('status.admin@example.test'));
select is(
  app.sign_out_user(tests.user_id('status.jack@example.test')), 2,
  'An ADMIN ends every session of a user and learns how many.');
select is(
  (select status from app.users where id = tests.user_id('status.jack@example.test')), 'active'::app.user_status,
  'Ending the sessions does not suspend.');
select is(
  (select count(*)::int from app.security_events where type = 'admin.sessions_revoked'
   and user_id = tests.user_id('status.jack@example.test') and (details ->> 'sessionsRevoked')::int = 2),
  1, 'It is recorded as admin.sessions_revoked (read here by the ADMIN).');
select throws_ok(
  $$ select app.sign_out_user('00000000-0000-4000-8000-00000000dead') $$, 'AG404', null,
  'Signing out an unknown user is AG404.');

select set_has(
  $$ select user_id from app.status_changes $$,
  format($$ values (%L::uuid) $$, tests.user_id('status.ivy@example.test')),
  'An ADMIN reads everyone''s status history.'
);

-- ---------------------------------------------------------------------------------------------
-- Other roles and visitors
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('status.jack@example.test'));
select throws_ok(
  format($$ select app.change_user_status(%L, 'suspended', 'No') $$, tests.user_id('status.ivy@example.test')),
  '42501', null, 'A CONFIDENTIAL user cannot suspend anyone.');
select throws_ok(
  format($$ select app.sign_out_user(%L) $$, tests.user_id('status.ivy@example.test')),
  '42501', null, 'A CONFIDENTIAL user cannot end another user''s sessions.');
select is_empty($$ select * from app.status_changes $$,
  'A user with no history sees none, and nobody else''s.');
select throws_ok(
  format($$ insert into app.status_changes (user_id, previous_status, new_status, reason)
            values (%L, 'active', 'suspended', 'forged') $$, tests.user_id('status.ivy@example.test')),
  '42501', null, 'Nobody writes the history directly.');

select tests.authenticate_as(tests.user_id('status.ivy@example.test'));
select is(
  (select count(*)::int from app.status_changes), 2,
  'A user reads their own status history.');
select is(
  tests.row_count(format($$ update app.users set status = 'suspended' where id = %L $$,
                         tests.user_id('status.jack@example.test'))),
  0::bigint, 'A user cannot suspend anyone through the table either (the row is not theirs to update).');

select tests.authenticate_as_anon();
select throws_ok(
  format($$ select app.change_user_status(%L, 'suspended', 'No') $$, tests.user_id('status.ivy@example.test')),
  '42501', null, 'A visitor cannot call app.change_user_status.');
select throws_ok(
  format($$ select app.sign_out_user(%L) $$, tests.user_id('status.ivy@example.test')),
  '42501', null, 'A visitor cannot call app.sign_out_user.');
select throws_ok($$ select * from app.status_changes $$, '42501', null,
  'A visitor cannot read status histories.');
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- The last active ADMIN
-- ---------------------------------------------------------------------------------------------

update app.users set role = 'MEMBER'
where role = 'ADMIN' and id <> tests.user_id('status.admin@example.test');
select throws_ok(
  format($$ update app.users set status = 'suspended' where id = %L $$, tests.user_id('status.admin@example.test')),
  'AG422', null, 'Even a trusted path cannot suspend the last active ADMIN.');
select throws_ok(
  format($$ delete from app.users where id = %L $$, tests.user_id('status.admin@example.test')),
  'AG422', null, 'Nor delete the last active ADMIN.');

select * from finish();
rollback;
