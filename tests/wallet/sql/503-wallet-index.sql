/*
 * What the follower writes: NFT holdings computed from the transfer logs (ERC-721 and ERC-1155,
 * in and out), and the rollback after a reorganization: incoming transfers and NFT logs above the
 * fork go (announced as failed), holdings are recomputed, outgoing transfers mined above it are
 * watched again, stored block hashes above it go, the cursor moves back.
 */
begin;
select plan(14);

select tests.create_user('widx.owner@example.test', 'MEMBER') as owner \gset
select tests.create_wallet(:'owner') as wallet \gset
select tests.wallet_address(:'wallet') as address \gset
select '0x00000000000000000000000000000000000000E7' as collection \gset
select '0x0000000000000000000000000000000000001155' as items \gset
select '0x0000000000000000000000000000000000000000' as zero \gset
select '0x000000000000000000000000000000000000dEaD' as stranger \gset

insert into app_private.chain_cursors (chain_id, block_number, block_hash) values (424242, 30, '0x' || repeat('30', 32));
insert into app_private.chain_blocks (chain_id, number, hash, parent_hash)
select 424242, n, '0x' || repeat(lpad(to_hex(n), 2, '0'), 32), '0x' || repeat(lpad(to_hex(n - 1), 2, '0'), 32)
from generate_series(18, 30) n;
insert into app_private.nft_tokens (chain_id, contract, token_id, token_uri, name, image)
values (424242, :'collection', 7, 'data:application/json,{}', 'Seven', 'data:image/svg+xml,<svg/>');
insert into app_private.nft_collections (chain_id, contract, standard, name, symbol)
values (424242, :'collection', 'ERC721', 'Collectibles', 'AGC'), (424242, :'items', 'ERC1155', 'Items', null);

-- Block 20: token 7 minted to the wallet; 5 badges of item 1. Block 25: 2 badges leave.
-- Block 28: token 7 leaves.
insert into app_private.nft_transfers (chain_id, block_number, block_hash, transaction_hash, log_index, batch_index,
  standard, contract, token_id, from_address, to_address, amount) values
  (424242, 20, '0x' || repeat('14', 32), '0x' || repeat('a1', 32), 0, 0, 'ERC721', :'collection', 7, :'zero', :'address', 1),
  (424242, 20, '0x' || repeat('14', 32), '0x' || repeat('a2', 32), 0, 0, 'ERC1155', :'items', 1, :'zero', :'address', 5),
  (424242, 25, '0x' || repeat('19', 32), '0x' || repeat('a3', 32), 0, 0, 'ERC1155', :'items', 1, :'address', :'stranger', 2);
select app_private.refresh_wallet_nfts(424242,
  array[:'address', :'address', :'stranger'], array[:'collection', :'items', :'items'], array[7, 1, 1]::numeric[]);
select results_eq(
  $$ select contract, token_id::int, standard::text, balance::int from app.wallet_nfts where chain_id = 424242 order by contract $$,
  format($$ values (%L, 7, 'ERC721', 1), (%L, 1, 'ERC1155', 3) $$, :'collection', :'items'),
  'Holdings are what came in less what went out (5 - 2 badges), only for platform wallets.'
);
select results_eq(
  $$ select name, image, collection_name, collection_symbol from app.wallet_nfts where chain_id = 424242 and token_id = 7 $$,
  $$ values ('Seven', 'data:image/svg+xml,<svg/>', 'Collectibles', 'AGC') $$,
  'Holdings carry the token''s metadata and the collection''s name.'
);
insert into app_private.nft_transfers (chain_id, block_number, block_hash, transaction_hash, log_index, batch_index,
  standard, contract, token_id, from_address, to_address, amount) values
  (424242, 28, '0x' || repeat('1c', 32), '0x' || repeat('a4', 32), 3, 0, 'ERC721', :'collection', 7, :'address', :'stranger', 1);
select app_private.refresh_wallet_nfts(424242, array[:'address'], array[:'collection'], array[7]::numeric[]);
select is_empty(
  format($$ select 1 from app.wallet_nfts where chain_id = 424242 and contract = %L $$, :'collection'),
  'A token that left is no longer held.'
);

