/*
 * The transfer functions the server paths call: the funds check against the chain balances less
 * what is in flight (amounts per token, gas in native currency), expiry after
 * wallet.pendingTtlSeconds, nonces taken in order and given back by a rollback, the submit step
 * (signed bytes stored, broadcast queued once), signing again after its nonce was used outside
 * the platform (only bytes no node accepted), the finish step (once), expiry of stale pending
 * transfers, and an event and a WALLET notification per status change.
 */
begin;
select plan(36);

select tests.create_user('wtx.owner@example.test', 'MEMBER') as owner \gset
select tests.create_wallet(:'owner') as wallet \gset
select '0x0000000000000000000000000000000000000A11' as token_address \gset
select '0x0000000000000000000000000000000000000B22' as recipient \gset

-- A transfer of 60 tokens against a balance of 100, gas 21000 at 10 wei against 1,000,000 wei.
select lives_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'utility', %L, 'AGU', 'Agora Utility', 18,
                   %L, null, 60, 21000, 10, 100, 1000000) $$, :'owner', :'token_address', :'recipient'),
  'A transfer the balances cover is created.'
);
select results_eq(
  format($$ select status::text, amount::text, from_address, gas_limit::text from app.wallet_transactions where wallet_id = %L $$, :'wallet'),
  format($$ values ('pending', '60', %L, '21000') $$, tests.wallet_address(:'wallet')),
  'It is pending, from the wallet, with its gas reserved.'
);
select ok(
  (select abs(extract(epoch from (expires_at - created_at)) - 600) < 1 from app.wallet_transactions where wallet_id = :'wallet'),
  'It expires after wallet.pendingTtlSeconds (600 s by default).'
);
select throws_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'utility', %L, 'AGU', 'Agora Utility', 18,
                   %L, null, 41, 21000, 10, 100, 1000000) $$, :'owner', :'token_address', :'recipient'),
  'AG422', 'the balance less pending transfers does not cover this amount',
  'A second transfer over the balance less the pending 60 is refused (AG422).'
);
select lives_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'utility', %L, 'AGU', 'Agora Utility', 18,
                   %L, null, 40, 21000, 10, 100, 1000000) $$, :'owner', :'token_address', :'recipient'),
  'Exactly the rest of the balance is accepted.'
);
do $$
declare
  hint text;
  detail text;
begin
  perform app_private.create_wallet_transfer(tests.user_id('wtx.owner@example.test'), 31337, 'native', null,
    'ETH', 'Ether', 18, '0x0000000000000000000000000000000000000B22', null, 1000000 - 3 * 210000 + 1,
    21000, 10, 0, 1000000);
exception when sqlstate 'AG422' then
  get stacked diagnostics hint = pg_exception_hint, detail = pg_exception_detail;
  perform set_config('test.hint', hint, true);
  perform set_config('test.detail', detail, true);
end
$$;
select is(current_setting('test.hint', true), 'insufficient_funds',
  'The refusal names insufficient_funds in its hint.');
select is((current_setting('test.detail', true)::jsonb ->> 'reserved'), '420000',
  'Native currency: the gas of the two transfers in flight (2 × 21000 × 10) is reserved.');
select lives_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'native', null, 'ETH', 'Ether', 18,
                   %L, null, %s, 21000, 10, 0, 1000000) $$, :'owner', :'recipient', 1000000 - 3 * 210000),
  'Native: the amount plus its own gas plus the reserved gas, exactly covered, is accepted.'
);
select throws_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'governance', '0x0000000000000000000000000000000000000C33',
                   'AGV', 'Agora Governance', 18, %L, null, 1, 21000, 10, 100, 0) $$, :'owner', :'recipient'),
  'AG422', 'the native balance does not cover the gas of this transfer',
  'A token transfer without native currency for its gas is refused (AG422).'
);
select throws_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'native', null, 'ETH', 'Ether', 18,
                   %L, null, 1, 21000, 10, 0, 1000000000) $$, gen_random_uuid(), :'recipient'),
  'AG404', null,
  'A user without a wallet cannot create a transfer (AG404).'
);

-- Events and notifications of the three pending transfers.
select is(
  (select count(*)::int from app.events where topic = 'user:' || :'owner' and event = 'wallet.transaction.updated'),
  3,
  'Each new transfer is a wallet.transaction.updated event on user:<owner>.'
);
select is(
  (select count(*)::int from app.notifications where user_id = :'owner' and type = 'WALLET'),
  3,
  'Each transfer has its WALLET notification.'
);

-- Nonces: in order, once each; a rolled-back allocation gives its number back.
select is(app_private.allocate_wallet_nonce(:'wallet'), 0::bigint, 'The first nonce is 0.');
select is(app_private.allocate_wallet_nonce(:'wallet'), 1::bigint, 'The next one is 1.');
savepoint before_rollback;
select is(app_private.allocate_wallet_nonce(:'wallet'), 2::bigint, 'Then 2 ...');
rollback to savepoint before_rollback;
select is(app_private.allocate_wallet_nonce(:'wallet'), 2::bigint, '... which a rolled-back confirm gives back: 2 again.');
select is(app_private.sync_wallet_nonce(:'wallet', 10), 10::bigint,
  'A nonce taken on the chain outside the platform moves the counter up.');
