/*
 * Row level security of the notification tables, per persona (the owner, another user, an
 * ADMIN, a VISITOR, an anonymous visitor): each operation allowed once and denied once. The
 * inbox: a user reads, marks read and deletes only their own inbox rows (never a hidden one),
 * inserts nothing directly, changes nothing but read_at, never un-reads or backdates. Preferences:
 * one's own row only. Devices: one's own, without the token column; registration only through
 * the function. Batches: ADMINs read, nobody writes. Deliveries and chunks: no API role at all.
 */
begin;
select plan(45);

do $$
begin
  perform tests.create_user('rls.olive@example.test', 'MEMBER');      -- owner
  perform tests.create_user('rls.piet@example.test', 'MEMBER');       -- another user
  perform tests.create_user('rls.ada@example.test', 'ADMIN');         -- admin
  perform tests.create_user('rls.vera@example.test', 'VISITOR');      -- visitor
end
$$;

select tests.user_id('rls.olive@example.test') as olive \gset
select tests.user_id('rls.piet@example.test') as piet \gset
select tests.user_id('rls.ada@example.test') as ada \gset
select tests.user_id('rls.vera@example.test') as vera \gset

select app_private.notify(:'olive', 'SYSTEM', 'Olive one', '') as o1 \gset
select app_private.notify(:'olive', 'WALLET', 'Olive two', '') as o2 \gset
select app_private.notify(:'piet', 'SYSTEM', 'Piet one', '') as p1 \gset
select app_private.notify(:'vera', 'SYSTEM', 'Vera one', '') as v1 \gset
insert into app.notifications (user_id, type, title, body, inbox)
values (:'olive', 'ENTITY', 'Olive hidden', '', false);
select id as hidden from app.notifications where title = 'Olive hidden' \gset
insert into app.notification_preferences (user_id, types) values (:'piet', '{"WALLET": {"push": false}}');
insert into app.push_devices (user_id, token, platform) values
  (:'olive', 'rls-olive-token', 'android'), (:'piet', 'rls-piet-token', 'ios');

-- ---------------------------------------------------------------------------------------------
-- The owner
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'olive');

select results_eq(
  $$ select title from app.notifications order by title $$,
  $$ values ('Olive one'), ('Olive two') $$,
  'The owner reads exactly their own inbox rows (not the hidden one, not anyone else''s).'
);
select is(
  tests.row_count(format($$ update app.notifications set read_at = now() where id = %L $$, :'o1')),
  1::bigint,
  'The owner marks their own notification read.'
);
select is(
  (select read_at from app.notifications where id = :'o1'),
  now(),
  'The read time is the server''s.'
);
select lives_ok(
  format($$ update app.notifications set read_at = '2000-01-01' where id = %L $$, :'o2'),
  'Trying to backdate a read is not an error...'
);
select is(
  (select read_at from app.notifications where id = :'o2'),
  now(),
  '...but the stored read time is now, not the year 2000.'
);
select lives_ok(
  format($$ update app.notifications set read_at = null where id = %L $$, :'o1'),
  'Trying to mark a read notification unread is not an error...'
);
select isnt(
  (select read_at from app.notifications where id = :'o1'),
  null,
  '...but it stays read.'
);
select throws_ok(
  format($$ update app.notifications set title = 'Edited' where id = %L $$, :'o1'),
  '42501', null,
  'The owner cannot change anything but read_at (no column grant).'
);
select throws_ok(
  format($$ update app.notifications set user_id = %L where id = %L $$, :'piet', :'o1'),
  '42501', null,
  'The owner cannot give a notification to someone else.'
);
select throws_ok(
  format($$ insert into app.notifications (user_id, type, title, body) values (%L, 'SYSTEM', 'Forged', '') $$, :'olive'),
  '42501', null,
  'Nobody inserts notifications directly, not even into their own inbox.'
);
select throws_ok(
  format($$ delete from app.notifications where id = %L $$, :'o1'),
  '42501', null,
  'No direct delete: the API function is the only way.'
);
select is(
  tests.row_count(format($$ update app.notifications set read_at = now() where id = %L $$, :'hidden')),
  0::bigint,
  'A hidden row of one''s own is out of reach.'
);
select results_eq(
  format($$ select app.delete_notification(%L) $$, :'o2'),
  format($$ values (jsonb_build_object('id', %L::uuid, 'deleted', true)) $$, :'o2'),
  'app.delete_notification deletes one''s own notification.'
);
select throws_ok(
  format($$ select app.delete_notification(%L) $$, :'hidden'),
  'AG404', null,
  'A hidden row of one''s own cannot be deleted through it either (AG404).'
);
select results_eq(
  $$ select user_id, types from app.notification_preferences $$,
  $$ select null::uuid, null::jsonb where false $$,
  'The owner has no preferences row yet, and sees nobody else''s.'
);
select lives_ok(
  format($$ insert into app.notification_preferences (user_id, types) values (%L, '{"SYSTEM": {"email": false}}') $$, :'olive'),
  'The owner writes their own preferences row.'
);
select is(
  tests.row_count($$ update app.notification_preferences set types = '{}' where user_id = auth.uid() $$),
  1::bigint,
  'The owner updates their own preferences.'
);
select results_eq(
  $$ select platform::text, device_name from app.push_devices $$,
  $$ values ('android', null::text) $$,
  'The owner sees their own device...'
);
select throws_ok(
  $$ select token from app.push_devices $$,
  '42501', null,
  '...but never a token (no column grant).'
);
select throws_ok(
  format($$ insert into app.push_devices (user_id, token, platform) values (%L, 'forged', 'web') $$, :'olive'),
  '42501', null,
  'Devices are not inserted directly (app.register_push_device is the way).'
);
select throws_ok(
  $$ delete from app.push_devices $$,
  '42501', null,
  'Devices are not deleted directly (app.unregister_push_device is the way).'
);

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'piet');

