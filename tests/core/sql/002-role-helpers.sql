/*
 * app.has_role, app.is_admin and app.current_user_role answer from the users row, not from the
 * token: a role change or a suspension counts on the very next statement of the same transaction.
 */
begin;
select plan(21);

do $$
begin
  perform tests.create_user('roles.member@example.test', 'MEMBER');
  perform tests.create_user('roles.other@example.test', 'CONFIDENTIAL');
  perform tests.create_user('roles.admin@example.test', 'ADMIN');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Self: a MEMBER
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('roles.member@example.test'));

select is(app.current_user_role(), 'MEMBER'::app.user_role,
  'A signed-in MEMBER''s current role is MEMBER.');
select ok(app.has_role('SUBSCRIBER') and app.has_role('MEMBER'),
  'A MEMBER holds every role up to MEMBER.');
select ok(not app.has_role('CONFIDENTIAL'),
  'A MEMBER does not hold CONFIDENTIAL.');
select ok(not app.is_admin(),
  'A MEMBER is not an admin.');

-- A token that claims more than the database says changes nothing.
do $$
begin
  perform set_config('request.jwt.claims', json_build_object(
    'sub', tests.user_id('roles.member@example.test'), 'role', 'authenticated',
    'user_role', 'ADMIN', 'app_metadata', json_build_object('role', 'ADMIN'))::text, true);
end
$$;
select ok(not app.is_admin() and app.current_user_role() = 'MEMBER',
  'A role claimed in the token is ignored: the MEMBER is still a MEMBER.');

-- The role changes in the same transaction (trusted server path), then the user asks again.
select tests.clear_authentication();
update app.users set role = 'CONFIDENTIAL' where id = tests.user_id('roles.member@example.test');
select tests.authenticate_as(tests.user_id('roles.member@example.test'));

select is(app.current_user_role(), 'CONFIDENTIAL'::app.user_role,
  'After a promotion in the same transaction the current role is the new one.');
select ok(app.has_role('CONFIDENTIAL'),
  'After a promotion in the same transaction has_role answers with the new role.');

select tests.clear_authentication();
update app.users set role = 'SUBSCRIBER' where id = tests.user_id('roles.member@example.test');
select tests.authenticate_as(tests.user_id('roles.member@example.test'));

select ok(not app.has_role('MEMBER'),
  'After a demotion in the same transaction has_role no longer grants the old role.');

-- Suspended: no role at all, whatever the role column says.
select tests.clear_authentication();
update app.users set status = 'suspended', role = 'CONFIDENTIAL'
  where id = tests.user_id('roles.member@example.test');
select tests.authenticate_as(tests.user_id('roles.member@example.test'));

select is(app.current_user_role(), 'VISITOR'::app.user_role,
  'A suspended user''s current role is VISITOR.');
select ok(not app.has_role('SUBSCRIBER'),
  'A suspended user does not hold even the lowest signed-in role.');
select ok(not app.has_role('VISITOR'),
  'A suspended user holds no role at all, not even VISITOR.');

-- ---------------------------------------------------------------------------------------------
-- Another user: the answer is always about the caller
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('roles.other@example.test'));

select is(app.current_user_role(), 'CONFIDENTIAL'::app.user_role,
  'Another user (CONFIDENTIAL) gets their own role, not the previous caller''s.');
select ok(app.has_role('CONFIDENTIAL') and not app.has_role('ADMIN'),
  'A CONFIDENTIAL user holds CONFIDENTIAL but not ADMIN.');

-- A signed-in user id without a users row holds nothing.
select tests.authenticate_as(gen_random_uuid());
select is(app.current_user_role(), 'VISITOR'::app.user_role,
  'A token for a user who does not exist gives the VISITOR role.');

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select is(app.current_user_role(), 'VISITOR'::app.user_role,
  'An anonymous visitor''s current role is VISITOR.');
select ok(not app.has_role('SUBSCRIBER'),
  'An anonymous visitor holds no signed-in role.');
select ok(not app.is_admin(),
  'An anonymous visitor is not an admin.');

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('roles.admin@example.test'));

select ok(app.is_admin(),
  'An active ADMIN is an admin.');
select ok(app.has_role('CONFIDENTIAL') and app.has_role('ADMIN'),
  'An ADMIN holds every role, ADMIN included.');

select tests.clear_authentication();
update app.users set status = 'suspended' where id = tests.user_id('roles.admin@example.test');
select tests.authenticate_as(tests.user_id('roles.admin@example.test'));

select ok(not app.is_admin(),
  'A suspended ADMIN is no longer an admin on the very next statement.');
select is(app.current_user_role(), 'VISITOR'::app.user_role,
  'A suspended ADMIN''s current role is VISITOR.');

select * from finish();
rollback;
