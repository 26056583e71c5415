-- Agora's schema as it is now, domain catalog: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124110100_catalog.sql
--   supabase/migrations/20261129100400_catalog_one_policy_per_operation.sql
--   supabase/migrations/20261129150000_catalog_stock_on_hand.sql
--   supabase/migrations/20261129190000_catalog_hidden_status.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.product_status
-- created in 20261124110100_catalog.sql; last changed in 20261129190000_catalog_hidden_status.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.product_status AS ENUM (
    'draft',
    'active',
    'archived',
    'hidden'
);

COMMENT ON TYPE app.product_status IS 'draft: visible to its vendor only; active: in the catalog (when its vendor is approved) and orderable; archived: withdrawn by its vendor, kept for the orders that name it; hidden: taken out of the catalog by an ADMIN after a report (only an ADMIN sets or lifts it).';

GRANT ALL ON TYPE app.product_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.products
-- created in 20261124110100_catalog.sql; last changed in 20261129190100_moderation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.products (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    vendor_id uuid NOT NULL,
    title text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    category text NOT NULL,
    tags text[] DEFAULT '{}'::text[] NOT NULL,
    images text[] DEFAULT '{}'::text[] NOT NULL,
    price_amount bigint NOT NULL,
    currency text NOT NULL,
    stock integer DEFAULT 0 NOT NULL,
    reserved integer DEFAULT 0 NOT NULL,
    status app.product_status DEFAULT 'active'::app.product_status NOT NULL,
    search tsvector DEFAULT ''::tsvector NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT products_category_check CHECK (((category ~ '^[a-z0-9]+(-[a-z0-9]+)*$'::text) AND (char_length(category) <= 60))),
    CONSTRAINT products_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT products_description_check CHECK ((char_length(description) <= 10000)),
    CONSTRAINT products_images_check CHECK ((cardinality(images) <= 10)),
    CONSTRAINT products_price_amount_check CHECK (((price_amount >= 1) AND (price_amount <= '100000000000'::bigint))),
    CONSTRAINT products_reserved_check CHECK ((reserved >= 0)),
    CONSTRAINT products_reserved_within_stock CHECK ((reserved <= stock)),
    CONSTRAINT products_stock_check CHECK ((stock >= 0)),
    CONSTRAINT products_tags_check CHECK ((cardinality(tags) <= 20)),
    CONSTRAINT products_title_check CHECK (((char_length(btrim(title)) >= 1) AND (char_length(btrim(title)) <= 200)))
)
WITH (fillfactor='80');

COMMENT ON TABLE app.products IS 'What vendors sell, at a price in the store''s currency (integer minor units), with stock and what unpaid checkouts reserve of it (available = stock - reserved, never negative). Vendors (owners of approved vendors) write their products under RLS; visitors read the catalog through app.search_products and app.get_product. search is the weighted full-text document.';

COMMENT ON COLUMN app.products.reserved IS 'Units held by checkouts not yet paid; changed only by the order functions, under the row''s lock.';

COMMENT ON COLUMN app.products.search IS 'The weighted full-text document (app_private.product_document), set by the write trigger when the text changes. Not a generated column: Postgres recomputes those on every update, and every checkout updates reserved; with the text untouched and room in the page (fillfactor 80), a stock update is HOT and rewrites no index.';

ALTER TABLE ONLY app.products
    ADD CONSTRAINT products_pkey PRIMARY KEY (id);

CREATE INDEX products_category_idx ON app.products USING btree (category, created_at DESC, id DESC) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_facets_idx ON app.products USING btree (vendor_id, category, price_amount) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_newest_idx ON app.products USING btree (created_at DESC, id DESC) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_price_idx ON app.products USING btree (price_amount, id) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_search_idx ON app.products USING gin (search) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_vendor_idx ON app.products USING btree (vendor_id, created_at DESC, id DESC);

CREATE TRIGGER products_count_delete AFTER DELETE ON app.products REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_catalog();

CREATE TRIGGER products_count_insert AFTER INSERT ON app.products REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_catalog();

CREATE TRIGGER products_count_update AFTER UPDATE ON app.products REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_catalog();

