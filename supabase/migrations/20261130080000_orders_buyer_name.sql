/*
 * An order names its buyer: `buyer: { id, name }` (the buyer's profile name, never an e-mail) in
 * every order answer and order event, so a shop's owner sees who ordered (issue 27: "vendor orders
 * show no order number or buyer"); null when the buyer's account was deleted.
 *
 * app.users shows a user only their own row, so the name is read by app.order_buyer_name
 * (security definer), which answers only for an order row that exists with that buyer: the
 * order's id and buyer together are what it takes, which whoever sees the order has.
 *
 * Tables touched: none. Functions: app.order_buyer_name (new), app.order_json (replaced: the
 * `buyer` field added, nothing else changed). Nothing destructive.
 */

create function app.order_buyer_name(target app.orders) returns text
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return (
    select u.name from app.users u
    where u.id = target.buyer_id
      and exists (select 1 from app.orders o where o.id = target.id and o.buyer_id = target.buyer_id)
  );
end;
$$;

comment on function app.order_buyer_name(app.orders) is 'The profile name of an order''s buyer, for app.order_json (the shop''s owner and ADMINs see who ordered). security definer: app.users shows a user only their own row; it answers only for an order that exists with that buyer, so a made-up row learns nothing.';

revoke all on function app.order_buyer_name(app.orders) from public;
grant execute on function app.order_buyer_name(app.orders) to authenticated;

create or replace function app.order_json(target app.orders) returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  return (
    select jsonb_build_object(
      'id', target.id,
      'checkoutId', target.checkout_id,
      'buyerId', target.buyer_id,
      'buyer', case when target.buyer_id is not null then
        jsonb_build_object('id', target.buyer_id, 'name', app.order_buyer_name(target)) end,
      'vendor', jsonb_build_object('id', target.vendor_id, 'name', target.vendor_name),
      'status', target.status,
      'items', coalesce((
        select jsonb_agg(jsonb_build_object(
          'productId', i.product_id,
          'title', i.title,
          'unitPrice', jsonb_build_object('amount', i.unit_price, 'currency', target.currency),
          'quantity', i.quantity,
          'total', jsonb_build_object('amount', i.total, 'currency', target.currency)
        ) order by i.title, i.product_id)
        from app.order_items i where i.order_id = target.id
      ), '[]'::jsonb),
      'total', jsonb_build_object('amount', target.total, 'currency', target.currency),
      'payment', jsonb_build_object(
        'status', target.payment_status,
        'refund', (
          select jsonb_build_object('status', r.status,
                                    'amount', jsonb_build_object('amount', r.amount, 'currency', r.currency))
          from app.refunds r where r.order_id = target.id
        )
      ),
      'shipping', jsonb_build_object(
        'address', target.shipping_address,
        'carrier', target.carrier,
        'trackingNumber', target.tracking_number
      ),
      'history', coalesce((
        select jsonb_agg(jsonb_build_object(
          'from', h.from_status, 'to', h.to_status, 'actor', h.actor, 'reason', h.reason,
          'at', to_char(h.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        ) order by h.id)
        from app.order_history h where h.order_id = target.id
      ), '[]'::jsonb),
      'createdAt', to_char(target.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'updatedAt', to_char(target.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    )
  );
end;
$$;

comment on function app.order_json(app.orders) is 'An order as the API shows it (GET /api/store/orders/:id and every order event): buyer (id and profile name), vendor, items with money, total, payment (with its refund), shipping and history. security invoker: items, refund and history are read with the caller''s rights, which show them to exactly those who see the order; the buyer''s name through app.order_buyer_name.';

revoke execute on all functions in schema app, app_private from public;
