/*
 * The one way in (supabase/migrations/..._notifications.sql): app_private.notify and its
 * set-based form notify_many. What it stores, the event it emits, the deliveries and the job it
 * queues; preferences (in-app off keeps the row out of the inbox, a channel turned off queues
 * nothing), quiet hours (deliveries held until the period ends, across midnight too), critical
 * bypassing both, collapse keys (one unread row per key, updated in place, silently), validation,
 * and that no API role can call it.
 */
begin;
select plan(52);

do $$
begin
  perform tests.create_user('notify.nora@example.test', 'MEMBER');
  perform tests.create_user('notify.otto@example.test', 'SUBSCRIBER');
  perform tests.create_user('notify.quinn@example.test', 'SUBSCRIBER');
end
$$;

select tests.user_id('notify.nora@example.test') as nora \gset
select tests.user_id('notify.otto@example.test') as otto \gset
select tests.user_id('notify.quinn@example.test') as quinn \gset

-- Nora has two devices; Otto has one; Quinn none.
insert into app.push_devices (user_id, token, platform) values
  (:'nora', 'notify-nora-phone', 'android'), (:'nora', 'notify-nora-web', 'web'),
  (:'otto', 'notify-otto-phone', 'ios');

-- ---------------------------------------------------------------------------------------------
-- Who may call it
-- ---------------------------------------------------------------------------------------------

select ok(
  not has_function_privilege('authenticated', 'app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text)', 'execute')
  and not has_function_privilege('anon', 'app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text)', 'execute')
  and not has_function_privilege('service_role', 'app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text)', 'execute'),
  'No API role (anon, authenticated, service_role) may call app_private.notify.'
);
select ok(
  not has_function_privilege('authenticated', 'app_private.notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text)', 'execute'),
  'Signed-in users may not call app_private.notify_many.'
);
select is(
  (select prosecdef from pg_proc where oid = 'app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text)'::regprocedure),
  true,
  'app_private.notify is security definer, so other domains'' functions and triggers can call it.'
);

select tests.authenticate_as(:'nora');
select throws_ok(
  format($$ select app_private.notify(%L, 'SYSTEM', 'x', 'y') $$, :'otto'),
  '42501', null,
  'A signed-in user calling app_private.notify is refused (42501).'
);
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- A plain notification: the row, the event, the deliveries, the job
-- ---------------------------------------------------------------------------------------------

select app_private.notify(:'nora', 'SYSTEM', 'Welcome', 'Glad you are here', '{"kind":"welcome"}') as n1 \gset

select results_eq(
  format($$ select user_id, type::text, title, body, data, priority::text, inbox, read_at is null, collapse_key
            from app.notifications where id = %L $$, :'n1'),
  format($$ values (%L::uuid, 'SYSTEM', 'Welcome', 'Glad you are here', '{"kind":"welcome"}'::jsonb, 'normal', true, true, null::text) $$, :'nora'),
  'notify stores the notification in the recipient''s inbox, unread, priority normal by default.'
);
select results_eq(
  format($$ select event, payload ->> 'id', payload ->> 'title', payload ->> 'readAt', payload ->> 'priority'
            from app.events where topic = 'user:' || %L and event like 'notification.%%' order by id $$, :'nora'),
  format($$ values ('notification.created', %L, 'Welcome', null::text, 'normal') $$, :'n1'),
  'It emits notification.created on user:<id>, carrying the notification.'
);
select is(
  (select count(*)::int from app_private.notification_deliveries where notification_id = :'n1' and channel = 'push'),
  2,
  'Push (on by default) gets one delivery row per registered device of the recipient.'
);
select is(
  (select count(*)::int from app_private.notification_deliveries where notification_id = :'n1' and channel = 'email'),
  1,
  'SYSTEM has e-mail on by default: one e-mail delivery row.'
);
select ok(
  (select bool_and(status = 'queued' and not_before <= now() and attempts = 0)
     from app_private.notification_deliveries where notification_id = :'n1'),
  'The delivery rows are queued, due now, not yet attempted.'
);
select results_eq(
  format($$ select kind, payload, run_at <= now() from app_private.jobs where dedupe_key = 'notifications.deliver:' || %L $$, :'n1'),
  format($$ values ('notifications.deliver', jsonb_build_object('notificationIds', jsonb_build_array(%L::uuid)), true) $$, :'n1'),
  'One notifications.deliver job is queued for them, due now, keyed by the notification.'
);

