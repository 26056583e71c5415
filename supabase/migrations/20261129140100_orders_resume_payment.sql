/*
 * A buyer resumes the payment of their own unpaid checkout from anywhere (another tab, another
 * device, after the tab closed) while its reservation lasts: POST /api/store/checkouts/{id}/payment
 * (functions/api/store/checkout.ts, resumePayment). Before, the client secret of the payment was
 * only in the checkout's first answer, which the web client kept in the tab that checked out:
 * anywhere else "Pay" was a dead end ("This tab no longer has the payment of this checkout").
 *
 * app.checkout_payment(id): the caller's own checkout (another's, or a VISITOR's or a suspended
 * buyer's: AG404), still awaiting payment (paid, refunded, cancelled or closed: AG422
 * invalid_transition) and within its reservation (expired: AG422 invalid_transition), answered as
 * the checkout's answer with its client secret; `needsIntent` when no PaymentIntent was attached
 * yet (the first request died between the checkout and the intent): the API then makes it with the
 * same provider idempotency key (`checkout:<id>`) and attaches it (app.attach_payment_intent).
 *
 * Tables touched: none changed (app_private.checkout_secrets' comment says who reads it now).
 */

create function app.checkout_payment(target_checkout_id uuid) returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  checkout app.checkouts;
  secret text;
begin
  select * into checkout from app.checkouts c
  where c.id = target_checkout_id and c.buyer_id = (select auth.uid())
    and app.has_role('SUBSCRIBER');
  if not found then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  if checkout.payment_status in ('succeeded', 'refunded') then
    raise exception 'this checkout is paid' using errcode = 'AG422', hint = 'invalid_transition',
      detail = jsonb_build_object('payment', checkout.payment_status)::text;
  end if;
  if checkout.closed_at is not null or not exists (
    select 1 from app.orders o where o.checkout_id = checkout.id and o.status = 'pending_payment'
  ) then
    raise exception 'this checkout no longer awaits payment (it was cancelled or its reservation ran out)'
      using errcode = 'AG422', hint = 'invalid_transition',
      detail = jsonb_build_object('reservedUntil', checkout.reserved_until)::text;
  end if;
  if checkout.reserved_until <= now() then
    raise exception 'the reservation of this checkout ran out; check out again'
      using errcode = 'AG422', hint = 'invalid_transition',
      detail = jsonb_build_object('reservedUntil', checkout.reserved_until)::text;
  end if;
  select s.client_secret into secret from app_private.checkout_secrets s
  where s.checkout_id = checkout.id;
  return app_private.checkout_json(checkout.id, nullif(secret, ''))
    || jsonb_build_object('needsIntent', checkout.payment_intent_id is null,
                          'currency', checkout.currency, 'amount', checkout.total);
end;
$$;

comment on function app.checkout_payment(uuid) is 'The payment of the caller''s own checkout still awaiting payment within its reservation, as the checkout answer with its client secret, so that its buyer can pay from any tab or device (POST /api/store/checkouts/{id}/payment). needsIntent: no PaymentIntent attached yet (the API makes it, with the same idempotency key, and attaches it). Another''s checkout: AG404; paid, cancelled, closed or expired: AG422 invalid_transition. security definer: the client secret is in app_private.checkout_secrets, which no API role reads.';

revoke all on function app.checkout_payment(uuid) from public;
grant execute on function app.checkout_payment(uuid) to authenticated;

comment on table app_private.checkout_secrets is 'The PaymentIntent''s client secret, which lets its holder confirm the payment: given to the buyer only, in the checkout answer and by app.checkout_payment (resuming the payment elsewhere), never readable through RLS.';
