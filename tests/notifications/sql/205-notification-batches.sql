/*
 * Bulk batches: accepting one (ADMIN only; an audience of userIds, roles or all; active users
 * only; the same Idempotency-Key replays, with another request it is AG409; over the configured
 * maximum AG422), planning it (chunks and their jobs, nothing written), writing each chunk in its
 * own transaction (preferences and channels obeyed; delivery rows; the batch's counter; a rerun
 * writes nothing twice), announcing a chunk once, finishing, and progress from the counters.
 */
begin;
select plan(29);

do $$
begin
  perform tests.create_user('bat.ann@example.test', 'ADMIN');
  perform tests.create_user('bat.m1@example.test', 'MEMBER');
  perform tests.create_user('bat.m2@example.test', 'MEMBER');
  perform tests.create_user('bat.m3@example.test', 'MEMBER');
  perform tests.create_user('bat.s1@example.test', 'SUBSCRIBER');
end
$$;
select tests.user_id('bat.ann@example.test') as ann \gset
select tests.user_id('bat.m1@example.test') as m1 \gset
select tests.user_id('bat.m2@example.test') as m2 \gset
select tests.user_id('bat.m3@example.test') as m3 \gset
select tests.user_id('bat.s1@example.test') as s1 \gset
update app.users set status = 'suspended' where id = :'m3';
insert into app.notification_preferences (user_id, types) values (:'m2', '{"OPPORTUNITY": {"inApp": false}}');
insert into app.push_devices (user_id, token, platform) values (:'m1', 'bat-m1', 'android'), (:'m2', 'bat-m2', 'ios');

-- ---------------------------------------------------------------------------------------------
-- Accepting
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'m1');
select throws_ok(
  $$ select app.create_notification_batch('{"all": true}', '{"type": "SYSTEM", "title": "x"}') $$,
  'AG403', null,
  'Below ADMIN, a batch is refused (AG403).'
);

select tests.authenticate_as(:'ann');
select throws_ok($$ select app.create_notification_batch('{}', '{"type": "SYSTEM", "title": "x"}') $$,
  'AG400', null, 'An audience naming nobody is AG400.');
select throws_ok($$ select app.create_notification_batch('{"all": true}', '{"type": "SYSTEM", "title": ""}') $$,
  'AG400', null, 'An empty title is AG400.');
select throws_ok($$ select app.create_notification_batch('{"all": true}', '{"type": "NEWS", "title": "x"}') $$,
  '22P02', null, 'An unknown type is refused (invalid enum value, a 400).');

select app.create_notification_batch(
  jsonb_build_object('userIds', jsonb_build_array(:'m1', :'m2', :'m3'), 'roles', jsonb_build_array('SUBSCRIBER')),
  '{"type": "OPPORTUNITY", "title": "Grant round", "body": "Apply", "data": {"round": 3}}',
  array['inApp', 'push', 'email'], 'key-1', 'hash-1') as accepted \gset
select results_eq(
  format($$ select (%L::jsonb) ->> 'status', ((%L::jsonb) ->> 'recipients')::int, ((%L::jsonb) ->> 'replayed')::boolean $$, :'accepted', :'accepted', :'accepted'),
  $$ values ('queued', (select count(*)::int from app.users where status = 'active' and (role = 'SUBSCRIBER' or email in ('bat.m1@example.test', 'bat.m2@example.test'))), false) $$,
  'Accepted: queued, its recipients counted (the named users and every active SUBSCRIBER; the suspended one not).'
);
select (:'accepted'::jsonb) ->> 'id' as batch \gset
select results_eq(
  $$ select (app.create_notification_batch(jsonb_build_object('userIds', jsonb_build_array(gen_random_uuid())), '{"type": "SYSTEM", "title": "other"}', array['inApp'], 'key-1', 'hash-1')) ->> 'id' $$,
  format($$ values (%L) $$, :'batch'),
  'The same Idempotency-Key with the same request hash returns the same batch.'
);
select throws_ok(
  $$ select app.create_notification_batch('{"all": true}', '{"type": "SYSTEM", "title": "x"}', array['inApp'], 'key-1', 'hash-2') $$,
  'AG409', null,
  'The same key with another request is AG409.'
);
select tests.clear_authentication();
select results_eq(
  format($$ select kind, dedupe_key from app_private.jobs where payload ->> 'batchId' = %L $$, :'batch'),
  format($$ values ('notifications.batch', 'notifications.batch:' || %L) $$, :'batch'),
  'Its notifications.batch job is queued once.'
);
select is(
  (select count(*)::int from app.notifications where batch_id = :'batch'),
  0,
  'Nothing is written when the batch is accepted.'
);

-- The maximum from the configuration.
insert into app.config_versions (version, config, reason)
select max(version) + 1, '{"notifications": {"bulkMaxRecipients": 1}}', 'test' from app.config_versions;
select tests.authenticate_as(:'ann');
select throws_ok($$ select app.create_notification_batch('{"all": true}', '{"type": "SYSTEM", "title": "x"}') $$,
  'AG422', null, 'An audience over notifications.bulkMaxRecipients is AG422.');
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- Writing
-- ---------------------------------------------------------------------------------------------

