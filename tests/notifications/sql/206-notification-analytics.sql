/*
 * app.notification_analytics: ADMIN only; figures from the rollups over the whole buckets of
 * the range: created and read of inbox notifications created in them (hidden ones left out),
 * the read rate and the median time to read (from a histogram: within 1 s + 9.1 %), push and
 * e-mail outcomes by their time, by type, by channel and in a zero-filled series. The rows are
 * written with past times (below the fold's mark), so a recount takes them in.
 */
begin;
select plan(11);

do $$
begin
  perform tests.create_user('ana.adm@example.test', 'ADMIN');
  perform tests.create_user('ana.mem@example.test', 'MEMBER');
end
$$;
select tests.user_id('ana.adm@example.test') as adm \gset
select tests.user_id('ana.mem@example.test') as mem \gset

-- A range in the past that nothing else writes into.
insert into app.notifications (user_id, type, title, body, created_at, read_at, inbox) values
  (:'mem', 'WALLET', 'w1', '', '2020-03-02 10:00+00', '2020-03-02 10:00:10+00', true),
  (:'mem', 'WALLET', 'w2', '', '2020-03-02 11:00+00', '2020-03-02 11:00:30+00', true),
  (:'mem', 'WALLET', 'w3', '', '2020-03-03 09:00+00', null, true),
  (:'mem', 'SYSTEM', 's1', '', '2020-03-03 12:00+00', '2020-03-04 12:00+00', true),
  (:'mem', 'SYSTEM', 'hidden', '', '2020-03-03 12:00+00', null, false),
  (:'mem', 'SYSTEM', 'before', '', '2020-02-28 12:00+00', null, true);
insert into app_private.notification_deliveries (notification_id, channel, status, finished_at)
select n.id, x.channel::app_private.delivery_channel, x.status::app_private.delivery_status, x.at::timestamptz
from app.notifications n
join (values ('w1', 'push', 'sent', '2020-03-02 10:00:01+00'), ('w2', 'push', 'failed', '2020-03-02 11:00:01+00'),
             ('w3', 'push', 'pruned', '2020-03-03 09:00:01+00'), ('s1', 'email', 'sent', '2020-03-03 12:00:05+00'),
             ('s1', 'push', 'sent', '2020-03-03 12:00:02+00')) as x (title, channel, status, at)
  on x.title = n.title
where n.user_id = :'mem';
select app_private.recount_analytics_facts();

select tests.authenticate_as(:'mem');
select throws_ok(
  $$ select app.notification_analytics('2020-03-01', '2020-03-05', 'day') $$,
  '42501', null,
  'Below ADMIN, analytics are refused.'
);

select tests.authenticate_as(:'adm');
select app.notification_analytics('2020-03-01', '2020-03-05', 'day') as a \gset
select results_eq(
  format($$ select (%L::jsonb) -> 'totals' $$, :'a'),
  $$ values ('{"created": 4, "read": 3, "pushSent": 2, "pushDelivered": 2, "pushFailed": 2, "emailSent": 1}'::jsonb) $$,
  'Totals: 4 inbox notifications created in range (not the hidden one, not the earlier one), 3 read, pushes 2 sent and 2 failed (one pruned), 1 e-mail.'
);
select is(((:'a'::jsonb) ->> 'readRate')::numeric, 0.75, 'readRate 3/4.');
select ok(
  abs(((:'a'::jsonb) ->> 'medianSecondsToRead')::numeric - 30) <= 1 + 0.091 * 30,
  'The median time to read of 10 s, 30 s and a day is 30 s, within 1 s + 9.1 % (a histogram''s bin).'
);
select results_eq(
  format($$ select x from jsonb_array_elements((%L::jsonb) -> 'byType') x where x ->> 'type' in ('WALLET', 'SYSTEM') order by x ->> 'type' $$, :'a'),
  $$ values ('{"type": "SYSTEM", "created": 1, "read": 1, "pushSent": 1, "pushFailed": 0}'::jsonb),
            ('{"type": "WALLET", "created": 3, "read": 2, "pushSent": 1, "pushFailed": 2}'::jsonb) $$,
  'byType splits the same figures by type.'
);
select is(
  jsonb_array_length((:'a'::jsonb) -> 'byType'),
  5,
  'byType lists every type, zeros included.'
);
select results_eq(
  format($$ select (%L::jsonb) -> 'byChannel' $$, :'a'),
  $$ values ('[{"channel": "inApp", "sent": 4, "failed": 0}, {"channel": "push", "sent": 2, "failed": 2}, {"channel": "email", "sent": 1, "failed": 0}]'::jsonb) $$,
  'byChannel: in-app, push and e-mail.'
);
select results_eq(
  format($$ select x ->> 't', (x ->> 'created')::int, (x ->> 'read')::int, (x ->> 'pushSent')::int, (x ->> 'pushFailed')::int
            from jsonb_array_elements((%L::jsonb) -> 'series') x $$, :'a'),
  $$ values ('2020-03-01T00:00:00Z', 0, 0, 0, 0), ('2020-03-02T00:00:00Z', 2, 2, 1, 1),
            ('2020-03-03T00:00:00Z', 2, 1, 1, 1), ('2020-03-04T00:00:00Z', 0, 0, 0, 0),
            ('2020-03-05T00:00:00Z', 0, 0, 0, 0) $$,
  'The series has one point per day, zero-filled, creations by creation day and pushes by outcome time.'
);
select results_eq(
  $$ select app.notification_analytics('2020-03-01', '2020-03-05', 'day', 'WALLET') -> 'totals' ->> 'created' $$,
  $$ values ('3') $$,
  'A type filter narrows every figure.'
);
select throws_ok($$ select app.notification_analytics('2020-03-01', '2020-03-05', 'year') $$,
  'AG400', null, 'An unknown interval is AG400.');
select throws_ok($$ select app.notification_analytics('2020-03-05', '2020-03-01', 'day') $$,
  'AG400', null, 'from after to is AG400.');

select * from finish();
rollback;
