/*
 * The sign-in migration's tables and columns: the OAuth flows, wallet nonces and the account
 * registries are server-only (RLS on, no policies, no privileges: every persona is refused), a
 * user's address may be null, a session records when its sign-in happened, and the pruning covers
 * the new state.
 */
begin;
select plan(24);

select has_table('app_private', 'oauth_flows', 'app_private.oauth_flows exists.');
select has_table('app_private', 'siwe_nonces', 'app_private.siwe_nonces exists.');
select has_table('app', 'status_changes', 'app.status_changes exists.');
select has_table('app_private', 'account_export_parts', 'app_private.account_export_parts exists.');
select has_table('app_private', 'account_erasure_steps', 'app_private.account_erasure_steps exists.');
select col_is_null('app', 'users', 'email', 'An account may have no address (a wallet''s).');
select col_not_null('app', 'sessions', 'authenticated_at', 'Every session says when its sign-in happened.');
select col_is_unique('app_private', 'oauth_flows', 'state_hash', 'A state''s hash names one flow.');
select col_is_unique('app_private', 'oauth_flows', 'exchange_code_hash', 'An exchange code''s hash names one flow.');

do $$
begin
  perform tests.create_user('signin.state.user@example.test');
  perform tests.create_user('signin.state.admin@example.test', 'ADMIN');
  insert into app_private.oauth_flows (provider, state_hash, nonce_hash, code_verifier, binding_hash, expires_at)
  values ('google', 'state-hash-400', 'nonce-hash-400', repeat('v', 43), 'binding-hash-400', now() + interval '10 minutes');
  insert into app_private.siwe_nonces (nonce_hash, expires_at) values ('nonce-400', now() + interval '10 minutes');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Every persona is refused the server-only tables
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok($$ select * from app_private.oauth_flows $$, '42501', null,
  'An anonymous visitor cannot read OAuth flows.');
select throws_ok($$ select * from app_private.siwe_nonces $$, '42501', null,
  'An anonymous visitor cannot read wallet nonces.');

select tests.authenticate_as(tests.user_id('signin.state.user@example.test'));
select throws_ok($$ select * from app_private.oauth_flows $$, '42501', null,
  'A signed-in user cannot read OAuth flows.');
select throws_ok($$ update app_private.siwe_nonces set used_at = null $$, '42501', null,
  'A signed-in user cannot revive a spent nonce.');
select throws_ok($$ insert into app_private.siwe_nonces (nonce_hash, expires_at) values ('forged', now() + interval '1 day') $$,
  '42501', null, 'A signed-in user cannot plant a nonce.');
select throws_ok($$ select * from app_private.account_export_parts $$, '42501', null,
  'A signed-in user cannot read the export registry.');
select throws_ok($$ delete from app_private.account_erasure_steps $$, '42501', null,
  'A signed-in user cannot change the erasure steps.');

select tests.authenticate_as(tests.user_id('signin.state.admin@example.test'));
select throws_ok($$ select * from app_private.oauth_flows $$, '42501', null,
  'Not even an ADMIN reads OAuth flows (they hold PKCE verifiers).');
select throws_ok($$ select * from app_private.siwe_nonces $$, '42501', null,
  'Not even an ADMIN reads wallet nonces.');
select tests.clear_authentication();

select is_empty(
  $$ select policyname from pg_policies
     where schemaname = 'app_private'
       and tablename in ('oauth_flows', 'siwe_nonces', 'account_export_parts', 'account_erasure_steps') $$,
  'The server-only tables have no policies.'
);

-- ---------------------------------------------------------------------------------------------
-- Defaults and pruning
-- ---------------------------------------------------------------------------------------------

with s as (
  insert into app.sessions (user_id, provider, expires_at)
  values (tests.user_id('signin.state.user@example.test'), 'email', now() + interval '1 day')
  returning authenticated_at
)
select ok(authenticated_at = now(), 'A new session''s sign-in time is now unless the server says otherwise.')
from s;

update app_private.oauth_flows set expires_at = now() - interval '2 days' where state_hash = 'state-hash-400';
update app_private.siwe_nonces set expires_at = now() - interval '2 days' where nonce_hash = 'nonce-400';
insert into app_private.oauth_flows (provider, state_hash, nonce_hash, binding_hash, expires_at)
values ('apple', 'state-hash-400-live', 'n', 'b', now() + interval '10 minutes');
select app_private.prune_auth_state();
select is_empty($$ select 1 from app_private.oauth_flows where state_hash = 'state-hash-400' $$,
  'Flows that ended more than a day ago are pruned.');
select is_empty($$ select 1 from app_private.siwe_nonces where nonce_hash = 'nonce-400' $$,
  'Nonces that expired more than a day ago are pruned.');
select isnt_empty($$ select 1 from app_private.oauth_flows where state_hash = 'state-hash-400-live' $$,
  'Live flows are kept.');

select throws_ok(
  $$ insert into app_private.oauth_flows (provider, state_hash, nonce_hash, expires_at)
     values ('google', 'unbound', 'n', now() + interval '10 minutes') $$,
  '23514', null,
  'A flow is bound to a browser or to an integrator''s challenge, never to nobody.'
);

select * from finish();
rollback;
