/*
 * Conversations and their participants (supabase/migrations/..._conversations.sql):
 * app.create_conversation (direct: exactly two people, one conversation per pair, no title; group:
 * a title and at most limits.groupMaxParticipants people), who may take part (active users of at
 * least SUBSCRIBER), who sees a conversation and its participant rows (its participants only),
 * app.add_participants (the group's creator only) and app.remove_participant (the creator, or
 * oneself leaving; never in a direct conversation).
 */
begin;
select plan(72);

do $$
begin
  perform tests.create_user('conv.carol@example.test', 'SUBSCRIBER');     -- group creator
  perform tests.create_user('conv.paul@example.test', 'MEMBER');          -- participant
  perform tests.create_user('conv.pia@example.test', 'CONFIDENTIAL');     -- participant
  perform tests.create_user('conv.quinn@example.test', 'SUBSCRIBER');     -- added later
  perform tests.create_user('conv.sam@example.test', 'SUBSCRIBER');       -- stranger
  perform tests.create_user('conv.vic@example.test', 'VISITOR');          -- cannot message
  perform tests.create_user('conv.sue@example.test', 'MEMBER');           -- suspended below
  perform tests.create_user('conv.ada@example.test', 'ADMIN');            -- admin, not a participant
  update app.users set status = 'suspended' where email = 'conv.sue@example.test';
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Creator: direct conversations
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.carol@example.test'));

select conversation_id as direct_id, created as direct_created
from app.create_conversation('direct', array[tests.user_id('conv.paul@example.test')]) \gset

select ok(:'direct_created'::boolean, 'A direct conversation between two active users is created (created = true).');
select set_eq(
  format($$ select user_id, added_by from app.conversation_participants where conversation_id = %L $$, :'direct_id'),
  format($$ values (%L::uuid, %L::uuid), (%L::uuid, %L::uuid) $$,
    tests.user_id('conv.carol@example.test'), tests.user_id('conv.carol@example.test'),
    tests.user_id('conv.paul@example.test'), tests.user_id('conv.carol@example.test')),
  'A direct conversation has exactly its two people as participants, both added by its creator.'
);
select results_eq(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[]) $$, tests.user_id('conv.paul@example.test')),
  format($$ values (%L::uuid, false) $$, :'direct_id'),
  'Creating the same direct conversation again returns the same id with created = false.'
);
select results_eq(
  format($$ select * from app.create_conversation('direct', array[%L, %L, %L]::uuid[]) $$,
    tests.user_id('conv.paul@example.test'), tests.user_id('conv.paul@example.test'), tests.user_id('conv.carol@example.test')),
  format($$ values (%L::uuid, false) $$, :'direct_id'),
  'Repeating the other person and naming oneself still means the same direct conversation.'
);
select throws_ok(
  format($$ select * from app.create_conversation('direct', array[%L, %L]::uuid[]) $$,
    tests.user_id('conv.paul@example.test'), tests.user_id('conv.pia@example.test')),
  'AG400', 'a direct conversation has exactly two people',
  'A direct conversation with three people is refused (AG400).'
);
select throws_ok(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[], 'Chat') $$,
    tests.user_id('conv.pia@example.test')),
  'AG400', 'a direct conversation has no title',
  'A direct conversation with a title is refused (AG400).'
);
select throws_ok(
  $$ select * from app.create_conversation('direct', array[auth.uid()]) $$,
  'AG400', 'a direct conversation has exactly two people',
  'A direct conversation with only oneself is refused (AG400).'
);
select throws_ok(
  $$ select * from app.create_conversation('direct', '{}') $$,
  'AG400', 'a direct conversation has exactly two people',
  'A direct conversation with nobody else is refused (AG400).'
);
select is(
  (select count(*) from app.conversations where type = 'direct'),
  1::bigint,
  'The refused and repeated calls created no further direct conversation.'
);

