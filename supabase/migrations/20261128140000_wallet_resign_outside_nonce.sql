/*
 * A transfer whose nonce the owner used outside the platform (with the exported key) is signed
 * again with the wallet's next nonce instead of failing. The broadcast job
 * (functions/api/wallet/transfers.ts) finds the node refusing the stored bytes with "nonce too
 * low", the node not knowing them, the chain's mined count past that nonce and no node ever
 * having accepted them (broadcasts = 0): those bytes can no longer be mined. It then, in one
 * transaction, moves the wallet's counter up to the chain's count (sync_wallet_nonce), takes the
 * next number (allocate_wallet_nonce: never one another platform transfer holds), signs, and
 * records the new signature here. The replaced hash is kept with the signed bytes.
 *
 * Tables touched: app_private.wallet_signed_transactions gains replaced_hashes (default empty).
 * Nothing destructive.
 */

alter table app_private.wallet_signed_transactions
  add column replaced_hashes text[] not null default '{}';
comment on column app_private.wallet_signed_transactions.replaced_hashes is
  'Hashes of earlier signatures of this transfer, replaced because a transaction sent outside the platform used their nonce before any node accepted them; oldest first. They can never be mined (their nonce is used on the chain) and are never sent again; kept so an operator can tell them from the transfer''s hash.';

/*
 * The new signature of a submitted transfer, in the transaction that took its new nonce. Refuses
 * (AG409) when the transfer moved on, was signed again meanwhile, or its bytes were accepted by a
 * node once: bytes that were out may still be mined, and a second signature could pay twice.
 */
create function app_private.resign_wallet_transaction(
  target_id uuid,
  replaced_hash text,
  signed_nonce bigint,
  signed_hash text,
  raw text,
  signed_max_fee numeric,
  signed_priority_fee numeric
) returns app.wallet_transactions
language plpgsql volatile
set search_path = ''
as $$
declare
  updated app.wallet_transactions;
begin
  update app_private.wallet_signed_transactions s
  set raw = resign_wallet_transaction.raw, replaced_hashes = s.replaced_hashes || replaced_hash,
      broadcasts = 0, last_broadcast_at = null
  where s.transaction_id = target_id and s.broadcasts = 0
    and exists (
      select 1 from app.wallet_transactions t
      where t.id = target_id and t.status = 'submitted' and t.hash = replaced_hash
    );
  if not found then
    raise exception 'the transfer was sent, moved on or signed again' using errcode = 'AG409';
  end if;
  update app.wallet_transactions t
  set nonce = signed_nonce, hash = signed_hash,
      max_fee_per_gas = signed_max_fee, max_priority_fee_per_gas = signed_priority_fee
  where t.id = target_id
  returning * into updated;
  return updated;
end;
$$;
comment on function app_private.resign_wallet_transaction(uuid, text, bigint, text, text, numeric, numeric) is
  'Records a new signature (nonce, hash, raw bytes) for a submitted transfer whose nonce was used outside the platform before any node accepted its bytes, keeping the replaced hash; AG409 when it was broadcast, moved on or signed again. The caller took the nonce with allocate_wallet_nonce in the same transaction. Server path only.';

revoke execute on all functions in schema app, app_private from public;
