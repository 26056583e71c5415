/*
 * The store's schema and its catalog-level guarantees: tables with RLS and exactly their policies,
 * no write privilege for the API roles except the vendor's product columns, the server-only
 * functions out of the API roles' reach, the state machine exactly as the contract's table, and the
 * keys the money and stock rules rest on (one live vendor per user, one refund per order, each
 * order settled once, each event id stored once).
 */
begin;
select plan(46);

select has_table('app', 'vendors', 'The table app.vendors exists.');
select has_table('app', 'vendor_decisions', 'The table app.vendor_decisions exists.');
select has_table('app', 'products', 'The table app.products exists.');
select has_table('app', 'checkouts', 'The table app.checkouts exists.');
select has_table('app', 'orders', 'The table app.orders exists.');
select has_table('app', 'order_items', 'The table app.order_items exists.');
select has_table('app', 'order_history', 'The table app.order_history exists.');
select has_table('app', 'order_transitions', 'The table app.order_transitions exists.');
select has_table('app', 'refunds', 'The table app.refunds exists.');
select has_table('app', 'settlement_runs', 'The table app.settlement_runs exists.');
select has_table('app', 'settlements', 'The table app.settlements exists.');
select has_table('app', 'settlement_lines', 'The table app.settlement_lines exists.');
select has_table('app_private', 'stripe_events', 'The table app_private.stripe_events exists.');
select has_table('app_private', 'dev_payment_objects', 'The table app_private.dev_payment_objects exists.');
select has_table('app_private', 'checkout_secrets', 'The table app_private.checkout_secrets exists.');
select has_table('app_private', 'catalog_counts', 'The table app_private.catalog_counts (the facets'' counts) exists.');
select has_table('app_private', 'catalog_words', 'The table app_private.catalog_words (the vocabulary of spelling correction) exists.');

select is_empty(
  $$ select c.oid::regclass::text from pg_class c
     where c.oid in ('app.vendors'::regclass, 'app.vendor_decisions'::regclass, 'app.products'::regclass,
                     'app.checkouts'::regclass, 'app.orders'::regclass, 'app.order_items'::regclass,
                     'app.order_history'::regclass, 'app.order_transitions'::regclass, 'app.refunds'::regclass,
                     'app.settlement_runs'::regclass, 'app.settlements'::regclass, 'app.settlement_lines'::regclass,
                     'app_private.stripe_events'::regclass, 'app_private.dev_payment_objects'::regclass,
                     'app_private.checkout_secrets'::regclass, 'app_private.catalog_counts'::regclass,
                     'app_private.catalog_words'::regclass)
       and not c.relrowsecurity $$,
  'Every store table has row level security enabled.'
);

-- Policies: exactly these, per table.
select policies_are('app', 'vendors', array['vendors_select_owner_or_admin'],
  'app.vendors: the owner and ADMINs read; nobody writes directly.');
select policies_are('app', 'vendor_decisions', array['vendor_decisions_select_owner_or_admin'],
  'app.vendor_decisions: the owner and ADMINs read; nobody writes directly.');
select policies_are('app', 'products',
  array['products_select_owner_or_admin', 'products_insert_vendor', 'products_update_vendor'],
  'app.products: owner and ADMIN reads, and the approved vendor''s owner writes.');
select policies_are('app', 'checkouts', array['checkouts_select_buyer_or_admin'],
  'app.checkouts: the buyer and ADMINs read.');
select policies_are('app', 'orders', array['orders_select_buyer_vendor_or_admin'],
  'app.orders: the buyer, the vendor''s owner and ADMINs read.');
select policies_are('app', 'order_items', array['order_items_select_visible'],
  'app.order_items: whoever sees the order.');
select policies_are('app', 'order_history', array['order_history_select_visible'],
  'app.order_history: whoever sees the order.');
select policies_are('app', 'refunds', array['refunds_select_visible'],
  'app.refunds: whoever sees the order.');
select policies_are('app', 'order_transitions', array['order_transitions_select_all'],
  'app.order_transitions: readable by every signed-in user.');
select policies_are('app', 'settlement_runs', array['settlement_runs_select_admin'],
  'app.settlement_runs: ADMINs only.');
select policies_are('app', 'settlements', array['settlements_select_vendor_or_admin'],
  'app.settlements: the vendor''s owner and ADMINs read.');
select policies_are('app', 'settlement_lines', array['settlement_lines_select_vendor_or_admin'],
  'app.settlement_lines: the vendor''s owner and ADMINs read.');

