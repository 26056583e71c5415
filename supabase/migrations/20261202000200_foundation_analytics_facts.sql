-- Replaces functions of other domains:
--   app.admin_messaging_stats (messages), app.admin_wallet_stats (wallet): the same answers, from
--   the rollups this migration adds.
/*
 * The rest of the admin analytics page from rollups kept by the writes (issue 30): the users'
 * figures came from rollups (20261130050400), but the messaging, store and wallet sections
 * still counted app.messages, app.conversations, app.orders, app.wallets and
 * app.wallet_transactions on every request (seconds at a year of data).
 *
 * - app_private.analytics_facts: one row per (metric, interval, bucket, key): a count or a sum
 *   per UTC day, ISO week and month (`day`, `week`, `month`), or a total now (`all`, bucket
 *   -infinity). A metric belongs to one table (its name starts with the table's); the key splits
 *   it (an order status, a vendor, a token) or is ''.
 * - Statement-level triggers on those five tables (app_private.<table>_facts_changed, written by
 *   this migration from the definitions) append what each statement changed to
 *   app_private.analytics_fact_deltas: a row contributes its facts (app_private
 *   .analytics_fact_definitions says which) with +1 when inserted, -1 when deleted, and on an
 *   update its old facts leave and its new ones arrive (only rows whose watched columns changed
 *   are looked at). Inserts only: writers never wait for a counter row, so concurrent writers do
 *   not queue or deadlock on them; agora-compact-counters folds the deltas in every minute, and
 *   a figure is its rows plus its deltas, read in one statement: exact at any moment.
 * - Active senders (distinct users who sent a message in a bucket) use
 *   app_private.analytics_fact_members as the active users use app_private.activity_members: a
 *   sender counts once per bucket, and stays counted if the message is later removed.
 * - app.admin_messaging_stats and app.admin_wallet_stats keep their answers and read the
 *   rollups; app.admin_store_stats is new (the store section was SQL in the API).
 * - app_private.recount_analytics_facts(): rebuilds every fact from the tables (operators, and
 *   seeds that write with triggers off).
 *
 * Series are whole buckets, as the users' series: a range starting mid-bucket counts the whole
 * first bucket, and the range's totals (sales, paid orders, top vendors) are those of its
 * buckets. Nothing destructive; the facts of the data already there are filled at the end.
 */

create table app_private.analytics_facts (
  metric text not null,
  bucket_interval text not null check (bucket_interval in ('day', 'week', 'month', 'all')),
  bucket timestamptz not null,
  key text not null default '',
  value numeric not null default 0,
  primary key (metric, bucket_interval, bucket, key)
);
comment on table app_private.analytics_facts is
  'The admin analytics'' messaging, store and wallet figures: a count or sum per metric, UTC day, ISO week or month (or a total now: interval all, bucket -infinity) and key (an order status, a vendor id, a token), as of the last compaction; a figure adds the rows of app_private.analytics_fact_deltas. Kept by the statement triggers app_private.<table>_facts_changed on the tables the metrics count, so the page reads a row per bucket instead of counting them. Server only: read through the app.admin_*_stats functions.';
alter table app_private.analytics_facts enable row level security;

create table app_private.analytics_fact_deltas (
  id bigint generated always as identity primary key,
  metric text not null,
  bucket_interval text not null check (bucket_interval in ('day', 'week', 'month', 'all')),
  bucket timestamptz not null,
  key text not null default '',
  delta numeric not null
);
create index analytics_fact_deltas_bucket_idx
  on app_private.analytics_fact_deltas (metric, bucket_interval, bucket, key);
comment on table app_private.analytics_fact_deltas is
  'Changes to app_private.analytics_facts not folded in yet: appended by the fact triggers (one row per metric, bucket and key a statement changed), folded in and deleted by app_private.compact_counters (pg_cron agora-compact-counters, every minute). Append-only for writers, so they never contend for a counter row. Server only.';
alter table app_private.analytics_fact_deltas enable row level security;

create table app_private.analytics_fact_members (
  metric text not null,
  bucket_interval text not null check (bucket_interval in ('day', 'week', 'month')),
  bucket timestamptz not null,
  user_id uuid not null,
  primary key (metric, bucket_interval, bucket, user_id)
);
create index analytics_fact_members_user_id_idx on app_private.analytics_fact_members (user_id);
comment on table app_private.analytics_fact_members is
  'Which users a distinct-user metric (messages.senders: who sent a message) counted in each open bucket, so a user counts once per bucket. Kept until two days after the bucket closes (app_private.prune_activity_members); a deleted account''s rows go with it. Server only.';
