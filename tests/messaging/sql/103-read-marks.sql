/*
 * Read marks (supabase/migrations/..._messages.sql): app.mark_read moves the caller's
 * watermark forward to a message, never backward, and returns the unread count (messages of
 * others after the mark, deleted ones excluded); a participant moves only their own mark and
 * nothing else of their participant row; strangers, ADMINs who take no part and visitors cannot.
 */
begin;
select plan(33);

do $$
begin
  perform tests.create_user('read.carol@example.test', 'SUBSCRIBER');   -- group creator
  perform tests.create_user('read.alice@example.test', 'MEMBER');       -- participant
  perform tests.create_user('read.bob@example.test', 'SUBSCRIBER');     -- participant
  perform tests.create_user('read.sam@example.test', 'SUBSCRIBER');     -- stranger
  perform tests.create_user('read.ada@example.test', 'ADMIN');          -- admin, not a participant
end
$$;

select tests.create_conversation(tests.user_id('read.carol@example.test'), 'group',
  array[tests.user_id('read.alice@example.test'), tests.user_id('read.bob@example.test')], 'Reading room') as group_id \gset

select tests.insert_message(:'group_id', tests.user_id('read.bob@example.test'), 'One') as s1 \gset
select tests.insert_message(:'group_id', tests.user_id('read.carol@example.test'), 'Two') as s2 \gset
select tests.insert_message(:'group_id', tests.user_id('read.alice@example.test'), 'Three') as s3 \gset
select tests.insert_message(:'group_id', tests.user_id('read.bob@example.test'), 'Four') as s4 \gset
select tests.insert_message(:'group_id', tests.user_id('read.bob@example.test'), 'Five, deleted') as s5 \gset
select tests.insert_message(:'group_id', tests.user_id('read.carol@example.test'), 'Six') as s6 \gset
update app.messages set deleted_at = now() where id = :'s5';

-- ---------------------------------------------------------------------------------------------
-- Participant: their own mark
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('read.alice@example.test'));

select results_eq(
  format($$ select * from app.mark_read(%L) $$, :'s2'),
  format($$ values (%L::uuid, %L::uuid, 2::bigint) $$, :'group_id', :'s2'),
  'A participant marks message 2 read; unread are the two later live messages of others (4 and 6, not their own 3 nor the deleted 5).'
);
select results_eq(
  $$ select last_read_seq, last_read_message_id, last_read_at = now() from app.conversation_participants where user_id = auth.uid() $$,
  format($$ values (2::bigint, %L::uuid, true) $$, :'s2'),
  'The participant''s row holds the new mark: seq 2, that message, read now.'
);
select results_eq(
  format($$ select * from app.mark_read(%L) $$, :'s4'),
  format($$ values (%L::uuid, %L::uuid, 1::bigint) $$, :'group_id', :'s4'),
  'Marking message 4 read moves the mark forward; one unread message (6) is left.'
);
select results_eq(
  format($$ select * from app.mark_read(%L) $$, :'s1'),
  format($$ values (%L::uuid, %L::uuid, 1::bigint) $$, :'group_id', :'s4'),
  'Marking an earlier message read does not move the mark backward: it stays at message 4.'
);
select is(
  (select last_read_seq from app.conversation_participants where user_id = auth.uid()),
  4::bigint,
  'After the backward call the stored mark is still seq 4.'
);
select is(
  tests.row_count($$ update app.conversation_participants set last_read_seq = 1 where user_id = auth.uid() $$),
  1::bigint,
  'A direct update of one''s own mark reaches the row (the policy allows one''s own row).'
);
select results_eq(
  $$ select last_read_seq, last_read_message_id from app.conversation_participants where user_id = auth.uid() $$,
  format($$ values (4::bigint, %L::uuid) $$, :'s4'),
  'The guard trigger kept the mark at seq 4: a direct update cannot move it backward either.'
);
select results_eq(
  format($$ select unread_count from app.mark_read(%L) $$, :'s6'),
  array[0::bigint],
  'Marking the newest message read leaves nothing unread.'
);

select tests.insert_message(:'group_id', tests.user_id('read.bob@example.test'), 'Seven') as s7 \gset
select tests.insert_message(:'group_id', tests.user_id('read.alice@example.test'), 'Eight, mine') as s8 \gset

