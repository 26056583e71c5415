-- A wallet transaction names the person on its other side and what its gas may cost (issue 27):
-- the wallet page showed "Sent 5 AGU to 0xd8aA…" for a transfer to a person the platform knows,
-- "arrived from 0x858B…" for one from another member, funding "from 0x0000…" for a mint, and no
-- network fee on the confirm step.

-- Finds a custodial wallet by an address in any letter case (app.wallet_counterparty): incoming
-- transfers carry the sender's address as the log wrote it, a pasted address need not be
-- checksummed, and the wallets' addresses are.
create unique index wallets_address_lower_idx on app.wallets (lower(address));

create function app.wallet_counterparty(other_address text) returns jsonb
  language plpgsql stable security definer
  set search_path = ''
as $$
declare
  found jsonb;
begin
  if other_address = '0x0000000000000000000000000000000000000000' then
    return jsonb_build_object('type', 'mint');
  end if;
  select jsonb_build_object('type', 'user', 'userId', u.id, 'name', u.name)
    into found
    from app.wallets w
    join app.users u on u.id = w.user_id
   where lower(w.address) = lower(other_address)
     and u.status = 'active';
  return found;
end;
$$;
comment on function app.wallet_counterparty(text) is
  'Who is on the other side of a wallet transaction, as the wallet page names them: {type: "mint"} for the zero address (tokens created, not sent by anyone), {type: "user", userId, name} for a custodial wallet of an active user (their profile name, what the directory shows anyway; a suspended user is in no list, so their address stays an address), null for an address outside the platform. security definer: wallets are readable only by their owners, and this returns the name and id only, never another wallet''s row.';
revoke all on function app.wallet_counterparty(text) from public;
grant execute on function app.wallet_counterparty(text) to authenticated;

create or replace function app.wallet_transaction_json(t app.wallet_transactions) returns jsonb
  language plpgsql stable
  set search_path = ''
as $$
begin
  return (
    select jsonb_build_object(
      'id', t.id,
      'direction', t.direction,
      'status', case when t.status = 'pending' and t.expires_at <= now() then 'expired' else t.status::text end,
      'token', jsonb_build_object(
        'kind', t.token_kind, 'symbol', t.token_symbol, 'name', t.token_name,
        'decimals', t.token_decimals, 'address', t.token_address, 'chainId', t.chain_id
      ),
      'from', t.from_address,
      'to', t.to_address,
      'toUserId', t.to_user_id,
      'counterparty', app.wallet_counterparty(
        case when t.direction = 'out' then t.to_address else t.from_address end),
      'amount', t.amount::text,
      'hash', t.hash,
      'nonce', t.nonce,
      'blockNumber', t.block_number,
      'confirmations', case when t.block_number is null then null
        else greatest(coalesce(app.wallet_chain_head(t.chain_id), t.block_number) - t.block_number + 1, 1) end,
      'maxFee', (t.gas_limit * t.max_fee_per_gas)::text,
      'fee', t.fee::text,
      'error', t.error,
      'createdAt', to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'expiresAt', to_char(t.expires_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
      'confirmedAt', to_char(t.confirmed_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    )
  );
end;
$$;
comment on function app.wallet_transaction_json(app.wallet_transactions) is
  'A transaction as the API shows it (api-contract.md, Wallet): a pending transfer past its expiry already reads as expired, confirmations are counted against the newest block seen; counterparty names the other side (app.wallet_counterparty) and maxFee is the most its gas can cost (gas limit × max fee per gas, in native base units; null for an incoming transfer), what the confirm step shows before the fee is known. Runs with the caller''s rights.';