CREATE TRIGGER products_guard_hidden BEFORE UPDATE OF status ON app.products FOR EACH ROW EXECUTE FUNCTION app_private.guard_product_hidden();

CREATE TRIGGER products_guard_write BEFORE INSERT OR UPDATE ON app.products FOR EACH ROW EXECUTE FUNCTION app_private.guard_product_write();

ALTER TABLE ONLY app.products
    ADD CONSTRAINT products_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

ALTER TABLE app.products ENABLE ROW LEVEL SECURITY;

CREATE POLICY products_insert_vendor ON app.products FOR INSERT TO authenticated WITH CHECK ((vendor_id IN ( SELECT app.my_selling_vendor_ids() AS my_selling_vendor_ids)));

CREATE POLICY products_select_owner_or_admin ON app.products FOR SELECT TO authenticated USING (((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)) OR ( SELECT app.is_admin() AS is_admin)));

CREATE POLICY products_update_vendor ON app.products FOR UPDATE TO authenticated USING ((vendor_id IN ( SELECT app.my_selling_vendor_ids() AS my_selling_vendor_ids))) WITH CHECK ((vendor_id IN ( SELECT app.my_selling_vendor_ids() AS my_selling_vendor_ids)));

GRANT SELECT ON TABLE app.products TO authenticated;

GRANT INSERT(vendor_id) ON TABLE app.products TO authenticated;

GRANT INSERT(title),UPDATE(title) ON TABLE app.products TO authenticated;

GRANT INSERT(description),UPDATE(description) ON TABLE app.products TO authenticated;

GRANT INSERT(category),UPDATE(category) ON TABLE app.products TO authenticated;

GRANT INSERT(tags),UPDATE(tags) ON TABLE app.products TO authenticated;

GRANT INSERT(images),UPDATE(images) ON TABLE app.products TO authenticated;

GRANT INSERT(price_amount),UPDATE(price_amount) ON TABLE app.products TO authenticated;

GRANT INSERT(currency),UPDATE(currency) ON TABLE app.products TO authenticated;

GRANT INSERT(stock),UPDATE(stock) ON TABLE app.products TO authenticated;

GRANT INSERT(status),UPDATE(status) ON TABLE app.products TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.catalog_counts
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.catalog_counts (
    vendor_id uuid NOT NULL,
    category text NOT NULL,
    in_stock boolean NOT NULL,
    products integer NOT NULL
);

COMMENT ON TABLE app_private.catalog_counts IS 'Active products per vendor, category and whether any is available: what the facets of the unsearched catalog sum (app.search_products), kept by the statement triggers on app.products. Server only: read inside the security definer search. (No check on products >= 0: an upsert checks a row before it finds its conflict, so a negative delta could not be applied.)';

ALTER TABLE ONLY app_private.catalog_counts
    ADD CONSTRAINT catalog_counts_pkey PRIMARY KEY (vendor_id, category, in_stock);

ALTER TABLE ONLY app_private.catalog_counts
    ADD CONSTRAINT catalog_counts_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

ALTER TABLE app_private.catalog_counts ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.catalog_words
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.catalog_words (
    word text NOT NULL,
    CONSTRAINT catalog_words_word_check CHECK (((char_length(word) >= 3) AND (char_length(word) <= 40)))
);

COMMENT ON TABLE app_private.catalog_words IS 'Every word (3 to 40 letters) of product titles and tags: the vocabulary misspelt searches are corrected against (app_private.correct_spelling). Only added to, by the products write trigger when a text changes; a word whose products are gone stays (a correction to it then finds nothing). Server only.';

ALTER TABLE ONLY app_private.catalog_words
    ADD CONSTRAINT catalog_words_pkey PRIMARY KEY (word);

CREATE INDEX catalog_words_length_idx ON app_private.catalog_words USING btree (char_length(word));

