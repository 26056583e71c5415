/*
 * The account export streams a buyer's orders (issue 30, docs/account.md; the registry's rows,
 * 20261206000300_signin_export_streams_every_list.sql). Built as one value, the growth
 * benchmark's heavy buyer had 33 MB of orders at a tenth of the review's size: at its size the
 * list alone passes jsonb's 256 MB limit. Now app_private.account_export_orders_rows gives one
 * order per row, newest first, and the part is that list aggregated (one definition of an order
 * in the export: app.order_json).
 *
 * Tables touched: app_private.account_export_parts (the orders' row).
 */

create function app_private.account_export_orders_rows(target_user_id uuid)
returns setof text
language sql stable
set search_path = ''
as $$
  select app.order_json(o)::text
  from app.orders o where o.buyer_id = target_user_id
  order by o.created_at desc, o.id desc
$$;

comment on function app_private.account_export_orders_rows(uuid) is
  'Export part `orders`, an element per row: every order the person bought, newest first, as GET /api/store/orders/:id shows it (items, payment, shipping, history).';
revoke all on function app_private.account_export_orders_rows(uuid) from public;

create or replace function app_private.account_export_orders(target_user_id uuid)
returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(r.e::jsonb order by r.n), '[]'::jsonb)
  from app_private.account_export_orders_rows(target_user_id) with ordinality r (e, n)
$$;

comment on function app_private.account_export_orders(uuid) is
  'Export part `orders`: the list of app_private.account_export_orders_rows (every order the person bought, as GET /api/store/orders/:id shows it: items, payment, shipping, history).';

update app_private.account_export_parts set rows_function = 'app_private.account_export_orders_rows(uuid)'
where part = 'orders';
