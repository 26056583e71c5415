/*
 * The account export streams a wallet's transactions (issue 30, docs/account.md; the registry's
 * rows and rows_key, 20261206000300_signin_export_streams_every_list.sql). Built as one value,
 * the growth benchmark's heavy user had 29 MB of wallet transactions at a tenth of the review's
 * size: at its size they alone pass jsonb's 256 MB limit. Now
 * app_private.account_export_wallet_transactions_rows gives one transaction per row, oldest
 * first, and the part's function returns the wallet without them (rows_key `transactions`): the
 * composer adds them (app.export_account) or the route streams them into the object.
 *
 * Tables touched: app_private.account_export_parts (the wallet's row).
 */

create function app_private.account_export_wallet_transactions_rows(target_user_id uuid)
returns setof text
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
           'id', x.id, 'direction', x.direction, 'status', j ->> 'status',
           'asset', j -> 'token', 'from', x.from_address, 'to', x.to_address,
           'amount', x.amount::text, 'txid', x.hash, 'blockNumber', x.block_number,
           'fee', x.fee::text, 'error', x.error,
           'createdAt', app_private.iso_time(x.created_at),
           'confirmedAt', app_private.iso_time(x.confirmed_at))::text
  from app.wallet_transactions x, app.wallet_transaction_json(x) j
  where x.user_id = target_user_id
  order by x.created_at, x.id
$$;

comment on function app_private.account_export_wallet_transactions_rows(uuid) is
  'Export part `wallet`, its `transactions`, an element per row: every transaction of the person''s wallet, oldest first (its token as `asset`, its hash as `txid`: the export''s keys never look like secrets).';
revoke all on function app_private.account_export_wallet_transactions_rows(uuid) from public;

create or replace function app_private.account_export_wallet(target_user_id uuid)
returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', w.id,
    'address', w.address,
    'createdAt', app_private.iso_time(w.created_at),
    'exportedAt', app_private.iso_time(w.exported_at),
    'addedAssets', coalesce((
      select jsonb_agg(jsonb_build_object('chainId', c.chain_id, 'address', c.address,
                                          'symbol', c.symbol, 'name', c.name, 'decimals', c.decimals)
                       order by t.created_at, t.id)
      from app.wallet_tokens t
      join app.chain_tokens c on c.chain_id = t.chain_id and c.address = t.address
      where t.user_id = target_user_id), '[]'::jsonb),
    'nfts', coalesce((
      select jsonb_agg(jsonb_build_object('chainId', n.chain_id, 'contract', n.contract,
                                          'id', n.token_id::text, 'standard', n.standard,
                                          'balance', n.balance::text, 'name', n.name)
                       order by n.created_at, n.contract, n.token_id)
      from app.wallet_nfts n where n.user_id = target_user_id), '[]'::jsonb)
  )
  from app.wallets w where w.user_id = target_user_id
$$;

comment on function app_private.account_export_wallet(uuid) is
  'Export part `wallet`, without its `transactions` (the registry''s rows_key: app_private.account_export_wallet_transactions_rows, which the export adds or streams): the wallet''s public data (address, when it was created and last exported), the ERC-20s added and the NFTs held; null without a wallet. Never key material: the sealed key stays in app_private.wallet_keys (the key itself leaves only through POST /api/wallet/export).';

update app_private.account_export_parts
set rows_function = 'app_private.account_export_wallet_transactions_rows(uuid)', rows_key = 'transactions'
where part = 'wallet';