ALTER TABLE app_private.catalog_words ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.get_product
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.get_product(target_product_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.get_product(target_product_id uuid) IS 'A product as the API shows it, or null when the caller may not see it: catalog products (active, of an approved vendor) for anyone, drafts and archived products for their vendor''s owner and ADMINs. security definer: visitors hold no privilege on app tables; the visibility rule is explicit here.';

REVOKE ALL ON FUNCTION app.get_product(target_product_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.get_product(target_product_id uuid) TO anon;
GRANT ALL ON FUNCTION app.get_product(target_product_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.product_json
-- created in 20261124110100_catalog.sql; last changed in 20261129150000_catalog_stock_on_hand.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.product_json(product app.products, vendor app.vendors) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.product_json(product app.products, vendor app.vendors) IS 'A product as the API shows it: price as money, available stock (stock less reservations), the vendor''s id, name and slug; for the vendor''s owner (auth.uid(), the caller) also the units on hand (onHand, what PUT /api/store/products/{id} sets as stock) and reserved by unpaid checkouts, so an edit starts from the number it writes. A builder: reads no table.';

REVOKE ALL ON FUNCTION app.product_json(product app.products, vendor app.vendors) FROM PUBLIC;
GRANT ALL ON FUNCTION app.product_json(product app.products, vendor app.vendors) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.search_products
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.search_products(search text DEFAULT NULL::text, category_filter text DEFAULT NULL::text, vendor_filter uuid DEFAULT NULL::uuid, min_price bigint DEFAULT NULL::bigint, max_price bigint DEFAULT NULL::bigint, in_stock boolean DEFAULT NULL::boolean, sort_by text DEFAULT 'relevance'::text, cursor_mode text DEFAULT NULL::text, cursor_key text DEFAULT NULL::text, cursor_id uuid DEFAULT NULL::uuid, page_size integer DEFAULT 50) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
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
$_$;

COMMENT ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) IS 'The catalog search: active products of approved vendors (or, with vendor_filter naming the caller''s own vendor, all of its products), full-text search ranked by ts_rank_cd with spelling correction when nothing matches, filters (category, vendor, price in minor units inclusive, in stock), sorts (relevance, newest, price_asc, price_desc) with keyset cursors, and facets that apply every filter but their own. Returns {items, next: [sort, mode, key, id] | null, facets, mode, corrected}. security definer: visitors hold no privilege on app tables; visibility is decided here, and every value is a bound parameter.';

REVOKE ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) TO anon;
GRANT ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.correct_spelling
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.correct_spelling(search text) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $_$
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
$_$;

COMMENT ON FUNCTION app_private.correct_spelling(search text) IS 'The search with each word the catalog''s vocabulary does not know replaced by its nearest vocabulary word (Levenshtein distance at most 1 for 3 letters, 2 for longer; then trigram similarity), or null when no word changed: the typo fallback of app.search_products.';

REVOKE ALL ON FUNCTION app_private.correct_spelling(search text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_catalog
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_catalog() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.count_catalog() IS 'Keeps app_private.catalog_counts: the net change of each statement on app.products (inserts, updates that move a product between vendor, category, status or availability, deletes), applied in key order. security definer: vendors write products, but not the server-only counts.';

REVOKE ALL ON FUNCTION app_private.count_catalog() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_product_write
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_product_write() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
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
$_$;

COMMENT ON FUNCTION app_private.guard_product_write() IS 'Products keep their id, vendor and creation time; a price is in the store''s currency (AG400); stock never goes below what unpaid checkouts hold (AG422, clearer than the check constraint behind it); the search document and the vocabulary follow the text (computed only when it changes, so a checkout''s stock update stays cheap and HOT); updated_at is the server''s clock, moved by the vendor''s changes (not by checkouts). security definer: it reads the store''s currency from the configuration, which vendors may not read.';

REVOKE ALL ON FUNCTION app_private.guard_product_write() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.product_document
-- created in 20261124110100_catalog.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.product_document(title text, tags text[], category text, description text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A')
      || setweight(to_tsvector('english'::regconfig, coalesce(array_to_string(tags, ' '), '')), 'B')
      || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'C')
      || setweight(to_tsvector('english'::regconfig, coalesce(left(description, 20000), '')), 'D')
$$;

COMMENT ON FUNCTION app_private.product_document(title text, tags text[], category text, description text) IS 'The text a product is found by, weighted: title (A) over tags (B) over category (C) over description (D), English stemming. Immutable: the same text always gives the same document.';

REVOKE ALL ON FUNCTION app_private.product_document(title text, tags text[], category text, description text) FROM PUBLIC;
