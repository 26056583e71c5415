/*
 * Products per persona and the catalog search: only the owner of an approved vendor writes
 * products (a pending or suspended vendor's owner and strangers are refused), drafts are seen by
 * their vendor only, a suspended vendor's products leave the catalog, the price is in the store's
 * currency, stock never goes below what checkouts hold; search, filters, sorts, facets and cursors.
 */
begin;
select plan(39);

select tests.create_user('p.owner@example.test', 'MEMBER');
select tests.create_user('p.pending@example.test', 'MEMBER');
select tests.create_user('p.stranger@example.test', 'MEMBER');
select tests.create_user('p.admin@example.test', 'ADMIN');
select tests.create_vendor(tests.user_id('p.owner@example.test'), 'Owner Goods') as vendor \gset
select tests.create_vendor(tests.user_id('p.pending@example.test'), 'Pending Goods', 'pending') as pending_vendor \gset
select tests.create_vendor(tests.user_id('p.stranger@example.test'), 'Other Goods') as other_vendor \gset

-- ---------------------------------------------------------------------------------------------
-- Writes
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('p.owner@example.test'));
select lives_ok(
  format($$ insert into app.products (vendor_id, title, category, price_amount, currency, stock)
            values (%L, 'Zzyzx lamp', 'lighting', 4200, 'USD', 3) $$, :'vendor'),
  'The owner of an approved vendor creates a product.'
);
select id as lamp from app.products where title = 'Zzyzx lamp' \gset
select throws_ok(
  format($$ insert into app.products (vendor_id, title, category, price_amount, currency, stock)
            values (%L, 'Stolen', 'misc', 100, 'USD', 1) $$, :'other_vendor'),
  '42501', null, 'Nobody creates a product for another vendor.'
);
select throws_ok(
  format($$ insert into app.products (vendor_id, title, category, price_amount, currency, stock)
            values (%L, 'Euro lamp', 'lighting', 100, 'EUR', 1) $$, :'vendor'),
  'AG400', null, 'A price in another currency than the store''s is refused.'
);
select throws_ok(
  format($$ insert into app.products (vendor_id, title, category, price_amount, currency, stock, reserved)
            values (%L, 'Sneaky', 'misc', 100, 'USD', 1, 1) $$, :'vendor'),
  '42501', null, 'A vendor cannot set reservations.'
);
select is(
  tests.row_count(format($$ update app.products set price_amount = 3900 where id = %L $$, :'lamp')),
  1::bigint, 'The owner changes its product''s price.'
);
select throws_ok(
  format($$ update app.products set vendor_id = %L where id = %L $$, :'other_vendor', :'lamp'),
  '42501', null, 'A product never moves to another vendor.'
);

select tests.authenticate_as(tests.user_id('p.pending@example.test'));
select throws_ok(
  format($$ insert into app.products (vendor_id, title, category, price_amount, currency, stock)
            values (%L, 'Too early', 'misc', 100, 'USD', 1) $$, :'pending_vendor'),
  '42501', null, 'The owner of a pending vendor cannot create products.'
);

select tests.authenticate_as(tests.user_id('p.stranger@example.test'));
select is(
  tests.row_count(format($$ update app.products set price_amount = 1 where id = %L $$, :'lamp')),
  0::bigint, 'Another vendor''s owner changes nothing (RLS filters the row out).'
);
select tests.clear_authentication();
select is((select price_amount from app.products where id = :'lamp'), 3900::bigint,
  'The price is still the owner''s.');

-- ---------------------------------------------------------------------------------------------
-- Reads and visibility
-- ---------------------------------------------------------------------------------------------

select tests.create_product(:'vendor', 'Zzyzx draft chair', 5000, 2, 'draft', 'furniture') as draft \gset
select tests.create_product(:'other_vendor', 'Zzyzx rug', 2500, 0, 'active', 'textiles', 'a woven rug') as rug \gset
select tests.create_product(:'other_vendor', 'Zzyzx pillow', 900, 7, 'active', 'textiles', 'a soft lamp-shaped pillow') as pillow \gset

select tests.authenticate_as(tests.user_id('p.owner@example.test'));
select is((select count(*)::int from app.products where vendor_id = :'vendor'), 2,
  'The owner reads all of its products, the draft too.');
select isnt(app.get_product(:'draft'), null, 'The owner sees its draft through app.get_product.');
select tests.authenticate_as(tests.user_id('p.stranger@example.test'));
select is((select count(*)::int from app.products where vendor_id = :'vendor'), 0,
  'Another user reads no row of it directly.');
select is(app.get_product(:'draft'), null, 'A stranger does not see a draft.');
select is(app.get_product(:'lamp') ->> 'title', 'Zzyzx lamp', 'A stranger sees an active product of an approved vendor.');
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app.products $$, '42501', null, 'A visitor holds no privilege on app.products.');
select is(app.get_product(:'lamp') -> 'price', '{"amount": 3900, "currency": "USD"}'::jsonb,
  'A visitor sees a catalog product, price as money.');
select is(app.get_product(:'draft'), null, 'A visitor does not see a draft.');
select tests.authenticate_as(tests.user_id('p.admin@example.test'));
select isnt(app.get_product(:'draft'), null, 'An ADMIN sees a draft.');

