/*
 * The local seed's store: two approved vendors with products in stock, whose payout accounts the
 * dev provider knows as onboarded, so a newcomer browses, checks out and gets paid out at once.
 */
begin;
select plan(5);

select is(
  (select count(*)::int from app.vendors where status = 'approved' and payouts_status = 'active'
     and id in ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000a2')),
  2, 'The seed has two approved vendors with active payout accounts.'
);
select tests.authenticate_as_anon();
select cmp_ok(
  jsonb_array_length(app.search_products(null, null, null, null, null, true) -> 'items'), '>=', 10,
  'A visitor finds at least ten seeded products in stock.'
);
select is(
  (select count(*)::int from jsonb_array_elements(app.search_products(null) -> 'facets' -> 'vendors') v
   where v ->> 'id' in ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000a2')),
  2, 'Both vendors show in the catalog''s facets.'
);
select tests.clear_authentication();
select tests.checkout(tests.user_id('subscriber@example.com'),
  '[{"productId": "00000000-0000-4000-8000-000000000101", "quantity": 1}, {"productId": "00000000-0000-4000-8000-000000000109", "quantity": 2}]'::jsonb,
  'pi_seed_check') as c \gset
select is((select count(*)::int from app.orders where checkout_id = :'c'), 2,
  'The seeded subscriber checks out from both vendors at once.');
select is(
  (select count(*)::int from app_private.dev_payment_objects
   where object = 'account' and (data ->> 'payouts_enabled')::boolean
     and id in ('acct_dev_seed_workshop', 'acct_dev_seed_pantry')),
  2, 'The dev provider knows both payout accounts as onboarded.'
);

select * from finish();
rollback;