-- Someone signed in by wallet has no e-mail address: SYSTEM's e-mail default passes them by.
select tests.create_user('notify.wren@example.test', 'SUBSCRIBER') as wren \gset
update app.users set email = null where id = :'wren';
select app_private.notify(:'wren', 'SYSTEM', 'No address', '') as n_wren \gset
select is_empty(
  format($$ select 1 from app_private.notification_deliveries where notification_id = %L $$, :'n_wren'),
  'A recipient without an e-mail address (and no devices) gets no e-mail delivery row.'
);

select app_private.notify(:'quinn', 'OPPORTUNITY', 'A lead', '', '{}', 'low') as n2 \gset
select is(
  (select count(*)::int from app_private.notification_deliveries where notification_id = :'n2'),
  0,
  'A recipient without devices, for a type without e-mail, gets no delivery rows...'
);
select is(
  (select count(*)::int from app_private.jobs where dedupe_key = 'notifications.deliver:' || :'n2'),
  0,
  '...and no job.'
);
select is(
  (select body from app.notifications where id = :'n2'),
  '',
  'An empty body is allowed; priority low is kept.'
);

-- ---------------------------------------------------------------------------------------------
-- Validation
-- ---------------------------------------------------------------------------------------------

select throws_ok(
  $$ select app_private.notify('00000000-0000-0000-0000-00000000dead', 'SYSTEM', 'x', 'y') $$,
  'AG404', 'user not found',
  'An unknown recipient is AG404.'
);
select throws_ok(
  format($$ select app_private.notify(%L, 'SYSTEM', '', 'y') $$, :'nora'),
  'AG400', null,
  'An empty title is AG400.'
);
select throws_ok(
  format($$ select app_private.notify(%L, 'SYSTEM', repeat('t', 201), 'y') $$, :'nora'),
  'AG400', null,
  'A title over 200 characters is AG400.'
);
select throws_ok(
  format($$ select app_private.notify(%L, 'SYSTEM', 'x', repeat('b', 2001)) $$, :'nora'),
  'AG400', null,
  'A body over 2000 characters is AG400.'
);
select throws_ok(
  format($$ select app_private.notify(%L, 'SYSTEM', 'x', 'y', '[1,2]') $$, :'nora'),
  'AG400', null,
  'Data that is not a JSON object is AG400.'
);
select throws_ok(
  format($$ select app_private.notify(%L, 'SYSTEM', 'x', 'y', jsonb_build_object('pad', repeat('p', 3000))) $$, :'nora'),
  'AG400', null,
  'Data over 2048 bytes is AG400 (it must fit in a push).'
);

-- ---------------------------------------------------------------------------------------------
-- Preferences: in-app off, a channel off, critical
-- ---------------------------------------------------------------------------------------------

insert into app.notification_preferences (user_id, types)
values (:'otto', '{"ENTITY": {"inApp": false}, "WALLET": {"push": false}}');

select is(
  app_private.notify(:'otto', 'ENTITY', 'Hidden', 'Not for the inbox'),
  null::uuid,
  'With the type''s in-app channel off, notify returns null.'
);
select results_eq(
  format($$ select inbox, count(*)::int from app.notifications where user_id = %L and title = 'Hidden' group by inbox $$, :'otto'),
  $$ values (false, 1) $$,
  'The row is kept out of the inbox (inbox = false), for delivery and analytics.'
);
select is(
  (select count(*)::int from app.events where topic = 'user:' || :'otto' and payload ->> 'title' = 'Hidden'),
  0,
  'No notification.created event for a notification kept out of the inbox.'
);
select is(
  (select count(*)::int from app_private.notification_deliveries d join app.notifications n on n.id = d.notification_id
    where n.user_id = :'otto' and n.title = 'Hidden' and d.channel = 'push'),
  1,
  'Its push is still queued: push is on for that type.'
);

select tests.authenticate_as(:'otto');
select is(
  (select count(*)::int from app.notifications where title = 'Hidden'),
  0,
  'The recipient does not see the hidden row through RLS.'
);
select tests.clear_authentication();

select app_private.notify(:'otto', 'WALLET', 'Received 5 USDC', 'From a friend') as n4 \gset
select isnt(:'n4'::uuid, null, 'A type with push off is still stored and shown.');
select is(
  (select count(*)::int from app_private.notification_deliveries where notification_id = :'n4'),
  0,
  'A type whose push is turned off gets no push delivery (and no e-mail: off by default).'
);