alter table app_private.analytics_fact_members enable row level security;

create function app_private.analytics_fact_definitions()
returns table (source text, watched text, facts text)
language sql
immutable
set search_path = ''
as $$
  -- facts: a VALUES list over the row `r` of (metric, at, key, value): `at` picks the day, week
  -- and month buckets, '-infinity' means a total now, null means no fact.
  values
    ('app.conversations', 'created_at', $f$
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) $f$),
    ('app.messages', 'created_at, deleted_at', $f$
      values ('messages.sent', r.created_at, '', 1::numeric),
             ('messages.live', case when r.deleted_at is null then '-infinity'::timestamptz end, '',
              1::numeric) $f$),
    ('app.orders', 'created_at, paid_at, status, total, vendor_id', $f$
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) $f$),
    ('app.wallets', 'created_at, exported_at', $f$
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) $f$),
    ('app.wallet_transactions',
     'status, direction, confirmed_at, amount, chain_id, token_kind, token_address, token_symbol, token_decimals', $f$
      values ('wallet_transactions.all', '-infinity'::timestamptz,
              r.status::text || ' ' || r.direction::text, 1::numeric),
             ('wallet_transactions.volume',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              r.amount),
             ('wallet_transactions.transfers',
              case when r.direction = 'out' and r.status = 'confirmed' then r.confirmed_at end,
              jsonb_build_object('kind', r.token_kind, 'symbol', r.token_symbol,
                                 'address', r.token_address, 'decimals', r.token_decimals,
                                 'chainId', r.chain_id)::text,
              1::numeric) $f$)
$$;
comment on function app_private.analytics_fact_definitions() is
  'What each row of a counted table contributes to app_private.analytics_facts: the table, the columns whose change moves its facts (an update of other columns is skipped), and its facts as SQL over the row r. One definition serves the triggers and the recount, so they cannot disagree.';
revoke all on function app_private.analytics_fact_definitions() from public;

create function app_private.analytics_fact_sql(target text, rows_sql text, facts text) returns text
language sql
immutable
set search_path = ''
as $$
  select format($q$
    insert into %s (metric, bucket_interval, bucket, key, %s)
    select f.metric, i.name,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end,
           f.key, sum(r.sign * f.value)
    from (%s) r
    cross join lateral (%s) f(metric, at, key, value)
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0
    order by 1, 2, 3, 4 $q$,
    target, case when target = 'app_private.analytics_facts' then 'value' else 'delta' end,
    rows_sql, facts)
$$;
comment on function app_private.analytics_fact_sql(text, text, text) is
  'Builds the statement that adds the facts of some rows (rows_sql: the rows with a sign column, +1 or -1) to app_private.analytics_fact_deltas or, for a recount, app_private.analytics_facts, summed per metric, bucket and key.';
revoke all on function app_private.analytics_fact_sql(text, text, text) from public;

create function app_private.analytics_fact_rows(op text, watched text) returns text
language sql
immutable
set search_path = ''
as $$
  select case op
    when 'INSERT' then 'select 1 as sign, n.* from new_rows n'
    when 'DELETE' then 'select -1 as sign, o.* from old_rows o'
    else format(
      'select 1 as sign, n.* from new_rows n join old_rows o on o.id = n.id where %1$s is distinct from %2$s
       union all
       select -1 as sign, o.* from old_rows o join new_rows n on n.id = o.id where %1$s is distinct from %2$s',
      '(o.' || replace(watched, ', ', ', o.') || ')', '(n.' || replace(watched, ', ', ', n.') || ')')
  end
$$;
comment on function app_private.analytics_fact_rows(text, text) is
  'The rows a statement changed, with their sign, in a fact trigger: the new rows (+1) of an insert, the old ones (-1) of a delete, and of an update the old and new versions of the rows whose watched columns changed (an update of other columns moves no fact).';
revoke all on function app_private.analytics_fact_rows(text, text) from public;

-- Each table's trigger function is declared here and its body written just below from the
-- definitions (supabase/schema/ shows the written bodies; a function is placed there by its
-- create statement, so each has one).
create function app_private.conversations_facts_changed() returns trigger
language plpgsql as $$ begin return null; end; $$;
create function app_private.messages_facts_changed() returns trigger
language plpgsql as $$ begin return null; end; $$;
create function app_private.orders_facts_changed() returns trigger
language plpgsql as $$ begin return null; end; $$;
create function app_private.wallets_facts_changed() returns trigger
language plpgsql as $$ begin return null; end; $$;
create function app_private.wallet_transactions_facts_changed() returns trigger
language plpgsql as $$ begin return null; end; $$;

