/*
 * Idempotency keys for sends (supabase/migrations/..._idempotency.sql):
 * app.claim_idempotency_key returns null for a new key (go ahead), the stored first response for
 * the same key, scope and body hash ({"response": ...}), and {"conflict": true} for the same key
 * with another body or scope; app.store_idempotent_response records the response. Keys belong to
 * their user, expire after 24 hours, and live in app_private, which no user reads.
 */
begin;
select plan(22);

do $$
begin
  perform tests.create_user('idem.alice@example.test', 'SUBSCRIBER');   -- the sender
  perform tests.create_user('idem.bob@example.test', 'SUBSCRIBER');     -- another user
  perform tests.create_user('idem.ada@example.test', 'ADMIN');          -- admin
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Self: claiming, storing, replaying
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('idem.alice@example.test'));

select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-a'),
  null::jsonb,
  'Claiming a new key returns null: the request goes ahead.'
);
select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-a'),
  '{"response": null}'::jsonb,
  'Claiming the key again before a response is stored returns an empty response, not a second go-ahead.'
);
select lives_ok(
  $$ select app.store_idempotent_response('key-1', '{"status": 201, "body": {"id": "m-1"}}') $$,
  'The user stores the first response for their key.'
);
select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-a'),
  '{"response": {"status": 201, "body": {"id": "m-1"}}}'::jsonb,
  'The same key, scope and body hash returns the stored first response.'
);
select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-b'),
  '{"conflict": true}'::jsonb,
  'The same key with another body hash is a conflict.'
);
select is(
  app.claim_idempotency_key('key-1', 'messages.edit', 'hash-a'),
  '{"conflict": true}'::jsonb,
  'The same key in another scope is a conflict.'
);
select is(
  app.claim_idempotency_key('key-2', 'messages.send', 'hash-b'),
  null::jsonb,
  'Another key of the same user is independent and goes ahead.'
);
select throws_ok(
  $$ select app.claim_idempotency_key('', 'messages.send', 'hash-a') $$,
  '23514', null,
  'An empty key is refused (23514).'
);
select throws_ok(
  $$ select app.claim_idempotency_key(repeat('k', 256), 'messages.send', 'hash-a') $$,
  '23514', null,
  'A key longer than 255 characters is refused (23514).'
);
select throws_ok(
  $$ select * from app_private.idempotency_keys $$,
  '42501', 'permission denied for schema app_private',
  'A user cannot read app_private.idempotency_keys, not even their own keys.'
);
select throws_ok(
  $$ update app_private.idempotency_keys set response = '{"forged": true}' $$,
  '42501', 'permission denied for schema app_private',
  'A user cannot write app_private.idempotency_keys directly.'
);

-- ---------------------------------------------------------------------------------------------
-- Another user: the same key name is theirs alone
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('idem.bob@example.test'));

select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-z'),
  null::jsonb,
  'Another user''s key with the same name is independent: it goes ahead, with no conflict and no replay of the first user''s response.'
);
select lives_ok(
  $$ select app.store_idempotent_response('key-1', '{"status": 201, "body": {"id": "bob"}}') $$,
  'The other user stores a response for their own key of that name.'
);
select is(
  app.claim_idempotency_key('key-2', 'messages.send', 'hash-b'),
  null::jsonb,
  'Another user cannot replay (or even detect) the first user''s key-2.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('idem.ada@example.test'));

select throws_ok(
  $$ select * from app_private.idempotency_keys $$,
  '42501', 'permission denied for schema app_private',
  'Not even an ADMIN reads app_private.idempotency_keys.'
);

-- ---------------------------------------------------------------------------------------------
-- Self again: the other user's store did not touch this user's key; keys expire after 24 h
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('idem.alice@example.test'));

select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-a'),
  '{"response": {"status": 201, "body": {"id": "m-1"}}}'::jsonb,
  'The first user''s stored response is unchanged by the other user''s key of the same name.'
);

select tests.clear_authentication();
update app_private.idempotency_keys set created_at = now() - interval '25 hours'
where user_id = tests.user_id('idem.alice@example.test') and key = 'key-1';
select tests.authenticate_as(tests.user_id('idem.alice@example.test'));

select is(
  app.claim_idempotency_key('key-1', 'messages.send', 'hash-b'),
  null::jsonb,
  'A key older than 24 hours has expired: claiming it again goes ahead, even with another body.'
);

select tests.clear_authentication();
select results_eq(
  $$ select u.email, k.key, k.request_hash, k.response ->> 'body' from app_private.idempotency_keys k
     join app.users u on u.id = k.user_id where u.email like 'idem.%' order by u.email, k.key $$,
  $$ values ('idem.alice@example.test', 'key-1', 'hash-b', null),
            ('idem.alice@example.test', 'key-2', 'hash-b', null),
            ('idem.bob@example.test', 'key-1', 'hash-z', '{"id": "bob"}'),
            ('idem.bob@example.test', 'key-2', 'hash-b', null) $$,
  'The stored keys are per user, the expired key was replaced, and each response belongs to its own user.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select app.claim_idempotency_key('key-1', 'messages.send', 'hash-a') $$,
  '42501', 'permission denied for function claim_idempotency_key',
  'An anonymous visitor cannot execute app.claim_idempotency_key.'
);
select throws_ok(
  $$ select app.store_idempotent_response('key-1', '{}') $$,
  '42501', 'permission denied for function store_idempotent_response',
  'An anonymous visitor cannot execute app.store_idempotent_response.'
);

-- ---------------------------------------------------------------------------------------------
-- Catalog
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select col_is_pk('app_private', 'idempotency_keys', array['user_id', 'key'],
  'Idempotency keys are keyed by user and key: each user has their own key space.');
select ok(
  has_function_privilege('authenticated', 'app.claim_idempotency_key(text, text, text)', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.store_idempotent_response(text, jsonb)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.claim_idempotency_key(text, text, text)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.store_idempotent_response(text, jsonb)', 'EXECUTE'),
  'The idempotency functions are executable by authenticated and not by anon.'
);

select * from finish();
rollback;
