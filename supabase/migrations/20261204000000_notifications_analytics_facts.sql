-- Replaces functions of other domains:
--   app_private.analytics_fact_definitions, app_private.analytics_fact_select,
--   app_private.fold_analytics_facts, app_private.recount_analytics_facts,
--   app_private.analytics_fact_tail (foundation): a fifth column (clock), two folded sources
--   more, an hour bucket for the notifications' metrics.
/*
 * The notifications analytics from the rollups (issue 30): app.notification_analytics counted
 * the range's app.notifications and app_private.notification_deliveries on every call (1,567 ms
 * for 30 days at the growth bench's x10, a million notifications). It now reads the analytics
 * facts of 20261202000200, a row per bucket, type and key, whatever the number of notifications
 * (12 ms there; docs/benchmarks.md).
 *
 * - Both tables are folded sources (app_private.analytics_fold_marks): their inserts (bulk
 *   sends write 1,000 notifications a statement, deliveries as many) run no fact trigger; the
 *   every-minute job (app_private.fold_analytics_facts) folds the rows from a mark and the
 *   reader adds the rows above it live (app_private.analytics_fact_tail), in one statement.
 *   A source's clock (the new fifth column of app_private.analytics_fact_definitions) is the
 *   column the mark is on: created_at for notifications, finished_at for deliveries (a delivery
 *   counts by the time of its outcome; finished_at is set to now(), the writing transaction's
 *   start, as created_at is, so the fold's horizon argument holds for it too: a delivery
 *   finished below the mark was committed before the fold read it).
 * - Facts (metric, key): notifications.created and notifications.read (key: the type) in the
 *   notification's creation bucket, inbox notifications only, so reading one moves the read
 *   figure of the bucket it was created in; notifications.read_seconds (key: 'TYPE bin'), the
 *   histogram of seconds to read, bin 0 = [0, 1 s), bin k >= 1 = [2^((k-1)/8), 2^(k/8)) s
 *   (written out where it is computed, in float8: a function with a pinned search_path would
 *   cost a call per row on read-all, app_private.notification_read_histogram reads it);
 *   notification_deliveries.finished (key: 'channel status TYPE', the type looked up from the
 *   notification) in the bucket of finished_at.
 * - Changes after insert: read_at (mark one read, read-all, a conversation read) moves
 *   notifications.read and the histogram. app_private.notifications_facts_changed is a
 *   statement trigger with transition tables (the update triggers of app.notifications already
 *   have them): read-all of 50,000 rows appends a delta row per (metric, bucket, type, bin) it
 *   touched, not one per row. Deliveries change after their outcome only by hand: a row
 *   trigger whose WHEN skips every outcome the application records (a queued delivery gets
 *   finished_at = now(), above the mark).
 * - History: a deleted notification (the user's DELETE, the account's deletion) or a delivery
 *   pruned by retention (app_private.prune_notification_deliveries, retention.deliveryDays)
 *   leaves the figures as they were: no delete trigger. A recount counts the rows there are,
 *   so it forgets them (app_private.recount_analytics_facts says so).
 * - interval=hour: these metrics (only) also keep hour buckets (analytics_fact_select adds
 *   them for metrics named notifications.* and notification_deliveries.*): the endpoint offers
 *   hours over up to 1,000 points, and hours folded from days cannot be split again.
 * - The median time to read is interpolated in the histogram's bin (see
 *   app.notification_analytics): at most 1 s + 9.1 % (2^(1/8) - 1) of the exact median away.
 * - Whole buckets: the range's figures are those of the buckets from the one holding range_from
 *   to the one holding range_to, as every other analytics section (before: exactly [from, to)).
 */

alter table app_private.analytics_facts drop constraint analytics_facts_bucket_interval_check;
alter table app_private.analytics_facts add constraint analytics_facts_bucket_interval_check
  check (bucket_interval in ('hour', 'day', 'week', 'month', 'all'));
alter table app_private.analytics_fact_deltas drop constraint analytics_fact_deltas_bucket_interval_check;
alter table app_private.analytics_fact_deltas add constraint analytics_fact_deltas_bucket_interval_check
  check (bucket_interval in ('hour', 'day', 'week', 'month', 'all'));
alter table app_private.analytics_fold_marks drop constraint analytics_fold_marks_source_check;
alter table app_private.analytics_fold_marks add constraint analytics_fold_marks_source_check
  check (source in ('app.messages', 'app.orders', 'app.notifications', 'app_private.notification_deliveries'));
