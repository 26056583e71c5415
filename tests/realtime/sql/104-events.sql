/*
 * The durable event log and the topic rule (supabase/migrations/..._events.sql):
 * app.can_read_topic decides who reads conversation:<id> (its participants who can message),
 * user:<id> (that user) and admin (ADMINs); the RLS policy on app.events and the policy on
 * realtime.messages both use it. Message changes emit message.created/updated/deleted at commit
 * (a deferred constraint trigger: `set constraints all immediate` fires it here), read marks emit
 * message.read, membership changes emit participant.added/removed and conversation.joined/left;
 * every durable event also goes to Realtime with the same envelope. Typing is ephemeral and
 * throttled. Nobody writes events directly.
 */
begin;
select plan(70);

do $$
begin
  perform tests.create_user('ev.carol@example.test', 'SUBSCRIBER');   -- group creator
  perform tests.create_user('ev.alice@example.test', 'MEMBER');       -- participant (author)
  perform tests.create_user('ev.bob@example.test', 'SUBSCRIBER');     -- participant
  perform tests.create_user('ev.dan@example.test', 'SUBSCRIBER');     -- added and removed below
  perform tests.create_user('ev.vic@example.test', 'SUBSCRIBER');     -- participant, demoted to VISITOR below
  perform tests.create_user('ev.sam@example.test', 'SUBSCRIBER');     -- stranger
  perform tests.create_user('ev.ada@example.test', 'ADMIN');          -- admin, not a participant
  perform tests.create_user('ev.sid@example.test', 'ADMIN');          -- suspended ADMIN
  update app.users set status = 'suspended' where email = 'ev.sid@example.test';
end
$$;

select coalesce(max(id), 0) as base from app.events \gset

select tests.create_conversation(tests.user_id('ev.carol@example.test'), 'group',
  array[tests.user_id('ev.alice@example.test'), tests.user_id('ev.bob@example.test'), tests.user_id('ev.vic@example.test')],
  'Live') as group_id \gset
select tests.create_conversation(tests.user_id('ev.sam@example.test'), 'direct',
  array[tests.user_id('ev.ada@example.test')]) as sam_direct_id \gset
update app.users set role = 'VISITOR' where id = tests.user_id('ev.vic@example.test');

select 'conversation:' || :'group_id' as group_topic \gset

-- ---------------------------------------------------------------------------------------------
-- Participant: the topic rule and the event log
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.alice@example.test'));

select ok(app.can_read_topic(:'group_topic'), 'A participant may read their conversation''s topic.');
select ok(app.can_read_topic('user:' || auth.uid()), 'A user may read their own user topic.');
select ok(not app.can_read_topic('user:' || tests.user_id('ev.bob@example.test')),
  'A user may not read another user''s user topic, not even a fellow participant''s.');
select ok(not app.can_read_topic('admin'), 'A non-admin may not read the admin topic.');
select ok(not app.can_read_topic('conversation:' || :'sam_direct_id'),
  'A participant may not read the topic of a conversation they are not in.');
select is(
  (select array_agg(coalesce(app.can_read_topic(t), false)) from unnest(array[
     'conversation:' || upper(:'group_id'), 'conversation:' || :'group_id' || ':extra', 'conversation:not-a-uuid',
     'conversation:', 'conversation', 'user:' || upper(auth.uid()::text), 'user:', 'admin:x', 'Admin', '', ':', 'broadcast'
   ]) as t),
  array_fill(false, array[12]),
  'Garbage topics (wrong case, extra parts, no id, unknown kinds, empty) are readable by nobody.'
);
select is(coalesce(app.can_read_topic(null), false), false, 'A null topic is not readable.');
select set_eq(
  format($$ select event, payload ->> 'userId' from app.events where topic = %L $$, :'group_topic'),
  format($$ values ('participant.added', %L), ('participant.added', %L), ('participant.added', %L), ('participant.added', %L) $$,
    tests.user_id('ev.carol@example.test'), tests.user_id('ev.alice@example.test'),
    tests.user_id('ev.bob@example.test'), tests.user_id('ev.vic@example.test')),
  'A participant reads the conversation''s events: one participant.added per person the group started with.'
);
select results_eq(
  $$ select topic, event, payload from app.events where event like 'conversation.%' $$,
  format($$ values ('user:' || %L, 'conversation.joined', jsonb_build_object('conversationId', %L::uuid, 'userId', %L::uuid)) $$,
    tests.user_id('ev.alice@example.test'), :'group_id', tests.user_id('ev.alice@example.test')),
  'A user reads their own conversation.joined event and no one else''s.'
);
select is_empty(
  format($$ select 1 from app.events where topic <> %L and topic <> %L $$, :'group_topic', 'user:' || tests.user_id('ev.alice@example.test')),
  'A participant reads no event of any topic they may not read.'
);

