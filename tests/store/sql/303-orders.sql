/*
 * Checkouts and orders per persona: reservations at the server's prices, one order per vendor,
 * the refusals that write nothing (stock short, inactive products, suspended vendors), the
 * idempotency key, who reads an order (buyer, vendor owner, ADMIN; nobody else), and the state
 * machine through app.change_order_status with the contract's precedence (404, 403, 422, 400).
 */
begin;
select plan(51);

select tests.create_user('o.buyer@example.test', 'SUBSCRIBER');
select tests.create_user('o.visitor@example.test', 'VISITOR');
select tests.create_user('o.seller@example.test', 'MEMBER');
select tests.create_user('o.seller2@example.test', 'MEMBER');
select tests.create_user('o.stranger@example.test', 'MEMBER');
select tests.create_user('o.admin@example.test', 'ADMIN');
select tests.create_vendor(tests.user_id('o.seller@example.test'), 'Seller One') as v1 \gset
select tests.create_vendor(tests.user_id('o.seller2@example.test'), 'Seller Two') as v2 \gset
select tests.create_product(:'v1', 'Kettle', 3000, 5) as kettle \gset
select tests.create_product(:'v1', 'Teapot', 1999, 2) as teapot \gset
select tests.create_product(:'v2', 'Cup', 450, 100) as cup \gset
select tests.create_product(:'v2', 'Saucer', 300, 100, 'draft') as saucer \gset

-- ---------------------------------------------------------------------------------------------
-- Checkout
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('o.visitor@example.test'));
select throws_ok(
  format($$ select app.create_checkout('[{"productId": "%s", "quantity": 1}]', null, null, null, 'dev') $$, :'cup'),
  'AG403', null, 'A VISITOR cannot check out.'
);

select tests.authenticate_as(tests.user_id('o.buyer@example.test'));
select throws_ok(
  format($$ select app.create_checkout('[{"productId": "%s", "quantity": 6}]', null, null, null, 'dev') $$, :'kettle'),
  'AG422', 'not enough stock for 1 of the items', 'Asking for more than is available is AG422 insufficient_stock.'
);
select throws_ok(
  format($$ select app.create_checkout('[{"productId": "%s", "quantity": 1}]', null, null, null, 'dev') $$, :'saucer'),
  'AG422', 'only active products of approved vendors can be ordered', 'A draft cannot be ordered.'
);
select throws_ok(
  $$ select app.create_checkout('[{"productId": "00000000-0000-4000-8000-00000000dead", "quantity": 1}]', null, null, null, 'dev') $$,
  'AG422', 'only active products of approved vendors can be ordered', 'An unknown product cannot be ordered.'
);
select tests.clear_authentication();
select is(
  (select (count(*), sum(reserved))::text from app.products where vendor_id in (:'v1', :'v2')),
  '(4,0)', 'The refused checkouts reserved nothing.'
);
select is((select count(*)::int from app.orders where buyer_id = tests.user_id('o.buyer@example.test')), 0,
  'And wrote no order.');

select tests.checkout(tests.user_id('o.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 2, "price": 1}, {"productId": "%s", "quantity": 1}, {"productId": "%s", "quantity": 3}]',
         :'kettle', :'teapot', :'cup')::jsonb, 'pi_test_one') as c1 \gset
select is((select count(*)::int from app.orders where checkout_id = :'c1'), 2, 'One order per vendor.');
select is(
  (select total from app.checkouts where id = :'c1'), (2 * 3000 + 1999 + 3 * 450)::bigint,
  'The total is at the server''s prices (a client''s price field is never read).'
);
select is(
  (select array_agg(stock - reserved order by title) from app.products where id in (:'kettle', :'teapot', :'cup')),
  array[97, 3, 1], 'The stock is reserved: available falls by what was ordered.'
);
select tests.order_of(:'c1', :'v1') as o1 \gset
select tests.order_of(:'c1', :'v2') as o2 \gset
select is(
  (select (total, vendor_name, status::text, payment_status::text)::text from app.orders where id = :'o1'),
  '(7999,"Seller One",pending_payment,pending)', 'The vendor''s order holds its items'' total, awaiting payment.'
);
select is(
  (select count(*)::int from app.events where event = 'order.created'
     and topic in ('user:' || tests.user_id('o.buyer@example.test'), 'vendor:' || :'v1', 'vendor:' || :'v2')),
  4, 'order.created goes to the buyer and to each vendor, once per order.'
);

