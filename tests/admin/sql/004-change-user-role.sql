/*
 * app.change_user_role: an ADMIN changes another user's role and the change is recorded in
 * app.role_changes, atomically. Nobody changes their own role, non-admins and visitors are
 * refused, unknown users are AG404, and the last active ADMIN can never be demoted or suspended.
 */
begin;
select plan(28);

do $$
begin
  perform tests.create_user('roles.admin@example.test', 'ADMIN');
  perform tests.create_user('roles.second.admin@example.test', 'ADMIN');
  perform tests.create_user('roles.carol@example.test', 'SUBSCRIBER');
  perform tests.create_user('roles.dave@example.test', 'MEMBER');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('roles.admin@example.test'));

select results_eq(
  format(
    $$ select user_id, previous_role, new_role, changed_by, reason
       from app.change_user_role(%L, 'MEMBER', 'Promoted after onboarding') $$,
    tests.user_id('roles.carol@example.test')),
  format(
    $$ values (%L::uuid, 'SUBSCRIBER'::app.user_role, 'MEMBER'::app.user_role, %L::uuid, 'Promoted after onboarding') $$,
    tests.user_id('roles.carol@example.test'), tests.user_id('roles.admin@example.test')),
  'An ADMIN changes another user''s role and gets the recorded change back.'
);
select is(
  (select role from app.users where id = tests.user_id('roles.carol@example.test')),
  'MEMBER'::app.user_role,
  'The user''s role is the new one.'
);
select results_eq(
  format(
    $$ select previous_role, new_role, changed_by, reason from app.role_changes where user_id = %L $$,
    tests.user_id('roles.carol@example.test')),
  format(
    $$ values ('SUBSCRIBER'::app.user_role, 'MEMBER'::app.user_role, %L::uuid, 'Promoted after onboarding') $$,
    tests.user_id('roles.admin@example.test')),
  'The change is recorded once in app.role_changes with who, why, before and after.'
);

select tests.clear_authentication();
select results_eq(
  format(
    $$ select severity::text, ip, user_agent, details ->> 'by', details ->> 'from', details ->> 'to', details ->> 'reason'
       from app.security_events where type = 'admin.role_changed' and user_id = %L $$,
    tests.user_id('roles.carol@example.test')),
  format(
    $$ values ('warning', null::inet, null::text, %L, 'SUBSCRIBER', 'MEMBER', 'Promoted after onboarding') $$,
    tests.user_id('roles.admin@example.test')),
  'The change wrote its admin.role_changed security event in the same transaction.'
);
select tests.authenticate_as(tests.user_id('roles.admin@example.test'));

select set_config('agora.client_ip', '198.51.100.9', true), set_config('agora.user_agent', 'pgTAP', true);
select lives_ok(
  format($$ select app.change_user_role(%L, 'ADMIN', 'Needs the console') $$,
    tests.user_id('roles.dave@example.test')),
  'An ADMIN promotes a MEMBER to ADMIN.'
);
select set_config('agora.client_ip', 'not an address', true);
select lives_ok(
  format($$ select app.change_user_role(%L, 'MEMBER', 'Console no longer needed') $$,
    tests.user_id('roles.dave@example.test')),
  'A malformed client address does not stop a role change.'
);
select tests.clear_authentication();
select results_eq(
  format(
    $$ select severity::text, ip, user_agent from app.security_events
       where type = 'admin.role_changed' and user_id = %L order by id $$,
    tests.user_id('roles.dave@example.test')),
  $$ values ('critical', '198.51.100.9'::inet, 'pgTAP'), ('critical', null::inet, 'pgTAP') $$,
  'Changes to or from ADMIN are critical and carry the address and user agent the API set (a malformed address is left out).'
);
select set_config('agora.client_ip', '', true), set_config('agora.user_agent', '', true);
select tests.authenticate_as(tests.user_id('roles.admin@example.test'));

select throws_ok(
  format($$ select app.change_user_role(%L, 'MEMBER', 'Stepping down') $$,
    tests.user_id('roles.admin@example.test')),
  'AG422', 'an ADMIN cannot change their own role or status',
  'An ADMIN cannot change their own role (AG422).'
);
select results_eq(
  format($$ select u.role, (select count(*) from app.role_changes c where c.user_id = u.id)
            from app.users u where u.id = %L $$, tests.user_id('roles.admin@example.test')),
  $$ values ('ADMIN'::app.user_role, 0::bigint) $$,
  'After the refused self-change the ADMIN is still ADMIN and nothing was recorded.'
);

select throws_ok(
  $$ select app.change_user_role(gen_random_uuid(), 'MEMBER', 'Nobody') $$,
  'AG404', 'user not found',
  'Changing the role of an unknown user raises AG404.'
);

select throws_ok(
  format($$ select app.change_user_role(%L, 'CONFIDENTIAL', '') $$,
    tests.user_id('roles.carol@example.test')),
  'AG400', 'a role change needs a reason',
  'A role change without a reason is refused.'
);
select is(
  (select role from app.users where id = tests.user_id('roles.carol@example.test')),
  'MEMBER'::app.user_role,
  'A refused role change leaves the role as it was (the update and the record are one unit).'
);

