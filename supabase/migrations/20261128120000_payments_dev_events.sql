/*
 * The dev payment provider's events, kept and re-delivered as Stripe's are. Before this, the
 * provider built an event, posted it once to the webhook route and forgot it: a webhook that
 * answered 5xx (Postgres restarting) or a process that died between changing the intent and
 * posting left the orders unpaid for good. Now every event is a row written in the transaction
 * of the change it reports, with its delivery state, and a store.dev_event_delivery job posts it
 * (signed at each attempt) until the webhook answers 2xx or the attempts run out
 * (functions/api/store/dev-provider.ts has the schedule; docs/store.md says it).
 *
 * Local only in practice: the dev provider runs when no Stripe key is configured.
 *
 * Tables: app_private.dev_payment_events (new). Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app_private.dev_payment_events (
  id text primary key check (char_length(id) between 1 and 255),
  type text not null check (char_length(type) between 1 and 255),
  object_id text not null references app_private.dev_payment_objects (id) on delete cascade,
  payload jsonb not null check (jsonb_typeof(payload) = 'object'),
  created_at timestamptz not null default now(),
  attempts integer not null default 0 check (attempts >= 0),
  last_attempt_at timestamptz,
  last_result text check (char_length(last_result) <= 500),
  delivered_at timestamptz,
  delivery_job_id bigint,
  delivery_rounds integer not null default 0 check (delivery_rounds >= 0)
);
comment on table app_private.dev_payment_events is
  'Every event the dev payment provider emits (payment_intent.succeeded, payment_intent.payment_failed, account.updated), written in the transaction of the change it reports, so none is lost between the change and its delivery. attempts, last_attempt_at and last_result say how delivering it went; delivered_at is set at the first 2xx of the webhook. delivery_job_id is the store.dev_event_delivery job that re-delivers it (no foreign key: finished jobs are pruned); delivery_rounds counts the jobs queued for it (a /succeed retried after the attempts ran out queues another).';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create index dev_payment_events_object_idx
  on app_private.dev_payment_events (object_id, type, created_at);
create index dev_payment_events_undelivered_idx
  on app_private.dev_payment_events (created_at) where delivered_at is null;

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app_private.dev_payment_events enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions (server paths: none is executable by an API role)
-- ---------------------------------------------------------------------------------------------

/* A live delivery job for an event not yet acknowledged: the one there is, or a new one. */
create function app_private.queue_dev_event_delivery(
  event_id text,
  first_delay interval,
  max_attempts integer
) returns bigint
language plpgsql volatile
set search_path = ''
as $$
declare
  event app_private.dev_payment_events;
  job_id bigint;
begin
  select * into event from app_private.dev_payment_events e where e.id = event_id for update;
  if not found or event.delivered_at is not null then
    return null;
  end if;
  select j.id into job_id from app_private.jobs j
  where j.id = event.delivery_job_id and j.state in ('queued', 'running');
  if job_id is not null then
    return job_id;
  end if;
  job_id := app_private.enqueue_job(
    'store.dev_event_delivery', jsonb_build_object('eventId', event_id), now() + first_delay,
    'dev-event:' || event_id || ':' || (event.delivery_rounds + 1), max_attempts
  );
  update app_private.dev_payment_events e
  set delivery_job_id = job_id, delivery_rounds = event.delivery_rounds + 1
  where e.id = event_id;
  return job_id;
end;
$$;
comment on function app_private.queue_dev_event_delivery(text, interval, integer) is
  'Makes sure a dev provider event the webhook has not acknowledged has a store.dev_event_delivery job queued or running (a new one, first run after first_delay, when its last one finished or ran out of attempts); nothing for an acknowledged event. Returns the job''s id, or null.';

/* The dev provider's event, recorded with the change it reports, and its delivery queued. */
create function app_private.record_dev_event(
  event_id text,
  event_type text,
  event_object_id text,
  event_payload jsonb,
  first_delay interval,
  max_attempts integer
) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  insert into app_private.dev_payment_events (id, type, object_id, payload)
  values (event_id, event_type, event_object_id, event_payload);
  perform app_private.queue_dev_event_delivery(event_id, first_delay, max_attempts);
end;
$$;
comment on function app_private.record_dev_event(text, text, text, jsonb, interval, integer) is
  'Stores an event of the dev payment provider and queues its (re)delivery job, called in the transaction that changes the object the event reports, so a change is never without its event. The request that made the change delivers it at once; the job is the retry, like Stripe''s.';

revoke execute on all functions in schema app, app_private from public;
