/*
 * Settlements: per vendor, the delivered or completed and paid orders up to the cut-off; the
 * commission per order rounded half up (the store's rate or the vendor's own); each order settled
 * exactly once (a second run settles nothing, a duplicate line violates the unique key); refunds
 * after a settlement deducted from the next one, carried when they exceed it; payouts held while
 * the account is not active and released when it is; the ledger append-only; who reads what.
 */
begin;
select plan(31);

select tests.create_user('s.buyer@example.test', 'SUBSCRIBER');
select tests.create_user('s.seller@example.test', 'MEMBER');
select tests.create_user('s.seller2@example.test', 'MEMBER');
select tests.create_user('s.stranger@example.test', 'MEMBER');
select tests.create_user('s.admin@example.test', 'ADMIN');
select tests.create_vendor(tests.user_id('s.seller@example.test'), 'Settle One') as v1 \gset
select tests.create_vendor(tests.user_id('s.seller2@example.test'), 'Settle Two', 'approved', 1250) as v2 \gset
update app.vendors set payout_account_id = 'acct_settle_one', payouts_status = 'active' where id = :'v1';
update app.vendors set payout_account_id = 'acct_settle_two', payouts_status = 'pending' where id = :'v2';
-- Prices chosen so each order's commission has a half cent: 5% of 1010 = 50.5, 12.5% of 1004 = 125.5.
select tests.create_product(:'v1', 'Ten Ten', 1010, 100) as p1 \gset
select tests.create_product(:'v2', 'Ten Four', 1004, 100) as p2 \gset

/* A paid checkout of one unit of each, its orders delivered at `at`. */
create function pg_temp.delivered_checkout(intent text, at timestamptz) returns uuid
language plpgsql as $$
declare c uuid;
begin
  c := tests.checkout(tests.user_id('s.buyer@example.test'),
    format('[{"productId": "%s", "quantity": 1}, {"productId": "%s", "quantity": 1}]',
           (select id from app.products where title = 'Ten Ten'), (select id from app.products where title = 'Ten Four'))::jsonb,
    intent);
  perform app_private.apply_payment_intent(intent, 'succeeded', 2014, 'usd');
  update app.orders set status = 'delivered', delivered_at = at where checkout_id = c;
  return c;
end;
$$;

select pg_temp.delivered_checkout('pi_s1', now() - interval '2 days') as c1 \gset
select pg_temp.delivered_checkout('pi_s2', now() - interval '1 day') as c2 \gset
select pg_temp.delivered_checkout('pi_s3', now() + interval '1 hour') as c3 \gset

-- ---------------------------------------------------------------------------------------------
-- Runs
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('s.seller@example.test'));
select throws_ok($$ select app.run_settlements() $$, 'AG403', null, 'Only an ADMIN runs settlements.');
select tests.authenticate_as(tests.user_id('s.admin@example.test'));
select app.run_settlements() as run1 \gset
select is((:'run1'::jsonb ->> 'orders')::int, 4, 'The run settles the orders delivered up to now, not the later ones.');
select tests.clear_authentication();
select is(
  (select (order_count, gross, commission, refunds, net, status::text)::text from app.settlements
   where run_id = (:'run1'::jsonb ->> 'runId')::uuid and vendor_id = :'v1'),
  '(2,2020,102,0,1918,pending)',
  'Vendor one: 5% of 1010 is 50.5, rounded half up to 51, per order; its active account makes the payout pending.'
);
select is(
  (select (order_count, gross, commission, net, status::text)::text from app.settlements
   where run_id = (:'run1'::jsonb ->> 'runId')::uuid and vendor_id = :'v2'),
  '(2,2008,252,1756,held)',
  'Vendor two pays its own 12.5% (125.5 rounds to 126 per order); its account is not active: held.'
);
select is(
  (select count(*)::int from app_private.jobs j join app.settlements s on j.payload ->> 'settlementId' = s.id::text
   where j.kind = 'store.payout' and s.vendor_id = :'v1'),
  1, 'A store.payout job is queued for the pending settlement, none for the held one.'
);

select tests.authenticate_as(tests.user_id('s.admin@example.test'));
select is((app.run_settlements() ->> 'orders')::int, 0, 'Running it again settles nothing twice.');
select tests.clear_authentication();
select throws_ok(
  format($$ insert into app.settlement_lines (settlement_id, vendor_id, kind, order_id, amount)
            select s.id, s.vendor_id, 'sale', %L, 1 from app.settlements s limit 1 $$, tests.order_of(:'c1', :'v1')),
  '23505', null, 'A second sale line for an order violates the ledger''s unique key, whatever path writes it.'
);
select throws_ok(
  $$ update app.settlement_lines set amount = 0 $$, '42501', null, 'The ledger refuses updates.'
);
select throws_ok(
  $$ delete from app.settlement_lines $$, '42501', null, 'The ledger refuses deletes.'
);
select throws_ok(
  $$ update app.settlements set net = 0, gross = 0, commission = 0 $$, '42501', null,
  'A settlement''s amounts never change.'
);