-- ---------------------------------------------------------------------------------------------
-- Search
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select is(
  (select array_agg(e ->> 'title' order by e ->> 'title') from jsonb_array_elements(app.search_products('zzyzx') -> 'items') e),
  array['Zzyzx lamp', 'Zzyzx pillow', 'Zzyzx rug'],
  'Full-text search finds the active products of approved vendors, not the draft.'
);
select is(
  app.search_products('lamp') -> 'items' -> 0 ->> 'title', 'Zzyzx lamp',
  'A title match ranks above a description match.'
);
select is(
  (select array_agg(e ->> 'title') from jsonb_array_elements(app.search_products('zzyzx', null, null, null, null, true) -> 'items') e
   where e ->> 'title' = 'Zzyzx rug'),
  null, 'inStock leaves out a product with nothing available.'
);
select is(
  (select array_agg(e ->> 'title' order by e ->> 'title') from jsonb_array_elements(app.search_products('zzyzx', null, null, 900, 2500) -> 'items') e),
  array['Zzyzx pillow', 'Zzyzx rug'], 'Price bounds are inclusive, in minor units.'
);
select is(
  app.search_products('zzyzx', 'textiles') -> 'facets' -> 'categories',
  '[{"count": 2, "value": "textiles"}, {"count": 1, "value": "lighting"}]'::jsonb,
  'The category facet ignores the category filter and counts the other filters.'
);
select is(
  (select jsonb_agg(e -> 'count' order by e ->> 'name') from jsonb_array_elements(app.search_products('zzyzx', 'textiles') -> 'facets' -> 'vendors') e),
  '[2]'::jsonb, 'The vendor facet applies the category filter.'
);
select is(
  app.search_products('zzyzx', null, null, 1000, null) -> 'facets' -> 'price',
  '{"max": 3900, "min": 900}'::jsonb, 'The price facet ignores the price bounds.'
);
select is(
  (select array_agg((e -> 'price' ->> 'amount')::int order by n) from jsonb_array_elements(app.search_products('zzyzx', null, null, null, null, null, 'price_asc') -> 'items') with ordinality t(e, n)),
  array[900, 2500, 3900], 'price_asc sorts by price, cheapest first.'
);
select is(
  app.search_products('zzyzx', null, null, null, null, null, 'price_desc', null, null, null, 1) -> 'next' ->> 2,
  '3900', 'A page that is not the last has a cursor: the sort, the mode, the last key and id.'
);
select is(
  (select app.search_products('zzyzx', null, null, null, null, null, 'price_desc', n ->> 1, n ->> 2, (n ->> 3)::uuid, 1) -> 'items' -> 0 ->> 'title'
   from (select app.search_products('zzyzx', null, null, null, null, null, 'price_desc', null, null, null, 1) -> 'next' as n) c),
  'Zzyzx rug', 'The cursor continues after the last row of the page.'
);
select is(
  app.search_products('zzyxz lmap') ->> 'corrected', 'zzyzx lamp',
  'A search full-text search cannot match has its misspelt words corrected to the vocabulary.'
);
select is(
  app.search_products('zzyxz lmap') -> 'items' -> 0 ->> 'title', 'Zzyzx lamp',
  'The corrected search finds the lamp first.'
);

-- The vendor's own view (vendorId = its own) shows its drafts; anyone else's does not.
select tests.authenticate_as(tests.user_id('p.owner@example.test'));
select is(
  jsonb_array_length(app.search_products(null, null, :'vendor') -> 'items'), 2,
  'A vendor listing its own products sees its draft.'
);
select tests.authenticate_as(tests.user_id('p.stranger@example.test'));
select is(
  jsonb_array_length(app.search_products(null, null, :'vendor') -> 'items'), 1,
  'Another user listing that vendor sees its active products only.'
);

-- Without a search or a price filter the facets come from the counts; with a price filter that
-- keeps everything (>= 0) they come from a scan: the same answer.
select tests.authenticate_as_anon();
select is(
  app.search_products(null, 'textiles') -> 'facets',
  app.search_products(null, 'textiles', null, 0) -> 'facets',
  'The unsearched catalog''s facets, summed from the counts, equal a scan''s.'
);
select is(
  app.search_products(null, null, :'other_vendor', null, null, true) -> 'facets',
  app.search_products(null, null, :'other_vendor', 0, null, true) -> 'facets',
  'So do they with a vendor and the in-stock filter.'
);

-- A suspended vendor's products leave the catalog.
select tests.clear_authentication();
update app.vendors set status = 'suspended' where id = :'other_vendor';
select tests.authenticate_as_anon();
select is(
  (select array_agg(e ->> 'title') from jsonb_array_elements(app.search_products('zzyzx') -> 'items') e),
  array['Zzyzx lamp'], 'A suspended vendor''s products leave the search.'
);
select is(app.get_product(:'pillow'), null, 'And cannot be read one by one.');
select tests.authenticate_as(tests.user_id('p.stranger@example.test'));
select is(
  tests.row_count(format($$ update app.products set price_amount = 1 where id = %L $$, :'pillow')),
  0::bigint, 'The owner of a suspended vendor can no longer edit its products.'
);

-- Stock never goes below what checkouts hold.
select tests.clear_authentication();
update app.products set reserved = 2 where id = :'lamp';
select tests.authenticate_as(tests.user_id('p.owner@example.test'));
select throws_ok(
  format($$ update app.products set stock = 1 where id = %L $$, :'lamp'),
  'AG422', null, 'A vendor cannot lower stock below the units unpaid checkouts hold.'
);

select tests.clear_authentication();
select is_empty(
  $$ select * from tests.catalog_counts_drift() $$,
  'The catalog counts behind the facets agree with the products after all of the above.'
);

select * from finish();
rollback;
