/*
 * Orders: checkouts (the orders paid together, one PaymentIntent), one order per vendor with its
 * items at the server's prices, stock reserved in the same transaction, the order state machine
 * (a table of allowed moves and who may make each, checked by one function, every move recorded
 * in the order's history and announced live), refunds owed, reservation expiry and
 * auto-completion (pg_cron).
 *
 * Locking, so that nothing deadlocks and nothing oversells: every path that changes stock locks
 * the product rows it needs in one statement ordered by id (`select ... order by id for no key
 * update`: the foreign-key locks of order items do not block it) and checks availability under
 * those locks before changing it; paths that touch several orders of a checkout lock the checkout
 * row first, then its orders by id. The checkout takes its product locks last, so they are held
 * only for the moment before its commit. Stock is only ever changed here, in SQL.
 *
 * Tables: app.order_transitions (data: the contract's table), app.checkouts,
 * app_private.checkout_secrets, app.orders, app.order_items, app.order_history, app.refunds.
 * Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.order_status as enum (
  'pending_payment', 'paid', 'processing', 'shipped', 'delivered', 'completed', 'cancelled', 'refunded'
);
comment on type app.order_status is
  'Where an order is; app.order_transitions says which moves exist and who may make them.';

create type app.payment_status as enum ('pending', 'succeeded', 'failed', 'refunded');
comment on type app.payment_status is
  'The payment of a checkout and of each of its orders: pending (not paid yet), succeeded, failed (the last attempt failed; payable again until the reservation expires), refunded (a refund is owed or made: app.refunds says which).';

create type app.order_actor as enum ('buyer', 'vendor', 'admin', 'system');
comment on type app.order_actor is
  'Who moves an order: its buyer, its vendor''s owner, an ADMIN, or the system (payments, expiry, auto-completion).';

create type app.refund_status as enum ('pending', 'succeeded', 'failed');
comment on type app.refund_status is
  'A refund owed to a buyer: pending (queued for the payment provider), succeeded (the provider accepted it), failed (the provider refused it; an operator must look).';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.order_transitions (
  from_status app.order_status not null,
  to_status app.order_status not null,
  actor app.order_actor not null,
  primary key (from_status, to_status, actor)
);
comment on table app.order_transitions is
  'The order state machine as data, exactly the contract''s table: each allowed move and each actor who may make it. app.change_order_status and app_private.move_order accept nothing else.';

create table app.checkouts (
  id uuid primary key default gen_random_uuid(),
  buyer_id uuid references app.users (id) on delete set null,
  total bigint not null check (total > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  provider text not null check (provider in ('stripe', 'dev')),
  payment_intent_id text unique check (char_length(payment_intent_id) between 1 and 255),
  payment_status app.payment_status not null default 'pending',
  idempotency_key text check (char_length(idempotency_key) between 1 and 255),
  reserved_until timestamptz not null,
  closed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint checkouts_buyer_idempotency_key unique (buyer_id, idempotency_key)
);
comment on table app.checkouts is
  'The orders a buyer pays together: one PaymentIntent (transfer_group = this id) for their total. reserved_until is when unpaid stock goes back; closed_at is set once no order of it awaits payment. Written only by the order functions.';

create table app_private.checkout_secrets (
  checkout_id uuid primary key references app.checkouts (id) on delete cascade,
  client_secret text not null
);
comment on table app_private.checkout_secrets is
  'The PaymentIntent''s client secret, which lets its holder confirm the payment: given to the buyer in the checkout answer only, never readable through RLS.';

create table app.orders (
  id uuid primary key default gen_random_uuid(),
  checkout_id uuid not null references app.checkouts (id) on delete cascade,
  buyer_id uuid references app.users (id) on delete set null,
  vendor_id uuid not null references app.vendors (id) on delete restrict,
  vendor_name text not null,
  status app.order_status not null default 'pending_payment',
  total bigint not null check (total > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  payment_status app.payment_status not null default 'pending',
  shipping_address jsonb,
  carrier text check (char_length(carrier) between 1 and 100),
  tracking_number text check (char_length(tracking_number) between 1 and 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  paid_at timestamptz,
  shipped_at timestamptz,
  delivered_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  refunded_at timestamptz
);
comment on table app.orders is
  'One vendor''s part of a checkout: its items at the prices of the moment, its status (app.order_transitions) and payment status, shipping and the times of each step (delivered_at decides which settlement it belongs to). vendor_name is kept as it was when ordered. Written only by the order functions; buyer, vendor owner and ADMINs read it.';

create table app.order_items (
  order_id uuid not null references app.orders (id) on delete cascade,
  product_id uuid not null references app.products (id) on delete restrict,
  title text not null,
  unit_price bigint not null check (unit_price > 0),
  quantity integer not null check (quantity between 1 and 1000),
  total bigint not null,
  primary key (order_id, product_id),
  constraint order_items_total check (total = unit_price * quantity)
);
comment on table app.order_items is
  'What an order holds, with the title and unit price taken from the product by the server at checkout (a client''s prices are never read).';

create table app.order_history (
  id bigint generated always as identity primary key,
  order_id uuid not null references app.orders (id) on delete cascade,
  from_status app.order_status,
  to_status app.order_status not null,
  actor app.order_actor not null,
  actor_id uuid references app.users (id) on delete set null,
  reason text check (char_length(reason) <= 1000),
  created_at timestamptz not null default now()
);
comment on table app.order_history is
  'Every move of an order (the first row is its creation, from null), who made it and why. Append-only: written by app_private.move_order and the checkout.';

create table app.refunds (
  id uuid primary key default gen_random_uuid(),
  order_id uuid not null unique references app.orders (id) on delete cascade,
  amount bigint not null check (amount > 0),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  status app.refund_status not null default 'pending',
  reason text check (char_length(reason) <= 1000),
  requested_by uuid references app.users (id) on delete set null,
  provider_refund_id text unique,
  failure_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  succeeded_at timestamptz
);
comment on table app.refunds is
  'A refund owed to a buyer for one order (at most one per order: the unique key), made through the payment provider by a store.refund job with the idempotency key refund:<orderId>.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create index checkouts_buyer_idx on app.checkouts (buyer_id, created_at desc);
-- Reservation expiry scans only checkouts still awaiting payment.
create index checkouts_open_reserved_until_idx on app.checkouts (reserved_until) where closed_at is null;
create index orders_buyer_idx on app.orders (buyer_id, created_at desc, id desc);
create index orders_vendor_idx on app.orders (vendor_id, created_at desc, id desc);
create index orders_checkout_idx on app.orders (checkout_id, id);
create index orders_created_idx on app.orders (created_at);
-- Auto-completion and the settlement's candidates.
create index orders_delivered_idx on app.orders (delivered_at) where status = 'delivered';
create index orders_settleable_idx on app.orders (vendor_id, delivered_at)
  where status in ('delivered', 'completed') and payment_status = 'succeeded';
create index orders_refunded_idx on app.orders (refunded_at) where status = 'refunded';
create index order_items_product_idx on app.order_items (product_id);
create index order_history_order_idx on app.order_history (order_id, id);
create index order_history_actor_idx on app.order_history (actor_id);
create index refunds_requested_by_idx on app.refunds (requested_by);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create trigger checkouts_touch_updated_at before update on app.checkouts
  for each row execute function app_private.touch_updated_at();
create trigger orders_touch_updated_at before update on app.orders
  for each row execute function app_private.touch_updated_at();
create trigger refunds_touch_updated_at before update on app.refunds
  for each row execute function app_private.touch_updated_at();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.order_transitions enable row level security;
alter table app.checkouts enable row level security;
alter table app_private.checkout_secrets enable row level security;
alter table app.orders enable row level security;
alter table app.order_items enable row level security;
alter table app.order_history enable row level security;
alter table app.refunds enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

/* An order as GET /api/store/orders/:id shows it (items and history read with the caller's rights). */
create function app.order_json(target app.orders) returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  return (
    select jsonb_build_object(
      'id', target.id,
      'checkoutId', target.checkout_id,
      'buyerId', target.buyer_id,
      'vendor', jsonb_build_object('id', target.vendor_id, 'name', target.vendor_name),
      'status', target.status,
      'items', coalesce((
        select jsonb_agg(jsonb_build_object(
          'productId', i.product_id,
          'title', i.title,
          'unitPrice', jsonb_build_object('amount', i.unit_price, 'currency', target.currency),
          'quantity', i.quantity,
          'total', jsonb_build_object('amount', i.total, 'currency', target.currency)
        ) order by i.title, i.product_id)
        from app.order_items i where i.order_id = target.id
      ), '[]'::jsonb),
      'total', jsonb_build_object('amount', target.total, 'currency', target.currency),
      'payment', jsonb_build_object(
        'status', target.payment_status,
        'refund', (
          select jsonb_build_object('status', r.status,
                                    'amount', jsonb_build_object('amount', r.amount, 'currency', r.currency))
          from app.refunds r where r.order_id = target.id
        )
      ),
      'shipping', jsonb_build_object(
        'address', target.shipping_address,
        'carrier', target.carrier,
        'trackingNumber', target.tracking_number
      ),
      'history', coalesce((
        select jsonb_agg(jsonb_build_object(
          'from', h.from_status, 'to', h.to_status, 'actor', h.actor, 'reason', h.reason,
          'at', to_char(h.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        ) order by h.id)
        from app.order_history h where h.order_id = target.id
      ), '[]'::jsonb),
      'createdAt', to_char(target.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'updatedAt', to_char(target.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    )
  );
end;
$$;
comment on function app.order_json(app.orders) is
  'An order as the API shows it (GET /api/store/orders/:id and every order event): vendor, items with money, total, payment (with its refund), shipping and history. security invoker: items, refund and history are read with the caller''s rights, which show them to exactly those who see the order.';

/* Announces an order to its buyer and its vendor, carrying the order as GET returns it. */
create function app_private.emit_order_event(target app.orders, event text) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  payload jsonb := app.order_json(target);
begin
  if target.buyer_id is not null then
    perform app_private.emit_event('user:' || target.buyer_id, event, payload);
  end if;
  perform app_private.emit_event('vendor:' || target.vendor_id, event, payload);
end;
$$;
comment on function app_private.emit_order_event(app.orders, text) is
  'order.created / order.status_changed on user:<buyerId> and vendor:<vendorId>, each carrying the order as GET /api/store/orders/:id returns it. Called inside the order functions, with their rights.';

/*
 * The SYSTEM notifications of an order change (data.kind names the change), through the one
 * notify function. Whoever made a move is not told of it. The buyer hears of payment, shipping,
 * delivery, cancellation, refunds and failed payments; the vendor's owner of a paid order to
 * fulfil and of a paid order cancelled, refunded or completed.
 */
create function app_private.after_order_change(target app.orders, event text) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  last app.order_history;
  owner uuid;
  amount text := to_char(target.total / 100.0, 'FM999999999990.00') || ' ' || target.currency;
  ref text := left(target.id::text, 8);
  data jsonb := jsonb_build_object('kind', event, 'orderId', target.id, 'checkoutId', target.checkout_id,
                                   'vendorId', target.vendor_id, 'status', target.status);
  title text;
  body text;
begin
  select * into last from app.order_history h where h.order_id = target.id order by h.id desc limit 1;
  select v.owner_id into owner from app.vendors v where v.id = target.vendor_id;

  -- The buyer.
  title := null;
  if event = 'order.status_changed' and target.buyer_id is distinct from last.actor_id then
    case target.status
      when 'paid' then
        title := 'Payment received';
        body := format('Your order %s from %s is paid (%s).', ref, target.vendor_name, amount);
      when 'shipped' then
        title := 'Your order has shipped';
        body := format('%s shipped your order %s%s%s.', target.vendor_name, ref,
                       coalesce(' with ' || target.carrier, ''),
                       coalesce(', tracking number ' || target.tracking_number, ''));
      when 'delivered' then
        title := 'Your order was delivered';
        body := format('Your order %s from %s was delivered.', ref, target.vendor_name);
      when 'cancelled' then
        title := 'Your order was cancelled';
        body := format('Your order %s from %s was cancelled%s.', ref, target.vendor_name,
                       coalesce(': ' || last.reason, ''))
                || case when target.payment_status = 'refunded' then ' Your payment will be refunded.' else '' end;
      when 'refunded' then
        title := 'Your order was refunded';
        body := format('Your order %s from %s was refunded (%s).', ref, target.vendor_name, amount);
      else
        title := null;
    end case;
  elsif event = 'order.payment_failed' then
    title := 'Your payment failed';
    body := format('The payment for your order %s from %s failed. You can pay again until the reservation ends.',
                   ref, target.vendor_name);
  elsif event = 'order.refund_succeeded' then
    title := 'Your refund was issued';
    body := format('%s for your order %s from %s is on its way back to you.', amount, ref, target.vendor_name);
  end if;
  if title is not null and target.buyer_id is not null then
    perform app_private.notify(target.buyer_id, 'SYSTEM', title, body, data, 'normal',
      case when event = 'order.payment_failed' then 'checkout-payment:' || target.checkout_id end);
  end if;

  -- The vendor's owner.
  title := null;
  if event = 'order.status_changed' and owner is not null and owner is distinct from last.actor_id then
    if target.status = 'paid' then
      title := 'New order to fulfil';
      body := format('Order %s (%s) is paid and waits for you.', ref, amount);
    elsif target.status = 'cancelled' and last.from_status in ('paid', 'processing') then
      title := 'An order was cancelled';
      body := format('Order %s (%s) was cancelled%s; the buyer is refunded.', ref, amount,
                     coalesce(': ' || last.reason, ''));
    elsif target.status = 'refunded' then
      title := 'An order was refunded';
      body := format('Order %s (%s) was refunded; it is deducted from your next settlement.', ref, amount);
    elsif target.status = 'completed' then
      title := 'An order was completed';
      body := format('Order %s (%s) is complete.', ref, amount);
    end if;
  end if;
  if title is not null then
    perform app_private.notify(owner, 'SYSTEM', title, body, data);
  end if;
end;
$$;
comment on function app_private.after_order_change(app.orders, text) is
  'The SYSTEM notifications of an order change (data: kind, orderId, checkoutId, vendorId, status), through app_private.notify: the buyer on payment, shipping, delivery, cancellation, refund, a failed payment (one per checkout, collapsed) and an issued refund; the vendor''s owner on a paid order to fulfil and a paid order cancelled, refunded or completed. Whoever made the move is not told of it.';

/* Locks the products of the given orders, in id order: the one lock order every stock change uses. */
create function app_private.lock_order_products(order_ids uuid[]) returns void
language sql volatile
set search_path = ''
as $$
  select 1 from app.products p
  where p.id in (select i.product_id from app.order_items i where i.order_id = any(order_ids))
  order by p.id
  for no key update of p
$$;
comment on function app_private.lock_order_products(uuid[]) is
  'Row-locks the products of some orders in id order before their stock changes: every path takes product locks in this one order, so two of them never wait on each other in a cycle.';

/* Queues the refund of an order (once: the refund row is unique per order). */
create function app_private.request_refund(target app.orders, refund_reason text, requested uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  insert into app.refunds (order_id, amount, currency, reason, requested_by)
  values (target.id, target.total, target.currency, refund_reason, requested)
  on conflict (order_id) do nothing;
  if found then
    perform app_private.enqueue_job('store.refund', jsonb_build_object('orderId', target.id),
                                    now(), 'refund:' || target.id);
  end if;
end;
$$;
comment on function app_private.request_refund(app.orders, text, uuid) is
  'Records the refund owed for an order and queues the store.refund job (dedupe key refund:<orderId>) that makes it through the payment provider with that same idempotency key: at most one refund per order, however often it is asked for.';

/*
 * Moves one order, with its effects, without asking who may: callers check the actor first
 * (app.change_order_status) or are the system. The (from, to, actor) triple must be a row of
 * app.order_transitions. The caller holds the order's row lock (and the checkout's, for moves
 * out of pending_payment).
 */
create function app_private.move_order(
  target app.orders,
  to_status app.order_status,
  by_actor app.order_actor,
  by_user uuid,
  move_reason text,
  tracking text default null,
  ship_carrier text default null
) returns app.orders
language plpgsql volatile
set search_path = ''
as $$
declare
  moved app.orders;
begin
  if not exists (
    select 1 from app.order_transitions t
    where t.from_status = target.status and t.to_status = move_order.to_status and t.actor = by_actor
  ) then
    raise exception 'an order cannot move from % to % by %', target.status, to_status, by_actor
      using errcode = 'AG422', hint = 'invalid_transition';
  end if;

  -- Stock: a payment turns the reservation into a sale; a cancellation before payment releases
  -- it; a cancellation or refund after payment puts the units back.
  if target.status = 'pending_payment' and to_status in ('paid', 'cancelled') then
    perform app_private.lock_order_products(array[target.id]);
    update app.products p
    set reserved = p.reserved - i.quantity,
        stock = p.stock - case when to_status = 'paid' then i.quantity else 0 end
    from app.order_items i
    where i.order_id = target.id and p.id = i.product_id;
  elsif to_status in ('cancelled', 'refunded') then
    perform app_private.lock_order_products(array[target.id]);
    update app.products p set stock = p.stock + i.quantity
    from app.order_items i
    where i.order_id = target.id and p.id = i.product_id;
    perform app_private.request_refund(target, coalesce(move_reason, to_status::text), by_user);
  end if;

  update app.orders o
  set status = to_status,
      payment_status = case
        when to_status = 'paid' then 'succeeded'::app.payment_status
        when to_status in ('cancelled', 'refunded') and target.status <> 'pending_payment' then 'refunded'
        else o.payment_status end,
      paid_at = case when to_status = 'paid' then now() else o.paid_at end,
      shipped_at = case when to_status = 'shipped' then now() else o.shipped_at end,
      tracking_number = case when to_status = 'shipped' then tracking else o.tracking_number end,
      carrier = case when to_status = 'shipped' then ship_carrier else o.carrier end,
      delivered_at = case when to_status = 'delivered' then now() else o.delivered_at end,
      completed_at = case when to_status = 'completed' then now() else o.completed_at end,
      cancelled_at = case when to_status = 'cancelled' then now() else o.cancelled_at end,
      refunded_at = case when to_status = 'refunded' then now() else o.refunded_at end
  where o.id = target.id
  returning * into moved;

  insert into app.order_history (order_id, from_status, to_status, actor, actor_id, reason)
  values (target.id, target.status, to_status, by_actor, by_user, move_reason);

  perform app_private.emit_order_event(moved, 'order.status_changed');
  perform app_private.after_order_change(moved, 'order.status_changed');
  return moved;
end;
$$;
comment on function app_private.move_order(app.orders, app.order_status, app.order_actor, uuid, text, text, text) is
  'One move of an order and its effects: stock (sale, release, restore, under ordered row locks), refunds owed (cancellation after payment, refund), payment status, the step''s time, the history row, the live order.status_changed to buyer and vendor. Refuses (AG422) a move app.order_transitions does not list for that actor; who the actor is is the caller''s business.';

/* Closes a checkout when none of its orders awaits payment any more; queues the PaymentIntent's cancellation if it was never paid. */
create function app_private.close_checkout_if_settled(target_checkout_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  checkout app.checkouts;
begin
  select * into checkout from app.checkouts c where c.id = target_checkout_id;
  if checkout.closed_at is not null or exists (
    select 1 from app.orders o where o.checkout_id = target_checkout_id and o.status = 'pending_payment'
  ) then
    return;
  end if;
  update app.checkouts c set closed_at = now() where c.id = target_checkout_id;
  if checkout.payment_status <> 'succeeded' and checkout.payment_intent_id is not null then
    perform app_private.enqueue_job('store.payment_intent_cancel',
      jsonb_build_object('checkoutId', target_checkout_id), now(), 'pi-cancel:' || target_checkout_id);
  end if;
end;
$$;
comment on function app_private.close_checkout_if_settled(uuid) is
  'Marks a checkout closed once no order of it awaits payment (so expiry no longer looks at it) and, when it was never paid, queues the cancellation of its PaymentIntent (store.payment_intent_cancel), so a late payment attempt fails at the provider instead of charging for cancelled orders.';

/* Cancels every order of a checkout that still awaits payment (the checkout is paid as one). */
create function app_private.cancel_unpaid_checkout(
  target_checkout_id uuid,
  by_actor app.order_actor,
  by_user uuid,
  cancel_reason text
) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  pending app.orders;
  ids uuid[];
begin
  perform 1 from app.checkouts c where c.id = target_checkout_id for update;
  select array_agg(o.id order by o.id) into ids from app.orders o
  where o.checkout_id = target_checkout_id and o.status = 'pending_payment';
  if ids is null then
    return;
  end if;
  perform 1 from app.orders o where o.id = any(ids) order by o.id for update;
  perform app_private.lock_order_products(ids);
  for pending in
    select * from app.orders o where o.id = any(ids) and o.status = 'pending_payment' order by o.id
  loop
    perform app_private.move_order(pending, 'cancelled', by_actor, by_user, cancel_reason);
  end loop;
  perform app_private.close_checkout_if_settled(target_checkout_id);
end;
$$;
comment on function app_private.cancel_unpaid_checkout(uuid, app.order_actor, uuid, text) is
  'Cancels all orders of a checkout that await payment, releasing their reservations: one PaymentIntent pays the whole checkout, so an unpaid checkout is cancelled whole (by its buyer, an ADMIN or the expiry). Locks the checkout, then its orders, then their products, in that order.';

/* A checkout as the order route answers it. */
create function app_private.checkout_json(target_checkout_id uuid, client_secret text) returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  return (
    select jsonb_build_object('checkout', jsonb_build_object(
      'id', c.id,
      'total', jsonb_build_object('amount', c.total, 'currency', c.currency),
      'reservedUntil', to_char(c.reserved_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'orders', coalesce((select jsonb_agg(app.order_json(o) order by o.vendor_name, o.id)
                          from app.orders o where o.checkout_id = c.id), '[]'::jsonb),
      'payment', jsonb_build_object(
        'provider', c.provider,
        'paymentIntentId', c.payment_intent_id,
        'clientSecret', client_secret,
        'status', c.payment_status
      )
    ))
    from app.checkouts c where c.id = target_checkout_id
  );
end;
$$;
comment on function app_private.checkout_json(uuid, text) is
  'The answer of POST /api/store/orders: { checkout: { id, total, reservedUntil, orders, payment: { provider, paymentIntentId, clientSecret, status } } }.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy order_transitions_select_all on app.order_transitions for select to authenticated
  using (true);

create policy checkouts_select_buyer on app.checkouts for select to authenticated
  using (buyer_id = (select auth.uid()) and (select app.has_role('SUBSCRIBER')));
create policy checkouts_select_admin on app.checkouts for select to authenticated
  using ((select app.is_admin()));

create policy orders_select_buyer on app.orders for select to authenticated
  using (buyer_id = (select auth.uid()) and (select app.has_role('SUBSCRIBER')));
create policy orders_select_vendor on app.orders for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()));
create policy orders_select_admin on app.orders for select to authenticated
  using ((select app.is_admin()));

-- Items, history and refunds: whoever sees the order (the orders policies apply inside).
create policy order_items_select_visible on app.order_items for select to authenticated
  using (exists (select 1 from app.orders o where o.id = order_id));
create policy order_history_select_visible on app.order_history for select to authenticated
  using (exists (select 1 from app.orders o where o.id = order_id));
create policy refunds_select_visible on app.refunds for select to authenticated
  using (exists (select 1 from app.orders o where o.id = order_id));

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant usage on type app.order_status, app.payment_status, app.order_actor, app.refund_status to authenticated;
grant select on app.order_transitions to authenticated;
grant select on app.checkouts to authenticated;
grant select on app.orders to authenticated;
grant select on app.order_items to authenticated;
grant select on app.order_history to authenticated;
grant select on app.refunds to authenticated;
grant execute on function app.order_json(app.orders) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/*
 * The checkout, in one transaction: the idempotency key, the products locked in id order, the
 * rules (only active products of approved vendors, in the store's currency; enough available
 * stock), the reservation, the checkout and one order per vendor at the server's prices, the
 * history and the live events. The payment intent is created afterwards by the API (outside this
 * transaction, so no product lock waits on the provider) and attached with
 * app.attach_payment_intent.
 *
 * Returns { replay: <first response> } for a replayed key, { resume: <checkout id>, total,
 * currency } for a key whose first request created the checkout but did not finish (the API
 * completes it), or { created: <checkout id>, total, currency }.
 */
create function app.create_checkout(
  requested_items jsonb,
  shipping_address jsonb,
  idempotency_key text,
  request_hash text,
  payment_provider text
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
declare
  me uuid := auth.uid();
  claim jsonb;
  store_currency text := app_private.store_currency();
  refused jsonb;
  short jsonb;
  wanted_ids uuid[];
  wanted_quantities integer[];
  wanted_prices bigint[];
  new_checkout_id uuid;
  checkout_total bigint;
  created app.orders;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'ordering needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  if jsonb_typeof(requested_items) <> 'array' or jsonb_array_length(requested_items) = 0 then
    raise exception 'a checkout needs items' using errcode = 'AG400';
  end if;

  if idempotency_key is not null then
    claim := app.claim_idempotency_key(idempotency_key, 'create_checkout', request_hash);
    if claim ? 'conflict' then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    if jsonb_typeof(claim -> 'response') = 'object' then
      return jsonb_build_object('replay', claim -> 'response');
    end if;
    if claim is not null then
      -- The key's first request committed its checkout but never stored an answer.
      select jsonb_build_object('resume', c.id, 'total', c.total, 'currency', c.currency) into claim
      from app.checkouts c
      where c.buyer_id = me and c.idempotency_key = create_checkout.idempotency_key;
      if claim is not null then
        return claim;
      end if;
      raise exception 'a request with this Idempotency-Key is still running' using errcode = 'AG409';
    end if;
  end if;

  -- The wanted quantities, one per product (a product named twice is summed).
  select array_agg(x.product_id order by x.product_id), array_agg(x.quantity order by x.product_id)
  into wanted_ids, wanted_quantities
  from (
    select (e ->> 'productId')::uuid as product_id, sum((e ->> 'quantity')::integer)::integer as quantity
    from jsonb_array_elements(requested_items) e
    group by 1
  ) x;
  if exists (select 1 from unnest(wanted_quantities) q where q < 1 or q > 1000) then
    raise exception 'a quantity is from 1 to 1000' using errcode = 'AG400';
  end if;

  -- First without locks: the refusals answer before anything is written.
  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'reason',
           case when p.id is null then 'not_found'
                when v.status <> 'approved' then 'vendor_not_selling'
                when p.status <> 'active' then 'not_active'
                else 'wrong_currency' end) order by w.product_id)
  into refused
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  left join app.products p on p.id = w.product_id
  left join app.vendors v on v.id = p.vendor_id
  where p.id is null or p.status <> 'active' or v.status <> 'approved' or p.currency <> store_currency;
  if refused is not null then
    raise exception 'only active products of approved vendors can be ordered' using errcode = 'AG422',
      detail = jsonb_build_object('items', refused)::text;
  end if;

  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'requested', w.quantity,
                                      'available', p.stock - p.reserved) order by w.product_id)
  into short
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id
  where p.stock - p.reserved < w.quantity;
  if short is not null then
    raise exception 'not enough stock for % of the items', jsonb_array_length(short)
      using errcode = 'AG422', hint = 'insufficient_stock', detail = jsonb_build_object('items', short)::text;
  end if;

  -- The server's prices, in the order of wanted_ids (checked again under the locks below).
  select array_agg(p.price_amount order by w.product_id), sum(p.price_amount * w.quantity)
  into wanted_prices, checkout_total
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id;

  insert into app.checkouts (buyer_id, total, currency, provider, idempotency_key, reserved_until)
  values (me, checkout_total, store_currency, payment_provider, create_checkout.idempotency_key,
          now() + make_interval(mins => app.config_int('store', 'reservationMinutes')))
  returning id into new_checkout_id;

  insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency, shipping_address)
  select new_checkout_id, me, v.id, v.name, sum(w.price * w.quantity), store_currency, shipping_address
  from unnest(wanted_ids, wanted_quantities, wanted_prices) as w (product_id, quantity, price)
  join app.products p on p.id = w.product_id
  join app.vendors v on v.id = p.vendor_id
  group by v.id, v.name;

  insert into app.order_items (order_id, product_id, title, unit_price, quantity, total)
  select o.id, p.id, p.title, w.price, w.quantity, w.price * w.quantity
  from unnest(wanted_ids, wanted_quantities, wanted_prices) as w (product_id, quantity, price)
  join app.products p on p.id = w.product_id
  join app.orders o on o.checkout_id = new_checkout_id and o.vendor_id = p.vendor_id;

  insert into app.order_history (order_id, from_status, to_status, actor, actor_id, reason)
  select o.id, null, 'pending_payment', 'buyer', me, 'checkout'
  from app.orders o where o.checkout_id = new_checkout_id;

  for created in select * from app.orders o where o.checkout_id = new_checkout_id order by o.id loop
    perform app_private.emit_order_event(created, 'order.created');
  end loop;

  -- Last, the row locks, so they are held only until the commit that follows: in one fixed order
  -- (product id), so concurrent checkouts queue and never deadlock; NO KEY UPDATE, which the
  -- order items' foreign-key locks (KEY SHARE) of other checkouts do not block. A rollback
  -- (refused below) takes the rows and events above with it.
  perform 1 from app.products p where p.id = any(wanted_ids) order by p.id for no key update of p;

  if exists (
    select 1 from unnest(wanted_ids, wanted_prices) as w (product_id, price)
    join app.products p on p.id = w.product_id
    join app.vendors v on v.id = p.vendor_id
    where p.price_amount <> w.price or p.status <> 'active' or v.status <> 'approved'
       or p.currency <> store_currency
  ) then
    raise exception 'a product changed during the checkout; try again' using errcode = 'AG409';
  end if;

  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'requested', w.quantity,
                                      'available', p.stock - p.reserved) order by w.product_id)
  into short
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id
  where p.stock - p.reserved < w.quantity;
  if short is not null then
    raise exception 'not enough stock for % of the items', jsonb_array_length(short)
      using errcode = 'AG422', hint = 'insufficient_stock', detail = jsonb_build_object('items', short)::text;
  end if;

  update app.products p set reserved = p.reserved + w.quantity
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  where p.id = w.product_id;

  return jsonb_build_object('created', new_checkout_id, 'total', checkout_total, 'currency', store_currency);
