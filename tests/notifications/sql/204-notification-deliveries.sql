/*
 * The delivery rows' life (app_private.take_deliveries and record_deliveries, used by the
 * notifications.deliver and batch chunk jobs): a claim per attempt (attempts + 1, a token), never
 * twice (claimed rows are not taken again; a row an interrupted attempt left claimed fails as
 * outcome_unknown), preferences checked again at delivery (channel off, suspended recipient,
 * device gone, address gone), quiet hours that began since (held back, with a job for their end), outcomes
 * recorded only with the claim's token (sent with FCM's name, pruned deleting the device, retry
 * due after Retry-After).
 */
begin;
select plan(27);

do $$
begin
  perform tests.create_user('dlv.kim@example.test', 'MEMBER');
  perform tests.create_user('dlv.lou@example.test', 'MEMBER');
end
$$;
select tests.user_id('dlv.kim@example.test') as kim \gset
select tests.user_id('dlv.lou@example.test') as lou \gset
insert into app.push_devices (user_id, token, platform) values
  (:'kim', 'dlv-kim-a', 'android'), (:'kim', 'dlv-kim-b', 'ios'), (:'lou', 'dlv-lou-a', 'web');

select app_private.notify(:'kim', 'SYSTEM', 'Hello Kim', 'body') as n1 \gset

-- ---------------------------------------------------------------------------------------------
-- Claims
-- ---------------------------------------------------------------------------------------------

create temporary table claimed on commit drop as
select * from app_private.take_deliveries(array[:'n1']::uuid[], 1000, '{}');

