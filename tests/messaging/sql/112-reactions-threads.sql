/*
 * Reactions and threads (supabase/migrations/..._messages_reactions_threads.sql), per persona:
 * anonymous, a participant, a non-participant and an ADMIN who is not in the conversation.
 * app.set_reaction is the one way to react (idempotent both ways, 20 distinct emoji, never on a
 * tombstone, participants only); app.message_reactions and app.message_threads are read by
 * participants only and written by no user; a reply's thread root is checked by the trigger and
 * counted on app.message_threads; a deletion takes a reply off its counts and drops reactions.
 */
begin;
select plan(35);

do $$
begin
  perform tests.create_user('rx.ann@example.test', 'SUBSCRIBER');   -- participant
  perform tests.create_user('rx.ben@example.test', 'SUBSCRIBER');   -- participant
  perform tests.create_user('rx.sam@example.test', 'SUBSCRIBER');   -- not a participant
  perform tests.create_user('rx.ada@example.test', 'ADMIN');        -- ADMIN, not a participant
end
$$;

select tests.create_conversation(tests.user_id('rx.ann@example.test'), 'group',
  array[tests.user_id('rx.ben@example.test')], 'Reactions') as group_id \gset
select tests.create_conversation(tests.user_id('rx.ann@example.test'), 'group',
  array[tests.user_id('rx.ben@example.test')], 'Elsewhere') as other_id \gset

select tests.authenticate_as(tests.user_id('rx.ann@example.test'));
select (app.send_message(:'group_id'::uuid, 'root') ->> 'id') as root \gset
select (app.send_message(:'other_id'::uuid, 'other root') ->> 'id') as other_root \gset

-- ---------------------------------------------------------------------------------------------
-- A participant reacts
-- ---------------------------------------------------------------------------------------------

select is(
  app.set_reaction(:'root'::uuid, '👍', true),
  jsonb_build_object('messageId', :'root', 'reactions', '[{"emoji": "👍", "count": 1, "me": true}]'::jsonb),
  'A participant adds a reaction and gets the message''s reactions with `me`.'
);
select is(
  app.set_reaction(:'root'::uuid, '👍', true) -> 'reactions',
  '[{"emoji": "👍", "count": 1, "me": true}]'::jsonb,
  'Adding the same reaction again changes nothing (idempotent).'
);
select tests.authenticate_as(tests.user_id('rx.ben@example.test'));
select is(
  app.set_reaction(:'root'::uuid, '👍', true) -> 'reactions',
  '[{"emoji": "👍", "count": 2, "me": true}]'::jsonb,
  'A second participant''s reaction counts 2.'
);
select is(
  app.set_reaction(:'root'::uuid, '🎉', false) -> 'reactions',
  '[{"emoji": "👍", "count": 2, "me": true}]'::jsonb,
  'Removing a reaction never added is not an error and changes nothing.'
);
select is(
  (select app.message_json(m) -> 'reactions' from app.messages m where m.id = :'root'),
  '[{"emoji": "👍", "count": 2, "me": true}]'::jsonb,
  'The message JSON carries the reactions with `me` for the reader.'
);
select is(
  (select count(*)::int from app.message_reactions where message_id = :'root'),
  2,
  'A participant reads the reactions of their conversation.'
);
select is(
  (select payload from app.events where event = 'message.reactions' order by xid desc, id desc limit 1),
  jsonb_build_object('messageId', :'root', 'reactions', '[{"emoji": "👍", "count": 2}]'::jsonb),
  'A change emits message.reactions with the counts and no `me`.'
);
select is(
  (select count(*)::int from app.events where event = 'message.reactions'),
  2,
  'Only changes emit events (the repeated add and the removal of nothing emit none).'
);
select throws_ok(
  format($$ insert into app.message_reactions (message_id, user_id, emoji, conversation_id) values (%L, auth.uid(), '😀', %L) $$, :'root', :'group_id'),
  '42501', null,
  'A participant cannot insert reactions directly (only app.set_reaction writes them).'
);
select throws_ok(
  format($$ delete from app.message_reactions where message_id = %L $$, :'root'),
  '42501', null,
  'A participant cannot delete reactions directly.'
);
select tests.authenticate_as(tests.user_id('rx.ann@example.test'));
select is(
  app.set_reaction(:'root'::uuid, '👍', false) -> 'reactions',
  '[{"emoji": "👍", "count": 1, "me": false}]'::jsonb,
  'Removing one''s reaction leaves the others''.'
);

-- The limit: 20 distinct emoji.
do $$
declare
  e text;
begin
  foreach e in array array['😀','😁','😂','🤣','😃','😄','😅','😆','😉','😊','😋','😎','😍','😘','🥰','😗','😙','😚','🙂'] loop
    perform app.set_reaction((select id from app.messages where content = 'root'), e, true);
  end loop;
end
$$;
select is(
  jsonb_array_length(app.set_reaction(:'root'::uuid, '😀', true) -> 'reactions'),
  20,
  'A message holds 20 distinct emoji.'
);
select throws_ok(
  format($$ select app.set_reaction(%L, '🤔', true) $$, :'root'),
  'AG422', 'a message has at most 20 different reactions',
  'A 21st distinct emoji is refused (AG422).'
);
select is(
  jsonb_array_length(app.set_reaction(:'root'::uuid, '👍', true) -> 'reactions'),
  20,
  'Another person''s emoji already there can still be added.'
);

-- ---------------------------------------------------------------------------------------------
-- Threads
-- ---------------------------------------------------------------------------------------------

