/*
 * Attachments (supabase/migrations/..._attachments.sql): the uploader inserts the row for
 * their own file, unattached, and sees it; they attach it once, to a message of their own in that
 * message's conversation (the guard trigger), after which every participant of the conversation
 * sees it and nobody else does. The file's fields never change and rows are never deleted by users.
 */
begin;
select plan(45);

do $$
begin
  perform tests.create_user('att.carol@example.test', 'SUBSCRIBER');   -- group creator
  perform tests.create_user('att.alice@example.test', 'MEMBER');       -- uploader and author
  perform tests.create_user('att.paul@example.test', 'SUBSCRIBER');    -- participant
  perform tests.create_user('att.sam@example.test', 'SUBSCRIBER');     -- stranger
  perform tests.create_user('att.ada@example.test', 'ADMIN');          -- admin, not a participant
end
$$;

select tests.create_conversation(tests.user_id('att.carol@example.test'), 'group',
  array[tests.user_id('att.alice@example.test'), tests.user_id('att.paul@example.test')], 'Files') as group_id \gset
select tests.create_conversation(tests.user_id('att.carol@example.test'), 'group',
  array[tests.user_id('att.alice@example.test')], 'Other files') as side_id \gset
select tests.insert_message(:'group_id', tests.user_id('att.alice@example.test'), 'See attached') as alice_message \gset
select tests.insert_message(:'group_id', tests.user_id('att.paul@example.test'), 'Mine') as paul_message \gset
select tests.insert_message(:'side_id', tests.user_id('att.alice@example.test'), 'Elsewhere') as side_message \gset

-- ---------------------------------------------------------------------------------------------
-- Uploader (author): inserting and seeing their own rows
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('att.alice@example.test'));

insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'report.pdf', 'application/pdf', 2048, 'test/att/report.pdf') returning id as report_id \gset
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'draft.txt', 'text/plain', 10, 'test/att/draft.txt') returning id as draft_id \gset

select results_eq(
  $$ select name, uploader_id, message_id, conversation_id from app.attachments order by name $$,
  format($$ values ('draft.txt', %1$L::uuid, null::uuid, null::uuid), ('report.pdf', %1$L, null, null) $$,
    tests.user_id('att.alice@example.test')),
  'The uploader inserts rows for their own files, unattached, and sees them.'
);
select throws_ok(
  format($$ insert into app.attachments (uploader_id, name, content_type, size, storage_key)
            values (%L, 'planted.exe', 'application/octet-stream', 1, 'test/att/planted') $$, tests.user_id('att.paul@example.test')),
  '42501', 'new row violates row-level security policy for table "attachments"',
  'A user cannot insert an attachment in someone else''s name (42501).'
);
select throws_ok(
  format($$ insert into app.attachments (uploader_id, name, content_type, size, storage_key, message_id, conversation_id)
            values (auth.uid(), 'direct.txt', 'text/plain', 1, 'test/att/direct', %L, %L) $$, :'alice_message', :'group_id'),
  '42501', 'permission denied for table attachments',
  'A new attachment cannot be inserted already attached (42501).'
);
select throws_ok(
  $$ insert into app.attachments (uploader_id, name, content_type, size, storage_key)
     values (auth.uid(), '', 'text/plain', 1, 'test/att/empty-name') $$,
  '23514', null,
  'An attachment needs a name (23514).'
);
select throws_ok(
  $$ insert into app.attachments (uploader_id, name, content_type, size, storage_key)
     values (auth.uid(), 'negative.txt', 'text/plain', -1, 'test/att/negative') $$,
  '23514', null,
  'An attachment cannot have a negative size (23514).'
);

-- ---------------------------------------------------------------------------------------------
-- Uploader (author): attaching
-- ---------------------------------------------------------------------------------------------

