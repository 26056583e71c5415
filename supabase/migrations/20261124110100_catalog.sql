/*
 * The catalog: products of vendors with their stock, and the public search (full-text search
 * with ranking, spelling correction for queries that match nothing, filters, sorts, facets with
 * counts and keyset cursors for every sort).
 *
 * Inventory: `stock` is what the vendor has, `reserved` what unpaid checkouts hold; available is
 * stock - reserved, never negative (a check). Checkouts, payments and cancellations change
 * `reserved` and `stock` in SQL only, under row locks (orders migration); vendors change `stock`.
 *
 * Tables: app.products, app_private.catalog_counts, app_private.catalog_words. Extension
 * fuzzystrmatch (edit distances). Nothing destructive.
 */

create extension if not exists fuzzystrmatch with schema extensions;

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.product_status as enum ('draft', 'active', 'archived');
comment on type app.product_status is
  'draft: visible to its vendor only; active: in the catalog (when its vendor is approved) and orderable; archived: withdrawn, kept for the orders that name it.';

-- ---------------------------------------------------------------------------------------------
-- Helper functions the table needs
-- ---------------------------------------------------------------------------------------------

create function app_private.product_document(
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
comment on function app_private.product_document(text, text[], text, text) is
  'The text a product is found by, weighted: title (A) over tags (B) over category (C) over description (D), English stemming. Immutable: the same text always gives the same document.';

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
  search tsvector not null default ''::tsvector,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint products_reserved_within_stock check (reserved <= stock)
) with (fillfactor = 80);
comment on table app.products is
  'What vendors sell, at a price in the store''s currency (integer minor units), with stock and what unpaid checkouts reserve of it (available = stock - reserved, never negative). Vendors (owners of approved vendors) write their products under RLS; visitors read the catalog through app.search_products and app.get_product. search is the weighted full-text document.';
comment on column app.products.reserved is
  'Units held by checkouts not yet paid; changed only by the order functions, under the row''s lock.';
comment on column app.products.search is
  'The weighted full-text document (app_private.product_document), set by the write trigger when the text changes. Not a generated column: Postgres recomputes those on every update, and every checkout updates reserved; with the text untouched and room in the page (fillfactor 80), a stock update is HOT and rewrites no index.';

/*
 * How many active products each vendor has per category, in stock or not: the facets of the
 * catalog browsed without a search (the front page, a category) are sums over these few rows
 * instead of a scan of every product. Kept by statement triggers on app.products.
 */
create table app_private.catalog_counts (
  vendor_id uuid not null references app.vendors (id) on delete cascade,
  category text not null,
  in_stock boolean not null,
  products integer not null,
  primary key (vendor_id, category, in_stock)
);
comment on table app_private.catalog_counts is
  'Active products per vendor, category and whether any is available: what the facets of the unsearched catalog sum (app.search_products), kept by the statement triggers on app.products. Server only: read inside the security definer search. (No check on products >= 0: an upsert checks a row before it finds its conflict, so a negative delta could not be applied.)';

/*
 * The catalog's vocabulary: every word of the products' titles and tags, as the `simple` text
 * search configuration splits them. A search that full-text search cannot answer has its unknown
 * words corrected to the nearest word of this list (edit distance), then is searched again.
 */
create table app_private.catalog_words (
  word text primary key check (char_length(word) between 3 and 40)
);
comment on table app_private.catalog_words is
  'Every word (3 to 40 letters) of product titles and tags: the vocabulary misspelt searches are corrected against (app_private.correct_spelling). Only added to, by the products write trigger when a text changes; a word whose products are gone stays (a correction to it then finds nothing). Server only.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- Full-text search over what the catalog shows (active products; the vendor join filters the rest).
create index products_search_idx on app.products using gin (search) where status = 'active';
-- Spelling correction compares a word with the vocabulary's words of about its length.
create index catalog_words_length_idx on app_private.catalog_words (char_length(word));
-- Keyset orders of the catalog, and a vendor's own list.
create index products_newest_idx on app.products (created_at desc, id desc) where status = 'active';
create index products_price_idx on app.products (price_amount, id) where status = 'active';
create index products_category_idx on app.products (category, created_at desc, id desc) where status = 'active';
create index products_vendor_idx on app.products (vendor_id, created_at desc, id desc);
-- Facets of the whole catalog (browsing, the front page): an index-only scan of what they count.
-- Stock and reservations stay out of it, so a checkout's update of a product remains HOT.
create index products_facets_idx on app.products (vendor_id, category, price_amount) where status = 'active';

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
    -- Stock and reservations move with every checkout: only a change by the vendor is an update.
    if (new.title, new.description, new.category, new.tags, new.images, new.price_amount,
        new.currency, new.status) is distinct from
       (old.title, old.description, old.category, old.tags, old.images, old.price_amount,
        old.currency, old.status) or (api_role and new.stock <> old.stock) then
      new.updated_at := now();
    end if;
  end if;
  if tg_op = 'INSERT' or (new.title, new.description, new.category, new.tags)
                          is distinct from (old.title, old.description, old.category, old.tags) then
    new.search := app_private.product_document(new.title, new.tags, new.category, new.description);
    insert into app_private.catalog_words (word)
    select distinct w
    from unnest(tsvector_to_array(to_tsvector('simple'::regconfig,
           new.title || ' ' || array_to_string(new.tags, ' ')))) as w
    where w ~ '^[[:alpha:]]{3,40}$'
    on conflict do nothing;
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
  'Products keep their id, vendor and creation time; a price is in the store''s currency (AG400); stock never goes below what unpaid checkouts hold (AG422, clearer than the check constraint behind it); the search document and the vocabulary follow the text (computed only when it changes, so a checkout''s stock update stays cheap and HOT); updated_at is the server''s clock, moved by the vendor''s changes (not by checkouts). security definer: it reads the store''s currency from the configuration, which vendors may not read.';

