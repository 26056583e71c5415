/*
 * Payments: the provider's webhook events (each stored once, keyed by its id, and handled by a
 * store.stripe_event job), what a PaymentIntent's current state does to its checkout (paid, failed,
 * or paid after the orders were cancelled: refunded), refund results, and the `dev` provider's
 * objects (payment intents, refunds, accounts, transfers kept in Postgres, Stripe-shaped) that
 * stand in for Stripe when no Stripe key is configured.
 *
 * Out-of-order events: a job never trusts the event's copy of the object; it reads the
 * PaymentIntent from the provider again and applies its current status. Applying the same status
 * twice changes nothing, so a replayed or late event is harmless.
 *
 * Tables: app_private.stripe_events, app_private.dev_payment_objects. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app_private.stripe_events (
  id text primary key check (char_length(id) between 1 and 255),
  type text not null check (char_length(type) between 1 and 255),
  livemode boolean not null default false,
  payload jsonb not null,
  received_at timestamptz not null default now(),
  processed_at timestamptz,
  outcome text
);
comment on table app_private.stripe_events is
  'Every verified webhook event of the payment provider, once: the primary key is the event id, so a replayed delivery inserts nothing and queues nothing. processed_at and outcome are set by the store.stripe_event job.';

create table app_private.dev_payment_objects (
  id text primary key check (char_length(id) between 1 and 255),
  object text not null check (object in ('payment_intent', 'refund', 'account', 'transfer')),
  data jsonb not null,
  idempotency_key text unique check (char_length(idempotency_key) between 1 and 300),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table app_private.dev_payment_objects is
  'The dev payment provider''s state, used only when no Stripe key is configured: Stripe-shaped payment intents, refunds, accounts and transfers, so the local stack checks out and pays out end to end (POST /_dev/payments/<id>/succeed|fail). The idempotency key replays the first object, as Stripe''s does.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create index stripe_events_received_idx on app_private.stripe_events (received_at);
create index dev_payment_objects_object_idx on app_private.dev_payment_objects (object, created_at);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create trigger dev_payment_objects_touch_updated_at before update on app_private.dev_payment_objects
  for each row execute function app_private.touch_updated_at();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app_private.stripe_events enable row level security;
alter table app_private.dev_payment_objects enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions (server paths: none is executable by an API role)
-- ---------------------------------------------------------------------------------------------

/* Stores a verified event once and queues its handling; false when it was seen before. */
create function app_private.record_stripe_event(
  event_id text,
  event_type text,
  event_livemode boolean,
  event_payload jsonb
) returns boolean
language plpgsql volatile
set search_path = ''
as $$
begin
  insert into app_private.stripe_events (id, type, livemode, payload)
  values (event_id, event_type, coalesce(event_livemode, false), event_payload)
  on conflict (id) do nothing;
  if not found then
    return false;
  end if;
  perform app_private.enqueue_job('store.stripe_event', jsonb_build_object('eventId', event_id),
                                  now(), 'stripe-event:' || event_id);
  return true;
end;
$$;
comment on function app_private.record_stripe_event(text, text, boolean, jsonb) is
  'The webhook''s one write: the event (verified by its signature before this) stored under its id and a store.stripe_event job queued, in one statement''s transaction; an event id seen before does nothing and returns false. Called by the webhook route on the API''s own connection.';

create function app_private.finish_stripe_event(event_id text, event_outcome text) returns void
language sql volatile
set search_path = ''
as $$
  update app_private.stripe_events e set processed_at = now(), outcome = event_outcome
  where e.id = event_id
$$;
comment on function app_private.finish_stripe_event(text, text) is
  'Marks an event handled, with what it did (for operators reading app_private.stripe_events).';

/*
 * Applies a PaymentIntent's current state (as just read from the provider) to its checkout:
 *   succeeded: the amount and currency must be the checkout's; its unpaid orders become paid
 *              (the reservation becomes a sale); orders cancelled meanwhile are refunded.
 *   failed:    (requires_payment_method after an attempt) the checkout and its unpaid orders
 *              record payment failed and stay payable until the reservation expires.
 *   anything else changes nothing.
 * Returns what it did: unknown, mismatch, paid, already_paid, failed, ignored.
 */