-- ---------------------------------------------------------------------------------------------
-- Author: message.created, message.updated, message.deleted (at commit)
-- ---------------------------------------------------------------------------------------------

insert into app.messages (conversation_id, sender_id, content) values (:'group_id', auth.uid(), 'Going live') returning id as m1 \gset

select is_empty(
  format($$ select 1 from app.events where event like 'message.%%' and payload ->> 'id' = %L $$, :'m1'),
  'message.created is not emitted before commit (the trigger is deferred).'
);
set constraints all immediate;
set constraints all deferred;
select results_eq(
  format($$ select topic, payload from app.events where event = 'message.created' and payload ->> 'id' = %L $$, :'m1'),
  format($$ select %L, app.message_json(m) - 'senderBlocked' from app.messages m where m.id = %L $$, :'group_topic', :'m1'),
  'At commit exactly one message.created is emitted on the conversation''s topic, carrying the message JSON.'
);
select is(
  (select payload -> 'seq' from app.events where event = 'message.created' and payload ->> 'id' = :'m1'),
  '1'::jsonb,
  'The message.created payload carries the message''s seq.'
);

select app.edit_message(:'m1', 'Going live, edited') is not null as edited \gset
set constraints all immediate;
set constraints all deferred;
select results_eq(
  format($$ select topic, payload from app.events where event = 'message.updated' and payload ->> 'id' = %L $$, :'m1'),
  format($$ select %L, app.message_json(m) - 'senderBlocked' from app.messages m where m.id = %L $$, :'group_topic', :'m1'),
  'An edit emits exactly one message.updated carrying the edited message JSON.'
);
select results_eq(
  format($$ select payload ->> 'content', payload ->> 'editedAt' is not null from app.events where event = 'message.updated' and payload ->> 'id' = %L $$, :'m1'),
  $$ values ('Going live, edited', true) $$,
  'The message.updated payload has the new content and an editedAt.'
);

