/*
 * app.unlink_identity per persona (one's own identity, never the last one, never the e-mail one,
 * nobody else's; visitors refused) and app.has_fresh_sign_in (the caller's live session, opened by
 * a sign-in within security.freshSignInSeconds; a refresh does not make it fresh).
 */
begin;
select plan(15);

do $$
begin
  perform tests.create_user('ident.kim@example.test');
  perform tests.create_user('ident.lee@example.test');
  insert into app.identities (id, user_id, provider, provider_user_id, email) values
    ('1de00000-0000-4000-8000-000000000001', tests.user_id('ident.kim@example.test'), 'email', 'ident.kim@example.test', 'ident.kim@example.test'),
    ('1de00000-0000-4000-8000-000000000002', tests.user_id('ident.kim@example.test'), 'google', 'g-kim', 'ident.kim@example.test'),
    ('1de00000-0000-4000-8000-000000000003', tests.user_id('ident.kim@example.test'), 'wallet', '0x00000000000000000000000000000000000000A1', null),
    ('1de00000-0000-4000-8000-000000000004', tests.user_id('ident.lee@example.test'), 'apple', 'a-lee', null);
end
$$;

select tests.authenticate_as(tests.user_id('ident.kim@example.test'));
select lives_ok($$ select app.unlink_identity('1de00000-0000-4000-8000-000000000002') $$,
  'A user unlinks their Google identity.');
select is_empty($$ select 1 from app.identities where id = '1de00000-0000-4000-8000-000000000002' $$,
  'It is gone.');
select tests.clear_authentication();
select is(
  (select count(*)::int from app.security_events where type = 'auth.identity_unlinked'
   and user_id = tests.user_id('ident.kim@example.test') and details ->> 'provider' = 'google'),
  1, 'The unlink is recorded as auth.identity_unlinked in the same transaction.');
select tests.authenticate_as(tests.user_id('ident.kim@example.test'));
select throws_ok($$ select app.unlink_identity('1de00000-0000-4000-8000-000000000001') $$,
  'AG422', null, 'The e-mail identity cannot be unlinked.');
select throws_ok($$ select app.unlink_identity('1de00000-0000-4000-8000-000000000004') $$,
  'AG404', null, 'Another user''s identity is not found.');
select throws_ok($$ delete from app.identities where id = '1de00000-0000-4000-8000-000000000003' $$,
  '42501', null, 'Identities are not deleted directly.');
select lives_ok($$ select app.unlink_identity('1de00000-0000-4000-8000-000000000003') $$,
  'The wallet goes too, while the e-mail identity remains.');

select tests.authenticate_as(tests.user_id('ident.lee@example.test'));
select throws_ok($$ select app.unlink_identity('1de00000-0000-4000-8000-000000000004') $$,
  'AG422', null, 'The last identity of an account cannot be unlinked.');

select tests.authenticate_as_anon();
select throws_ok($$ select app.unlink_identity('1de00000-0000-4000-8000-000000000004') $$,
  '42501', null, 'A visitor cannot call app.unlink_identity.');
select tests.clear_authentication();
select isnt_empty($$ select 1 from app.identities where id = '1de00000-0000-4000-8000-000000000004' $$,
  'The last identity is still there.');

-- ---------------------------------------------------------------------------------------------
-- Fresh sign-in
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ident.lee@example.test'));
select ok(app.has_fresh_sign_in(), 'A session opened just now is fresh.');
select tests.clear_authentication();
update app.sessions set authenticated_at = now() - interval '11 minutes', refreshed_at = now()
where id = tests.session_for(tests.user_id('ident.lee@example.test'));
select tests.authenticate_as(tests.user_id('ident.lee@example.test'));
select ok(not app.has_fresh_sign_in(),
  'Eleven minutes after its sign-in it is not (the default is 600 s), a recent refresh notwithstanding.');
select tests.clear_authentication();
insert into app.config_versions (version, config, reason)
select max(version) + 1, '{"security":{"freshSignInSeconds":3600}}', 'test' from app.config_versions;
select tests.authenticate_as(tests.user_id('ident.lee@example.test'));
select ok(app.has_fresh_sign_in(), 'With security.freshSignInSeconds at 3600 it is fresh again.');
select tests.clear_authentication();
update app.sessions set revoked_at = now(), revoked_reason = 'test'
where id = tests.session_for(tests.user_id('ident.lee@example.test'));
select set_config('request.jwt.claims',
  json_build_object('sub', tests.user_id('ident.lee@example.test'), 'role', 'authenticated',
    'session_id', (select id from app.sessions where user_id = tests.user_id('ident.lee@example.test')
                   and revoked_reason = 'test'))::text, true);
select set_config('role', 'authenticated', true);
select ok(not app.has_fresh_sign_in(), 'An ended session is never fresh.');
select tests.authenticate_as_anon();
select throws_ok($$ select app.has_fresh_sign_in() $$, '42501', null,
  'A visitor cannot ask (and has no session to be fresh).');

select * from finish();
rollback;