select throws_ok(
  format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'paul_message', :'group_id', :'report_id'),
  'AG422', 'an attachment goes on a live message of its uploader, who takes part in the conversation',
  'The uploader cannot attach their file to someone else''s message (AG422).'
);
select throws_ok(
  format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'side_message', :'group_id', :'report_id'),
  'AG422', 'an attachment goes on a live message of its uploader, who takes part in the conversation',
  'The uploader cannot attach their file to their own message under another conversation (AG422).'
);
select throws_ok(
  format($$ update app.attachments set message_id = %L where id = %L $$, :'alice_message', :'report_id'),
  'AG422', 'an attachment goes on a live message of its uploader, who takes part in the conversation',
  'The uploader cannot attach their file to a message without naming its conversation (AG422).'
);
select throws_ok(
  format($$ update app.attachments set message_id = gen_random_uuid(), conversation_id = %L where id = %L $$,
    :'group_id', :'report_id'),
  'AG422', 'an attachment goes on a live message of its uploader, who takes part in the conversation',
  'The uploader cannot attach their file to a message that does not exist (AG422).'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'alice_message', :'group_id', :'report_id')),
  1::bigint,
  'The uploader attaches their file to their own message in that message''s conversation.'
);
select results_eq(
  format($$ select message_id, conversation_id from app.attachments where id = %L $$, :'report_id'),
  format($$ values (%L::uuid, %L::uuid) $$, :'alice_message', :'group_id'),
  'The attachment is now attached to the message and its conversation.'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'side_message', :'side_id', :'report_id')),
  0::bigint,
  'An attachment is attached only once: attaching it again affects no row (the update policy sees only unattached rows; the AG409 branch is never reached).'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = null, conversation_id = null where id = %L $$, :'report_id')),
  0::bigint,
  'An attached file cannot be detached again (no row changes).'
);
select results_eq(
  format($$ select message_id, conversation_id from app.attachments where id = %L $$, :'report_id'),
  format($$ values (%L::uuid, %L::uuid) $$, :'alice_message', :'group_id'),
  'After the refused second attach and detach the attachment is still on its first message.'
);
select throws_ok(
  format($$ update app.attachments set name = 'renamed.pdf' where id = %L $$, :'draft_id'),
  '42501', 'permission denied for table attachments',
  'The uploader cannot rename a file (42501).'
);
select throws_ok(
  format($$ update app.attachments set storage_key = 'test/att/other' where id = %L $$, :'draft_id'),
  '42501', 'permission denied for table attachments',
  'The uploader cannot point the row at another stored file (42501).'
);
select throws_ok(
  format($$ delete from app.attachments where id = %L $$, :'draft_id'),
  '42501', 'permission denied for table attachments',
  'The uploader cannot delete attachment rows directly (42501).'
);
select tests.insert_message(:'group_id', auth.uid(), 'Soon deleted') as doomed_message \gset
select deleted_at from app.delete_message(:'doomed_message') \gset
select throws_ok(
  format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'doomed_message', :'group_id', :'draft_id'),
  'AG422', null,
  'The uploader cannot attach a file to a deleted message.'
);

-- The API's flow: send a message and attach in one transaction; message.created is emitted at
-- commit, so it already lists the attachment.
insert into app.messages (conversation_id, sender_id, content) values (:'group_id', auth.uid(), 'With the draft')
returning id as draft_message \gset
update app.attachments set message_id = :'draft_message', conversation_id = :'group_id' where id = :'draft_id';
set constraints all immediate;
set constraints all deferred;
select is(
  (select payload -> 'attachments' -> 0 ->> 'id' from app.events
   where event = 'message.created' and payload ->> 'id' = :'draft_message'),
  :'draft_id',
  'A file attached in the sending transaction is listed in that message''s message.created event.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('att.paul@example.test'));

select set_eq(
  format($$ select id from app.attachments where conversation_id = %L $$, :'group_id'),
  format($$ values (%L::uuid), (%L::uuid) $$, :'report_id', :'draft_id'),
  'Every participant sees the files attached in their conversation.'
);
select results_eq(
  format($$ select a ->> 'id', a ->> 'name', a ->> 'url'
            from app.messages m, jsonb_array_elements(app.message_json(m) -> 'attachments') a where m.id = %L $$, :'alice_message'),
  format($$ values (%1$L, 'report.pdf', '/api/attachments/' || %1$L) $$, :'report_id'),
  'A participant sees the attachment in the message JSON, with its download URL.'
);

insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'photo.jpg', 'image/jpeg', 4096, 'test/att/photo.jpg') returning id as photo_id \gset

select throws_ok(
  format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'alice_message', :'group_id', :'photo_id'),
  'AG422', 'an attachment goes on a live message of its uploader, who takes part in the conversation',
  'A participant cannot attach their own file to another participant''s message (AG422).'
);

select tests.authenticate_as(tests.user_id('att.alice@example.test'));
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'secret.txt', 'text/plain', 6, 'test/att/secret.txt') returning id as secret_id \gset
select tests.authenticate_as(tests.user_id('att.paul@example.test'));

select is_empty(
  format($$ select 1 from app.attachments where id = %L $$, :'secret_id'),
  'A participant does not see another participant''s file before it is attached.'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'paul_message', :'group_id', :'secret_id')),
  0::bigint,
  'A participant cannot attach another user''s file, not even to their own message (no row changes).'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'alice_message', :'group_id', :'secret_id')),
  0::bigint,
  'A participant cannot attach another user''s file to that user''s message either (no row changes).'
);

select tests.clear_authentication();
select results_eq(
  format($$ select message_id, conversation_id from app.attachments where id = %L $$, :'secret_id'),
  $$ values (null::uuid, null::uuid) $$,
  'The other participant''s attempts left the file unattached.'
);

