-- Agora's schema as it is now, domain payments: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124110300_payments.sql
--   supabase/migrations/20261128120000_payments_dev_events.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- table app_private.dev_payment_events
-- created in 20261128120000_payments_dev_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.dev_payment_events (
    id text NOT NULL,
    type text NOT NULL,
    object_id text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_attempt_at timestamp with time zone,
    last_result text,
    delivered_at timestamp with time zone,
    delivery_job_id bigint,
    delivery_rounds integer DEFAULT 0 NOT NULL,
    CONSTRAINT dev_payment_events_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT dev_payment_events_delivery_rounds_check CHECK ((delivery_rounds >= 0)),
    CONSTRAINT dev_payment_events_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
    CONSTRAINT dev_payment_events_last_result_check CHECK ((char_length(last_result) <= 500)),
    CONSTRAINT dev_payment_events_payload_check CHECK ((jsonb_typeof(payload) = 'object'::text)),
    CONSTRAINT dev_payment_events_type_check CHECK (((char_length(type) >= 1) AND (char_length(type) <= 255)))
);

COMMENT ON TABLE app_private.dev_payment_events IS 'Every event the dev payment provider emits (payment_intent.succeeded, payment_intent.payment_failed, account.updated), written in the transaction of the change it reports, so none is lost between the change and its delivery. attempts, last_attempt_at and last_result say how delivering it went; delivered_at is set at the first 2xx of the webhook. delivery_job_id is the store.dev_event_delivery job that re-delivers it (no foreign key: finished jobs are pruned); delivery_rounds counts the jobs queued for it (a /succeed retried after the attempts ran out queues another).';

ALTER TABLE ONLY app_private.dev_payment_events
    ADD CONSTRAINT dev_payment_events_pkey PRIMARY KEY (id);

CREATE INDEX dev_payment_events_object_idx ON app_private.dev_payment_events USING btree (object_id, type, created_at);

CREATE INDEX dev_payment_events_undelivered_idx ON app_private.dev_payment_events USING btree (created_at) WHERE (delivered_at IS NULL);

ALTER TABLE ONLY app_private.dev_payment_events
    ADD CONSTRAINT dev_payment_events_object_id_fkey FOREIGN KEY (object_id) REFERENCES app_private.dev_payment_objects(id) ON DELETE CASCADE;

ALTER TABLE app_private.dev_payment_events ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.dev_payment_objects
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.dev_payment_objects (
    id text NOT NULL,
    object text NOT NULL,
    data jsonb NOT NULL,
    idempotency_key text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dev_payment_objects_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
    CONSTRAINT dev_payment_objects_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 300))),
    CONSTRAINT dev_payment_objects_object_check CHECK ((object = ANY (ARRAY['payment_intent'::text, 'refund'::text, 'account'::text, 'transfer'::text])))
);

COMMENT ON TABLE app_private.dev_payment_objects IS 'The dev payment provider''s state, used only when no Stripe key is configured: Stripe-shaped payment intents, refunds, accounts and transfers, so the local stack checks out and pays out end to end (POST /_dev/payments/<id>/succeed|fail). The idempotency key replays the first object, as Stripe''s does.';

ALTER TABLE ONLY app_private.dev_payment_objects
    ADD CONSTRAINT dev_payment_objects_idempotency_key_key UNIQUE (idempotency_key);

ALTER TABLE ONLY app_private.dev_payment_objects
    ADD CONSTRAINT dev_payment_objects_pkey PRIMARY KEY (id);

CREATE INDEX dev_payment_objects_object_idx ON app_private.dev_payment_objects USING btree (object, created_at);

CREATE TRIGGER dev_payment_objects_touch_updated_at BEFORE UPDATE ON app_private.dev_payment_objects FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

