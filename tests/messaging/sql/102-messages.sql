/*
 * Messages (supabase/migrations/..._messages.sql): participants send in their own name
 * (insert into app.messages), each message takes the next per-conversation seq under the
 * conversation row lock and moves last_seq and last_activity_at; content is 1 to 10,000 characters;
 * app.edit_message lets the author edit within the edit window and keeps every earlier version in
 * app.message_versions; app.delete_message (author, group creator, ADMIN) leaves a tombstone with
 * empty content and no attachments in the same place; identity columns never change.
 */
begin;
select plan(78);

do $$
begin
  perform tests.create_user('msg.carol@example.test', 'SUBSCRIBER');   -- group creator
  perform tests.create_user('msg.alice@example.test', 'MEMBER');       -- author
  perform tests.create_user('msg.paul@example.test', 'SUBSCRIBER');    -- participant
  perform tests.create_user('msg.vic@example.test', 'SUBSCRIBER');     -- participant, demoted to VISITOR below
  perform tests.create_user('msg.sam@example.test', 'SUBSCRIBER');     -- stranger
  perform tests.create_user('msg.ada@example.test', 'ADMIN');          -- admin, not a participant
end
$$;

select tests.create_conversation(tests.user_id('msg.carol@example.test'), 'group',
  array[tests.user_id('msg.alice@example.test'), tests.user_id('msg.paul@example.test'), tests.user_id('msg.vic@example.test')],
  'Book club') as group_id \gset
select tests.create_conversation(tests.user_id('msg.carol@example.test'), 'group',
  array[tests.user_id('msg.alice@example.test')], 'Side chat') as side_id \gset
select tests.create_conversation(tests.user_id('msg.carol@example.test'), 'direct',
  array[tests.user_id('msg.paul@example.test')]) as direct_id \gset
update app.users set role = 'VISITOR' where id = tests.user_id('msg.vic@example.test');
-- Make the conversation look idle, so that sending visibly moves last_activity_at.
update app.conversations set last_activity_at = now() - interval '1 day' where id = :'group_id';

-- ---------------------------------------------------------------------------------------------
-- Author: sending
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.alice@example.test'));

insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), 'Hello, book club.') returning id as m1 \gset
insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), 'Chapter two is long.') returning id as m2 \gset

select results_eq(
  format($$ select seq, sender_id, content from app.messages where id in (%L, %L) order by seq $$, :'m1', :'m2'),
  format($$ values (1::bigint, %L::uuid, 'Hello, book club.'), (2::bigint, %L::uuid, 'Chapter two is long.') $$,
    tests.user_id('msg.alice@example.test'), tests.user_id('msg.alice@example.test')),
  'A participant sends messages in their own name; the first two get seq 1 and 2.'
);
select results_eq(
  format($$ select last_seq, last_activity_at = now() from app.conversations where id = %L $$, :'group_id'),
  $$ values (2::bigint, true) $$,
  'Sending moves the conversation''s last_seq to the newest seq and last_activity_at to now.'
);
select results_eq(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), 'Elsewhere') returning seq $$, :'side_id'),
  array[1::bigint],
  'Seq is counted per conversation: the first message of another conversation gets seq 1.'
);
select lives_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), repeat('x', 10000)) $$, :'side_id'),
  'A message of exactly 10,000 characters is accepted.'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), '') $$, :'group_id'),
  '23514', 'new row for relation "messages" violates check constraint "messages_content_length"',
  'An empty message is refused (23514).'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), repeat('x', 10001)) $$, :'group_id'),
  '23514', 'new row for relation "messages" violates check constraint "messages_content_length"',
  'A message of more than 10,000 characters is refused (23514).'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, %L, 'In Paul''s name') $$,
    :'group_id', tests.user_id('msg.paul@example.test')),
  '42501', 'new row violates row-level security policy for table "messages"',
  'A participant cannot send in another participant''s name (42501).'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, null, 'Anonymous letter') $$, :'group_id'),
  '42501', 'new row violates row-level security policy for table "messages"',
  'A participant cannot send without a sender (42501).'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content, seq) values (%L, auth.uid(), 'Jump the queue', 100) $$, :'group_id'),
  '42501', 'permission denied for table messages',
  'A participant cannot choose a message''s seq (42501).'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content, created_at) values (%L, auth.uid(), 'Backdated', now() - interval '1 year') $$, :'group_id'),
  '42501', 'permission denied for table messages',
  'A participant cannot backdate a message (42501).'
);
select is(
  (select last_seq from app.conversations where id = :'group_id'),
  2::bigint,
  'The refused sends used up no seq.'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content, reply_to_id)
            values (%L, auth.uid(), 'Cross reply', (select id from app.messages where conversation_id = %L and seq = 1)) $$,
    :'group_id', :'side_id'),
  'AG422', 'a reply must point to a message of the same conversation',
  'A reply must answer a message of the same conversation.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: sending (seq continues) and reading
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.paul@example.test'));

