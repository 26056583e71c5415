/*
 * The analytics facts of messages and orders are folded from a mark (app_private
 * .analytics_fold_marks) by app_private.fold_analytics_facts, and read live above it
 * (app_private.analytics_fact_tail): an insert runs no fact trigger, a change to a row below the
 * mark appends a delta, the fold moves the mark no further than a transaction in progress (this
 * one included) and at most about a batch of rows a run, and the figures are the same before
 * and after it. Server only.
 */
begin;
select plan(20);

select tests.create_user('fold.admin@example.test', 'ADMIN');
select tests.create_user('fold.kim@example.test', 'MEMBER');
select tests.create_conversation(tests.user_id('fold.kim@example.test'), 'group', '{}', 'Fold') as conv \gset

-- A figure as a reader sees it: rollup rows, deltas and the rows above the mark.
create function pg_temp.figure(metric text, bucket_interval text) returns numeric
language sql as $$
  select coalesce(sum(x.value), 0) from (
    select c.value from app_private.analytics_facts c
    where c.metric = figure.metric and c.bucket_interval = figure.bucket_interval
      and c.bucket = case when figure.bucket_interval = 'all' then '-infinity'
                          else date_trunc(figure.bucket_interval, now(), 'UTC') end
    union all
    select d.delta from app_private.analytics_fact_deltas d
    where d.metric = figure.metric and d.bucket_interval = figure.bucket_interval
      and d.bucket = case when figure.bucket_interval = 'all' then '-infinity'
                          else date_trunc(figure.bucket_interval, now(), 'UTC') end
    union all
    select l.value from app_private.analytics_fact_tail(figure.metric, figure.bucket_interval) l
    where l.bucket = case when figure.bucket_interval = 'all' then '-infinity'
                          else date_trunc(figure.bucket_interval, now(), 'UTC') end
  ) x
$$;

select is((select array_agg(source order by source) from app_private.analytics_fold_marks),
  array['app.messages', 'app.notifications', 'app.orders', 'app_private.notification_deliveries'],
  'Messages, orders, notifications and deliveries are folded from a mark.');
select has_index('app', 'messages', 'messages_created_at_id_idx', array['created_at', 'id'],
  'The fold and the readers read the newest messages by (created_at, id).');
select is(
  (select count(*)::int from pg_trigger
   where tgrelid in ('app.messages'::regclass, 'app.orders'::regclass)
     and tgname like '%facts%' and (tgtype & 4) <> 0),
  0, 'No fact trigger runs on an insert of a message or an order.');

create temporary table before as
select pg_temp.figure('messages.sent', 'day') as sent, pg_temp.figure('messages.live', 'all') as live,
       pg_temp.figure('messages.senders', 'day') as senders,
       (select count(*) from app_private.analytics_fact_deltas) as deltas;
select tests.insert_message(:'conv', tests.user_id('fold.kim@example.test'), 'new') as fresh \gset
select is(pg_temp.figure('messages.sent', 'day') - (select sent from before), 1::numeric,
  'A message sent now counts at once, from the live tail.');
select is(pg_temp.figure('messages.senders', 'day') - (select senders from before), 1::numeric,
  'Its sender is an active sender of the day at once.');
select is((select count(*) from app_private.analytics_fact_deltas) - (select deltas from before), 0::bigint,
  'The insert appended no delta.');

-- Three messages written between the mark and this transaction's start, one a fold: everything
-- before is folded, and the mark set a second back to make room (rows of others in that second
-- count twice, before and after the folds alike).
select app_private.fold_analytics_facts(interval '0');
update app_private.analytics_fold_marks set folded_before = folded_before - interval '1 second'
where source = 'app.messages';
create temporary table mark as
select folded_before as at from app_private.analytics_fold_marks where source = 'app.messages';
select tests.insert_message(:'conv', tests.user_id('fold.kim@example.test'), 'early ' || g,
  (select at from mark) + (now() - (select at from mark)) * g / 4)