ALTER TABLE app_private.dev_payment_objects ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.stripe_events
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.stripe_events (
    id text NOT NULL,
    type text NOT NULL,
    livemode boolean DEFAULT false NOT NULL,
    payload jsonb NOT NULL,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    processed_at timestamp with time zone,
    outcome text,
    CONSTRAINT stripe_events_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
    CONSTRAINT stripe_events_type_check CHECK (((char_length(type) >= 1) AND (char_length(type) <= 255)))
);

COMMENT ON TABLE app_private.stripe_events IS 'Every verified webhook event of the payment provider, once: the primary key is the event id, so a replayed delivery inserts nothing and queues nothing. processed_at and outcome are set by the store.stripe_event job.';

ALTER TABLE ONLY app_private.stripe_events
    ADD CONSTRAINT stripe_events_pkey PRIMARY KEY (id);

CREATE INDEX stripe_events_received_idx ON app_private.stripe_events USING btree (received_at);

ALTER TABLE app_private.stripe_events ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app_private.apply_payment_intent
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean DEFAULT false) RETURNS text
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  checkout app.checkouts;
  ids uuid[];
  target app.orders;
  outcome text := 'paid';
begin
  select * into checkout from app.checkouts c where c.payment_intent_id = intent_id for update;
  if not found then
    return 'unknown';
  end if;

  if intent_status = 'succeeded' then
    if intent_amount <> checkout.total or upper(intent_currency) <> checkout.currency then
      return 'mismatch';
    end if;
    if checkout.payment_status = 'succeeded' then
      outcome := 'already_paid';
    end if;
    update app.checkouts c set payment_status = 'succeeded' where c.id = checkout.id;
    select array_agg(o.id order by o.id) into ids from app.orders o where o.checkout_id = checkout.id;
    perform 1 from app.orders o where o.id = any(ids) order by o.id for update;
    perform app_private.lock_order_products(ids);
    for target in select * from app.orders o where o.id = any(ids) order by o.id loop
      if target.status = 'pending_payment' then
        perform app_private.move_order(target, 'paid', 'system', null, 'payment succeeded');
      elsif target.status = 'cancelled' and target.payment_status in ('pending', 'failed') then
        -- Paid after it was cancelled (the reservation expired first): the money goes back.
        update app.orders o set payment_status = 'refunded' where o.id = target.id
        returning * into target;
        perform app_private.request_refund(target, 'paid after the order was cancelled', null);
        perform app_private.emit_order_event(target, 'order.status_changed');
      end if;
    end loop;
    perform app_private.close_checkout_if_settled(checkout.id);
    return outcome;
  end if;

  if intent_status = 'requires_payment_method' and attempt_failed
     and checkout.payment_status in ('pending', 'failed') then
    update app.checkouts c set payment_status = 'failed' where c.id = checkout.id;
    for target in
      update app.orders o set payment_status = 'failed'
      where o.checkout_id = checkout.id and o.status = 'pending_payment'
      returning *
    loop
      perform app_private.after_order_change(target, 'order.payment_failed');
    end loop;
    return 'failed';
  end if;
  return 'ignored';
end;
$$;

COMMENT ON FUNCTION app_private.apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean) IS 'What a PaymentIntent''s current state (read from the provider by the store.stripe_event job, never taken from the event) does to its checkout: success pays the unpaid orders (system actor) if amount and currency match, and refunds orders cancelled before the money came; a failed attempt marks the payment failed (payable again until the reservation expires). Idempotent: the same state twice changes nothing, so replayed and out-of-order events are harmless.';

