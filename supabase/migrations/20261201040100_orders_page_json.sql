-- A page of orders as JSON in one statement per part (issue 30).
--
-- app.order_json ran three statements per order (items, refund, history), each under the RLS of
-- its table, whose policy asks app.orders' policy again: for a shop's owner that runs
-- app.my_vendor_ids() (two queries) once per statement, so a page of 21 orders cost about 60 such
-- queries (the growth benchmark's "a small vendor's orders": 120-170 ms on a loaded machine, ~5 ms
-- per order, against ~1 ms for the buyer, whose branch of the policy comes first). app.orders_json
-- builds a whole page's objects with one aggregate per part, so each policy's subquery runs once
-- per statement; app.order_json is now its one-order case, so the object has one definition. Both
-- stay plpgsql with one statement, so their plans are kept per connection (docs/conventions.md: a
-- `language sql` function with a pinned search_path is planned again on every call).

create function app.orders_json(targets app.orders[])
returns table (order_id uuid, body jsonb)
language plpgsql stable
set search_path = ''
as $$
begin
  return query
  with page as (
    select t.id, t.currency from unnest(targets) t
  ), items as (
    select i.order_id, jsonb_agg(jsonb_build_object(
             'productId', i.product_id,
             'title', i.title,
             'unitPrice', jsonb_build_object('amount', i.unit_price, 'currency', p.currency),
             'quantity', i.quantity,
             'total', jsonb_build_object('amount', i.total, 'currency', p.currency)
           ) order by i.title, i.product_id) as items
    from app.order_items i join page p on p.id = i.order_id
    group by i.order_id
  ), refunds as (
    select r.order_id, jsonb_build_object(
             'status', r.status,
             'amount', jsonb_build_object('amount', r.amount, 'currency', r.currency)) as refund
    from app.refunds r where r.order_id in (select page.id from page)
  ), history as (
    select h.order_id, jsonb_agg(jsonb_build_object(
             'from', h.from_status, 'to', h.to_status, 'actor', h.actor, 'reason', h.reason,
             'at', to_char(h.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
           ) order by h.id) as history
    from app.order_history h where h.order_id in (select page.id from page)
    group by h.order_id
  )
  select t.id, jsonb_build_object(
    'id', t.id,
    'checkoutId', t.checkout_id,
    'buyerId', t.buyer_id,
    'buyer', case when t.buyer_id is not null then
      jsonb_build_object('id', t.buyer_id, 'name', app.order_buyer_name(t)) end,
    'vendor', jsonb_build_object('id', t.vendor_id, 'name', t.vendor_name),
    'status', t.status,
    'items', coalesce(i.items, '[]'::jsonb),
    'total', jsonb_build_object('amount', t.total, 'currency', t.currency),
    'payment', jsonb_build_object('status', t.payment_status, 'refund', r.refund),
    'shipping', jsonb_build_object(
      'address', t.shipping_address,
      'carrier', t.carrier,
      'trackingNumber', t.tracking_number
    ),
    'history', coalesce(h.history, '[]'::jsonb),
    'createdAt', to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(t.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )
  from unnest(targets) t
  left join items i on i.order_id = t.id
  left join refunds r on r.order_id = t.id
  left join history h on h.order_id = t.id;
end;
$$;
comment on function app.orders_json(app.orders[]) is
  'Orders as the API shows them (buyer with profile name, vendor, items with money, total, payment with its refund, shipping, history), one row per order given, in no particular order: the lists build a page''s objects here, one aggregate per part, so the policies of items, refunds and history (which ask the orders'' policy, for a shop''s owner app.my_vendor_ids()) run once per statement, not once per order. security invoker: the parts are read with the caller''s rights, which show them to exactly those who see the order; the buyer''s name through app.order_buyer_name.';
revoke all on function app.orders_json(app.orders[]) from public;
grant execute on function app.orders_json(app.orders[]) to authenticated;

create or replace function app.order_json(target app.orders) returns jsonb
language plpgsql stable
set search_path = ''
as $$
begin
  return (select x.body from app.orders_json(array[target]) x);
end;
$$;
comment on function app.order_json(app.orders) is
  'An order as the API shows it (GET /api/store/orders/:id and every order event): app.orders_json for one order, so the object has one definition. security invoker: items, refund and history are read with the caller''s rights, which show them to exactly those who see the order; the buyer''s name through app.order_buyer_name.';
