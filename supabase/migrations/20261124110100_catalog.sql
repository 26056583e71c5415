/*
 * The catalog: products of vendors with their stock, and the public search (full-text search
 * with ranking, a trigram fallback for queries that match nothing, filters, sorts, facets with
 * counts and keyset cursors for every sort).
 *
 * Inventory: `stock` is what the vendor has, `reserved` what unpaid checkouts hold; available is
 * stock - reserved, never negative (a check). Checkouts, payments and cancellations change
 * `reserved` and `stock` in SQL only, under row locks (orders migration); vendors change `stock`.
 *
 * Tables: app.products. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.product_status as enum ('draft', 'active', 'archived');
comment on type app.product_status is
  'draft: visible to its vendor only; active: in the catalog (when its vendor is approved) and orderable; archived: withdrawn, kept for the orders that name it.';

-- ---------------------------------------------------------------------------------------------
-- Helper functions the table needs
-- ---------------------------------------------------------------------------------------------

create function app.product_document(
  title text, tags text[], category text, description text
) returns tsvector
language sql immutable
set search_path = ''
as $$
  select setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
      || setweight(to_tsvector('english'::regconfig, coalesce(array_to_string(tags, ' '), '')), 'B')
      || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'C')
      || setweight(to_tsvector('english'::regconfig, coalesce(left(description, 20000), '')), 'D')
$$;
comment on function app.product_document(text, text[], text, text) is
  'The text a product is found by, weighted: title (A) over tags (B) over category (C) over description (D), English stemming. Immutable so it can feed a stored generated column; in app and executable by authenticated because the generated column is computed with the writer''s rights (it reads nothing).';
grant execute on function app.product_document(text, text[], text, text) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.products (
  id uuid primary key default gen_random_uuid(),
  vendor_id uuid not null references app.vendors (id) on delete cascade,
  title text not null check (char_length(btrim(title)) between 1 and 200),
  description text not null default '' check (char_length(description) <= 10000),
  category text not null check (category ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and char_length(category) <= 60),
  tags text[] not null default '{}' check (cardinality(tags) <= 20),
  images text[] not null default '{}' check (cardinality(images) <= 10),
  price_amount bigint not null check (price_amount between 1 and 100000000000),
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  stock integer not null default 0 check (stock >= 0),
  reserved integer not null default 0 check (reserved >= 0),
  status app.product_status not null default 'active',
  search tsvector generated always as (
    app.product_document(title, tags, category, description)
  ) stored,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint products_reserved_within_stock check (reserved <= stock)
);
comment on table app.products is
  'What vendors sell, at a price in the store''s currency (integer minor units), with stock and what unpaid checkouts reserve of it (available = stock - reserved, never negative). Vendors (owners of approved vendors) write their products under RLS; visitors read the catalog through app.search_products and app.get_product. search is the weighted full-text document.';
comment on column app.products.reserved is
  'Units held by checkouts not yet paid; changed only by the order functions, under the row''s lock.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- Full-text search over what the catalog shows (active products; the vendor join filters the rest).
create index products_search_idx on app.products using gin (search) where status = 'active';
-- Typo fallback: word similarity of the query to titles (used only when full-text finds nothing).
create index products_title_trgm_idx on app.products using gin (lower(title) extensions.gin_trgm_ops)
  where status = 'active';
-- Keyset orders of the catalog, and a vendor's own list.
create index products_newest_idx on app.products (created_at desc, id desc) where status = 'active';
create index products_price_idx on app.products (price_amount, id) where status = 'active';
create index products_category_idx on app.products (category, created_at desc, id desc) where status = 'active';
create index products_vendor_idx on app.products (vendor_id, created_at desc, id desc);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.guard_product_write() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The API role of the statement (the GUC keeps it inside security definer code).
  api_role boolean := current_setting('role', true) in ('anon', 'authenticated');
  currency text;
begin
  if tg_op = 'UPDATE' then
    if new.id <> old.id or new.vendor_id <> old.vendor_id or new.created_at <> old.created_at then
      raise exception 'a product''s id, vendor and creation time never change' using errcode = '42501';
    end if;
    new.updated_at := now();
  end if;
  if api_role and (tg_op = 'INSERT' or new.currency <> old.currency) then
    currency := app_private.store_currency();
    if new.currency <> currency then
      raise exception 'the store sells in %', currency using errcode = 'AG400',
        detail = jsonb_build_array(jsonb_build_object('path', 'price.currency', 'message', 'must be ' || currency))::text;
    end if;
  end if;
  if new.stock < new.reserved then
    raise exception 'stock cannot go below the % units unpaid checkouts hold', new.reserved
      using errcode = 'AG422', detail = jsonb_build_object('reserved', new.reserved)::text;
  end if;
  return new;
end;
$$;
comment on function app_private.guard_product_write() is
  'Products keep their id, vendor and creation time; a price is in the store''s currency (AG400); stock never goes below what unpaid checkouts hold (AG422, clearer than the check constraint behind it); updated_at is the server''s clock. security definer: it reads the store''s currency from the configuration, which vendors may not read.';

create trigger products_guard_write before insert or update on app.products
  for each row execute function app_private.guard_product_write();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.products enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

/* A product as the API shows it (the vendor's public identity inside). */
create function app.product_json(product app.products, vendor app.vendors) returns jsonb
language sql stable
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
    'stock', jsonb_build_object('available', greatest(product.stock - product.reserved, 0)),
    'status', product.status,
    'createdAt', to_char(product.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'updatedAt', to_char(product.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )
$$;
comment on function app.product_json(app.products, app.vendors) is
  'A product as the API shows it: price as money, available stock (stock less reservations), the vendor''s id, name and slug. A builder: reads no table.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

-- The owner sees all of its vendor's products (drafts too); ADMINs see every product. Everyone
-- else reads the catalog through app.search_products / app.get_product.
create policy products_select_owner on app.products for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()));
create policy products_select_admin on app.products for select to authenticated
  using ((select app.is_admin()));