select is(app_private.sync_wallet_nonce(:'wallet', 4), 10::bigint, 'It never moves down.');

-- Submit and finish.
select id as first_tx from app.wallet_transactions where wallet_id = :'wallet' and amount = 60 \gset
select results_eq(
  format($$ select status::text, nonce, hash from app_private.submit_wallet_transaction(%L, 0, '0x%s', '0x02f8', 100, 1) $$,
    :'first_tx', repeat('ef', 32)),
  format($$ values ('submitted', 0::bigint, '0x%s') $$, repeat('ef', 32)),
  'Submitting records the nonce and the hash.'
);
select is(
  (select raw from app_private.wallet_signed_transactions where transaction_id = :'first_tx'), '0x02f8',
  'The signed bytes are stored with it.'
);
select is(
  (select count(*)::int from app_private.jobs where kind = 'wallet.broadcast' and payload ->> 'transactionId' = :'first_tx'),
  1,
  'One wallet.broadcast job is queued for it.'
);
select throws_ok(
  format($$ select app_private.submit_wallet_transaction(%L, 1, '0x%s', '0x02f9', 100, 1) $$, :'first_tx', repeat('ee', 32)),
  'AG409', 'the transaction is no longer pending',
  'A transfer is submitted once (AG409).'
);
select throws_ok(
  format($$ update app.wallet_transactions set nonce = 0 where wallet_id = %L and amount = 40 $$, :'wallet'),
  '23505', null,
  'Two transactions of one wallet never share a nonce (23505).'
);

-- Signed again: its nonce was used outside the platform before any node accepted its bytes.
select throws_ok(
  format($$ select app_private.resign_wallet_transaction(%L, '0x%s', 10, '0x%s', '0x02fa', 100, 1) $$,
    :'first_tx', repeat('aa', 32), repeat('dd', 32)),
  'AG409', 'the transfer was sent, moved on or signed again',
  'Signing again names the signature it replaces: another hash is AG409.'
);
select results_eq(
  format($$ select status::text, nonce, hash
            from app_private.resign_wallet_transaction(%L, '0x%s', 10, '0x%s', '0x02fa', 100, 1) $$,
    :'first_tx', repeat('ef', 32), repeat('dd', 32)),
  format($$ values ('submitted', 10::bigint, '0x%s') $$, repeat('dd', 32)),
  'A transfer whose bytes no node accepted is signed again: a new nonce and hash, still submitted.'
);
select results_eq(
  format($$ select raw, replaced_hashes, broadcasts from app_private.wallet_signed_transactions
            where transaction_id = %L $$, :'first_tx'),
  format($$ values ('0x02fa', array['0x%s'], 0) $$, repeat('ef', 32)),
  'The new bytes are stored, the replaced hash kept.'
);
update app_private.wallet_signed_transactions set broadcasts = 1 where transaction_id = :'first_tx';
select throws_ok(
  format($$ select app_private.resign_wallet_transaction(%L, '0x%s', 11, '0x%s', '0x02fb', 100, 1) $$,
    :'first_tx', repeat('dd', 32), repeat('cc', 32)),
  'AG409', 'the transfer was sent, moved on or signed again',
  'Bytes a node accepted once are never replaced: a second signature could pay twice.'
);
select ok(
  app_private.finish_wallet_transaction(:'first_tx', 'confirmed', 12, '0x' || repeat('12', 32), 21000 * 100, null),
  'A submitted transfer finishes confirmed ...'
);
select ok(
  not app_private.finish_wallet_transaction(:'first_tx', 'failed', 12, '0x' || repeat('12', 32), 0, 'late'),
  '... once: a late watcher changes nothing.'
);
select results_eq(
  format($$ select status::text, fee::text, block_number from app.wallet_transactions where id = %L $$, :'first_tx'),
  $$ values ('confirmed', '2100000', 12::bigint) $$,
  'It keeps its block and fee.'
);
select is(
  (select array_agg(payload ->> 'status' order by id) from app.events
   where event = 'wallet.transaction.updated' and payload ->> 'id' = :'first_tx'),
  array['pending', 'submitted', 'confirmed'],
  'Each status change is an event carrying the transaction.'
);
select results_eq(
  format($$ select title, (data ->> 'count')::int from app.notifications
            where user_id = %L and data ->> 'transactionId' = %L $$, :'owner', :'first_tx'),
  $$ values ('Transfer confirmed', 3) $$,
  'One notification per transfer, updated at each change (collapsed).'
);
select throws_ok(
  format($$ select app_private.finish_wallet_transaction(%L, 'pending', null, null, null, null) $$, :'first_tx'),
  '22023', null,
  'A transfer finishes only confirmed or failed.'
);

-- Expiry.
update app.wallet_transactions set expires_at = now() - interval '1 second'
where wallet_id = :'wallet' and status = 'pending' and amount = 40;
select is(
  (select app.wallet_transaction_json(t) ->> 'status' from app.wallet_transactions t where wallet_id = :'wallet' and amount = 40),
  'expired',
  'A pending transfer past its expiry already reads as expired.'
);
select is(app_private.expire_wallet_transfers(), 1, 'The schedule expires it ...');
select is(
  (select status::text from app.wallet_transactions where wallet_id = :'wallet' and amount = 40), 'expired',
  '... for good.'
);

select * from finish();
rollback;
