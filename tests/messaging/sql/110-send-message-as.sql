/*
 * app_private.send_message_as (supabase/migrations/..._messages.sql):
 * the API's one-statement send. It takes the claims it is given, so no API role may call it; and
 * the send inside runs as `authenticated` with those claims, under RLS, exactly as
 * app.send_message does in a transaction of its own.
 */
begin;
select plan(7);

do $$
begin
  perform tests.create_user('sa.ann@example.test', 'SUBSCRIBER');
  perform tests.create_user('sa.ben@example.test', 'SUBSCRIBER');
  perform tests.create_user('sa.sam@example.test', 'SUBSCRIBER');   -- stranger
end
$$;

select tests.create_conversation(tests.user_id('sa.ann@example.test'), 'direct',
  array[tests.user_id('sa.ben@example.test')]) as conversation_id \gset
select json_build_object('sub', tests.user_id('sa.ann@example.test'), 'role', 'authenticated')::text
  as ann_claims \gset
select json_build_object('sub', tests.user_id('sa.sam@example.test'), 'role', 'authenticated')::text
  as sam_claims \gset

select ok(
  not has_function_privilege('anon', 'app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text, uuid, uuid[])', 'execute')
  and not has_function_privilege('authenticated', 'app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text, uuid, uuid[])', 'execute')
  and not has_function_privilege('service_role', 'app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text, uuid, uuid[])', 'execute'),
  'No API role may call app_private.send_message_as (it trusts the claims it is given).'
);

select tests.authenticate_as(tests.user_id('sa.ann@example.test'));
select throws_ok(
  format($$ select app_private.send_message_as(%L, %L::uuid, 'hi', null, '{}', null, null, null) $$,
         :'ann_claims', :'conversation_id'),
  '42501', null,
  'A signed-in user cannot call it, not even with their own claims.'
);
select tests.clear_authentication();

select is(
  (app_private.send_message_as(:'ann_claims', :'conversation_id'::uuid, 'hello', null, '{}', null, null, null)) ->> 'senderId',
  tests.user_id('sa.ann@example.test')::text,
  'The API role sends as the user its claims name.'
);
select is(current_user::text, 'authenticated',
  'For the rest of that transaction the role is authenticated (set_config(..., true)).');
reset role;
select is(current_user::text, 'postgres', 'And it goes back with the transaction (here: reset).');

select throws_ok(
  format($$ select app_private.send_message_as(%L, %L::uuid, 'let me in', null, '{}', null, null, null) $$,
         :'sam_claims', :'conversation_id'),
  'AG404', 'conversation not found',
  'A stranger''s claims meet RLS as in app.send_message: 404.'
);
reset role;

select is(
  (select count(*)::int from app.messages where conversation_id = :'conversation_id'::uuid),
  1,
  'Only the participant''s message was written.'
);

select * from finish();
rollback;
