/*
 * The wallet's schema (supabase/migrations/20261124130000_wallet.sql): its tables with RLS and
 * their why; the key material in app_private with no privilege for any API role; no wallet
 * function in app_private executable by an API role; only the read helpers granted; the
 * constraints that keep a transaction's shape and a wallet's nonces unique.
 */
begin;
select plan(28);

select has_table('app', 'wallets', 'The table app.wallets exists.');
select has_table('app', 'wallet_transactions', 'The table app.wallet_transactions exists.');
select has_table('app', 'wallet_tokens', 'The table app.wallet_tokens exists.');
select has_table('app', 'chain_tokens', 'The table app.chain_tokens exists.');
select has_table('app', 'wallet_nfts', 'The table app.wallet_nfts exists.');
select has_table('app_private', 'wallet_keys', 'The sealed keys live in app_private.wallet_keys.');
select has_table('app_private', 'wallet_nonces', 'The nonce counters live in app_private.wallet_nonces.');
select has_table('app_private', 'wallet_signed_transactions', 'The signed bytes live in app_private.wallet_signed_transactions.');
select has_table('app_private', 'chain_cursors', 'The follower''s cursor lives in app_private.chain_cursors.');
select has_table('app_private', 'chain_blocks', 'The block hashes live in app_private.chain_blocks.');

select is_empty(
  $$
    select c.relname from pg_class c
    where c.relnamespace in ('app'::regnamespace, 'app_private'::regnamespace) and c.relkind = 'r'
      and c.relname in ('wallets', 'wallet_transactions', 'wallet_tokens', 'chain_tokens', 'wallet_nfts',
                        'wallet_keys', 'wallet_nonces', 'wallet_signed_transactions', 'chain_cursors',
                        'chain_blocks', 'chain_heads', 'nft_transfers', 'nft_tokens', 'nft_collections')
      and (not c.relrowsecurity or obj_description(c.oid, 'pg_class') is null)
  $$,
  'Every wallet table has RLS on and says why it exists.'
);
select is(
  (select count(*)::int from pg_class c
   where c.relnamespace in ('app'::regnamespace, 'app_private'::regnamespace) and c.relkind = 'r'
     and c.relname in ('wallets', 'wallet_transactions', 'wallet_tokens', 'chain_tokens', 'wallet_nfts',
                       'wallet_keys', 'wallet_nonces', 'wallet_signed_transactions', 'chain_cursors',
                       'chain_blocks', 'chain_heads', 'nft_transfers', 'nft_tokens', 'nft_collections')),
  14,
  'The fourteen wallet tables are all there.'
);

select is_empty(
  $$
    select format('%s has %s on %s', r.role, p.privilege, t.name)
    from (values ('anon'), ('authenticated'), ('service_role')) as r (role)
    cross join (values ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) as p (privilege)
    cross join (values ('app_private.wallet_keys'), ('app_private.wallet_nonces'),
                       ('app_private.wallet_signed_transactions'), ('app_private.chain_cursors'),
                       ('app_private.chain_blocks'), ('app_private.chain_heads'),
                       ('app_private.nft_transfers'), ('app_private.nft_tokens'),
                       ('app_private.nft_collections')) as t (name)
    where has_table_privilege(r.role, t.name, p.privilege)
       or (p.privilege in ('SELECT', 'INSERT', 'UPDATE', 'REFERENCES')
           and has_any_column_privilege(r.role, t.name, p.privilege))
  $$,
  'anon, authenticated and service_role hold no privilege on the wallet''s app_private tables, the sealed keys included.'
);
select is_empty(
  $$ select policyname from pg_policies where schemaname = 'app_private'
     and tablename in ('wallet_keys', 'wallet_nonces', 'wallet_signed_transactions') $$,
  'The secrets tables have no policies: only the server''s own connection reaches them.'
);
select is_empty(
  $$
    select format('%s may execute %s', r.role, p.oid::regprocedure)
    from pg_proc p cross join (values ('anon'), ('authenticated'), ('service_role')) as r (role)
    where p.pronamespace = 'app_private'::regnamespace
      and p.proname in ('insert_wallet', 'allocate_wallet_nonce', 'sync_wallet_nonce', 'create_wallet_transfer',
                        'submit_wallet_transaction', 'resign_wallet_transaction', 'finish_wallet_transaction', 'expire_wallet_transfers',
                        'note_chain_head', 'refresh_wallet_nfts', 'rollback_chain_index',
                        'wallet_transaction_events', 'format_token_amount', 'announce_wallet',
                        'touch_wallet_transaction')
      and has_function_privilege(r.role, p.oid, 'EXECUTE')
  $$,
  'No API role may execute a wallet server-path function.'
);
select is_empty(
  $$
    select format('anon may execute %s', p.oid::regprocedure) from pg_proc p
    where p.pronamespace = 'app'::regnamespace
      and p.proname in ('wallet_chain_head', 'wallet_transaction_json', 'wallet_address_of', 'admin_wallet_stats')
      and has_function_privilege('anon', p.oid, 'EXECUTE')
  $$,
  'anon executes none of the wallet''s app functions.'
);
select ok(
  has_function_privilege('authenticated', 'app.wallet_transaction_json(app.wallet_transactions)', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.wallet_address_of(uuid)', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.admin_wallet_stats(text, timestamptz, timestamptz)', 'EXECUTE'),
  'authenticated executes the read helpers (each checks its caller inside).'
);
select is(
  (select count(*)::int from pg_proc p
   where p.pronamespace in ('app'::regnamespace, 'app_private'::regnamespace)
     and p.proname in ('insert_wallet', 'allocate_wallet_nonce', 'sync_wallet_nonce', 'create_wallet_transfer',
                       'submit_wallet_transaction', 'resign_wallet_transaction', 'finish_wallet_transaction', 'expire_wallet_transfers',
                       'note_chain_head', 'refresh_wallet_nfts', 'rollback_chain_index',
                       'wallet_transaction_events', 'format_token_amount', 'announce_wallet',
                       'touch_wallet_transaction', 'wallet_chain_head', 'wallet_transaction_json',
                       'wallet_address_of', 'admin_wallet_stats')
     and obj_description(p.oid, 'pg_proc') is not null),
  19,
  'Every wallet function carries its why as a comment.'
);
select is(
  (select count(*)::int from information_schema.column_privileges
   where grantee = 'authenticated' and table_schema = 'app'
     and table_name in ('wallets', 'wallet_transactions', 'wallet_tokens', 'chain_tokens', 'wallet_nfts')
     and privilege_type in ('INSERT', 'UPDATE')),
  0,
  'authenticated may insert or update no column of a wallet table: every write is a server path.'
);