select * from app.delete_message(:'m1') \gset deleted_
set constraints all immediate;
set constraints all deferred;
select results_eq(
  format($$ select topic, payload from app.events where event = 'message.deleted' and payload ->> 'id' = %L $$, :'m1'),
  format($$ select %L, jsonb_build_object('id', m.id, 'conversationId', m.conversation_id, 'seq', m.seq,
              'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
              'threadId', m.thread_id)
            from app.messages m where m.id = %L $$, :'group_topic', :'m1'),
  'A deletion emits exactly one message.deleted with the id, conversationId, seq, deletedAt and threadId only (no content).'
);
select is(
  (select count(*) from app.events where event like 'message.%' and payload ->> 'id' = :'m1'),
  3::bigint,
  'Creating, editing and deleting one message emitted exactly three message events.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: message.read
-- ---------------------------------------------------------------------------------------------

select tests.insert_message(:'group_id', tests.user_id('ev.alice@example.test'), 'Read me') as m2 \gset

select tests.authenticate_as(tests.user_id('ev.bob@example.test'));

select unread_count from app.mark_read(:'m2') \gset
select results_eq(
  $$ select topic, payload from app.events where event = 'message.read' $$,
  format($$ values (%L, jsonb_build_object('conversationId', %L::uuid, 'userId', %L::uuid, 'lastReadMessageId', %L::uuid, 'lastReadSeq', 2)) $$,
    :'group_topic', :'group_id', tests.user_id('ev.bob@example.test'), :'m2'),
  'Moving a read mark emits one message.read with the reader, the message and its seq.'
);
select unread_count from app.mark_read(:'m1') \gset
select is(
  (select count(*) from app.events where event = 'message.read'),
  1::bigint,
  'A read mark that does not move forward emits no message.read.'
);

-- ---------------------------------------------------------------------------------------------
-- Group creator: participant.added/removed and conversation.joined/left
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.carol@example.test'));

select * from app.add_participants(:'group_id', array[tests.user_id('ev.dan@example.test')]) \gset added_
select app.remove_participant(:'group_id', tests.user_id('ev.dan@example.test'));

select tests.clear_authentication();
select results_eq(
  format($$ select topic, event, payload from app.events
            where id > %s and payload ->> 'userId' = %L order by id $$, :base, tests.user_id('ev.dan@example.test')),
  format($$ values (%1$L, 'participant.added', %2$L::jsonb), ('user:' || %3$L, 'conversation.joined', %2$L::jsonb),
                   (%1$L, 'participant.removed', %2$L::jsonb), ('user:' || %3$L, 'conversation.left', %2$L::jsonb) $$,
    :'group_topic', jsonb_build_object('conversationId', :'group_id'::uuid, 'userId', tests.user_id('ev.dan@example.test')),
    tests.user_id('ev.dan@example.test')),
  'Adding and removing a person emits participant.added and participant.removed on the conversation and conversation.joined and conversation.left on their user topic, in that order.'
);

-- ---------------------------------------------------------------------------------------------
-- Every durable event also goes to Realtime, with the same envelope
-- ---------------------------------------------------------------------------------------------

select cmp_ok(
  (select count(*) from app.events where id > :base), '>=', 16::bigint,
  'The scenario emitted at least sixteen durable events to compare with Realtime.'
);
select is_empty(
  format($$ select e.id from app.events e where e.id > %s and not exists (
              select 1 from realtime.messages r
              where r.payload ->> 'id' = e.xid::text || '.' || e.id::text
                and r.topic = e.topic and r.event = e.event and r.private and r.extension = 'broadcast'
                and r.payload ->> 'topic' = e.topic and r.payload ->> 'event' = e.event
                and r.payload -> 'payload' = e.payload
                and r.payload ->> 'createdAt' = to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) $$, :base),
  'Every durable event is in realtime.messages as a private broadcast on its topic, with the envelope id <xid>.<id>, topic, event, payload and createdAt.'
);
select is(
  (select count(*) from realtime.messages r where exists (
     select 1 from app.events e where e.id > :base and r.payload ->> 'id' = e.xid::text || '.' || e.id::text)),
  (select count(*) from app.events where id > :base),
  'Each durable event went to Realtime exactly once.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: typing (ephemeral, throttled)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.alice@example.test'));

select count(*) as events_before from app.events \gset

-- A ten-minute throttle window, so that both calls certainly fall into the same window.
select ok(app.send_typing(:'group_id', true, 600000), 'A participant''s first typing signal is sent (true).');
select ok(not app.send_typing(:'group_id', true, 600000), 'A second typing signal within the throttle window is dropped (false).');
select ok(app.send_typing(:'group_id', false, 600000), 'Stopping to type is throttled separately and is sent (true).');
select is((select count(*) from app.events), :'events_before'::bigint,
  'Typing signals are never stored in app.events.');