select results_eq(
  $$ select title from app.notifications $$,
  $$ values ('Piet one') $$,
  'Another user reads only their own notifications.'
);
select is(
  tests.row_count(format($$ update app.notifications set read_at = now() where id = %L $$, :'o1')),
  0::bigint,
  'Another user''s notification cannot be marked read (filtered out).'
);
select throws_ok(
  format($$ select app.delete_notification(%L) $$, :'o1'),
  'AG404', null,
  'Deleting another user''s notification is AG404.'
);
select is(
  (select count(*)::int from app.notification_preferences),
  1,
  'Another user sees only their own preferences row.'
);
select is(
  tests.row_count(format($$ update app.notification_preferences set types = '{}' where user_id = %L $$, :'olive')),
  0::bigint,
  'Another user cannot change the owner''s preferences.'
);
select throws_ok(
  format($$ insert into app.notification_preferences (user_id) values (%L) $$, :'ada'),
  '42501', null,
  'Nobody writes a preferences row for someone else.'
);
select is(
  (select count(*)::int from app.push_devices),
  1,
  'Another user sees only their own device.'
);
select throws_ok(
  $$ select app.unregister_push_device('rls-olive-token') $$,
  'AG404', null,
  'Another user cannot unregister the owner''s token: it is unknown to them (AG404).'
);
select is(
  (select count(*)::int from app.notification_batches),
  0,
  'A member reads no batch.'
);

-- ---------------------------------------------------------------------------------------------
-- ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'ada');

select is(
  (select count(*)::int from app.notifications),
  0,
  'An ADMIN reads nobody else''s inbox (they have analytics for figures).'
);
select is(
  tests.row_count(format($$ update app.notifications set read_at = now() where id = %L $$, :'p1')),
  0::bigint,
  'An ADMIN cannot mark another user''s notification read.'
);
select is(
  (select count(*)::int from app.notification_preferences),
  0,
  'An ADMIN reads nobody else''s preferences.'
);
select is(
  (select count(*)::int from app.push_devices),
  0,
  'An ADMIN sees nobody else''s devices.'
);
select throws_ok(
  $$ insert into app.notification_batches (audience, type, title, body, channels) values ('{"all": true}', 'SYSTEM', 'x', '', array['inApp']) $$,
  '42501', null,
  'Even an ADMIN does not insert batches directly (app.create_notification_batch is the way).'
);

-- ---------------------------------------------------------------------------------------------
-- VISITOR
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(:'vera');

select results_eq(
  $$ select title from app.notifications $$,
  $$ values ('Vera one') $$,
  'A VISITOR reads their own inbox.'
);
select is(
  tests.row_count(format($$ update app.notifications set read_at = now() where id = %L $$, :'v1')),
  1::bigint,
  'A VISITOR marks their own notification read.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok($$ select count(*) from app.notifications $$, '42501', null,
  'An anonymous visitor cannot read app.notifications at all.');
select throws_ok($$ select count(*) from app.notification_preferences $$, '42501', null,
  'An anonymous visitor cannot read app.notification_preferences.');
select throws_ok($$ select count(*) from app.push_devices $$, '42501', null,
  'An anonymous visitor cannot read app.push_devices.');
select throws_ok($$ select app.notification_preferences_document() $$, '42501', null,
  'An anonymous visitor cannot call the preferences functions.');

select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- Server-only state and grants
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$ select format('%s has %s on %s', r.role, p.privilege, t.name)
     from (values ('app_private.notification_deliveries'), ('app_private.notification_batch_chunks')) t (name)
     cross join (values ('anon'), ('authenticated'), ('service_role')) r (role)
     cross join (values ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE')) p (privilege)
     where has_table_privilege(r.role, t.name, p.privilege) $$,
  'No API role (service_role included) holds any privilege on the delivery rows or batch chunks.'
);
select is_empty(
  $$ select p.oid::regprocedure::text from pg_proc p
     where p.pronamespace = 'app_private'::regnamespace
       and (p.proname in ('notify', 'notify_many', 'notify_rows', 'claim_message_digest', 'digest_conversation', 'inbox_page_for_session',
                          'take_deliveries', 'record_deliveries',
                          'write_notification_batch', 'announce_batch_chunk', 'finish_batch_chunk',
                          'notification_type_defaults'))
       and (has_function_privilege('authenticated', p.oid, 'execute')
            or has_function_privilege('anon', p.oid, 'execute')) $$,
  'None of the notifications'' server functions is executable by anon or authenticated.'
);
select ok(
  has_function_privilege('authenticated', 'app.create_notification(uuid, app.notification_type, text, text, jsonb, app.notification_priority)', 'execute')
  and has_function_privilege('authenticated', 'app.create_notification_batch(jsonb, jsonb, text[], text, text)', 'execute')
  and has_function_privilege('authenticated', 'app.notification_analytics(timestamptz, timestamptz, text, app.notification_type)', 'execute')
  and not has_function_privilege('anon', 'app.create_notification(uuid, app.notification_type, text, text, jsonb, app.notification_priority)', 'execute'),
  'The API functions are granted to authenticated only (each checks its caller).'
);
select ok(
  (select bool_and(c.relrowsecurity) from pg_class c
   where c.oid in ('app.notifications'::regclass, 'app.notification_preferences'::regclass,
                   'app.push_devices'::regclass, 'app.notification_batches'::regclass,
                   'app_private.notification_deliveries'::regclass,
                   'app_private.notification_batch_chunks'::regclass)),
  'RLS is on for every notification table.'
);

select * from finish();
rollback;