-- Each counted table gets its own trigger function, written here from its definition with the
-- statements spelled out (no EXECUTE): PL/pgSQL keeps their plans, so a statement pays for
-- running them, not for planning them again (dynamic SQL cost about 1 ms a message).
do $$
declare
  def record;
  t text;
begin
  for def in select * from app_private.analytics_fact_definitions() loop
    t := split_part(def.source, '.', 2);
    execute format($f$
      create or replace function app_private.%1$s_facts_changed() returns trigger
      language plpgsql
      security definer
      set search_path = ''
      as $body$
      begin
        if tg_op = 'INSERT' then
          %2$s;
        elsif tg_op = 'DELETE' then
          %3$s;
        else
          %4$s;
        end if;
        return null;
      end;
      $body$ $f$, t,
      app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
        app_private.analytics_fact_rows('INSERT', def.watched), def.facts),
      app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
        app_private.analytics_fact_rows('DELETE', def.watched), def.facts),
      app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
        app_private.analytics_fact_rows('UPDATE', def.watched), def.facts));
    execute format($f$
      comment on function app_private.%1$s_facts_changed() is
        'After insert, update or delete on %2$s, once per statement: appends the analytics facts the statement added (+) and removed (-) to app_private.analytics_fact_deltas, an insert and never an update of a shared row. Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write %2$s and may not write the rollups.' $f$,
      t, def.source);
    execute format('revoke all on function app_private.%s_facts_changed() from public', t);
  end loop;
end;
$$;

create function app_private.analytics_facts_truncated() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  prefix text := tg_table_name || '.%';
begin
  delete from app_private.analytics_fact_deltas d where d.metric like prefix;
  delete from app_private.analytics_facts f where f.metric like prefix;
  delete from app_private.analytics_fact_members m where m.metric like prefix;
  return null;
end;
$$;
comment on function app_private.analytics_facts_truncated() is
  'After truncate of a counted table (tests, never the app): its metrics are empty.';
revoke all on function app_private.analytics_facts_truncated() from public;

create function app_private.record_message_senders() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- Static statements, so PL/pgSQL keeps their plans. A sender new to a bucket becomes its member
  -- and adds one; members are inserted in key order, so concurrent writers never deadlock, and a
  -- sender added by two transactions at once counts once (the second waits for the first).
  with facts as (
    select distinct i.name as bucket_interval, date_trunc(i.name, n.created_at, 'UTC') as bucket,
           n.sender_id as user_id
    from new_rows n
    cross join (values ('day'), ('month'), ('week')) i(name)
    where n.sender_id is not null
  ), added as (
    insert into app_private.analytics_fact_members (metric, bucket_interval, bucket, user_id)
    select 'messages.senders', f.bucket_interval, f.bucket, f.user_id from facts f order by 2, 3, 4
    on conflict do nothing
    returning bucket_interval, bucket
  )
  insert into app_private.analytics_fact_deltas (metric, bucket_interval, bucket, delta)
  select 'messages.senders', a.bucket_interval, a.bucket, count(*) from added a
  group by 2, 3
  order by 2, 3;
  return null;
end;
$$;
comment on function app_private.record_message_senders() is
  'After insert on app.messages, per statement: each sender becomes an active sender of the day, week and month of the message (once per bucket). security definer: senders may not write the rollups.';
revoke all on function app_private.record_message_senders() from public;

create function app_private.forget_fact_members() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  delete from app_private.analytics_fact_members m where m.user_id in (select o.id from old_rows o);
  return null;
end;
$$;
comment on function app_private.forget_fact_members() is
  'After delete on app.users, per statement: a deleted account''s memberships of open buckets go with it (the counts, which name nobody, stay).';
revoke all on function app_private.forget_fact_members() from public;

do $$
declare
  t text;