insert into app.messages (conversation_id, sender_id, content, reply_to_id)
values (:'group_id', auth.uid(), 'Agreed.', :'m2') returning id as m3 \gset

select results_eq(
  format($$ select seq, sender_id, reply_to_id from app.messages where conversation_id = %L order by seq $$, :'group_id'),
  format($$ values (1::bigint, %L::uuid, null::uuid), (2, %L, null), (3, %L, %L) $$,
    tests.user_id('msg.alice@example.test'), tests.user_id('msg.alice@example.test'),
    tests.user_id('msg.paul@example.test'), :'m2'),
  'Another participant''s message continues the conversation''s seq: 1, 2, 3, and every participant reads them all.'
);
select is(
  (select last_seq from app.conversations where id = :'group_id'),
  3::bigint,
  'The conversation''s last_seq follows to 3.'
);

-- ---------------------------------------------------------------------------------------------
-- Author: editing
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.alice@example.test'));

select is(
  app.edit_message(:'m1', 'Hello, book club!') ->> 'content',
  'Hello, book club!',
  'The author edits their message within the edit window and gets the new content back.'
);
select is(
  app.edit_message(:'m1', 'Hello, dear book club!') ->> 'content',
  'Hello, dear book club!',
  'The author can edit the same message again.'
);
select results_eq(
  format($$ select content, edited_at = now(), seq from app.messages where id = %L $$, :'m1'),
  $$ values ('Hello, dear book club!', true, 1::bigint) $$,
  'The edited message has the new content, an edited_at and its original seq.'
);
select results_eq(
  format($$ select content from app.message_versions where message_id = %L order by id $$, :'m1'),
  $$ values ('Hello, book club.'), ('Hello, book club!') $$,
  'Every earlier version is kept in app.message_versions, oldest first.'
);
select is(
  (select written_at from app.message_versions where message_id = :'m1' order by id limit 1),
  (select created_at from app.messages where id = :'m1'),
  'The first kept version is dated when the message was written.'
);
select throws_ok(
  format($$ select app.edit_message(%L, '') $$, :'m1'),
  '23514', 'new row for relation "messages" violates check constraint "messages_content_length"',
  'An edit to empty content is refused (23514).'
);

-- Edits obey the configured length as sends do (limits.messageMaxLength), on every path.
select tests.clear_authentication();
insert into app.config_versions (version, config, reason)
select max(version) + 1, '{"limits": {"messageMaxLength": 30}}', 'Short messages for the test'
from app.config_versions;
select tests.authenticate_as(tests.user_id('msg.alice@example.test'));
select throws_ok(
  format($$ select app.edit_message(%L, repeat('x', 31)) $$, :'m1'),
  'AG400', 'a message has at most 30 characters',
  'An edit longer than the configured limit is refused by app.edit_message (AG400).'
);
select throws_ok(
  format($$ update app.messages set content = repeat('x', 31) where id = %L $$, :'m1'),
  'AG400', 'a message has at most 30 characters',
  'The same edit written as a plain update by the author is refused by the guard trigger (AG400).'
);
select is(
  (select content from app.messages where id = :'m1'),
  'Hello, dear book club!',
  'The refused long edits changed nothing.'
);
select tests.clear_authentication();
delete from app.config_versions where config = '{"limits": {"messageMaxLength": 30}}';
select tests.authenticate_as(tests.user_id('msg.alice@example.test'));

