/*
 * Read-all by a mark (app.mark_all_notifications_read beyond its direct limit,
 * app.notification_read_marks, app_private.apply_read_marks): one row instead of every unread
 * one, and every reader treats the covered rows as read at the mark's time until the job has
 * written them down: the list and its unread filter, the search, one notification's read time,
 * marking one read, deleting, a collapse key, the export; the counter and the events stay exact
 * through the job. Row level security of the marks, per persona; the write gates are server-only.
 */
begin;
select plan(51);

do $$
begin
  perform tests.create_user('marks.uma@example.test', 'MEMBER');     -- owner
  perform tests.create_user('marks.vic@example.test', 'MEMBER');     -- another user
  perform tests.create_user('marks.ada@example.test', 'ADMIN');      -- admin
  perform tests.create_user('marks.vera@example.test', 'VISITOR');   -- visitor
end
$$;
select tests.user_id('marks.uma@example.test') as uma \gset
select tests.user_id('marks.vic@example.test') as vic \gset
select tests.user_id('marks.ada@example.test') as ada \gset
select tests.user_id('marks.vera@example.test') as vera \gset
select tests.session_for(:'uma') as uma_session \gset

create function pg_temp.unread(who uuid) returns integer language sql as $$
  select coalesce((select c.unread from app.notification_counters c where c.user_id = who), 0)
$$;
-- The rows as every reader sees them: neither read nor covered by a mark.
create function pg_temp.logically_unread(who uuid) returns integer language sql as $$
  select count(*)::integer from app.notifications n
  where n.user_id = who and n.inbox and app.notification_read_at(n) is null
$$;
create function pg_temp.events(who uuid, kind text) returns integer language sql as $$
  select count(*)::integer from app.events e where e.topic = 'user:' || who and e.event = kind
$$;

-- Five notifications and a conversation's (collapse key) for Uma, one for Vic.
select app_private.notify(:'uma', 'SYSTEM', 'marks one', '') as n1 \gset
select app_private.notify(:'uma', 'SYSTEM', 'marks two', '') as n2 \gset
select app_private.notify(:'uma', 'WALLET', 'marks three', '') as n3 \gset
select app_private.notify(:'uma', 'SYSTEM', 'marks four', '') as n4 \gset
select app_private.notify(:'uma', 'SYSTEM', 'marks five', '') as n5 \gset
select app_private.notify(:'uma', 'MESSAGE', 'marks chat', '', '{}', 'normal', 'conversation:marks') as c1 \gset
select app_private.notify(:'vic', 'SYSTEM', 'marks vic', '') as v1 \gset
select is(pg_temp.unread(:'uma'), 6, 'Six unread before the read-all.');

-- ---------------------------------------------------------------------------------------------
-- Read-all by a mark (direct limit 0)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'uma');
select results_eq(
  $$ select updated, unread from app.mark_all_notifications_read(0) $$,
  $$ values (6, 0) $$,
  'Read-all beyond the direct limit reports the six it read and nothing unread.'
);
select tests.clear_authentication();

select is((select count(*)::int from app.notification_read_marks where user_id = :'uma'), 1,
  'It wrote one mark...');
select is((select read_to from app.notification_read_marks where user_id = :'uma'),
          (select max(created_at) from app.notifications where user_id = :'uma'),
  '...up to the newest unread row''s creation time...');
select is((select count(*)::int from app.notifications where user_id = :'uma' and read_at is null), 6,
  '...and updated no notification.');
select is(pg_temp.unread(:'uma'), 0, 'The counter is 0.');
select is(pg_temp.logically_unread(:'uma'), 0, 'Every one of the six reads as read...');
select ok((select bool_and(app.notification_read_at(n) = now()) from app.notifications n where n.user_id = :'uma'),
  '...at the read-all''s time.');
select is(pg_temp.logically_unread(:'vic'), 1, 'Another user''s notification is untouched.');
select is(pg_temp.events(:'uma', 'notification.read_all'), 1, 'One notification.read_all event...');
select is(
  (select payload - 'readAt' - 'upTo' from app.events where topic = 'user:' || :'uma' and event = 'notification.read_all'),
  '{"count": 6, "unreadCount": 0}'::jsonb,
  '...with the count and nothing left unread.');
