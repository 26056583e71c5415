/*
 * app.identities: a user reads their own sign-in identities, an ADMIN reads everyone's; nobody
 * writes them through the API roles (sign-in does, on the trusted path).
 */
begin;
select plan(14);

do $$
begin
  perform tests.create_user('identities.gina@example.test');
  perform tests.create_user('identities.hank@example.test');
  perform tests.create_user('identities.admin@example.test', 'ADMIN');

  insert into app.identities (user_id, provider, provider_user_id, email) values
    (tests.user_id('identities.gina@example.test'), 'email', 'identities.gina@example.test', 'identities.gina@example.test'),
    (tests.user_id('identities.gina@example.test'), 'google', 'google-gina', 'identities.gina@example.test'),
    (tests.user_id('identities.hank@example.test'), 'email', 'identities.hank@example.test', 'identities.hank@example.test');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Self
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('identities.gina@example.test'));

select results_eq(
  $$ select provider, provider_user_id from app.identities order by provider $$,
  $$ values ('email', 'identities.gina@example.test'), ('google', 'google-gina') $$,
  'A user sees exactly their own identities.'
);
select throws_ok(
  $$ insert into app.identities (user_id, provider, provider_user_id) values (auth.uid(), 'apple', 'apple-gina') $$,
  '42501', 'permission denied for table identities',
  'A user cannot add an identity to themselves.'
);
select throws_ok(
  $$ update app.identities set provider_user_id = 'hijacked' where user_id = auth.uid() $$,
  '42501', 'permission denied for table identities',
  'A user cannot edit their own identities.'
);
select throws_ok(
  $$ delete from app.identities where user_id = auth.uid() $$,
  '42501', 'permission denied for table identities',
  'A user cannot delete their own identities.'
);

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select is_empty(
  format('select * from app.identities where user_id = %L', tests.user_id('identities.hank@example.test')),
  'Another user''s identities are invisible.'
);
select throws_ok(
  format($$ insert into app.identities (user_id, provider, provider_user_id) values (%L, 'wallet', 'attacker-wallet') $$,
    tests.user_id('identities.hank@example.test')),
  '42501', 'permission denied for table identities',
  'A user cannot attach an identity to another user.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.identities $$,
  '42501', 'permission denied for table identities',
  'An anonymous visitor cannot read app.identities.'
);
select throws_ok(
  format($$ insert into app.identities (user_id, provider, provider_user_id) values (%L, 'email', 'anon') $$,
    tests.user_id('identities.hank@example.test')),
  '42501', 'permission denied for table identities',
  'An anonymous visitor cannot add identities.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('identities.admin@example.test'));

select set_has(
  $$ select provider_user_id from app.identities $$,
  $$ values ('identities.gina@example.test'), ('google-gina'), ('identities.hank@example.test') $$,
  'An ADMIN sees every user''s identities.'
);
select throws_ok(
  format($$ update app.identities set user_id = auth.uid() where user_id = %L $$,
    tests.user_id('identities.hank@example.test')),
  '42501', 'permission denied for table identities',
  'An ADMIN cannot move an identity to another account.'
);
select throws_ok(
  format($$ delete from app.identities where user_id = %L $$, tests.user_id('identities.hank@example.test')),
  '42501', 'permission denied for table identities',
  'An ADMIN cannot delete identities.'
);
select throws_ok(
  format($$ insert into app.identities (user_id, provider, provider_user_id) values (%L, 'apple', 'apple-hank') $$,
    tests.user_id('identities.hank@example.test')),
  '42501', 'permission denied for table identities',
  'An ADMIN cannot add identities.'
);

-- ---------------------------------------------------------------------------------------------
-- Trusted server path and constraints
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select results_eq(
  $$ select user_id, provider_user_id from app.identities where provider_user_id like '%hank%' $$,
  format($$ values (%L::uuid, 'identities.hank@example.test') $$, tests.user_id('identities.hank@example.test')),
  'The refused writes left Hank''s identities as they were.'
);
select throws_ok(
  format($$ insert into app.identities (user_id, provider, provider_user_id) values (%L, 'google', 'google-gina') $$,
    tests.user_id('identities.hank@example.test')),
  '23505', null,
  'A provider account belongs to one user only.'
);

select * from finish();
rollback;
