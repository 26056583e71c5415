/*
 * The catalog at any size (issue 30, "a year of data"): facets read from maintained rollups, a
 * bounded vendor facet, a price range from an index per category, the spelling fallback from
 * indexes, and the counts and vocabulary pruned.
 *
 * Before, the unsearched catalog's facets summed every row of app_private.catalog_counts (one per
 * vendor, category and availability: 10k vendors, 240k rows) on each request and listed every
 * vendor with a product (10k entries in each answer); the typo fallback compared the search with
 * every vocabulary word of a similar length, and the vocabulary only grew.
 *
 * Now:
 * - app_private.catalog_category_counts (per category and availability) and
 *   app_private.catalog_vendor_facets (per category, '' for all, and vendor) hold the active
 *   products of approved vendors, kept by app_private.count_catalog (the statement triggers on
 *   app.products, which also keep catalog_counts) and by a trigger on a vendor's approval
 *   (app_private.count_vendor_catalog). Writers of one vendor's products hold a share lock on
 *   the vendor row while they count, so an approval change and a product write never miss each
 *   other; every rollup row is written in key order (no deadlock between writers).
 * - A price filter without a search counts the facets over the products in the price range (an
 *   index-only range scan) and takes the price range from the price indexes, instead of one pass
 *   over every product (the price facet ignores the price filter).
 * - The vendor facet is the 50 vendors with the most matching products (ties by id), shown by
 *   count, then name: a page, not the whole list (the same cut on the scanning path, with a
 *   search or a price filter).
 * - Zero rows are deleted by the same triggers (catalog_counts and the rollups).
 * - The spelling fallback takes its candidates from two indexes on app_private.catalog_words
 *   (trigrams, and first letter with length) instead of every word of a similar length; a word
 *   whose products are all gone is pruned daily (app_private.prune_catalog_words, pg_cron).
 *
 * Tables: app_private.catalog_counts (zero rows deleted), app_private.catalog_words (an index,
 * pruned), two new rollups filled here from the products; app.products (an index). Destructive
 * only for rows that say nothing: zero counts, and vocabulary words no active product has.
 */

create table app_private.catalog_category_counts (
  category text not null,
  in_stock boolean not null,
  products integer not null,
  primary key (category, in_stock)
);

comment on table app_private.catalog_category_counts is
  'Active products of approved vendors per category and availability: the category facet of the unsearched catalog without a vendor filter (a dozen rows, whatever the catalog''s size). Kept by app_private.count_catalog and app_private.count_vendor_catalog; zero rows are deleted. Server only.';

create table app_private.catalog_vendor_facets (
  category text not null,
  vendor_id uuid not null references app.vendors (id) on delete cascade,
  products integer not null,
  in_stock integer not null,
  primary key (category, vendor_id)
);

