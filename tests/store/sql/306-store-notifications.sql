/*
 * The store's SYSTEM notifications, written through app_private.notify (data.kind names the
 * change): the buyer and the vendor's owner hear of the moves that concern them, never of their
 * own; vendor decisions reach the owner; a failed payment is one notification per checkout.
 */
begin;
select plan(12);

select tests.create_user('n.buyer@example.test', 'SUBSCRIBER');
select tests.create_user('n.seller@example.test', 'MEMBER');
select tests.create_user('n.admin@example.test', 'ADMIN');
select tests.create_user('n.applicant@example.test', 'MEMBER');
select tests.create_vendor(tests.user_id('n.seller@example.test'), 'Notify Goods') as v \gset
select tests.create_product(:'v', 'Bell', 1250, 5) as bell \gset

/* The data.kind, status and title of a user's notifications, sorted (one transaction: one time). */
create function pg_temp.inbox(email text) returns text[]
language sql as $$
  select coalesce(array_agg((data ->> 'kind') || ' ' || coalesce(data ->> 'status', '') || ': ' || title
                            order by (data ->> 'kind') || ' ' || coalesce(data ->> 'status', '') || ': ' || title), '{}')
  from app.notifications where user_id = tests.user_id(email) and type = 'SYSTEM'
$$;

select tests.checkout(tests.user_id('n.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 2}]', :'bell')::jsonb, 'pi_notify_1') as c \gset
select tests.order_of(:'c') as o \gset
select is(pg_temp.inbox('n.buyer@example.test'), '{}'::text[], 'Checking out notifies nobody (the buyer did it).');

select app_private.apply_payment_intent('pi_notify_1', 'requires_payment_method', 2500, 'usd', true);
select app_private.apply_payment_intent('pi_notify_1', 'requires_payment_method', 2500, 'usd', true);
select is(pg_temp.inbox('n.buyer@example.test'), array['order.payment_failed pending_payment: Your payment failed'],
  'A failed payment tells the buyer, once per checkout however often it fails.');
select is((select (data ->> 'count')::int from app.notifications where user_id = tests.user_id('n.buyer@example.test')), 2,
  'The second failure folds into the same unread notification.');

select app_private.apply_payment_intent('pi_notify_1', 'succeeded', 2500, 'usd');
select is(pg_temp.inbox('n.buyer@example.test'),
  array['order.payment_failed pending_payment: Your payment failed', 'order.status_changed paid: Payment received'],
  'Payment tells the buyer...');
select is(pg_temp.inbox('n.seller@example.test'), array['order.status_changed paid: New order to fulfil'],
  '...and the vendor''s owner, who has an order to fulfil.');
select is(
  (select data from app.notifications where user_id = tests.user_id('n.seller@example.test')),
  jsonb_build_object('kind', 'order.status_changed', 'orderId', :'o', 'checkoutId', :'c', 'vendorId', :'v', 'status', 'paid'),
  'The data names the order, its checkout, its vendor and the new status.'
);

select tests.authenticate_as(tests.user_id('n.seller@example.test'));
select app.change_order_status(:'o', 'processing');
select app.change_order_status(:'o', 'shipped', null, 'TRK-7', 'UPS');
select tests.clear_authentication();
select is(
  pg_temp.inbox('n.buyer@example.test'),
  array['order.payment_failed pending_payment: Your payment failed', 'order.status_changed paid: Payment received',
        'order.status_changed shipped: Your order has shipped'],
  'The buyer hears of the shipment (processing is not worth a notification)...'
);
select ok(
  (select body like '%with UPS, tracking number TRK-7%' from app.notifications
   where user_id = tests.user_id('n.buyer@example.test') and data ->> 'status' = 'shipped'),
  '...with the carrier and tracking number.'
);
select is(cardinality(pg_temp.inbox('n.seller@example.test')), 1, 'The vendor is not told of its own moves.');

select tests.authenticate_as(tests.user_id('n.seller@example.test'));
select app.change_order_status(:'o', 'delivered');
select tests.authenticate_as(tests.user_id('n.admin@example.test'));
select app.change_order_status(:'o', 'refunded', 'broken on arrival');
select tests.clear_authentication();
select app_private.record_refund_result(:'o', 're_notify_1', 'succeeded');
select is(
  pg_temp.inbox('n.buyer@example.test'),
  array['order.payment_failed pending_payment: Your payment failed', 'order.refund_succeeded refunded: Your refund was issued',
        'order.status_changed delivered: Your order was delivered', 'order.status_changed paid: Payment received',
        'order.status_changed refunded: Your order was refunded', 'order.status_changed shipped: Your order has shipped'],
  'The buyer hears of the delivery, the ADMIN''s refund and the refund issued.'
);
select is(
  pg_temp.inbox('n.seller@example.test'),
  array['order.status_changed paid: New order to fulfil', 'order.status_changed refunded: An order was refunded'],
  'The vendor hears of the refund deducted from its next settlement.'
);

-- Vendor decisions.
select tests.authenticate_as(tests.user_id('n.applicant@example.test'));
select app.apply_for_vendor('Bells and Whistles', '', 'b@example.test', 'US') ->> 'id' as applied \gset
select tests.authenticate_as(tests.user_id('n.admin@example.test'));
select app.set_vendor_status(:'applied', 'rejected', 'Please add a description.');
select tests.clear_authentication();
select is(
  (select (data ->> 'kind', data ->> 'status', title, body)::text from app.notifications
   where user_id = tests.user_id('n.applicant@example.test')),
  '(vendor.status_changed,rejected,"Bells and Whistles was not approved","Please add a description.")',
  'A vendor decision reaches the owner, with the reason.'
);

select * from finish();
rollback;
