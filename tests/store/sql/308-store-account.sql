/*
 * The store in the account export: the person's orders as GET shows them and their vendor with its
 * decisions and settlements, never the payout account.
 */
begin;
select plan(4);

select tests.create_user('acct.buyer@example.test', 'MEMBER');
select tests.create_user('acct.seller@example.test', 'MEMBER');
select tests.create_vendor(tests.user_id('acct.buyer@example.test'), 'Account Shop') as own \gset
update app.vendors set payout_account_id = 'acct_secret_308' where id = :'own';
select tests.create_product(tests.create_vendor(tests.user_id('acct.seller@example.test'), 'Other Shop'), 'Export mug', 800, 5) as mug \gset
select tests.checkout(tests.user_id('acct.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 2}]', :'mug')::jsonb, 'pi_export_308') as c \gset

select is(
  jsonb_array_length(app_private.account_export(tests.user_id('acct.buyer@example.test')) -> 'orders'), 1,
  'The export holds the person''s order.'
);
select is(
  app_private.account_export(tests.user_id('acct.buyer@example.test')) -> 'orders' -> 0,
  (select app.order_json(o) from app.orders o where o.checkout_id = :'c'),
  'As GET /api/store/orders/:id shows it.'
);
select is(
  app_private.account_export(tests.user_id('acct.buyer@example.test')) -> 'vendor' ->> 'name', 'Account Shop',
  'The export holds the person''s vendor.'
);
select ok(
  position('acct_secret_308' in app_private.account_export(tests.user_id('acct.buyer@example.test'))::text) = 0,
  'Never the payout account''s id.'
);

select * from finish();
rollback;
