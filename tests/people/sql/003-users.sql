/*
 * app.users: a user reads and renames only themselves and never changes their own email, role or
 * status; other users are invisible; visitors have no access; an ADMIN reads everyone, renames and
 * suspends other users, and never changes their own role or status (role changes through
 * app.change_user_role: 004-change-user-role.sql).
 */
begin;
select plan(31);

do $$
begin
  perform tests.create_user('users.alice@example.test', 'SUBSCRIBER');
  perform tests.create_user('users.bob@example.test', 'MEMBER');
  perform tests.create_user('users.admin@example.test', 'ADMIN');
end
$$;

select count(*) as user_count from app.users \gset

-- ---------------------------------------------------------------------------------------------
-- Self
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('users.alice@example.test'));

select results_eq(
  $$ select id from app.users $$,
  array[tests.user_id('users.alice@example.test')],
  'A user sees exactly one row in app.users: their own.'
);

select is(
  tests.row_count($$ update app.users set name = 'Alice Liddell' where id = auth.uid() $$),
  1::bigint,
  'A user can change their own name.'
);
select is(
  (select name from app.users where id = auth.uid()),
  'Alice Liddell',
  'The new name is stored.'
);

select throws_ok(
  $$ update app.users set role = 'ADMIN' where id = auth.uid() $$,
  '42501', 'only an ADMIN changes roles and status',
  'A user cannot change their own role (the guard trigger refuses with 42501).'
);
select throws_ok(
  $$ update app.users set status = 'suspended' where id = auth.uid() $$,
  '42501', 'only an ADMIN changes roles and status',
  'A user cannot change their own status (the guard trigger refuses with 42501).'
);
select throws_ok(
  $$ update app.users set email = 'users.alice.new@example.test' where id = auth.uid() $$,
  '42501', null,
  'A user cannot change their own email address (no update privilege on the column).'
);
select lives_ok(
  $$ update app.users set role = role, status = status where id = auth.uid() $$,
  'Writing back the same role and status is not a change and is allowed.'
);
select results_eq(
  $$ select role, status, email from app.users where id = auth.uid() $$,
  $$ values ('SUBSCRIBER'::app.user_role, 'active'::app.user_status, 'users.alice@example.test') $$,
  'After the refused updates the user''s role, status and email are unchanged.'
);
select throws_ok(
  $$ insert into app.users (email, name) values ('users.alice2@example.test', 'Alice Two') $$,
  '42501', null,
  'A user cannot insert users.'
);
select throws_ok(
  $$ delete from app.users where id = auth.uid() $$,
  '42501', null,
  'A user cannot delete their own row.'
);

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select is_empty(
  format('select * from app.users where id = %L', tests.user_id('users.bob@example.test')),
  'Another user''s row is invisible.'
);
select is(
  tests.row_count(format(
    $$ update app.users set name = 'Mallory' where id = %L $$, tests.user_id('users.bob@example.test'))),
  0::bigint,
  'Updating another user''s name affects no row.'
);
select is(
  tests.row_count(format(
    $$ update app.users set role = 'VISITOR' where id = %L $$, tests.user_id('users.bob@example.test'))),
  0::bigint,
  'Updating another user''s role affects no row.'
);

select tests.clear_authentication();
select results_eq(
  format('select name, role from app.users where id = %L', tests.user_id('users.bob@example.test')),
  $$ values ('users.bob', 'MEMBER'::app.user_role) $$,
  'The other user''s name and role really are unchanged.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.users $$,
  '42501', 'permission denied for table users',
  'An anonymous visitor cannot read app.users at all.'
);
select throws_ok(
  format($$ update app.users set name = 'Anon' where id = %L $$, tests.user_id('users.bob@example.test')),
  '42501', 'permission denied for table users',
  'An anonymous visitor cannot update app.users.'
);
select throws_ok(
  $$ insert into app.users (email) values ('users.anon@example.test') $$,
  '42501', 'permission denied for table users',
  'An anonymous visitor cannot insert into app.users.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('users.admin@example.test'));

select is(
  (select count(*) from app.users),
  :'user_count'::bigint,
  'An ADMIN sees every user.'
);
select is(
  tests.row_count(format(
    $$ update app.users set name = 'Robert' where id = %L $$, tests.user_id('users.bob@example.test'))),
  1::bigint,
  'An ADMIN can rename another user.'
);
select is(
  tests.row_count(format(
    $$ update app.users set status = 'suspended' where id = %L $$, tests.user_id('users.bob@example.test'))),
  1::bigint,
  'An ADMIN can suspend another user.'
);
select results_eq(
  format('select name, role, status from app.users where id = %L', tests.user_id('users.bob@example.test')),
  $$ values ('Robert', 'MEMBER'::app.user_role, 'suspended'::app.user_status) $$,
  'The other user''s new name and status are stored.'
);
select throws_ok(
  $$ update app.users set role = 'MEMBER' where id = auth.uid() $$,
  'AG422', 'an ADMIN cannot change their own role or status',
  'An ADMIN cannot change their own role (AG422).'
);
select throws_ok(
  $$ update app.users set status = 'suspended' where id = auth.uid() $$,
  'AG422', 'an ADMIN cannot change their own role or status',
  'An ADMIN cannot suspend themselves (AG422).'
);
select is(
  tests.row_count($$ update app.users set name = 'Ada Test' where id = auth.uid() $$),
  1::bigint,
  'An ADMIN can rename themselves.'
);
select throws_ok(
  format($$ update app.users set email = 'users.bob.new@example.test' where id = %L $$,
    tests.user_id('users.bob@example.test')),
  '42501', null,
  'An ADMIN cannot change another user''s email address.'
);
select throws_ok(
  format($$ delete from app.users where id = %L $$, tests.user_id('users.bob@example.test')),
  '42501', null,
  'An ADMIN cannot delete users.'
);
select throws_ok(
  $$ insert into app.users (email, name) values ('users.admin2@example.test', 'Admin Two') $$,
  '42501', null,
  'An ADMIN cannot insert users.'
);

-- ---------------------------------------------------------------------------------------------
-- Trusted server path (no claims) and constraints
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select is(
  tests.row_count(format(
    $$ update app.users set email = 'users.alice.new@example.test' where id = %L $$,
    tests.user_id('users.alice@example.test'))),
  1::bigint,
  'The trusted server path (no claims) can change an email address.'
);
select throws_ok(
  $$ select tests.create_user('USERS.BOB@example.test') $$,
  '23505', null,
  'Email addresses are unique regardless of case.'
);
select throws_ok(
  $$ select tests.create_user('not an email') $$,
  '23514', null,
  'An email address must look like one.'
);
select throws_ok(
  format($$ update app.users set id = gen_random_uuid() where id = %L $$,
    tests.user_id('users.bob@example.test')),
  '42501', 'user ids and creation times never change',
  'Not even the trusted path can change a user''s id.'
);

select * from finish();
rollback;
