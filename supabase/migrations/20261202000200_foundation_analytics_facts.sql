-- Replaces functions of other domains:
--   app.admin_messaging_stats (messages), app.admin_wallet_stats (wallet): the same answers, from
--   the rollups this migration adds.
/*
 * The rest of the admin analytics page from rollups (issue 30): the users' figures came from
 * rollups (20261130050400), but the messaging, store and wallet sections still counted
 * app.messages, app.conversations, app.orders, app.wallets and app.wallet_transactions on every
 * request (seconds at a year of data).
 *
 * - app_private.analytics_facts: one row per (metric, interval, bucket, key): a count or a sum
 *   per UTC day, ISO week and month (`day`, `week`, `month`), or a total now (`all`, bucket
 *   -infinity). A metric belongs to one table (its name starts with the table's); the key splits
 *   it (an order status, a vendor, a token) or is ''. What a row of each table contributes is
 *   written once, in app_private.analytics_fact_definitions().
 * - Messages and orders (sends and checkouts, the hot writes) pay nothing at insert: the
 *   every-minute job (agora-compact-counters, app_private.fold_analytics_facts) folds the rows
 *   created since a mark (app_private.analytics_fold_marks, one per table) in one set-based
 *   batch, and a reader adds the rows from the mark on live (a range read of
 *   messages_created_at_id_idx or orders_created_idx: at most a minute and a margin of rows),
 *   in the same statement, so a figure is exact at any moment. Active senders: the batch inserts
 *   its senders as members of their buckets (on conflict do nothing); the reader adds the tail's
 *   senders that are no member yet.
 *   The mark moves to min(now() - 5 seconds, the start of the oldest transaction in progress
 *   in this database) (app_private.analytics_fold_horizon), and at most about 100,000 rows a
 *   run: created_at is the writing transaction's start (now()), so every row below the mark
 *   was committed before the batch read it, however late its transaction commits. A margin
 *   alone (sends and checkouts are one short statement each, so a few seconds nearly always
 *   suffice) would still lose the row of a transaction stalled past it (a lock wait, a pause of
 *   the host); the horizon loses none. The 5 seconds are not what makes it exact: they cover the
 *   instant between a transaction taking its start time and publishing it in pg_stat_activity
 *   (microseconds), a clock stepped back by a little, and keep the batch off the rows still
 *   arriving, while keeping the readers' tail short (5 s plus at most the minute between runs).
 *   A transaction open for long holds the mark back (the tail grows, the figures stay exact). A
 *   row inserted later with an explicit created_at below the mark (a backfill) is not counted
 *   until a recount; an update of created_at is (it is a watched column).
 *   Changes that move a fact after insert (a message's tombstone or hard delete; an order's
 *   status, paid_at, total or vendor, or its delete) are rare: a row-level trigger (update,
 *   WHEN a watched column changed) or a statement trigger (delete) appends the difference to
 *   app_private.analytics_fact_deltas for rows below the mark only (a row above it is read or
 *   folded as it is then). Those triggers hold an advisory lock shared until their commit
 *   (app_private.analytics_fold_mark); the batch takes it exclusive before it reads the horizon
 *   and moves the marks, so a change is either committed before the batch reads the rows or
 *   sees the new mark. The batch tries the lock (for about 5 s, else it skips the run) rather
 *   than queueing for it: queued, it would hold up the changes behind it, and a transaction
 *   changing two rows could wait for one of those (a deadlock).
 * - Conversations, wallets and wallet transactions are inserted at low rates (a conversation
 *   per many messages, a wallet per user, a transfer per payment), so they keep what needs no
 *   mark, index or tail read on every page: statement-level triggers
 *   with transition tables (app_private.<table>_facts_changed, written by this migration from
 *   the definitions) append what each insert or delete added (+1) or removed (-1) to
 *   app_private.analytics_fact_deltas. Updates run a row-level
 *   trigger only when a watched column changed (old facts leave, new ones arrive): every send
 *   updates its conversation (last_seq), which runs nothing. Inserts only: writers never wait
 *   for a counter row. The job folds the deltas in; a figure is its rows plus its deltas.
 * - Active senders (distinct users who sent a message in a bucket) use
 *   app_private.analytics_fact_members as the active users use app_private.activity_members: a
 *   sender counts once per bucket, and stays counted if the message is later removed.
 * - app.admin_messaging_stats and app.admin_wallet_stats keep their answers and read the
 *   rollups; app.admin_store_stats is new (the store section was SQL in the API).
 * - app_private.recount_analytics_facts(): rebuilds every fact from the tables (operators, and
 *   seeds that write with triggers off or with past created_at).
 *
 * Measured (docs/benchmarks.md, s6-admin): a message insert 0.71 ms against 0.75 on main and
 * 1.34 with statement triggers on every insert; sends by pgbench 383 tps against 404 and 328.
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

create table app_private.analytics_fold_marks (
  source text primary key check (source in ('app.messages', 'app.orders')),
  folded_before timestamptz not null
);
comment on table app_private.analytics_fold_marks is
  'For the tables whose inserts pay no fact trigger (app.messages, app.orders): the rows created before folded_before are in app_private.analytics_facts (and their later changes in the deltas); those from it on are read live by the readers and folded by app_private.fold_analytics_facts (agora-compact-counters, every minute), which moves the mark. Server only.';
alter table app_private.analytics_fold_marks enable row level security;

-- The fold's and the readers' range read of the newest messages (orders have orders_created_idx).
-- The same index, name and definition as the messages search's (20261202000000 on its branch).
create index if not exists messages_created_at_id_idx on app.messages (created_at, id);

create function app_private.analytics_fact_definitions()
returns table (source text, folded boolean, watched text, facts text)
language sql
immutable
set search_path = ''
as $$
  -- facts: a VALUES list over the row `r` of (metric, at, key, value): `at` picks the day, week
  -- and month buckets, '-infinity' means a total now, null means no fact.
  values
    ('app.conversations', false, 'created_at', $f$
      values ('conversations.created', r.created_at, '', 1::numeric),
             ('conversations.all', '-infinity'::timestamptz, '', 1::numeric) $f$),
    ('app.messages', true, 'created_at, deleted_at', $f$
      values ('messages.sent', r.created_at, '', 1::numeric),
             ('messages.live', case when r.deleted_at is null then '-infinity'::timestamptz end, '',
              1::numeric) $f$),
    ('app.orders', true, 'created_at, paid_at, status, total, vendor_id', $f$
      values ('orders.created', r.created_at, '', 1::numeric),
             ('orders.status', '-infinity'::timestamptz, r.status::text, 1::numeric),
             ('orders.sales', r.paid_at, '', r.total::numeric),
             ('orders.paid', r.paid_at, '', 1::numeric),
             ('orders.vendor_sales', r.paid_at, r.vendor_id::text, r.total::numeric),
             ('orders.vendor_paid', r.paid_at, r.vendor_id::text, 1::numeric) $f$),
    ('app.wallets', false, 'created_at, exported_at', $f$
      values ('wallets.created', r.created_at, '', 1::numeric),
             ('wallets.all', '-infinity'::timestamptz, '', 1::numeric),
             ('wallets.exported', case when r.exported_at is not null then '-infinity'::timestamptz end,
              '', 1::numeric) $f$),
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
              1::numeric) $f$)
$$;
comment on function app_private.analytics_fact_definitions() is
  'What each row of a counted table contributes to app_private.analytics_facts: the table, whether its inserts are folded by the job from a mark (folded) or appended as deltas by statement triggers, the columns whose change moves its facts (an update of other columns is skipped), and its facts as SQL over the row r. One definition serves the triggers, the fold, the readers'' live tail and the recount, so they cannot disagree.';
revoke all on function app_private.analytics_fact_definitions() from public;

create function app_private.analytics_fact_select(rows_sql text, facts text) returns text
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
    join (values ('all'), ('day'), ('week'), ('month')) i(name)
      on (f.at = '-infinity'::timestamptz) = (i.name = 'all')
    where f.at is not null
    group by 1, 2, 3, 4
    having sum(r.sign * f.value) <> 0 $q$,
    rows_sql, facts)
$$;
comment on function app_private.analytics_fact_select(text, text) is
  'Builds the query of the facts of some rows (rows_sql: the rows with a sign column, +1 or -1), summed per metric, bucket interval, bucket and key: for the triggers, the fold, the recount and the readers'' live tail.';
revoke all on function app_private.analytics_fact_select(text, text) from public;

create function app_private.analytics_fact_sql(target text, rows_sql text, facts text) returns text
language sql
immutable
set search_path = ''
as $$
  select format($q$
    insert into %s as c (metric, bucket_interval, bucket, key, %s)
    select x.* from (%s) x
    order by 1, 2, 3, 4 %s $q$,
    target, case when target = 'app_private.analytics_facts' then 'value' else 'delta' end,
    app_private.analytics_fact_select(rows_sql, facts),
    case when target = 'app_private.analytics_facts'
      then 'on conflict (metric, bucket_interval, bucket, key) do update set value = c.value + excluded.value'
      else '' end)
$$;
comment on function app_private.analytics_fact_sql(text, text, text) is
  'Builds the statement that adds the facts of some rows (rows_sql: the rows with a sign column, +1 or -1) to app_private.analytics_fact_deltas or, for the fold and the recount, app_private.analytics_facts (added to the rows there), in key order.';
revoke all on function app_private.analytics_fact_sql(text, text, text) from public;

create function app_private.analytics_fold_horizon(margin interval) returns timestamptz
language plpgsql
volatile
security definer
set search_path = ''
as $$
declare
  horizon timestamptz;
begin
  -- Another role's sessions show no xact_start unless the reader may read all statistics: a
  -- horizon that missed one would fold past a transaction still to commit.
  if not pg_has_role('pg_read_all_stats', 'usage') then
    raise exception 'the fold''s horizon needs pg_read_all_stats (grant pg_read_all_stats to %)', current_user
      using errcode = '42501';
  end if;
  select least(now() - margin, min(a.xact_start)) into horizon
  from pg_catalog.pg_stat_activity a
  where a.datname = current_database() and a.pid <> pg_backend_pid() and a.xact_start is not null
    and a.backend_type in ('client backend', 'background worker');
  return horizon;
end;
$$;
comment on function app_private.analytics_fold_horizon(interval) is
  'Where app_private.fold_analytics_facts may move a mark: min(now() - margin, the start of the oldest transaction in progress in this database, other than this one). created_at defaults to the writing transaction''s start, so every row created before it is committed and visible to a statement that begins afterwards. Call it before the statements that read the rows (pg_stat_activity is read once per transaction). security definer: it must see every session''s transaction start (pg_read_all_stats).';
revoke all on function app_private.analytics_fold_horizon(interval) from public;

create function app_private.analytics_fold_mark(source text) returns timestamptz
language plpgsql
volatile
set search_path = ''
as $$
declare
  mark timestamptz;
begin
  -- Shared with every other change; exclusive for the fold while it moves the marks.
  perform pg_advisory_xact_lock_shared(hashtext('app_private.analytics_fold_marks'));
  if current_setting('transaction_isolation') = 'read committed' then
    -- A new snapshot, taken after the lock: the mark as the last fold committed it.
    select m.folded_before into mark from app_private.analytics_fold_marks m
    where m.source = analytics_fold_mark.source;
  else
    -- The transaction's snapshot may predate the last fold: for share fails (40001) if it does.
    select m.folded_before into mark from app_private.analytics_fold_marks m
    where m.source = analytics_fold_mark.source
    for share;
  end if;
  return mark;
end;
$$;
comment on function app_private.analytics_fold_mark(text) is
  'For the triggers of a change to a folded table''s row: its mark (rows created before it are folded, so their change is a delta; rows after it are read or folded as they are then), holding the marks'' advisory lock shared until the transaction ends, so app_private.fold_analytics_facts (which takes it exclusive) cannot move the mark between this read and the change''s commit.';
revoke all on function app_private.analytics_fold_mark(text) from public;

-- Each table's trigger function (and a folded table's live tail) is declared here and its body
-- written just below from the definitions (supabase/schema/ shows the written bodies; a
-- function is placed there by its create statement, so each has one).
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
create function app_private.orders_facts_tail(metric text, bucket_interval text)
returns table (bucket timestamptz, key text, value numeric)
language plpgsql as $$ begin end; $$;

-- Written with the statements spelled out (no EXECUTE): PL/pgSQL keeps their plans, so a
-- statement pays for running them, not for planning them again (dynamic SQL cost about 1 ms a
-- message).
do $$
declare
  def record;
  t text;
  watched_old text;
  watched_new text;
begin
  for def in select * from app_private.analytics_fact_definitions() loop
    t := split_part(def.source, '.', 2);
    execute format('revoke all on function app_private.%s_facts_changed() from public', t);
    if not def.folded then
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
          'select 1 as sign, n.* from new_rows n', def.facts),
        app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
          'select -1 as sign, o.* from old_rows o', def.facts),
        app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
          'select -1 as sign, old.* union all select 1 as sign, new.*', def.facts));
      execute format($f$
        comment on function app_private.%1$s_facts_changed() is
          'After insert or delete on %2$s (per statement) and after an update of a watched column (per row): appends the analytics facts added (+) and removed (-) to app_private.analytics_fact_deltas, an insert and never an update of a shared row. Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write %2$s and may not write the rollups.' $f$,
        t, def.source);
    else
      execute format($f$
        create or replace function app_private.%1$s_facts_changed() returns trigger
        language plpgsql
        security definer
        set search_path = ''
        as $body$
        declare
          mark timestamptz := app_private.analytics_fold_mark(%2$L);
        begin
          if tg_op = 'DELETE' then
            %3$s;
          else
            %4$s;
          end if;
          return null;
        end;
        $body$ $f$, t, def.source,
        app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
          'select -1 as sign, o.* from old_rows o where o.created_at < mark', def.facts),
        app_private.analytics_fact_sql('app_private.analytics_fact_deltas',
          'select -1 as sign, old.* where old.created_at < mark
           union all
           select 1 as sign, new.* where new.created_at < mark', def.facts));
      execute format($f$
        comment on function app_private.%1$s_facts_changed() is
          'After delete on %2$s (per statement) and after an update of a watched column (per row): for the rows created before the fold''s mark (already in the rollups), appends the facts removed (-) and added (+) to app_private.analytics_fact_deltas; rows from the mark on are read live and folded as they are then. Inserts run no trigger (the job folds them). Written by migration 20261202000200 from app_private.analytics_fact_definitions(). security definer: users and the server write %2$s and may not write the rollups.' $f$,
        t, def.source);
      continue when def.source = 'app.messages';  -- its tail is written out below
      execute format($f$
        create or replace function app_private.%1$s_facts_tail(metric text, bucket_interval text)
        returns table (bucket timestamptz, key text, value numeric)
        language plpgsql
        stable
        set search_path = ''
        as $body$
        begin
          -- The metric and interval filter the facts before they are summed.
          return query
            select x.bucket, x.key, x.value
            from (%3$s) x
            where x.metric = %1$s_facts_tail.metric
              and x.bucket_interval = %1$s_facts_tail.bucket_interval;
        end;
        $body$ $f$, t, def.source,
        -- The upper bound 'infinity' changes no row but makes the mark's unknown value a range
        -- to the planner (0.5 %% of the rows, not a third): the index's range read, in the plan
        -- PL/pgSQL keeps.
        app_private.analytics_fact_select(format(
          'select 1 as sign, r.* from %s r
           where r.created_at >= (select m.folded_before from app_private.analytics_fold_marks m
                                  where m.source = %L)
             and r.created_at <= ''infinity''::timestamptz', def.source, def.source), def.facts));
      execute format($f$
        comment on function app_private.%1$s_facts_tail(text, text) is
          'A metric''s facts in one bucket interval of the rows of %2$s created from the fold''s mark on, not yet in app_private.analytics_facts (a range read of at most a minute and a margin of rows): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. Written by migration 20261202000200 from app_private.analytics_fact_definitions().' $f$,
        t, def.source);
      execute format('revoke all on function app_private.%s_facts_tail(text, text) from public', t);
    end if;
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

create function app_private.messages_facts_tail(metric text, bucket_interval text)
returns table (bucket timestamptz, key text, value numeric)
language plpgsql
stable
set search_path = ''
as $$
begin
  -- Written out rather than generated from the definitions as the orders' tail is: the
  -- generated query (a row per fact, interval and message, summed as numeric) took 42-46 ms for
  -- 5,600 messages, these 4-7 ms. tests/admin/analytics-facts.test.ts checks them against a
  -- recount. The upper bound 'infinity' changes no row but makes the mark's unknown value a
  -- range to the planner (0.5 % of the rows, not a third): the index's range read, in the plan
  -- PL/pgSQL keeps.
  if metric = 'messages.sent' and bucket_interval <> 'all' then
    return query
      select date_trunc(messages_facts_tail.bucket_interval, m.created_at, 'UTC'), ''::text,
             count(*)::numeric
      from app.messages m
      where m.created_at >= (select k.folded_before from app_private.analytics_fold_marks k
                             where k.source = 'app.messages')
        and m.created_at <= 'infinity'::timestamptz
      group by 1;
  elsif metric = 'messages.live' and bucket_interval = 'all' then
    return query
      select '-infinity'::timestamptz, ''::text, count(*)::numeric
      from app.messages m
      where m.created_at >= (select k.folded_before from app_private.analytics_fold_marks k
                             where k.source = 'app.messages')
        and m.created_at <= 'infinity'::timestamptz
        and m.deleted_at is null
      having count(*) > 0;
  end if;
end;
$$;
comment on function app_private.messages_facts_tail(text, text) is
  'messages.sent (per bucket) and messages.live (interval all) of the messages created from the fold''s mark on, not yet in app_private.analytics_facts (a range read of messages_created_at_id_idx: at most a minute and a margin of sends): the readers add them, in the same statement, so a figure is exact while the fold is up to a minute behind. The same facts as app_private.analytics_fact_definitions() gives a message.';
revoke all on function app_private.messages_facts_tail(text, text) from public;

create function app_private.message_senders_tail(bucket_interval text)
returns table (bucket timestamptz, key text, value numeric)
language plpgsql
stable
set search_path = ''
as $$
begin
  return query
    with senders as (
      select distinct date_trunc(message_senders_tail.bucket_interval, m.created_at, 'UTC') as bucket,
             m.sender_id
      from app.messages m
      where m.created_at >= (select k.folded_before from app_private.analytics_fold_marks k
                             where k.source = 'app.messages')
        and m.created_at <= 'infinity'::timestamptz
        and m.sender_id is not null
    )
    select s.bucket, ''::text, count(*)::numeric
    from senders s
    where not exists (
      select 1 from app_private.analytics_fact_members f
      where f.metric = 'messages.senders' and f.bucket_interval = message_senders_tail.bucket_interval
        and f.bucket = s.bucket and f.user_id = s.sender_id)
    group by 1;
end;
$$;
comment on function app_private.message_senders_tail(text) is
  'Active senders not yet folded: per bucket of the interval, the distinct senders of the messages created from the fold''s mark on who are not yet members of the bucket (app_private.analytics_fact_members). The readers add them to messages.senders in the same statement.';
revoke all on function app_private.message_senders_tail(text) from public;

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
  def record;
  t text;
begin
  for def in select * from app_private.analytics_fact_definitions() loop
    t := split_part(def.source, '.', 2);
    if not def.folded then
      execute format($t$
        create trigger %1$s_facts_inserted after insert on app.%1$s
          referencing new table as new_rows
          for each statement execute function app_private.%1$s_facts_changed() $t$, t);
    end if;
    -- Per row, and only when a watched column changed: a send's update of its conversation
    -- (last_seq), an edit or a settlement flag runs nothing (a statement trigger with transition
    -- tables would copy the rows on every such update). No column list (update of ...): a
    -- before trigger may set a watched column.
    execute format($t$
      create trigger %1$s_facts_updated after update on app.%1$s
        for each row
        when ((%2$s) is distinct from (%3$s))
        execute function app_private.%1$s_facts_changed() $t$, t,
      'old.' || replace(def.watched, ', ', ', old.'), 'new.' || replace(def.watched, ', ', ', new.'));
    execute format($t$
      create trigger %1$s_facts_deleted after delete on app.%1$s
        referencing old table as old_rows
        for each statement execute function app_private.%1$s_facts_changed();
      create trigger %1$s_facts_truncated after truncate on app.%1$s
        for each statement execute function app_private.analytics_facts_truncated() $t$, t);
  end loop;
end;
$$;
create trigger users_forget_fact_members after delete on app.users
  referencing old table as old_rows
  for each statement execute function app_private.forget_fact_members();

create function app_private.recount_analytics_facts() returns void
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
        || case when def.folded then format(' where t.created_at < %L', horizon) else '' end,
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
  'Rebuilds app_private.analytics_facts from the counted tables (full scans; their writers wait meanwhile) and sets the marks of the folded tables to the horizon (app_private.analytics_fold_horizon): after rows were written with triggers off (a bulk load with session_replication_role = replica) or with a created_at below the mark (a backfill), or should an operator doubt the figures. Active senders of removed messages, which the fold keeps counted, are counted no more.';
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

create function app_private.analytics_fact_tail(metric text, bucket_interval text)
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
  end if;
end;
$$;
comment on function app_private.analytics_fact_tail(text, text) is
  'A metric''s facts in one bucket interval of the rows not yet folded (a folded table''s rows from its mark on); none for the tables kept by deltas. The readers add them in the same statement as the rollup rows and deltas.';
revoke all on function app_private.analytics_fact_tail(text, text) from public;

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
      union all
      select l.bucket, l.key, l.value
      from app_private.analytics_fact_tail(fact_series.metric, fact_series.bucket_interval) l
      where l.bucket >= date_trunc(fact_series.bucket_interval, range_from, 'UTC') and l.bucket <= range_to
    ) x
    group by 1, 2;
end;
$$;
comment on function app_private.fact_series(text, text, timestamptz, timestamptz) is
  'A metric''s buckets from the one holding range_from to the one holding range_to, per key, from the rollup rows plus their deltas plus the rows not yet folded (app_private.analytics_fact_tail) in one statement (exact while the fold is late). Buckets with nothing are absent. For the app.admin_*_stats functions.';
revoke all on function app_private.fact_series(text, text, timestamptz, timestamptz) from public;

create function app_private.fact_series_json(metric text, bucket_interval text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql
stable
set search_path = ''
set timezone = 'UTC'
as $$
begin
  -- plpgsql for its kept plan, as app_private.fact_series.
  return (
    select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(s.value, 0)) order by b.t)
    from generate_series(date_trunc(fact_series_json.bucket_interval, range_from, 'UTC'), range_to,
                         ('1 ' || fact_series_json.bucket_interval)::interval) b(t)
    left join app_private.fact_series(fact_series_json.metric, fact_series_json.bucket_interval,
                                      range_from, range_to) s on s.t = b.t);
end;
$$;
comment on function app_private.fact_series_json(text, text, timestamptz, timestamptz) is
  'A keyless metric''s series as the admin analytics show it: [{t, value}] for every bucket from the one holding range_from to the one holding range_to, zero-filled, from app_private.fact_series. For the app.admin_*_stats functions.';
revoke all on function app_private.fact_series_json(text, text, timestamptz, timestamptz) from public;

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
      union all
      select l.key, l.value from app_private.analytics_fact_tail(fact_totals.metric, 'all') l
    ) x
    group by 1;
end;
$$;
comment on function app_private.fact_totals(text) is
  'A metric''s totals now, per key, from the rollup rows plus their deltas plus the rows not yet folded (app_private.analytics_fact_tail) in one statement. For the app.admin_*_stats functions.';
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
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'conversations', app_private.fact_total('conversations.all'),
      'messages', app_private.fact_total('messages.live')
    ),
    'messages', app_private.fact_series_json('messages.sent', bucket, range_from, range_to),
    'activeSenders', app_private.fact_series_json('messages.senders', bucket, range_from, range_to),
    'conversationsCreated', app_private.fact_series_json('conversations.created', bucket, range_from, range_to)
  ) into result;
  return result;
end;
$$;
comment on function app.admin_messaging_stats(text, timestamptz, timestamptz) is
  'Messages sent (deleted ones included), active senders (users who sent a message) and new conversations per UTC day, ISO week or month, zero-filled, whole buckets, with totals (conversations, messages not deleted): counts only, never content, from the rollups (app_private.analytics_facts, its deltas and the rows not yet folded), a row per bucket whatever the size of the tables. security definer because ADMINs cannot read conversations they are not in and the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';

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
    'walletsCreated', app_private.fact_series_json('wallets.created', bucket, range_from, range_to),
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
comment on function app.admin_store_stats(text, timestamptz, timestamptz) is
  'The store section of GET /api/admin/analytics: sales (totals of orders paid in each UTC day, ISO week or month, refunds not deducted, minor units), paid orders, orders created, zero-filled, whole buckets; orders by status now; the top ten vendors by sales in the range''s buckets (name as the vendor is named now). From the rollups (app_private.analytics_facts, its deltas and the orders not yet folded), a row per bucket and vendor with sales in it, whatever the number of orders. security definer: the rollups are server-only; it checks the caller is an ADMIN (42501) and returns aggregates only.';
grant execute on function app.admin_store_stats(text, timestamptz, timestamptz) to authenticated;

create function app_private.fold_analytics_facts(margin interval default interval '5 seconds',
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
      raise warning 'analytics fold skipped: changes to messages or orders held its lock for 5 s';
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
    select k.source, k.folded_before, d.facts
    from app_private.analytics_fold_marks k
    join app_private.analytics_fact_definitions() d on d.source = k.source
    order by k.source
  loop
    continue when horizon is null or horizon <= src.folded_before;
    -- At most about `batch` rows a run (a fold far behind catches up run by run): up to the
    -- created_at of the batch-th row, every row of that instant included.
    execute format('select t.created_at from %s t where t.created_at >= $1 and t.created_at < $2
                    order by t.created_at offset $3 limit 1', src.source)
      into nth using src.folded_before, horizon, greatest(batch, 1) - 1;
    upto := case when nth is null then horizon else least(horizon, nth + interval '1 microsecond') end;
    update app_private.analytics_fold_marks k set folded_before = upto where k.source = src.source;
    rows_sql := format('select 1 as sign, t.* from %s t where t.created_at >= %L and t.created_at < %L',
                       src.source, src.folded_before, upto);
    execute app_private.analytics_fact_sql('app_private.analytics_facts', rows_sql, src.facts);
    execute format('select count(*)::integer from %s t where t.created_at >= $1 and t.created_at < $2',
                   src.source)
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
  'Run by app_private.compact_counters (agora-compact-counters, every minute): for each folded table (app.messages, app.orders), adds the facts of its rows created from its mark up to the horizon (app_private.analytics_fold_horizon: now() - margin, or the start of the oldest transaction in progress if earlier; at most about batch rows a run) to app_private.analytics_facts and the batch''s senders to the members, and moves the mark, in one transaction: a reader (rollups plus the rows from the mark on, one statement) sees the same figure before and after. margin 5 seconds: see the migration 20261202000200''s header. Returns how many rows it folded.';
revoke all on function app_private.fold_analytics_facts(interval, integer) from public;

create or replace function app_private.compact_counters() returns integer
language plpgsql
set search_path = ''
as $$
declare
  folded integer;
  more integer;
  facts integer;
begin
  -- First: the fold takes the marks' lock before this transaction updates a fact row, as every
  -- writer of fact rows does (a compaction and a fold in the other order would deadlock).
  folded := app_private.fold_analytics_facts();
  folded := folded + app_private.compact_user_counts();
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
  'pg_cron (agora-compact-counters, every minute): folds the appended deltas of the user counts, of the user analytics rollups and of the analytics facts into their rows, each in the same transaction as their deletion, so a reader (row plus deltas, one statement) sees the same figure before and after; first the new messages and orders (app_private.fold_analytics_facts). Returns how many delta rows and rows it folded.';

-- The facts of the data already there.
select app_private.recount_analytics_facts();

revoke execute on all functions in schema app, app_private from public;
