/*
 * app.order_buyer_name finds the order by its primary key (issue 30: the account export of a
 * heavy buyer, docs/benchmarks.md).
 *
 * It checked that the order exists with that buyer as `exists (... where o.id = target.id and
 * o.buyer_id = target.buyer_id)`. Planned once for any order, that matched both columns of
 * orders_buyer_idx (buyer_id, created_at, id), and Postgres walked every order of the buyer to
 * find the one id: 0.7 ms an order for a buyer with 50,000 orders, so app.order_json of each of
 * them, and the export of their orders (every order through app.order_json) took 23 s at the
 * growth bench's x10, quadratic in the buyer's orders. Now the order's buyer is read by the
 * order's id (the primary key, one row) and compared: the same answer, a few microseconds.
 *
 * Tables touched: none (one function replaced).
 */

create or replace function app.order_buyer_name(target app.orders)
returns text
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return (
    select u.name from app.users u
    where u.id = target.buyer_id
      -- The order's own buyer, by the order's primary key (as a pair, the buyer's index matched
      -- both columns and was walked across all of the buyer's orders).
      and u.id = (select o.buyer_id from app.orders o where o.id = target.id)
  );
end;
$$;