comment on table app_private.analytics_fold_marks is
  'For the tables whose inserts pay no fact trigger (app.messages, app.orders, app.notifications, app_private.notification_deliveries): the rows whose clock (created_at; finished_at for deliveries) is before folded_before are in app_private.analytics_facts (and their later changes in the deltas); those from it on are read live by the readers and folded by app_private.fold_analytics_facts (agora-compact-counters, every minute), which moves the mark. Server only.';
comment on table app_private.analytics_facts is
  'The admin analytics'' messaging, store, wallet and notifications figures: a count or sum per metric, UTC day, ISO week or month (the notifications'' metrics also per UTC hour; or a total now: interval all, bucket -infinity) and key (an order status, a vendor id, a token, a notification type), as of the last compaction; a figure adds the rows of app_private.analytics_fact_deltas and the folded tables'' rows above their marks. Kept by the fold and the triggers app_private.<table>_facts_changed on the tables the metrics count, so the page reads a row per bucket instead of counting them. Server only: read through the app.admin_*_stats functions and app.notification_analytics.';

drop function app_private.analytics_fact_definitions();
create function app_private.analytics_fact_definitions()
returns table (source text, folded boolean, watched text, facts text, clock text)
language sql
immutable
set search_path = ''
as $$
  -- facts: a VALUES list over the row `r` of (metric, at, key, value): `at` picks the day, week
  -- and month buckets (and hour for the notifications' metrics), '-infinity' means a total now,
  -- null means no fact. clock: a folded table's column the mark is on.
  values
    ('app.conversations', false, 'created_at', $f$
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) $f$, null),
    ('app.messages', true, 'created_at, deleted_at', $f$
      values ('messages.sent', r.created_at, '', 1::numeric),
             ('messages.live', case when r.deleted_at is null then '-infinity'::timestamptz end, '',
              1::numeric) $f$, 'created_at'),
    ('app.notifications', true, 'created_at, read_at, type, inbox', $f$
      values ('notifications.created', case when r.inbox then r.created_at end, r.type::text, 1::numeric),
             ('notifications.read', case when r.inbox and r.read_at is not null then r.created_at end,
              r.type::text, 1::numeric),
             ('notifications.read_seconds', case when r.inbox and r.read_at is not null then r.created_at end,
              -- The bin of seconds to read: 0 for [0, 1 s), k >= 1 for [2^((k-1)/8), 2^(k/8)) s.
              r.type::text || ' ' || case
                when extract(epoch from r.read_at - r.created_at)::double precision < 1 then 0
                else 1 + floor(8 * ln(extract(epoch from r.read_at - r.created_at)::double precision)
                               / ln(2::double precision))::integer end,
              1::numeric) $f$, 'created_at'),
    ('app.orders', true, 'created_at, paid_at, status, total, vendor_id', $f$
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) $f$, 'created_at'),
    ('app.wallets', false, 'created_at, exported_at', $f$
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) $f$, null),
    ('app.wallet_transactions', false,
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
              1::numeric) $f$, null),
    ('app_private.notification_deliveries', true, 'finished_at, status, channel, notification_id', $f$
      values ('notification_deliveries.finished', r.finished_at,
              r.channel::text || ' ' || r.status::text || ' '
                || (select n.type::text from app.notifications n where n.id = r.notification_id),
              1::numeric) $f$, 'finished_at')
$$;
comment on function app_private.analytics_fact_definitions() is
  'What each row of a counted table contributes to app_private.analytics_facts: the table, whether its inserts are folded by the job from a mark (folded) or appended as deltas by statement triggers, the columns whose change moves its facts (an update of other columns is skipped), its facts as SQL over the row r, and for a folded table its clock (the column the mark is on: created_at; finished_at for deliveries, counted by the time of their outcome). One definition serves the fold, the readers'' live tail, the recount and the generated triggers, so they cannot disagree (app.notifications'' statement trigger is written out for read-all''s sake and checked against a recount by the tests).';
revoke all on function app_private.analytics_fact_definitions() from public;