-- ---------------------------------------------------------------------------------------------
-- Group creator
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('att.carol@example.test'));

select is(
  (select count(*) from app.attachments where conversation_id = :'group_id'),
  2::bigint,
  'The group''s creator, as a participant, sees the two attached files.'
);
select is_empty(
  format($$ select 1 from app.attachments where id in (%L, %L) $$, :'secret_id', :'photo_id'),
  'The group''s creator sees no unattached file of someone else.'
);

-- ---------------------------------------------------------------------------------------------
-- Stranger
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('att.sam@example.test'));

select is_empty(
  format($$ select 1 from app.attachments where id in (%L, %L, %L, %L) $$, :'report_id', :'draft_id', :'secret_id', :'photo_id'),
  'A stranger sees no file, attached or not, of the conversation''s people.'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = null, conversation_id = null where id = %L $$, :'report_id')),
  0::bigint,
  'A stranger cannot detach a file (no row changes).'
);
select is(
  tests.row_count(format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'alice_message', :'group_id', :'secret_id')),
  0::bigint,
  'A stranger cannot attach someone else''s file (no row changes).'
);
select lives_ok(
  $$ insert into app.attachments (uploader_id, name, content_type, size, storage_key)
     values (auth.uid(), 'sam.txt', 'text/plain', 1, 'test/att/sam.txt') $$,
  'A stranger may upload files of their own (they can attach them only in their own conversations).'
);
select throws_ok(
  format($$ insert into app.attachments (uploader_id, name, content_type, size, storage_key)
            values (auth.uid(), 'copy.pdf', 'application/pdf', 1, %L) $$, 'test/att/report.pdf'),
  '23505', null,
  'A stranger cannot claim another user''s stored file by its storage key (23505).'
);

-- ---------------------------------------------------------------------------------------------
-- Admin (an ADMIN not in the conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('att.ada@example.test'));

select is_empty(
  format($$ select 1 from app.attachments where id in (%L, %L) $$, :'report_id', :'draft_id'),
  'An ADMIN who takes no part does not see the files attached in the conversation.'
);
select isnt(
  (select deleted_at from app.delete_message(:'alice_message')),
  null,
  'An ADMIN deletes the message (its file''s removal is queued as a storage.delete job, tests/jobs/sql/020-jobs.sql).'
);

select tests.authenticate_as(tests.user_id('att.paul@example.test'));
select is_empty(
  format($$ select 1 from app.attachments where id = %L $$, :'report_id'),
  'Once its message is deleted, the file is gone for the participants too.'
);

-- ---------------------------------------------------------------------------------------------
-- Uploader after leaving the conversation
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('att.alice@example.test'));
select app.remove_participant(:'group_id', auth.uid());

select results_eq(
  format($$ select id from app.attachments where conversation_id = %L $$, :'group_id'),
  array[:'draft_id'::uuid],
  'After leaving the conversation, the uploader still sees their own file attached there, and no other file of it.'
);
select throws_ok(
  format($$ update app.attachments set message_id = %L, conversation_id = %L where id = %L $$,
    :'draft_message', :'group_id', :'secret_id'),
  'AG422', null,
  'Someone who has left the conversation cannot attach files in it any more.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.attachments $$,
  '42501', 'permission denied for table attachments',
  'An anonymous visitor cannot read app.attachments.'
);
select throws_ok(
  $$ insert into app.attachments (uploader_id, name, content_type, size, storage_key)
     values (gen_random_uuid(), 'anon.txt', 'text/plain', 1, 'test/att/anon.txt') $$,
  '42501', 'permission denied for table attachments',
  'An anonymous visitor cannot insert attachments.'
);
select throws_ok(
  format($$ update app.attachments set message_id = null, conversation_id = null where id = %L $$, :'draft_id'),
  '42501', 'permission denied for table attachments',
  'An anonymous visitor cannot update attachments.'
);

-- ---------------------------------------------------------------------------------------------
-- Catalog
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select has_table('app', 'attachments', 'The table app.attachments exists.');
select policies_are('app', 'attachments',
  array['attachments_select_visible', 'attachments_insert_self', 'attachments_update_attach'],
  'app.attachments has exactly the visible select, own insert and attach update policies.');
select has_trigger('app', 'attachments', 'attachments_guard_update', 'app.attachments has the attach guard trigger.');
select is(
  (select array_agg(a.attname::text order by a.attname)
   from pg_attribute a
   where a.attrelid = 'app.attachments'::regclass and a.attnum > 0 and not a.attisdropped
     and has_column_privilege('authenticated', a.attrelid, a.attnum, 'UPDATE')),
  array['conversation_id', 'message_id'],
  'authenticated may update only message_id and conversation_id of app.attachments (attaching).'
);

select * from finish();
rollback;