select is(pg_temp.events(:'uma', 'notification.read'), 0, 'No notification.read event.');
select is((select count(*)::int from app_private.jobs where kind = 'notifications.read_marks' and payload ->> 'userId' = :'uma'), 1,
  'A notifications.read_marks job is queued.');

-- The readers (the page sets role authenticated for the rest of the transaction: cleared after).
select results_eq(
  format($$ select count(*)::int from app_private.inbox_page_for_session(%L, %L, null, true, null, null, null, null, 51) p
            where p.id is not null $$, :'uma_session', :'uma'),
  $$ values (0) $$, 'The unread filter lists none of them.');
select tests.clear_authentication();
select results_eq(
  format($$ select count(*)::int, count(*) filter (where p.read_at = now()::text)::int
            from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) p $$,
         :'uma_session', :'uma'),
  $$ values (6, 6) $$, 'The inbox shows all six read at the read-all''s time.');
select tests.clear_authentication();
select results_eq(
  format($$ select count(*)::int from app_private.inbox_page_for_session(%L, %L, null, true, '%%marks%%', null, null, null, 51) p
            where p.id is not null $$, :'uma_session', :'uma'),
  $$ values (0) $$, 'Searching the unread ones finds none.');
select tests.clear_authentication();
select tests.authenticate_as(:'uma');
select is(cardinality(app.inbox_search_ids(null, true, '%marks%', '-infinity', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 0,
  'The search index''s half of the unread filter finds none either.');
select is(cardinality(app.inbox_search_ids(null, false, '%marks%', '-infinity', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 6,
  '...and all six among the read ones.');
select is((select (app.notification_json(n) ->> 'readAt') is not null from app.notifications n where n.id = :'n1'), true,
  'The API''s JSON of one of them has its readAt.');
select is((select count(*)::int from app.export_account_rows('notifications') x where (x::jsonb ->> 'readAt') is null and x::jsonb ->> 'title' like 'marks%'), 0,
  'The export shows every one read.');

-- Marking one read, deleting one.
update app.notifications set read_at = now() where id = :'n1';
select is((select read_at from app.notifications where id = :'n1'), now(),
  'Marking a covered one read writes the read-all''s time...');
select is(pg_temp.unread(:'uma'), 0, '...leaves the counter at 0...');
select is(pg_temp.events(:'uma', 'notification.read'), 0, '...and sends no notification.read.');
select app.delete_notification(:'n2') as ignored \gset
select is(pg_temp.unread(:'uma'), 0, 'Deleting a covered one leaves the counter at 0.');
select tests.clear_authentication();

-- After the mark: a new notification, and the conversation again (its unread row is covered).
select app_private.notify(:'uma', 'SYSTEM', 'marks six', '') as n6 \gset
select is(pg_temp.unread(:'uma'), 1, 'A notification after the read-all is unread and counted...');
select ok((select created_at > (select read_to from app.notification_read_marks where user_id = :'uma')
           from app.notifications where id = :'n6'), '...and newer than the mark.');
select app_private.notify(:'uma', 'MESSAGE', 'marks chat again', '', '{}', 'normal', 'conversation:marks') as c2 \gset
select isnt(:'c2'::uuid, :'c1'::uuid, 'A collapse key whose unread row the read-all covered makes a new notification...');
select is((select read_at from app.notifications where id = :'c1'), now(), '...after writing the covered one down as read...');
select is((select data ->> 'count' from app.notifications where id = :'c2'), '1', '...counting from one...');
select is(pg_temp.unread(:'uma'), 2, '...and counted.');
select is(pg_temp.logically_unread(:'uma'), 2, 'The counter equals the unread rows as readers see them.');

-- A read-all covers inbox rows only: a hidden row (kept for delivery) under the mark still folds.
insert into app.notification_preferences (user_id, types) values (:'uma', '{"ENTITY": {"inApp": false}}');
insert into app.notifications (user_id, type, title, body, data, collapse_key, inbox, created_at)
values (:'uma', 'ENTITY', 'marks hidden', '', '{"count": 1}', 'marks:hidden', false, now() - interval '1 hour');
select app_private.notify(:'uma', 'ENTITY', 'marks hidden again', '', '{}', 'normal', 'marks:hidden') as ignored \gset
select results_eq(
  $$ select count(*)::int, min(data ->> 'count'), bool_and(read_at is null) from app.notifications
     where collapse_key = 'marks:hidden' $$,
  $$ values (1, '2', true) $$,
  'A hidden row the mark''s time range includes is not read: the next one folds into it.');

-- The job writes the rows down, a batch at a time, then drops the mark.
select is(app_private.apply_read_marks(:'uma', 2), true, 'A batch of two: the mark remains...');
select is((select count(*)::int from app.notifications n, app.notification_read_marks m
           where n.user_id = :'uma' and m.user_id = n.user_id and n.inbox and n.read_at is null and n.created_at <= m.read_to), 1,
  '...with one covered row left (six, one deleted, two written before, two now).');
select is(app_private.apply_read_marks(:'uma', 2), false, 'The next batch finishes it: no mark remains.');
select is((select count(*)::int from app.notifications where user_id = :'uma' and inbox and read_at is null), 2,
  'Only the two newer notifications are unread rows...');
select ok((select bool_and(read_at = now()) from app.notifications where user_id = :'uma' and read_at is not null),
  '...and the others carry the read-all''s time.');
select is(pg_temp.unread(:'uma'), 2, 'The job moved no counter...');
select is(pg_temp.events(:'uma', 'notification.read') + pg_temp.events(:'uma', 'notification.read_all'), 1,
  '...and sent no event.');
select is(app_private.apply_read_marks(:'uma'), false, 'With no mark the job has nothing to do.');

-- Direct: two unread, under the default limit: the rows themselves, no mark.
select tests.authenticate_as(:'uma');
select results_eq($$ select updated, unread from app.mark_all_notifications_read() $$, $$ values (2, 0) $$,
  'Read-all under the direct limit updates the two rows...');
select tests.clear_authentication();
select is((select count(*)::int from app.notification_read_marks where user_id = :'uma'), 0, '...and writes no mark.');

-- The earliest covering mark gives the time (two pending read-alls).
insert into app.notifications (user_id, type, title, body, created_at)
values (:'vic', 'SYSTEM', 'marks old', '', now() - interval '2 hours'),
       (:'vic', 'SYSTEM', 'marks middle', '', now() - interval '1 hour');
insert into app.notification_read_marks (user_id, read_to, read_at)
values (:'vic', now() - interval '90 minutes', now() - interval '80 minutes'),
       (:'vic', clock_timestamp(), now() - interval '10 minutes');
select results_eq(
  $$ select title, app.notification_read_at(n) from app.notifications n
     where user_id = tests.user_id('marks.vic@example.test') order by created_at $$,
  $$ values ('marks old', now() - interval '80 minutes'), ('marks middle', now() - interval '10 minutes'),
            ('marks vic', now() - interval '10 minutes') $$,
  'A row is read at the earliest mark that covers it.');

-- ---------------------------------------------------------------------------------------------
-- Row level security of the marks
-- ---------------------------------------------------------------------------------------------

insert into app.notification_read_marks (user_id, read_to, read_at)
values (:'uma', now(), now()), (:'ada', now(), now()), (:'vera', now(), now());
select tests.authenticate_as(:'uma');
select results_eq($$ select user_id from app.notification_read_marks $$, array[:'uma'::uuid],
  'The owner reads their own marks only.');
select throws_ok(format($$ insert into app.notification_read_marks values (%L, now(), now()) $$, :'uma'),
  '42501', null, 'The owner writes no mark.');
select throws_ok($$ select 1 from app_private.notification_write_gates $$, '42501', null,
  'Nobody signed in reads the write gates (server only).');
select tests.authenticate_as(:'vic');
select is((select count(*)::int from app.notification_read_marks where user_id <> :'vic'), 0,
  'Another user reads none of theirs.');
select tests.authenticate_as(:'ada');
select results_eq($$ select user_id from app.notification_read_marks $$, array[:'ada'::uuid],
  'An ADMIN reads only their own marks too.');
select tests.authenticate_as(:'vera');
select results_eq($$ select user_id from app.notification_read_marks $$, array[:'vera'::uuid],
  'A VISITOR reads their own.');
select tests.authenticate_as_anon();
select throws_ok($$ select 1 from app.notification_read_marks $$, '42501', null,
  'An anonymous visitor reads nothing.');
select throws_ok($$ select * from app.mark_all_notifications_read() $$, '42501', null,
  '...nor calls read-all.');
select tests.clear_authentication();

select * from finish();
rollback;
