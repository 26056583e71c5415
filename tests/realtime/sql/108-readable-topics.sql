/*
 * app.readable_topics(): the topic rule as a set; app.can_read_topic is membership of it.
 */
begin;
select plan(8);

select tests.create_user('topics.ann@example.test', 'MEMBER');
select tests.create_user('topics.ben@example.test', 'MEMBER');
select tests.create_user('topics.cid@example.test', 'MEMBER');
select tests.create_conversation(tests.user_id('topics.ann@example.test'), 'direct',
  array[tests.user_id('topics.ben@example.test')], null) as conv \gset

select tests.authenticate_as(tests.user_id('topics.ann@example.test'));
select set_eq(
  $$ select app.readable_topics() $$,
  format($$ values ('user:%s'), ('conversation:%s') $$, tests.user_id('topics.ann@example.test'), :'conv'),
  'A participant reads their user topic and their conversation''s topic, nothing else.'
);
select ok(
  app.can_read_topic('conversation:' || :'conv') and not app.can_read_topic('admin'),
  'app.can_read_topic agrees with the set.'
);

select tests.authenticate_as(tests.user_id('topics.cid@example.test'));
select ok(
  not exists (select 1 from app.readable_topics() t where t = 'conversation:' || :'conv'),
  'A stranger''s set holds no topic of the conversation.'
);

select tests.clear_authentication();
update app.sessions set revoked_at = now()
  where user_id = tests.user_id('topics.cid@example.test') and provider = 'test';
select set_config('request.jwt.claims', json_build_object('sub', tests.user_id('topics.cid@example.test'),
  'role', 'authenticated', 'session_id', (select id from app.sessions
    where user_id = tests.user_id('topics.cid@example.test') and provider = 'test' limit 1))::text, true);
select set_config('role', 'authenticated', true);
select is_empty(
  $$ select app.readable_topics() $$,
  'A revoked session reads no topic at all, not even its own user topic.'
);

-- Claims without a usable session id read nothing (and do not raise): only a live session does.
select tests.clear_authentication();
select set_config('request.jwt.claims',
  json_build_object('sub', tests.user_id('topics.ann@example.test'), 'role', 'authenticated')::text, true);
select set_config('role', 'authenticated', true);
select is_empty(
  $$ select app.readable_topics() $$,
  'Claims without a session_id read no topic.'
);
select tests.clear_authentication();
select set_config('request.jwt.claims',
  json_build_object('sub', tests.user_id('topics.ann@example.test'), 'role', 'authenticated',
                    'session_id', 'not-a-uuid')::text, true);
select set_config('role', 'authenticated', true);
select is_empty(
  $$ select app.readable_topics() $$,
  'Claims with a malformed session_id read no topic (and raise nothing).'
);

select tests.clear_authentication();
select tests.authenticate_as_anon();
select throws_ok(
  $$ select app.readable_topics() $$,
  '42501', null,
  'An anonymous visitor cannot execute the topic rule.'
);
select tests.clear_authentication();
select ok(
  has_function_privilege('authenticated', 'app.readable_topics()', 'EXECUTE')
  and not has_function_privilege('anon', 'app.readable_topics()', 'EXECUTE'),
  'Only authenticated callers execute app.readable_topics.'
);

select * from finish();
rollback;
