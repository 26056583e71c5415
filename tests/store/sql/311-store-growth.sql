/*
 * What issue 30 added to the store: the settled flags the ledger's trigger keeps, the maintained
 * pending balance (who may read it, exact before and after a fold), the facet rollups across a
 * vendor's suspension and reinstatement, the vendor facet's cut at 50, the spelling fallback's
 * index candidates, and the vocabulary's pruning.
 */
begin;
select plan(23);

select tests.create_user('g.buyer@example.test', 'SUBSCRIBER');
select tests.create_user('g.seller@example.test', 'MEMBER');
select tests.create_user('g.stranger@example.test', 'MEMBER');
select tests.create_user('g.admin@example.test', 'ADMIN');
select tests.create_vendor(tests.user_id('g.seller@example.test'), 'Growth One') as v1 \gset
select tests.create_product(:'v1', 'Quokka Lantern', 1500, 100) as p1 \gset

select tests.checkout(tests.user_id('g.buyer@example.test'),
  format('[{"productId": "%s", "quantity": 2}]', :'p1')::jsonb, 'pi_g311_1') as c1 \gset
select tests.order_of(:'c1') as o1 \gset

-- ---------------------------------------------------------------------------------------------
-- The pending balance
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('g.seller@example.test'));
select is(app.vendor_pending(:'v1'), 0::bigint, 'An unpaid order adds nothing to the pending balance.');
select tests.clear_authentication();
select app_private.apply_payment_intent('pi_g311_1', 'succeeded', 3000, 'usd') as applied \gset
select tests.authenticate_as(tests.user_id('g.seller@example.test'));
select is(app.vendor_pending(:'v1'), 3000::bigint, 'A paid order adds its total at once (the change not folded yet).');
select tests.authenticate_as(tests.user_id('g.stranger@example.test'));
select is(app.vendor_pending(:'v1'), null, 'Another user reads no balance of the vendor.');
select tests.authenticate_as(tests.user_id('g.admin@example.test'));
select is(app.vendor_pending(:'v1'), 3000::bigint, 'An ADMIN reads it.');
select tests.authenticate_as_anon();
select throws_ok(format('select app.vendor_pending(%L)', :'v1'), '42501', null,
  'A visitor may not call it.');
select tests.clear_authentication();
select ok(app_private.fold_vendor_balances() >= 1, 'The fold takes the changes.');
select is((select count(*)::int from app_private.vendor_balance_changes where vendor_id = :'v1'), 0,
  'Folded, no change is left.');
select is((select pending from app_private.vendor_balances where vendor_id = :'v1'), 3000::bigint,
  'The folded row holds the balance.');

-- ---------------------------------------------------------------------------------------------
-- Settling: the flags, the balance
-- ---------------------------------------------------------------------------------------------

update app.orders set status = 'delivered', delivered_at = now() - interval '1 hour' where id = :'o1';
select is((select (sale_settled, refund_settled)::text from app.orders where id = :'o1'), '(f,f)',
  'A delivered order is not settled yet.');
select ok(exists (select 1 from app.orders where id = :'o1' and status = 'delivered'
                  and payment_status = 'succeeded' and not sale_settled),
  'It is in the partial index of what the settlement reads.');
-- An updatedAt of yesterday (the touch trigger would say now() for any update of this
-- transaction, which would hide a settlement that moved it).
alter table app.orders disable trigger orders_touch_updated_at;
update app.orders set updated_at = now() - interval '1 day' where id = :'o1';
alter table app.orders enable trigger orders_touch_updated_at;
select updated_at as before_settling from app.orders where id = :'o1' \gset
select app_private.settle(now(), null, true) is not null as settled \gset
select is((select sale_settled from app.orders where id = :'o1'), true,
  'Its sale line sets its flag, in the run''s transaction.');
select is((select updated_at from app.orders where id = :'o1'), :'before_settling'::timestamptz,
  'Settling does not move the order''s updatedAt.');
select tests.authenticate_as(tests.user_id('g.seller@example.test'));
select is(app.vendor_pending(:'v1'), 0::bigint, 'Settled, it leaves the pending balance.');
select tests.clear_authentication();
update app.orders set status = 'refunded', refunded_at = now() - interval '1 minute' where id = :'o1';
select app_private.settle(now(), null, true) is not null as settled \gset
select is((select (sale_settled, refund_settled)::text from app.orders where id = :'o1'), '(t,t)',
  'Its refund line sets the refund flag.');
select is((select count(*)::int from app.settlement_lines where order_id = :'o1'), 2,
  'One sale line and one refund line: settling again found nothing.');
select throws_ok(
  format($$insert into app.settlement_lines (settlement_id, vendor_id, kind, order_id, amount)
           select settlement_id, vendor_id, 'sale', order_id, amount from app.settlement_lines
           where order_id = %L and kind = 'sale'$$, :'o1'),
  '23505', null, 'A flag can never let an order be settled twice: the ledger''s key refuses it.');

-- ---------------------------------------------------------------------------------------------
-- Facets: rollups across a suspension, the vendor facet's cut
-- ---------------------------------------------------------------------------------------------

update app.vendors set status = 'suspended' where id = :'v1';
select ok(not exists (select 1 from app_private.catalog_vendor_facets where vendor_id = :'v1'),
  'A suspended vendor leaves the vendor facet.');
update app.vendors set status = 'approved' where id = :'v1';
select is((select products from app_private.catalog_vendor_facets where vendor_id = :'v1' and category = ''),
  1, 'Reinstated, it is back with its products.');
select is_empty($$ select * from tests.catalog_counts_drift() $$,
  'Every rollup agrees with the products.');

insert into app.vendors (name, slug, contact_email, country, status)
select 'Facet vendor ' || g, 'facet-vendor-' || g, 'f@example.test', 'US', 'approved'
from generate_series(1, 60) g;
insert into app.products (vendor_id, title, category, price_amount, currency, stock)
select v.id, 'Facet item', 'facet-test', 100, 'USD', 1
from app.vendors v where v.slug like 'facet-vendor-%';
select is(jsonb_array_length(app.search_products(null, 'facet-test') -> 'facets' -> 'vendors'), 50,
  'The vendor facet lists the first 50 vendors.');
select is(app.search_products(null, 'facet-test') -> 'facets',
          app.search_products(null, 'facet-test', null, 0) -> 'facets',
  'The rollups and the scan give the same facets, the cut included.');

-- ---------------------------------------------------------------------------------------------
-- Spelling and the vocabulary
-- ---------------------------------------------------------------------------------------------

select is(app.search_products('qoukka') ->> 'corrected', 'quokka',
  'A misspelt word is corrected from the index candidates.');
update app.products set title = 'Plain Lantern' where id = :'p1';
select app_private.prune_catalog_words() as pruned \gset
select ok(not exists (select 1 from app_private.catalog_words where word = 'quokka')
          and exists (select 1 from app_private.catalog_words where word = 'lantern'),
  'Pruning drops the words no active product has and keeps the others.');

select * from finish();
rollback;