select tests.insert_message(:'group_id', tests.user_id('msg.alice@example.test'), 'Written an hour ago',
  now() - interval '1 hour') as old_message \gset

select throws_ok(
  format($$ select app.edit_message(%L, 'Too late') $$, :'old_message'),
  'AG422', 'the edit window (15 minutes) has closed',
  'The author cannot edit a message once the edit window has closed (AG422).'
);
select results_eq(
  format($$ select content, edited_at from app.messages where id = %L $$, :'old_message'),
  $$ values ('Written an hour ago', null::timestamptz) $$,
  'The refused late edit changed nothing.'
);
select throws_ok(
  format($$ update app.messages set content = 'Rewritten later' where id = %L $$, :'old_message'),
  'AG422', 'the edit window has closed',
  'The author cannot bypass the edit window with a direct update.'
);

select throws_ok(
  format($$ update app.messages set sender_id = %L where id = %L $$, tests.user_id('msg.paul@example.test'), :'m1'),
  '42501', 'permission denied for table messages',
  'The author cannot change a message''s sender (42501).'
);
select throws_ok(
  format($$ update app.messages set seq = 99 where id = %L $$, :'m1'),
  '42501', 'permission denied for table messages',
  'The author cannot change a message''s seq (42501).'
);
select throws_ok(
  format($$ update app.messages set conversation_id = %L where id = %L $$, :'side_id', :'m1'),
  '42501', 'permission denied for table messages',
  'The author cannot move a message to another conversation (42501).'
);
select throws_ok(
  format($$ update app.messages set deleted_at = now() where id = %L $$, :'m1'),
  '42501', 'permission denied for table messages',
  'The author cannot set deleted_at directly; deletion goes through app.delete_message (42501).'
);
select throws_ok(
  format($$ delete from app.messages where id = %L $$, :'m1'),
  '42501', 'permission denied for table messages',
  'Messages are never deleted for real by users (42501).'
);
select results_eq(
  format($$ select conversation_id, seq, sender_id from app.messages where id = %L $$, :'m1'),
  format($$ values (%L::uuid, 1::bigint, %L::uuid) $$, :'group_id', tests.user_id('msg.alice@example.test')),
  'After the refused updates the message keeps its conversation, seq and sender.'
);

-- ---------------------------------------------------------------------------------------------
-- Author: deleting
-- ---------------------------------------------------------------------------------------------

insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'notes.txt', 'text/plain', 12, 'test/msg/notes.txt') returning id as attachment_id \gset
update app.attachments set message_id = :'m2', conversation_id = :'group_id' where id = :'attachment_id';

