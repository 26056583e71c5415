-- Agora's schema as it is now, domain catalog: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124110100_catalog.sql
--   supabase/migrations/20261129100400_catalog_one_policy_per_operation.sql
--   supabase/migrations/20261129150000_catalog_stock_on_hand.sql
--   supabase/migrations/20261129190000_catalog_hidden_status.sql
--   supabase/migrations/20261130060200_catalog_facets.sql
--   supabase/migrations/20261130080100_catalog_product_images.sql
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
-- table app.product_images
-- created in 20261130080100_catalog_product_images.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.product_images (
    attachment_id uuid NOT NULL,
    product_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app.product_images IS 'Uploads that are pictures of a product (GET /api/store/images/{id}): one product per upload. Without it an upload not attached to a message is an orphan, and nothing says who may see it. No grants to API roles: app.link_product_images writes it, app.product_image reads it.';

ALTER TABLE ONLY app.product_images
    ADD CONSTRAINT product_images_pkey PRIMARY KEY (attachment_id);

CREATE INDEX product_images_product_id_idx ON app.product_images USING btree (product_id);

ALTER TABLE ONLY app.product_images
    ADD CONSTRAINT product_images_attachment_id_fkey FOREIGN KEY (attachment_id) REFERENCES app.attachments(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.product_images
    ADD CONSTRAINT product_images_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.products(id) ON DELETE CASCADE;

ALTER TABLE app.product_images ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app.products
-- created in 20261124110100_catalog.sql; last changed in 20261130060200_catalog_facets.sql
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

CREATE INDEX products_category_price_idx ON app.products USING btree (category, price_amount) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_facets_idx ON app.products USING btree (vendor_id, category, price_amount) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_newest_idx ON app.products USING btree (created_at DESC, id DESC) WHERE (status = 'active'::app.product_status);

CREATE INDEX products_price_facets_idx ON app.products USING btree (price_amount) INCLUDE (vendor_id, category) WHERE (status = 'active'::app.product_status);

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
-- table app_private.catalog_category_counts
-- created in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.catalog_category_counts (
    category text NOT NULL,
    in_stock boolean NOT NULL,
    products integer NOT NULL
);

COMMENT ON TABLE app_private.catalog_category_counts IS 'Active products of approved vendors per category and availability: the category facet of the unsearched catalog without a vendor filter (a dozen rows, whatever the catalog''s size). Kept by app_private.count_catalog and app_private.count_vendor_catalog; zero rows are deleted. Server only.';

ALTER TABLE ONLY app_private.catalog_category_counts
    ADD CONSTRAINT catalog_category_counts_pkey PRIMARY KEY (category, in_stock);

ALTER TABLE app_private.catalog_category_counts ENABLE ROW LEVEL SECURITY;

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
-- table app_private.catalog_vendor_facets
-- created in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.catalog_vendor_facets (
    category text NOT NULL,
    vendor_id uuid NOT NULL,
    products integer NOT NULL,
    in_stock integer NOT NULL
);

COMMENT ON TABLE app_private.catalog_vendor_facets IS 'Active products of each approved vendor per category (and over all categories, category ''''), with how many are available: the vendor facet of the unsearched catalog is the first 50 rows of one of its indexes. Kept by app_private.count_catalog and app_private.count_vendor_catalog; zero rows are deleted. Server only.';

ALTER TABLE ONLY app_private.catalog_vendor_facets
    ADD CONSTRAINT catalog_vendor_facets_pkey PRIMARY KEY (category, vendor_id);

CREATE INDEX catalog_vendor_facets_all_idx ON app_private.catalog_vendor_facets USING btree (category, products DESC, vendor_id);

CREATE INDEX catalog_vendor_facets_in_stock_idx ON app_private.catalog_vendor_facets USING btree (category, in_stock DESC, vendor_id);

CREATE INDEX catalog_vendor_facets_out_of_stock_idx ON app_private.catalog_vendor_facets USING btree (category, ((products - in_stock)) DESC, vendor_id);

CREATE INDEX catalog_vendor_facets_vendor_idx ON app_private.catalog_vendor_facets USING btree (vendor_id);

ALTER TABLE ONLY app_private.catalog_vendor_facets
    ADD CONSTRAINT catalog_vendor_facets_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

ALTER TABLE app_private.catalog_vendor_facets ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.catalog_words
-- created in 20261124110100_catalog.sql; last changed in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.catalog_words (
    word text NOT NULL,
    CONSTRAINT catalog_words_word_check CHECK (((char_length(word) >= 3) AND (char_length(word) <= 40)))
);

COMMENT ON TABLE app_private.catalog_words IS 'Every word (3 to 40 letters) of product titles and tags: the vocabulary misspelt searches are corrected against (app_private.correct_spelling). Only added to, by the products write trigger when a text changes; a word whose products are gone stays (a correction to it then finds nothing). Server only.';

ALTER TABLE ONLY app_private.catalog_words
    ADD CONSTRAINT catalog_words_pkey PRIMARY KEY (word);

CREATE INDEX catalog_words_initial_idx ON app_private.catalog_words USING btree ("left"(word, 1), char_length(word));

CREATE INDEX catalog_words_length_idx ON app_private.catalog_words USING btree (char_length(word));

CREATE INDEX catalog_words_swapped_initial_idx ON app_private.catalog_words USING btree (((substr(word, 2, 1) || "left"(word, 1))), char_length(word));

CREATE INDEX catalog_words_trigram_idx ON app_private.catalog_words USING gin (word extensions.gin_trgm_ops);

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
-- function app.link_product_images
-- created in 20261130080100_catalog_product_images.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.link_product_images(target_product_id uuid, attachment_ids uuid[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  wanted uuid;
  upload app.attachments;
begin
  if not exists (
    select 1 from app.products p
    where p.id = target_product_id and p.vendor_id in (select app.my_selling_vendor_ids())
  ) then
    raise exception 'only the product''s vendor can set its pictures' using errcode = 'AG403';
  end if;
  foreach wanted in array coalesce(attachment_ids, '{}') loop
    select * into upload from app.attachments a
    where a.id = wanted and a.uploader_id = (select auth.uid()) and a.message_id is null;
    if not found or exists (
      select 1 from app.product_images i
      where i.attachment_id = wanted and i.product_id <> target_product_id
    ) then
      raise exception 'no such upload: %', wanted using errcode = 'AG404';
    end if;
    if upload.content_type not in ('image/png', 'image/jpeg', 'image/gif', 'image/webp') then
      raise exception 'a product picture is a PNG, JPEG, GIF or WebP image' using errcode = 'AG415';
    end if;
    insert into app.product_images (attachment_id, product_id)
    values (wanted, target_product_id)
    on conflict (attachment_id) do nothing;
  end loop;
end;
$$;

COMMENT ON FUNCTION app.link_product_images(target_product_id uuid, attachment_ids uuid[]) IS 'POST and PUT /api/store/products: the uploads a product lists as /api/store/images/<id> become its pictures. The product must be the caller''s approved vendor''s (AG403); each upload the caller''s own, not attached to a message and not another product''s (AG404 otherwise, so another person''s file is indistinguishable from none), an image (AG415). security definer: app.product_images has no grants; the rules are checked here.';

REVOKE ALL ON FUNCTION app.link_product_images(target_product_id uuid, attachment_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.link_product_images(target_product_id uuid, attachment_ids uuid[]) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.product_image
-- created in 20261130080100_catalog_product_images.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.product_image(target_attachment_id uuid) RETURNS TABLE(content_type text, storage_key text, size bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return query
    select a.content_type, a.storage_key, a.size
    from app.product_images i
    join app.attachments a on a.id = i.attachment_id
    join app.products p on p.id = i.product_id
    join app.vendors v on v.id = p.vendor_id
    where i.attachment_id = target_attachment_id
      and ('/api/store/images/' || i.attachment_id::text) = any (p.images)
      and ((p.status = 'active' and v.status = 'approved')
           or p.vendor_id in (select app.my_vendor_ids())
           or app.is_admin());
end;
$$;

COMMENT ON FUNCTION app.product_image(target_attachment_id uuid) IS 'GET /api/store/images/{id}: the stored file of a product picture, for whoever may see a product that shows it (app.get_product''s rule: catalog products for anyone, others for their vendor''s owner and ADMINs); no row otherwise. security definer: the upload is not attached to a conversation of the caller''s, so attachment RLS would hide it; this returns only a file a visible product names.';

REVOKE ALL ON FUNCTION app.product_image(target_attachment_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.product_image(target_attachment_id uuid) TO anon;
GRANT ALL ON FUNCTION app.product_image(target_attachment_id uuid) TO authenticated;

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
-- created in 20261124110100_catalog.sql; last changed in 20261130060200_catalog_facets.sql
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
      if own then
        execute format('select exists (select 1 from app.products p join app.vendors v on v.id = p.vendor_id
                        where %s and p.search @@ $6)', visible)
          into strict found_any using search, category_filter, vendor_filter, min_price, max_price, query;
      else
        -- The matches come from the search index (a materialized CTE is planned for all its rows,
        -- so as a bitmap scan, and read lazily: exists stops at the first): as a bare exists the
        -- planner guessed a match every 200 rows and scanned the table for a word none has.
        select exists (
          with m as materialized (
            select p.vendor_id from app.products p
            where p.status = 'active' and p.search @@ query)
          select 1 from m join app.vendors v on v.id = m.vendor_id where v.status = 'approved')
        into strict found_any;
      end if;
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
  -- the facets are read from the rollups the writes keep (app_private.catalog_category_counts,
  -- app_private.catalog_vendor_facets; a vendor's own categories from catalog_counts), the
  -- vendor facet as the first 50 rows of one index, the price range the first row of a price
  -- index each way: what it reads does not grow with the catalog.
  if mode = 'none' and min_price is null and max_price is null and not own then
    execute format($q$
      select jsonb_build_object(
        'categories', coalesce((
          select jsonb_agg(jsonb_build_object('value', x.category, 'count', x.n) order by x.n desc, x.category)
          from (%1$s) x), '[]'::jsonb),
        'vendors', coalesce((
          select jsonb_agg(jsonb_build_object('id', x.vendor_id, 'name', fv.name, 'count', x.n)
                           order by x.n desc, fv.name, x.vendor_id)
          from (select f.vendor_id, %2$s as n from app_private.catalog_vendor_facets f
                where f.category = coalesce($2, '') and %2$s > 0
                order by %2$s desc, f.vendor_id limit 50) x
          join app.vendors fv on fv.id = x.vendor_id), '[]'::jsonb),
        'price', jsonb_build_object(
          'min', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %3$s and %4$s and %5$s and %6$s order by p.price_amount asc limit 1),
          'max', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %3$s and %4$s and %5$s and %6$s order by p.price_amount desc limit 1))
      )
    $q$,
      case when vendor_filter is null then
        format($c$select c.category, sum(c.products)::integer as n
                  from app_private.catalog_category_counts c where %s
                  group by c.category having sum(c.products) > 0$c$,
               case when in_stock then 'c.in_stock' when in_stock = false then 'not c.in_stock' else 'true' end)
      else
        format($c$select c.category, sum(c.products)::integer as n
                  from app_private.catalog_counts c join app.vendors v on v.id = c.vendor_id
                  where c.vendor_id = $3 and v.status = 'approved' and %s
                  group by c.category having sum(c.products) > 0$c$,
               case when in_stock then 'c.in_stock' when in_stock = false then 'not c.in_stock' else 'true' end)
      end,
      case when in_stock then 'f.in_stock' when in_stock = false then '(f.products - f.in_stock)'
        else 'f.products' end,
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

  -- A price filter without a search: the category and vendor facets count the products in the
  -- price range (an index-only range scan of products_price_facets_idx), and the price range,
  -- which ignores the price filter, is the first row of a price index each way. Read as one pass
  -- over every product (below), the price facet made it a scan of the whole catalog.
  if mode = 'none' and not own then
    execute format($q$
      with g as (
        select grouping(p.category) as gc, grouping(p.vendor_id) as gv, p.category, p.vendor_id,
               count(*) filter (where %2$s) as n_category,
               count(*) filter (where %1$s) as n_vendor
        from app.products p join app.vendors v on v.id = p.vendor_id
        where %5$s and %3$s and %4$s
        group by grouping sets ((p.category), (p.vendor_id))
      )
      select jsonb_build_object(
        'categories', coalesce((
          select jsonb_agg(jsonb_build_object('value', g.category, 'count', g.n_category)
                           order by g.n_category desc, g.category)
          from g where g.gc = 0 and g.n_category > 0), '[]'::jsonb),
        'vendors', coalesce((
          select jsonb_agg(jsonb_build_object('id', x.vendor_id, 'name', fv.name, 'count', x.n_vendor)
                           order by x.n_vendor desc, fv.name, x.vendor_id)
          from (select g.vendor_id, g.n_vendor from g
                where g.gc = 1 and g.gv = 0 and g.n_vendor > 0
                order by g.n_vendor desc, g.vendor_id limit 50) x
          join app.vendors fv on fv.id = x.vendor_id), '[]'::jsonb),
        'price', jsonb_build_object(
          'min', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %5$s and %1$s and %2$s and %4$s order by p.price_amount asc limit 1),
          'max', (select p.price_amount from app.products p join app.vendors v on v.id = p.vendor_id
                  where %5$s and %1$s and %2$s and %4$s order by p.price_amount desc limit 1))
      )
    $q$, f_category, f_vendor, f_price, f_stock, visible)
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
        select jsonb_agg(jsonb_build_object('id', x.vendor_id, 'name', fv.name, 'count', x.n_vendor)
                         order by x.n_vendor desc, fv.name, x.vendor_id)
        from (select g.vendor_id, g.n_vendor from g
              where g.gc = 1 and g.gv = 0 and g.n_vendor > 0
              order by g.n_vendor desc, g.vendor_id limit 50) x
        join app.vendors fv on fv.id = x.vendor_id), '[]'::jsonb),
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

COMMENT ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) IS 'The catalog search: active products of approved vendors (or, with vendor_filter naming the caller''s own vendor, all of its products), full-text search ranked by ts_rank_cd with spelling correction when nothing matches, filters (category, vendor, price in minor units inclusive, in stock), sorts (relevance, newest, price_asc, price_desc) with keyset cursors, and facets that apply every filter but their own (the vendor facet: the 50 vendors with the most matching products; without a search or a price filter the facets come from rollups the writes keep). Returns {items, next: [sort, mode, key, id] | null, facets, mode, corrected}. security definer: visitors hold no privilege on app tables; visibility is decided here, and every value is a bound parameter.';

REVOKE ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) TO anon;
GRANT ALL ON FUNCTION app.search_products(search text, category_filter text, vendor_filter uuid, min_price bigint, max_price bigint, in_stock boolean, sort_by text, cursor_mode text, cursor_key text, cursor_id uuid, page_size integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.apply_catalog_deltas
-- created in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.apply_catalog_deltas(vendor_ids uuid[], categories text[], in_stocks boolean[], deltas integer[]) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- The vendors first, shared, in id order: an approval change (which locks the vendor row)
  -- waits for this count, or this count sees the change it made.
  perform 1 from app.vendors v where v.id = any(vendor_ids) order by v.id for share of v;

  insert into app_private.catalog_counts as c (vendor_id, category, in_stock, products)
  select d.v, d.c, d.s, sum(d.n)::integer
  from unnest(vendor_ids, categories, in_stocks, deltas) as d (v, c, s, n)
  group by 1, 2, 3 having sum(d.n) <> 0 order by 1, 2, 3
  on conflict (vendor_id, category, in_stock) do update set products = c.products + excluded.products;
  delete from app_private.catalog_counts c
  using unnest(vendor_ids, categories, in_stocks) as d (v, c, s)
  where c.vendor_id = d.v and c.category = d.c and c.in_stock = d.s and c.products = 0;

  insert into app_private.catalog_category_counts as c (category, in_stock, products)
  select d.c, d.s, sum(d.n)::integer
  from unnest(vendor_ids, categories, in_stocks, deltas) as d (v, c, s, n)
  join app.vendors v on v.id = d.v and v.status = 'approved'
  group by 1, 2 having sum(d.n) <> 0 order by 1, 2
  on conflict (category, in_stock) do update set products = c.products + excluded.products;
  delete from app_private.catalog_category_counts c
  using unnest(categories, in_stocks) as d (c, s)
  where c.category = d.c and c.in_stock = d.s and c.products = 0;

  insert into app_private.catalog_vendor_facets as f (category, vendor_id, products, in_stock)
  select x.category, d.v, sum(d.n)::integer, coalesce(sum(d.n) filter (where d.s), 0)::integer
  from unnest(vendor_ids, categories, in_stocks, deltas) as d (v, c, s, n)
  join app.vendors v on v.id = d.v and v.status = 'approved'
  cross join lateral (values (d.c), ('')) as x (category)
  group by 1, 2
  having sum(d.n) <> 0 or coalesce(sum(d.n) filter (where d.s), 0) <> 0
  order by 1, 2
  on conflict (category, vendor_id) do update
    set products = f.products + excluded.products, in_stock = f.in_stock + excluded.in_stock;
  delete from app_private.catalog_vendor_facets f
  using unnest(vendor_ids, categories) as d (v, c)
  where f.vendor_id = d.v and f.category in (d.c, '') and f.products = 0;
end;
$$;

COMMENT ON FUNCTION app_private.apply_catalog_deltas(vendor_ids uuid[], categories text[], in_stocks boolean[], deltas integer[]) IS 'Applies changes in active products (per vendor, category, availability) to app_private.catalog_counts and, for approved vendors, to the facet rollups (catalog_category_counts, catalog_vendor_facets), in key order, deleting rows that reach zero. Holds a share lock on each vendor while it counts, so an approval change (app_private.count_vendor_catalog) and a product write never miss each other. security definer: called by the products'' count trigger, which runs as the writer.';

REVOKE ALL ON FUNCTION app_private.apply_catalog_deltas(vendor_ids uuid[], categories text[], in_stocks boolean[], deltas integer[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.correct_spelling
-- created in 20261124110100_catalog.sql; last changed in 20261130060200_catalog_facets.sql
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
      -- Candidates from indexes, not every word of a similar length: the words that start with
      -- the same letter (or with the first two letters swapped), and the 200 most similar by
      -- trigrams (a typo in the first letter of a longer word). Then the same choice as before.
      select w.word into best
      from (
        select c.word from app_private.catalog_words c
        where left(c.word, 1) = left(term, 1)
          and char_length(c.word) between char_length(term) - allowed and char_length(term) + allowed
        union
        select c.word from app_private.catalog_words c
        where substr(c.word, 2, 1) || left(c.word, 1) = left(term, 2)
          and char_length(c.word) between char_length(term) - allowed and char_length(term) + allowed
        union
        (select c.word from app_private.catalog_words c
         where c.word operator(extensions.%) term
         order by c.word operator(extensions.<->) term
         limit 200)
      ) w
      where char_length(w.word) between char_length(term) - allowed and char_length(term) + allowed
        and extensions.levenshtein_less_equal(w.word, term, allowed) <= allowed
      order by extensions.levenshtein(w.word, term),
               extensions.similarity(w.word, term) desc, w.word
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

COMMENT ON FUNCTION app_private.correct_spelling(search text) IS 'The search with each word the catalog''s vocabulary does not know replaced by its nearest vocabulary word (Levenshtein distance at most 1 for 3 letters, 2 for longer; then trigram similarity), or null when no word changed: the typo fallback of app.search_products. Candidates come from indexes (same first letter or the first two swapped, with a length in range; and the 200 nearest by trigrams), so its cost follows the words that could be meant, not the vocabulary''s size: a typo in the first letter of a short word may go uncorrected.';

REVOKE ALL ON FUNCTION app_private.correct_spelling(search text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_catalog
-- created in 20261124110100_catalog.sql; last changed in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_catalog() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  vs uuid[];
  cs text[];
  ss boolean[];
  ns integer[];
begin
  if tg_op = 'INSERT' then
    select array_agg(x.vendor_id), array_agg(x.category), array_agg(x.in_stock), array_agg(x.n)
    into vs, cs, ss, ns
    from (select n.vendor_id, n.category, n.stock > n.reserved as in_stock, count(*)::integer as n
          from new_rows n where n.status = 'active' group by 1, 2, 3) x;
  elsif tg_op = 'DELETE' then
    select array_agg(x.vendor_id), array_agg(x.category), array_agg(x.in_stock), array_agg(x.n)
    into vs, cs, ss, ns
    from (select o.vendor_id, o.category, o.stock > o.reserved as in_stock, -count(*)::integer as n
          from old_rows o where o.status = 'active' group by 1, 2, 3) x;
  else
    select array_agg(x.vendor_id), array_agg(x.category), array_agg(x.in_stock), array_agg(x.n)
    into vs, cs, ss, ns
    from (
      select y.vendor_id, y.category, y.in_stock, sum(y.n)::integer as n
      from (
        select n.vendor_id, n.category, n.stock > n.reserved as in_stock, 1 as n
        from new_rows n where n.status = 'active'
        union all
        select o.vendor_id, o.category, o.stock > o.reserved, -1
        from old_rows o where o.status = 'active'
      ) y
      group by 1, 2, 3 having sum(y.n) <> 0
    ) x;
  end if;
  if vs is not null then
    perform app_private.apply_catalog_deltas(vs, cs, ss, ns);
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_catalog() IS 'The statement triggers on app.products: what the statement changed in active products per vendor, category and availability, from its transition tables, applied by app_private.apply_catalog_deltas (the counts and the facet rollups). security definer: vendors write products but not the counts.';

REVOKE ALL ON FUNCTION app_private.count_catalog() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.count_vendor_catalog
-- created in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.count_vendor_catalog() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  sign integer := case when new.status = 'approved' then 1 else -1 end;
begin
  -- The vendor row is locked by this update: product writes of this vendor wait (their share
  -- lock), so catalog_counts holds every count this change must move.
  insert into app_private.catalog_category_counts as c (category, in_stock, products)
  select k.category, k.in_stock, sign * sum(k.products)::integer
  from app_private.catalog_counts k where k.vendor_id = new.id
  group by 1, 2 having sum(k.products) <> 0 order by 1, 2
  on conflict (category, in_stock) do update set products = c.products + excluded.products;
  delete from app_private.catalog_category_counts c where c.products = 0;

  if sign = 1 then
    insert into app_private.catalog_vendor_facets (category, vendor_id, products, in_stock)
    select x.category, new.id, sum(k.products)::integer,
           coalesce(sum(k.products) filter (where k.in_stock), 0)::integer
    from app_private.catalog_counts k
    cross join lateral (values (k.category), ('')) as x (category)
    where k.vendor_id = new.id
    group by 1 having sum(k.products) <> 0 order by 1
    on conflict (category, vendor_id) do nothing;
  else
    delete from app_private.catalog_vendor_facets f where f.vendor_id = new.id;
  end if;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.count_vendor_catalog() IS 'A vendor approved, or no longer approved: its active products enter or leave the facet rollups (catalog_category_counts, catalog_vendor_facets), from its rows of app_private.catalog_counts. security definer: an ADMIN''s status change writes server-only tables.';

REVOKE ALL ON FUNCTION app_private.count_vendor_catalog() FROM PUBLIC;

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

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_catalog_words
-- created in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_catalog_words() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    SET client_min_messages TO 'warning'
    AS $$
declare
  pruned integer;
begin
  -- A word stays while an active product's search document has it (its English stem, probed
  -- through the search index); a word that stems to nothing (a stop word) goes.
  delete from app_private.catalog_words w
  where not exists (
    select 1 from app.products p
    where p.status = 'active'
      and p.search @@ to_tsquery('english'::regconfig, w.word));
  get diagnostics pruned = row_count;
  return pruned;
end;
$$;

COMMENT ON FUNCTION app_private.prune_catalog_words() IS 'Deletes the vocabulary words no active product has any more (its products deleted, renamed, archived or hidden), so a typo is never corrected to a word that finds nothing and the vocabulary follows the catalog. pg_cron runs it daily (agora-prune-catalog-words); a word comes back with the next product that has it.';

REVOKE ALL ON FUNCTION app_private.prune_catalog_words() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-catalog-words
-- created in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 37 3 * * *
-- command:
--   select app_private.prune_catalog_words()
