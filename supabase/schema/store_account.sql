-- Agora's schema as it is now, domain store_account: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124125000_store_account.sql
--   supabase/migrations/20261206000310_store_account_export_rows.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_erase_store
-- created in 20261124125000_store_account.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_erase_store(target_user_id uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  open_checkout uuid;
  vendor app.vendors;
  next_status app.vendor_status;
begin
  for open_checkout in
    select distinct o.checkout_id from app.orders o
    where o.buyer_id = target_user_id and o.status = 'pending_payment'
  loop
    perform app_private.cancel_unpaid_checkout(open_checkout, 'system', null,
                                               'the buyer deleted their account');
  end loop;
  update app.orders o set shipping_address = null
  where o.buyer_id = target_user_id and o.shipping_address is not null
    and o.status in ('delivered', 'completed', 'cancelled', 'refunded');
  for vendor in
    select * from app.vendors v
    where v.owner_id = target_user_id and v.status in ('pending', 'approved')
    order by v.id for update
  loop
    next_status := case when vendor.status = 'pending' then 'rejected' else 'suspended' end;
    insert into app.vendor_decisions (vendor_id, from_status, to_status, reason, decided_by)
    values (vendor.id, vendor.status, next_status, 'the owner deleted their account', null);
    update app.vendors v set status = next_status where v.id = vendor.id;
  end loop;
end;
$$;

COMMENT ON FUNCTION app_private.account_erase_store(target_user_id uuid) IS 'Erasure step `store`: the person''s unpaid checkouts cancelled (stock released), shipping addresses of orders that need no delivery removed, their vendors stopped (pending rejected, approved suspended, recorded in the decisions). Their orders, refunds and settlements stay for the vendors and the accounts, without them (the foreign keys).';

REVOKE ALL ON FUNCTION app_private.account_erase_store(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_orders
-- created in 20261124125000_store_account.sql; last changed in 20261206000310_store_account_export_rows.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_orders(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_orders_rows(target_user_id) with ordinality r (e, n)
$$;

COMMENT ON FUNCTION app_private.account_export_orders(target_user_id uuid) IS 'Export part `orders`: the list of app_private.account_export_orders_rows (every order the person bought, as GET /api/store/orders/:id shows it: items, payment, shipping, history).';

REVOKE ALL ON FUNCTION app_private.account_export_orders(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_orders_rows
-- created in 20261206000310_store_account_export_rows.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_orders_rows(target_user_id uuid) RETURNS SETOF text
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select app.order_json(o)::text
  from app.orders o where o.buyer_id = target_user_id
  order by o.created_at desc, o.id desc
$$;

COMMENT ON FUNCTION app_private.account_export_orders_rows(target_user_id uuid) IS 'Export part `orders`, an element per row: every order the person bought, newest first, as GET /api/store/orders/:id shows it (items, payment, shipping, history).';

REVOKE ALL ON FUNCTION app_private.account_export_orders_rows(target_user_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.account_export_vendor
-- created in 20261124125000_store_account.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.account_export_vendor(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select app.vendor_json(v, true) || jsonb_build_object(
    'settlements', coalesce((select jsonb_agg(app.settlement_json(s) order by s.created_at desc, s.id desc)
                             from app.settlements s where s.vendor_id = v.id), '[]'::jsonb))
  from app.vendors v where v.owner_id = target_user_id
  order by (v.status <> 'rejected') desc, v.created_at desc
  limit 1
$$;

COMMENT ON FUNCTION app_private.account_export_vendor(target_user_id uuid) IS 'Export part `vendor`: the person''s vendor (the live one, else the latest application) as its owner sees it, decisions included, with its settlements; never the payout account''s id.';

REVOKE ALL ON FUNCTION app_private.account_export_vendor(target_user_id uuid) FROM PUBLIC;