begin
  foreach t in array array['conversations', 'messages', 'orders', 'wallets', 'wallet_transactions'] loop
    execute format($t$
      create trigger %1$s_facts_inserted after insert on app.%1$s
        referencing new table as new_rows
        for each statement execute function app_private.%1$s_facts_changed();
      create trigger %1$s_facts_updated after update on app.%1$s
        referencing old table as old_rows new table as new_rows
        for each statement execute function app_private.%1$s_facts_changed();
      create trigger %1$s_facts_deleted after delete on app.%1$s
        referencing old table as old_rows
        for each statement execute function app_private.%1$s_facts_changed();
      create trigger %1$s_facts_truncated after truncate on app.%1$s
        for each statement execute function app_private.analytics_facts_truncated() $t$, t);
  end loop;
end;
$$;
create trigger messages_record_senders after insert on app.messages
  referencing new table as new_rows
  for each statement execute function app_private.record_message_senders();
create trigger users_forget_fact_members after delete on app.users
  referencing old table as old_rows
  for each statement execute function app_private.forget_fact_members();

create function app_private.recount_analytics_facts() returns void
language plpgsql
set search_path = ''
as $$
declare
  def record;
begin
  -- Writers wait while the facts are rebuilt, so none of their deltas is lost.
  for def in select * from app_private.analytics_fact_definitions() d order by d.source loop
    execute format('lock table %s in share row exclusive mode', def.source);
  end loop;
  lock table app_private.analytics_facts in exclusive mode;
  lock table app_private.analytics_fact_deltas in exclusive mode;
  lock table app_private.analytics_fact_members in exclusive mode;
  delete from app_private.analytics_fact_deltas;
  delete from app_private.analytics_facts;
  delete from app_private.analytics_fact_members;
  for def in select * from app_private.analytics_fact_definitions() d order by d.source loop
    execute app_private.analytics_fact_sql('app_private.analytics_facts',
      format('select 1 as sign, t.* from %s t', def.source), def.facts);
  end loop;
  insert into app_private.analytics_fact_members (metric, bucket_interval, bucket, user_id)
  select distinct 'messages.senders', i.name, date_trunc(i.name, m.created_at, 'UTC'), m.sender_id
  from app.messages m cross join (values ('day'), ('week'), ('month')) i(name)
  where m.sender_id is not null;
  insert into app_private.analytics_facts (metric, bucket_interval, bucket, value)
  select m.metric, m.bucket_interval, m.bucket, count(*)
  from app_private.analytics_fact_members m group by 1, 2, 3;
  perform app_private.prune_activity_members();
end;
$$;
comment on function app_private.recount_analytics_facts() is
  'Rebuilds app_private.analytics_facts from the counted tables (full scans; their writers wait meanwhile): after rows were written with triggers off (a bulk load with session_replication_role = replica), or should an operator doubt the figures. Active senders of removed messages, which the triggers keep counted, are counted no more.';
revoke all on function app_private.recount_analytics_facts() from public;

create or replace function app_private.prune_activity_members() returns integer
language sql
set search_path = ''
as $$
  with gone as (
    delete from app_private.activity_members m
    where m.bucket < date_trunc(m.bucket_interval, now() - interval '2 days', 'UTC')
    returning 1
  ), gone_facts as (
    delete from app_private.analytics_fact_members m
    where m.bucket < date_trunc(m.bucket_interval, now() - interval '2 days', 'UTC')
    returning 1
  )
  select ((select count(*) from gone) + (select count(*) from gone_facts))::integer
$$;
comment on function app_private.prune_activity_members() is
  'pg_cron (agora-prune-activity, hourly): deletes the members of activity and active-sender buckets that closed more than two days ago (a late access-log batch can still land in yesterday''s); their counts stay in the rollups. Returns how many rows went.';

create function app_private.fact_series(metric text, bucket_interval text, range_from timestamptz, range_to timestamptz)
returns table (t timestamptz, key text, value numeric)
language plpgsql
stable
set search_path = ''
as $$
begin
  -- plpgsql, not sql: its plan is kept per connection instead of made again on every call
  -- (docs/conventions.md, Plans); the stats functions call it several times a request.
  return query
    select x.bucket, x.key, sum(x.value)
    from (
      select c.bucket, c.key, c.value from app_private.analytics_facts c
      where c.metric = fact_series.metric and c.bucket_interval = fact_series.bucket_interval
        and c.bucket >= date_trunc(fact_series.bucket_interval, range_from, 'UTC') and c.bucket <= range_to
      union all
      select d.bucket, d.key, d.delta from app_private.analytics_fact_deltas d
      where d.metric = fact_series.metric and d.bucket_interval = fact_series.bucket_interval
        and d.bucket >= date_trunc(fact_series.bucket_interval, range_from, 'UTC') and d.bucket <= range_to
    ) x
    group by 1, 2;