-- Transfers in and out in blocks 22 and 27.
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind, token_symbol, token_name,
  token_decimals, from_address, to_address, amount, hash, log_index, block_number, block_hash)
values
  (:'wallet', :'owner', 'in', 'confirmed', 424242, 'native', 'ETH', 'Ether', 18, :'stranger', :'address', 9,
   '0x' || repeat('b1', 32), -1, 22, '0x' || repeat('16', 32)),
  (:'wallet', :'owner', 'in', 'confirmed', 424242, 'native', 'ETH', 'Ether', 18, :'stranger', :'address', 8,
   '0x' || repeat('b2', 32), -1, 27, '0x' || repeat('1b', 32));
insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind, token_symbol, token_name,
  token_decimals, from_address, to_address, amount, hash, nonce, block_number, block_hash, gas_limit, expires_at, fee,
  confirmed_at)
values (:'wallet', :'owner', 'out', 'confirmed', 424242, 'native', 'ETH', 'Ether', 18, :'address', :'stranger', 3,
   '0x' || repeat('c1', 32), 0, 27, '0x' || repeat('1b', 32), 21000, now(), 21000, now())
returning id as mined_out \gset

select is(app_private.rollback_chain_index(424242, 24, '0x' || repeat('18', 32)), 2,
  'Rolling back to block 24 touches the incoming and the outgoing transfer above it.');
select results_eq(
  $$ select amount::int from app.wallet_transactions where chain_id = 424242 and direction = 'in' $$,
  $$ values (9) $$,
  'The incoming transfer above the fork is gone; the one below stays.'
);
select results_eq(
  format($$ select status::text, block_number, fee, confirmed_at from app.wallet_transactions where id = %L $$, :'mined_out'),
  $$ values ('submitted', null::bigint, null::numeric, null::timestamptz) $$,
  'The outgoing transfer mined above the fork is submitted again, its block and fee unknown.'
);
select is(
  (select count(*)::int from app_private.jobs where kind = 'wallet.watch' and payload ->> 'transactionId' = :'mined_out'),
  1,
  'It is watched again (its signed bytes are sent again if the node lost them).'
);
select results_eq(
  format($$ select payload ->> 'status', payload ->> 'error' from app.events
            where event = 'wallet.transaction.updated' and payload ->> 'hash' = '0x%s' order by id desc limit 1 $$, repeat('b2', 32)),
  $$ values ('failed', 'removed by a chain reorganization') $$,
  'The owner is told the lost incoming transfer is gone.'
);
select results_eq(
  $$ select contract, token_id::int, balance::int from app.wallet_nfts where chain_id = 424242 order by contract $$,
  format($$ values (%L, 7, 1), (%L, 1, 5) $$, :'collection', :'items'),
  'NFT logs above the fork are undone: token 7 (sent away in block 28) is held again, and the 2 badges sent in block 25 are back.'
);
select is(
  (select max(number)::int from app_private.chain_blocks where chain_id = 424242), 24,
  'Block hashes above the fork are dropped.'
);
select results_eq(
  $$ select block_number::int, block_hash from app_private.chain_cursors where chain_id = 424242 $$,
  format($$ values (24, '0x%s') $$, repeat('18', 32)),
  'The cursor is back at the fork.'
);
select is(app_private.rollback_chain_index(424242, 24, '0x' || repeat('18', 32)), 0,
  'Rolling back again to the same block changes nothing.');

select app_private.note_chain_head(424242, 100);
select app_private.note_chain_head(424242, 90);
select is(app.wallet_chain_head(424242), 100::bigint, 'The head seen never moves back.');
select is(
  (select (app.wallet_transaction_json(t) ->> 'confirmations')::int from app.wallet_transactions t
   where t.chain_id = 424242 and t.amount = 9),
  79,
  'Confirmations count from the block to the newest head seen (100 - 22 + 1).'
);

select * from finish();
rollback;
