/*
 * Reactions in batches (supabase/migrations/20261201010000_messages_reaction_batches.sql):
 * app_private.set_reactions_as applies many callers' reactions to one message in one transaction,
 * each as its caller with app.set_reaction's rules, in a block of its own: a failing item (404 for
 * a non-participant, 422 on a tombstone or for the 21st distinct emoji) is rolled back alone and
 * reported for that item only, the others stand. One message.reactions event per batch that
 * changed anything, with the counts after it; every item's `mine` is its caller's emoji after it.
 * Only the pool's role calls it.
 */
begin;
select plan(16);

do $$
begin
  perform tests.create_user('rb.ann@example.test', 'SUBSCRIBER');   -- participant
  perform tests.create_user('rb.ben@example.test', 'SUBSCRIBER');   -- participant
  perform tests.create_user('rb.cat@example.test', 'SUBSCRIBER');   -- participant
  perform tests.create_user('rb.sam@example.test', 'SUBSCRIBER');   -- not a participant
end
$$;

select tests.create_conversation(tests.user_id('rb.ann@example.test'), 'group',
  array[tests.user_id('rb.ben@example.test'), tests.user_id('rb.cat@example.test')], 'Batches')
  as group_id \gset

select tests.authenticate_as(tests.user_id('rb.ann@example.test'));
select (app.send_message(:'group_id'::uuid, 'hot') ->> 'id') as hot \gset
select (app.send_message(:'group_id'::uuid, 'limit') ->> 'id') as full_one \gset
select (app.send_message(:'group_id'::uuid, 'gone') ->> 'id') as gone \gset
select app.delete_message(:'gone'::uuid);
select tests.clear_authentication();

-- One item of a batch: the caller's claims (as the API sends them), the emoji, add or remove.
create function pg_temp.item(email text, emoji text, present boolean) returns jsonb
language sql as $$
  select jsonb_build_object(
    'claims', jsonb_build_object('sub', tests.user_id(email), 'role', 'authenticated')::text,
    'emoji', emoji, 'present', present)
$$;

create function pg_temp.reaction_events() returns int
language sql as $$
  select count(*)::int from app.events where event = 'message.reactions'
$$;

-- ---------------------------------------------------------------------------------------------
-- A batch with a non-participant among participants
-- ---------------------------------------------------------------------------------------------

select app_private.set_reactions_as(:'hot'::uuid, jsonb_build_array(
  pg_temp.item('rb.ann@example.test', '👍', true),
  pg_temp.item('rb.sam@example.test', '👍', true),
  pg_temp.item('rb.ben@example.test', '👍', true),
  pg_temp.item('rb.ben@example.test', '🔥', true)
)) as result \gset

select is(
  :'result'::jsonb -> 'reactions',
  '[{"emoji": "👍", "count": 2}, {"emoji": "🔥", "count": 1}]'::jsonb,
  'The batch answers the counts after it, without `me`: the non-participant''s item counts for nothing.'
);
select is(
  :'result'::jsonb -> 'items' -> 1 -> 'error' ->> 'code', 'AG404',
  'The non-participant''s item alone fails, with AG404.'
);
select ok(
  (:'result'::jsonb -> 'items' -> 0) = '{"mine": ["👍"]}'::jsonb
  and (select array_agg(e order by e) from jsonb_array_elements_text(:'result'::jsonb -> 'items' -> 2 -> 'mine') e)
    = array['👍', '🔥']
  and (:'result'::jsonb -> 'items' -> 2) = (:'result'::jsonb -> 'items' -> 3),
  'Every other item answers its caller''s own emoji after the batch.'
);
select is(pg_temp.reaction_events(), 1, 'One event for the whole batch.');
select is(
  (select payload from app.events where event = 'message.reactions' order by xid desc, id desc limit 1),
  jsonb_build_object('messageId', :'hot', 'reactions', :'result'::jsonb -> 'reactions'),
  'The event carries the counts after the batch.'
);
select is(
  current_setting('request.jwt.claims', true), '',
  'No caller''s claims are left behind after the batch.'
);

