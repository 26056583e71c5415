/*
 * app.wallet_transaction_json names the other side (app.wallet_counterparty) and the most a
 * transfer's gas can cost: a transfer to another person's wallet names them (their profile name,
 * whatever the letter case of the address), an incoming one from another person too, a mint is
 * "mint", an address outside the platform and a suspended person's wallet stay addresses. The
 * owner reads it through RLS without any right to the other wallet's row; another user still
 * reads neither the transaction nor the counterparty's wallet.
 */
begin;
select plan(9);

do $$
begin
  perform tests.create_user('wcp.owner@example.test', 'SUBSCRIBER');
  perform tests.create_user('wcp.friend@example.test', 'MEMBER');
  perform tests.create_user('wcp.gone@example.test', 'MEMBER');
  perform tests.create_user('wcp.other@example.test', 'MEMBER');
end
$$;
select tests.user_id('wcp.owner@example.test') as owner \gset
select tests.user_id('wcp.friend@example.test') as friend \gset
select tests.user_id('wcp.gone@example.test') as gone \gset
update app.users set name = 'Friendly Fran' where id = :'friend';
select tests.create_wallet(:'owner') as wallet \gset
select tests.create_wallet(:'friend') as friend_wallet \gset
select tests.create_wallet(:'gone') as gone_wallet \gset
select tests.wallet_address(:'friend_wallet') as friend_address \gset
select tests.wallet_address(:'gone_wallet') as gone_address \gset

select (app_private.create_wallet_transfer(:'owner', 31337, 'native', null, 'ETH', 'Ether', 18,
  '0x' || upper(substr(:'friend_address', 3)), null, 5, 21000, 10, 0, 1000000)).id as to_friend \gset
select (app_private.create_wallet_transfer(:'owner', 31337, 'native', null, 'ETH', 'Ether', 18,
  '0x00000000000000000000000000000000000000B2', null, 5, 21000, 10, 0, 1000000)).id as outside \gset
select (app_private.create_wallet_transfer(:'owner', 31337, 'native', null, 'ETH', 'Ether', 18,
  :'gone_address', null, 5, 21000, 10, 0, 1000000)).id as to_gone \gset
update app.users set status = 'suspended' where id = :'gone';
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
  token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number)
values
  (:'wallet', :'owner', 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
   '0x0000000000000000000000000000000000000000', tests.wallet_address(:'wallet'), 42,
   '0x' || repeat('ab', 32), 0, 7),
  (:'wallet', :'owner', 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
   :'friend_address', tests.wallet_address(:'wallet'), 43, '0x' || repeat('ac', 32), 1, 8);

select tests.authenticate_as(:'owner');
select is(
  (select app.wallet_transaction_json(t) -> 'counterparty' from app.wallet_transactions t where t.id = :'to_friend'),
  jsonb_build_object('type', 'user', 'userId', :'friend'::uuid, 'name', 'Friendly Fran'),
  'A transfer to another person''s wallet (its address in upper case) names them.');
select is(
  (select app.wallet_transaction_json(t) ->> 'maxFee' from app.wallet_transactions t where t.id = :'to_friend'),
  '210000', 'maxFee is the gas limit times the max fee per gas (21000 × 10).');
select is(
  (select app.wallet_transaction_json(t) -> 'counterparty' from app.wallet_transactions t
    where t.direction = 'in' and t.from_address = :'friend_address'),
  jsonb_build_object('type', 'user', 'userId', :'friend'::uuid, 'name', 'Friendly Fran'),
  'An incoming transfer from another person names them.');
select is(
  (select app.wallet_transaction_json(t) -> 'counterparty' from app.wallet_transactions t
    where t.direction = 'in' and t.from_address = '0x0000000000000000000000000000000000000000'),
  '{"type": "mint"}'::jsonb, 'Tokens from the zero address are a mint.');
select is(
  (select app.wallet_transaction_json(t) -> 'counterparty' from app.wallet_transactions t where t.id = :'outside'),
  'null'::jsonb, 'An address outside the platform names nobody.');
select is(
  (select app.wallet_transaction_json(t) -> 'counterparty' from app.wallet_transactions t where t.id = :'to_gone'),
  'null'::jsonb, 'A suspended person''s wallet stays an address.');
select is(
  (select app.wallet_transaction_json(t) -> 'maxFee' from app.wallet_transactions t
    where t.direction = 'in' and t.from_address = :'friend_address'),
  'null'::jsonb, 'An incoming transfer has no maxFee.');
select is((select count(*)::int from app.wallets where user_id = :'friend'), 0,
  'The owner still cannot read the other person''s wallet row.');
select tests.authenticate_as(tests.user_id('wcp.other@example.test'));
select is((select count(*)::int from app.wallet_transactions where user_id = :'owner'), 0,
  'Another user reads none of the owner''s transactions, so none of their counterparties.');
select tests.clear_authentication();

select * from finish();
rollback;