-- Only the owner of an approved vendor creates and edits products.
create policy products_insert_vendor on app.products for insert to authenticated
  with check (vendor_id in (select app.my_selling_vendor_ids()));
create policy products_update_vendor on app.products for update to authenticated
  using (vendor_id in (select app.my_selling_vendor_ids()))
  with check (vendor_id in (select app.my_selling_vendor_ids()));

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant usage on type app.product_status to authenticated;
grant select on app.products to authenticated;
grant insert (vendor_id, title, description, category, tags, images, price_amount, currency, stock, status)
  on app.products to authenticated;
grant update (title, description, category, tags, images, price_amount, currency, stock, status)
  on app.products to authenticated;
grant execute on function app.product_json(app.products, app.vendors) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/* One product: in the catalog, or the caller's own (any status), or any for an ADMIN. */
create function app.get_product(target_product_id uuid) returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  result jsonb;
begin
  select app.product_json(p, v) into result
  from app.products p join app.vendors v on v.id = p.vendor_id
  where p.id = target_product_id
    and ((p.status = 'active' and v.status = 'approved')
         or p.vendor_id in (select app.my_vendor_ids())
         or app.is_admin());
  return result;
end;
$$;
comment on function app.get_product(uuid) is
  'A product as the API shows it, or null when the caller may not see it: catalog products (active, of an approved vendor) for anyone, drafts and archived products for their vendor''s owner and ADMINs. security definer: visitors hold no privilege on app tables; the visibility rule is explicit here.';
grant execute on function app.get_product(uuid) to anon, authenticated;

/*
 * The catalog search. One dynamic statement per part (items, facets), built only from fixed
 * fragments chosen by which filters were given; every value travels as a parameter ($1..$9), so
 * each combination is planned for what it asks.
 *
 * Text: `websearch_to_tsquery('english', search)` against the weighted document, ranked by
 * ts_rank_cd. When that finds nothing at all in the catalog (a typo), titles are matched by
 * trigram word similarity instead (mode `fuzzy`), ranked by that similarity. The mode is part of
 * the cursor, so later pages keep it even if a matching product appears meanwhile.
 *
 * Sorts and their keyset keys (the cursor is the last row's key and id):
 *   relevance  (rank desc, id desc)     - without a search: as newest
 *   newest     (created_at desc, id desc)
 *   price_asc  (price asc, id asc)
 *   price_desc (price desc, id desc)
 * A product's rank depends only on itself and the query (neither function reads corpus
 * statistics), so every key is stable under inserts.
 *
 * Facets apply every filter except their own: categories ignore `category`, vendors ignore
 * `vendorId`, the price range ignores the price bounds; computed in one pass (grouping sets).
 */
