/*
 * Vendors per persona: applying (SUBSCRIBER and up, one live application), the ADMIN's decisions
 * (with reasons, history, commission, the owner's live event), who reads what (owner, stranger,
 * visitor, ADMIN), the public list, and the vendor topic in THE topic rule.
 */
begin;
select plan(30);

select tests.create_user('v.owner@example.test', 'MEMBER');
select tests.create_user('v.stranger@example.test', 'MEMBER');
select tests.create_user('v.visitor@example.test', 'VISITOR');
select tests.create_user('v.admin@example.test', 'ADMIN');

-- ---------------------------------------------------------------------------------------------
-- Applying
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('v.visitor@example.test'));
select throws_ok(
  $$ select app.apply_for_vendor('Visitor Shop', '', 'v@example.test', 'US') $$,
  'AG403', null, 'A VISITOR cannot apply as a vendor.'
);

select tests.authenticate_as(tests.user_id('v.owner@example.test'));
select is(
  app.apply_for_vendor('Owner''s Shop!', 'We sell things', 'shop@example.test', 'us') ->> 'status',
  'pending', 'A MEMBER applies and the vendor is pending.'
);
select is(
  (select slug from app.vendors where owner_id = tests.user_id('v.owner@example.test')),
  'owner-s-shop', 'The slug is made from the name.'
);
select throws_ok(
  $$ select app.apply_for_vendor('Second Shop', '', 'shop@example.test', 'US') $$,
  'AG409', null, 'A user with a pending application cannot apply again.'
);
select tests.clear_authentication();
select throws_ok(
  format($$ insert into app.vendors (owner_id, name, slug, contact_email, country, status)
            values (%L, 'Twin', 'twin', 't@example.test', 'US', 'approved') $$,
         tests.user_id('v.owner@example.test')),
  '23505', null, 'Even a trusted path cannot give a user two live vendors (the partial unique index).'
);
select id as vendor from app.vendors where owner_id = tests.user_id('v.owner@example.test') \gset

-- ---------------------------------------------------------------------------------------------
-- Reading
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('v.owner@example.test'));
select is(
  (select contact_email from app.vendors where id = :'vendor'),
  'shop@example.test', 'The owner reads its vendor, contact e-mail included.'
);
select tests.authenticate_as(tests.user_id('v.stranger@example.test'));
select is_empty(
  format($$ select 1 from app.vendors where id = %L $$, :'vendor'),
  'A stranger reads no vendor row directly (the public fields come through app.list_vendors).'
);
select tests.authenticate_as_anon();
select throws_ok(
  $$ select 1 from app.vendors $$, '42501', null,
  'A visitor holds no privilege on app.vendors.'
);
select is_empty(
  $$ select 1 from app.list_vendors() l where l.vendor ->> 'name' = 'Owner''s Shop!' $$,
  'The public list leaves out a pending vendor.'
);