REVOKE ALL ON FUNCTION app_private.apply_payment_intent(intent_id text, intent_status text, intent_amount bigint, intent_currency text, attempt_failed boolean) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.finish_stripe_event
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.finish_stripe_event(event_id text, event_outcome text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app_private.stripe_events e set processed_at = now(), outcome = event_outcome
  where e.id = event_id
$$;

COMMENT ON FUNCTION app_private.finish_stripe_event(event_id text, event_outcome text) IS 'Marks an event handled, with what it did (for operators reading app_private.stripe_events).';

REVOKE ALL ON FUNCTION app_private.finish_stripe_event(event_id text, event_outcome text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.queue_dev_event_delivery
-- created in 20261128120000_payments_dev_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.queue_dev_event_delivery(event_id text, first_delay interval, max_attempts integer) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.queue_dev_event_delivery(event_id text, first_delay interval, max_attempts integer) IS 'Makes sure a dev provider event the webhook has not acknowledged has a store.dev_event_delivery job queued or running (a new one, first run after first_delay, when its last one finished or ran out of attempts); nothing for an acknowledged event. Returns the job''s id, or null.';

REVOKE ALL ON FUNCTION app_private.queue_dev_event_delivery(event_id text, first_delay interval, max_attempts integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_dev_event
-- created in 20261128120000_payments_dev_events.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_dev_event(event_id text, event_type text, event_object_id text, event_payload jsonb, first_delay interval, max_attempts integer) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  insert into app_private.dev_payment_events (id, type, object_id, payload)
  values (event_id, event_type, event_object_id, event_payload);
  perform app_private.queue_dev_event_delivery(event_id, first_delay, max_attempts);
end;
$$;

COMMENT ON FUNCTION app_private.record_dev_event(event_id text, event_type text, event_object_id text, event_payload jsonb, first_delay interval, max_attempts integer) IS 'Stores an event of the dev payment provider and queues its (re)delivery job, called in the transaction that changes the object the event reports, so a change is never without its event. The request that made the change delivers it at once; the job is the retry, like Stripe''s.';

REVOKE ALL ON FUNCTION app_private.record_dev_event(event_id text, event_type text, event_object_id text, event_payload jsonb, first_delay interval, max_attempts integer) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_refund_result
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  target app.orders;
begin
  update app.refunds r
  set status = result,
      provider_refund_id = coalesce(refund_id, r.provider_refund_id),
      failure_reason = failure,
      succeeded_at = case when result = 'succeeded' then coalesce(r.succeeded_at, now()) else r.succeeded_at end
  where r.order_id = target_order_id and r.status <> result;
  if found then
    select * into target from app.orders o where o.id = target_order_id;
    perform app_private.after_order_change(target, 'order.refund_' || result::text);
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text) IS 'Records what the provider said to a refund (its id, succeeded or failed with the reason); repeating the same result changes nothing.';

REVOKE ALL ON FUNCTION app_private.record_refund_result(target_order_id uuid, refund_id text, result app.refund_status, failure text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_stripe_event
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  insert into app_private.stripe_events (id, type, livemode, payload)
  values (event_id, event_type, coalesce(event_livemode, false), event_payload)
  on conflict (id) do nothing;
  if not found then
    return false;
  end if;
  perform app_private.enqueue_job('store.stripe_event', jsonb_build_object('eventId', event_id),
                                  now(), 'stripe-event:' || event_id);
  return true;
end;
$$;

COMMENT ON FUNCTION app_private.record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb) IS 'The webhook''s one write: the event (verified by its signature before this) stored under its id and a store.stripe_event job queued, in one statement''s transaction; an event id seen before does nothing and returns false. Called by the webhook route on the API''s own connection.';

REVOKE ALL ON FUNCTION app_private.record_stripe_event(event_id text, event_type text, event_livemode boolean, event_payload jsonb) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.refund_to_make
-- created in 20261124110300_payments.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.refund_to_make(target_order_id uuid) RETURNS TABLE(payment_intent_id text, amount bigint, currency text, status app.refund_status)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select c.payment_intent_id, r.amount, r.currency, r.status
  from app.refunds r
  join app.orders o on o.id = r.order_id
  join app.checkouts c on c.id = o.checkout_id
  where r.order_id = target_order_id
$$;

COMMENT ON FUNCTION app_private.refund_to_make(target_order_id uuid) IS 'What a store.refund job needs: the checkout''s payment intent, the amount and currency owed, and the refund''s status (a succeeded one is not made again).';

REVOKE ALL ON FUNCTION app_private.refund_to_make(target_order_id uuid) FROM PUBLIC;
