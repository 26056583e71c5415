/*
 * Wallet RLS, persona by persona: the owner reads their own wallet, history, tokens and NFTs and
 * writes none of it; another user, an ADMIN and a VISITOR read nothing of it; anonymous reads
 * nothing at all; every API persona is refused the sealed keys, the nonces and the signed bytes.
 */
begin;
select plan(39);

do $$
begin
  perform tests.create_user('wrls.owner@example.test', 'SUBSCRIBER');
  perform tests.create_user('wrls.other@example.test', 'MEMBER');
  perform tests.create_user('wrls.admin@example.test', 'ADMIN');
  perform tests.create_user('wrls.visitor@example.test', 'VISITOR');
end
$$;
select tests.create_wallet(tests.user_id('wrls.owner@example.test')) as owner_wallet \gset
select tests.create_wallet(tests.user_id('wrls.other@example.test')) as other_wallet \gset

insert into app.chain_tokens (chain_id, address, symbol, name, decimals)
values (31337, '0x00000000000000000000000000000000000000C1', 'CST', 'Custom', 6);
insert into app.wallet_tokens (user_id, chain_id, address)
values (tests.user_id('wrls.owner@example.test'), 31337, '0x00000000000000000000000000000000000000C1');
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
  token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number)
values (:'owner_wallet', tests.user_id('wrls.owner@example.test'), 'in', 'confirmed', 31337, 'native',
  'ETH', 'Ether', 18, '0x0000000000000000000000000000000000000001', tests.wallet_address(:'owner_wallet'),
  42, '0x' || repeat('ab', 32), -1, 7)
returning id as owner_tx \gset
insert into app.wallet_nfts (wallet_id, user_id, chain_id, contract, token_id, standard, balance)
values (:'owner_wallet', tests.user_id('wrls.owner@example.test'), 31337,
  '0x00000000000000000000000000000000000000D1', 1, 'ERC721', 1);

-- ---------------------------------------------------------------------------------------------
-- Owner
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('wrls.owner@example.test'));
select results_eq($$ select id from app.wallets $$, format($$ values (%L::uuid) $$, :'owner_wallet'),
  'The owner sees their own wallet and no other.');
select results_eq($$ select id from app.wallet_transactions $$, format($$ values (%L::uuid) $$, :'owner_tx'),
  'The owner sees their own transactions.');
select is((select count(*)::int from app.wallet_tokens), 1, 'The owner sees their own token list.');
select is((select count(*)::int from app.wallet_nfts), 1, 'The owner sees their own NFTs.');
select ok((select count(*) from app.chain_tokens) >= 1, 'A SUBSCRIBER reads token metadata (public chain data).');
select is((app.wallet_transaction_json(t) ->> 'amount'), '42', 'The owner reads a transaction as the API shows it.')
from app.wallet_transactions t where t.id = :'owner_tx';
select throws_ok(
  format($$ insert into app.wallets (user_id, address) values (auth.uid(), '0x%s') $$, repeat('1', 40)),
  '42501', null, 'The owner cannot insert a wallet (42501).');
select throws_ok(
  format($$ update app.wallets set address = '0x%s' $$, repeat('2', 40)),
  '42501', null, 'The owner cannot change their wallet''s address (42501).');
select throws_ok(
  $$ update app.wallet_transactions set status = 'confirmed' $$,
  '42501', null, 'The owner cannot change a transaction''s status (42501).');
select throws_ok(
  format($$ insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
              token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number)
            values (%L, auth.uid(), 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18, %L, %L, 1000000,
                    '0x%s', -1, 1) $$,
    :'owner_wallet', '0x0000000000000000000000000000000000000001', tests.wallet_address(:'owner_wallet'), repeat('cd', 32)),
  '42501', null, 'The owner cannot write themselves an incoming transfer (42501).');
select throws_ok($$ delete from app.wallet_transactions $$, '42501', null,
  'The owner cannot delete history (42501).');
select throws_ok(
  $$ insert into app.wallet_tokens (user_id, chain_id, address) values (auth.uid(), 31337, '0x00000000000000000000000000000000000000C1') $$,
  '42501', null, 'The owner adds tokens only through the server (42501).');
select throws_ok(
  $$ insert into app.chain_tokens (chain_id, address, symbol, name, decimals) values (31337, '0x00000000000000000000000000000000000000C2', 'FAKE', 'Fake', 18) $$,
  '42501', null, 'Nobody writes token metadata but the server (42501).');
