/*
 * A pending transfer can be cancelled by its owner (POST /api/wallet/transactions/{id}/cancel,
 * the web client's "Don't send"). Before, "Don't send" only left the page: the transfer stayed
 * pending until it expired (wallet.pendingTtlSeconds) and its amount and gas stayed reserved, so a
 * later send was refused for funds the token list showed as available.
 *
 * - a new status `cancelled`: withdrawn by its owner before it was confirmed; nothing was signed
 *   or sent, nothing is reserved (create_wallet_transfer counts only pending and submitted);
 * - app.cancel_wallet_transfer(id): the row locked, then pending -> cancelled. The confirm locks
 *   the same row before it signs (functions/api/wallet/transfers.ts, signAndSubmit) and signs only
 *   a transfer still pending, so of a concurrent confirm and cancel exactly one wins: the other
 *   waits for the lock, then sees the winner's status;
 * - the check that only unsigned rows lack a hash and a nonce admits cancelled rows;
 * - the status-change trigger names a cancelled transfer in its event and notification.
 *
 * Tables touched: app.wallet_transactions (one check constraint replaced). Nothing destructive.
 */

alter type app.wallet_transaction_status add value if not exists 'cancelled';

comment on type app.wallet_transaction_status is 'pending: validated, waiting for the owner''s confirm until it expires; submitted: signed with its nonce and sent (or being sent); confirmed: mined with enough confirmations; failed: reverted, or refused by the node; expired: never confirmed in time; cancelled: withdrawn by its owner before confirming (nothing was signed or sent). Incoming transfers are submitted until they have enough confirmations.';

-- The new value cannot be named as an enum literal in the transaction that adds it: compared as
-- text instead.
alter table app.wallet_transactions drop constraint wallet_transactions_signed;
alter table app.wallet_transactions add constraint wallet_transactions_signed check (
  status::text in ('pending', 'expired', 'cancelled') or direction = 'in'
  or (hash is not null and nonce is not null)
);

create function app.cancel_wallet_transfer(target_id uuid) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  t app.wallet_transactions;
begin
  -- Only the owner's own outgoing transfers exist here: another user's is "not found", not
  -- "forbidden", so an id tells nobody else anything.
  select * into t from app.wallet_transactions w
  where w.id = target_id and w.user_id = (select auth.uid()) and w.direction = 'out'
    and app.has_role('SUBSCRIBER')
  for update;
  if not found then
    raise exception 'no such transaction' using errcode = 'AG404';
  end if;
  if t.status::text = 'cancelled' then
    -- Cancelling again answers the transaction as it is (a retried request).
    return app.wallet_transaction_json(t);
  end if;
  if t.status = 'pending' and t.expires_at <= now() then
    raise exception 'this transfer expired before it was confirmed; nothing was sent'
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('status', 'expired')::text;
  end if;
  if t.status <> 'pending' then
    raise exception 'a transfer that is % cannot be cancelled: it was already confirmed and signed', t.status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('status', t.status)::text;
  end if;
  update app.wallet_transactions w set status = 'cancelled'::text::app.wallet_transaction_status
  where w.id = t.id
  returning * into t;
  return app.wallet_transaction_json(t);
end;
$$;

comment on function app.cancel_wallet_transfer(uuid) is 'The owner withdraws a pending transfer before confirming it: pending -> cancelled (its funds no longer reserved), with the row locked so that a concurrent confirm (which locks it too and signs only a pending transfer) and this cancel cannot both win. Another user''s transfer, an incoming one or an unknown id: AG404. Already cancelled: the transaction as it is. Expired (also a pending one past its expiry), submitted, confirmed or failed: AG422 invalid_transition. security definer: transactions have no update grant; only the caller''s own row is touched.';

revoke all on function app.cancel_wallet_transfer(uuid) from public;
grant execute on function app.cancel_wallet_transfer(uuid) to authenticated;

create or replace function app_private.wallet_transaction_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  t app.wallet_transactions;
  payload jsonb;
  amount_text text;
  title text;
  body text;
begin
  if tg_op = 'DELETE' then
    -- A row going with its wallet or its owner (an account deletion) is not news to anyone.
    if not exists (
      select 1 from app.wallets w join app.users u on u.id = w.user_id where w.id = old.wallet_id
    ) then
      return null;
    end if;
    t := old;
    t.status := 'failed';
    t.error := 'removed by a chain reorganization';
  else
    t := new;
  end if;
  payload := app.wallet_transaction_json(t);
  perform app_private.emit_event('user:' || t.user_id, 'wallet.transaction.updated', payload);
  amount_text := app_private.format_token_amount(t.amount, t.token_decimals) || ' ' || t.token_symbol;
  if t.direction = 'out' then
    title := case t.status
      when 'pending' then 'Transfer waiting for your confirmation'
      when 'submitted' then 'Transfer sent'
      when 'confirmed' then 'Transfer confirmed'
      when 'failed' then 'Transfer failed'
      when 'expired' then 'Transfer expired'
      when 'cancelled' then 'Transfer cancelled'
    end;
    body := case t.status
      when 'pending' then format('Confirm sending %s to %s before it expires.', amount_text, t.to_address)
      when 'submitted' then format('%s to %s is on its way.', amount_text, t.to_address)
      when 'confirmed' then format('%s reached %s.', amount_text, t.to_address)
      when 'failed' then format('%s to %s did not go through: %s', amount_text, t.to_address, coalesce(t.error, 'failed'))
      when 'expired' then format('%s to %s was not confirmed in time; nothing was sent.', amount_text, t.to_address)
      when 'cancelled' then format('You cancelled sending %s to %s; nothing was sent.', amount_text, t.to_address)
    end;
  else
    title := case t.status
      when 'confirmed' then 'Transfer received'
      when 'failed' then 'Incoming transfer reversed'
      else 'Incoming transfer'
    end;
    body := case t.status
      when 'confirmed' then format('%s arrived from %s.', amount_text, t.from_address)
      when 'failed' then format('%s from %s was removed from the chain by a reorganization.', amount_text, t.from_address)
      else format('%s from %s is waiting for confirmations.', amount_text, t.from_address)
    end;
  end if;
  perform app_private.notify(
    t.user_id, 'WALLET', left(title, 200), left(body, 2000),
    jsonb_build_object('transactionId', t.id, 'status', payload ->> 'status', 'direction', t.direction),
    'normal', 'wallet.transaction:' || t.id
  );
  return null;
end;
$$;