select (app.send_message(:'group_id'::uuid, 'reply one', null, '{}', null, null, :'root'::uuid) ->> 'id') as r1 \gset
select tests.authenticate_as(tests.user_id('rx.ben@example.test'));
select (app.send_message(:'group_id'::uuid, 'reply two', null, '{}', null, null, :'root'::uuid) ->> 'id') as r2 \gset
select is(
  (select app.message_json(m) -> 'thread' ->> 'replyCount' from app.messages m where m.id = :'root'),
  '2',
  'Two replies count 2 on the root.'
);
select is(
  (select (app.message_json(m) -> 'thread' ->> 'lastReplyAt')::timestamptz = r.created_at
   from app.messages m, app.messages r where m.id = :'root' and r.id = :'r2'),
  true,
  'lastReplyAt is the newest reply''s time.'
);
select is(
  (select app.message_json(m) ->> 'threadId' from app.messages m where m.id = :'r1'),
  :'root',
  'A reply carries its threadId.'
);
select is(
  (select jsonb_build_object('thread', j.json -> 'thread', 'reactions', j.json -> 'reactions')
   from app.messages_json(array[:'root'::uuid]) j),
  (select app.message_extras(m, auth.uid()) from app.messages m where m.id = :'root'),
  'A page''s JSON (app.messages_json) and the events'' (app.message_extras) show a root''s thread and reactions alike.'
);
select throws_ok(
  format($$ select app.send_message(%L, 'nested', null, '{}', null, null, %L) $$, :'group_id', :'r1'),
  'AG422', null,
  'A reply in a thread cannot be a thread''s root (AG422).'
);
select throws_ok(
  format($$ select app.send_message(%L, 'across', null, '{}', null, null, %L) $$, :'group_id', :'other_root'),
  'AG422', null,
  'A root of another conversation is refused (AG422).'
);
select throws_ok(
  format($$ select app.send_message(%L, 'nowhere', null, '{}', null, null, %L) $$, :'group_id', gen_random_uuid()),
  'AG422', null,
  'An unknown root is refused (AG422).'
);
set constraints all immediate;
set constraints all deferred;
select is(
  (select payload ->> 'threadId' from app.events where event = 'message.created' and payload ->> 'id' = :'r2'),
  :'root',
  'message.created carries threadId.'
);
select throws_ok(
  format($$ update app.message_threads set reply_count = 99 where root_id = %L $$, :'root'),
  '42501', null,
  'A participant cannot change a thread''s counters.'
);
select app.delete_message(:'r2'::uuid);
set constraints all immediate;
set constraints all deferred;
select is(
  (select (t.reply_count, t.last_reply_at = r.created_at)::text from app.message_threads t, app.messages r
   where t.root_id = :'root' and r.id = :'r1'),
  '(1,t)',
  'Deleting a reply takes it off the count and lastReplyAt goes back to the newest live reply.'
);
select is(
  (select payload ->> 'threadId' from app.events where event = 'message.deleted' and payload ->> 'id' = :'r2'),
  :'root',
  'message.deleted carries threadId.'
);

-- A tombstone root keeps its thread counts, but not its reactions.
select tests.authenticate_as(tests.user_id('rx.ann@example.test'));
select app.delete_message(:'root'::uuid);
select is(
  (select (app.message_json(m) -> 'thread' ->> 'replyCount', app.message_json(m) -> 'reactions')::text
   from app.messages m where m.id = :'root'),
  '(1,[])',
  'A tombstone keeps its thread counts and shows no reactions.'
);
select is(
  (select count(*)::int from app.message_reactions where message_id = :'root'),
  0,
  'A tombstone''s reactions are gone.'
);
select throws_ok(
  format($$ select app.set_reaction(%L, '👍', true) $$, :'root'),
  'AG422', null,
  'A tombstone takes no reactions (AG422).'
);
select is(
  app.set_reaction(:'root'::uuid, '👍', false),
  jsonb_build_object('messageId', :'root', 'reactions', '[]'::jsonb),
  'Removing a reaction from a tombstone answers no reactions.'
);

-- ---------------------------------------------------------------------------------------------
-- A non-participant, an ADMIN who is not in it, anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('rx.sam@example.test'));
select throws_ok(
  format($$ select app.set_reaction(%L, '👍', true) $$, :'r1'),
  'AG404', 'message not found',
  'A non-participant cannot react (AG404, as if the message did not exist).'
);
select is(
  (select count(*)::int from app.message_reactions) + (select count(*)::int from app.message_threads),
  0,
  'A non-participant reads no reactions and no thread counters.'
);

select tests.authenticate_as(tests.user_id('rx.ada@example.test'));
select throws_ok(
  format($$ select app.set_reaction(%L, '👍', true) $$, :'r1'),
  'AG404', 'message not found',
  'An ADMIN who is not a participant cannot react either (AG404).'
);
select is(
  (select count(*)::int from app.message_reactions) + (select count(*)::int from app.message_threads),
  0,
  'An ADMIN who is not a participant reads no reactions and no thread counters.'
);

select tests.authenticate_as_anon();
select throws_ok(
  $$ select count(*) from app.message_reactions $$,
  '42501', null,
  'anon cannot read reactions.'
);
select tests.clear_authentication();
select ok(
  not has_function_privilege('anon', 'app.set_reaction(uuid, text, boolean)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.set_reaction_as(text, uuid, text, boolean)', 'EXECUTE'),
  'anon cannot call app.set_reaction, and no API role calls app_private.set_reaction_as.'
);

select * from finish();
rollback;