select lives_ok(
  format($$ select app.change_user_role(%L, 'CONFIDENTIAL', 'No longer an admin') $$,
    tests.user_id('roles.second.admin@example.test')),
  'An ADMIN can demote another ADMIN while another active ADMIN remains.'
);
select is(
  (select role from app.users where id = tests.user_id('roles.second.admin@example.test')),
  'CONFIDENTIAL'::app.user_role,
  'The demoted ADMIN now has the new role.'
);

-- ---------------------------------------------------------------------------------------------
-- Self, as a non-admin (and as a demoted admin)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('roles.dave@example.test'));

select throws_ok(
  format($$ select app.change_user_role(%L, 'ADMIN', 'Self-promotion') $$,
    tests.user_id('roles.dave@example.test')),
  '42501', 'only an ADMIN changes roles',
  'A non-admin cannot change their own role (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- Another user, as a non-admin
-- ---------------------------------------------------------------------------------------------

select throws_ok(
  format($$ select app.change_user_role(%L, 'ADMIN', 'Favour') $$,
    tests.user_id('roles.carol@example.test')),
  '42501', 'only an ADMIN changes roles',
  'A non-admin cannot change another user''s role (42501).'
);

select tests.authenticate_as(tests.user_id('roles.second.admin@example.test'));
select throws_ok(
  format($$ select app.change_user_role(%L, 'VISITOR', 'Revenge') $$,
    tests.user_id('roles.admin@example.test')),
  '42501', 'only an ADMIN changes roles',
  'A just-demoted ADMIN is refused on the very next statement (42501).'
);

select tests.clear_authentication();
select results_eq(
  format($$ select role from app.users where id in (%L, %L, %L) order by email $$,
    tests.user_id('roles.admin@example.test'), tests.user_id('roles.carol@example.test'),
    tests.user_id('roles.dave@example.test')),
  $$ values ('ADMIN'::app.user_role), ('MEMBER'::app.user_role), ('MEMBER'::app.user_role) $$,
  'The refused calls changed no role.'
);
select is_empty(
  format($$ select 1 from app.role_changes where changed_by in (%L, %L) $$,
    tests.user_id('roles.dave@example.test'), tests.user_id('roles.second.admin@example.test')),
  'The refused calls recorded no role change.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  format($$ select app.change_user_role(%L, 'ADMIN', 'Anonymous') $$,
    tests.user_id('roles.carol@example.test')),
  '42501', null,
  'An anonymous visitor cannot change roles (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- The last active ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

-- Make roles.admin the only active ADMIN (trusted path): every other admin is demoted, which the
-- guard allows because roles.admin remains. A suspended ADMIN does not count as an admin.
update app.users set role = 'CONFIDENTIAL'
  where role = 'ADMIN' and status = 'active' and id <> tests.user_id('roles.admin@example.test');
update app.users set role = 'ADMIN', status = 'suspended'
  where id = tests.user_id('roles.dave@example.test');

select results_eq(
  $$ select id from app.users where role = 'ADMIN' and status = 'active' $$,
  array[tests.user_id('roles.admin@example.test')],
  'The scenario has exactly one active ADMIN.'
);

select throws_ok(
  format($$ update app.users set role = 'MEMBER' where id = %L $$, tests.user_id('roles.admin@example.test')),
  'AG422', 'the last active ADMIN cannot be demoted or suspended',
  'Demoting the last active ADMIN raises AG422, even on the trusted path.'
);
select throws_ok(
  format($$ update app.users set status = 'suspended' where id = %L $$, tests.user_id('roles.admin@example.test')),
  'AG422', 'the last active ADMIN cannot be demoted or suspended',
  'Suspending the last active ADMIN raises AG422, even on the trusted path.'
);
select throws_ok(
  $$ update app.users set role = 'MEMBER' where role = 'ADMIN' $$,
  'AG422', 'the last active ADMIN cannot be demoted or suspended',
  'Demoting every ADMIN at once raises AG422.'
);

select tests.authenticate_as(tests.user_id('roles.admin@example.test'));
select throws_ok(
  format($$ select app.change_user_role(%L, 'MEMBER', 'Leaving') $$, tests.user_id('roles.admin@example.test')),
  'AG422', null,
  'The last active ADMIN cannot demote themselves through app.change_user_role (AG422).'
);
select lives_ok(
  format($$ select app.change_user_role(%L, 'MEMBER', 'Demote the suspended admin') $$,
    tests.user_id('roles.dave@example.test')),
  'The last active ADMIN can still demote a suspended ADMIN.'
);

select tests.clear_authentication();
select results_eq(
  $$ select id from app.users where role = 'ADMIN' and status = 'active' $$,
  array[tests.user_id('roles.admin@example.test')],
  'After all of that the platform still has its one active ADMIN.'
);

-- Once a second active ADMIN exists, the first one can be demoted again (trusted path).
update app.users set role = 'ADMIN' where id = tests.user_id('roles.carol@example.test');
select lives_ok(
  format($$ update app.users set role = 'MEMBER' where id = %L $$, tests.user_id('roles.admin@example.test')),
  'An ADMIN can be demoted once another active ADMIN exists.'
);

select * from finish();
rollback;