select app_private.notify(:'otto', 'ENTITY', 'Urgent', 'Critical news', '{}', 'critical') as n5 \gset
select isnt(:'n5'::uuid, null, 'Critical priority is stored in the inbox even when in-app is off for the type.');
select results_eq(
  format($$ select channel::text, count(*)::int from app_private.notification_deliveries where notification_id = %L group by 1 order by 1 $$, :'n5'),
  $$ values ('email', 1), ('push', 1) $$,
  'Critical priority queues push and e-mail whatever the preferences.'
);

-- Defaults come from the configuration: an admin turning a default off reaches users who did not choose.
insert into app.config_versions (version, config, reason)
select max(version) + 1, '{"notifications": {"defaults": {"OPPORTUNITY": {"inApp": false}}}}', 'test'
from app.config_versions;
select is(
  app_private.notify(:'quinn', 'OPPORTUNITY', 'Default off', 'x'),
  null::uuid,
  'A default changed in the configuration applies to users who did not choose (OPPORTUNITY in-app off: null).'
);
select results_eq(
  $$ select app_private.notification_type_defaults('OPPORTUNITY') $$,
  $$ values ('{"inApp": false, "push": true, "email": false}'::jsonb) $$,
  'notification_type_defaults lays the configuration''s choice over the built-in defaults, channel by channel.'
);

-- ---------------------------------------------------------------------------------------------
-- Quiet hours
-- ---------------------------------------------------------------------------------------------

select results_eq(
  $$ select app_private.quiet_until('22:00', '07:00', 'UTC', '2026-11-24 23:30+00'),
            app_private.quiet_until('22:00', '07:00', 'UTC', '2026-11-24 03:00+00'),
            app_private.quiet_until('22:00', '07:00', 'UTC', '2026-11-24 12:00+00'),
            app_private.quiet_until('22:00', '07:00', 'UTC', '2026-11-24 07:00+00') $$,
  $$ values ('2026-11-25 07:00+00'::timestamptz, '2026-11-24 07:00+00'::timestamptz, null::timestamptz, null::timestamptz) $$,
  'Quiet hours across midnight: late evening waits for the next morning, early morning for the same morning; noon and the end minute itself are not quiet.'
);
select results_eq(
  $$ select app_private.quiet_until('09:00', '17:00', 'Europe/Berlin', '2026-11-24 10:00+00'),
            app_private.quiet_until('09:00', '17:00', 'Europe/Berlin', '2026-11-24 07:59+00'),
            app_private.quiet_until('09:00', '17:00', 'America/New_York', '2026-11-24 10:00+00') $$,
  $$ values ('2026-11-24 16:00+00'::timestamptz, null::timestamptz, null::timestamptz) $$,
  'Quiet hours within a day are wall-clock times of their time zone (Berlin 11:00 is quiet until 17:00 Berlin = 16:00 UTC; 08:59 Berlin is not; New York 05:00 is not).'
);
select is(
  app_private.quiet_until(null, null, null, now()),
  null::timestamptz,
  'Without quiet hours nothing waits.'
);

update app.notification_preferences set
  quiet_start = date_trunc('minute', now() - interval '1 hour')::time,
  quiet_end = date_trunc('minute', now() + interval '2 hours')::time,
  quiet_time_zone = 'UTC'
where user_id = :'otto';

select app_private.notify(:'otto', 'SYSTEM', 'At night', 'Wait for it') as n6 \gset
select ok(
  (select bool_and(not_before = date_trunc('minute', now() + interval '2 hours'))
     from app_private.notification_deliveries where notification_id = :'n6')
  and (select count(*) from app_private.notification_deliveries where notification_id = :'n6') = 2,
  'In quiet hours, push and e-mail are queued for the end of the quiet period.'
);
select is(
  (select run_at from app_private.jobs where dedupe_key = 'notifications.deliver:' || :'n6'),
  date_trunc('minute', now() + interval '2 hours'),
  'Their job runs when the quiet period ends.'
);
select is(
  (select inbox and read_at is null from app.notifications where id = :'n6'),
  true,
  'The in-app notification is stored at once.'
);
select app_private.notify(:'otto', 'SYSTEM', 'Breach', 'Now', '{}', 'critical') as n7 \gset
select ok(
  (select bool_and(not_before <= now()) from app_private.notification_deliveries where notification_id = :'n7'),
  'Critical priority ignores quiet hours: due now.'
);