end;
$$;
comment on function app.create_checkout(jsonb, jsonb, text, text, text) is
  'The checkout in one transaction: idempotency key (replay, resume or AG409), only active products of approved vendors in the store''s currency (AG422 with the refused items), enough available stock (AG422 insufficient_stock with the items short), the checkout, one order per vendor with items at the server''s prices, history and order.created events, and last the products row-locked in id order (held only until the commit), the rules and the stock checked again under the locks (AG409 if a price or status changed meanwhile) and the reservation (store.reservationMinutes). security definer: buyers cannot write products or orders; every rule is checked here, with no read-modify-write outside the database.';
grant execute on function app.create_checkout(jsonb, jsonb, text, text, text) to authenticated;

/*
 * The checkout in one statement, for the API: the caller's role and claims set for this
 * statement's own transaction, then app.create_checkout as the caller. Sent on its own (no
 * explicit transaction), the commit follows on the server at once, so the product locks the
 * checkout takes last are never held across a round trip to the API.
 */
create function app_private.create_checkout_as(
  claims text,
  requested_items jsonb,
  shipping_address jsonb,
  idempotency_key text,
  request_hash text,
  payment_provider text
) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.create_checkout(requested_items, shipping_address, idempotency_key, request_hash,
                             payment_provider);
end;
$$;
comment on function app_private.create_checkout_as(text, jsonb, jsonb, text, text, text) is
  'A checkout in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.create_checkout as the caller, so the commit follows at once on the server and the products'' row locks are never held across a round trip. Only the API''s own role may call it: it trusts the claims it is given.';

