/*
 * Blocks, mutes and mentions (supabase/migrations/..._conversations_mute_block.sql and
 * ..._messages_mentions.sql), per persona: anonymous, the blocker, the blocked person, a
 * stranger and an ADMIN. app.user_blocks is read by the blocker (and ADMINs) only, written by
 * the blocker only; app.conversation_settings by its owner only, written through
 * app.set_conversation_mute. The triggers refuse what a block refuses on every path (AG403 with
 * hint blocked), a mention of a non-participant (AG422); app_private.notify_rows drops a mention
 * for a muted conversation or a blocked sender and gives a muted conversation no deliveries.
 */
begin;
select plan(35);

do $$
begin
  perform tests.create_user('bk.ben@example.test', 'SUBSCRIBER');   -- the blocker
  perform tests.create_user('bk.ann@example.test', 'SUBSCRIBER');   -- the blocked person
  perform tests.create_user('bk.cat@example.test', 'SUBSCRIBER');   -- a stranger to the block
  perform tests.create_user('bk.ada@example.test', 'ADMIN');        -- ADMIN
end
$$;

select tests.user_id('bk.ben@example.test') as ben \gset
select tests.user_id('bk.ann@example.test') as ann \gset
select tests.user_id('bk.cat@example.test') as cat \gset
select tests.user_id('bk.ada@example.test') as ada \gset

select tests.create_conversation(:'ann'::uuid, 'direct', array[:'ben'::uuid]) as direct_id \gset
select tests.create_conversation(:'cat'::uuid, 'group', array[:'ann'::uuid, :'ben'::uuid], 'Shared') as shared_id \gset
select tests.create_conversation(:'ann'::uuid, 'group', array[:'cat'::uuid], 'Ann''s') as anns_id \gset

-- ---------------------------------------------------------------------------------------------
-- Schema and grants
-- ---------------------------------------------------------------------------------------------

select ok(
  not has_table_privilege('anon', 'app.user_blocks', 'select')
  and not has_table_privilege('anon', 'app.conversation_settings', 'select')
  and not has_table_privilege('authenticated', 'app.conversation_settings', 'insert')
  and not has_table_privilege('authenticated', 'app.conversation_settings', 'update')
  and not has_table_privilege('authenticated', 'app.user_blocks', 'insert')
  and not has_table_privilege('authenticated', 'app.user_blocks', 'update')
  and not has_table_privilege('authenticated', 'app.user_blocks', 'delete'),
  'anon reads neither table; users write neither directly (only through the functions).'
);
select ok(
  has_function_privilege('authenticated', 'app.set_block(uuid, boolean)', 'execute')
  and has_function_privilege('authenticated', 'app.set_conversation_mute(uuid, boolean, timestamptz)', 'execute')
  and not has_function_privilege('anon', 'app.set_block(uuid, boolean)', 'execute')
  and not has_function_privilege('anon', 'app.list_blocked(timestamptz, uuid, integer)', 'execute'),
  'authenticated may execute the block and mute functions; anon may not.'
);

-- ---------------------------------------------------------------------------------------------
-- Blocks, per persona
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'ben'::uuid);
select is(app.set_block(:'ann'::uuid, true), jsonb_build_object('userId', :'ann'::uuid, 'blocked', true),
  'The blocker blocks through app.set_block.');
select is((select count(*)::int from app.user_blocks), 1, 'The blocker sees their block.');
select throws_ok(format('select app.set_block(%L, true)', :'ben'), 'AG422', null,
  'Nobody blocks themselves.');
select throws_ok(format('select app.set_block(%L, true)', gen_random_uuid()), 'AG404', null,
  'An unknown user cannot be blocked (404, as their profile).');
select throws_ok(
  format('insert into app.user_blocks (blocker_id, blocked_id) values (%L, %L)', :'cat', :'ben'),
  '42501', null, 'Nobody writes a block directly, let alone in another''s name.');
select is((select count(*)::int from app.list_blocked(null, null, 10)), 1, 'app.list_blocked lists it.');

select tests.authenticate_as(:'ann'::uuid);
select is((select count(*)::int from app.user_blocks), 0,
  'The blocked person sees no row of the block.');
select is((select count(*)::int from app.list_blocked(null, null, 10)), 0,
  'Nor in their own list.');
select throws_ok(format('delete from app.user_blocks where blocker_id = %L', :'ben'), '42501', null,
  'The blocked person cannot delete it ...');
select is(app.set_block(:'ben'::uuid, false), jsonb_build_object('userId', :'ben'::uuid, 'blocked', false),
  '... and unblocking through app.set_block touches only their own blocks (none).');
select tests.authenticate_as(:'ben'::uuid);
select is((select count(*)::int from app.user_blocks), 1, 'The block is still there.');

select tests.authenticate_as(:'cat'::uuid);
select is((select count(*)::int from app.user_blocks), 0, 'A stranger sees nothing.');

select tests.authenticate_as(:'ada'::uuid);
select is((select count(*)::int from app.user_blocks where blocked_id = :'ann'::uuid), 1,
  'An ADMIN reads blocks (moderation).');

