/*
 * app.admin_messaging_stats: platform-wide messaging counts for ADMINs only, aggregates only.
 */
begin;
select plan(6);

select tests.create_user('stats.admin@example.test', 'ADMIN');
select tests.create_user('stats.member@example.test', 'MEMBER');
select tests.create_user('stats.other@example.test', 'MEMBER');

select tests.create_conversation(tests.user_id('stats.member@example.test'), 'direct',
  array[tests.user_id('stats.other@example.test')], null) as conv \gset
select tests.insert_message(:'conv', tests.user_id('stats.member@example.test'), 'one', now());
select tests.insert_message(:'conv', tests.user_id('stats.other@example.test'), 'two', now());

select tests.authenticate_as(tests.user_id('stats.admin@example.test'));
select ok(
  (select (app.admin_messaging_stats('day', now() - interval '1 day', now() + interval '1 minute') -> 'totals' ->> 'messages')::int >= 2),
  'An ADMIN counts messages of conversations they are not in.'
);
select is(
  (select jsonb_typeof(app.admin_messaging_stats('week', now() - interval '30 days', now()) -> 'messages')),
  'array',
  'The series come back as arrays of points.'
);
select throws_ok(
  $$ select app.admin_messaging_stats('hour', now() - interval '1 day', now()) $$,
  'AG400', 'unknown interval hour',
  'An unknown interval is refused.'
);

select tests.authenticate_as(tests.user_id('stats.member@example.test'));
select throws_ok(
  $$ select app.admin_messaging_stats('day', now() - interval '1 day', now()) $$,
  '42501', 'only an ADMIN reads platform analytics',
  'A MEMBER cannot read platform analytics.'
);

select tests.authenticate_as_anon();
select throws_ok(
  $$ select app.admin_messaging_stats('day', now() - interval '1 day', now()) $$,
  '42501', null,
  'An anonymous visitor cannot execute the analytics function.'
);
select tests.clear_authentication();
select ok(
  not has_function_privilege('anon', 'app.admin_messaging_stats(text, timestamptz, timestamptz)', 'EXECUTE'),
  'anon holds no execute privilege on app.admin_messaging_stats.'
);

select * from finish();
rollback;