-- ---------------------------------------------------------------------------------------------
-- Participant: the same direct conversation from the other side
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.paul@example.test'));

select results_eq(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[]) $$, tests.user_id('conv.carol@example.test')),
  format($$ values (%L::uuid, false) $$, :'direct_id'),
  'The other person creating the direct conversation gets the same id with created = false.'
);

-- ---------------------------------------------------------------------------------------------
-- Creator: groups
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.carol@example.test'));

select throws_ok(
  format($$ select * from app.create_conversation('group', array[%L]::uuid[]) $$, tests.user_id('conv.paul@example.test')),
  'AG400', 'a group conversation needs a title',
  'A group without a title is refused (AG400).'
);
select throws_ok(
  format($$ select * from app.create_conversation('group', array[%L]::uuid[], '   ') $$, tests.user_id('conv.paul@example.test')),
  'AG400', 'a group conversation needs a title',
  'A group whose title is only blanks is refused (AG400).'
);

select conversation_id as group_id, created as group_created
from app.create_conversation('group',
  array[tests.user_id('conv.paul@example.test'), tests.user_id('conv.pia@example.test')], '  Book club  ') \gset

select ok(:'group_created'::boolean, 'A group with a title and two other active users is created (created = true).');
select results_eq(
  format($$ select type, title, created_by, last_seq from app.conversations where id = %L $$, :'group_id'),
  format($$ values ('group'::app.conversation_type, 'Book club', %L::uuid, 0::bigint) $$, tests.user_id('conv.carol@example.test')),
  'The group is stored with its trimmed title, its creator and no messages yet.'
);
select set_eq(
  format($$ select user_id from app.conversation_participants where conversation_id = %L $$, :'group_id'),
  format($$ values (%L::uuid), (%L::uuid), (%L::uuid) $$, tests.user_id('conv.carol@example.test'),
    tests.user_id('conv.paul@example.test'), tests.user_id('conv.pia@example.test')),
  'The group''s participants are its creator and the two people named.'
);

select throws_ok(
  format($$ select * from app.create_conversation('group', array[%L]::uuid[], 'Suspended') $$, tests.user_id('conv.sue@example.test')),
  'AG422', 'every participant must be an active user who can message',
  'A suspended user cannot be made a participant (AG422).'
);
select throws_ok(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[]) $$, tests.user_id('conv.vic@example.test')),
  'AG422', 'every participant must be an active user who can message',
  'A VISITOR cannot be made a participant (AG422).'
);
select throws_ok(
  $$ select * from app.create_conversation('group', array[gen_random_uuid()], 'Ghosts') $$,
  'AG422', 'every participant must be an active user who can message',
  'An unknown user id cannot be made a participant (AG422).'
);
select is(
  (select count(*) from app.conversations),
  2::bigint,
  'The refused creations left no conversation behind.'
);

-- The group size limit comes from the configuration (limits.groupMaxParticipants, default 100).
select tests.clear_authentication();
insert into app.config_versions (version, config, reason)
select max(version) + 1, '{"limits": {"groupMaxParticipants": 3}}', 'Smaller groups for the test'
from app.config_versions;
select tests.authenticate_as(tests.user_id('conv.carol@example.test'));

select is(app.config_int('limits', 'groupMaxParticipants'), 3,
  'app.config_int reads limits.groupMaxParticipants from the newest configuration version.');
select is(app.config_int('limits', 'messageMaxLength'), 10000,
  'app.config_int falls back to app_private.config_defaults for a setting the stored version does not have.');
select throws_ok(
  format($$ select * from app.create_conversation('group', array[%L, %L, %L]::uuid[], 'Too many') $$,
    tests.user_id('conv.paul@example.test'), tests.user_id('conv.pia@example.test'), tests.user_id('conv.quinn@example.test')),
  'AG422', 'a group has at most 3 participants',
  'A group of four people is refused when the configured maximum is three (AG422).'
);
select conversation_id as small_id, created as small_created
from app.create_conversation('group',
  array[tests.user_id('conv.paul@example.test'), tests.user_id('conv.quinn@example.test')], 'Just enough') \gset
