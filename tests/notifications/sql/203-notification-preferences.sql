/*
 * Preferences and devices through their API functions: the effective document (choices over
 * configured defaults), partial updates merged channel by channel, the validation every write
 * meets (unknown types and channels, non-boolean values, times off the minute, empty periods,
 * time zones unknown to pg_timezone_names: AG400), and device registration (new, known, moved
 * from another user as a new device, unregistering one's own only).
 */
begin;
select plan(22);

do $$
begin
  perform tests.create_user('pref.ida@example.test', 'MEMBER');
  perform tests.create_user('pref.jon@example.test', 'SUBSCRIBER');
end
$$;
select tests.user_id('pref.ida@example.test') as ida \gset
select tests.user_id('pref.jon@example.test') as jon \gset

select tests.authenticate_as(:'ida');

select results_eq(
  $$ select app.notification_preferences_document() -> 'types' -> 'SYSTEM', app.notification_preferences_document() -> 'quietHours',
            app.notification_preferences_document() -> 'updatedAt' $$,
  $$ values ('{"inApp": true, "push": true, "email": true}'::jsonb, 'null'::jsonb, 'null'::jsonb) $$,
  'Before any choice: the configured defaults (SYSTEM e-mails), no quiet hours, no updatedAt.'
);
select is(
  (select count(*)::int from jsonb_object_keys(app.notification_preferences_document() -> 'types')),
  5,
  'Every type is in the document.'
);

select results_eq(
  $$ select app.update_notification_preferences('{"types": {"MESSAGE": {"push": false}}, "quietHours": {"start": "22:00", "end": "06:30", "timeZone": "Asia/Tokyo"}}') -> 'types' -> 'MESSAGE' $$,
  $$ values ('{"inApp": true, "push": false, "email": false}'::jsonb) $$,
  'A partial update changes one channel of one type...'
);
select results_eq(
  $$ select types, quiet_start, quiet_end, quiet_time_zone from app.notification_preferences $$,
  $$ values ('{"MESSAGE": {"push": false}}'::jsonb, '22:00'::time, '06:30'::time, 'Asia/Tokyo') $$,
  '...and stores only the choice made, with the quiet hours.'
);
select results_eq(
  $$ select app.update_notification_preferences('{"types": {"MESSAGE": {"email": true}, "WALLET": {"inApp": false}}}') -> 'types' -> 'MESSAGE' $$,
  $$ values ('{"inApp": true, "push": false, "email": true}'::jsonb) $$,
  'A second update merges channel by channel (push stays off, e-mail on).'
);
select results_eq(
  $$ select app.notification_preferences_document() -> 'quietHours' $$,
  $$ values ('{"start": "22:00", "end": "06:30", "timeZone": "Asia/Tokyo"}'::jsonb) $$,
  'Quiet hours not named in an update are kept.'
);
select results_eq(
  $$ select app.update_notification_preferences('{"quietHours": null}') -> 'quietHours' $$,
  $$ values ('null'::jsonb) $$,
  'quietHours null clears them.'
);

select throws_ok($$ select app.update_notification_preferences('{"types": {"NEWS": {"push": false}}}') $$,
  'AG400', 'unknown notification type NEWS', 'An unknown type is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"types": {"MESSAGE": {"sms": true}}}') $$,
  'AG400', null, 'An unknown channel is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"types": {"MESSAGE": {"push": "yes"}}}') $$,
  'AG400', null, 'A channel that is not true or false is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"types": {"MESSAGE": true}}') $$,
  'AG400', null, 'A type that is not an object of channels is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"quietHours": {"start": "24:00", "end": "06:00", "timeZone": "UTC"}}') $$,
  'AG400', null, 'A time that is not HH:MM is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"quietHours": {"start": "08:00", "end": "08:00", "timeZone": "UTC"}}') $$,
  'AG400', 'quiet hours start and end at different times', 'An empty quiet period is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"quietHours": {"start": "22:00", "end": "06:00", "timeZone": "Europe/Atlantis"}}') $$,
  'AG400', 'unknown time zone Europe/Atlantis', 'A time zone unknown to pg_timezone_names is AG400.');
select throws_ok($$ select app.update_notification_preferences('{"snooze": true}') $$,
  'AG400', null, 'Unknown keys are AG400.');
select throws_ok(
  format($$ update app.notification_preferences set quiet_start = '22:00:30', quiet_end = '06:00', quiet_time_zone = 'UTC' where user_id = %L $$, :'ida'),
  'AG400', null,
  'A direct write is validated too: times are whole minutes.'
);

-- ---------------------------------------------------------------------------------------------
-- Devices
-- ---------------------------------------------------------------------------------------------

select device_id as d1 from app.register_push_device('pref-token-1', 'android', 'Pixel') \gset
select results_eq(
  $$ select device_id is not null, platform::text, created from app.register_push_device('pref-token-1', 'android', null) $$,
  $$ values (true, 'android', false) $$,
  'Registering a token one already has answers created = false...'
);
select is(
  (select device_id from app.register_push_device('pref-token-1', 'android', null)),
  :'d1'::uuid,
  '...and keeps the same device.'
);

select tests.authenticate_as(:'jon');
select results_eq(
  $$ select created from app.register_push_device('pref-token-1', 'web', 'Laptop') $$,
  $$ values (true) $$,
  'Another user registering the same token gets it (created = true)...'
);
select tests.clear_authentication();
select results_eq(
  $$ select user_id, platform::text, device_name from app.push_devices where token = 'pref-token-1' $$,
  format($$ values (%L::uuid, 'web', 'Laptop') $$, :'jon'),
  '...as a new device of theirs; the previous owner''s row is gone.'
);
select isnt(
  (select id from app.push_devices where token = 'pref-token-1'),
  :'d1'::uuid,
  'The moved token has a new device id, so deliveries queued for the previous owner cannot reach it.'
);

select tests.authenticate_as(:'ida');
select throws_ok($$ select app.unregister_push_device('pref-token-1') $$, 'AG404', null,
  'The previous owner cannot unregister it any more (AG404).');

select * from finish();
rollback;
