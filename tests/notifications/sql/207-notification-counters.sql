/*
 * app.notification_counters: each user's unread inbox count, kept by triggers on every path
 * (one notification, many at once, a bulk batch, folding into an unread one, marking read, read
 * all, deleting, hidden rows), always equal to counting the rows; readable by its owner only.
 */
begin;
select plan(12);

do $$
begin
  perform tests.create_user('cnt.uma@example.test', 'MEMBER');
  perform tests.create_user('cnt.vic@example.test', 'MEMBER');
  perform tests.create_user('cnt.ada@example.test', 'ADMIN');
end
$$;
select tests.user_id('cnt.uma@example.test') as uma \gset
select tests.user_id('cnt.vic@example.test') as vic \gset
select tests.user_id('cnt.ada@example.test') as ada \gset

create function pg_temp.counted(who uuid) returns boolean language sql as $$
  select coalesce((select c.unread from app.notification_counters c where c.user_id = who), 0)
       = (select count(*)::int from app.notifications n where n.user_id = who and n.inbox and n.read_at is null)
$$;

select app_private.notify(:'uma', 'SYSTEM', 'one', '') as n1 \gset
select app_private.notify(:'uma', 'SYSTEM', 'two', '') as n2 \gset
select is((select unread from app.notification_counters where user_id = :'uma'), 2,
  'Two notifications: the counter says 2.');

select count(*) from app_private.notify_many(array[:'uma', :'vic']::uuid[], 'WALLET', 'many', '') as ignored \gset
select ok(pg_temp.counted(:'uma') and pg_temp.counted(:'vic'), 'notify_many counts each recipient once.');

select app_private.notify(:'uma', 'MESSAGE', 'fold', '', '{}', 'normal', 'k') as f1 \gset
select app_private.notify(:'uma', 'MESSAGE', 'fold again', '', '{}', 'normal', 'k') as f2 \gset
select is((select unread from app.notification_counters where user_id = :'uma'), 4,
  'Folding into an unread notification adds nothing: 4 unread (one, two, many, fold).');

insert into app.notification_preferences (user_id, types) values (:'uma', '{"ENTITY": {"inApp": false}}');
select app_private.notify(:'uma', 'ENTITY', 'hidden', '') as ignored \gset
select is((select unread from app.notification_counters where user_id = :'uma'), 4,
  'A notification kept out of the inbox is not counted.');

select tests.authenticate_as(:'uma');
update app.notifications set read_at = now() where id = :'n1';
select is((select unread from app.notification_counters), 3, 'Marking one read: 3.');
update app.notifications set read_at = now() where id = :'n1';
select is((select unread from app.notification_counters), 3, 'Marking it read again changes nothing.');
select app.delete_notification(:'n2') as ignored \gset
select is((select unread from app.notification_counters), 2, 'Deleting an unread one: 2.');
select app.delete_notification(:'n1') as ignored \gset
select is((select unread from app.notification_counters), 2, 'Deleting a read one: still 2.');
update app.notifications set read_at = now() where read_at is null;
select is((select unread from app.notification_counters), 0, 'Read all: 0.');
select is((select count(*)::int from app.notification_counters), 1,
  'A user reads only their own counter.');
select tests.clear_authentication();

-- A bulk batch is counted in one statement.
select tests.authenticate_as(:'ada');
select app.create_notification_batch(jsonb_build_object('userIds', jsonb_build_array(:'uma', :'vic')),
  '{"type": "SYSTEM", "title": "bulk"}', array['inApp']) ->> 'id' as batch \gset
select tests.clear_authentication();
select app_private.write_notification_batch(:'batch') as ignored \gset
select ok(pg_temp.counted(:'uma') and pg_temp.counted(:'vic') and pg_temp.counted(:'ada'),
  'A bulk batch keeps every recipient''s counter right.');

-- A conversation and its messages.
select tests.create_conversation(:'vic', 'direct', array[:'uma']::uuid[]) as d \gset
select tests.insert_message(:'d', :'vic', 'hi') as ignored \gset
select tests.insert_message(:'d', :'vic', 'hi again') as ignored \gset
select app_private.digest_conversation(:'d', app_private.claim_message_digest(:'d')) as ignored \gset
select ok(pg_temp.counted(:'uma') and pg_temp.counted(:'vic'),
  'A conversation and its messages keep the counters right (one unread notification for Uma).');

select * from finish();
rollback;