select results_eq(
  format($$ select last_read_message_id, unread_count from app.mark_read(%L) $$, :'s6'),
  format($$ values (%L::uuid, 1::bigint) $$, :'s6'),
  'The unread count follows new messages: another''s new message counts, the participant''s own does not.'
);
select results_eq(
  format($$ select unread_count from app.mark_read(%L) $$, :'s8'),
  array[0::bigint],
  'A participant can mark their own newest message read, which covers everything before it.'
);
select is(
  (select last_read_seq from app.conversation_participants where user_id = auth.uid()),
  8::bigint,
  'The stored mark is now seq 8.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: another participant's mark and the rest of the row
-- ---------------------------------------------------------------------------------------------

select is(
  tests.row_count(format($$ update app.conversation_participants set last_read_seq = 8, last_read_message_id = %L
                            where conversation_id = %L and user_id = %L $$,
    :'s8', :'group_id', tests.user_id('read.bob@example.test'))),
  0::bigint,
  'A participant cannot move another participant''s mark (RLS filters the row: 0 rows).'
);
select results_eq(
  format($$ select last_read_seq, last_read_message_id from app.conversation_participants where user_id = %L $$,
    tests.user_id('read.bob@example.test')),
  $$ values (0::bigint, null::uuid) $$,
  'The other participant''s mark is unchanged (and still visible to their fellow participant).'
);
select throws_ok(
  $$ update app.conversation_participants set joined_at = now() - interval '1 year' where user_id = auth.uid() $$,
  '42501', 'permission denied for table conversation_participants',
  'A participant cannot change when they joined (42501).'
);
select throws_ok(
  format($$ update app.conversation_participants set added_by = %L where user_id = auth.uid() $$,
    tests.user_id('read.bob@example.test')),
  '42501', 'permission denied for table conversation_participants',
  'A participant cannot change who added them (42501).'
);
select throws_ok(
  format($$ update app.conversation_participants set user_id = %L where user_id = auth.uid() $$,
    tests.user_id('read.sam@example.test')),
  '42501', 'permission denied for table conversation_participants',
  'A participant cannot hand their participation to someone else (42501).'
);
select throws_ok(
  $$ update app.conversation_participants set conversation_id = gen_random_uuid() where user_id = auth.uid() $$,
  '42501', 'permission denied for table conversation_participants',
  'A participant cannot move their participation to another conversation (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- Another participant
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('read.bob@example.test'));

select results_eq(
  format($$ select * from app.mark_read(%L) $$, :'s1'),
  format($$ values (%L::uuid, %L::uuid, 4::bigint) $$, :'group_id', :'s1'),
  'Each participant has their own mark: after message 1, four messages of others are unread for this one (2, 3, 6, 8).'
);
select is(
  (select last_read_seq from app.conversation_participants where user_id = tests.user_id('read.alice@example.test')),
  8::bigint,
  'A participant sees how far the others have read.'
);

-- ---------------------------------------------------------------------------------------------
-- Stranger
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('read.sam@example.test'));

select throws_ok(
  format($$ select * from app.mark_read(%L) $$, :'s6'),
  'AG404', 'message not found',
  'A stranger marking a message read gets AG404.'
);
select is(
  tests.row_count(format($$ update app.conversation_participants set last_read_seq = 1 where conversation_id = %L $$, :'group_id')),
  0::bigint,
  'A stranger''s update of the conversation''s read marks affects no row.'
);
select is_empty(
  format($$ select 1 from app.conversation_participants where conversation_id = %L $$, :'group_id'),
  'A stranger sees nobody''s read mark.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin (an ADMIN not in the conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('read.ada@example.test'));

select throws_ok(
  format($$ select * from app.mark_read(%L) $$, :'s6'),
  'AG404', 'message not found',
  'An ADMIN who takes no part gets AG404 marking a message read.'
);
select is(
  tests.row_count(format($$ update app.conversation_participants set last_read_seq = 1 where conversation_id = %L $$, :'group_id')),
  0::bigint,
  'An ADMIN''s update of the conversation''s read marks affects no row.'
);

-- ---------------------------------------------------------------------------------------------
-- Group creator, after leaving
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('read.carol@example.test'));

select results_eq(
  format($$ select unread_count from app.mark_read(%L) $$, :'s2'),
  array[4::bigint],
  'The group''s creator marks their own message read; four messages of others follow it (3, 4, 7, 8).'
);
select app.remove_participant(:'group_id', auth.uid());
select throws_ok(
  format($$ select * from app.mark_read(%L) $$, :'s8'),
  'AG404', 'message not found',
  'Someone who has left the group can no longer mark its messages read (AG404).'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  format($$ select * from app.mark_read(%L) $$, :'s6'),
  '42501', 'permission denied for function mark_read',
  'An anonymous visitor cannot execute app.mark_read.'
);
select throws_ok(
  format($$ update app.conversation_participants set last_read_seq = 1 where conversation_id = %L $$, :'group_id'),
  '42501', 'permission denied for table conversation_participants',
  'An anonymous visitor cannot update read marks.'
);

-- ---------------------------------------------------------------------------------------------
-- Trusted check of the end state, and the catalog
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select results_eq(
  format($$ select user_id, last_read_seq from app.conversation_participants where conversation_id = %L order by last_read_seq $$, :'group_id'),
  format($$ values (%L::uuid, 1::bigint), (%L::uuid, 8::bigint) $$,
    tests.user_id('read.bob@example.test'), tests.user_id('read.alice@example.test')),
  'In the end exactly the two remaining participants hold the marks they set themselves.'
);
select is(
  (select array_agg(a.attname::text order by a.attname)
   from pg_attribute a
   where a.attrelid = 'app.conversation_participants'::regclass and a.attnum > 0 and not a.attisdropped
     and has_column_privilege('authenticated', a.attrelid, a.attnum, 'UPDATE')),
  array['last_read_at', 'last_read_message_id', 'last_read_seq'],
  'authenticated may update only the read-mark columns of app.conversation_participants.'
);
select has_trigger('app', 'conversation_participants', 'participants_guard_read_mark',
  'app.conversation_participants has the read-mark guard trigger.');
select isnt_definer('app', 'mark_read', array['uuid'],
  'app.mark_read runs with the caller''s rights (RLS decides which message and which row).');
select ok(
  has_function_privilege('authenticated', 'app.mark_read(uuid)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.mark_read(uuid)', 'EXECUTE'),
  'app.mark_read is executable by authenticated and not by anon.'
);

select * from finish();
rollback;