select ok(:'small_created'::boolean, 'A group of exactly the configured maximum (three people) is created.');
select throws_ok(
  format($$ select * from app.add_participants(%L, array[%L]::uuid[]) $$, :'group_id', tests.user_id('conv.quinn@example.test')),
  'AG422', 'a group has at most 3 participants',
  'Adding a fourth person to a full group is refused (AG422).'
);

select tests.clear_authentication();
insert into app.config_versions (version, config, reason)
select max(version) + 1, '{}', 'Back to the defaults' from app.config_versions;
select tests.authenticate_as(tests.user_id('conv.carol@example.test'));

-- ---------------------------------------------------------------------------------------------
-- Creator: adding and removing people
-- ---------------------------------------------------------------------------------------------

select results_eq(
  format($$ select * from app.add_participants(%L, array[%L, %L, %L]::uuid[]) $$, :'group_id',
    tests.user_id('conv.quinn@example.test'), tests.user_id('conv.quinn@example.test'), tests.user_id('conv.paul@example.test')),
  array[tests.user_id('conv.quinn@example.test')],
  'The creator adds a person; a duplicate and someone already present are skipped (only the new id is returned).'
);
select results_eq(
  format($$ select added_by from app.conversation_participants where conversation_id = %L and user_id = %L $$,
    :'group_id', tests.user_id('conv.quinn@example.test')),
  array[tests.user_id('conv.carol@example.test')],
  'The added participant''s row records who added them.'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[%L]::uuid[]) $$, :'group_id', tests.user_id('conv.vic@example.test')),
  'AG422', 'every participant must be an active user who can message',
  'The creator cannot add a VISITOR (AG422).'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[%L]::uuid[]) $$, :'group_id', tests.user_id('conv.sue@example.test')),
  'AG422', 'every participant must be an active user who can message',
  'The creator cannot add a suspended user (AG422).'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[%L]::uuid[]) $$, :'direct_id', tests.user_id('conv.pia@example.test')),
  'AG403', 'only the group''s creator adds people',
  'Nobody can be added to a direct conversation, not even by its creator (AG403).'
);
select throws_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'direct_id', tests.user_id('conv.paul@example.test')),
  'AG422', 'people cannot be removed from a direct conversation',
  'Nobody can be removed from a direct conversation (AG422).'
);
select throws_ok(
  format($$ select app.remove_participant(%L, auth.uid()) $$, :'direct_id'),
  'AG422', 'people cannot be removed from a direct conversation',
  'Nobody can leave a direct conversation either (AG422).'
);
select throws_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'group_id', tests.user_id('conv.sam@example.test')),
  'AG404', 'not a participant',
  'Removing someone who is not in the group raises AG404.'
);
select lives_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'group_id', tests.user_id('conv.quinn@example.test')),
  'The group''s creator removes a participant.'
);
select is_empty(
  format($$ select 1 from app.conversation_participants where conversation_id = %L and user_id = %L $$,
    :'group_id', tests.user_id('conv.quinn@example.test')),
  'The removed participant''s row is gone.'
);
select throws_ok(
  $$ insert into app.conversation_participants (conversation_id, user_id) values (gen_random_uuid(), auth.uid()) $$,
  '42501', 'permission denied for table conversation_participants',
  'Participants are never inserted directly, only through the functions (42501).'
);
select throws_ok(
  $$ insert into app.conversations (type, title) values ('group', 'Direct insert') $$,
  '42501', 'permission denied for table conversations',
  'Conversations are never inserted directly, only through app.create_conversation (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- Participant (not the creator)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.paul@example.test'));

