/*
 * Product pictures and order buyers, persona by persona (issue 27): app.link_product_images (the
 * seller's own images only: AG403 for someone else's product, AG404 for another person's upload,
 * AG415 for a file that is no image), app.product_image (a picture a product lists, for whoever
 * may see that product: anyone for a catalog product, only its owner and ADMINs for a draft;
 * nothing for an upload no product lists) and app.order_buyer_name (the buyer's name, nothing
 * for a made-up order row).
 */
begin;
select plan(14);

do $$
begin
  perform tests.create_user('pimg.owner@example.test', 'MEMBER');
  perform tests.create_user('pimg.other@example.test', 'MEMBER');
  perform tests.create_user('pimg.admin@example.test', 'ADMIN');
  perform tests.create_user('pimg.buyer@example.test', 'SUBSCRIBER');
end
$$;
select tests.user_id('pimg.owner@example.test') as owner \gset
select tests.user_id('pimg.other@example.test') as other \gset
select tests.create_vendor(:'owner', 'Pimg Shop') as vendor \gset
select tests.create_product(:'vendor', 'Pimg vase', 1500, 5) as product \gset
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (:'owner', 'vase.png', 'image/png', 10, 'pimg/' || gen_random_uuid()) returning id as picture \gset
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (:'owner', 'notes.txt', 'text/plain', 10, 'pimg/' || gen_random_uuid()) returning id as text_file \gset
insert into app.attachments (uploader_id, name, content_type, size, storage_key)
values (:'other', 'theirs.png', 'image/png', 10, 'pimg/' || gen_random_uuid()) returning id as theirs \gset

-- Linking.
select tests.authenticate_as(:'other');
select throws_ok(format($$ select app.link_product_images(%L, array[%L]::uuid[]) $$, :'product', :'theirs'),
  'AG403', null, 'Someone else''s product: AG403.');
select tests.authenticate_as(:'owner');
select throws_ok(format($$ select app.link_product_images(%L, array[%L]::uuid[]) $$, :'product', :'theirs'),
  'AG404', null, 'Another person''s upload: AG404.');
select throws_ok(format($$ select app.link_product_images(%L, array[%L]::uuid[]) $$, :'product', :'text_file'),
  'AG415', null, 'A file that is no image: AG415.');
select lives_ok(format($$ select app.link_product_images(%L, array[%L]::uuid[]) $$, :'product', :'picture'),
  'The owner links an image of their own.');
select tests.clear_authentication();

-- Not listed yet: served to nobody.
select tests.authenticate_as(:'owner');
select is((select count(*)::int from app.product_image(:'picture')), 0,
  'A linked upload the product does not list is served to nobody, its owner included.');
select tests.clear_authentication();
update app.products set images = array['/api/store/images/' || :'picture'] where id = :'product';

-- An active product's picture: anyone.
select tests.authenticate_as_anon();
select is((select content_type from app.product_image(:'picture')), 'image/png',
  'Anonymous gets the picture of a catalog product.');
select tests.authenticate_as(:'other');
select is((select count(*)::int from app.product_image(:'picture')), 1, 'So does a stranger.');
select tests.clear_authentication();

-- A draft's picture: its owner and ADMINs.
update app.products set status = 'draft' where id = :'product';
select tests.authenticate_as_anon();
select is((select count(*)::int from app.product_image(:'picture')), 0, 'A draft''s: not anonymous.');
select tests.authenticate_as(:'other');
select is((select count(*)::int from app.product_image(:'picture')), 0, 'Nor a stranger.');
select tests.authenticate_as(:'owner');
select is((select count(*)::int from app.product_image(:'picture')), 1, 'Its owner does.');
select tests.authenticate_as(tests.user_id('pimg.admin@example.test'));
select is((select count(*)::int from app.product_image(:'picture')), 1, 'An ADMIN does.');
select tests.clear_authentication();
update app.products set status = 'active' where id = :'product';

-- The buyer's name.
update app.users set name = 'Pim Buyer' where id = tests.user_id('pimg.buyer@example.test');
select tests.checkout(tests.user_id('pimg.buyer@example.test'),
  jsonb_build_array(jsonb_build_object('productId', :'product', 'quantity', 1))) as checkout \gset
select tests.authenticate_as(:'owner');
select is(
  (select app.order_json(o) -> 'buyer' ->> 'name' from app.orders o where o.checkout_id = :'checkout'),
  'Pim Buyer', 'The shop''s owner reads the buyer''s name in the order.');
select is(
  app.order_buyer_name(jsonb_populate_record(null::app.orders,
    jsonb_build_object('id', gen_random_uuid(), 'buyer_id', tests.user_id('pimg.buyer@example.test')))),
  null, 'A made-up order row learns no one''s name.');
select is(
  (select app.order_buyer_name(jsonb_populate_record(o, jsonb_build_object('buyer_id', :'other')))
   from app.orders o where o.checkout_id = :'checkout'),
  null, 'A real order''s id with another person as its buyer learns nothing either.');
select tests.clear_authentication();

select * from finish();
rollback;
