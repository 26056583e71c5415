/*
 * app_private.fact_key_totals in one statement (issue 30's follow-up, docs/benchmarks.md). It
 * held the same query twice, with and without `key = any(only_keys)`, so that the keys, when
 * given, were an index condition rather than a filter. The function is planned per call
 * (plan_cache_mode force_custom_plan: the parameters are constants when it is planned), so
 * `(only_keys is null or key = any(only_keys))` folds to nothing without keys and to the index
 * condition with them: the same plans, checked with auto_explain, and the same figures (pgTAP
 * 013 of admin compares it with app_private.fact_series, with and without keys).
 *
 * Tables touched: none (one function replaced).
 */

create or replace function app_private.fact_key_totals(metric text, bucket_interval text, range_from timestamptz,
                                                       range_to timestamptz, only_keys text[] default null)
returns table (key text, value numeric)
language plpgsql stable
set search_path = ''
-- Planned for each call's range and keys: a generic plan of the ORed ranges below was four times
-- slower (24 against 6 ms for 30 days of a thousand vendors), and the keys are an index condition
-- only in a plan made for them.
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
  return query
    select x.key, sum(x.value)
    from (
      select c.key, c.value from app_private.analytics_facts c
      where c.metric = fact_key_totals.metric and (only_keys is null or c.key = any(only_keys))
        and ((c.bucket_interval = fact_key_totals.bucket_interval and c.bucket >= first_bucket and c.bucket <= range_to
              and not (c.bucket >= weeks_from and c.bucket < weeks_to))
             or (c.bucket_interval = 'week' and c.bucket >= weeks_from and c.bucket < weeks_to))
      union all
      select d.key, d.delta from app_private.analytics_fact_deltas d
      where d.metric = fact_key_totals.metric and (only_keys is null or d.key = any(only_keys))
        and ((d.bucket_interval = fact_key_totals.bucket_interval and d.bucket >= first_bucket and d.bucket <= range_to
              and not (d.bucket >= weeks_from and d.bucket < weeks_to))
             or (d.bucket_interval = 'week' and d.bucket >= weeks_from and d.bucket < weeks_to))
      union all
      select l.key, l.value
      from app_private.analytics_fact_tail(fact_key_totals.metric, fact_key_totals.bucket_interval) l
      where l.bucket >= first_bucket and l.bucket <= range_to and (only_keys is null or l.key = any(only_keys))
    ) x
    group by 1;
end;
$$;