select results_eq(
  format($$ select conversation_id, deleted_at = now() from app.delete_message(%L) $$, :'m2'),
  format($$ values (%L::uuid, true) $$, :'group_id'),
  'The author deletes their message and gets back its conversation and deletion time.'
);
select results_eq(
  format($$ select seq, content, deleted_at is not null from app.messages where id = %L $$, :'m2'),
  $$ values (2::bigint, '', true) $$,
  'A deleted message is a tombstone: empty content, a deleted_at, and its seq kept.'
);
select is_empty(
  format($$ select 1 from app.attachments where message_id = %L $$, :'m2'),
  'A tombstone has no attachments left.'
);
select is(
  (select app.message_json(m) -> 'attachments' from app.messages m where m.id = :'m2'),
  '[]'::jsonb,
  'The tombstone''s JSON lists no attachments.'
);
select is(
  (select deleted_at from app.delete_message(:'m2')),
  (select deleted_at from app.messages where id = :'m2'),
  'Deleting a tombstone again changes nothing and returns its first deletion time.'
);
select throws_matching(
  format($$ select app.edit_message(%L, 'Resurrected') $$, :'m2'),
  '^(message not found|a deleted message cannot be edited)$',
  'The author cannot edit a deleted message (refused).'
);
select throws_ok(
  format($$ select app.edit_message(%L, 'Resurrected') $$, :'m2'),
  'AG422', 'a deleted message cannot be edited',
  'Editing a deleted message raises AG422.'
);
select is(
  (select content from app.messages where id = :'m2'),
  '',
  'The refused edit left the tombstone empty.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: someone else's message
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.paul@example.test'));

select throws_matching(
  format($$ select app.edit_message(%L, 'Paul was here') $$, :'m1'),
  '^(message not found|only the author edits a message)$',
  'A participant cannot edit another participant''s message (refused).'
);
select throws_ok(
  format($$ select app.edit_message(%L, 'Paul was here') $$, :'m1'),
  'AG403', 'only the author edits a message',
  'Editing another participant''s message raises AG403.'
);
select is(
  tests.row_count(format($$ update app.messages set content = 'Paul was here' where id = %L $$, :'m1')),
  0::bigint,
  'A direct update of another participant''s message affects no row.'
);
select is(
  (select content from app.messages where id = :'m1'),
  'Hello, dear book club!',
  'The other participant''s message is unchanged.'
);
select throws_ok(
  format($$ select * from app.delete_message(%L) $$, :'m1'),
  'AG403', 'only the author, the group''s creator or an ADMIN deletes a message',
  'A participant cannot delete another participant''s message (AG403).'
);
select is(
  (select count(*) from app.message_versions where message_id = :'m1'),
  2::bigint,
  'A participant reads the earlier versions of messages in their conversation.'
);

-- ---------------------------------------------------------------------------------------------
-- Group creator
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.carol@example.test'));

select results_eq(
  format($$ select conversation_id from app.delete_message(%L) $$, :'m3'),
  array[:'group_id'::uuid],
  'The group''s creator deletes another participant''s message.'
);
select results_eq(
  format($$ select seq, content, deleted_at is not null from app.messages where id = %L $$, :'m3'),
  $$ values (3::bigint, '', true) $$,
  'The message deleted by the group''s creator is a tombstone in its place.'
);
select throws_matching(
  format($$ select app.edit_message(%L, 'Moderated') $$, :'m1'),
  '^(message not found|only the author edits a message)$',
  'The group''s creator cannot edit someone else''s message.'
);

select tests.insert_message(:'direct_id', tests.user_id('msg.paul@example.test'), 'Just between us') as direct_message \gset

select throws_ok(
  format($$ select * from app.delete_message(%L) $$, :'direct_message'),
  'AG403', 'only the author, the group''s creator or an ADMIN deletes a message',
  'Whoever created a direct conversation cannot delete the other person''s messages in it (AG403).'
);

-- ---------------------------------------------------------------------------------------------
-- VISITOR participant
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.vic@example.test'));

select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), 'Can I?') $$, :'group_id'),
  '42501', 'new row violates row-level security policy for table "messages"',
  'A participant demoted to VISITOR can no longer send (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- Stranger (an active user not in the conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.sam@example.test'));

select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), 'Let me in') $$, :'group_id'),
  '42501', 'new row violates row-level security policy for table "messages"',
  'A stranger cannot send into a conversation they are not in (42501).'
);
select is_empty(
  format($$ select 1 from app.messages where conversation_id = %L $$, :'group_id'),
  'A stranger sees none of the conversation''s messages.'
);
select is_empty(
  format($$ select 1 from app.message_versions where message_id = %L $$, :'m1'),
  'A stranger sees none of the earlier versions.'
);
select throws_ok(
  format($$ select app.edit_message(%L, 'Stranger danger') $$, :'m1'),
  'AG404', 'message not found',
  'A stranger editing a message gets AG404 (the message does not exist for them).'
);
select throws_ok(
  format($$ select * from app.delete_message(%L) $$, :'m1'),
  'AG404', 'message not found',
  'A stranger deleting a message gets AG404 (the message does not exist for them).'
);
select is(
  tests.row_count(format($$ update app.messages set content = 'Stranger danger' where id = %L $$, :'m1')),
  0::bigint,
  'A stranger''s direct update of the message affects no row.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin (an ADMIN not in the conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('msg.ada@example.test'));

select is_empty(
  format($$ select 1 from app.messages where conversation_id = %L $$, :'group_id'),
  'An ADMIN who takes no part reads none of the conversation''s messages.'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, auth.uid(), 'Admin notice') $$, :'group_id'),
  '42501', 'new row violates row-level security policy for table "messages"',
  'An ADMIN cannot send into a conversation they are not in (42501).'
);
select throws_ok(
  format($$ select app.edit_message(%L, 'Admin edit') $$, :'m1'),
  'AG404', 'message not found',
  'An ADMIN cannot edit a message (AG404: not visible to them).'
);
select results_eq(
  format($$ select conversation_id from app.delete_message(%L) $$, :'m1'),
  array[:'group_id'::uuid],
  'An ADMIN deletes a message of a conversation they are not in (moderation).'
);