select tests.clear_authentication();
select results_eq(
  format($$ select topic, private, payload ->> 'event', payload -> 'payload' ->> 'userId', payload -> 'payload' ->> 'isTyping',
                   payload ->> 'id' like 'ephemeral.%%'
            from realtime.messages where event = 'typing' and topic = %L order by payload -> 'payload' ->> 'isTyping' desc $$, :'group_topic'),
  format($$ values (%1$L, true, 'typing', %2$L, 'true', true), (%1$L, true, 'typing', %2$L, 'false', true) $$,
    :'group_topic', tests.user_id('ev.alice@example.test')),
  'The two sent typing signals (not the dropped one) went to Realtime as private broadcasts on the conversation topic with ephemeral ids.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: realtime.messages through its policy
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.alice@example.test'));
set local realtime.topic = :'group_topic';

select isnt_empty(
  format($$ select 1 from realtime.messages where topic = %L $$, :'group_topic'),
  'With realtime.topic set to their conversation''s topic, a participant reads its Realtime rows.'
);
select lives_ok(
  format($$ insert into realtime.messages (topic, extension, payload, event, private)
            values (%L, 'broadcast', '{}', 'cursor', true) $$, :'group_topic'),
  'A participant may write (broadcast) on their conversation''s topic: the write policy of private channels.'
);
select throws_ok(
  format($$ insert into realtime.messages (topic, extension, payload, event, private)
            values (%L, 'broadcast', '{}', 'cursor', true) $$, 'user:' || auth.uid()),
  '42501', 'new row violates row-level security policy for table "messages"',
  'A participant cannot write a row for another topic than the channel''s (42501).'
);
set local realtime.topic = '';
select set_config('realtime.topic', 'user:' || auth.uid(), true);
select throws_ok(
  format($$ insert into realtime.messages (topic, extension, payload, event, private)
            values (%L, 'broadcast', '{}', 'notification.created', true) $$, 'user:' || auth.uid()),
  '42501', 'new row violates row-level security policy for table "messages"',
  'Nobody writes on a user: topic from a client, not even its user (42501).'
);
select set_config('realtime.topic', :'group_topic', true);
select throws_ok(
  format($$ insert into app.events (topic, event, payload) values (%L, 'message.created', '{}') $$, :'group_topic'),
  '42501', 'permission denied for table events',
  'A participant cannot write into app.events (42501).'
);
select throws_ok(
  $$ delete from app.events $$,
  '42501', 'permission denied for table events',
  'A participant cannot delete from app.events (42501).'
);
select throws_ok(
  $$ select app_private.emit_event('admin', 'user.promoted', '{}') $$,
  '42501', 'permission denied for schema app_private',
  'A participant cannot call app_private.emit_event (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- VISITOR participant
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.vic@example.test'));

select ok(not app.can_read_topic(:'group_topic'),
  'A participant demoted to VISITOR may no longer read the conversation''s topic.');
select is_empty(
  format($$ select 1 from app.events where topic = %L $$, :'group_topic'),
  'A VISITOR participant reads none of the conversation''s events.'
);
select throws_ok(
  format($$ select app.send_typing(%L, true) $$, :'group_id'),
  'AG404', 'conversation not found',
  'A VISITOR participant cannot send typing signals (AG404).'
);

-- ---------------------------------------------------------------------------------------------
-- Stranger
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.sam@example.test'));

select ok(not app.can_read_topic(:'group_topic'), 'A stranger may not read the conversation''s topic.');
select ok(app.can_read_topic('user:' || auth.uid()), 'A stranger may read their own user topic.');
select ok(not app.can_read_topic('user:' || tests.user_id('ev.alice@example.test')), 'A stranger may not read another user''s topic.');
select is_empty(
  format($$ select 1 from app.events where topic = %L or topic = %L $$, :'group_topic', 'user:' || tests.user_id('ev.alice@example.test')),
  'A stranger reads none of the conversation''s events and none of another user''s.'
);
select throws_ok(
  format($$ select app.send_typing(%L, true) $$, :'group_id'),
  'AG404', 'conversation not found',
  'A stranger cannot send typing signals into a conversation (AG404).'
);
set local realtime.topic = :'group_topic';
select is_empty(
  format($$ select 1 from realtime.messages where topic = %L $$, :'group_topic'),
  'With realtime.topic set to the conversation''s topic, a stranger reads none of its Realtime rows.'
);
set local realtime.topic = '';
select is_empty(
  $$ select 1 from realtime.messages $$,
  'Without a realtime.topic, a stranger reads no Realtime row at all.'
);
select set_config('realtime.topic', 'user:' || tests.user_id('ev.sam@example.test'), true);
select is_empty(
  format($$ select 1 from realtime.messages where topic = %L $$, :'group_topic'),
  'With realtime.topic set to their own user topic, a stranger still reads none of the conversation''s Realtime rows.'
);
select throws_ok(
  format($$ insert into app.events (topic, event, payload) values ('user:' || %L, 'conversation.joined', '{}') $$,
    tests.user_id('ev.alice@example.test')),
  '42501', 'permission denied for table events',
  'A stranger cannot write into app.events (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- Admin (an ADMIN not in the conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.ada@example.test'));

select ok(app.can_read_topic('admin'), 'An ADMIN may read the admin topic.');
select ok(app.can_read_topic('user:' || auth.uid()), 'An ADMIN may read their own user topic.');
select ok(not app.can_read_topic(:'group_topic'), 'An ADMIN who takes no part may not read the conversation''s topic.');
select ok(not app.can_read_topic('user:' || tests.user_id('ev.alice@example.test')), 'An ADMIN may not read another user''s topic.');
select is_empty(
  format($$ select 1 from app.events where topic = %L $$, :'group_topic'),
  'An ADMIN who takes no part reads none of the conversation''s events.'
);
select throws_ok(
  format($$ select app.send_typing(%L, true) $$, :'group_id'),
  'AG404', 'conversation not found',
  'An ADMIN who takes no part cannot send typing signals into the conversation (AG404).'
);
set local realtime.topic = :'group_topic';
select is_empty(
  format($$ select 1 from realtime.messages where topic = %L $$, :'group_topic'),
  'With realtime.topic set to the conversation''s topic, an ADMIN who takes no part reads none of its Realtime rows.'
);
select throws_ok(
  $$ insert into app.events (topic, event, payload) values ('admin', 'user.promoted', '{}') $$,
  '42501', 'permission denied for table events',
  'Not even an ADMIN can write into app.events (42501).'
);

select tests.authenticate_as(tests.user_id('ev.sid@example.test'));
select ok(not coalesce(app.can_read_topic('admin'), false), 'A suspended ADMIN may not read the admin topic.');

-- ---------------------------------------------------------------------------------------------
-- Removed participant
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('ev.dan@example.test'));

