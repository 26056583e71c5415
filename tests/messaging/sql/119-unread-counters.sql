/*
 * Messaging at scale (supabase/migrations/..._conversations_growth.sql, docs/conversations.md):
 * the participants' maintained unread counters and activity copies, app.mark_unread per persona,
 * app.search_my_conversations (only the caller's own conversations), app.readable_topics_among
 * (the same rule as app.readable_topics), and the policies on the row's own conversation.
 */
begin;
select plan(31);

do $$
begin
  perform tests.create_user('unr.carol@example.test', 'SUBSCRIBER');   -- group creator
  perform tests.create_user('unr.alice@example.test', 'MEMBER');       -- participant
  perform tests.create_user('unr.bob@example.test', 'SUBSCRIBER');     -- participant, suspended later
  perform tests.create_user('unr.sam@example.test', 'SUBSCRIBER');     -- stranger
  perform tests.create_user('unr.ada@example.test', 'ADMIN');          -- admin, not a participant
  perform tests.create_user('unr.dan@example.test', 'SUBSCRIBER');     -- joins later
end
$$;

select tests.create_conversation(tests.user_id('unr.carol@example.test'), 'group',
  array[tests.user_id('unr.alice@example.test'), tests.user_id('unr.bob@example.test')], 'Counting room') as group_id \gset
select tests.create_conversation(tests.user_id('unr.sam@example.test'), 'direct',
  array[tests.user_id('unr.alice@example.test')], null) as other_id \gset
select tests.create_conversation(tests.user_id('unr.sam@example.test'), 'direct',
  array[tests.user_id('unr.ada@example.test')], null) as hidden_id \gset

create temporary view counters as
  select u.email, p.unread_count,
         (select count(*)::int from app.messages m
           where m.conversation_id = p.conversation_id and m.seq > p.last_read_seq
             and m.deleted_at is null and m.sender_id is distinct from p.user_id) as counted
  from app.conversation_participants p join app.users u on u.id = p.user_id;
grant select on counters to authenticated;

select tests.insert_message(:'group_id', tests.user_id('unr.bob@example.test'), 'One') as s1 \gset
select tests.insert_message(:'group_id', tests.user_id('unr.carol@example.test'), 'Two') as s2 \gset
select tests.insert_message(:'group_id', tests.user_id('unr.alice@example.test'), 'Three') as s3 \gset
select tests.insert_message(:'group_id', tests.user_id('unr.bob@example.test'), 'Four') as s4 \gset
select tests.insert_message(:'other_id', tests.user_id('unr.sam@example.test'), 'Elsewhere') as o1 \gset
select tests.insert_message(:'hidden_id', tests.user_id('unr.sam@example.test'), 'Out of sight') as h1 \gset

-- ---------------------------------------------------------------------------------------------
-- The counters follow sends, tombstones and marks
-- ---------------------------------------------------------------------------------------------

select results_eq(
  $$ select email, unread_count from counters where email like 'unr.%' and unread_count <> counted $$,
  $$ select null::text, null::integer where false $$,
  'After four sends every counter equals the count by definition.'
);
select results_eq(
  format($$ select unread_count from app.conversation_participants
            where conversation_id = %L order by user_id = tests.user_id('unr.alice@example.test') desc,
                                               user_id = tests.user_id('unr.bob@example.test') desc $$, :'group_id'),
  array[3, 2, 3],
  'Alice has 3 unread (not her own), Bob 2 (not his two), Carol 3 (not her own).'
);
select is(
  (select count(*)::int from app.conversation_participants p join app.conversations c on c.id = p.conversation_id
    where p.last_activity_at <> c.last_activity_at),
  0,
  'Every participant row carries its conversation''s activity.'
);
update app.messages set deleted_at = now() where id = :'s4';
select is(
  (select count(*)::int from counters where email like 'unr.%' and unread_count <> counted),
  0,
  'A tombstone takes one unread off those who had it unread.'
);
update app.conversations set last_activity_at = now() - interval '3 days' where id = :'group_id';
select is(
  (select count(*)::int from app.conversation_participants
    where conversation_id = :'group_id' and last_activity_at <> now() - interval '3 days'),
  0,
  'Setting a conversation''s activity directly moves its participants'' copies.'
);

select tests.authenticate_as(tests.user_id('unr.alice@example.test'));
select results_eq(
  format($$ select unread_count from app.mark_read(%L) $$, :'s2'),
  array[0::bigint],
  'Alice reads up to Two: Three is hers, Four a tombstone, nothing is left.'
);
select throws_ok(
  format($$ update app.conversation_participants set unread_count = 99 where conversation_id = %L $$, :'group_id'),
  '42501', null,
  'A participant cannot write their counter (no column grant).'
);

-- ---------------------------------------------------------------------------------------------
-- app.mark_unread
-- ---------------------------------------------------------------------------------------------

