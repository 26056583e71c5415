/*
 * The admin analytics' store section at a thousand vendors (issue 30, docs/benchmarks.md). Its
 * top ten vendors summed app_private.fact_series of every vendor's daily sales, which groups by
 * day and vendor first (26,240 rows for 30 days at the growth bench's x10, a hash that spilled to
 * disk at the default work_mem), then by vendor, and did the same for every vendor's paid orders
 * to keep ten of them: 43 to 48 ms each, 166 to 181 ms for the section. Now
 * app_private.fact_key_totals sums a metric per key over the range in one pass (a group per
 * vendor), reading the whole ISO weeks of a daily range from the weekly rows, and the paid orders
 * are summed for the ten vendors only: the section took 25 ms (median of 15; 113 to 133 before,
 * the same data and minutes), with the same JSON for 21 ranges of days, weeks and months.
 *
 * Tables touched: none (a function added, one replaced).
 */

create function app_private.fact_key_totals(metric text, bucket_interval text, range_from timestamptz,
                                            range_to timestamptz, only_keys text[] default null)
returns table (key text, value numeric)
language plpgsql stable
set search_path = ''
-- Planned for each call's range: a generic plan of the ORed ranges below was four times slower
-- (24 against 6 ms for 30 days of a thousand vendors).
set plan_cache_mode = force_custom_plan
as $$
declare
  first_bucket timestamptz := date_trunc(bucket_interval, range_from, 'UTC');
  -- Daily buckets: the whole ISO weeks among them are read from the weekly rows, a row per key
  -- instead of seven (the same rows summed: every interval is kept from the same facts).
  -- (For weeks and months the range [weeks_from, weeks_to) is empty.)
  weeks_from timestamptz := case when bucket_interval = 'day'
    then date_trunc('week', first_bucket + interval '6 days', 'UTC') else first_bucket end;
  weeks_to timestamptz := case when bucket_interval = 'day'
    then greatest(date_trunc('week', date_trunc('day', range_to, 'UTC') + interval '1 day', 'UTC'),
                  date_trunc('week', first_bucket + interval '6 days', 'UTC')) else first_bucket end;
begin
  -- Two statements so that the keys, when given, are an index condition rather than a filter.
  if only_keys is null then
    return query
      select x.key, sum(x.value)
      from (
        select c.key, c.value from app_private.analytics_facts c
        where c.metric = fact_key_totals.metric
          and ((c.bucket_interval = fact_key_totals.bucket_interval and c.bucket >= first_bucket and c.bucket <= range_to
                and not (c.bucket >= weeks_from and c.bucket < weeks_to))
               or (c.bucket_interval = 'week' and c.bucket >= weeks_from and c.bucket < weeks_to))
        union all
        select d.key, d.delta from app_private.analytics_fact_deltas d
        where d.metric = fact_key_totals.metric
          and ((d.bucket_interval = fact_key_totals.bucket_interval and d.bucket >= first_bucket and d.bucket <= range_to
                and not (d.bucket >= weeks_from and d.bucket < weeks_to))
               or (d.bucket_interval = 'week' and d.bucket >= weeks_from and d.bucket < weeks_to))
        union all
        select l.key, l.value
        from app_private.analytics_fact_tail(fact_key_totals.metric, fact_key_totals.bucket_interval) l
        where l.bucket >= first_bucket and l.bucket <= range_to
      ) x
      group by 1;
  else
    return query
      select x.key, sum(x.value)
      from (
        select c.key, c.value from app_private.analytics_facts c
        where c.metric = fact_key_totals.metric and c.key = any(only_keys)
          and ((c.bucket_interval = fact_key_totals.bucket_interval and c.bucket >= first_bucket and c.bucket <= range_to
                and not (c.bucket >= weeks_from and c.bucket < weeks_to))
               or (c.bucket_interval = 'week' and c.bucket >= weeks_from and c.bucket < weeks_to))
        union all
        select d.key, d.delta from app_private.analytics_fact_deltas d
        where d.metric = fact_key_totals.metric and d.key = any(only_keys)
          and ((d.bucket_interval = fact_key_totals.bucket_interval and d.bucket >= first_bucket and d.bucket <= range_to
                and not (d.bucket >= weeks_from and d.bucket < weeks_to))
               or (d.bucket_interval = 'week' and d.bucket >= weeks_from and d.bucket < weeks_to))
        union all
        select l.key, l.value
        from app_private.analytics_fact_tail(fact_key_totals.metric, fact_key_totals.bucket_interval) l
        where l.bucket >= first_bucket and l.bucket <= range_to and l.key = any(only_keys)
      ) x
      group by 1;
  end if;
end;
$$;

comment on function app_private.fact_key_totals(text, text, timestamptz, timestamptz, text[]) is
  'A metric''s total per key over the buckets from the one holding range_from to the one holding range_to (the same figures as summing app_private.fact_series: rollup rows, their deltas and the rows not yet folded), in one pass grouped by key; only the keys given when only_keys is not null. Daily buckets read the whole ISO weeks among them from the weekly rows (seven times fewer rows; every interval is kept from the same facts). Keys whose total is zero may be returned. For rankings over a range (the store section''s top vendors), where grouping by bucket first costs a group per bucket and key.';

revoke all on function app_private.fact_key_totals(text, text, timestamptz, timestamptz, text[]) from public;

create or replace function app.admin_store_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    SET "TimeZone" TO 'UTC'
    AS $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  with buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ),
  sales as (select s.t, s.value from app_private.fact_series('orders.sales', bucket, range_from, range_to) s),
  paid as (select s.t, s.value from app_private.fact_series('orders.paid', bucket, range_from, range_to) s),
  top as (
    select s.key, s.value as sales
    from app_private.fact_key_totals('orders.vendor_sales', bucket, range_from, range_to) s
    where s.value <> 0
    order by s.value desc, s.key
    limit 10
  ),
  vendors as (
    select t.key, t.sales, coalesce(p.value, 0) as orders
    from top t
    left join app_private.fact_key_totals('orders.vendor_paid', bucket, range_from, range_to,
                                          array(select t2.key from top t2)) p on p.key = t.key
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'sales', (select coalesce(sum(s.value), 0) from sales s),
      'paidOrders', (select coalesce(sum(p.value), 0) from paid p)
    ),
    'sales', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join sales s on s.t = b.t),
    'orders', app_private.fact_series_json('orders.created', bucket, range_from, range_to),
    'ordersByStatus', (
      select jsonb_object_agg(st.status, coalesce(x.value, 0))
      from unnest(enum_range(null::app.order_status)) st(status)
      left join app_private.fact_totals('orders.status') x on x.key = st.status::text
    ),
    'topVendors', coalesce((
      select jsonb_agg(jsonb_build_object('id', v.key::uuid, 'name', coalesce(ve.name, ''),
                                          'sales', v.sales, 'orders', v.orders)
                       order by v.sales desc, v.key)
      from vendors v left join app.vendors ve on ve.id = v.key::uuid
    ), '[]'::jsonb)
  ) into result;
  return result;
end;
$$;

comment on function app.admin_store_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'The store section of GET /api/admin/analytics: sales (totals of orders paid in each UTC day, ISO week or month, refunds not deducted, minor units), paid orders, orders created, zero-filled, whole buckets; orders by status now; the top ten vendors by sales in the range''s buckets (name as the vendor is named now). From the rollups (app_private.analytics_facts, its deltas and the orders not yet folded), a row per bucket and vendor with sales in it, whatever the number of orders, summed per vendor in one pass (app_private.fact_key_totals); the ten vendors'' paid orders only for them. security definer: the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';