-- ---------------------------------------------------------------------------------------------
-- Idempotent both ways; a batch that changes nothing emits nothing
-- ---------------------------------------------------------------------------------------------

select is(
  app_private.set_reactions_as(:'hot'::uuid, jsonb_build_array(
    pg_temp.item('rb.ann@example.test', '👍', true),
    pg_temp.item('rb.cat@example.test', '😂', false)
  )),
  '{"reactions": [{"emoji": "👍", "count": 2}, {"emoji": "🔥", "count": 1}], "items": [{"mine": ["👍"]}, {"mine": []}]}'::jsonb,
  'Adding again and removing what was never added change nothing and fail nothing.'
);
select is(pg_temp.reaction_events(), 1, 'A batch that changed nothing emits no event.');

-- Mixed adds and removals in one batch.
select is(
  app_private.set_reactions_as(:'hot'::uuid, jsonb_build_array(
    pg_temp.item('rb.ann@example.test', '👍', false),
    pg_temp.item('rb.ben@example.test', '🔥', false),
    pg_temp.item('rb.cat@example.test', '👍', true)
  )) -> 'reactions',
  '[{"emoji": "👍", "count": 2}]'::jsonb,
  'Adds and removals of one batch all apply.'
);
select is(pg_temp.reaction_events(), 2, 'And emit one event.');

-- ---------------------------------------------------------------------------------------------
-- The tombstone: adding fails for that caller, removing is answered with no reactions
-- ---------------------------------------------------------------------------------------------

select app_private.set_reactions_as(:'gone'::uuid, jsonb_build_array(
  pg_temp.item('rb.ann@example.test', '👍', true),
  pg_temp.item('rb.ben@example.test', '👍', false)
)) as result \gset

select ok(
  :'result'::jsonb -> 'items' -> 0 -> 'error' ->> 'code' = 'AG422'
  and :'result'::jsonb -> 'items' -> 1 = '{"mine": []}'::jsonb
  and :'result'::jsonb -> 'reactions' = '[]'::jsonb,
  'On a tombstone an add fails with AG422 and a removal answers no reactions.'
);

-- ---------------------------------------------------------------------------------------------
-- The 21st distinct emoji fails for its caller only
-- ---------------------------------------------------------------------------------------------

select app_private.set_reactions_as(:'full_one'::uuid, (
  select jsonb_agg(pg_temp.item('rb.ann@example.test', 'e' || n, true)) from generate_series(1, 19) n
)) -> 'reactions' is not null as filled \gset

select app_private.set_reactions_as(:'full_one'::uuid, jsonb_build_array(
  pg_temp.item('rb.ben@example.test', 'e20', true),
  pg_temp.item('rb.cat@example.test', 'e21', true),
  pg_temp.item('rb.cat@example.test', 'e1', true)
)) as result \gset

select is(
  jsonb_array_length(:'result'::jsonb -> 'reactions'), 20,
  'The 20th distinct emoji is taken, the 21st is not.'
);
select is(
  :'result'::jsonb -> 'items' -> 1 -> 'error',
  '{"code": "AG422", "message": "a message has at most 20 different reactions", "hint": null, "detail": null}'::jsonb,
  'The 21st fails with AG422 and the message for its caller.'
);
select ok(
  :'result'::jsonb -> 'items' -> 0 = '{"mine": ["e20"]}'::jsonb
  and :'result'::jsonb -> 'items' -> 2 = '{"mine": ["e1"]}'::jsonb,
  'The items around it stand (an existing emoji is still taken after it).'
);
select is(
  (select count(*)::int from app.message_reactions where message_id = :'full_one'::uuid and emoji = 'e21'),
  0,
  'The failing item left no row.'
);

-- ---------------------------------------------------------------------------------------------
-- Only the pool's role
-- ---------------------------------------------------------------------------------------------

select ok(
  not has_function_privilege('anon', 'app_private.set_reactions_as(uuid, jsonb)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.set_reactions_as(uuid, jsonb)', 'EXECUTE'),
  'No API role calls app_private.set_reactions_as: it trusts the claims it is given.'
);

select * from finish();
rollback;
