/*
 * The message JSON (supabase/migrations/..._messages.sql and ..._attachments.sql) is built in three
 * places: app.messages_json (pages; app.message_json, one message, reads it), the send's
 * response, and the event trigger, each reading the attachments in its own statement. They must
 * agree, with and without attachments (but for senderBlocked, which only the readers carry: it is
 * the reader's own view),
 * and the two builders must stay inlinable: a `set search_path` or `security definer` added to
 * them would make every call parse and plan them again, and this test fails then.
 */
begin;
select plan(12);

do $$
begin
  perform tests.create_user('mj.ann@example.test', 'SUBSCRIBER');
  perform tests.create_user('mj.ben@example.test', 'SUBSCRIBER');
end
$$;

select tests.create_conversation(tests.user_id('mj.ann@example.test'), 'direct',
  array[tests.user_id('mj.ben@example.test')]) as conversation_id \gset

select tests.authenticate_as(tests.user_id('mj.ann@example.test'));
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'b.txt', 'text/plain', 2, 'test/mj/b') returning id as file_b \gset
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (auth.uid(), 'a.png', 'image/png', 3, 'test/mj/a') returning id as file_a \gset
select app.send_message(:'conversation_id'::uuid, 'with files', null,
  array[:'file_b', :'file_a']::uuid[]) as with_files \gset
select app.send_message(:'conversation_id'::uuid, 'plain') as plain \gset
set constraints all immediate;
set constraints all deferred;

select is(
  (select app.message_json(m) - 'senderBlocked' from app.messages m where m.id = (:'with_files'::jsonb ->> 'id')::uuid),
  :'with_files'::jsonb,
  'A send''s response equals app.message_json of the message (with attachments).'
);
select is(
  (select payload from app.events where event = 'message.created'
     and payload ->> 'id' = :'with_files'::jsonb ->> 'id'),
  :'with_files'::jsonb,
  'The message.created event carries the same JSON (with attachments).'
);
select is(
  (select jsonb_agg(f ->> 'name' order by f ->> 'name')
   from jsonb_array_elements(:'with_files'::jsonb -> 'attachments') f),
  '["a.png", "b.txt"]'::jsonb,
  'Both attachments are in it.'
);
select is(
  (select app.message_json(m) - 'senderBlocked' from app.messages m where m.id = (:'plain'::jsonb ->> 'id')::uuid),
  :'plain'::jsonb,
  'A send''s response equals app.message_json of the message (no attachments).'
);
select is(
  (select payload from app.events where event = 'message.created'
     and payload ->> 'id' = :'plain'::jsonb ->> 'id'),
  :'plain'::jsonb,
  'The message.created event carries the same JSON (no attachments).'
);
select is(:'plain'::jsonb -> 'attachments', '[]'::jsonb, 'No attachments is an empty list.');

-- A page's JSON in one call: the same JSON as app.message_json per row, in the order asked.
select is(
  (select array_agg(j.id) from app.messages_json(array[
     (:'plain'::jsonb ->> 'id')::uuid, (:'with_files'::jsonb ->> 'id')::uuid]) j),
  array[(:'plain'::jsonb ->> 'id')::uuid, (:'with_files'::jsonb ->> 'id')::uuid],
  'app.messages_json returns the messages in the order of the ids given...'
);
select is(
  (select array_agg(j.id) from app.messages_json(array[
     (:'with_files'::jsonb ->> 'id')::uuid, (:'plain'::jsonb ->> 'id')::uuid]) j),
  array[(:'with_files'::jsonb ->> 'id')::uuid, (:'plain'::jsonb ->> 'id')::uuid],
  '...whichever the order.'
);
select is(
  (select jsonb_agg(j.json - 'senderBlocked') from app.messages_json(array[
     (:'with_files'::jsonb ->> 'id')::uuid, (:'plain'::jsonb ->> 'id')::uuid]) j),
  jsonb_build_array(:'with_files'::jsonb, :'plain'::jsonb),
  'app.messages_json gives each message the JSON of its send (with and without attachments).'
);
select tests.clear_authentication();

select tests.create_user('mj.cas@example.test', 'SUBSCRIBER') as cas \gset
select tests.authenticate_as(tests.user_id('mj.cas@example.test'));
select is_empty(
  format('select 1 from app.messages_json(array[%L, %L]::uuid[])',
         :'plain'::jsonb ->> 'id', :'with_files'::jsonb ->> 'id'),
  'Someone outside the conversation gets nothing from app.messages_json (RLS).'
);
select tests.clear_authentication();

-- The builders are inlined: the plan shows jsonb_build_object, not a call of the function.
create function pg_temp.plan_text(query text) returns text
language plpgsql volatile
as $$
declare
  line text;
  result text := '';
begin
  for line in execute 'explain (verbose, costs off) ' || query loop
    result := result || line || E'\n';
  end loop;
  return result;
end;
$$;

select ok(
  pg_temp.plan_text('select app.message_object(m, null) from app.messages m') !~ 'message_object',
  'app.message_object is inlined into the query that calls it.'
);
select ok(
  pg_temp.plan_text('select app.attachment_json(a) from app.attachments a') !~ 'attachment_json',
  'app.attachment_json is inlined into the query that calls it.'
);

select * from finish();
rollback;
