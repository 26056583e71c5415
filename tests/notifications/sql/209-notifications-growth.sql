/*
 * Notifications at a year's size (issue 30), per persona: one event per reading statement
 * (notification.read for one, notification.read_all for many) with the counter taken down once;
 * app.inbox_search_ids returns the caller's own ids only (anon: no execute); the streamed
 * export's two functions read the caller's own rows only (anon: no execute).
 */
begin;
select plan(15);

do $$
begin
  perform tests.create_user('grw.ona@example.test', 'MEMBER');
  perform tests.create_user('grw.pia@example.test', 'MEMBER');
end
$$;
select tests.user_id('grw.ona@example.test') as ona \gset
select tests.user_id('grw.pia@example.test') as pia \gset

select count(*) from app_private.notify_many(array[:'ona', :'pia']::uuid[], 'SYSTEM', 'Zephyr notice', '') as ignored \gset
select count(*) from generate_series(1, 4) i,
  lateral app_private.notify_many(array[:'ona']::uuid[], 'WALLET', 'plain ' || i, '') as ignored \gset
-- A type whose in-app channel is off: kept out of the inbox.
insert into app.notification_preferences (user_id, types) values (:'ona', '{"ENTITY": {"inApp": false}}');
select count(*) from app_private.notify_many(array[:'ona']::uuid[], 'ENTITY', 'hidden', '') as ignored \gset

-- ---------------------------------------------------------------------------------------------
-- Reading: one event per statement and user
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'ona');
update app.notifications set read_at = now() where id = (
  select id from app.notifications where user_id = :'ona' and title = 'plain 1');
update app.notifications set read_at = now() where user_id = :'ona' and inbox and read_at is null;
select tests.clear_authentication();
select results_eq(
  format($$ select event, coalesce(payload ->> 'title', ''), coalesce((payload ->> 'count')::int, 1),
                   coalesce((payload ->> 'unreadCount')::int, -1)
            from app.events where topic = 'user:' || %L and event like 'notification.read%%' order by id $$, :'ona'),
  $$ values ('notification.read', 'plain 1', 1, -1), ('notification.read_all', '', 4, 0) $$,
  'One read is notification.read (the notification); read-all of four is one notification.read_all with its count and the counter after it.'
);
select is(
  (select unread from app.notification_counters where user_id = :'ona'), 0,
  'The counter is taken down by the four at once.'
);
select is(
  (select unread from app.notification_counters where user_id = :'pia'), 1,
  'Another user''s counter is untouched.'
);
select is(
  (select count(*)::int from app.events where topic = 'user:' || :'pia' and event like 'notification.read%'), 0,
  'Another user gets no event.'
);

-- ---------------------------------------------------------------------------------------------
-- app.inbox_search_ids
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'ona');
select is(
  cardinality(app.inbox_search_ids(null, null, '%zephyr%', '-infinity', 'infinity',
                                   'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 1,
  'A member finds their own matching row...'
);
select is(
  (select n.user_id from app.notifications n
    where n.id = (app.inbox_search_ids(null, null, '%zephyr%', '-infinity', 'infinity',
                                       'ffffffff-ffff-ffff-ffff-ffffffffffff', 10))[1]),
  :'ona'::uuid,
  '...their own, not the other user''s row with the same title.'
);
select is(
  cardinality(app.inbox_search_ids('ENTITY', null, null, '-infinity', 'infinity',
                                   'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 0,
  'The hidden row (in-app off) is not in the search.'
);
select is(
  cardinality(app.inbox_search_ids('WALLET', null, null, '-infinity', 'infinity',
                                   'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 4,
  'By type: the caller''s four.'
);
select is(
  cardinality(app.inbox_search_ids('WALLET', true, null, '-infinity', 'infinity',
                                   'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 0,
  'Unread only: none left.'
);
select tests.authenticate_as_anon();
select throws_ok(
  $$ select app.inbox_search_ids(null, null, '%zephyr%', '-infinity', 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 10) $$,
  '42501', null,
  'anon may not call it.'
);
select tests.clear_authentication();
select is(
  cardinality(app.inbox_search_ids(null, null, '%zephyr%', '-infinity', 'infinity',
                                   'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)), 0,
  'Without a caller it finds nothing.'
);

-- ---------------------------------------------------------------------------------------------
-- The streamed export
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'ona');
select is(
  (select count(*)::int from app.export_account_rows('notifications')), 6,
  'The export''s notifications are the caller''s own, the hidden one included.'
);
select results_eq(
  $$ select d ? 'notifications', d ? 'profile', d -> 'profile' ->> 'id' from app.export_account_streamed() d $$,
  format($$ values (false, true, %L) $$, :'ona'),
  'The streamed document is the caller''s, without its notifications (streamed after it).'
);
select tests.clear_authentication();
select is(
  (select count(*)::int from app.security_events where type = 'account.exported' and user_id = :'ona'), 1,
  'It is recorded as account.exported.'
);
select tests.authenticate_as_anon();
select throws_ok(
  $$ select count(*) from app.export_account_rows('notifications') $$,
  '42501', null,
  'anon may not read an export.'
);
select tests.clear_authentication();

select * from finish();
rollback;
