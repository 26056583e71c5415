/*
 * The live-session rule, written once (app_private.live_sessions): a session is live while it is
 * not revoked, not expired and its user is active. The readers of the rule (the API's session
 * check, the inbox page, app.readable_topics, app.has_fresh_sign_in) refuse what it refuses; no
 * API role may call it.
 */
begin;
select plan(9);

do $$
begin
  perform tests.create_user('live.una@example.test');
  perform tests.create_user('live.sid@example.test');
  insert into app.sessions (id, user_id, provider, expires_at, revoked_at, authenticated_at) values
    ('11fe0000-0000-4000-8000-000000000001', tests.user_id('live.una@example.test'), 'email',
     now() + interval '1 day', null, now()),
    ('11fe0000-0000-4000-8000-000000000002', tests.user_id('live.una@example.test'), 'email',
     now() + interval '1 day', now() - interval '1 minute', now()),
    ('11fe0000-0000-4000-8000-000000000003', tests.user_id('live.una@example.test'), 'email',
     now() - interval '1 minute', null, now() - interval '2 days'),
    ('11fe0000-0000-4000-8000-000000000004', tests.user_id('live.sid@example.test'), 'email',
     now() + interval '1 day', null, now());
end
$$;

select results_eq(
  $$ select session_id, id from app_private.live_sessions(array[
       '11fe0000-0000-4000-8000-000000000001', '11fe0000-0000-4000-8000-000000000002',
       '11fe0000-0000-4000-8000-000000000003', '11fe0000-0000-4000-8000-000000000004']::uuid[])
     order by session_id $$,
  $$ values ('11fe0000-0000-4000-8000-000000000001'::uuid, tests.user_id('live.una@example.test')),
            ('11fe0000-0000-4000-8000-000000000004'::uuid, tests.user_id('live.sid@example.test')) $$,
  'Of four sessions, the revoked and the expired one are not live.'
);

update app.users set status = 'suspended' where id = tests.user_id('live.sid@example.test');

select is_empty(
  $$ select 1 from app_private.live_sessions(array['11fe0000-0000-4000-8000-000000000004']::uuid[]) $$,
  'A suspended user''s session is not live.'
);

-- The readers follow the rule: a suspended user's own, unrevoked session reads no topic and is
-- no fresh sign-in.
do $$
begin
  perform set_config('request.jwt.claims', json_build_object('sub', tests.user_id('live.sid@example.test'),
    'role', 'authenticated', 'session_id', '11fe0000-0000-4000-8000-000000000004')::text, true);
  perform set_config('role', 'authenticated', true);
end
$$;
select is_empty($$ select app.readable_topics() $$, 'A suspended user''s session reads no topic.');
select is(app.has_fresh_sign_in(), false, 'A suspended user''s session is no fresh sign-in.');
select tests.clear_authentication();

do $$
begin
  perform set_config('request.jwt.claims', json_build_object('sub', tests.user_id('live.una@example.test'),
    'role', 'authenticated', 'session_id', '11fe0000-0000-4000-8000-000000000001')::text, true);
  perform set_config('role', 'authenticated', true);
end
$$;
select ok(
  (select 'user:' || tests.user_id('live.una@example.test')::text in (select app.readable_topics())),
  'A live session reads its user''s topic.'
);
select is(app.has_fresh_sign_in(), true, 'A live session opened just now is a fresh sign-in.');
select tests.clear_authentication();

select throws_ok(
  $$ select app_private.inbox_page_for_session('11fe0000-0000-4000-8000-000000000004',
       tests.user_id('live.sid@example.test'), null, null, null, null, null, null, 10) $$,
  'AG401', 'Sign in to continue.',
  'The inbox page refuses a suspended user''s session.'
);

select ok(
  not has_function_privilege('authenticated', 'app_private.live_sessions(uuid[])', 'execute')
  and not has_function_privilege('anon', 'app_private.live_sessions(uuid[])', 'execute')
  and not has_function_privilege('service_role', 'app_private.live_sessions(uuid[])', 'execute'),
  'No API role may call app_private.live_sessions.'
);

select tests.authenticate_as(tests.user_id('live.una@example.test'));
select throws_ok(
  $$ select * from app_private.live_sessions(array['11fe0000-0000-4000-8000-000000000001']::uuid[]) $$,
  '42501', null,
  'A signed-in user calling it is refused.'
);

select * from finish();
rollback;
