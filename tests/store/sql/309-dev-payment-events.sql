/*
 * The dev payment provider's events: each is stored once with a store.dev_event_delivery job
 * queued to (re)deliver it; asking again while that job is live queues nothing more; once the job
 * ran out of attempts a new round is queued; an acknowledged event queues nothing. No API role
 * reaches the table or the functions.
 */
begin;
select plan(10);

insert into app_private.dev_payment_objects (id, object, data)
values ('pi_dev_tap_events', 'payment_intent', '{"id": "pi_dev_tap_events", "status": "succeeded"}');

select lives_ok(
  $$ select app_private.record_dev_event('evt_dev_tap', 'payment_intent.succeeded',
       'pi_dev_tap_events', '{"id": "evt_dev_tap"}', interval '5 seconds', 20) $$,
  'An event is recorded with its object.'
);
select results_eq(
  $$ select kind, payload ->> 'eventId', run_at = now() + interval '5 seconds', max_attempts, state::text
     from app_private.jobs where dedupe_key = 'dev-event:evt_dev_tap:1' $$,
  $$ values ('store.dev_event_delivery', 'evt_dev_tap', true, 20, 'queued') $$,
  'Its delivery job is queued in the same transaction, first run after the delay, with the cap of attempts.'
);
select is(
  app_private.queue_dev_event_delivery('evt_dev_tap', interval '5 seconds', 20),
  (select id from app_private.jobs where dedupe_key = 'dev-event:evt_dev_tap:1'),
  'Asking again while the job is live returns that job.'
);
select is((select count(*)::int from app_private.jobs where payload ->> 'eventId' = 'evt_dev_tap'), 1,
  'One job, however often it is asked for.');

update app_private.jobs set state = 'dead', finished_at = now()
where dedupe_key = 'dev-event:evt_dev_tap:1';
select isnt(
  app_private.queue_dev_event_delivery('evt_dev_tap', interval '5 seconds', 20),
  (select id from app_private.jobs where dedupe_key = 'dev-event:evt_dev_tap:1'),
  'After the job ran out of attempts, a new one is queued.'
);
select results_eq(
  $$ select delivery_rounds, delivery_job_id = (select id from app_private.jobs
                                                where dedupe_key = 'dev-event:evt_dev_tap:2')
     from app_private.dev_payment_events where id = 'evt_dev_tap' $$,
  $$ values (2, true) $$,
  'The event points at its second round''s job.'
);

update app_private.dev_payment_events set delivered_at = now() where id = 'evt_dev_tap';
select is(app_private.queue_dev_event_delivery('evt_dev_tap', interval '5 seconds', 20), null,
  'An acknowledged event queues nothing.');
select throws_ok(
  $$ select app_private.record_dev_event('evt_dev_tap', 'payment_intent.succeeded',
       'pi_dev_tap_events', '{"id": "evt_dev_tap"}', interval '5 seconds', 20) $$,
  '23505', null, 'An event id is stored once.'
);

select ok(
  not has_table_privilege('authenticated', 'app_private.dev_payment_events', 'select')
  and not has_table_privilege('anon', 'app_private.dev_payment_events', 'select'),
  'No API role reads the events.'
);
select ok(
  not has_function_privilege('authenticated',
        'app_private.record_dev_event(text, text, text, jsonb, interval, integer)', 'execute')
  and not has_function_privilege('authenticated',
        'app_private.queue_dev_event_delivery(text, interval, integer)', 'execute'),
  'No API role calls the functions.'
);

select * from finish();
rollback;