-- Idempotency: the same key and body replay, another body conflicts.
select tests.authenticate_as(tests.user_id('o.buyer@example.test'));
select app.create_checkout(format('[{"productId": "%s", "quantity": 1}]', :'cup')::jsonb, null, 'key-1', 'hash-1', 'dev') ->> 'created' as ck \gset
select app.attach_payment_intent(:'ck', 'pi_test_key', 'secret', 'key-1') is not null as attached \gset
select ok(
  app.create_checkout(format('[{"productId": "%s", "quantity": 1}]', :'cup')::jsonb, null, 'key-1', 'hash-1', 'dev') -> 'replay' -> 'checkout' ->> 'id' = :'ck',
  'The same key and body replay the first answer.'
);
select throws_ok(
  format($$ select app.create_checkout('[{"productId": "%s", "quantity": 2}]', null, 'key-1', 'hash-2', 'dev') $$, :'cup'),
  'AG409', null, 'The same key with another body is AG409.'
);
select tests.clear_authentication();
select is((select stock - reserved from app.products where id = :'cup'), 96, 'The replay reserved nothing more.');

-- ---------------------------------------------------------------------------------------------
-- Who reads an order
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('o.buyer@example.test'));
select is((select count(*)::int from app.orders where checkout_id = :'c1'), 2, 'The buyer reads both orders.');
select is((select count(*)::int from app.order_items i join app.orders o on o.id = i.order_id where o.checkout_id = :'c1'), 3,
  'The buyer reads their items.');
select is((select count(*)::int from app.checkouts where id = :'c1'), 1, 'The buyer reads their checkout.');
select tests.authenticate_as(tests.user_id('o.seller@example.test'));
select is((select array_agg(id) from app.orders where checkout_id = :'c1'), array[:'o1'::uuid],
  'A vendor''s owner reads its own order of the checkout, not the other vendor''s.');
select is((select count(*)::int from app.checkouts where id = :'c1'), 0, 'A vendor does not read the buyer''s checkout.');
select is((select count(*)::int from app.order_history where order_id = :'o2'), 0, 'Nor the other vendor''s order history.');
select tests.authenticate_as(tests.user_id('o.stranger@example.test'));
select is((select count(*)::int from app.orders where checkout_id = :'c1'), 0, 'A stranger reads no order.');
select is((select count(*)::int from app.order_items where order_id in (:'o1', :'o2')), 0, 'Nor any item.');
select tests.authenticate_as(tests.user_id('o.admin@example.test'));
select is((select count(*)::int from app.orders where checkout_id = :'c1'), 2, 'An ADMIN reads every order.');
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app.orders $$, '42501', null, 'A visitor holds no privilege on orders.');

-- ---------------------------------------------------------------------------------------------
-- The state machine
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('o.stranger@example.test'));
select throws_ok(
  format($$ select app.change_order_status(%L, 'processing') $$, :'o1'),
  'AG404', null, 'A stranger''s move is 404 (the order is not theirs to see), before anything else.'
);
select tests.authenticate_as(tests.user_id('o.buyer@example.test'));
select throws_ok(
  format($$ select app.change_order_status(%L, 'shipped', null, 'T1') $$, :'o1'),
  'AG403', null, 'A buyer shipping is 403.'
);
select throws_ok(
  format($$ select app.change_order_status(%L, 'completed') $$, :'o1'),
  'AG422', null, 'A buyer completing an unpaid order is 422 (the move the state does not allow).'
);
select tests.authenticate_as(tests.user_id('o.seller@example.test'));
select throws_ok(
  format($$ select app.change_order_status(%L, 'paid') $$, :'o1'),
  'AG403', null, 'Only the system marks an order paid.'
);
select throws_ok(
  format($$ select app.change_order_status(%L, 'processing') $$, :'o1'),
  'AG422', null, 'A vendor cannot process an unpaid order.'
);

-- Payment (the system).
select tests.clear_authentication();
select is(app_private.apply_payment_intent('pi_test_one', 'succeeded', 1, 'usd'), 'mismatch',
  'A payment of another amount pays nothing.');
