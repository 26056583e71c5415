/*
 * app.cancel_wallet_transfer, persona by persona: the owner cancels their own pending transfer
 * (its funds no longer reserved, its notification says so, cancelling again answers it as it is);
 * another user, an ADMIN, a VISITOR and the owner once suspended get AG404; anonymous may not call
 * it; a submitted, expired or incoming transaction cannot be cancelled (AG422 / AG404); the
 * owner still cannot update the table directly.
 */
begin;
select plan(17);

do $$
begin
  perform tests.create_user('wcan.owner@example.test', 'SUBSCRIBER');
  perform tests.create_user('wcan.other@example.test', 'MEMBER');
  perform tests.create_user('wcan.admin@example.test', 'ADMIN');
  perform tests.create_user('wcan.visitor@example.test', 'VISITOR');
end
$$;
select tests.user_id('wcan.owner@example.test') as owner \gset
select tests.create_wallet(:'owner') as wallet \gset
select '0x0000000000000000000000000000000000000A11' as token_address \gset
select '0x0000000000000000000000000000000000000B22' as recipient \gset

-- The whole balance of 100 tokens in one pending transfer, one more pending, one submitted.
select (app_private.create_wallet_transfer(:'owner', 31337, 'utility', :'token_address', 'AGU',
  'Agora Utility', 18, :'recipient', null, 100, 21000, 10, 100, 1000000)).id as pending_tx \gset
select (app_private.create_wallet_transfer(:'owner', 31337, 'native', null, 'ETH', 'Ether', 18,
  :'recipient', null, 5, 21000, 10, 0, 1000000)).id as expiring_tx \gset
update app.wallet_transactions set expires_at = now() - interval '1 second' where id = :'expiring_tx';
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
  token_address, token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, nonce,
  gas_limit, max_fee_per_gas, expires_at)
values (:'wallet', :'owner', 'out', 'submitted', 31337, 'utility', :'token_address', 'AGU',
  'Agora Utility', 18, tests.wallet_address(:'wallet'), :'recipient', 1, '0x' || repeat('cd', 32), 0,
  21000, 10, now() + interval '10 minutes')
returning id as submitted_tx \gset
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
  token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number)
values (:'wallet', :'owner', 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
  '0x0000000000000000000000000000000000000001', tests.wallet_address(:'wallet'), 42,
  '0x' || repeat('ab', 32), -1, 7)
returning id as incoming_tx \gset

select throws_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'utility', %L, 'AGU', 'Agora Utility', 18,
                   %L, null, 1, 21000, 10, 100, 1000000) $$, :'owner', :'token_address', :'recipient'),
  'AG422', 'the balance less pending transfers does not cover this amount',
  'While the 100 are pending, even 1 more is refused.'
);

-- ---------------------------------------------------------------------------------------------
-- Strangers: another user, an ADMIN, a VISITOR, anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('wcan.other@example.test'));
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'pending_tx'),
  'AG404', 'no such transaction', 'Another user cannot cancel it (AG404).');
select tests.authenticate_as(tests.user_id('wcan.admin@example.test'));
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'pending_tx'),
  'AG404', 'no such transaction', 'An ADMIN cannot cancel someone else''s transfer either (AG404).');
select tests.authenticate_as(tests.user_id('wcan.visitor@example.test'));
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'pending_tx'),
  'AG404', 'no such transaction', 'A VISITOR gets AG404.');
select tests.authenticate_as_anon();
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'pending_tx'),
  '42501', null, 'Anonymous may not call it.');
select tests.clear_authentication();
select is((select status::text from app.wallet_transactions where id = :'pending_tx'), 'pending',
  'The strangers changed nothing.');

-- ---------------------------------------------------------------------------------------------
-- The owner, suspended: nothing
-- ---------------------------------------------------------------------------------------------

update app.users set status = 'suspended' where id = :'owner';
select tests.authenticate_as(:'owner');
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'pending_tx'),
  'AG404', 'no such transaction', 'A suspended owner gets AG404.');
select tests.clear_authentication();
update app.users set status = 'active' where id = :'owner';

-- ---------------------------------------------------------------------------------------------
-- The owner
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'owner');
select is((app.cancel_wallet_transfer(:'pending_tx')) ->> 'status', 'cancelled',
  'The owner cancels their pending transfer.');
select is((app.cancel_wallet_transfer(:'pending_tx')) ->> 'status', 'cancelled',
  'Cancelling again answers it as it is.');
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'submitted_tx'),
  'AG422', 'a transfer that is submitted cannot be cancelled: it was already confirmed and signed',
  'A submitted (signed) transfer cannot be cancelled (AG422).');
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'expiring_tx'),
  'AG422', 'this transfer expired before it was confirmed; nothing was sent',
  'A pending transfer past its expiry cannot be cancelled (AG422).');
select throws_ok(format($$ select app.cancel_wallet_transfer(%L) $$, :'incoming_tx'),
  'AG404', 'no such transaction', 'An incoming transaction is not a transfer to cancel (AG404).');
select throws_ok(
  format($$ update app.wallet_transactions set status = 'pending' where id = %L $$, :'pending_tx'),
  '42501', null, 'The owner still cannot update the table directly.');
select tests.clear_authentication();

select results_eq(
  format($$ select status::text, hash, nonce from app.wallet_transactions where id = %L $$, :'pending_tx'),
  $$ values ('cancelled'::text, null::text, null::bigint) $$,
  'Cancelled, never signed: no hash, no nonce.'
);
select lives_ok(
  format($$ select app_private.create_wallet_transfer(%L, 31337, 'utility', %L, 'AGU', 'Agora Utility', 18,
                   %L, null, 99, 21000, 10, 100, 1000000) $$, :'owner', :'token_address', :'recipient'),
  'Its 100 are free again: a new transfer of 99 (plus the submitted 1) is accepted.'
);
select results_eq(
  format($$ select title from app.notifications where user_id = %L and data ->> 'transactionId' = %L $$,
         :'owner', :'pending_tx'),
  $$ values ('Transfer cancelled'::text) $$,
  'The transfer''s notification now says it was cancelled.'
);
select ok(
  exists (select 1 from app.events e where e.topic = 'user:' || :'owner'
          and e.event = 'wallet.transaction.updated' and e.payload ->> 'status' = 'cancelled'),
  'A wallet.transaction.updated event says cancelled.'
);

select * from finish();
rollback;
