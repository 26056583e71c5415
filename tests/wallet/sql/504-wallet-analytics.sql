/*
 * app.admin_wallet_stats: ADMIN only (checked inside, whoever else calls is refused), aggregates
 * only: wallets, transactions by status and direction, wallets created per interval, confirmed
 * outgoing volume per token per interval (base units as text), zero-filled.
 */
begin;
select plan(8);

select tests.create_user('wstat.admin@example.test', 'ADMIN') as admin \gset
select tests.create_user('wstat.member@example.test', 'MEMBER') as member \gset
select tests.create_wallet(:'member') as wallet \gset
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind, token_address,
  token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, nonce, block_number, gas_limit,
  expires_at, confirmed_at)
select :'wallet', :'member', 'out', 'confirmed', 31337, 'staking', '0x00000000000000000000000000000000000005A5',
  'WSTAT', 'Stat token', 18, tests.wallet_address(:'wallet'), '0x0000000000000000000000000000000000000001',
  1000000000000000000000000 * g, '0x' || lpad(to_hex(g), 64, '0'), 1000 + g, 5, 21000, now(), now() - make_interval(days => g - 1)
from generate_series(1, 2) g;

select tests.authenticate_as(:'member');
select throws_ok(
  $$ select app.admin_wallet_stats('day', now() - interval '3 days', now()) $$,
  '42501', 'only an ADMIN reads platform analytics',
  'A MEMBER cannot read the wallet figures (42501).'
);

select tests.authenticate_as(:'admin');
select throws_ok(
  $$ select app.admin_wallet_stats('hour', now() - interval '3 days', now()) $$,
  'AG400', null,
  'An unknown interval is refused (AG400).'
);
select app.admin_wallet_stats('day', date_trunc('day', now()) - interval '3 days', now() + interval '1 second') as stats \gset
select ok((:'stats'::jsonb -> 'totals' ->> 'wallets')::int >= 1, 'The totals count the wallets.');
select ok((:'stats'::jsonb -> 'transactionsByStatus' ->> 'confirmed')::int >= 2, 'Transactions are counted by status.');
select is(
  (select array_agg(k order by k) from jsonb_object_keys(:'stats'::jsonb -> 'transactionsByStatus') k),
  array['cancelled', 'confirmed', 'expired', 'failed', 'pending', 'submitted'],
  'Every status is present, zero when none.'
);
select is(
  jsonb_array_length(:'stats'::jsonb -> 'walletsCreated'), 4,
  'Wallets created: one point per day of the range, zero-filled.'
);
select is(
  (select v -> 'series' from jsonb_array_elements(:'stats'::jsonb -> 'volume') v where v -> 'token' ->> 'symbol' = 'WSTAT')
    -> -1 ->> 'amount',
  '1000000000000000000000000',
  'Today''s volume of the token, in base units as text.'
);
select is(
  (select v -> 'series' from jsonb_array_elements(:'stats'::jsonb -> 'volume') v where v -> 'token' ->> 'symbol' = 'WSTAT')
    -> -2 ->> 'amount',
  '2000000000000000000000000',
  'Yesterday''s, in its own bucket: numbers too large for JSON numbers stay exact.'
);

select * from finish();
rollback;