select tests.clear_authentication();
select results_eq(
  format($$ select seq, content, deleted_at is not null from app.messages where id = %L $$, :'m1'),
  $$ values (1::bigint, '', true) $$,
  'The message deleted by the ADMIN is a tombstone in its place.'
);
select is(
  (select count(*) from app.message_versions where message_id = :'m1'),
  2::bigint,
  'Deleting a message does not add a version (the tombstone is not an edit).'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.messages $$,
  '42501', 'permission denied for table messages',
  'An anonymous visitor cannot read app.messages.'
);
select throws_ok(
  $$ select * from app.message_versions $$,
  '42501', 'permission denied for table message_versions',
  'An anonymous visitor cannot read app.message_versions.'
);
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, %L, 'Anonymous') $$,
    :'group_id', tests.user_id('msg.paul@example.test')),
  '42501', 'permission denied for table messages',
  'An anonymous visitor cannot send a message.'
);
select throws_ok(
  format($$ select app.edit_message(%L, 'Anonymous') $$, :'old_message'),
  '42501', 'permission denied for function edit_message',
  'An anonymous visitor cannot execute app.edit_message.'
);
select throws_ok(
  format($$ select * from app.delete_message(%L) $$, :'old_message'),
  '42501', 'permission denied for function delete_message',
  'An anonymous visitor cannot execute app.delete_message.'
);

-- ---------------------------------------------------------------------------------------------
-- Catalog
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select has_table('app', 'messages', 'The table app.messages exists.');
select has_table('app', 'message_versions', 'The table app.message_versions exists.');
select col_is_unique('app', 'messages', array['conversation_id', 'seq'], 'A seq is unique within its conversation.');
select has_trigger('app', 'messages', 'messages_assign_seq', 'app.messages has the seq trigger on insert.');
select has_trigger('app', 'messages', 'messages_guard_update', 'app.messages has the guard trigger on update.');
select policies_are('app', 'messages',
  array['messages_select_participant', 'messages_insert_participant', 'messages_update_author'],
  'app.messages has exactly the participant select and insert and the author update policies.');
select policies_are('app', 'message_versions', array['message_versions_select_participant'],
  'app.message_versions has exactly the participant select policy (versions are written by the trigger only).');
select is(
  (select array_agg(a.attname::text order by a.attname)
   from pg_attribute a
   where a.attrelid = 'app.messages'::regclass and a.attnum > 0 and not a.attisdropped
     and has_column_privilege('authenticated', a.attrelid, a.attnum, 'UPDATE')),
  array['content'],
  'authenticated may update only the content column of app.messages.'
);
select is(
  (select array_agg(a.attname::text order by a.attname)
   from pg_attribute a
   where a.attrelid = 'app.messages'::regclass and a.attnum > 0 and not a.attisdropped
     and has_column_privilege('authenticated', a.attrelid, a.attnum, 'INSERT')),
  array['content', 'conversation_id', 'mention_ids', 'reply_to_id', 'sender_id', 'thread_id'],
  'authenticated may insert only conversation_id, sender_id, content, reply_to_id, thread_id and mention_ids into app.messages.'
);
select ok(
  not has_table_privilege('authenticated', 'app.message_versions', 'INSERT')
  and not has_table_privilege('authenticated', 'app.message_versions', 'UPDATE')
  and not has_table_privilege('authenticated', 'app.message_versions', 'DELETE'),
  'Users cannot write or erase message history in app.message_versions.'
);

select * from finish();
rollback;