select col_is_unique('app', 'wallets', 'user_id', 'A user has at most one wallet.');
select col_is_unique('app', 'wallets', 'address', 'A wallet address belongs to one wallet.');
select has_index('app', 'wallet_transactions', 'wallet_transactions_nonce_key',
  'A nonce is used once per wallet (unique index).');
select has_index('app', 'wallet_transactions', 'wallet_transactions_incoming_key',
  'An incoming log is recorded once per wallet (unique index).');
select fk_ok('app_private', 'wallet_keys', 'wallet_id', 'app', 'wallets', 'id',
  'A sealed key belongs to its wallet (and goes with it).');

-- Shapes the constraints keep.
select tests.create_user('wallet.schema@example.test', 'MEMBER') as schema_user \gset
select tests.create_wallet(:'schema_user') as schema_wallet \gset
select throws_ok(
  format($$ insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
              token_symbol, token_name, token_decimals, from_address, to_address, amount, expires_at, gas_limit)
            values (%L, %L, 'out', 'pending', 31337, 'native', 'ETH', 'Ether', 18, %L,
                    '0x0000000000000000000000000000000000000001', 0, now(), 21000) $$,
    :'schema_wallet', :'schema_user', tests.wallet_address(:'schema_wallet')),
  '23514', null,
  'A transaction moves a positive amount (23514).'
);
select throws_ok(
  format($$ insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
              token_symbol, token_name, token_decimals, from_address, to_address, amount, expires_at, gas_limit)
            values (%L, %L, 'out', 'submitted', 31337, 'native', 'ETH', 'Ether', 18, %L,
                    '0x0000000000000000000000000000000000000001', 5, now(), 21000) $$,
    :'schema_wallet', :'schema_user', tests.wallet_address(:'schema_wallet')),
  '23514', null,
  'A submitted transfer has its hash and nonce (23514).'
);
select throws_ok(
  format($$ insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
              token_address, token_symbol, token_name, token_decimals, from_address, to_address, amount,
              expires_at, gas_limit)
            values (%L, %L, 'out', 'pending', 31337, 'native', '0x0000000000000000000000000000000000000002',
                    'ETH', 'Ether', 18, %L, '0x0000000000000000000000000000000000000001', 5, now(), 21000) $$,
    :'schema_wallet', :'schema_user', tests.wallet_address(:'schema_wallet')),
  '23514', null,
  'Native currency has no token address, and a token has one (23514).'
);
select is(
  (select wallet_address from app.users where id = :'schema_user'),
  tests.wallet_address(:'schema_wallet'),
  'Creating a wallet sets the user''s wallet_address.'
);

select * from finish();
rollback;