select ok(not app.can_read_topic(:'group_topic'), 'Someone removed from the group may no longer read its topic.');
select results_eq(
  $$ select event from app.events where topic = 'user:' || auth.uid() and event like 'conversation.%' order by id $$,
  $$ values ('conversation.joined'), ('conversation.left') $$,
  'The removed person reads on their user topic that they joined and left.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  format($$ select app.can_read_topic(%L) $$, :'group_topic'),
  '42501', 'permission denied for function can_read_topic',
  'An anonymous visitor cannot execute app.can_read_topic (no topic is readable without signing in).'
);
select throws_ok(
  $$ select * from app.events $$,
  '42501', 'permission denied for table events',
  'An anonymous visitor cannot read app.events.'
);
select throws_ok(
  $$ insert into app.events (topic, event, payload) values ('admin', 'user.promoted', '{}') $$,
  '42501', 'permission denied for table events',
  'An anonymous visitor cannot write into app.events.'
);
select throws_ok(
  format($$ select app.send_typing(%L, true) $$, :'group_id'),
  '42501', 'permission denied for function send_typing',
  'An anonymous visitor cannot execute app.send_typing.'
);
set local realtime.topic = :'group_topic';
select is_empty(
  $$ select 1 from realtime.messages $$,
  'An anonymous visitor reads no Realtime row, whatever realtime.topic says.'
);
select throws_ok(
  format($$ insert into realtime.messages (topic, extension, payload, event, private)
            values (%L, 'broadcast', '{}', 'message.created', true) $$, :'group_topic'),
  '42501', 'new row violates row-level security policy for table "messages"',
  'An anonymous visitor cannot forge a broadcast into realtime.messages.'
);

-- ---------------------------------------------------------------------------------------------
-- Catalog
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select has_table('app', 'events', 'The table app.events exists.');
select policies_are('app', 'events', array['events_select_readable'],
  'app.events has exactly the select policy built on the topic rule.');
select policies_are('realtime', 'messages', array['realtime_messages_select_topic', 'realtime_messages_insert_topic'],
  'realtime.messages has exactly the read (topic rule) and write (participants) policies.');
select is(
  (select array_agg(privilege_type::text order by privilege_type)
   from information_schema.role_table_grants
   where table_schema = 'app' and table_name = 'events' and grantee in ('authenticated', 'anon')),
  array['SELECT'],
  'On app.events the API roles hold exactly one privilege: select, for authenticated.'
);
select has_trigger('app', 'messages', 'messages_events', 'app.messages has the message event trigger.');
select ok(
  (select tgdeferrable and tginitdeferred from pg_trigger
   where tgrelid = 'app.messages'::regclass and tgname = 'messages_events'),
  'The message event trigger is deferrable and initially deferred (it fires at commit).'
);

select * from finish();
rollback;