-- The later orders settle once their delivery is before the cut-off.
update app.orders set delivered_at = now() - interval '1 minute' where checkout_id = :'c3';
select (app_private.settle(now(), null) ->> 'orders')::int as later \gset
select is(:later, 2, 'The next run settles the orders delivered since.');

-- A refund after settlement is deducted from the next one.
select tests.authenticate_as(tests.user_id('s.admin@example.test'));
select is(app.change_order_status(tests.order_of(:'c1', :'v1'), 'refunded', 'damaged') ->> 'status', 'refunded',
  'An ADMIN refunds a settled order.');
select tests.clear_authentication();
select pg_temp.delivered_checkout('pi_s4', now() - interval '1 minute') as c4 \gset
select app_private.settle(now(), null) as run3 \gset
select is(
  (select (order_count, gross, commission, refunds, net)::text from app.settlements
   where run_id = (:'run3'::jsonb ->> 'runId')::uuid and vendor_id = :'v1'),
  '(1,1010,51,1010,-51)',
  'The refunded order''s total is deducted from the vendor''s next settlement (net = gross - commission - refunds).'
);
select is(
  (select status::text from app.settlements where run_id = (:'run3'::jsonb ->> 'runId')::uuid and vendor_id = :'v1'),
  'held', 'A negative net is held, not transferred.'
);
select is((select count(*)::int from app.settlement_lines where order_id = tests.order_of(:'c1', :'v1')), 2,
  'The refunded order has its sale line and one refund line.');
select pg_temp.delivered_checkout('pi_s5', now() - interval '1 minute') as c5 \gset
select app_private.settle(now(), null) as run4 \gset
select is(
  (select (gross, refunds, net, status::text)::text from app.settlements
   where run_id = (:'run4'::jsonb ->> 'runId')::uuid and vendor_id = :'v1'),
  '(1010,51,908,pending)', 'The negative balance is carried into the next settlement.'
);
select is(
  (select carried_into from app.settlements where run_id = (:'run3'::jsonb ->> 'runId')::uuid and vendor_id = :'v1'),
  (select id from app.settlements where run_id = (:'run4'::jsonb ->> 'runId')::uuid and vendor_id = :'v1'),
  'The held settlement says where it was carried.'
);
select app_private.settle(now(), null) as run5 \gset
select is((:'run5'::jsonb ->> 'orders')::int, 0, 'Nothing is carried or deducted twice.');
select is(jsonb_array_length(:'run5'::jsonb -> 'settlements'), 0, 'An empty run makes no settlement.');

-- Payout accounts.
select is(app_private.apply_payout_account('acct_settle_two', 'active'), :'v2'::uuid,
  'account.updated (re-read) makes vendor two''s payouts active.');
select is(
  (select array_agg(distinct status::text) from app.settlements where vendor_id = :'v2'), array['pending'],
  'Its held settlements become pending.'
);
select is(
  (select count(*)::int from app_private.jobs j join app.settlements s on j.payload ->> 'settlementId' = s.id::text
   where j.kind = 'store.payout' and s.vendor_id = :'v2' and j.state = 'queued'),
  (select count(*)::int from app.settlements where vendor_id = :'v2'),
  'And each gets its store.payout job.'
);
select app_private.record_payout(id, 'tr_test_' || left(id::text, 8)) from app.settlements where vendor_id = :'v2';
select is((select array_agg(distinct status::text) from app.settlements where vendor_id = :'v2'), array['paid'],
  'A recorded transfer marks the settlement paid.');

-- ---------------------------------------------------------------------------------------------
-- Who reads what
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('s.seller@example.test'));
select is((select array_agg(distinct vendor_id) from app.settlements), array[:'v1'::uuid],
  'A vendor''s owner reads its own settlements only.');
select is((select array_agg(distinct vendor_id) from app.settlement_lines), array[:'v1'::uuid],
  'And its own ledger lines only.');
select is((select count(*)::int from app.settlement_runs), 0, 'Runs are for ADMINs.');
select tests.authenticate_as(tests.user_id('s.stranger@example.test'));
select is((select count(*)::int from app.settlements), 0, 'A stranger reads no settlement.');
select tests.authenticate_as(tests.user_id('s.admin@example.test'));
select is((select count(distinct vendor_id)::int from app.settlements where vendor_id in (:'v1', :'v2')), 2,
  'An ADMIN reads every vendor''s settlements.');
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app.settlements $$, '42501', null, 'A visitor holds no privilege on settlements.');

-- The schedule settles only in the configured hour.
select tests.clear_authentication();
insert into app.config_versions (version, config, reason)
  values ((select max(version) + 1 from app.config_versions),
          jsonb_build_object('store', jsonb_build_object('settlementHourUtc', (extract(hour from now() at time zone 'UTC')::int + 1) % 24)),
          'test: another hour');
select is(app_private.run_scheduled_settlements(), null, 'Outside store.settlementHourUtc the hourly job settles nothing.');

select tests.clear_authentication();
select is_empty(
  $$ select * from tests.catalog_counts_drift() $$,
  'The catalog counts behind the facets agree with the products after all of the above.'
);

select * from finish();
rollback;