-- Writes: none for the API roles but the product columns of a vendor.
select is_empty(
  $$ select format('%s has %s on %s', r.role, p.privilege, c.oid::regclass)
     from pg_class c
     cross join (values ('anon'), ('authenticated')) as r (role)
     cross join (values ('INSERT'), ('UPDATE'), ('DELETE'), ('TRUNCATE')) as p (privilege)
     where c.oid in ('app.vendors'::regclass, 'app.vendor_decisions'::regclass, 'app.checkouts'::regclass,
                     'app.orders'::regclass, 'app.order_items'::regclass, 'app.order_history'::regclass,
                     'app.order_transitions'::regclass, 'app.refunds'::regclass, 'app.settlement_runs'::regclass,
                     'app.settlements'::regclass, 'app.settlement_lines'::regclass)
       and (has_table_privilege(r.role, c.oid, p.privilege)
            or (p.privilege in ('INSERT', 'UPDATE') and has_any_column_privilege(r.role, c.oid, p.privilege))) $$,
  'No API role may insert, update or delete vendors, orders, refunds or settlements directly: only through the checked functions.'
);
select is(
  (select array_agg(a.attname::text order by a.attname) from pg_attribute a
   where a.attrelid = 'app.products'::regclass and a.attnum > 0 and not a.attisdropped
     and has_column_privilege('authenticated', a.attrelid, a.attnum, 'UPDATE')),
  array['category', 'currency', 'description', 'images', 'price_amount', 'status', 'stock', 'tags', 'title']::text[],
  'Vendors may update only the descriptive, price, stock and status columns of a product (never its vendor or reservations).'
);
select ok(
  not has_column_privilege('authenticated', 'app.products', 'reserved', 'INSERT')
  and not has_column_privilege('authenticated', 'app.products', 'reserved', 'UPDATE'),
  'Nobody but the order functions writes a product''s reservations.'
);

-- Functions: the server-only ones are out of reach; the public reads are open to visitors.
select is_empty(
  $$ select p.oid::regprocedure::text from pg_proc p
     where p.pronamespace = 'app_private'::regnamespace
       and p.proname in ('settle', 'apply_payment_intent', 'record_stripe_event', 'move_order',
                         'expire_reservations', 'complete_delivered_orders', 'apply_payout_account',
                         'record_payout', 'request_refund', 'set_payout_account', 'run_scheduled_settlements',
                         'create_checkout_as')
       and (has_function_privilege('anon', p.oid, 'EXECUTE') or has_function_privilege('authenticated', p.oid, 'EXECUTE')
            or has_function_privilege('service_role', p.oid, 'EXECUTE')) $$,
  'No API role (service_role included) executes the settlement, payment, webhook, expiry or payout functions.'
);
select ok(
  has_function_privilege('anon', 'app.search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer)', 'EXECUTE')
  and has_function_privilege('anon', 'app.get_product(uuid)', 'EXECUTE')
  and has_function_privilege('anon', 'app.list_vendors(text, text, uuid, integer)', 'EXECUTE'),
  'Visitors read the catalog and the vendor list through functions.'
);
select ok(
  not has_function_privilege('anon', 'app.create_checkout(jsonb, jsonb, text, text, text)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.change_order_status(uuid, app.order_status, text, text, text)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.run_settlements(timestamptz)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.set_vendor_status(uuid, app.vendor_status, text, integer)', 'EXECUTE'),
  'Visitors can neither check out, move orders, run settlements nor decide on vendors.'
);

-- The state machine is exactly the contract's table.
select set_eq(
  $$ select from_status::text, to_status::text, actor::text from app.order_transitions $$,
  $$ values
     ('pending_payment', 'paid', 'system'),
     ('pending_payment', 'cancelled', 'buyer'), ('pending_payment', 'cancelled', 'admin'),
     ('pending_payment', 'cancelled', 'system'),
     ('paid', 'cancelled', 'vendor'), ('paid', 'cancelled', 'admin'),
     ('processing', 'cancelled', 'vendor'), ('processing', 'cancelled', 'admin'),
     ('paid', 'processing', 'vendor'), ('paid', 'processing', 'admin'),
     ('processing', 'shipped', 'vendor'), ('processing', 'shipped', 'admin'),
     ('shipped', 'delivered', 'vendor'), ('shipped', 'delivered', 'admin'),
     ('delivered', 'completed', 'buyer'), ('delivered', 'completed', 'admin'),
     ('delivered', 'completed', 'system'),
     ('delivered', 'refunded', 'admin'), ('completed', 'refunded', 'admin') $$,
  'app.order_transitions holds exactly the contract''s moves and actors.'
);

-- The keys the rules rest on.
select has_index('app', 'vendors', 'vendors_one_live_per_owner', 'One live vendor per user is a partial unique index.');
select ok(
  (select indisunique and pg_get_expr(indpred, indrelid) like '%pending%approved%suspended%'
   from pg_index where indexrelid = 'app.vendors_one_live_per_owner'::regclass),
  'The one-live-vendor index is unique over pending, approved and suspended vendors.'
);
select col_is_unique('app', 'refunds', 'order_id', 'At most one refund per order.');
select col_is_unique('app', 'settlement_lines', array['order_id', 'kind'], 'Each order is settled once as a sale and deducted once as a refund.');
select col_is_pk('app_private', 'stripe_events', 'id', 'Webhook events are keyed by their id: a replay inserts nothing.');
select has_check('app', 'products', 'available stock is never negative (a check on reserved <= stock).');
select has_trigger('app', 'settlement_lines', 'settlement_lines_append_only', 'The settlement ledger refuses updates and deletes.');
select isnt_empty(
  $$ select 1 from cron.job where jobname = 'agora-expire-reservations' and schedule = '* * * * *' $$,
  'pg_cron expires reservations every minute.'
);
select isnt_empty(
  $$ select 1 from cron.job where jobname = 'agora-settlements' and schedule = '0 * * * *'
       and command = 'select app_private.run_scheduled_settlements()' $$,
  'pg_cron calls the settlement every hour; it settles in the hour store.settlementHourUtc names.'
);

select * from finish();
rollback;