-- ---------------------------------------------------------------------------------------------
-- Collapse keys
-- ---------------------------------------------------------------------------------------------

select app_private.notify(:'nora', 'MESSAGE', 'Ann', 'first', '{"conversationId":"c1","messageId":"m1"}', 'normal', 'conversation:c1') as c1 \gset
select is(
  (select data from app.notifications where id = :'c1'),
  '{"conversationId":"c1","messageId":"m1","count":1}'::jsonb,
  'A collapsible notification starts with data.count 1.'
);
select (select count(*) from app.events where topic = 'user:' || :'nora') as events_before \gset
select (select count(*) from app_private.notification_deliveries) as deliveries_before \gset
select (select count(*) from app_private.jobs) as jobs_before \gset

select app_private.notify(:'nora', 'MESSAGE', 'Ann', 'second', '{"conversationId":"c1","messageId":"m2"}', 'high', 'conversation:c1') as c2 \gset
select is(:'c2'::uuid, :'c1'::uuid, 'The same unread key returns the same notification.');
select results_eq(
  format($$ select title, body, data, priority::text from app.notifications where id = %L $$, :'c1'),
  $$ values ('Ann', 'second', '{"conversationId":"c1","messageId":"m2","count":2}'::jsonb, 'high') $$,
  'It is updated in place: the latest body and data, count 2, the higher priority.'
);
select is(
  (select count(*)::int from app.notifications where user_id = :'nora' and collapse_key = 'conversation:c1'),
  1,
  'Still one row for the key.'
);
select is(
  (select count(*) from app.events where topic = 'user:' || :'nora'),
  :'events_before'::bigint,
  'Folding into an unread notification emits no event...'
);
select ok(
  (select count(*) from app_private.notification_deliveries) = :'deliveries_before'::bigint
  and (select count(*) from app_private.jobs) = :'jobs_before'::bigint,
  '...and queues no delivery and no job.'
);
select is(
  app_private.notify(:'nora', 'MESSAGE', 'Ann', 'third', '{"conversationId":"c1","count":5}', 'normal', 'conversation:c1'),
  :'c1'::uuid,
  'A count given in data is added as it is...'
);
select is(
  (select (data ->> 'count')::int from app.notifications where id = :'c1'),
  7,
  '...(2 + 5 = 7).'
);
select app_private.notify(:'nora', 'MESSAGE', 'Bea', 'other', '{}', 'normal', 'conversation:c2') as other_key \gset
select isnt(:'other_key'::uuid, :'c1'::uuid, 'Another key is another notification.');

update app.notifications set read_at = now() where id = :'c1';
select app_private.notify(:'nora', 'MESSAGE', 'Ann', 'after reading', '{}', 'normal', 'conversation:c1') as c3 \gset
select isnt(:'c3'::uuid, :'c1'::uuid, 'Once read, the key starts a new unread notification...');
select results_eq(
  format($$ select event from app.events where topic = 'user:' || %L and payload ->> 'id' = %L $$, :'nora', :'c3'),
  $$ values ('notification.created') $$,
  '...with its own notification.created event.'
);
select app_private.notify(:'otto', 'MESSAGE', 'Ann', 'same key, other user', '{}', 'normal', 'conversation:c1') as otto_c1 \gset
select isnt(:'otto_c1'::uuid, :'c3'::uuid, 'Collapse keys are per recipient.');

-- ---------------------------------------------------------------------------------------------
-- Many recipients in one statement
-- ---------------------------------------------------------------------------------------------

select results_eq(
  format($$ select recipient_id, shown, is_new from app_private.notify_many(array[%L, %L, '00000000-0000-0000-0000-00000000dead']::uuid[], 'SYSTEM', 'All', 'Everyone') order by recipient_id $$, :'nora', :'quinn'),
  format($$ select * from (values (%L::uuid, true, true), (%L::uuid, true, true)) v order by 1 $$, :'nora', :'quinn'),
  'notify_many writes one notification per known recipient in one call; unknown ids are skipped.'
);
select is(
  (select count(*)::int from app.events where event = 'notification.created' and payload ->> 'title' = 'All'),
  2,
  'Each new notification of notify_many has its own event.'
);

select * from finish();
rollback;
