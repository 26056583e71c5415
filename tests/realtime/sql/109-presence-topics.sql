/*
 * App-wide presence: presence:<user id> is read by that person and by whoever shares a
 * conversation with them (not when that person blocks them), and tracked by that person only;
 * through the same realtime.messages policies hosted Realtime and the gateway use.
 */
begin;
select plan(9);

select tests.create_user('pres.ann@example.test', 'MEMBER');
select tests.create_user('pres.ben@example.test', 'MEMBER');
select tests.create_user('pres.cid@example.test', 'MEMBER');
select tests.create_user('pres.dee@example.test', 'MEMBER');
select tests.create_conversation(tests.user_id('pres.ann@example.test'), 'direct',
  array[tests.user_id('pres.ben@example.test')], null) as conv \gset
select tests.create_conversation(tests.user_id('pres.dee@example.test'), 'direct',
  array[tests.user_id('pres.ann@example.test')], null) as conv2 \gset
-- Dee blocks Ann: Ann no longer sees whether Dee is online (Dee still sees Ann).
insert into app.user_blocks (blocker_id, blocked_id)
  values (tests.user_id('pres.dee@example.test'), tests.user_id('pres.ann@example.test'));

select 'presence:' || tests.user_id('pres.ann@example.test') as ann_topic \gset
select 'presence:' || tests.user_id('pres.ben@example.test') as ben_topic \gset
select 'presence:' || tests.user_id('pres.dee@example.test') as dee_topic \gset

select tests.authenticate_as(tests.user_id('pres.ann@example.test'));
select ok(
  app.can_read_topic(:'ann_topic') and app.can_write_topic(:'ann_topic'),
  'A person reads and tracks their own presence topic.'
);
select ok(
  app.can_read_topic(:'ben_topic') and not app.can_write_topic(:'ben_topic'),
  'Someone sharing a conversation reads another''s presence topic and cannot track on it.'
);
select ok(
  not app.can_read_topic(:'dee_topic'),
  'Someone blocked by a person does not see that person''s presence.'
);
select ok(
  not app.can_read_topic('presence:not-a-uuid') and not app.can_read_topic('presence:'),
  'A malformed presence topic is nobody''s (and raises nothing).'
);
select set_config('realtime.topic', :'ann_topic', true);
select lives_ok(
  format($$ insert into realtime.messages (topic, extension, payload, event, private)
            values (%L, 'presence', '{}', 'presence', true) $$, :'ann_topic'),
  'Tracking on one''s own presence topic passes the write policy.'
);
select set_config('realtime.topic', :'ben_topic', true);
select throws_ok(
  format($$ insert into realtime.messages (topic, extension, payload, event, private)
            values (%L, 'presence', '{}', 'presence', true) $$, :'ben_topic'),
  '42501', 'new row violates row-level security policy for table "messages"',
  'Tracking on another''s presence topic is refused (42501).'
);

select tests.authenticate_as(tests.user_id('pres.dee@example.test'));
select ok(app.can_read_topic(:'ann_topic'), 'The blocker still sees the person they block.');

select tests.authenticate_as(tests.user_id('pres.cid@example.test'));
select ok(
  not app.can_read_topic(:'ann_topic') and not app.can_write_topic(:'ann_topic'),
  'A stranger (no shared conversation) neither reads nor tracks another''s presence.'
);
select ok(
  not exists (select 1 from app.readable_topics() t where t like 'presence:%'),
  'Presence topics carry no events: they are not in the topic set SSE and long-polling serve.'
);

select * from finish();
rollback;