create trigger products_guard_write before insert or update on app.products
  for each row execute function app_private.guard_product_write();

/*
 * The net change of a statement to app_private.catalog_counts, from its transition tables:
 * one upsert per (vendor, category, in stock) that changed, in key order (so two statements
 * never lock these rows in opposite orders; every path that changes stock has locked its
 * product rows before). A checkout that leaves a product available changes nothing here.
 */
create function app_private.count_catalog() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into app_private.catalog_counts as c (vendor_id, category, in_stock, products)
    select n.vendor_id, n.category, n.stock > n.reserved, count(*)::integer
    from new_rows n where n.status = 'active'
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (vendor_id, category, in_stock) do update set products = c.products + excluded.products;
  elsif tg_op = 'DELETE' then
    update app_private.catalog_counts c set products = c.products - d.n
    from (select o.vendor_id, o.category, o.stock > o.reserved as in_stock, count(*)::integer as n
          from old_rows o where o.status = 'active' group by 1, 2, 3) d
    where c.vendor_id = d.vendor_id and c.category = d.category and c.in_stock = d.in_stock;
  else
    insert into app_private.catalog_counts as c (vendor_id, category, in_stock, products)
    select x.vendor_id, x.category, x.in_stock, sum(x.n)::integer
    from (
      select n.vendor_id, n.category, n.stock > n.reserved as in_stock, 1 as n
      from new_rows n where n.status = 'active'
      union all
      select o.vendor_id, o.category, o.stock > o.reserved, -1
      from old_rows o where o.status = 'active'
    ) x
    group by 1, 2, 3 having sum(x.n) <> 0 order by 1, 2, 3
    on conflict (vendor_id, category, in_stock) do update set products = c.products + excluded.products;
  end if;
  return null;
end;
$$;
comment on function app_private.count_catalog() is
  'Keeps app_private.catalog_counts: the net change of each statement on app.products (inserts, updates that move a product between vendor, category, status or availability, deletes), applied in key order. security definer: vendors write products, but not the server-only counts.';

create trigger products_count_insert after insert on app.products
  referencing new table as new_rows
  for each statement execute function app_private.count_catalog();
create trigger products_count_update after update on app.products
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.count_catalog();
create trigger products_count_delete after delete on app.products
  referencing old table as old_rows
  for each statement execute function app_private.count_catalog();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.products enable row level security;
alter table app_private.catalog_counts enable row level security;
alter table app_private.catalog_words enable row level security;

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

/*
 * A search's words corrected to the catalog's vocabulary: each word the vocabulary does not hold
 * becomes the vocabulary's nearest word within an edit distance of 1 (words of 3 letters) or 2
 * (longer: a transposed pair, "lmap" for "lamp", is 2 edits), the nearest by edit distance, then
 * by trigram similarity, then alphabetically. Null when nothing was corrected.
 */
create function app_private.correct_spelling(search text) returns text
language plpgsql stable
set search_path = ''
as $$
declare
  term text;
  best text;
  corrected text[] := '{}';
  changed boolean := false;
  allowed integer;
begin
  for term in
    select w from regexp_split_to_table(lower(search), '[^[:alnum:]]+') as w where w <> ''
  loop
    best := null;
    if char_length(term) between 3 and 40 and term ~ '^[[:alpha:]]+$'
       and not exists (select 1 from app_private.catalog_words c where c.word = term) then
      allowed := case when char_length(term) <= 3 then 1 else 2 end;
      select c.word into best
      from app_private.catalog_words c
      where char_length(c.word) between char_length(term) - allowed
                                   and char_length(term) + allowed
        and extensions.levenshtein_less_equal(c.word, term, allowed) <= allowed
      order by extensions.levenshtein(c.word, term),
               extensions.similarity(c.word, term) desc, c.word
      limit 1;
    end if;
    if best is null then
      corrected := corrected || term;
    else
      corrected := corrected || best;
      changed := true;
    end if;
  end loop;
  return case when changed then array_to_string(corrected, ' ') end;