-- ---------------------------------------------------------------------------------------------
-- Decisions
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('v.owner@example.test'));
select throws_ok(
  format($$ select app.set_vendor_status(%L, 'approved', 'me') $$, :'vendor'),
  'AG403', null, 'An owner cannot approve its own vendor.'
);
select tests.authenticate_as(tests.user_id('v.admin@example.test'));
select throws_ok(
  format($$ select app.set_vendor_status(%L, 'approved', '  ') $$, :'vendor'),
  'AG400', null, 'A decision needs a reason.'
);
select throws_ok(
  format($$ select app.set_vendor_status(%L, 'suspended', 'not yet') $$, :'vendor'),
  'AG422', null, 'A pending vendor cannot be suspended (invalid_transition).'
);
select throws_ok(
  $$ select app.set_vendor_status(gen_random_uuid(), 'approved', 'ghost') $$,
  'AG404', null, 'An unknown vendor is AG404.'
);
select is(
  app.set_vendor_status(:'vendor', 'approved', 'Looks good', 800) ->> 'status',
  'approved', 'An ADMIN approves, with a reason and a commission.'
);
select is(
  (select (commission_bps, payouts_status::text)::text from app.vendors where id = :'vendor'),
  '(800,not_started)', 'The vendor''s own commission is kept.'
);
select tests.clear_authentication();
select is(
  (select payload ->> 'status' from app.events
   where topic = 'user:' || tests.user_id('v.owner@example.test') and event = 'vendor.status_changed'
   order by id desc limit 1),
  'approved', 'The owner gets vendor.status_changed on their user topic, carrying the vendor.'
);
select tests.authenticate_as(tests.user_id('v.admin@example.test'));
select is(
  app.set_vendor_status(:'vendor', 'approved', 'New rate', 300) ->> 'commissionBps',
  '300', 'With the same status, a decision changes only the commission.'
);
select is(
  app.set_vendor_status(:'vendor', 'suspended', 'Complaints') ->> 'status',
  'suspended', 'An ADMIN suspends an approved vendor.'
);
select is(
  app.set_vendor_status(:'vendor', 'approved', 'Resolved') ->> 'status',
  'approved', 'An ADMIN reinstates a suspended vendor.'
);
select is(
  (select array_agg(to_status::text || ':' || reason order by id) from app.vendor_decisions where vendor_id = :'vendor'),
  array['approved:Looks good', 'approved:New rate', 'suspended:Complaints', 'approved:Resolved'],
  'Every decision is in the history with its reason.'
);

select tests.authenticate_as(tests.user_id('v.owner@example.test'));
select is(
  (select count(*)::int from app.vendor_decisions where vendor_id = :'vendor'), 4,
  'The owner reads its decision history.'
);
select tests.authenticate_as(tests.user_id('v.stranger@example.test'));
select is(
  (select count(*)::int from app.vendor_decisions where vendor_id = :'vendor'), 0,
  'A stranger reads none of it.'
);
select tests.authenticate_as_anon();
select is(
  (select count(*)::int from app.list_vendors() l
   where l.vendor ->> 'id' = :'vendor' and not (l.vendor ? 'contactEmail') and not (l.vendor ? 'ownerId')),
  1, 'The public list shows the approved vendor, without contact e-mail or owner.'
);

-- A rejected applicant may apply again.
select tests.clear_authentication();
select tests.authenticate_as(tests.user_id('v.stranger@example.test'));
select app.apply_for_vendor('Stranger Goods', '', 's@example.test', 'DE') ->> 'id' as rejected \gset
select tests.authenticate_as(tests.user_id('v.admin@example.test'));
select is(app.set_vendor_status(:'rejected', 'rejected', 'Incomplete') ->> 'status', 'rejected',
  'An ADMIN rejects a pending application.');
select throws_ok(
  format($$ select app.set_vendor_status(%L, 'approved', 'changed my mind') $$, :'rejected'),
  'AG422', null, 'A rejected application stays rejected.'
);
select tests.authenticate_as(tests.user_id('v.stranger@example.test'));
select is(app.apply_for_vendor('Stranger Goods', '', 's@example.test', 'DE') ->> 'slug', 'stranger-goods-2',
  'After a rejection the user may apply again (a new slug: the old one is kept).');

-- ---------------------------------------------------------------------------------------------
-- The vendor topic
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('v.owner@example.test'));
select ok(app.can_read_topic('vendor:' || :'vendor'), 'The owner reads vendor:<id>.');
select tests.authenticate_as(tests.user_id('v.stranger@example.test'));
select ok(not app.can_read_topic('vendor:' || :'vendor'), 'A stranger does not read vendor:<id>.');
select tests.authenticate_as(tests.user_id('v.admin@example.test'));
select ok(not app.can_read_topic('vendor:' || :'vendor'), 'An ADMIN does not read a vendor''s topic either (admin reads the admin topic).');
select tests.clear_authentication();
update app.users set status = 'suspended' where id = tests.user_id('v.owner@example.test');
select tests.authenticate_as(tests.user_id('v.owner@example.test'));
select ok(not app.can_read_topic('vendor:' || :'vendor'), 'A suspended owner reads no vendor topic.');

select * from finish();
rollback;
