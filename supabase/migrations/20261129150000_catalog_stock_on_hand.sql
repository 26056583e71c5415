/*
 * A product's stock as its vendor's owner needs it to edit it. The API showed only `available`
 * (stock less what unpaid checkouts hold), while `PUT /api/store/products/{id}` took `stock`, the
 * units on hand: an edit form filled from `available` and sent back unchanged lost every unit a
 * checkout held (stock 12, 2 reserved: after a description-only edit, 10 on hand, 8 available).
 * The owner now also sees `onHand` and `reserved`, so a client edits the number it is shown;
 * everyone else still sees `available` only (what is in other people's carts is the shop's
 * business). The write side (an edit sends `stock` only when it changes, with `expectedStock`,
 * 409 when it moved) is in functions/api/store/products.queries.ts.
 *
 * Tables touched: none. app.product_json is replaced (same signature, same grants).
 */

create or replace function app.product_json(product app.products, vendor app.vendors)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', product.id,
    'vendor', jsonb_build_object('id', vendor.id, 'name', vendor.name, 'slug', vendor.slug),
    'title', product.title,
    'description', product.description,
    'category', product.category,
    'tags', to_jsonb(product.tags),
    'images', to_jsonb(product.images),
    'price', jsonb_build_object('amount', product.price_amount, 'currency', product.currency),
    'stock', case
      when vendor.owner_id = (select auth.uid()) then jsonb_build_object(
        'available', greatest(product.stock - product.reserved, 0),
        'onHand', product.stock,
        'reserved', product.reserved)
      else jsonb_build_object('available', greatest(product.stock - product.reserved, 0))
    end,
    'status', product.status,
    'createdAt', to_char(product.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(product.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )
$$;

comment on function app.product_json(app.products, app.vendors) is
  'A product as the API shows it: price as money, available stock (stock less reservations), the vendor''s id, name and slug; for the vendor''s owner (auth.uid(), the caller) also the units on hand (onHand, what PUT /api/store/products/{id} sets as stock) and reserved by unpaid checkouts, so an edit starts from the number it writes. A builder: reads no table.';