select is(app_private.write_notification_batch(:'batch', 2) > 0, true, 'Planning the batch splits it into chunks...');
select is(
  (select count(*)::int from app.notifications where batch_id = :'batch'),
  0,
  '...and writes no notification: each chunk writes its own.'
);
select is(
  (select sum(app_private.write_batch_chunk(:'batch', c.chunk))::int
     from app_private.notification_batch_chunks c where c.batch_id = :'batch'),
  (:'accepted'::jsonb ->> 'recipients')::int,
  'Writing every chunk writes every recipient.'
);
select is(
  (select sum(app_private.write_batch_chunk(:'batch', c.chunk))::int
     from app_private.notification_batch_chunks c where c.batch_id = :'batch'),
  0,
  'A written chunk is not written again (written_at).'
);
select results_eq(
  format($$ select count(*)::int, count(*) filter (where inbox)::int, count(distinct user_id)::int
            from app.notifications where batch_id = %L $$, :'batch'),
  format($$ select (%L::jsonb ->> 'recipients')::int, (%L::jsonb ->> 'recipients')::int - 1, (%L::jsonb ->> 'recipients')::int $$, :'accepted', :'accepted', :'accepted'),
  'One row per recipient; the one with the type''s in-app channel off is kept out of the inbox.'
);
select is(
  (select count(*)::int from app.notifications where batch_id = :'batch' and user_id = :'m3'),
  0,
  'The suspended user got nothing.'
);
select results_eq(
  format($$ select d.channel::text, count(*)::int from app_private.notification_deliveries d
            join app.notifications n on n.id = d.notification_id where n.batch_id = %L group by 1 order by 1 $$, :'batch'),
  $$ values ('push', 2) $$,
  'Push rows for the devices (in-app off does not stop push); no e-mail: OPPORTUNITY has it off by default.'
);
select results_eq(
  format($$ select status::text, chunks = (select count(*)::int from app_private.notification_batch_chunks c where c.batch_id = %L)
            from app.notification_batches where id = %L $$, :'batch', :'batch'),
  $$ values ('sending', true) $$,
  'The batch is sending, with its chunk count.'
);
select is(
  (select count(*)::int from app_private.jobs where kind = 'notifications.batch_chunk' and payload ->> 'batchId' = :'batch'),
  (select count(*)::int from app_private.notification_batch_chunks where batch_id = :'batch'),
  'One chunk job per chunk.'
);

select lives_ok(format($$ select app_private.write_notification_batch(%L, 2) $$, :'batch'),
  'Planning it again (a drain that crashed after committing) works...');
select lives_ok(format($$ select app_private.write_batch_chunk(%L, c.chunk)
                          from app_private.notification_batch_chunks c where c.batch_id = %L $$, :'batch', :'batch'),
  '...so does writing its chunks again...');
select results_eq(
  format($$ select (select count(*)::int from app.notifications where batch_id = %L),
                   (select count(*)::int from app_private.jobs where kind = 'notifications.batch_chunk' and payload ->> 'batchId' = %L) $$, :'batch', :'batch'),
  format($$ values ((%L::jsonb ->> 'recipients')::int, (select count(*)::int from app_private.notification_batch_chunks where batch_id = %L)) $$, :'accepted', :'batch'),
  '...and writes nothing twice: the same rows, the same chunk jobs.'
);

-- ---------------------------------------------------------------------------------------------
-- Chunks
-- ---------------------------------------------------------------------------------------------

select app_private.announce_batch_chunk(:'batch', 0) as ids \gset
select is(
  (select count(*)::int from app.events where event = 'notification.created' and payload ->> 'title' = 'Grant round'),
  (select count(*)::int from app.notifications n
     join app_private.notification_batch_chunks c on c.batch_id = n.batch_id and c.chunk = 0
    where n.batch_id = :'batch' and n.inbox and n.user_id between c.first_user_id and c.last_user_id),
  'Announcing a chunk emits notification.created for its inbox rows...'
);
select lives_ok(format($$ select app_private.announce_batch_chunk(%L, 0) $$, :'batch'), 'Announcing it again...');
select is(
  (select count(*)::int from app.events where event = 'notification.created' and payload ->> 'title' = 'Grant round'),
  (select count(*)::int from app.notifications n
     join app_private.notification_batch_chunks c on c.batch_id = n.batch_id and c.chunk = 0
    where n.batch_id = :'batch' and n.inbox and n.user_id between c.first_user_id and c.last_user_id),
  '...emits nothing more.'
);
select is(
  (select bool_and(app_private.finish_batch_chunk(:'batch', c.chunk) is not null)
     from app_private.notification_batch_chunks c where c.batch_id = :'batch'),
  true,
  'Every chunk finishes...'
);
select results_eq(
  format($$ select status::text, finished_at is not null from app.notification_batches where id = %L $$, :'batch'),
  $$ values ('done', true) $$,
  '...and the last one marks the batch done.'
);

select tests.authenticate_as(:'ann');
select results_eq(
  format($$ select r ->> 'status', (r ->> 'created')::int, (r ->> 'pushSent')::int from app.notification_batch_progress(%L) r $$, :'batch'),
  format($$ values ('done', (%L::jsonb ->> 'recipients')::int - 1, 0) $$, :'accepted'),
  'Progress is the batch''s counters (inbox rows written, pushes sent so far).'
);
select tests.clear_authentication();
update app_private.notification_deliveries d set status = 'sent', finished_at = now()
from app.notifications n where n.id = d.notification_id and n.batch_id = :'batch' and d.channel = 'push';
select tests.authenticate_as(:'ann');
select results_eq(
  format($$ select (r ->> 'pushSent')::int, (r ->> 'pushFailed')::int from app.notification_batch_progress(%L) r $$, :'batch'),
  $$ values (2, 0) $$,
  'Deliveries leaving the queue, by any path, are added to the counters.'
);

select * from finish();
rollback;