select tests.authenticate_as_anon();
select throws_ok('select count(*) from app.user_blocks', '42501', null, 'Anonymous: no access.');

-- ---------------------------------------------------------------------------------------------
-- What a block refuses, on every path
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'ann'::uuid);
select throws_ok(format($$ select app.create_conversation('direct', array[%L::uuid]) $$, :'ben'),
  'AG403', 'you cannot message this person',
  'The blocked person cannot start (or reopen) the direct conversation.');
select throws_ok(format($$ select app.send_message(%L, 'hello?') $$, :'direct_id'),
  'AG403', 'you cannot message this person',
  'The blocked person cannot send into the direct conversation.');
select throws_ok(
  format($$ insert into app.messages (conversation_id, sender_id, content) values (%L, %L, 'raw') $$,
         :'direct_id', :'ann'),
  'AG403', null, 'Nor by a plain insert.');
select throws_ok(format($$ select app.add_participants(%L, array[%L::uuid]) $$, :'anns_id', :'ben'),
  'AG403', 'you cannot add this person', 'The blocked person cannot add the blocker to a group.');
select throws_ok(
  format($$ select app.create_conversation('group', array[%L::uuid, %L::uuid], 'New') $$, :'ben', :'cat'),
  'AG403', 'you cannot add this person', 'Nor create a group with them in it.');
select lives_ok(format($$ select app.send_message(%L, 'hi all', mentions => array[%L::uuid, %L::uuid]) $$,
                       :'shared_id', :'ben', :'cat'),
  'In a shared group the blocked person still sends, mentioning the blocker.');

select tests.authenticate_as(:'ben'::uuid);
select lives_ok(format($$ select app.send_message(%L, 'the blocker may write') $$, :'direct_id'),
  'The blocker may still write into the direct conversation.');
select is(
  (select (app.message_json(m) ->> 'senderBlocked')::boolean from app.messages m
   where m.conversation_id = :'shared_id'::uuid and m.content = 'hi all'),
  true, 'The blocker reads the message marked senderBlocked.');
select tests.authenticate_as(:'cat'::uuid);
select is(
  (select (app.message_json(m) ->> 'senderBlocked')::boolean from app.messages m
   where m.conversation_id = :'shared_id'::uuid and m.content = 'hi all'),
  false, 'Everyone else reads it unmarked.');
select tests.clear_authentication();

select is(
  (select array_agg(n.user_id) from app.notifications n
   where n.data ->> 'kind' = 'mention' and n.data ->> 'conversationId' = :'shared_id'),
  array[:'cat'::uuid], 'The mention notified the stranger, not the blocker.');

-- ---------------------------------------------------------------------------------------------
-- Mentions and mutes
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'cat'::uuid);
select throws_ok(format($$ select app.send_message(%L, 'hey', mentions => array[%L::uuid]) $$, :'anns_id', :'ben'),
  'AG422', 'only participants of the conversation can be mentioned', 'Only participants are mentioned.');
select throws_ok(
  format($$ select app.set_conversation_mute(%L, true, null) $$, :'direct_id'),
  'AG404', null, 'A stranger cannot mute a conversation they are not in.');
select tests.authenticate_as(:'ben'::uuid);
select is((app.set_conversation_mute(:'shared_id'::uuid, true, null)) ->> 'muted', 'true',
  'A participant mutes.');
select tests.authenticate_as(:'cat'::uuid);
select is((select count(*)::int from app.conversation_settings), 0, 'Another sees no one else''s mute.');
select lives_ok(format($$ select app.send_message(%L, 'muted mention', mentions => array[%L::uuid]) $$,
                       :'shared_id', :'ben'), 'A mention of someone who muted is sent...');
select tests.clear_authentication();
select is(
  (select count(*)::int from app.notifications n
   where n.user_id = :'ben'::uuid and n.data ->> 'kind' = 'mention'),
  0, '... and notifies nothing.');
insert into app.push_devices (user_id, token, platform) values (:'ben'::uuid, 'bk-ben-device', 'android');
-- Each notification in a statement of its own: the count's snapshot must see its deliveries.
select notification_id as loud from app_private.notify_many(array[:'ben'::uuid], 'MESSAGE', 'loud', 'b',
  jsonb_build_object('conversationId', :'anns_id'::uuid), 'normal', null) \gset
select notification_id as quiet from app_private.notify_many(array[:'ben'::uuid], 'MESSAGE', 'muted', 'b',
  jsonb_build_object('conversationId', :'shared_id'::uuid), 'normal', null) \gset
select is(
  (select count(*)::int from app_private.notification_deliveries d where d.notification_id = :'loud'::uuid),
  1, 'A notification of a conversation not muted is pushed to the device ...');
select is(
  (select count(*)::int from app_private.notification_deliveries d where d.notification_id = :'quiet'::uuid),
  0, '... one of a muted conversation is not ...');
select is((select inbox from app.notifications n where n.id = :'quiet'::uuid), true,
  '... though its inbox row is written.');

select * from finish();
rollback;
