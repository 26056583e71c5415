/*
 * The wallet in the account export (app_private.account_export_wallet, a registered part, and
 * its transactions, app_private.account_export_wallet_transactions_rows): the wallet's public
 * data, the ERC-20s added, transactions and NFTs, no key that looks like a secret and never key
 * material; a user without a wallet exports null.
 */
begin;
select plan(7);

select tests.create_user('wacct.owner@example.test', 'MEMBER') as owner \gset
select tests.create_user('wacct.none@example.test', 'MEMBER') as nobody \gset
select tests.create_wallet(:'owner') as wallet \gset
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind, token_symbol,
  token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number)
values (:'wallet', :'owner', 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
  '0x0000000000000000000000000000000000000001', tests.wallet_address(:'wallet'), 77, '0x' || repeat('7a', 32), -1, 3);

select is(
  (select function_name::text from app_private.account_export_parts where part = 'wallet'),
  'app_private.account_export_wallet(uuid)',
  'The wallet part is registered.'
);
select is(app_private.account_export_wallet(:'owner') ->> 'address', tests.wallet_address(:'wallet'),
  'The export names the wallet''s address.');
select is(
  (app_private.account_export(:'owner') -> 'wallet' -> 'transactions' -> 0 ->> 'amount'), '77',
  'The export holds the transactions as the API shows them (the registry''s rows_key: streamed, or built in by the composer).'
);
select ok(
  app_private.account_export_wallet(:'owner')::text not like '%' || repeat('11', 60) || '%'
  and app_private.account_export_wallet(:'owner')::text not like '%' || repeat('00', 60) || '%'
  and app_private.account_export_wallet(:'owner')::text not like '%0123456789abcdef%',
  'It holds no key material: neither sealed key, nor data key, nor the master key''s id.'
);
select is(app_private.account_export_wallet(:'nobody'), null, 'A user without a wallet exports null.');
select is_empty(
  format($$ select k from jsonb_path_query(app_private.account_export(%L) -> 'wallet', 'strict $.**') v,
              jsonb_object_keys(v) k
            where jsonb_typeof(v) = 'object'
              and k ~* '(token|hash|secret|password|csrf|refresh|verifier|nonce|private)' $$, :'owner'),
  'No key of the part looks like a secret (the export''s rule): the token is `asset`, the hash `txid`.'
);
select is(app_private.account_export(:'owner') -> 'wallet' ->> 'address', tests.wallet_address(:'wallet'),
  'The account export carries the part under `wallet`.');

select * from finish();
rollback;