select set_eq(
  $$ select id from app.conversations $$,
  format($$ values (%L::uuid), (%L::uuid), (%L::uuid) $$, :'direct_id', :'group_id', :'small_id'),
  'A participant sees exactly the three conversations they take part in.'
);
select is(
  (select count(*) from app.conversation_participants where conversation_id = :'group_id'),
  3::bigint,
  'A participant sees every participant row of their group.'
);
select set_eq(
  format($$ select user_id, name from app.conversation_profiles(array[%L]::uuid[]) $$, :'direct_id'),
  format($$ values (%L::uuid, 'conv.carol'), (%L::uuid, 'conv.paul') $$,
    tests.user_id('conv.carol@example.test'), tests.user_id('conv.paul@example.test')),
  'A participant reads the display profiles (here: names) of the people in their conversation.'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[%L]::uuid[]) $$, :'group_id', tests.user_id('conv.quinn@example.test')),
  'AG403', 'only the group''s creator adds people',
  'A participant who did not create the group cannot add people (AG403).'
);
select throws_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'group_id', tests.user_id('conv.pia@example.test')),
  'AG403', 'only the group''s creator removes people',
  'A participant who did not create the group cannot remove someone else (AG403).'
);
select is(
  (select count(*) from app.conversation_participants where conversation_id = :'group_id'),
  3::bigint,
  'The refused add and remove changed nobody''s membership.'
);
select throws_ok(
  format($$ update app.conversations set title = 'Renamed' where id = %L $$, :'group_id'),
  '42501', 'permission denied for table conversations',
  'A participant cannot update a conversation directly (42501).'
);
select throws_ok(
  format($$ delete from app.conversation_participants where conversation_id = %L and user_id = %L $$,
    :'group_id', tests.user_id('conv.pia@example.test')),
  '42501', 'permission denied for table conversation_participants',
  'A participant cannot delete participant rows directly (42501).'
);

select tests.authenticate_as(tests.user_id('conv.pia@example.test'));

select lives_ok(
  format($$ select app.remove_participant(%L, auth.uid()) $$, :'group_id'),
  'A participant leaves a group by removing themselves.'
);
select is_empty(
  format($$ select 1 from app.conversations where id = %L $$, :'group_id'),
  'After leaving, the former participant no longer sees the group.'
);
select is_empty(
  format($$ select 1 from app.conversation_participants where conversation_id = %L $$, :'group_id'),
  'After leaving, the former participant no longer sees its participant rows.'
);
select throws_ok(
  format($$ select app.remove_participant(%L, auth.uid()) $$, :'group_id'),
  'AG404', 'conversation not found',
  'Someone who left cannot leave again (AG404: the group is not theirs to see).'
);

-- ---------------------------------------------------------------------------------------------
-- Stranger (an active user in neither conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.sam@example.test'));

select is_empty(
  format($$ select 1 from app.conversations where id in (%L, %L) $$, :'direct_id', :'group_id'),
  'A stranger sees neither the direct conversation nor the group.'
);
select is_empty(
  format($$ select 1 from app.conversation_participants where conversation_id in (%L, %L) $$, :'direct_id', :'group_id'),
  'A stranger sees no participant row of either conversation.'
);
select is_empty(
  format($$ select 1 from app.conversation_profiles(array[%L, %L]::uuid[]) $$, :'direct_id', :'group_id'),
  'A stranger reads no profile through app.conversation_profiles.'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[auth.uid()]) $$, :'group_id'),
  'AG404', 'conversation not found',
  'A stranger cannot add themselves to a group (AG404: it does not exist for them).'
);
select throws_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'group_id', tests.user_id('conv.paul@example.test')),
  'AG404', 'conversation not found',
  'A stranger cannot remove anyone from a group (AG404).'
);
select lives_ok(
  format($$ select * from app.create_conversation('group', array[%L]::uuid[], 'Sam''s own') $$, tests.user_id('conv.paul@example.test')),
  'A stranger (any active SUBSCRIBER) can start a group of their own.'
);

-- ---------------------------------------------------------------------------------------------
-- VISITOR and suspended users
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.vic@example.test'));