/* Records the PaymentIntent made for the caller's checkout and returns (and stores) the answer. */
create function app.attach_payment_intent(
  target_checkout_id uuid,
  intent_id text,
  intent_client_secret text,
  idempotency_key text
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
declare
  checkout app.checkouts;
  answer jsonb;
begin
  select * into checkout from app.checkouts c
  where c.id = target_checkout_id and c.buyer_id = auth.uid()
  for update;
  if not found then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  if checkout.payment_intent_id is not null and checkout.payment_intent_id <> intent_id then
    raise exception 'the checkout has another payment intent' using errcode = 'AG409';
  end if;
  update app.checkouts c set payment_intent_id = intent_id where c.id = checkout.id;
  insert into app_private.checkout_secrets (checkout_id, client_secret)
  values (checkout.id, intent_client_secret)
  on conflict (checkout_id) do update set client_secret = excluded.client_secret;
  -- Cancelled meanwhile (expiry): the intent must not stay payable.
  if checkout.closed_at is not null and checkout.payment_status <> 'succeeded' then
    perform app_private.enqueue_job('store.payment_intent_cancel',
      jsonb_build_object('checkoutId', checkout.id), now(), 'pi-cancel:' || checkout.id);
  end if;
  answer := app_private.checkout_json(checkout.id, intent_client_secret);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, answer);
  end if;
  return answer;
