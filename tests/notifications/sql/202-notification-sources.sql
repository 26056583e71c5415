/*
 * The platform's own sources of notifications: a new conversation and being added to a group
 * (MESSAGE, count 0, not for the one who added), messages (the send only marks the conversation
 * and queues its digest; the digest gives every other participant one MESSAGE notification per
 * conversation, data { conversationId, messageId, count }, the latest preview, never for one's
 * own, never for what they read), read marks (reading up to the latest message the notification
 * tells of marks it read, reading less does not) and role changes (SYSTEM).
 */
begin;
select plan(27);

do $$
begin
  perform tests.create_user('src.amy@example.test', 'MEMBER');
  perform tests.create_user('src.ben@example.test', 'MEMBER');
  perform tests.create_user('src.cat@example.test', 'MEMBER');
  perform tests.create_user('src.dov@example.test', 'MEMBER');
  perform tests.create_user('src.eve@example.test', 'ADMIN');
end
$$;

select tests.user_id('src.amy@example.test') as amy \gset
select tests.user_id('src.ben@example.test') as ben \gset
select tests.user_id('src.cat@example.test') as cat \gset
select tests.user_id('src.dov@example.test') as dov \gset
select tests.user_id('src.eve@example.test') as eve \gset

-- ---------------------------------------------------------------------------------------------
-- A new conversation
-- ---------------------------------------------------------------------------------------------

select tests.create_conversation(:'amy', 'group', array[:'ben', :'cat']::uuid[], 'Book club') as g \gset

select results_eq(
  format($$ select user_id, type::text, title, body, data, collapse_key from app.notifications
            where collapse_key = 'conversation:' || %L order by user_id $$, :'g'),
  format($$ select * from (values
      (%1$L::uuid, 'MESSAGE', 'Book club', 'src.amy added you to Book club', jsonb_build_object('conversationId', %3$L::uuid, 'messageId', null, 'count', 0), 'conversation:' || %3$L),
      (%2$L::uuid, 'MESSAGE', 'Book club', 'src.amy added you to Book club', jsonb_build_object('conversationId', %3$L::uuid, 'messageId', null, 'count', 0), 'conversation:' || %3$L)
    ) v order by 1 $$, :'ben', :'cat', :'g'),
  'Creating a group gives each person added a MESSAGE notification under the conversation''s key, count 0.'
);
select is(
  (select count(*)::int from app.notifications where user_id = :'amy'),
  0,
  'The creator is not notified of their own conversation.'
);

-- ---------------------------------------------------------------------------------------------
-- Messages
-- ---------------------------------------------------------------------------------------------

select tests.insert_message(:'g', :'amy', 'Chapter one is great') as m1 \gset
select tests.insert_message(:'g', :'ben', 'Agreed!') as m2 \gset
select tests.insert_message(:'g', :'amy', repeat('Long ', 100)) as m3 \gset

select results_eq(
  format($$ select count(*)::int from app.notifications where collapse_key = 'conversation:' || %L
            and (data ->> 'count')::int > 0 $$, :'g'),
  $$ values (0) $$,
  'The sends themselves write no notification...'
);
select results_eq(
  format($$ select (select count(*)::int from app_private.message_digests_pending where conversation_id = %L),
                   (select count(*)::int from app_private.jobs where kind = 'notifications.digest' and payload ->> 'conversationId' = %L),
                   (select bool_and(run_at > now()) from app_private.jobs where kind = 'notifications.digest' and payload ->> 'conversationId' = %L) $$,
         :'g', :'g', :'g'),
  $$ values (1, 1, true) $$,
  '...they mark the conversation once and queue one digest job, due a moment later.'
);
select is(app_private.digest_conversation(:'g', app_private.claim_message_digest(:'g')), 3, 'The digest tells all three participants.');
select is(
  (select count(*)::int from app_private.message_digests_pending where conversation_id = :'g'),
  0,
  'The digest takes the mark away.'
);
select is(app_private.digest_conversation(:'g', app_private.claim_message_digest(:'g')), 0, 'A digest with nothing new tells nobody.');

select results_eq(
  format($$ select data, body from app.notifications where user_id = %L and collapse_key = 'conversation:' || %L $$, :'cat', :'g'),
  format($$ values (jsonb_build_object('conversationId', %L::uuid, 'messageId', %L::uuid, 'count', 3), left('src.amy: ' || repeat('Long ', 100), 140)) $$, :'g', :'m3'),
  'Each message updates the one unread notification: count 3, the latest message, its preview (the sender''s name in a group, 140 characters).'
);
select is(
  (select (data ->> 'count')::int from app.notifications where user_id = :'ben' and collapse_key = 'conversation:' || :'g'),
  2,
  'Ben''s own message did not count for Ben (only Amy''s two).'
);
select results_eq(
  format($$ select (data ->> 'count')::int, data ->> 'messageId' from app.notifications where user_id = %L $$, :'amy'),
  format($$ values (1, %L) $$, :'m2'),
  'Amy, who started the conversation, is notified of Ben''s message only.'
);
select is(
  (select count(*)::int from app.notifications where collapse_key = 'conversation:' || :'g' and read_at is null),
  3,
  'One unread notification per participant, however many messages.'
);
select is(
  (select count(*)::int from app.events where event = 'notification.created'
     and payload -> 'data' ->> 'conversationId' = :'g'),
  3,
  'notification.created went out once per participant: for Ben and Cat at creation, for Amy at Ben''s first message; the rest folded in silently.'
);

