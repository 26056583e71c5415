/*
 * Payments and time: a webhook event is stored once; a failed attempt leaves the checkout payable;
 * an unpaid checkout is cancelled whole (by its buyer, or by the expiry after
 * store.reservationMinutes) and its stock released; a payment that arrives after the expiry is
 * refunded; delivered orders complete after store.autoCompleteDays. None of the server functions
 * is reachable by an API role.
 */
begin;
select plan(23);

select tests.create_user('pay.buyer@example.test', 'SUBSCRIBER');
select tests.create_user('pay.seller@example.test', 'MEMBER');
select tests.create_user('pay.seller2@example.test', 'MEMBER');
select tests.create_vendor(tests.user_id('pay.seller@example.test'), 'Pay One') as v1 \gset
select tests.create_vendor(tests.user_id('pay.seller2@example.test'), 'Pay Two') as v2 \gset
select tests.create_product(:'v1', 'Lamp', 2000, 4) as lamp \gset
select tests.create_product(:'v2', 'Bulb', 150, 10) as bulb \gset

-- Webhook events are stored once.
select ok(app_private.record_stripe_event('evt_once', 'payment_intent.succeeded', false, '{"id": "evt_once"}'),
  'A new event is stored and its job queued.');
select ok(not app_private.record_stripe_event('evt_once', 'payment_intent.succeeded', false, '{"id": "evt_once"}'),
  'The same event id again does nothing.');
select is((select count(*)::int from app_private.jobs where dedupe_key = 'stripe-event:evt_once'), 1,
  'One job for the event, however often it is delivered.');
select throws_ok(
  $$ insert into app_private.stripe_events (id, type, payload) values ('evt_once', 'x', '{}') $$,
  '23505', null, 'Even a direct insert cannot store an event id twice (the primary key).'
);

-- A failed attempt: payable again.
select tests.checkout(tests.user_id('pay.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 1}, {"productId": "%s", "quantity": 2}]', :'lamp', :'bulb')::jsonb,
  'pi_pay_1') as c1 \gset
select is(app_private.apply_payment_intent('pi_pay_1', 'requires_payment_method', 2300, 'usd', true), 'failed',
  'A declined attempt is recorded as a failed payment.');
select is(
  (select array_agg(status::text || '/' || payment_status::text) from app.orders where checkout_id = :'c1'),
  array['pending_payment/failed', 'pending_payment/failed'], 'The orders still await payment, with payment failed.'
);
select is(app_private.apply_payment_intent('pi_pay_1', 'requires_payment_method', 2300, 'usd', false), 'ignored',
  'A fresh intent that was never attempted changes nothing.');
select is(app_private.apply_payment_intent('pi_pay_1', 'succeeded', 2300, 'usd'), 'paid',
  'A later successful attempt pays the checkout.');
select is(app_private.apply_payment_intent('pi_pay_1', 'requires_payment_method', 2300, 'usd', true), 'ignored',
  'A failure applied after the success (out of order) changes nothing.');
select is(
  (select array_agg(status::text || '/' || payment_status::text) from app.orders where checkout_id = :'c1'),
  array['paid/succeeded', 'paid/succeeded'], 'The orders stay paid.'
);
select is(app_private.apply_payment_intent('pi_unknown', 'succeeded', 100, 'usd'), 'unknown',
  'An intent of no checkout changes nothing.');

-- The buyer cancels an unpaid order: the whole checkout goes, stock released.
select tests.checkout(tests.user_id('pay.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 2}, {"productId": "%s", "quantity": 5}]', :'lamp', :'bulb')::jsonb,
  'pi_pay_2') as c2 \gset
select tests.authenticate_as(tests.user_id('pay.buyer@example.test'));
select is(app.change_order_status(tests.order_of(:'c2', :'v1'), 'cancelled', 'changed my mind') ->> 'status', 'cancelled',
  'The buyer cancels an unpaid order.');
select tests.clear_authentication();
select is(
  (select array_agg(status::text) from app.orders where checkout_id = :'c2'), array['cancelled', 'cancelled'],
  'Its checkout is cancelled whole: one payment intent pays it.'
);
select is(
  (select array_agg((stock - reserved)::int order by title) from app.products where id in (:'lamp', :'bulb')),
  array[8, 3], 'The reservations are released.'
);
select is((select count(*)::int from app_private.jobs where dedupe_key = 'pi-cancel:' || :'c2'), 1,
  'The payment intent''s cancellation is queued.');

-- The expiry, then a late payment.
select tests.checkout(tests.user_id('pay.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 3}]', :'lamp')::jsonb, 'pi_pay_3') as c3 \gset
update app.checkouts set reserved_until = now() - interval '1 second' where id = :'c3';
select is(app_private.expire_reservations(), 1, 'The expiry closes the checkout whose reservation ran out.');
select is(
  (select (status::text, (select reason from app.order_history h where h.order_id = o.id order by id desc limit 1))::text
   from app.orders o where checkout_id = :'c3'),
  '(cancelled,"reservation expired")', 'Its order is cancelled by the system.'
);
select is((select stock - reserved from app.products where id = :'lamp'), 3, 'Its stock is available again.');
select is(app_private.apply_payment_intent('pi_pay_3', 'succeeded', 6000, 'usd'), 'paid',
  'A payment that arrives after the expiry is taken in...');
select is(
  (select (o.status::text, o.payment_status::text, r.status::text)::text
   from app.orders o join app.refunds r on r.order_id = o.id where o.checkout_id = :'c3'),
  '(cancelled,refunded,pending)', '...and refunded: the order stays cancelled.'
);

-- Auto-completion.
select tests.clear_authentication();
update app.orders set status = 'delivered', delivered_at = now() - interval '15 days'
  where checkout_id = :'c1';
select is(app_private.complete_delivered_orders(), 2, 'Orders delivered more than store.autoCompleteDays ago complete.');
select is(
  (select array_agg(distinct h.actor::text) from app.order_history h join app.orders o on o.id = h.order_id
   where o.checkout_id = :'c1' and h.to_status = 'completed'),
  array['system'], 'The system completes them.'
);

select tests.clear_authentication();
select is_empty(
  $$ select * from tests.catalog_counts_drift() $$,
  'The catalog counts behind the facets agree with the products after all of the above.'
);

select * from finish();
rollback;