end;
$$;
comment on function app.attach_payment_intent(uuid, text, text, text) is
  'Attaches the PaymentIntent the API created (idempotently: the same intent again is fine, another is AG409) to the caller''s checkout, keeps its client secret apart, and returns the checkout answer, stored for the idempotency key. security definer: checkouts have no update grant; only the buyer''s own checkout is touched.';
grant execute on function app.attach_payment_intent(uuid, text, text, text) to authenticated;

/* The provider could not make the payment intent: the checkout is cancelled and the key freed. */
create function app.abandon_checkout(target_checkout_id uuid, idempotency_key text) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not exists (
    select 1 from app.checkouts c
    where c.id = target_checkout_id and c.buyer_id = auth.uid() and c.payment_intent_id is null
  ) then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  perform app_private.cancel_unpaid_checkout(target_checkout_id, 'system', null,
                                             'the payment provider did not answer');
  if idempotency_key is not null then
    delete from app_private.idempotency_keys k
    where k.user_id = auth.uid() and k.key = abandon_checkout.idempotency_key;
    update app.checkouts c set idempotency_key = null where c.id = target_checkout_id;
  end if;
end;
$$;
comment on function app.abandon_checkout(uuid, text) is
  'When the payment provider does not answer (503 payment_provider_unavailable), cancels the caller''s checkout that has no payment intent yet (its stock goes back at once) and frees its Idempotency-Key, so a retry starts afresh. security definer: as app.create_checkout.';