end;
$$;
comment on function app_private.correct_spelling(text) is
  'The search with each word the catalog''s vocabulary does not know replaced by its nearest vocabulary word (Levenshtein distance at most 1 for 3 letters, 2 for longer; then trigram similarity), or null when no word changed: the typo fallback of app.search_products.';

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
 * ts_rank_cd (mode `fts`). When that finds nothing at all in the catalog (a typo), the search's
 * unknown words are corrected to the catalog's vocabulary (app_private.correct_spelling) and the
 * corrected search runs instead, the same way (mode `spell:<corrected search>`). The mode is part
 * of the cursor, so later pages search what the first did, whatever was added meanwhile.
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
  corrected text;
  found_any boolean;
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
      mode := 'fts';
      execute format('select exists (select 1 from app.products p join app.vendors v on v.id = p.vendor_id
                      where %s and p.search @@ $6)', visible)
        into strict found_any using search, category_filter, vendor_filter, min_price, max_price, query;
      if not found_any then
        corrected := app_private.correct_spelling(search);
        if corrected is not null then
          mode := 'spell:' || corrected;
        end if;
      end if;
    end if;
    if mode like 'spell:%' then
      query := websearch_to_tsquery('english'::regconfig, substr(mode, 7));
    elsif mode <> 'fts' then
      raise exception 'unknown search mode' using errcode = 'AG400';
    end if;
    text_match := 'p.search @@ $6';
    rank_expr := 'ts_rank_cd(p.search, $6)';
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

  -- The unsearched catalog without a price filter (the front page, a category, a vendor's shop):
  -- the category and vendor facets are sums of app_private.catalog_counts, the price range the
  -- first row of the price index each way.
  if mode = 'none' and min_price is null and max_price is null and not own then
    execute format($q$
      with c as (
        select c.vendor_id, c.category, sum(c.products)::integer as n
        from app_private.catalog_counts c join app.vendors v on v.id = c.vendor_id
        where v.status = 'approved' and c.products > 0 and %3$s
        group by c.vendor_id, c.category
      )
      select jsonb_build_object(
        'categories', coalesce((
          select jsonb_agg(jsonb_build_object('value', x.category, 'count', x.n) order by x.n desc, x.category)
          from (select c.category, sum(c.n)::integer as n from c where %2$s group by c.category) x), '[]'::jsonb),
        'vendors', coalesce((
          select jsonb_agg(jsonb_build_object('id', x.vendor_id, 'name', fv.name, 'count', x.n)
                           order by x.n desc, fv.name, x.vendor_id)
          from (select c.vendor_id, sum(c.n)::integer as n from c where %1$s group by c.vendor_id) x
          join app.vendors fv on fv.id = x.vendor_id), '[]'::jsonb),
        'price', jsonb_build_object(
          'min', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %4$s and %5$s and %6$s and %7$s order by p.price_amount asc limit 1),
          'max', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %4$s and %5$s and %6$s and %7$s order by p.price_amount desc limit 1))
      )
    $q$,
      replace(f_category, 'p.', 'c.'), replace(f_vendor, 'p.', 'c.'),
      case when in_stock then 'c.in_stock' when in_stock = false then 'not c.in_stock' else 'true' end,
      visible, f_category, f_vendor, f_stock)
    into facets
    using search, category_filter, vendor_filter, min_price, max_price, query;
    return jsonb_build_object(
      'items', items,
      'next', case when next_key is null then null
        else jsonb_build_array(sort_by, mode, next_key -> 0, next_key -> 1) end,
      'facets', facets,
      'mode', mode,
      'corrected', case when mode like 'spell:%' then substr(mode, 7) end
    );
  end if;

  -- One pass: every facet is a grouping set of the same scan, each count filtered by the other
  -- facets' filters. Not a materialized CTE: the aggregate reads the join directly, and without
  -- a text search or a stock filter that join is an index-only scan (products_facets_idx).
  execute format($q$
    with g as (
      select grouping(p.category) as gc, grouping(p.vendor_id) as gv, p.category, p.vendor_id,
             count(*) filter (where %2$s and %3$s and %4$s) as n_category,
             count(*) filter (where %1$s and %3$s and %4$s) as n_vendor,
             min(p.price_amount) filter (where %1$s and %2$s and %4$s) as price_min,
             max(p.price_amount) filter (where %1$s and %2$s and %4$s) as price_max
      from app.products p join app.vendors v on v.id = p.vendor_id
      where %5$s and %6$s
      group by grouping sets ((p.category), (p.vendor_id), ())
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
    'mode', mode,
    'corrected', case when mode like 'spell:%' then substr(mode, 7) end
  );
end;
$$;
comment on function app.search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer) is
  'The catalog search: active products of approved vendors (or, with vendor_filter naming the caller''s own vendor, all of its products), full-text search ranked by ts_rank_cd with spelling correction when nothing matches, filters (category, vendor, price in minor units inclusive, in stock), sorts (relevance, newest, price_asc, price_desc) with keyset cursors, and facets that apply every filter but their own. Returns {items, next: [sort, mode, key, id] | null, facets, mode, corrected}. security definer: visitors hold no privilege on app tables; visibility is decided here, and every value is a bound parameter.';
grant execute on function app.search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer) to anon, authenticated;

revoke execute on all functions in schema app, app_private from public;