end;
$$;
comment on function app_private.fact_series(text, text, timestamptz, timestamptz) is
  'A metric''s buckets from the one holding range_from to the one holding range_to, per key, from the rollup rows plus their deltas in one statement (exact while the fold is late). Buckets with nothing are absent. For the app.admin_*_stats functions.';
revoke all on function app_private.fact_series(text, text, timestamptz, timestamptz) from public;

create function app_private.fact_totals(metric text)
returns table (key text, value numeric)
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
    select x.key, sum(x.value)
    from (
      select c.key, c.value from app_private.analytics_facts c
      where c.metric = fact_totals.metric and c.bucket_interval = 'all' and c.bucket = '-infinity'
      union all
      select d.key, d.delta from app_private.analytics_fact_deltas d
      where d.metric = fact_totals.metric and d.bucket_interval = 'all' and d.bucket = '-infinity'
    ) x
    group by 1;
end;
$$;
comment on function app_private.fact_totals(text) is
  'A metric''s totals now, per key, from the rollup rows plus their deltas in one statement. For the app.admin_*_stats functions.';
revoke all on function app_private.fact_totals(text) from public;

create function app_private.fact_total(metric text) returns bigint
language plpgsql
stable
set search_path = ''
as $$
begin
  return (select coalesce(sum(t.value), 0)::bigint from app_private.fact_totals(metric) t);
end;
$$;
comment on function app_private.fact_total(text) is
  'A metric''s total now over every key (0 when none).';
revoke all on function app_private.fact_total(text) from public;

create or replace function app.admin_messaging_stats(bucket text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set timezone = 'UTC'
as $$
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
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'conversations', app_private.fact_total('conversations.all'),
      'messages', app_private.fact_total('messages.live')
    ),
    'messages', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join app_private.fact_series('messages.sent', bucket, range_from, range_to) s on s.t = b.t),
    'activeSenders', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join app_private.fact_series('messages.senders', bucket, range_from, range_to) s on s.t = b.t),
    'conversationsCreated', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join app_private.fact_series('conversations.created', bucket, range_from, range_to) s on s.t = b.t)
  ) into result;
  return result;
end;
$$;
comment on function app.admin_messaging_stats(text, timestamptz, timestamptz) is
  'Messages sent (deleted ones included), active senders (users who sent a message) and new conversations per UTC day, ISO week or month, zero-filled, whole buckets, with totals (conversations, messages not deleted): counts only, never content, from the rollups (app_private.analytics_facts and its deltas), a row per bucket whatever the size of the tables. security definer because ADMINs cannot read conversations they are not in and the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';

create or replace function app.admin_wallet_stats(bucket text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set timezone = 'UTC'
as $$
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
  transactions as (
    select split_part(x.key, ' ', 1) as status, split_part(x.key, ' ', 2) as direction, x.value
    from app_private.fact_totals('wallet_transactions.all') x
  ),
  volume as (
    select v.t, v.key, v.value as amount, coalesce(n.value, 0) as n
    from app_private.fact_series('wallet_transactions.volume', bucket, range_from, range_to) v
    left join app_private.fact_series('wallet_transactions.transfers', bucket, range_from, range_to) n
      on n.t = v.t and n.key = v.key
  ),
  tokens as (
    select distinct v.key, v.key::jsonb as token from volume v where v.n <> 0
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'wallets', app_private.fact_total('wallets.all'),
      'exported', app_private.fact_total('wallets.exported'),
      'transactions', (select coalesce(sum(x.value), 0)::bigint from transactions x)
    ),
    'transactionsByStatus', (
      select jsonb_object_agg(s.status, coalesce(
        (select sum(x.value) from transactions x where x.status = s.status::text), 0)::bigint)
      from unnest(enum_range(null::app.wallet_transaction_status)) as s (status)
    ),
    'transactionsByDirection', jsonb_build_object(
      'out', (select coalesce(sum(x.value), 0)::bigint from transactions x where x.direction = 'out'),
      'in', (select coalesce(sum(x.value), 0)::bigint from transactions x where x.direction = 'in')
    ),
    'walletsCreated', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join app_private.fact_series('wallets.created', bucket, range_from, range_to) s on s.t = b.t),
    'volume', coalesce((
      select jsonb_agg(jsonb_build_object(
        'token', k.token,
        'series', (select jsonb_agg(jsonb_build_object(
                            't', b.t, 'amount', coalesce(v.amount, 0)::text, 'transfers', coalesce(v.n, 0))
                          order by b.t)
                   from buckets b left join volume v on v.t = b.t and v.key = k.key)
      ) order by k.token ->> 'kind', k.token ->> 'symbol', k.key)
      from tokens k
    ), '[]'::jsonb)
  ) into result;
  return result;
