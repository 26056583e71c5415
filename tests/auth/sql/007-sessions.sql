/*
 * app.sessions: a user reads their own sessions and can revoke them (and nothing else: no
 * un-revoking, no other columns, no other user's sessions); an ADMIN reads every session;
 * visitors have no access. Sessions are created and revoked by the server on the trusted path.
 */
begin;
select plan(21);

do $$
begin
  perform tests.create_user('sessions.ivy@example.test');
  perform tests.create_user('sessions.jack@example.test');
  perform tests.create_user('sessions.admin@example.test', 'ADMIN');

  insert into app.sessions (id, user_id, provider, expires_at, revoked_at, revoked_reason) values
    ('5e55a000-0000-4000-8000-000000000001', tests.user_id('sessions.ivy@example.test'), 'email',
     now() + interval '30 days', null, null),
    ('5e55a000-0000-4000-8000-000000000002', tests.user_id('sessions.ivy@example.test'), 'email',
     now() + interval '30 days', now() - interval '1 hour', 'refresh_token_reuse'),
    ('5e55a000-0000-4000-8000-000000000003', tests.user_id('sessions.ivy@example.test'), 'google',
     now() + interval '30 days', null, null),
    ('5e55a000-0000-4000-8000-000000000004', tests.user_id('sessions.jack@example.test'), 'email',
     now() + interval '30 days', null, null);
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Self
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('sessions.ivy@example.test'));

select results_eq(
  $$ select id from app.sessions where provider <> 'test' order by id $$,
  $$ values ('5e55a000-0000-4000-8000-000000000001'::uuid), ('5e55a000-0000-4000-8000-000000000002'::uuid),
            ('5e55a000-0000-4000-8000-000000000003'::uuid) $$,
  'A user sees exactly their own sessions.'
);

select is(
  tests.row_count($$ update app.sessions set revoked_at = now(), revoked_reason = 'signout'
                     where id = '5e55a000-0000-4000-8000-000000000001' $$),
  1::bigint,
  'A user can revoke their own live session.'
);
select results_eq(
  $$ select revoked_at is not null, revoked_reason from app.sessions where id = '5e55a000-0000-4000-8000-000000000001' $$,
  $$ values (true, 'signout') $$,
  'The revoked session records when and why.'
);

select is(
  tests.row_count($$ update app.sessions set revoked_at = null, revoked_reason = null
                     where id = '5e55a000-0000-4000-8000-000000000002' $$),
  0::bigint,
  'A user cannot un-revoke their own revoked session (a revoked session is not updatable).'
);
select is(
  tests.row_count($$ update app.sessions set revoked_reason = 'rewritten'
                     where id = '5e55a000-0000-4000-8000-000000000001' $$),
  0::bigint,
  'A user cannot rewrite the reason of a session once it is revoked.'
);
select results_eq(
  $$ select revoked_at is not null from app.sessions where id = '5e55a000-0000-4000-8000-000000000002' $$,
  $$ values (true) $$,
  'The revoked session stays revoked.'
);
select is(
  tests.row_count($$ update app.sessions set revoked_at = now() - interval '1 year', revoked_reason = 'backdated'
                     where id = '5e55a000-0000-4000-8000-000000000003' $$),
  1::bigint,
  'Any update a user makes to a live session of theirs revokes it.'
);
select ok(
  (select revoked_at > now() - interval '1 minute' from app.sessions where id = '5e55a000-0000-4000-8000-000000000003'),
  'The revocation time is the server''s clock: a user cannot backdate it.'
);
select throws_ok(
  $$ update app.sessions set expires_at = now() + interval '10 years' where id = '5e55a000-0000-4000-8000-000000000003' $$,
  '42501', 'permission denied for table sessions',
  'A user cannot extend their own session.'
);
select throws_ok(
  $$ insert into app.sessions (user_id, provider, expires_at) values (auth.uid(), 'email', now() + interval '1 day') $$,
  '42501', 'permission denied for table sessions',
  'A user cannot create a session.'
);
select throws_ok(
  $$ delete from app.sessions where id = '5e55a000-0000-4000-8000-000000000002' $$,
  '42501', 'permission denied for table sessions',
  'A user cannot delete a session (a revoked session stays on record).'
);
select results_eq(
  $$ select id, revoked_at is not null from app.sessions where provider <> 'test' order by id $$,
  $$ values ('5e55a000-0000-4000-8000-000000000001'::uuid, true), ('5e55a000-0000-4000-8000-000000000002'::uuid, true),
            ('5e55a000-0000-4000-8000-000000000003'::uuid, true) $$,
  'After the refused writes every session the user revoked stays revoked.'
);

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$ select * from app.sessions where id = '5e55a000-0000-4000-8000-000000000004' $$,
  'Another user''s session is invisible.'
);
select is(
  tests.row_count($$ update app.sessions set revoked_at = now(), revoked_reason = 'mischief'
                     where id = '5e55a000-0000-4000-8000-000000000004' $$),
  0::bigint,
  'Revoking another user''s session affects no row.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.sessions $$,
  '42501', 'permission denied for table sessions',
  'An anonymous visitor cannot read app.sessions.'
);
select throws_ok(
  $$ update app.sessions set revoked_at = now() where id = '5e55a000-0000-4000-8000-000000000004' $$,
  '42501', 'permission denied for table sessions',
  'An anonymous visitor cannot revoke sessions.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('sessions.admin@example.test'));

select set_has(
  $$ select id from app.sessions $$,
  $$ values ('5e55a000-0000-4000-8000-000000000001'::uuid), ('5e55a000-0000-4000-8000-000000000004'::uuid) $$,
  'An ADMIN sees every user''s sessions.'
);
select is(
  tests.row_count($$ update app.sessions set revoked_at = now(), revoked_reason = 'admin'
                     where id = '5e55a000-0000-4000-8000-000000000004' $$),
  0::bigint,
  'An ADMIN cannot revoke another user''s session through RLS (the server does it on the trusted path).'
);
select throws_ok(
  $$ delete from app.sessions where id = '5e55a000-0000-4000-8000-000000000004' $$,
  '42501', 'permission denied for table sessions',
  'An ADMIN cannot delete sessions.'
);

select tests.clear_authentication();

select is(
  (select revoked_at from app.sessions where id = '5e55a000-0000-4000-8000-000000000004'),
  null,
  'The other user''s session really is still live.'
);

-- The trusted server path revokes any session.
select is(
  tests.row_count($$ update app.sessions set revoked_at = now(), revoked_reason = 'admin'
                     where id = '5e55a000-0000-4000-8000-000000000004' $$),
  1::bigint,
  'The trusted server path can revoke any session.'
);

select * from finish();
rollback;
