/*
 * The store in the account's export and deletion: the parts `orders` and `vendor` of the export,
 * and the erasure step `store`, registered in the registries the sign-in and account migration
 * keeps (app_private.account_export_parts, app_private.account_erasure_steps). A file of its own
 * because those registries are created after the store's migrations.
 *
 * What the foreign keys already do on deletion: the person's orders, checkouts, order history,
 * refunds, vendor decisions and settlement runs stay for the vendors and the accounts, without
 * the person (set null); their vendor stays, without its owner. The erasure step does the rest.
 *
 * Tables: none. Nothing destructive.
 */

create function app_private.account_export_orders(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(app.order_json(o) order by o.created_at desc, o.id desc), '[]'::jsonb)
  from app.orders o where o.buyer_id = target_user_id
$$;
comment on function app_private.account_export_orders(uuid) is
  'Export part `orders`: every order the person bought, as GET /api/store/orders/:id shows it (items, payment, shipping, history).';

create function app_private.account_export_vendor(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select app.vendor_json(v, true) || jsonb_build_object(
    'settlements', coalesce((select jsonb_agg(app.settlement_json(s) order by s.created_at desc, s.id desc)
                             from app.settlements s where s.vendor_id = v.id), '[]'::jsonb))
  from app.vendors v where v.owner_id = target_user_id
  order by (v.status <> 'rejected') desc, v.created_at desc
  limit 1
$$;
comment on function app_private.account_export_vendor(uuid) is
  'Export part `vendor`: the person''s vendor (the live one, else the latest application) as its owner sees it, decisions included, with its settlements; never the payout account''s id.';

/*
 * The store's erasure step. Unpaid checkouts are cancelled (their stock goes back); orders that
 * need no delivery any more lose their shipping address (orders still to ship keep it: the vendor
 * ships to it); the person's vendors stop selling (a pending application is rejected, an approved
 * vendor suspended, each recorded), so an ownerless shop never stays in the catalog.
 */
create function app_private.account_erase_store(target_user_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.account_erase_store(uuid) is
  'Erasure step `store`: the person''s unpaid checkouts cancelled (stock released), shipping addresses of orders that need no delivery removed, their vendors stopped (pending rejected, approved suspended, recorded in the decisions). Their orders, refunds and settlements stay for the vendors and the accounts, without them (the foreign keys).';

insert into app_private.account_export_parts (part, function_name, description) values
  ('orders', 'app_private.account_export_orders(uuid)', 'Orders bought, with items, payment, shipping and history (store).'),
  ('vendor', 'app_private.account_export_vendor(uuid)', 'The person''s vendor with its decisions and settlements (store).');

insert into app_private.account_erasure_steps (domain, function_name, position, description) values
  ('store', 'app_private.account_erase_store(uuid)', 200,
   'Unpaid checkouts cancelled, addresses of finished orders removed, the person''s vendors stopped.');

revoke execute on all functions in schema app, app_private from public;