create function app.search_products(
  search text default null,
  category_filter text default null,
  vendor_filter uuid default null,
  min_price bigint default null,
  max_price bigint default null,
  in_stock boolean default null,
  sort_by text default 'relevance',
  cursor_mode text default null,
  cursor_key text default null,
  cursor_id uuid default null,
  page_size integer default 50
) returns jsonb
language plpgsql stable security definer
set search_path = ''
-- Typo fallback: a title whose closest stretch shares 30% of the query's trigrams matches (the
-- default 0.6 missed plain typos such as "lether" for "leather", 0.5).
set pg_trgm.word_similarity_threshold = 0.3
as $$
declare
  own boolean := vendor_filter is not null
    and exists (select 1 from app.my_vendor_ids() x where x = vendor_filter);
  query tsquery;
  mode text;
  visible text;
  text_match text;
  rank_expr text;
  f_category text := case when category_filter is null then 'true' else 'p.category = $2' end;
  f_vendor text := case when vendor_filter is null then 'true' else 'p.vendor_id = $3' end;
  f_price text := concat_ws(' and ',
    'true',
    case when min_price is not null then 'p.price_amount >= $4' end,
    case when max_price is not null then 'p.price_amount <= $5' end);
  f_stock text := case when in_stock then 'p.stock > p.reserved'
    when in_stock = false then 'p.stock <= p.reserved' else 'true' end;
  order_by text;
  after text := 'true';
  key_expr text;
  rows jsonb;
  items jsonb;
  next_key jsonb;
  facets jsonb;
  limit_rows integer := least(greatest(page_size, 1), 200);