from generate_series(1, 3) g;
create temporary table figures as
select pg_temp.figure('messages.sent', 'day') as sent, pg_temp.figure('messages.live', 'all') as live,
       pg_temp.figure('messages.senders', 'day') as senders;
create temporary table first_row as
select min(created_at) as at, count(*) as n from app.messages
where created_at = (select min(created_at) from app.messages where created_at >= (select at from mark));
select is(app_private.fold_analytics_facts(interval '0', 1), (select n::int from first_row),
  'A fold takes at most about a batch of rows (here one, and any of the same instant).');
select is((select folded_before from app_private.analytics_fold_marks where source = 'app.messages'),
  (select at from first_row) + interval '1 microsecond',
  'Its mark moves just past the last row it took.');
select ok(app_private.fold_analytics_facts(interval '0') >= 2, 'The next fold takes the rest.');
select ok(
  (select folded_before <= now() from app_private.analytics_fold_marks where source = 'app.messages'),
  'The mark stops at the start of the oldest transaction in progress: this one.');
select is(
  (select (pg_temp.figure('messages.sent', 'day'), pg_temp.figure('messages.live', 'all'),
           pg_temp.figure('messages.senders', 'day'))::text),
  (select (sent, live, senders)::text from figures),
  'The figures are the same before and after the folds.');

-- A tombstone: a delta below the mark, nothing above it.
select count(*) as deltas from app_private.analytics_fact_deltas \gset
update app.messages set deleted_at = now(), content = '' where id = :'fresh';
select is((select count(*) from app_private.analytics_fact_deltas), :deltas::bigint,
  'A tombstone of a message above the mark appends nothing (the tail reads it as it is).');
update app.messages set deleted_at = now(), content = ''
where conversation_id = :'conv' and content = 'early 1';
select is(
  (select array_agg(d.metric || ' ' || d.bucket_interval || ' ' || d.delta)
   from app_private.analytics_fact_deltas d
   where d.id > (select max(x.id) from app_private.analytics_fact_deltas x) - (
     (select count(*) from app_private.analytics_fact_deltas) - :deltas)),
  array['messages.live all -1'],
  'A tombstone of a folded message appends one delta: one live message less.');
select is(pg_temp.figure('messages.live', 'all') - (select live from figures), -2::numeric,
  'Both are gone from the live total.');

select tests.authenticate_as(tests.user_id('fold.admin@example.test'));
select throws_ok($$ select app_private.fold_analytics_facts() $$, '42501', null,
  'Not even an ADMIN runs the fold.');
select throws_ok($$ select * from app_private.analytics_fold_marks $$, '42501', null,
  'The marks are server-only.');
select tests.clear_authentication();
select ok(
  not has_function_privilege('authenticated', 'app_private.analytics_fact_tail(text, text)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.analytics_fold_mark(text)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.analytics_fold_horizon(interval)', 'EXECUTE')
  and not has_function_privilege('anon', 'app_private.fold_analytics_facts(interval, integer)', 'EXECUTE'),
  'The fold''s functions are the server''s only.');

-- Without pg_read_all_stats (a hosted project before its grant) the horizon cannot see other
-- sessions' transactions: the fold is skipped, not failed, so the rest of the compaction goes on.
create role fold_no_stats;
grant usage on schema app, app_private to fold_no_stats;
alter function app_private.analytics_fold_horizon(interval) owner to fold_no_stats;
update app_private.analytics_fold_marks set folded_before = folded_before - interval '1 second';
create temporary table marks_before as select source, folded_before from app_private.analytics_fold_marks;
select is(app_private.fold_analytics_facts(interval '0'), 0,
  'Without pg_read_all_stats the fold folds nothing and returns 0 (a warning says what to grant).');
select set_eq($$ select source, folded_before from app_private.analytics_fold_marks $$,
  $$ select source, folded_before from marks_before $$, 'Its marks stay where they were.');
select lives_ok($$ select app_private.compact_counters() $$,
  'The compaction around it still runs.');
alter function app_private.analytics_fold_horizon(interval) owner to postgres;

select * from finish();
rollback;