-- A direct conversation is titled with the sender's name.
select tests.create_conversation(:'dov', 'direct', array[:'amy']::uuid[]) as d \gset
select tests.insert_message(:'d', :'dov', 'Hi Amy') as d1 \gset
select app_private.digest_conversation(:'d', app_private.claim_message_digest(:'d')) as ignored \gset
select results_eq(
  format($$ select title, body from app.notifications where user_id = %L and collapse_key = 'conversation:' || %L $$, :'amy', :'d'),
  $$ values ('src.dov', 'Hi Amy') $$,
  'In a direct conversation the title is the sender''s name and the body the message itself.'
);

-- ---------------------------------------------------------------------------------------------
-- Read marks
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'cat');
select lives_ok(format($$ select app.mark_read(%L) $$, :'m2'), 'Cat reads up to the second message.');
select is(
  (select read_at from app.notifications where collapse_key = 'conversation:' || :'g'),
  null,
  'Reading short of the latest message leaves the notification unread.'
);
select lives_ok(format($$ select app.mark_read(%L) $$, :'m3'), 'Cat reads up to the latest message.');
select isnt(
  (select read_at from app.notifications where collapse_key = 'conversation:' || :'g'),
  null,
  'Reading up to the latest message the notification tells of marks it read.'
);
select tests.clear_authentication();
select results_eq(
  format($$ select event, payload -> 'data' ->> 'count' from app.events
            where topic = 'user:' || %L and event = 'notification.read' $$, :'cat'),
  $$ values ('notification.read', '3') $$,
  'notification.read went out on Cat''s topic, carrying the notification.'
);

select tests.insert_message(:'g', :'ben', 'Chapter two?') as m4 \gset
select tests.insert_message(:'g', :'cat', 'Mine, not counted for me') as m5 \gset
select app_private.digest_conversation(:'g', app_private.claim_message_digest(:'g')) as ignored \gset
select is(
  (select count(*)::int from app.notifications where user_id = :'cat' and collapse_key = 'conversation:' || :'g'),
  2,
  'A message after reading starts a new unread notification for Cat.'
);
select is(
  (select (data ->> 'count')::int from app.notifications where user_id = :'cat' and collapse_key = 'conversation:' || :'g' and read_at is null),
  1,
  'It counts from one again.'
);

-- What a participant read before the digest is not told.
select tests.insert_message(:'g', :'ben', 'Read before the digest') as m6 \gset
select tests.authenticate_as(:'amy');
select lives_ok(format($$ select app.mark_read(%L) $$, :'m6'), 'Amy reads it before any digest ran.');
select tests.clear_authentication();
select app_private.digest_conversation(:'g', app_private.claim_message_digest(:'g')) as ignored \gset
select is(
  (select count(*)::int from app.notifications where user_id = :'amy' and collapse_key = 'conversation:' || :'g' and read_at is null),
  0,
  'The digest does not tell Amy of a message she already read.'
);

-- Adding people to the group.
select tests.authenticate_as(:'amy');
select lives_ok(format($$ select app.add_participants(%L, array[%L]::uuid[]) $$, :'g', :'dov'),
  'Amy adds Dov to the group.');
select tests.clear_authentication();
select results_eq(
  format($$ select body, data ->> 'count' from app.notifications where user_id = %L and collapse_key = 'conversation:' || %L $$, :'dov', :'g'),
  $$ values ('src.amy added you to Book club', '0') $$,
  'Being added to a group is a MESSAGE notification too.'
);

-- ---------------------------------------------------------------------------------------------
-- Role changes
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'eve');
select lives_ok(format($$ select app.change_user_role(%L, 'CONFIDENTIAL', 'trusted reviewer') $$, :'ben'),
  'An ADMIN changes Ben''s role.');
select tests.clear_authentication();
select results_eq(
  format($$ select type::text, title, body, data from app.notifications where user_id = %L and type = 'SYSTEM' $$, :'ben'),
  $$ values ('SYSTEM', 'Your role changed', 'Your role is now CONFIDENTIAL (it was MEMBER).',
             '{"kind": "role.changed", "previousRole": "MEMBER", "newRole": "CONFIDENTIAL"}'::jsonb) $$,
  'A role change gives the user a SYSTEM notification with the roles before and after.'
);
select is(
  (select count(*)::int from app.notifications where user_id = :'ben' and body like '%trusted reviewer%'),
  0,
  'The admin''s reason is not in it.'
);

select * from finish();
rollback;