select results_eq(
  $$ select channel::text, device_token, email, notification ->> 'title' from claimed order by channel, device_token $$,
  $$ values ('email', null, 'dlv.kim@example.test', 'Hello Kim'),
            ('push', 'dlv-kim-a', 'dlv.kim@example.test', 'Hello Kim'),
            ('push', 'dlv-kim-b', 'dlv.kim@example.test', 'Hello Kim') $$,
  'take_deliveries returns the due rows with what sending needs: tokens, the address, the notification.'
);
select ok(
  (select bool_and(attempts = 1 and in_flight_since is not null and in_flight_token is not null)
     from app_private.notification_deliveries where notification_id = :'n1'),
  'Each taken row is claimed for this attempt: attempts 1, in flight, a token.'
);
select is_empty(
  format($$ select * from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n1'),
  'Rows in flight are not taken again by a concurrent call...'
);
select is(
  (select count(*)::int from app_private.notification_deliveries where notification_id = :'n1' and status = 'failed' and error_code = 'outcome_unknown'),
  3,
  '...a later attempt finds them still in flight (the first never recorded an outcome) and fails them as outcome_unknown: never sent twice.'
);

-- ---------------------------------------------------------------------------------------------
-- Outcomes
-- ---------------------------------------------------------------------------------------------

select app_private.notify(:'kim', 'SYSTEM', 'Second', '') as n2 \gset
create temporary table second_claim on commit drop as
select * from app_private.take_deliveries(array[:'n2']::uuid[], 1000, '{}');

select is(
  app_private.record_deliveries((
    select jsonb_agg(jsonb_build_object('id', c.delivery_id, 'token', gen_random_uuid(), 'outcome', 'sent'))
    from second_claim c)),
  0,
  'An outcome with another claim''s token is not recorded.'
);
select is(
  app_private.record_deliveries((
    select jsonb_agg(case
      when c.device_token = 'dlv-kim-a' then jsonb_build_object('id', c.delivery_id, 'token', c.attempt_token, 'outcome', 'sent', 'providerId', 'projects/p/messages/1')
      when c.device_token = 'dlv-kim-b' then jsonb_build_object('id', c.delivery_id, 'token', c.attempt_token, 'outcome', 'pruned', 'code', 'UNREGISTERED')
      else jsonb_build_object('id', c.delivery_id, 'token', c.attempt_token, 'outcome', 'retry', 'code', 'mail_error', 'retryAfter', 30)
    end) from second_claim c)),
  3,
  'The claim''s own outcomes are recorded.'
);
select results_eq(
  format($$ select d.channel::text, d.status::text, d.error_code, d.provider_message_id, d.finished_at is not null,
                   d.in_flight_since is null
            from app_private.notification_deliveries d where d.notification_id = %L order by d.channel, d.status $$, :'n2'),
  $$ values ('push', 'sent', null, 'projects/p/messages/1', true, true),
            ('push', 'pruned', 'UNREGISTERED', null, true, true),
            ('email', 'queued', 'mail_error', null, false, true) $$,
  'sent keeps FCM''s message name, pruned FCM''s code, retry goes back to the queue.'
);
select ok(
  (select not_before between now() + interval '29 seconds' and now() + interval '31 seconds'
     from app_private.notification_deliveries where notification_id = :'n2' and channel = 'email'),
  'A retry is due after its Retry-After (30 s).'
);
select results_eq(
  format($$ select token from app.push_devices where user_id = %L $$, :'kim'),
  $$ values ('dlv-kim-a') $$,
  'The pruned token''s device is deleted.'
);
select is_empty(
  format($$ select * from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n2'),
  'Nothing is due yet: sent rows are never taken again and the retry waits.'
);
update app_private.notification_deliveries set not_before = now() where notification_id = :'n2' and status = 'queued';
select results_eq(
  format($$ select channel::text from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n2'),
  $$ values ('email') $$,
  'Once due, only the retried row is taken.'
);
select is(
  (select attempts from app_private.notification_deliveries where notification_id = :'n2' and channel = 'email'),
  2,
  'Its second attempt.'
);

-- ---------------------------------------------------------------------------------------------
-- Preferences and state again, at delivery
-- ---------------------------------------------------------------------------------------------

select app_private.notify(:'lou', 'WALLET', 'Paid', '') as n3 \gset
insert into app.notification_preferences (user_id, types) values (:'lou', '{"WALLET": {"push": false}}');
select is_empty(
  format($$ select * from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n3'),
  'A channel turned off after queueing is not sent...'
);
select results_eq(
  format($$ select status::text, error_code from app_private.notification_deliveries where notification_id = %L $$, :'n3'),
  $$ values ('failed', 'preference_off') $$,
  '...its row says so (failed, preference_off).'
);

select app_private.notify(:'lou', 'SYSTEM', 'Critical', '', '{}', 'critical') as n4 \gset
update app.notification_preferences set types = '{"SYSTEM": {"push": false, "email": false}}' where user_id = :'lou';
select is(
  (select count(*)::int from app_private.take_deliveries(array[:'n4']::uuid[], 1000, '{}')),
  2,
  'A critical notification is sent whatever the preferences say by then.'
);

select app_private.notify(:'lou', 'SYSTEM', 'Suspended soon', '', '{}', 'critical') as n5 \gset
update app.users set status = 'suspended' where id = :'lou';
select is_empty(
  format($$ select * from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n5'),
  'Nothing goes to a recipient suspended since...'
);
select results_eq(
  format($$ select distinct error_code from app_private.notification_deliveries where notification_id = %L $$, :'n5'),
  $$ values ('recipient_suspended') $$,
  '...(failed, recipient_suspended).'
);
update app.users set status = 'active' where id = :'lou';

select app_private.notify(:'kim', 'ENTITY', 'Device gone', '') as n6 \gset
delete from app.push_devices where user_id = :'kim';
select is_empty(
  format($$ select * from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n6'),
  'A device unregistered since gets nothing...'
);
select results_eq(
  format($$ select status::text, error_code from app_private.notification_deliveries where notification_id = %L $$, :'n6'),
  $$ values ('failed', 'device_gone') $$,
  '...(failed, device_gone).'
);

select app_private.notify(:'lou', 'SYSTEM', 'Address gone', '', '{}', 'critical') as n6b \gset
update app.users set email = null where id = :'lou';
select results_eq(
  format($$ select channel::text from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n6b'),
  $$ values ('push') $$,
  'An e-mail address erased since queueing: only the push goes...'
);
select results_eq(
  format($$ select status::text, error_code from app_private.notification_deliveries where notification_id = %L and channel = 'email' $$, :'n6b'),
  $$ values ('failed', 'no_email_address') $$,
  '...the e-mail fails as no_email_address.'
);
update app.users set email = 'dlv.lou@example.test' where id = :'lou';

-- Quiet hours that began since queueing.
insert into app.push_devices (user_id, token, platform) values (:'kim', 'dlv-kim-c', 'web');
select app_private.notify(:'kim', 'ENTITY', 'Late', '') as n7 \gset
insert into app.notification_preferences (user_id, quiet_start, quiet_end, quiet_time_zone)
values (:'kim', date_trunc('minute', now() - interval '10 minutes')::time,
        date_trunc('minute', now() + interval '50 minutes')::time, 'UTC');
select is_empty(
  format($$ select * from app_private.take_deliveries(array[%L]::uuid[], 1000, '{}') $$, :'n7'),
  'Quiet hours that began after queueing hold the delivery back...'
);
select results_eq(
  format($$ select d.not_before = date_trunc('minute', now() + interval '50 minutes'),
                   (select j.run_at from app_private.jobs j where j.kind = 'notifications.deliver'
                      and j.payload -> 'notificationIds' ? %L and j.run_at > now()) = d.not_before
            from app_private.notification_deliveries d where d.notification_id = %L $$, :'n7', :'n7'),
  $$ values (true, true) $$,
  '...until they end, with a notifications.deliver job queued for then.'
);

-- Slices: a claim takes at most max_rows; the rest stays queued and unclaimed.
do $$ begin perform tests.create_user('dlv.sam@example.test', 'MEMBER'); end $$;
insert into app.push_devices (user_id, token, platform) values
  (tests.user_id('dlv.sam@example.test'), 'dlv-sam-a', 'android'),
  (tests.user_id('dlv.sam@example.test'), 'dlv-sam-b', 'ios'),
  (tests.user_id('dlv.sam@example.test'), 'dlv-sam-c', 'web');
select app_private.notify(tests.user_id('dlv.sam@example.test'), 'SYSTEM', 'Sliced', '') as n8 \gset
select is(
  (select count(*)::int from app_private.take_deliveries(array[:'n8']::uuid[], 2, '{}')),
  2,
  'take_deliveries claims at most max_rows deliveries...'
);
select results_eq(
  format($$ select count(*) filter (where in_flight_since is not null)::int,
                   count(*) filter (where in_flight_since is null and status = 'queued' and attempts = 0)::int
            from app_private.notification_deliveries where notification_id = %L $$, :'n8'),
  $$ values (2, 2) $$,
  '...and leaves the others queued, unclaimed and untried (3 pushes and an e-mail: 2 and 2).'
);
-- An attempt that died with its slice in flight: the next call fails that slice only.
select is(
  (select count(*)::int from app_private.take_deliveries(array[:'n8']::uuid[], 10, '{}')),
  2,
  'The next attempt takes the two never claimed...'
);
select results_eq(
  format($$ select status::text, error_code, count(*)::int from app_private.notification_deliveries
            where notification_id = %L group by 1, 2 order by 1, 2 $$, :'n8'),
  $$ values ('failed', 'outcome_unknown', 2), ('queued', null, 2) $$,
  '...and fails only the two the dead attempt had in flight as outcome_unknown.'
);

select * from finish();
rollback;
