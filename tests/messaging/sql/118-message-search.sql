/*
 * Message search (supabase/migrations/..._messages_search.sql): app.search_messages is security
 * definer, so it must restrict itself to the caller's current conversations. Per persona: a
 * participant finds the messages of their conversations (not tombstones); a stranger and an
 * ADMIN who is not a participant find nothing and get AG404 for the conversation; a participant
 * demoted to VISITOR or suspended finds nothing; one who left finds nothing of it any more;
 * anonymous callers may not call it. Terms shorter than 3 characters are AG400; `%` and `_` are
 * literal; whole words rank before word starts before substrings.
 */
begin;
select plan(16);

do $$
begin
  perform tests.create_user('srch.carol@example.test', 'MEMBER');      -- group creator
  perform tests.create_user('srch.paul@example.test', 'SUBSCRIBER');   -- participant, leaves below
  perform tests.create_user('srch.vic@example.test', 'SUBSCRIBER');    -- participant, demoted to VISITOR
  perform tests.create_user('srch.sue@example.test', 'SUBSCRIBER');    -- participant, suspended
  perform tests.create_user('srch.sam@example.test', 'SUBSCRIBER');    -- stranger
  perform tests.create_user('srch.ada@example.test', 'ADMIN');         -- admin, not a participant
end
$$;

select tests.create_conversation(tests.user_id('srch.carol@example.test'), 'group',
  array[tests.user_id('srch.paul@example.test'), tests.user_id('srch.vic@example.test'),
        tests.user_id('srch.sue@example.test')], 'Search club') as group_id \gset

select tests.authenticate_as(tests.user_id('srch.carol@example.test'));
insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), 'the pelican meeting') returning id as word_id \gset
insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), 'pelicans everywhere') returning id as prefix_id \gset
insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), 'superpelicanhero') returning id as inside_id \gset
insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), 'a pelican to delete') returning id as gone_id \gset
insert into app.messages (conversation_id, sender_id, content)
values (:'group_id', auth.uid(), '100% sure') returning id as pct_id \gset
select app.delete_message(:'gone_id');
select tests.clear_authentication();

update app.users set role = 'VISITOR' where id = tests.user_id('srch.vic@example.test');
update app.users set status = 'suspended' where id = tests.user_id('srch.sue@example.test');

-- Participant ---------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('srch.paul@example.test'));
select results_eq(
  $$ select message_id, score from app.search_messages(array['PELICAN']) $$,
  format($$ values (%L::uuid, 2), (%L::uuid, 1), (%L::uuid, 0) $$, :'word_id', :'prefix_id', :'inside_id'),
  'A participant finds whole words, then word starts, then substrings, case-insensitively; never the tombstone.'
);
select results_eq(
  format($$ select message_id from app.search_messages(array['pelican'], %L) $$, :'group_id'),
  format($$ values (%L::uuid), (%L::uuid), (%L::uuid) $$, :'word_id', :'prefix_id', :'inside_id'),
  'A participant searches one of their conversations.'
);
select results_eq(
  format($$ select message_id from app.search_messages(array['pelican'], null, 2, (select created_at from app.messages where id = %L), %L) $$, :'word_id', :'word_id'),
  format($$ values (%L::uuid), (%L::uuid) $$, :'prefix_id', :'inside_id'),
  'A page continues after the (score, created_at, id) it is given.'
);
select results_eq(
  $$ select message_id from app.search_messages(array['pelican', 'meeting']) $$,
  format($$ values (%L::uuid) $$, :'word_id'),
  'Every term must occur.'
);
select results_eq(
  $$ select message_id from app.search_messages(array['100%']) $$,
  format($$ values (%L::uuid) $$, :'pct_id'),
  'A % in a term is literal.'
);
select is_empty(
  $$ select * from app.search_messages(array['pe_ican']) $$,
  'An _ in a term is literal.'
);
select throws_ok(
  $$ select * from app.search_messages(array['pe']) $$,
  'AG400', 'a search has 1 to 8 terms of 3 to 200 characters',
  'A term of 2 characters is refused.'
);
select throws_ok(
  $$ select * from app.search_messages(array[]::text[]) $$,
  'AG400', 'a search has 1 to 8 terms of 3 to 200 characters',
  'A search without terms is refused.'
);

-- Stranger and ADMIN --------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('srch.sam@example.test'));
select is_empty($$ select * from app.search_messages(array['pelican']) $$,
  'A stranger finds nothing of a conversation they are not in.');
select throws_ok(
  format($$ select * from app.search_messages(array['pelican'], %L) $$, :'group_id'),
  'AG404', 'conversation not found', 'A stranger naming the conversation gets AG404.');

select tests.authenticate_as(tests.user_id('srch.ada@example.test'));
select is_empty($$ select * from app.search_messages(array['pelican']) $$,
  'An ADMIN who is not a participant finds nothing.');
select throws_ok(
  format($$ select * from app.search_messages(array['pelican'], %L) $$, :'group_id'),
  'AG404', 'conversation not found', 'An ADMIN naming a conversation they are not in gets AG404.');

-- Demoted, suspended, anonymous ---------------------------------------------------------------

select tests.authenticate_as(tests.user_id('srch.vic@example.test'));
select is_empty($$ select * from app.search_messages(array['pelican']) $$,
  'A participant demoted to VISITOR finds nothing.');

select tests.authenticate_as(tests.user_id('srch.sue@example.test'));
select is_empty($$ select * from app.search_messages(array['pelican']) $$,
  'A suspended participant finds nothing.');

select tests.authenticate_as_anon();
select throws_ok($$ select * from app.search_messages(array['pelican']) $$, '42501', null,
  'Anonymous callers may not search.');

-- A participant who left ----------------------------------------------------------------------

select tests.clear_authentication();
delete from app.conversation_participants
where conversation_id = :'group_id' and user_id = tests.user_id('srch.paul@example.test');
select tests.authenticate_as(tests.user_id('srch.paul@example.test'));
select is_empty($$ select * from app.search_messages(array['pelican']) $$,
  'A participant who left finds nothing of that conversation any more.');

select * from finish();
rollback;