select results_eq(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'s2'),
  format($$ values (%L::uuid, %L::uuid, 1::bigint) $$, :'group_id', :'s1'),
  'Alice marks unread from Two: the mark is One, one message unread (Two).'
);
select results_eq(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'s3'),
  format($$ values (%L::uuid, %L::uuid, 1::bigint) $$, :'group_id', :'s1'),
  'Marking unread from a message already unread leaves the mark where it is.'
);
select results_eq(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'s1'),
  format($$ values (%L::uuid, null::uuid, 2::bigint) $$, :'group_id'),
  'From the first message: no mark, both messages of others unread.'
);
select results_eq(
  format($$ select last_read_seq, last_read_message_id from app.conversation_participants
            where user_id = auth.uid() and conversation_id = %L $$, :'group_id'),
  $$ values (0::bigint, null::uuid) $$,
  'The stored mark is back at 0.'
);
select throws_ok(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'o1'),
  'AG422', 'the message is not in this conversation',
  'A message of another of Alice''s conversations is AG422.'
);
select throws_ok(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'h1'),
  'AG404', 'message not found',
  'A message Alice cannot see is AG404.'
);
select is(
  tests.row_count(format($$ update app.conversation_participants set last_read_seq = 0, last_read_message_id = null
                            where conversation_id = %L and user_id = auth.uid() $$, :'group_id')),
  1::bigint,
  'A direct update of the mark reaches Alice''s row...'
);
select results_eq(
  format($$ select * from app.mark_read(%L) $$, :'s2'),
  format($$ values (%L::uuid, %L::uuid, 0::bigint) $$, :'group_id', :'s2'),
  '...and reading forward again works; the counter is exact.'
);
select results_eq(
  $$ update app.conversation_participants set last_read_seq = 1, last_read_message_id = null where user_id = auth.uid() and last_read_seq = 2 returning last_read_seq $$,
  array[2::bigint],
  'Outside app.mark_unread a mark never moves back.'
);

select tests.authenticate_as(tests.user_id('unr.sam@example.test'));
select throws_ok(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'s2'),
  'AG404', 'conversation not found',
  'A stranger gets AG404.'
);
select tests.authenticate_as(tests.user_id('unr.ada@example.test'));
select throws_ok(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'s2'),
  'AG404', 'conversation not found',
  'An ADMIN who takes no part gets AG404.'
);
select tests.authenticate_as_anon();
select throws_ok(
  format($$ select * from app.mark_unread(%L, %L) $$, :'group_id', :'s2'),
  '42501', null,
  'Anonymous callers may not call app.mark_unread.'
);
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- Joining: counted once
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('unr.carol@example.test'));
select app.add_participants(:'group_id', array[tests.user_id('unr.dan@example.test')]);
select tests.clear_authentication();
select results_eq(
  $$ select unread_count, counted from counters where email = 'unr.dan@example.test' $$,
  $$ values (3, 3) $$,
  'Someone who joins starts with every live message of the others unread.'
);

-- ---------------------------------------------------------------------------------------------
-- The list's search and the policies
-- ---------------------------------------------------------------------------------------------

update app.users set name = 'Samuel Unrstranger' where id = tests.user_id('unr.sam@example.test');
select tests.authenticate_as(tests.user_id('unr.alice@example.test'));
select set_eq(
  $$ select * from app.search_my_conversations('%unrstranger%') $$,
  array[:'other_id']::uuid[],
  'Alice finds her conversation with Samuel by his name...'
);
select set_eq(
  $$ select * from app.search_my_conversations('%counting%') $$,
  array[:'group_id']::uuid[],
  '...and her group by its title.'
);
select tests.authenticate_as(tests.user_id('unr.ada@example.test'));
select set_eq(
  $$ select * from app.search_my_conversations('%counting%') $$,
  array[]::uuid[],
  'An ADMIN who takes no part does not find the group.'
);
select is(
  (select count(*)::int from app.messages where conversation_id = :'group_id')
  + (select count(*)::int from app.conversation_participants where conversation_id = :'group_id')
  + (select count(*)::int from app.conversations where id = :'group_id'),
  0,
  'An ADMIN who takes no part reads nothing of the group.'
);
select tests.authenticate_as(tests.user_id('unr.bob@example.test'));
select is(
  (select count(*)::int from app.conversation_participants where conversation_id = :'group_id'),
  4,
  'A participant reads every participant row of their conversation.'
);
select is(
  (select count(*)::int from app.messages where conversation_id = :'group_id'),
  4,
  'A participant reads its messages, tombstones included.'
);
select tests.clear_authentication();
update app.users set status = 'suspended' where id = tests.user_id('unr.bob@example.test');
select tests.authenticate_as(tests.user_id('unr.bob@example.test'));
select is(
  (select count(*)::int from app.messages)
  + (select count(*)::int from app.conversation_participants)
  + (select count(*)::int from app.conversations),
  0,
  'A suspended participant reads nothing, not even their own participant row.'
);
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- The topic rule for given topics
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('unr.alice@example.test'));
select set_eq(
  format($$ select app.readable_topics_among(array['user:' || auth.uid(), 'conversation:%s', 'conversation:%s',
           'conversation:not-a-uuid', 'admin', 'user:%s', 'vendor:%s']) $$,
         :'group_id', :'hidden_id', tests.user_id('unr.sam@example.test'), :'group_id'),
  format($$ values ('user:' || %L), ('conversation:%s') $$, tests.user_id('unr.alice@example.test'), :'group_id'),
  'A participant may read their user topic and their conversation''s, nothing else asked.'
);
select set_eq(
  $$ select app.readable_topics_among(array(select app.readable_topics())) $$,
  $$ select app.readable_topics() $$,
  'The rule for given topics agrees with the set for a participant.'
);
select tests.authenticate_as(tests.user_id('unr.ada@example.test'));
select set_eq(
  format($$ select app.readable_topics_among(array['admin', 'conversation:%s', 'conversation:%s']) $$, :'group_id', :'hidden_id'),
  format($$ values ('admin'), ('conversation:%s') $$, :'hidden_id'),
  'An ADMIN reads admin and their own conversation, not one they take no part in.'
);
select ok(
  app.can_read_topic('conversation:' || :'hidden_id') and not app.can_read_topic('conversation:' || :'group_id'),
  'app.can_read_topic follows the same rule.'
);

select * from finish();
rollback;