create function app_private.apply_payment_intent(
  intent_id text,
  intent_status text,
  intent_amount bigint,
  intent_currency text,
  attempt_failed boolean default false
) returns text
language plpgsql volatile
set search_path = ''
as $$
declare
  checkout app.checkouts;
  ids uuid[];
  target app.orders;
  outcome text := 'paid';
begin
  select * into checkout from app.checkouts c where c.payment_intent_id = intent_id for update;
  if not found then
    return 'unknown';
  end if;

  if intent_status = 'succeeded' then
    if intent_amount <> checkout.total or upper(intent_currency) <> checkout.currency then
      return 'mismatch';
    end if;
    if checkout.payment_status = 'succeeded' then
      outcome := 'already_paid';
    end if;
    update app.checkouts c set payment_status = 'succeeded' where c.id = checkout.id;
    select array_agg(o.id order by o.id) into ids from app.orders o where o.checkout_id = checkout.id;
    perform 1 from app.orders o where o.id = any(ids) order by o.id for update;
    perform app_private.lock_order_products(ids);
    for target in select * from app.orders o where o.id = any(ids) order by o.id loop
      if target.status = 'pending_payment' then
        perform app_private.move_order(target, 'paid', 'system', null, 'payment succeeded');
      elsif target.status = 'cancelled' and target.payment_status in ('pending', 'failed') then
        -- Paid after it was cancelled (the reservation expired first): the money goes back.
        update app.orders o set payment_status = 'refunded' where o.id = target.id
        returning * into target;
        perform app_private.request_refund(target, 'paid after the order was cancelled', null);
        perform app_private.emit_order_event(target, 'order.status_changed');
      end if;
    end loop;
    perform app_private.close_checkout_if_settled(checkout.id);
    return outcome;
  end if;

  if intent_status = 'requires_payment_method' and attempt_failed
     and checkout.payment_status in ('pending', 'failed') then
    update app.checkouts c set payment_status = 'failed' where c.id = checkout.id;
    for target in
      update app.orders o set payment_status = 'failed'
      where o.checkout_id = checkout.id and o.status = 'pending_payment'
      returning *
    loop
      perform app_private.after_order_change(target, 'order.payment_failed');
    end loop;
    return 'failed';
  end if;
  return 'ignored';
end;
$$;
comment on function app_private.apply_payment_intent(text, text, bigint, text, boolean) is
  'What a PaymentIntent''s current state (read from the provider by the store.stripe_event job, never taken from the event) does to its checkout: success pays the unpaid orders (system actor) if amount and currency match, and refunds orders cancelled before the money came; a failed attempt marks the payment failed (payable again until the reservation expires). Idempotent: the same state twice changes nothing, so replayed and out-of-order events are harmless.';

/* The provider's answer to a refund request (store.refund job). */
create function app_private.record_refund_result(
  target_order_id uuid,
  refund_id text,
  result app.refund_status,
  failure text default null
) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  target app.orders;
begin
  update app.refunds r
  set status = result,
      provider_refund_id = coalesce(refund_id, r.provider_refund_id),
      failure_reason = failure,
      succeeded_at = case when result = 'succeeded' then coalesce(r.succeeded_at, now()) else r.succeeded_at end
  where r.order_id = target_order_id and r.status <> result;
  if found then
    select * into target from app.orders o where o.id = target_order_id;
    perform app_private.after_order_change(target, 'order.refund_' || result::text);
  end if;
end;
$$;
comment on function app_private.record_refund_result(uuid, text, app.refund_status, text) is
  'Records what the provider said to a refund (its id, succeeded or failed with the reason); repeating the same result changes nothing.';

/* The refund a store.refund job must make, or nothing when it is already done. */
create function app_private.refund_to_make(target_order_id uuid)
returns table (payment_intent_id text, amount bigint, currency text, status app.refund_status)
language sql stable
set search_path = ''
as $$
  select c.payment_intent_id, r.amount, r.currency, r.status
  from app.refunds r
  join app.orders o on o.id = r.order_id
  join app.checkouts c on c.id = o.checkout_id
  where r.order_id = target_order_id
$$;
comment on function app_private.refund_to_make(uuid) is
  'What a store.refund job needs: the checkout''s payment intent, the amount and currency owed, and the refund''s status (a succeeded one is not made again).';

revoke execute on all functions in schema app, app_private from public;