grant execute on function app.abandon_checkout(uuid, text) to authenticated;

/*
 * A move of an order by a person. The precedence of refusals is the contract's: an order the
 * caller cannot see is AG404; an actor who may never set this status is AG403; a move the table
 * does not allow from the current status is AG422 invalid_transition (with the moves the caller
 * may make now); shipping without a tracking number is AG400.
 */
create function app.change_order_status(
  target_order_id uuid,
  to_status app.order_status,
  move_reason text default null,
  tracking text default null,
  ship_carrier text default null
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  target app.orders;
  actors app.order_actor[] := '{}';
  acting app.order_actor;
  allowed jsonb;
begin
  select * into target from app.orders o where o.id = target_order_id;
  if found and me is not null and app.has_role('SUBSCRIBER') then
    if target.buyer_id = me then
      actors := actors || 'buyer'::app.order_actor;
    end if;
    if target.vendor_id in (select app.my_vendor_ids()) then
      actors := actors || 'vendor'::app.order_actor;
    end if;
    if app.is_admin() then
      actors := actors || 'admin'::app.order_actor;
    end if;
  end if;
  if cardinality(actors) = 0 then
    raise exception 'order not found' using errcode = 'AG404';
  end if;
  if not exists (
    select 1 from app.order_transitions t where t.to_status = change_order_status.to_status and t.actor = any(actors)
  ) then
    raise exception 'you may not move an order to %', to_status using errcode = 'AG403';
  end if;

  -- Lock order: the checkout, then the order (then products, in move_order).
  perform 1 from app.checkouts c where c.id = target.checkout_id for update;
  select * into target from app.orders o where o.id = target_order_id for update;

  select t.actor into acting from app.order_transitions t
  where t.from_status = target.status and t.to_status = change_order_status.to_status and t.actor = any(actors)
  order by array_position(array['buyer', 'vendor', 'admin']::app.order_actor[], t.actor)
  limit 1;
  if acting is null then
    select coalesce(jsonb_agg(distinct t.to_status), '[]'::jsonb) into allowed
    from app.order_transitions t where t.from_status = target.status and t.actor = any(actors);
    raise exception 'an order that is % cannot become %', target.status, to_status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('from', target.status, 'to', to_status, 'allowed', allowed)::text;
  end if;
  if to_status = 'shipped' and char_length(btrim(coalesce(tracking, ''))) = 0 then
    raise exception 'shipping needs a trackingNumber' using errcode = 'AG400',
      detail = jsonb_build_array(jsonb_build_object('path', 'trackingNumber', 'message', 'required when shipping'))::text;
  end if;

  if target.status = 'pending_payment' and to_status = 'cancelled' then
    -- One payment intent pays the whole checkout: an unpaid checkout is cancelled whole.
    perform app_private.cancel_unpaid_checkout(target.checkout_id, acting, me,
                                               coalesce(move_reason, 'cancelled by the ' || acting));
  else
    perform app_private.move_order(target, to_status, acting, me, move_reason,
                                   btrim(tracking), nullif(btrim(ship_carrier), ''));
  end if;
  select * into target from app.orders o where o.id = target_order_id;
  return app.order_json(target);
end;
$$;
comment on function app.change_order_status(uuid, app.order_status, text, text, text) is
  'A person moves an order: buyer, vendor owner or ADMIN (the caller may hold several of these parts; the move is recorded under the first that may make it). 404 for an order the caller cannot see, then 403 for a status the caller may never set, then 422 invalid_transition (details: from, to, allowed), then 400 for shipping without a tracking number. Cancelling an unpaid order cancels its whole checkout. security definer: orders and stock have no write grants; every rule is checked here.';
grant execute on function app.change_order_status(uuid, app.order_status, text, text, text) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- Scheduled work (pg_cron; tests call the functions directly)
-- ---------------------------------------------------------------------------------------------

create function app_private.expire_reservations() returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  expired uuid;
  n integer := 0;
begin
  for expired in
    select c.id from app.checkouts c
    where c.closed_at is null and c.reserved_until < now()
    order by c.reserved_until
    for update skip locked
  loop
    perform app_private.cancel_unpaid_checkout(expired, 'system', null, 'reservation expired');
    perform app_private.close_checkout_if_settled(expired);
    n := n + 1;
  end loop;
  return n;
end;
$$;
comment on function app_private.expire_reservations() is
  'Cancels the unpaid orders of checkouts whose reservation (store.reservationMinutes) ran out, so their stock is available again, and queues the cancellation of their payment intents. Returns how many checkouts it closed. Skips checkouts locked by a payment in progress (the next run sees them). Run every minute by pg_cron.';

create function app_private.complete_delivered_orders() returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  due app.orders;
  n integer := 0;
begin
  for due in
    select o.* from app.orders o
    where o.status = 'delivered'
      and o.delivered_at < now() - make_interval(days => app.config_int('store', 'autoCompleteDays'))
    order by o.delivered_at
    for update skip locked
  loop
    perform app_private.move_order(due, 'completed', 'system', null,
                                   'completed automatically after delivery');
    n := n + 1;
  end loop;
  return n;
end;
$$;
comment on function app_private.complete_delivered_orders() is
  'Completes orders delivered more than store.autoCompleteDays ago (actor system). Run hourly by pg_cron.';

-- ---------------------------------------------------------------------------------------------
-- Data and schedules
-- ---------------------------------------------------------------------------------------------

insert into app.order_transitions (from_status, to_status, actor) values
  ('pending_payment', 'paid', 'system'),
  ('pending_payment', 'cancelled', 'buyer'),
  ('pending_payment', 'cancelled', 'admin'),
  ('pending_payment', 'cancelled', 'system'),
  ('paid', 'cancelled', 'vendor'),
  ('paid', 'cancelled', 'admin'),
  ('processing', 'cancelled', 'vendor'),
  ('processing', 'cancelled', 'admin'),
  ('paid', 'processing', 'vendor'),
  ('paid', 'processing', 'admin'),
  ('processing', 'shipped', 'vendor'),
  ('processing', 'shipped', 'admin'),
  ('shipped', 'delivered', 'vendor'),
  ('shipped', 'delivered', 'admin'),
  ('delivered', 'completed', 'buyer'),
  ('delivered', 'completed', 'admin'),
  ('delivered', 'completed', 'system'),
  ('delivered', 'refunded', 'admin'),
  ('completed', 'refunded', 'admin');

select cron.schedule('agora-expire-reservations', '* * * * *', 'select app_private.expire_reservations()');
select cron.schedule('agora-complete-delivered-orders', '29 * * * *', 'select app_private.complete_delivered_orders()');

revoke execute on all functions in schema app, app_private from public;