select is(app_private.apply_payment_intent('pi_test_one', 'succeeded', 9349, 'usd'), 'paid',
  'The payment of the checkout''s amount pays it.');
select is(
  (select array_agg(status::text || '/' || payment_status::text order by id) from app.orders where checkout_id = :'c1'),
  array['paid/succeeded', 'paid/succeeded'], 'Both orders are paid.'
);
select is(
  (select array_agg((stock, reserved)::text order by title) from app.products where id in (:'kettle', :'teapot', :'cup')),
  array['(97,1)', '(3,0)', '(1,0)'], 'The reservation became a sale (the cup''s other reservation is the keyed checkout''s).'
);
select is(app_private.apply_payment_intent('pi_test_one', 'succeeded', 9349, 'usd'), 'already_paid',
  'Applying the same payment again changes nothing.');
select is((select stock from app.products where id = :'kettle'), 3, 'The stock was not taken twice.');

select tests.authenticate_as(tests.user_id('o.seller@example.test'));
select throws_ok(
  format($$ select app.change_order_status(%L, 'shipped', null, 'T1') $$, :'o1'),
  'AG422', null, 'Skipping processing is 422 invalid_transition.'
);
select is(app.change_order_status(:'o1', 'processing') ->> 'status', 'processing', 'The vendor processes the paid order.');
select throws_ok(
  format($$ select app.change_order_status(%L, 'shipped') $$, :'o1'),
  'AG400', null, 'Shipping without a tracking number is AG400.'
);
select is(app.change_order_status(:'o1', 'shipped', null, 'TRACK-9', 'DHL') -> 'shipping',
  '{"address": null, "carrier": "DHL", "trackingNumber": "TRACK-9"}'::jsonb, 'Shipping records the carrier and tracking number.');
select is(app.change_order_status(:'o1', 'delivered') ->> 'status', 'delivered', 'The vendor marks it delivered.');
select tests.authenticate_as(tests.user_id('o.buyer@example.test'));
select is(app.change_order_status(:'o1', 'completed') ->> 'status', 'completed', 'The buyer completes it.');
select is(
  (select array_agg(coalesce(from_status::text, '-') || '>' || to_status::text || ':' || actor::text order by id)
   from app.order_history where order_id = :'o1'),
  array['->pending_payment:buyer', 'pending_payment>paid:system', 'paid>processing:vendor',
        'processing>shipped:vendor', 'shipped>delivered:vendor', 'delivered>completed:buyer'],
  'Every move is in the order''s history with its actor.'
);

-- A vendor's cancellation after payment refunds and restores stock.
select tests.authenticate_as(tests.user_id('o.seller2@example.test'));
select is(app.change_order_status(:'o2', 'cancelled', 'out of cups') -> 'payment' ->> 'status', 'refunded',
  'The vendor cancels a paid order: its payment is refunded.');
select tests.clear_authentication();
select is((select stock from app.products where id = :'cup'), 100, 'The cups are back in stock.');
select is(
  (select (r.amount, r.status::text)::text from app.refunds r where r.order_id = :'o2'),
  '(1350,pending)', 'The refund is owed for the order''s total.'
);
select is(
  (select count(*)::int from app_private.jobs where kind = 'store.refund' and payload ->> 'orderId' = :'o2'),
  1, 'And its store.refund job is queued.'
);

select tests.clear_authentication();
select is_empty(
  $$ select * from tests.catalog_counts_drift() $$,
  'The catalog counts behind the facets agree with the products after all of the above.'
);

-- Refunds and the transition table, per persona.
select tests.authenticate_as(tests.user_id('o.buyer@example.test'));
select is((select count(*)::int from app.refunds where order_id = :'o2'), 1, 'The buyer reads the refund of their order.');
select ok((select count(*) from app.order_transitions) = 19, 'Every signed-in user reads the state machine.');
select tests.authenticate_as(tests.user_id('o.stranger@example.test'));
select is((select count(*)::int from app.refunds where order_id = :'o2'), 0, 'A stranger reads no refund.');
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app.refunds $$, '42501', null, 'A visitor holds no privilege on refunds.');
select tests.clear_authentication();

select * from finish();
rollback;
