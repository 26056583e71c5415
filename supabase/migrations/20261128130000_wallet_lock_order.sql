/*
 * The chain index is written in one lock order: the follower's cursor row first. A range's
 * transaction (functions/api/wallet/indexer.ts) moves the cursor by compare-and-set before it
 * writes anything; app_private.rollback_chain_index took it last, after deleting the incoming
 * transfers of the lost blocks and moving the outgoing ones back to submitted. Two followers
 * (every `npm start --processes N` server runs one; the wallet.index job joins them after the
 * node was away for a minute) deadlocked when one rolled back while the other recorded the same
 * transfer, sent again with the same bytes after the reorganization and mined again: the range
 * held the cursor and waited for the rollback's delete of that row (the incoming key), the
 * rollback held the row and waited for the cursor (40P01, "deadlock detected").
 * tests/wallet/lock-order.test.ts sets the race up step by step.
 *
 * Now the rollback locks the cursor row before it touches a transaction row: whoever comes
 * second waits for the other to commit, holding nothing. The body is otherwise unchanged.
 *
 * Tables touched: none changed. Nothing destructive.
 */

create or replace function app_private.rollback_chain_index(chain integer, fork bigint, fork_hash text) returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  affected integer;
  touched record;
  moved record;
begin
  -- The cursor first, as a range's transaction takes it (its compare-and-set is its first
  -- write): a follower recording blocks and one rolling back then queue on this row, before
  -- either holds a transaction row the other needs.
  perform 1 from app_private.chain_cursors c where c.chain_id = chain for update;
  delete from app.wallet_transactions t
  where t.chain_id = chain and t.direction = 'in' and t.block_number > fork;
  get diagnostics affected = row_count;
  for moved in
    update app.wallet_transactions t
    set status = 'submitted', block_number = null, block_hash = null, fee = null, confirmed_at = null,
        error = null
    where t.chain_id = chain and t.direction = 'out' and t.block_number > fork
    returning t.id
  loop
    perform app_private.enqueue_job('wallet.watch', jsonb_build_object('transactionId', moved.id, 'round', 1),
      now(), null, 100);
    affected := affected + 1;
  end loop;
  select array_agg(k.holder) as holders, array_agg(k.contract) as contracts, array_agg(k.token_id) as token_ids
  into touched
  from (
    select x.to_address as holder, x.contract, x.token_id from app_private.nft_transfers x
    where x.chain_id = chain and x.block_number > fork
    union
    select x.from_address, x.contract, x.token_id from app_private.nft_transfers x
    where x.chain_id = chain and x.block_number > fork
  ) k;
  delete from app_private.nft_transfers x where x.chain_id = chain and x.block_number > fork;
  if touched.holders is not null then
    perform app_private.refresh_wallet_nfts(chain, touched.holders, touched.contracts, touched.token_ids);
  end if;
  delete from app_private.chain_blocks b where b.chain_id = chain and b.number > fork;
  update app_private.chain_cursors c set block_number = fork, block_hash = fork_hash, updated_at = now()
  where c.chain_id = chain;
  return affected;
end;
$$;
comment on function app_private.rollback_chain_index(integer, bigint, text) is
  'Rolls the follower back to block `fork` after a reorganization: incoming transfers and NFT logs above it are deleted (holdings recomputed), outgoing transfers mined above it return to submitted with a wallet.watch job, block hashes above it are dropped and the cursor moves to the fork. Returns the transactions touched. Takes the cursor row first, as a range''s transaction does (its compare-and-set), so a rollback and another follower''s range never deadlock. Server path only.';

revoke execute on all functions in schema app, app_private from public;