create or replace function app_private.analytics_fact_select(rows_sql text, facts text) returns text
language sql
immutable
set search_path = ''
as $$
  select format($q$
    select f.metric, i.name as bucket_interval,
           case when i.name = 'all' then '-infinity'::timestamptz else date_trunc(i.name, f.at, 'UTC') end as bucket,
           f.key, sum(r.sign * f.value) as value
    from (%s) r
    cross join lateral (%s) f(metric, at, key, value)
    join (values ('all'), ('hour'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
     and (i.name <> 'hour' or f.metric like 'notification%%')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 $q$,
    rows_sql, facts)
$$;
comment on function app_private.analytics_fact_select(text, text) is
  'Builds the query of the facts of some rows (rows_sql: the rows with a sign column, +1 or -1), summed per metric, bucket interval, bucket and key: for the triggers, the fold, the recount and the readers'' live tail. Hour buckets for the notifications'' metrics only (notifications.*, notification_deliveries.*: GET /api/notifications/analytics offers interval=hour; the admin page does not).';

-- The live tails of the two new folded tables: declared here, written from the definitions below.
create function app_private.notifications_facts_tail(metric text, bucket_interval text)
returns table (bucket timestamptz, key text, value numeric)
language plpgsql as $$ begin end; $$;
create function app_private.notification_deliveries_facts_tail(metric text, bucket_interval text)
returns table (bucket timestamptz, key text, value numeric)
language plpgsql as $$ begin end; $$;
create function app_private.notification_deliveries_facts_changed() returns trigger
language plpgsql as $$ begin return null; end; $$;

do $$
declare
  def record;
  t text;
begin
  for def in select * from app_private.analytics_fact_definitions() d
             where d.source in ('app.notifications', 'app_private.notification_deliveries') loop
    t := split_part(def.source, '.', 2);
    execute format($f$
      create or replace function app_private.%1$s_facts_tail(metric text, bucket_interval text)
      returns table (bucket timestamptz, key text, value numeric)
      language plpgsql
      stable
      set search_path = ''
      set max_parallel_workers_per_gather = 0
      as $body$
      begin
        -- The metric and interval filter the facts before they are summed. No parallel workers:
        -- the planner cannot know the tail is a minute of rows (its estimate, a range of the
        -- BRIN index, is 200,000 at the growth bench's x10) and launched two for each of the
        -- reader's four tails (15-20 ms each, for no row).
        return query
          select x.bucket, x.key, x.value
          from (%3$s) x
          where x.metric = %1$s_facts_tail.metric
            and x.bucket_interval = %1$s_facts_tail.bucket_interval;
      end;
      $body$ $f$, t, def.source,
      -- The upper bound 'infinity' makes the mark's unknown value a range to the planner (as
      -- the orders' tail): a range read of the clock's index in the plan PL/pgSQL keeps.
      app_private.analytics_fact_select(format(
        'select 1 as sign, r.* from %1$s r
         where r.%3$I >= (select m.folded_before from app_private.analytics_fold_marks m
                          where m.source = %2$L)
           and r.%3$I <= ''infinity''::timestamptz', def.source, def.source, def.clock), def.facts));
    execute format($f$
      comment on function app_private.%1$s_facts_tail(text, text) is
        'A metric''s facts in one bucket interval of the rows of %2$s whose %3$s is from the fold''s mark on, not yet in app_private.analytics_facts (at most a minute and a margin of rows): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. Written by migration 20261204000000 from app_private.analytics_fact_definitions().' $f$,
      t, def.source, def.clock);
    execute format('revoke all on function app_private.%s_facts_tail(text, text) from public', t);
  end loop;

  -- Deliveries: a change after the outcome (by hand only) moves its facts, as the generic
  -- folded trigger of 20261202000200 does.
  select * into def from app_private.analytics_fact_definitions() d
  where d.source = 'app_private.notification_deliveries';
  execute format($f$
    create or replace function app_private.notification_deliveries_facts_changed() returns trigger
    language plpgsql
    security definer
    set search_path = ''
    as $body$
    declare
      mark timestamptz := app_private.analytics_fold_mark('app_private.notification_deliveries');
    begin
      %1$s;
      return null;
    end;
    $body$ $f$,
    app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
      'select -1 as sign, old.* where old.finished_at < mark
       union all
       select 1 as sign, new.* where new.finished_at < mark', def.facts));
end;
$$;
comment on function app_private.notification_deliveries_facts_changed() is
  'After an update of a delivery that was finished already, or that sets a finished_at in the past (by hand: the application''s outcomes set now(), above the fold''s mark, and run nothing), per row: for an outcome before the mark (already in the rollups), appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas. Inserts (folded) and deletes (retention: the figures are history) run nothing. Written by migration 20261204000000 from app_private.analytics_fact_definitions(). security definer: the rollups are server-only.';
revoke all on function app_private.notification_deliveries_facts_changed() from public;

create trigger notification_deliveries_facts_updated after update on app_private.notification_deliveries
  for each row
  when ((old.finished_at is not null or new.finished_at < now())
        and (old.finished_at, old.status, old.channel, old.notification_id)
            is distinct from (new.finished_at, new.status, new.channel, new.notification_id))
  execute function app_private.notification_deliveries_facts_changed();

create function app_private.notifications_facts_changed() returns trigger
language plpgsql
security definer
set search_path = ''
set jit = off
set timezone = 'UTC'
as $$
declare
  mark timestamptz := app_private.analytics_fold_mark('app.notifications');
begin
  -- The facts of app_private.analytics_fact_definitions() for app.notifications, written out:
  -- the updated rows below the mark are grouped by (hour, type, bin) before they are spread over
  -- the metrics and intervals, so read-all of 50,000 rows appends a row per bucket it touched.
  -- jit off: the transition tables' row estimates make the planner compile the statement
  -- (0.6 s of JIT for a 0.2 s read-all). The buckets are UTC's (the function's time zone).
  insert into app_private.analytics_fact_deltas (metric, bucket_interval, bucket, key, delta)
  -- Every row's facts leave (-1) and arrive (+1); a row whose watched columns did not change
  -- cancels out in the sums (no join of the two transition tables: without statistics on them
  -- the planner sorted both on disk).
  with changed as (
    select -1 as sign, o.type, o.created_at, o.read_at from old_rows o
    where o.created_at < mark and o.inbox
    union all
    select 1, n.type, n.created_at, n.read_at from new_rows n
    where n.created_at < mark and n.inbox
  ), grouped as (
    select date_trunc('hour', c.created_at) as hour, c.type::text as type,
           -- The bin of seconds to read, as in the definitions (null: unread).
           case when c.read_at is null then null
                when extract(epoch from c.read_at - c.created_at)::double precision < 1 then 0
                else 1 + floor(8 * ln(extract(epoch from c.read_at - c.created_at)::double precision)
                               / ln(2::double precision))::integer end as bin,
           sum(c.sign) as n
    from changed c
    group by 1, 2, 3
    having sum(c.sign) <> 0
  ), facts as (
    select 'notifications.created' as metric, g.hour, g.type as key, g.n from grouped g
    union all
    select 'notifications.read', g.hour, g.type, g.n from grouped g where g.bin is not null
    union all
    select 'notifications.read_seconds', g.hour, g.type || ' ' || g.bin, g.n from grouped g where g.bin is not null
  )
  -- No order: the deltas are appended (no row another writer could hold).
  select f.metric, i.name, date_trunc(i.name, f.hour), f.key, sum(f.n)
  from facts f cross join (values ('hour'), ('day'), ('week'), ('month')) i(name)
  group by 1, 2, 3, 4
  having sum(f.n) <> 0;
  return null;
end;
$$;
comment on function app_private.notifications_facts_changed() is
  'After update on app.notifications, per statement (transition tables): for the rows created before the fold''s mark (already in the rollups) whose read_at, created_at, type or inbox changed, appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas, grouped first: marking read moves notifications.read and the seconds-to-read histogram of the notification''s creation bucket, and read-all appends a row per (metric, bucket, type, bin), not one per notification. Rows from the mark on are read live and folded as they are then. Inserts run nothing (folded); deletes nothing (the figures are history). The facts of app_private.analytics_fact_definitions(), written out (tests/notifications/sql/208 checks them against a recount). security definer: users mark read and may not write the rollups.';
revoke all on function app_private.notifications_facts_changed() from public;

create trigger notifications_facts_updated after update on app.notifications
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.notifications_facts_changed();
create trigger notifications_facts_truncated after truncate on app.notifications
  for each statement execute function app_private.analytics_facts_truncated();
create trigger notification_deliveries_facts_truncated after truncate on app_private.notification_deliveries
  for each statement execute function app_private.analytics_facts_truncated();

create or replace function app_private.analytics_fact_tail(metric text, bucket_interval text)
returns table (bucket timestamptz, key text, value numeric)
language plpgsql
stable
set search_path = ''
as $$
begin
  if metric = 'messages.senders' then
    if bucket_interval <> 'all' then
      return query select * from app_private.message_senders_tail(bucket_interval);
    end if;
  elsif metric like 'messages.%' then
    return query select * from app_private.messages_facts_tail(metric, bucket_interval);
  elsif metric like 'orders.%' then
    return query select * from app_private.orders_facts_tail(metric, bucket_interval);
  elsif metric like 'notifications.%' then
    return query select * from app_private.notifications_facts_tail(metric, bucket_interval);
  elsif metric like 'notification_deliveries.%' then
    return query select * from app_private.notification_deliveries_facts_tail(metric, bucket_interval);
  end if;
end;
$$;
comment on function app_private.analytics_fact_tail(text, text) is
  'A metric''s facts in one bucket interval of the rows not yet folded (a folded table''s rows from its mark on: messages, orders, notifications, deliveries); none for the tables kept by deltas. The readers add them in the same statement as the rollup rows and deltas.';

create or replace function app_private.fold_analytics_facts(margin interval default interval '5 seconds',
                                                         batch integer default 100000)
returns integer
language plpgsql
volatile
set search_path = ''
as $$
declare
  horizon timestamptz;
  src record;
  upto timestamptz;
  nth timestamptz;
  rows_sql text;
  n integer;
  folded integer := 0;
  attempt integer;
begin
  -- No change to a folded row commits while the marks move: one that began before is waited
  -- for (it is committed before the rows are read below), one that begins after waits for the
  -- commit and sees the new mark (app_private.analytics_fold_mark). Tried rather than queued
  -- for: a fold waiting in the lock's queue would hold up every change behind it, and a
  -- transaction that changes two messages could wait for one of those (a deadlock). Given up
  -- after about 5 s (the next run folds more; the figures stay exact meanwhile).
  for attempt in 1..50 loop
    exit when pg_try_advisory_xact_lock(hashtext('app_private.analytics_fold_marks'));
    if attempt = 50 then
      raise warning 'analytics fold skipped: changes to folded tables held its lock for 5 s';
      return 0;
    end if;
    perform pg_sleep(0.1);
  end loop;
  -- Read before the statements below take their snapshots: a transaction in progress now
  -- began at or after the horizon, so every row below it is committed and visible to them.
  begin
    horizon := app_private.analytics_fold_horizon(margin);
  exception when insufficient_privilege then
    -- Skipped, not failed: the rest of agora-compact-counters goes on, and every figure stays
    -- exact (the readers add the rows above the marks); only the live tail grows until the grant.
    raise warning 'analytics fold skipped: %', sqlerrm;
    return 0;
  end;
  for src in
    select k.source, k.folded_before, d.facts, d.clock
    from app_private.analytics_fold_marks k
    join app_private.analytics_fact_definitions() d on d.source = k.source
    order by k.source
  loop
    continue when horizon is null or horizon <= src.folded_before;
    -- At most about `batch` rows a run (a fold far behind catches up run by run): up to the
    -- clock of the batch-th row, every row of that instant included. The clock is the
    -- writing transaction's start (created_at; a delivery's finished_at).
    execute format('select t.%1$I from %2$s t where t.%1$I >= $1 and t.%1$I < $2
                    order by t.%1$I offset $3 limit 1', src.clock, src.source)
      into nth using src.folded_before, horizon, greatest(batch, 1) - 1;
    upto := case when nth is null then horizon else least(horizon, nth + interval '1 microsecond') end;
    update app_private.analytics_fold_marks k set folded_before = upto where k.source = src.source;
    rows_sql := format('select 1 as sign, t.* from %s t where t.%I >= %L and t.%I < %L',
                       src.source, src.clock, src.folded_before, src.clock, upto);
    execute app_private.analytics_fact_sql('app_private.analytics_facts', rows_sql, src.facts);
    execute format('select count(*)::integer from %2$s t where t.%1$I >= $1 and t.%1$I < $2',
                   src.clock, src.source)
      into n using src.folded_before, upto;
    folded := folded + n;
    if src.source = 'app.messages' then
      -- Active senders: members inserted by the batch, once per bucket (key order: no deadlock
      -- with another writer of members), the new ones counted.
      with senders as (
        select distinct i.name as bucket_interval, date_trunc(i.name, m.created_at, 'UTC') as bucket,
               m.sender_id as user_id
        from app.messages m
        cross join (values ('day'), ('week'), ('month')) i(name)
        where m.created_at >= src.folded_before and m.created_at < upto and m.sender_id is not null
      ), added as (
        insert into app_private.analytics_fact_members (metric, bucket_interval, bucket, user_id)
        select 'messages.senders', s.bucket_interval, s.bucket, s.user_id from senders s order by 2, 3, 4
        on conflict do nothing
        returning bucket_interval, bucket
      )
      insert into app_private.analytics_facts as c (metric, bucket_interval, bucket, value)
      select 'messages.senders', a.bucket_interval, a.bucket, count(*) from added a
      group by 2, 3
      order by 2, 3
      on conflict (metric, bucket_interval, bucket, key) do update set value = c.value + excluded.value;
    end if;
  end loop;
  return folded;
end;
$$;
comment on function app_private.fold_analytics_facts(interval, integer) is
  'Run by app_private.compact_counters (agora-compact-counters, every minute): for each folded table (app.messages, app.orders, app.notifications, app_private.notification_deliveries), adds the facts of its rows whose clock (created_at; finished_at for deliveries) is from its mark up to the horizon (app_private.analytics_fold_horizon: now() - margin, or the start of the oldest transaction in progress if earlier; at most about batch rows a run) to app_private.analytics_facts and the batch''s senders to the members, and moves the mark, in one transaction: a reader (rollups plus the rows from the mark on, one statement) sees the same figure before and after. margin 5 seconds: see the migration 20261202000200''s header. Returns how many rows it folded.';

create or replace function app_private.recount_analytics_facts() returns void
language plpgsql
set search_path = ''
as $$
declare
  def record;
  horizon timestamptz;
begin
  -- Writers wait while the facts are rebuilt, so none of their deltas is lost. The tables first,
  -- then the marks' lock, in the order a writer's change takes them.
  for def in select * from app_private.analytics_fact_definitions() d order by d.source loop
    execute format('lock table %s in share row exclusive mode', def.source);
  end loop;
  perform pg_advisory_xact_lock(hashtext('app_private.analytics_fold_marks'));
  lock table app_private.analytics_facts in exclusive mode;
  lock table app_private.analytics_fact_deltas in exclusive mode;
  lock table app_private.analytics_fact_members in exclusive mode;
  lock table app_private.analytics_fold_marks in exclusive mode;
  -- The folded tables are counted up to a horizon (a transaction begun earlier may still insert
  -- below now()); their rows from it on are the readers' live tail until the next fold.
  horizon := app_private.analytics_fold_horizon(interval '0');
  delete from app_private.analytics_fact_deltas;
  delete from app_private.analytics_facts;
  delete from app_private.analytics_fact_members;
  insert into app_private.analytics_fold_marks as k (source, folded_before)
  select d.source, horizon from app_private.analytics_fact_definitions() d where d.folded
  on conflict (source) do update set folded_before = excluded.folded_before;
  for def in select * from app_private.analytics_fact_definitions() d order by d.source loop
    execute app_private.analytics_fact_sql('app_private.analytics_facts',
      format('select 1 as sign, t.* from %s t', def.source)
        || case when def.folded then format(' where t.%I < %L', def.clock, horizon) else '' end,
      def.facts);
  end loop;
  insert into app_private.analytics_fact_members (metric, bucket_interval, bucket, user_id)
  select distinct 'messages.senders', i.name, date_trunc(i.name, m.created_at, 'UTC'), m.sender_id
  from app.messages m cross join (values ('day'), ('week'), ('month')) i(name)
  where m.sender_id is not null and m.created_at < horizon;
  insert into app_private.analytics_facts (metric, bucket_interval, bucket, value)
  select m.metric, m.bucket_interval, m.bucket, count(*)
  from app_private.analytics_fact_members m group by 1, 2, 3;
  perform app_private.prune_activity_members();
end;
$$;
comment on function app_private.recount_analytics_facts() is
  'Rebuilds app_private.analytics_facts from the counted tables (full scans; their writers wait meanwhile) and sets the marks of the folded tables to the horizon (app_private.analytics_fold_horizon): after rows were written with triggers off (a bulk load with session_replication_role = replica) or with a clock below the mark (a backfill), or should an operator doubt the figures. It counts the rows there are: active senders of removed messages, deleted notifications and the deliveries retention pruned (older than retention.deliveryDays), which the rollups keep as history, are counted no more.';

create function app_private.analytics_tiles(bucket text, lo timestamptz, hi timestamptz)
returns table (bucket_interval text, first_bucket timestamptz, last_bucket timestamptz)
language plpgsql
stable
set search_path = ''
set timezone = 'UTC'
as $$
declare
  coarser text := case bucket when 'hour' then 'day' when 'day' then 'month' end;
  step interval := ('1 ' || bucket)::interval;
  c0 timestamptz;
  c1 timestamptz;
begin
  if lo >= hi then
    return;
  end if;
  if coarser is not null then
    c0 := date_trunc(coarser, lo, 'UTC');
    if c0 < lo then
      c0 := c0 + ('1 ' || coarser)::interval;
    end if;
    c1 := date_trunc(coarser, hi, 'UTC');
    if c0 < c1 then
      if lo < c0 then
        return query select bucket, lo, c0 - step;
      end if;
      return query select * from app_private.analytics_tiles(coarser, c0, c1);
      if c1 < hi then
        return query select bucket, c1, hi - step;
      end if;
      return;
    end if;
  end if;
  return query select bucket, lo, hi - step;
end;
$$;
comment on function app_private.analytics_tiles(text, timestamptz, timestamptz) is
  'The buckets [lo, hi) of an interval (both bounds on its buckets'' starts) as the fewest whole buckets: hours up to the first whole day, days, hours after the last (and days around whole months likewise), each tile as (interval, its first bucket, its last bucket). A figure summed over a range (the median''s histogram) reads 24 times fewer rows per day this way; weeks are not tiled (they do not make months).';
revoke all on function app_private.analytics_tiles(text, timestamptz, timestamptz) from public;

create function app_private.notification_read_histogram(bucket text, range_from timestamptz,
                                                        range_to timestamptz,
                                                        only_type app.notification_type)
returns table (bin integer, n numeric)
language plpgsql
stable
set search_path = ''
set timezone = 'UTC'
as $$
begin
  return query
    select split_part(s.key, ' ', 2)::integer, sum(s.value)
    from app_private.analytics_tiles(bucket, date_trunc(bucket, range_from, 'UTC'),
                                     date_trunc(bucket, range_to, 'UTC') + ('1 ' || bucket)::interval) t
    cross join lateral app_private.fact_series('notifications.read_seconds', t.bucket_interval,
                                                t.first_bucket, t.last_bucket) s
    where only_type is null or split_part(s.key, ' ', 1) = only_type::text
    group by 1
    having sum(s.value) > 0;
end;
$$;
comment on function app_private.notification_read_histogram(text, timestamptz, timestamptz, app.notification_type) is
  'The seconds-to-read histogram (notifications.read_seconds: bin 0 = [0, 1 s), bin k >= 1 = [2^((k-1)/8), 2^(k/8)) s) of the inbox notifications created in the whole buckets from the one holding range_from to the one holding range_to, of one type or all: count per bin, from the rollups and the live tail, read in the fewest buckets (app_private.analytics_tiles). For app.notification_analytics''s median.';
revoke all on function app_private.notification_read_histogram(text, timestamptz, timestamptz, app.notification_type) from public;

create or replace function app.notification_analytics(range_from timestamptz, range_to timestamptz,
                                                       bucket text default 'day',
                                                       only_type app.notification_type default null)
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
  if bucket not in ('hour', 'day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  if range_from >= range_to then
    raise exception 'from must be before to' using errcode = 'AG400';
  end if;
  with figures as (
    -- One row per bucket, type and figure kind, from the rollups (whole buckets).
    select s.t, s.key as type, s.value as created, 0::numeric as read, 0::numeric as push_sent,
           0::numeric as push_failed, 0::numeric as email_sent, 0::numeric as email_failed
    from app_private.fact_series('notifications.created', bucket, range_from, range_to) s
    where only_type is null or s.key = only_type::text
    union all
    select s.t, s.key, 0, s.value, 0, 0, 0, 0
    from app_private.fact_series('notifications.read', bucket, range_from, range_to) s
    where only_type is null or s.key = only_type::text
    union all
    -- Deliveries: key 'channel status TYPE'.
    select s.t, split_part(s.key, ' ', 3), 0, 0,
           case when s.key like 'push sent %' then s.value else 0 end,
           case when s.key like 'push failed %' or s.key like 'push pruned %' then s.value else 0 end,
           case when s.key like 'email sent %' then s.value else 0 end,
           case when s.key like 'email failed %' then s.value else 0 end
    from app_private.fact_series('notification_deliveries.finished', bucket, range_from, range_to) s
    where only_type is null or split_part(s.key, ' ', 3) = only_type::text
  ), by_type as (
    select f.type, sum(f.created) as created, sum(f.read) as read, sum(f.push_sent) as push_sent,
           sum(f.push_failed) as push_failed, sum(f.email_sent) as email_sent,
           sum(f.email_failed) as email_failed
    from figures f group by 1
  ), by_t as (
    select f.t, sum(f.created) as created, sum(f.read) as read, sum(f.push_sent) as push_sent,
           sum(f.push_failed) as push_failed
    from figures f group by 1
  ), hist as (
    select h.bin, h.n as c from app_private.notification_read_histogram(bucket, range_from, range_to, only_type) h
  ), cum as (
    select h.bin, h.c, sum(h.c) over (order by h.bin) - h.c as before,
           case when h.bin = 0 then 0 else power(2::numeric, (h.bin - 1) / 8.0) end as lo,
           case when h.bin = 0 then 1 else power(2::numeric, h.bin / 8.0) end as hi
    from hist h
  ), median as (
    -- The middle value (the mean of the two middle ones for an even count), each value
    -- estimated by spreading its bin's values evenly over the bin: every estimate lies in the
    -- bin of the value it stands for, hence the bound in this function's comment.
    select avg(c.lo + (c.hi - c.lo) * (r.k - c.before - 0.5) / c.c) as seconds
    from (select sum(h.c) as n from hist h) t
    cross join lateral (values (floor((t.n + 1) / 2)), (ceil((t.n + 1) / 2))) r(k)
    join cum c on r.k > c.before and r.k <= c.before + c.c
  ), totals as (
    select coalesce(sum(b.created), 0)::bigint as created, coalesce(sum(b.read), 0)::bigint as read,
           coalesce(sum(b.push_sent), 0)::bigint as push_sent,
           coalesce(sum(b.push_failed), 0)::bigint as push_failed,
           coalesce(sum(b.email_sent), 0)::bigint as email_sent,
           coalesce(sum(b.email_failed), 0)::bigint as email_failed,
           (select m.seconds from median m) as median_read
    from by_type b
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'created', t.created, 'read', t.read, 'pushSent', t.push_sent, 'pushDelivered', t.push_sent,
      'pushFailed', t.push_failed, 'emailSent', t.email_sent),
    'byType', (
      select jsonb_agg(jsonb_build_object(
        'type', k.k,
        'created', coalesce(b.created, 0)::bigint, 'read', coalesce(b.read, 0)::bigint,
        'pushSent', coalesce(b.push_sent, 0)::bigint, 'pushFailed', coalesce(b.push_failed, 0)::bigint
      ) order by k.k)
      from unnest(enum_range(null::app.notification_type)) k
      left join by_type b on b.type = k.k::text
      where only_type is null or k.k = only_type
    ),
    'byChannel', jsonb_build_array(
      jsonb_build_object('channel', 'inApp', 'sent', t.created, 'failed', 0),
      jsonb_build_object('channel', 'push', 'sent', t.push_sent, 'failed', t.push_failed),
      jsonb_build_object('channel', 'email', 'sent', t.email_sent, 'failed', t.email_failed)
    ),
    'series', (
      select jsonb_agg(jsonb_build_object(
        't', to_char(b.t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'created', coalesce(s.created, 0)::bigint, 'read', coalesce(s.read, 0)::bigint,
        'pushSent', coalesce(s.push_sent, 0)::bigint, 'pushFailed', coalesce(s.push_failed, 0)::bigint
      ) order by b.t)
      from generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) b(t)
      left join by_t s on s.t = b.t
    ),
    'readRate', case when t.created = 0 then 0 else round(t.read::numeric / t.created, 4) end,
    'medianSecondsToRead', case when t.median_read is null then null else round(t.median_read, 3) end
  ) into result
  from totals t;
  return result;
end;
$$;
comment on function app.notification_analytics(timestamptz, timestamptz, text, app.notification_type) is
  'GET /api/notifications/analytics and the notifications section of /api/admin/analytics, from the rollups (app_private.analytics_facts, its deltas and the notifications and deliveries not yet folded: a row per bucket, type and key whatever the number of notifications; figures include what happened seconds ago). Whole buckets: the figures are those of the UTC hours, days, ISO weeks or months from the one holding range_from to the one holding range_to. created and read count inbox notifications created in those buckets (read: those of them read since, so readRate = read / created and the median time to read is theirs); push and e-mail count deliveries by the time of their outcome (pushFailed includes pruned tokens; pushDelivered equals pushSent: FCM''s HTTP v1 API reports acceptance, not receipt). Analytics are history: a notification deleted later, or a delivery pruned by retention, stays counted. medianSecondsToRead is interpolated in a histogram of seconds to read (bin 0 = [0, 1 s), bin k = [2^((k-1)/8), 2^(k/8)) s): at most 1 s + 9.1 % of the exact median away (each middle value''s estimate lies in the same bin as the value). byType, byChannel (inApp, push, email) and a zero-filled series. ADMIN only (42501). security definer: ADMINs cannot read other users'' notifications or any delivery row, nor the rollups; it returns counts only.';

-- The facts of the notifications and deliveries already there, up to the horizon (the rows from
-- it on are the live tail until the first fold); the other sources' facts are left as they are
-- (a full recount would also lock the writers of messages and orders meanwhile).
do $$
declare
  def record;
  horizon timestamptz;
begin
  lock table app.notifications in share row exclusive mode;
  lock table app_private.notification_deliveries in share row exclusive mode;
  perform pg_advisory_xact_lock(hashtext('app_private.analytics_fold_marks'));
  horizon := app_private.analytics_fold_horizon(interval '0');
  for def in select * from app_private.analytics_fact_definitions() d
             where d.source in ('app.notifications', 'app_private.notification_deliveries')
             order by d.source loop
    insert into app_private.analytics_fold_marks (source, folded_before) values (def.source, horizon);
    execute app_private.analytics_fact_sql('app_private.analytics_facts',
      format('select 1 as sign, t.* from %s t where t.%I < %L', def.source, def.clock, horizon),
      def.facts);
  end loop;
end;
$$;

revoke execute on all functions in schema app, app_private from public;
grant execute on function app.notification_analytics(timestamptz, timestamptz, text, app.notification_type) to authenticated;