begin
  if sort_by not in ('relevance', 'newest', 'price_asc', 'price_desc') then
    raise exception 'unknown sort %', sort_by using errcode = 'AG400';
  end if;
  -- The vendor's own view (vendorId = its own vendor) includes drafts and archived products.
  visible := case when own then 'p.vendor_id = $3'
    else $v$p.status = 'active' and v.status = 'approved'$v$ end;

  if search is not null and btrim(search) <> '' then
    query := websearch_to_tsquery('english'::regconfig, search);
    mode := cursor_mode;
    if mode is null then
      if numnode(query) > 0 then
        execute format('select exists (select 1 from app.products p join app.vendors v on v.id = p.vendor_id
                        where %s and p.search @@ $6)', visible)
          into strict own using search, category_filter, vendor_filter, min_price, max_price, query;
        -- `own` is reused as a scratch flag here and restored below.
        mode := case when own then 'fts' else 'fuzzy' end;
        own := vendor_filter is not null
          and exists (select 1 from app.my_vendor_ids() x where x = vendor_filter);
      else
        mode := 'fuzzy';
      end if;
    end if;
    if mode = 'fts' then
      text_match := 'p.search @@ $6';
      rank_expr := 'ts_rank_cd(p.search, $6)';
    elsif mode = 'fuzzy' then
      text_match := 'lower($1) operator(extensions.<%) lower(p.title)';
      rank_expr := 'extensions.word_similarity(lower($1), lower(p.title))';
    else
      raise exception 'unknown search mode' using errcode = 'AG400';
    end if;
  else
    mode := 'none';
    text_match := 'true';
  end if;

  if sort_by = 'relevance' and mode <> 'none' then
    order_by := rank_expr || ' desc, p.id desc';
    key_expr := '(' || rank_expr || ')::real::text';
    if cursor_id is not null then
      after := '(' || rank_expr || ', p.id) < ($7::real, $8)';
    end if;
  elsif sort_by in ('relevance', 'newest') then
    order_by := 'p.created_at desc, p.id desc';
    key_expr := 'p.created_at::text';
    if cursor_id is not null then
      after := '(p.created_at, p.id) < ($7::timestamptz, $8)';
    end if;
  elsif sort_by = 'price_asc' then
    order_by := 'p.price_amount asc, p.id asc';
    key_expr := 'p.price_amount::text';
    if cursor_id is not null then
      after := '(p.price_amount, p.id) > ($7::bigint, $8)';
    end if;
  else
    order_by := 'p.price_amount desc, p.id desc';
    key_expr := 'p.price_amount::text';
    if cursor_id is not null then
      after := '(p.price_amount, p.id) < ($7::bigint, $8)';
    end if;
  end if;

  -- One row more than the page: it only says that another page exists. Aggregating a sorted,
  -- limited subquery keeps its order (and lets the planner stop after limit rows).
  execute format($q$
    select coalesce(jsonb_agg(jsonb_build_object('item', app.product_json(x.p, x.v), 'key', x.sort_key)), '[]'::jsonb)
    from (
      select p, v, %s as sort_key
      from app.products p join app.vendors v on v.id = p.vendor_id
      where %s and %s and %s and %s and %s and %s and %s
      order by %s
      limit $9
    ) x
  $q$, key_expr, visible, text_match, f_category, f_vendor, f_price, f_stock, after, order_by)
  into rows
  using search, category_filter, vendor_filter, min_price, max_price, query, cursor_key, cursor_id,
        limit_rows + 1;
  if jsonb_array_length(rows) > limit_rows then
    next_key := jsonb_build_array(rows -> (limit_rows - 1) -> 'key', rows -> (limit_rows - 1) -> 'item' -> 'id');
  end if;
  select coalesce(jsonb_agg(e -> 'item' order by i), '[]'::jsonb) into items
  from jsonb_array_elements(rows) with ordinality as t (e, i)
  where i <= limit_rows;

  execute format($q$
    with base as materialized (
      select p.category, p.vendor_id, p.price_amount,
             %s as fc, %s as fv, %s as fp, %s as fs
      from app.products p join app.vendors v on v.id = p.vendor_id
      where %s and %s
    ), g as (
      select grouping(category) as gc, grouping(vendor_id) as gv, category, vendor_id,
             count(*) filter (where fv and fp and fs) as n_category,
             count(*) filter (where fc and fp and fs) as n_vendor,
             min(price_amount) filter (where fc and fv and fs) as price_min,
             max(price_amount) filter (where fc and fv and fs) as price_max
      from base group by grouping sets ((category), (vendor_id), ())
    )
    select jsonb_build_object(
      'categories', coalesce((
        select jsonb_agg(jsonb_build_object('value', g.category, 'count', g.n_category)
                         order by g.n_category desc, g.category)
        from g where g.gc = 0 and g.n_category > 0), '[]'::jsonb),
      'vendors', coalesce((
        select jsonb_agg(jsonb_build_object('id', g.vendor_id, 'name', fv.name, 'count', g.n_vendor)
                         order by g.n_vendor desc, fv.name, g.vendor_id)
        from g join app.vendors fv on fv.id = g.vendor_id
        where g.gc = 1 and g.gv = 0 and g.n_vendor > 0), '[]'::jsonb),
      'price', coalesce((
        select jsonb_build_object('min', g.price_min, 'max', g.price_max)
        from g where g.gc = 1 and g.gv = 1), jsonb_build_object('min', null, 'max', null))
    )
  $q$, f_category, f_vendor, f_price, f_stock, visible, text_match)
  into facets
  using search, category_filter, vendor_filter, min_price, max_price, query;

  return jsonb_build_object(
    'items', items,
    'next', case when next_key is null then null
      else jsonb_build_array(sort_by, mode, next_key -> 0, next_key -> 1) end,
    'facets', facets,
    'mode', mode
  );
end;
$$;
comment on function app.search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer) is
  'The catalog search: active products of approved vendors (or, with vendor_filter naming the caller''s own vendor, all of its products), full-text search ranked by ts_rank_cd with a trigram fallback when nothing matches, filters (category, vendor, price in minor units inclusive, in stock), sorts (relevance, newest, price_asc, price_desc) with keyset cursors, and facets that apply every filter but their own. Returns {items, next: [sort, mode, key, id] | null, facets, mode}. security definer: visitors hold no privilege on app tables; visibility is decided here, and every value is a bound parameter.';
grant execute on function app.search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer) to anon, authenticated;

revoke execute on all functions in schema app, app_private from public;