end;
$$;
comment on function app.admin_wallet_stats(text, timestamptz, timestamptz) is
  'Wallet figures for the admin analytics: totals, transactions by status and direction, wallets created per interval and the confirmed outgoing volume per token per interval (base units as decimal strings), zero-filled, whole buckets, from the rollups (app_private.analytics_facts and its deltas). security definer because wallets and transactions are readable only by their owners and the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only, never an address.';

create function app.admin_store_stats(bucket text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql
stable
security definer
set search_path = ''
set timezone = 'UTC'
as $$
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
    select s.key, sum(s.value) as sales
    from app_private.fact_series('orders.vendor_sales', bucket, range_from, range_to) s
    group by s.key
    having sum(s.value) <> 0
    order by sum(s.value) desc, s.key
    limit 10
  ),
  vendors as (
    select t.key, t.sales, coalesce(sum(p.value), 0) as orders
    from top t
    left join app_private.fact_series('orders.vendor_paid', bucket, range_from, range_to) p on p.key = t.key
    group by t.key, t.sales
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'sales', (select coalesce(sum(s.value), 0) from sales s),
      'paidOrders', (select coalesce(sum(p.value), 0) from paid p)
    ),
    'sales', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join sales s on s.t = b.t),
    'orders', (
      select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
      from buckets b left join app_private.fact_series('orders.created', bucket, range_from, range_to) s on s.t = b.t),
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
comment on function app.admin_store_stats(text, timestamptz, timestamptz) is
  'The store section of GET /api/admin/analytics: sales (totals of orders paid in each UTC day, ISO week or month, refunds not deducted, minor units), paid orders, orders created, zero-filled, whole buckets; orders by status now; the top ten vendors by sales in the range''s buckets (name as the vendor is named now). From the rollups (app_private.analytics_facts and its deltas), a row per bucket and vendor with sales in it, whatever the number of orders. security definer: the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';
grant execute on function app.admin_store_stats(text, timestamptz, timestamptz) to authenticated;

create or replace function app_private.compact_counters() returns integer
language plpgsql
set search_path = ''
as $$
declare
  folded integer;
  more integer;
  facts integer;
begin
  folded := app_private.compact_user_counts();
  with gone as (
    delete from app_private.analytics_count_deltas d
    returning d.metric, d.bucket_interval, d.bucket, d.delta
  ), sums as (
    select g.metric, g.bucket_interval, g.bucket, sum(g.delta)::bigint as delta, count(*)::integer as rows
    from gone g group by 1, 2, 3
  ), added as (
    insert into app_private.analytics_counts as c (metric, bucket_interval, bucket, value)
    select s.metric, s.bucket_interval, s.bucket, s.delta from sums s order by 1, 2, 3
    on conflict (metric, bucket_interval, bucket) do update set value = c.value + excluded.value
  )
  select coalesce(sum(s.rows), 0)::integer into more from sums s;
  with gone as (
    delete from app_private.analytics_fact_deltas d
    returning d.metric, d.bucket_interval, d.bucket, d.key, d.delta
  ), sums as (
    select g.metric, g.bucket_interval, g.bucket, g.key, sum(g.delta) as delta, count(*)::integer as rows
    from gone g group by 1, 2, 3, 4
  ), added as (
    insert into app_private.analytics_facts as c (metric, bucket_interval, bucket, key, value)
    select s.metric, s.bucket_interval, s.bucket, s.key, s.delta from sums s order by 1, 2, 3, 4
    on conflict (metric, bucket_interval, bucket, key) do update set value = c.value + excluded.value
  )
  select coalesce(sum(s.rows), 0)::integer into facts from sums s;
  return folded + more + facts;
end;
$$;
comment on function app_private.compact_counters() is
  'pg_cron (agora-compact-counters, every minute): folds the appended deltas of the user counts, of the user analytics rollups and of the analytics facts into their rows, each in the same transaction as their deletion, so a reader (row plus deltas, one statement) sees the same figure before and after. Returns how many delta rows it folded.';

-- The facts of the data already there.
select app_private.recount_analytics_facts();

revoke execute on all functions in schema app, app_private from public;
