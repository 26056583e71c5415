/*
 * app.checkout_payment (resuming a checkout's payment from anywhere), persona by persona: the
 * buyer gets the checkout with its client secret; another user, the vendor's owner, an ADMIN, a
 * VISITOR and the buyer once suspended get AG404; anonymous may not call it; a paid, cancelled or
 * expired checkout is AG422; a checkout without an intent says needsIntent.
 */
begin;
select plan(12);

do $$
begin
  perform tests.create_user('cpay.buyer@example.test', 'SUBSCRIBER');
  perform tests.create_user('cpay.other@example.test', 'MEMBER');
  perform tests.create_user('cpay.owner@example.test', 'MEMBER');
  perform tests.create_user('cpay.admin@example.test', 'ADMIN');
  perform tests.create_user('cpay.visitor@example.test', 'VISITOR');
end
$$;
select tests.user_id('cpay.buyer@example.test') as buyer \gset
select tests.create_vendor(tests.user_id('cpay.owner@example.test'), 'Cpay Shop') as vendor \gset
select tests.create_product(:'vendor', 'Cpay lamp', 1200, 10) as product \gset
select tests.checkout(:'buyer', jsonb_build_array(jsonb_build_object('productId', :'product', 'quantity', 2)))
  as unpaid \gset

-- Strangers.
select tests.authenticate_as(tests.user_id('cpay.other@example.test'));
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG404', 'checkout not found',
  'Another user gets AG404.');
select tests.authenticate_as(tests.user_id('cpay.owner@example.test'));
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG404', 'checkout not found',
  'The vendor''s owner gets AG404 (the client secret is the buyer''s).');
select tests.authenticate_as(tests.user_id('cpay.admin@example.test'));
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG404', 'checkout not found',
  'An ADMIN gets AG404.');
select tests.authenticate_as(tests.user_id('cpay.visitor@example.test'));
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG404', 'checkout not found',
  'A VISITOR gets AG404.');
select tests.authenticate_as_anon();
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), '42501', null,
  'Anonymous may not call it.');
select tests.clear_authentication();

-- The buyer, suspended.
update app.users set status = 'suspended' where id = :'buyer';
select tests.authenticate_as(:'buyer');
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG404', 'checkout not found',
  'A suspended buyer gets AG404.');
select tests.clear_authentication();
update app.users set status = 'active' where id = :'buyer';

-- The buyer.
select tests.authenticate_as(:'buyer');
select results_eq(
  format($$ select (a -> 'checkout' ->> 'id'), (a -> 'checkout' -> 'payment' ->> 'paymentIntentId'),
                   (a -> 'checkout' -> 'payment' ->> 'clientSecret'), (a ->> 'needsIntent')::boolean,
                   (a ->> 'amount')::bigint
            from app.checkout_payment(%L) a $$, :'unpaid'),
  format($$ values (%L::text, %L::text, 'secret'::text, false, 2400::bigint) $$, :'unpaid', 'pi_test_' || :'unpaid'),
  'The buyer gets the checkout, its intent and its client secret.'
);
select tests.clear_authentication();

-- Without an intent: needsIntent.
update app.checkouts set payment_intent_id = null where id = :'unpaid';
delete from app_private.checkout_secrets where checkout_id = :'unpaid';
select tests.authenticate_as(:'buyer');
select is((app.checkout_payment(:'unpaid') ->> 'needsIntent')::boolean, true,
  'A checkout without an intent says needsIntent.');
select tests.clear_authentication();

-- Expired, paid, cancelled.
update app.checkouts set reserved_until = now() - interval '1 second' where id = :'unpaid';
select tests.authenticate_as(:'buyer');
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG422',
  'the reservation of this checkout ran out; check out again', 'Past its reservation: AG422.');
select tests.clear_authentication();
update app.checkouts set reserved_until = now() + interval '10 minutes', payment_status = 'succeeded'
where id = :'unpaid';
select tests.authenticate_as(:'buyer');
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG422',
  'this checkout is paid', 'Paid: AG422.');
select tests.clear_authentication();
update app.checkouts set payment_status = 'pending', closed_at = now() where id = :'unpaid';
select tests.authenticate_as(:'buyer');
select throws_ok(format($$ select app.checkout_payment(%L) $$, :'unpaid'), 'AG422', null,
  'Closed (cancelled): AG422.');
select throws_ok(
  format($$ select * from app_private.checkout_secrets where checkout_id = %L $$, :'unpaid'),
  '42501', null, 'The buyer still cannot read the secrets table.');
select tests.clear_authentication();

select * from finish();
rollback;