select throws_ok(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[]) $$, tests.user_id('conv.paul@example.test')),
  'AG403', 'messaging needs the SUBSCRIBER role',
  'A VISITOR cannot create a conversation (AG403).'
);

select tests.authenticate_as(tests.user_id('conv.sue@example.test'));

select throws_ok(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[]) $$, tests.user_id('conv.paul@example.test')),
  'AG403', 'messaging needs the SUBSCRIBER role',
  'A suspended user cannot create a conversation (AG403).'
);

-- ---------------------------------------------------------------------------------------------
-- Admin (an ADMIN who is in neither conversation)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('conv.ada@example.test'));

select is_empty(
  format($$ select 1 from app.conversations where id in (%L, %L) $$, :'direct_id', :'group_id'),
  'An ADMIN who takes no part sees neither conversation.'
);
select is_empty(
  format($$ select 1 from app.conversation_participants where conversation_id in (%L, %L) $$, :'direct_id', :'group_id'),
  'An ADMIN who takes no part sees no participant row.'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[auth.uid()]) $$, :'group_id'),
  'AG404', 'conversation not found',
  'An ADMIN cannot add themselves to a group they are not in (AG404).'
);
select throws_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'group_id', tests.user_id('conv.paul@example.test')),
  'AG404', 'conversation not found',
  'An ADMIN cannot remove people from a group they are not in (AG404).'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.conversations $$,
  '42501', 'permission denied for table conversations',
  'An anonymous visitor cannot read app.conversations.'
);
select throws_ok(
  $$ select * from app.conversation_participants $$,
  '42501', 'permission denied for table conversation_participants',
  'An anonymous visitor cannot read app.conversation_participants.'
);
select throws_ok(
  format($$ select * from app.create_conversation('direct', array[%L]::uuid[]) $$, tests.user_id('conv.paul@example.test')),
  '42501', 'permission denied for function create_conversation',
  'An anonymous visitor cannot execute app.create_conversation.'
);
select throws_ok(
  format($$ select * from app.add_participants(%L, array[%L]::uuid[]) $$, :'group_id', tests.user_id('conv.sam@example.test')),
  '42501', 'permission denied for function add_participants',
  'An anonymous visitor cannot execute app.add_participants.'
);
select throws_ok(
  format($$ select app.remove_participant(%L, %L) $$, :'group_id', tests.user_id('conv.paul@example.test')),
  '42501', 'permission denied for function remove_participant',
  'An anonymous visitor cannot execute app.remove_participant.'
);

-- ---------------------------------------------------------------------------------------------
-- Catalog: the messaging tables and their policies
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select has_table('app', 'conversations', 'The table app.conversations exists.');
select has_table('app', 'conversation_participants', 'The table app.conversation_participants exists.');
select col_is_pk('app', 'conversation_participants', array['conversation_id', 'user_id'],
  'A person takes part in a conversation at most once (primary key conversation_id, user_id).');
select col_is_unique('app', 'conversations', 'direct_key', 'One direct conversation per pair (direct_key is unique).');
select policies_are('app', 'conversations', array['conversations_select_participant'],
  'app.conversations has exactly the participant select policy (writes go through functions).');
select policies_are('app', 'conversation_participants',
  array['participants_select_participant', 'participants_update_self'],
  'app.conversation_participants has exactly the participant select and the own read-mark update policies.');
select is(
  (select array_agg(p.proname::text order by p.proname)
   from pg_proc p
   where p.pronamespace = 'app'::regnamespace and p.proname in (
     'create_conversation', 'add_participants', 'remove_participant', 'conversation_profiles', 'my_conversation_ids')
     and p.prosecdef),
  array['add_participants', 'conversation_profiles', 'create_conversation', 'my_conversation_ids', 'remove_participant'],
  'The membership functions run as security definer (they check every rule themselves).'
);

select * from finish();
rollback;