comment on table app_private.catalog_vendor_facets is
  'Active products of each approved vendor per category (and over all categories, category ''''), with how many are available: the vendor facet of the unsearched catalog is the first 50 rows of one of its indexes. Kept by app_private.count_catalog and app_private.count_vendor_catalog; zero rows are deleted. Server only.';

create index catalog_vendor_facets_all_idx
  on app_private.catalog_vendor_facets (category, products desc, vendor_id);
create index catalog_vendor_facets_in_stock_idx
  on app_private.catalog_vendor_facets (category, in_stock desc, vendor_id);
create index catalog_vendor_facets_out_of_stock_idx
  on app_private.catalog_vendor_facets (category, (products - in_stock) desc, vendor_id);
create index catalog_vendor_facets_vendor_idx on app_private.catalog_vendor_facets (vendor_id);

create index products_category_price_idx on app.products (category, price_amount)
  where status = 'active';
create index products_price_facets_idx on app.products (price_amount) include (vendor_id, category)
  where status = 'active';

create index catalog_words_trigram_idx on app_private.catalog_words
  using gin (word extensions.gin_trgm_ops);
create index catalog_words_initial_idx on app_private.catalog_words
  (left(word, 1), char_length(word));
create index catalog_words_swapped_initial_idx on app_private.catalog_words
  ((substr(word, 2, 1) || left(word, 1)), char_length(word));

alter table app_private.catalog_category_counts enable row level security;
alter table app_private.catalog_vendor_facets enable row level security;

create function app_private.apply_catalog_deltas(
  vendor_ids uuid[], categories text[], in_stocks boolean[], deltas integer[]
) returns void
language plpgsql
security definer
set search_path = ''
as $$
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

comment on function app_private.apply_catalog_deltas(uuid[], text[], boolean[], integer[]) is
  'Applies changes in active products (per vendor, category, availability) to app_private.catalog_counts and, for approved vendors, to the facet rollups (catalog_category_counts, catalog_vendor_facets), in key order, deleting rows that reach zero. Holds a share lock on each vendor while it counts, so an approval change (app_private.count_vendor_catalog) and a product write never miss each other. security definer: called by the products'' count trigger, which runs as the writer.';

create or replace function app_private.count_catalog() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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

comment on function app_private.count_catalog() is
  'The statement triggers on app.products: what the statement changed in active products per vendor, category and availability, from its transition tables, applied by app_private.apply_catalog_deltas (the counts and the facet rollups). security definer: vendors write products but not the counts.';

create function app_private.count_vendor_catalog() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
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

comment on function app_private.count_vendor_catalog() is
  'A vendor approved, or no longer approved: its active products enter or leave the facet rollups (catalog_category_counts, catalog_vendor_facets), from its rows of app_private.catalog_counts. security definer: an ADMIN''s status change writes server-only tables.';

create trigger vendors_count_catalog after update of status on app.vendors
  for each row when ((old.status = 'approved') is distinct from (new.status = 'approved'))
  execute function app_private.count_vendor_catalog();

create or replace function app_private.correct_spelling(search text) returns text
language plpgsql
stable
set search_path = ''
as $_$
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

comment on function app_private.correct_spelling(text) is
  'The search with each word the catalog''s vocabulary does not know replaced by its nearest vocabulary word (Levenshtein distance at most 1 for 3 letters, 2 for longer; then trigram similarity), or null when no word changed: the typo fallback of app.search_products. Candidates come from indexes (same first letter or the first two swapped, with a length in range; and the 200 nearest by trigrams), so its cost follows the words that could be meant, not the vocabulary''s size: a typo in the first letter of a short word may go uncorrected.';

create function app_private.prune_catalog_words() returns integer
language plpgsql
set search_path = ''
set client_min_messages = warning
as $$
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

comment on function app_private.prune_catalog_words() is
  'Deletes the vocabulary words no active product has any more (its products deleted, renamed, archived or hidden), so a typo is never corrected to a word that finds nothing and the vocabulary follows the catalog. pg_cron runs it daily (agora-prune-catalog-words); a word comes back with the next product that has it.';

create or replace function app.search_products(search text DEFAULT NULL::text, category_filter text DEFAULT NULL::text, vendor_filter uuid DEFAULT NULL::uuid, min_price bigint DEFAULT NULL::bigint, max_price bigint DEFAULT NULL::bigint, in_stock boolean DEFAULT NULL::boolean, sort_by text DEFAULT 'relevance'::text, cursor_mode text DEFAULT NULL::text, cursor_key text DEFAULT NULL::text, cursor_id uuid DEFAULT NULL::uuid, page_size integer DEFAULT 50) RETURNS jsonb
language plpgsql stable security definer
set search_path = ''
as $_$
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

comment on function app.search_products(text, text, uuid, bigint, bigint, boolean, text, text, text, uuid, integer) is
  'The catalog search: active products of approved vendors (or, with vendor_filter naming the caller''s own vendor, all of its products), full-text search ranked by ts_rank_cd with spelling correction when nothing matches, filters (category, vendor, price in minor units inclusive, in stock), sorts (relevance, newest, price_asc, price_desc) with keyset cursors, and facets that apply every filter but their own (the vendor facet: the 50 vendors with the most matching products; without a search or a price filter the facets come from rollups the writes keep). Returns {items, next: [sort, mode, key, id] | null, facets, mode, corrected}. security definer: visitors hold no privilege on app tables; visibility is decided here, and every value is a bound parameter.';

-- The rollups as they are now; zero counts go.
delete from app_private.catalog_counts where products = 0;
insert into app_private.catalog_category_counts (category, in_stock, products)
select k.category, k.in_stock, sum(k.products)::integer
from app_private.catalog_counts k join app.vendors v on v.id = k.vendor_id and v.status = 'approved'
group by 1, 2 having sum(k.products) <> 0;
insert into app_private.catalog_vendor_facets (category, vendor_id, products, in_stock)
select x.category, k.vendor_id, sum(k.products)::integer,
       coalesce(sum(k.products) filter (where k.in_stock), 0)::integer
from app_private.catalog_counts k join app.vendors v on v.id = k.vendor_id and v.status = 'approved'
cross join lateral (values (k.category), ('')) as x (category)
group by 1, 2 having sum(k.products) <> 0;

select cron.schedule('agora-prune-catalog-words', '37 3 * * *', 'select app_private.prune_catalog_words()');

revoke execute on all functions in schema app, app_private from public;