select throws_ok($$ select * from app_private.wallet_keys $$, '42501', null,
  'The owner cannot read even their own sealed key (42501).');
select throws_ok($$ select * from app_private.wallet_nonces $$, '42501', null,
  'The owner cannot read the nonce counters (42501).');
select throws_ok($$ select * from app_private.wallet_signed_transactions $$, '42501', null,
  'The owner cannot read the signed transactions table (42501).');
select throws_ok(format($$ select app_private.allocate_wallet_nonce(%L) $$, :'owner_wallet'), '42501', null,
  'The owner cannot allocate a nonce (42501).');
select throws_ok(
  format($$ select app_private.create_wallet_transfer(auth.uid(), 31337, 'native', null, 'ETH', 'Ether', 18,
           '0x0000000000000000000000000000000000000001', null, 1, 21000, 1, 10000000, 10000000) $$),
  '42501', null, 'The owner cannot create a transfer with balances of their choosing (42501).');
select is(app.wallet_address_of(tests.user_id('wrls.other@example.test')), tests.wallet_address(:'other_wallet'),
  'A SUBSCRIBER can find another active user''s wallet address, to send to them.');

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('wrls.other@example.test'));
select results_eq($$ select id from app.wallets $$, format($$ values (%L::uuid) $$, :'other_wallet'),
  'Another user sees only their own wallet.');
select is_empty($$ select id from app.wallet_transactions $$, 'Another user sees none of the owner''s transactions.');
select is_empty($$ select id from app.wallet_tokens $$, 'Another user sees none of the owner''s tokens.');
select is_empty($$ select 1 from app.wallet_nfts $$, 'Another user sees none of the owner''s NFTs.');
select throws_ok(format($$ update app.wallets set exported_at = now() where id = %L $$, :'owner_wallet'),
  '42501', null, 'Another user cannot change the owner''s wallet (42501).');
select throws_ok($$ select * from app_private.wallet_keys $$, '42501', null,
  'Another user cannot read sealed keys (42501).');

-- ---------------------------------------------------------------------------------------------
-- ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('wrls.admin@example.test'));
select is_empty($$ select id from app.wallets $$, 'An ADMIN reads no one''s wallet through RLS (figures come from app.admin_wallet_stats).');
select is_empty($$ select id from app.wallet_transactions $$, 'An ADMIN reads no one''s transactions.');
select throws_ok($$ select * from app_private.wallet_keys $$, '42501', null,
  'An ADMIN cannot read sealed keys (42501).');
select throws_ok($$ select * from app_private.wallet_signed_transactions $$, '42501', null,
  'An ADMIN cannot read the signed transactions table (42501).');

-- ---------------------------------------------------------------------------------------------
-- VISITOR
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('wrls.visitor@example.test'));
select is_empty($$ select id from app.wallets $$, 'A VISITOR sees no wallet.');
select is_empty($$ select 1 from app.chain_tokens $$, 'A VISITOR does not read token metadata (SUBSCRIBER and above).');
select throws_ok(format($$ select app.wallet_address_of(%L) $$, tests.user_id('wrls.other@example.test')),
  '42501', null, 'A VISITOR cannot look up wallet addresses (42501).');
select throws_ok($$ select * from app_private.wallet_keys $$, '42501', null,
  'A VISITOR cannot read sealed keys (42501).');

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok($$ select * from app.wallets $$, '42501', null, 'Anonymous cannot read wallets (42501).');
select throws_ok($$ select * from app.wallet_transactions $$, '42501', null, 'Anonymous cannot read transactions (42501).');
select throws_ok($$ select * from app.chain_tokens $$, '42501', null, 'Anonymous cannot read token metadata (42501).');
select throws_ok($$ select * from app_private.wallet_keys $$, '42501', null, 'Anonymous cannot read sealed keys (42501).');
select throws_ok(format($$ select app.wallet_address_of(%L) $$, tests.user_id('wrls.other@example.test')),
  '42501', null, 'Anonymous cannot look up wallet addresses (42501).');

-- ---------------------------------------------------------------------------------------------
-- service_role (hosted Supabase's privileged key): still no way to the keys
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();
set local role service_role;
select throws_ok($$ select * from app_private.wallet_keys $$, '42501', null,
  'Even the service role cannot read the sealed keys (42501): only the server''s own connection does.');
reset role;

select * from finish();
rollback;
