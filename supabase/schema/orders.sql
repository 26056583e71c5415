-- Agora's schema as it is now, domain orders: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124110200_orders.sql
--   supabase/migrations/20261129100500_orders_one_policy_per_operation.sql
--   supabase/migrations/20261129140100_orders_resume_payment.sql
--   supabase/migrations/20261130080000_orders_buyer_name.sql
--   supabase/migrations/20261206000200_orders_buyer_name_by_id.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.order_actor
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.order_actor AS ENUM (
    'buyer',
    'vendor',
    'admin',
    'system'
);

COMMENT ON TYPE app.order_actor IS 'Who moves an order: its buyer, its vendor''s owner, an ADMIN, or the system (payments, expiry, auto-completion).';

GRANT ALL ON TYPE app.order_actor TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.order_status
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.order_status AS ENUM (
    'pending_payment',
    'paid',
    'processing',
    'shipped',
    'delivered',
    'completed',
    'cancelled',
    'refunded'
);

COMMENT ON TYPE app.order_status IS 'Where an order is; app.order_transitions says which moves exist and who may make them.';

GRANT ALL ON TYPE app.order_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.payment_status
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.payment_status AS ENUM (
    'pending',
    'succeeded',
    'failed',
    'refunded'
);

COMMENT ON TYPE app.payment_status IS 'The payment of a checkout and of each of its orders: pending (not paid yet), succeeded, failed (the last attempt failed; payable again until the reservation expires), refunded (a refund is owed or made: app.refunds says which).';

GRANT ALL ON TYPE app.payment_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.refund_status
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.refund_status AS ENUM (
    'pending',
    'succeeded',
    'failed'
);

COMMENT ON TYPE app.refund_status IS 'A refund owed to a buyer: pending (queued for the payment provider), succeeded (the provider accepted it), failed (the provider refused it; an operator must look).';

GRANT ALL ON TYPE app.refund_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.checkouts
-- created in 20261124110200_orders.sql; last changed in 20261129100500_orders_one_policy_per_operation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.checkouts (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    buyer_id uuid,
    total bigint NOT NULL,
    currency text NOT NULL,
    provider text NOT NULL,
    payment_intent_id text,
    payment_status app.payment_status DEFAULT 'pending'::app.payment_status NOT NULL,
    idempotency_key text,
    reserved_until timestamp with time zone NOT NULL,
    closed_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT checkouts_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT checkouts_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 255))),
    CONSTRAINT checkouts_payment_intent_id_check CHECK (((char_length(payment_intent_id) >= 1) AND (char_length(payment_intent_id) <= 255))),
    CONSTRAINT checkouts_provider_check CHECK ((provider = ANY (ARRAY['stripe'::text, 'dev'::text]))),
    CONSTRAINT checkouts_total_check CHECK ((total > 0))
);

COMMENT ON TABLE app.checkouts IS 'The orders a buyer pays together: one PaymentIntent (transfer_group = this id) for their total. reserved_until is when unpaid stock goes back; closed_at is set once no order of it awaits payment. Written only by the order functions.';

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_buyer_idempotency_key UNIQUE (buyer_id, idempotency_key);

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_payment_intent_id_key UNIQUE (payment_intent_id);

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_pkey PRIMARY KEY (id);

CREATE INDEX checkouts_buyer_idx ON app.checkouts USING btree (buyer_id, created_at DESC);

CREATE INDEX checkouts_open_reserved_until_idx ON app.checkouts USING btree (reserved_until) WHERE (closed_at IS NULL);

CREATE TRIGGER checkouts_touch_updated_at BEFORE UPDATE ON app.checkouts FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

ALTER TABLE ONLY app.checkouts
    ADD CONSTRAINT checkouts_buyer_id_fkey FOREIGN KEY (buyer_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.checkouts ENABLE ROW LEVEL SECURITY;

CREATE POLICY checkouts_select_buyer_or_admin ON app.checkouts FOR SELECT TO authenticated USING ((((buyer_id = ( SELECT auth.uid() AS uid)) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.checkouts TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.order_history
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.order_history (
    id bigint NOT NULL,
    order_id uuid NOT NULL,
    from_status app.order_status,
    to_status app.order_status NOT NULL,
    actor app.order_actor NOT NULL,
    actor_id uuid,
    reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT order_history_reason_check CHECK ((char_length(reason) <= 1000))
);

COMMENT ON TABLE app.order_history IS 'Every move of an order (the first row is its creation, from null), who made it and why. Append-only: written by app_private.move_order and the checkout.';

ALTER TABLE app.order_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.order_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.order_history
    ADD CONSTRAINT order_history_pkey PRIMARY KEY (id);

CREATE INDEX order_history_actor_idx ON app.order_history USING btree (actor_id);

CREATE INDEX order_history_order_idx ON app.order_history USING btree (order_id, id);

ALTER TABLE ONLY app.order_history
    ADD CONSTRAINT order_history_actor_id_fkey FOREIGN KEY (actor_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.order_history
    ADD CONSTRAINT order_history_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;

ALTER TABLE app.order_history ENABLE ROW LEVEL SECURITY;

CREATE POLICY order_history_select_visible ON app.order_history FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.orders o
  WHERE (o.id = order_history.order_id))));

GRANT SELECT ON TABLE app.order_history TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.order_items
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.order_items (
    order_id uuid NOT NULL,
    product_id uuid NOT NULL,
    title text NOT NULL,
    unit_price bigint NOT NULL,
    quantity integer NOT NULL,
    total bigint NOT NULL,
    CONSTRAINT order_items_quantity_check CHECK (((quantity >= 1) AND (quantity <= 1000))),
    CONSTRAINT order_items_total CHECK ((total = (unit_price * quantity))),
    CONSTRAINT order_items_unit_price_check CHECK ((unit_price > 0))
);

COMMENT ON TABLE app.order_items IS 'What an order holds, with the title and unit price taken from the product by the server at checkout (a client''s prices are never read).';

ALTER TABLE ONLY app.order_items
    ADD CONSTRAINT order_items_pkey PRIMARY KEY (order_id, product_id);

CREATE INDEX order_items_product_idx ON app.order_items USING btree (product_id);

ALTER TABLE ONLY app.order_items
    ADD CONSTRAINT order_items_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.order_items
    ADD CONSTRAINT order_items_product_id_fkey FOREIGN KEY (product_id) REFERENCES app.products(id) ON DELETE RESTRICT;

ALTER TABLE app.order_items ENABLE ROW LEVEL SECURITY;

CREATE POLICY order_items_select_visible ON app.order_items FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.orders o
  WHERE (o.id = order_items.order_id))));

GRANT SELECT ON TABLE app.order_items TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.order_transitions
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.order_transitions (
    from_status app.order_status NOT NULL,
    to_status app.order_status NOT NULL,
    actor app.order_actor NOT NULL
);

COMMENT ON TABLE app.order_transitions IS 'The order state machine as data, exactly the contract''s table: each allowed move and each actor who may make it. app.change_order_status and app_private.move_order accept nothing else.';

ALTER TABLE ONLY app.order_transitions
    ADD CONSTRAINT order_transitions_pkey PRIMARY KEY (from_status, to_status, actor);

ALTER TABLE app.order_transitions ENABLE ROW LEVEL SECURITY;

CREATE POLICY order_transitions_select_all ON app.order_transitions FOR SELECT TO authenticated USING (true);

GRANT SELECT ON TABLE app.order_transitions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.orders
-- created in 20261124110200_orders.sql; last changed in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.orders (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    checkout_id uuid NOT NULL,
    buyer_id uuid,
    vendor_id uuid NOT NULL,
    vendor_name text NOT NULL,
    status app.order_status DEFAULT 'pending_payment'::app.order_status NOT NULL,
    total bigint NOT NULL,
    currency text NOT NULL,
    payment_status app.payment_status DEFAULT 'pending'::app.payment_status NOT NULL,
    shipping_address jsonb,
    carrier text,
    tracking_number text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paid_at timestamp with time zone,
    shipped_at timestamp with time zone,
    delivered_at timestamp with time zone,
    completed_at timestamp with time zone,
    cancelled_at timestamp with time zone,
    refunded_at timestamp with time zone,
    sale_settled boolean DEFAULT false NOT NULL,
    refund_settled boolean DEFAULT false NOT NULL,
    CONSTRAINT orders_carrier_check CHECK (((char_length(carrier) >= 1) AND (char_length(carrier) <= 100))),
    CONSTRAINT orders_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT orders_total_check CHECK ((total > 0)),
    CONSTRAINT orders_tracking_number_check CHECK (((char_length(tracking_number) >= 1) AND (char_length(tracking_number) <= 100)))
);

COMMENT ON TABLE app.orders IS 'One vendor''s part of a checkout: its items at the prices of the moment, its status (app.order_transitions) and payment status, shipping and the times of each step (delivered_at decides which settlement it belongs to). vendor_name is kept as it was when ordered. Written only by the order functions; buyer, vendor owner and ADMINs read it.';

COMMENT ON COLUMN app.orders.sale_settled IS 'A sale line of the settlement ledger exists for this order (kept by app_private.mark_orders_settled, the trigger on app.settlement_lines): what the settlement''s partial index skips.';

COMMENT ON COLUMN app.orders.refund_settled IS 'A refund line of the settlement ledger exists for this order (kept by app_private.mark_orders_settled).';

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_pkey PRIMARY KEY (id);

CREATE INDEX orders_buyer_idx ON app.orders USING btree (buyer_id, created_at DESC, id DESC);

CREATE INDEX orders_checkout_idx ON app.orders USING btree (checkout_id, id);

CREATE INDEX orders_created_idx ON app.orders USING btree (created_at);

CREATE INDEX orders_delivered_idx ON app.orders USING btree (delivered_at) WHERE (status = 'delivered'::app.order_status);

CREATE INDEX orders_refunded_idx ON app.orders USING btree (refunded_at) WHERE (status = 'refunded'::app.order_status);

CREATE INDEX orders_settleable_idx ON app.orders USING btree (vendor_id, delivered_at) WHERE ((status = ANY (ARRAY['delivered'::app.order_status, 'completed'::app.order_status])) AND (payment_status = 'succeeded'::app.payment_status));

CREATE INDEX orders_unsettled_refunds_idx ON app.orders USING btree (refunded_at) WHERE ((status = 'refunded'::app.order_status) AND sale_settled AND (NOT refund_settled));

CREATE INDEX orders_unsettled_sales_idx ON app.orders USING btree (delivered_at) WHERE ((status = ANY (ARRAY['delivered'::app.order_status, 'completed'::app.order_status])) AND (payment_status = 'succeeded'::app.payment_status) AND (NOT sale_settled));

CREATE INDEX orders_vendor_idx ON app.orders USING btree (vendor_id, created_at DESC, id DESC);

CREATE TRIGGER orders_balance_delete AFTER DELETE ON app.orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.track_vendor_balances();

CREATE TRIGGER orders_balance_insert AFTER INSERT ON app.orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.track_vendor_balances();

CREATE TRIGGER orders_balance_update AFTER UPDATE ON app.orders REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.track_vendor_balances();

CREATE TRIGGER orders_facts_deleted AFTER DELETE ON app.orders REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION app_private.orders_facts_changed();

CREATE TRIGGER orders_facts_truncated AFTER TRUNCATE ON app.orders FOR EACH STATEMENT EXECUTE FUNCTION app_private.analytics_facts_truncated();

CREATE TRIGGER orders_facts_updated AFTER UPDATE ON app.orders FOR EACH ROW WHEN ((((((old.created_at IS DISTINCT FROM new.created_at) OR (old.paid_at IS DISTINCT FROM new.paid_at)) OR (old.status IS DISTINCT FROM new.status)) OR (old.total IS DISTINCT FROM new.total)) OR (old.vendor_id IS DISTINCT FROM new.vendor_id))) EXECUTE FUNCTION app_private.orders_facts_changed();

CREATE TRIGGER orders_touch_updated_at BEFORE UPDATE ON app.orders FOR EACH ROW WHEN ((NOT ((old.sale_settled IS DISTINCT FROM new.sale_settled) OR (old.refund_settled IS DISTINCT FROM new.refund_settled)))) EXECUTE FUNCTION app_private.touch_updated_at();

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_buyer_id_fkey FOREIGN KEY (buyer_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_checkout_id_fkey FOREIGN KEY (checkout_id) REFERENCES app.checkouts(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.orders
    ADD CONSTRAINT orders_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE RESTRICT;

ALTER TABLE app.orders ENABLE ROW LEVEL SECURITY;

CREATE POLICY orders_select_buyer_vendor_or_admin ON app.orders FOR SELECT TO authenticated USING ((((buyer_id = ( SELECT auth.uid() AS uid)) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role)) OR (vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.orders TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.refunds
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.refunds (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    order_id uuid NOT NULL,
    amount bigint NOT NULL,
    currency text NOT NULL,
    status app.refund_status DEFAULT 'pending'::app.refund_status NOT NULL,
    reason text,
    requested_by uuid,
    provider_refund_id text,
    failure_reason text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    succeeded_at timestamp with time zone,
    CONSTRAINT refunds_amount_check CHECK ((amount > 0)),
    CONSTRAINT refunds_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT refunds_reason_check CHECK ((char_length(reason) <= 1000))
);

COMMENT ON TABLE app.refunds IS 'A refund owed to a buyer for one order (at most one per order: the unique key), made through the payment provider by a store.refund job with the idempotency key refund:<orderId>.';

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_order_id_key UNIQUE (order_id);

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_provider_refund_id_key UNIQUE (provider_refund_id);

CREATE INDEX refunds_requested_by_idx ON app.refunds USING btree (requested_by);

CREATE TRIGGER refunds_touch_updated_at BEFORE UPDATE ON app.refunds FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE CASCADE;

ALTER TABLE ONLY app.refunds
    ADD CONSTRAINT refunds_requested_by_fkey FOREIGN KEY (requested_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.refunds ENABLE ROW LEVEL SECURITY;

CREATE POLICY refunds_select_visible ON app.refunds FOR SELECT TO authenticated USING ((EXISTS ( SELECT 1
   FROM app.orders o
  WHERE (o.id = refunds.order_id))));

GRANT SELECT ON TABLE app.refunds TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.checkout_secrets
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.checkout_secrets (
    checkout_id uuid NOT NULL,
    client_secret text NOT NULL
);

COMMENT ON TABLE app_private.checkout_secrets IS 'The PaymentIntent''s client secret, which lets its holder confirm the payment: given to the buyer only, in the checkout answer and by app.checkout_payment (resuming the payment elsewhere), never readable through RLS.';

ALTER TABLE ONLY app_private.checkout_secrets
    ADD CONSTRAINT checkout_secrets_pkey PRIMARY KEY (checkout_id);

ALTER TABLE ONLY app_private.checkout_secrets
    ADD CONSTRAINT checkout_secrets_checkout_id_fkey FOREIGN KEY (checkout_id) REFERENCES app.checkouts(id) ON DELETE CASCADE;

ALTER TABLE app_private.checkout_secrets ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.abandon_checkout
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not exists (
    select 1 from app.checkouts c
    where c.id = target_checkout_id and c.buyer_id = auth.uid() and c.payment_intent_id is null
  ) then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  perform app_private.cancel_unpaid_checkout(target_checkout_id, 'system', null,
                                             'the payment provider did not answer');
  if idempotency_key is not null then
    delete from app_private.idempotency_keys k
    where k.user_id = auth.uid() and k.key = abandon_checkout.idempotency_key;
    update app.checkouts c set idempotency_key = null where c.id = target_checkout_id;
  end if;
end;
$$;

COMMENT ON FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) IS 'When the payment provider does not answer (503 payment_provider_unavailable), cancels the caller''s checkout that has no payment intent yet (its stock goes back at once) and frees its Idempotency-Key, so a retry starts afresh. security definer: as app.create_checkout.';

REVOKE ALL ON FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.abandon_checkout(target_checkout_id uuid, idempotency_key text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.attach_payment_intent
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  checkout app.checkouts;
  answer jsonb;
begin
  select * into checkout from app.checkouts c
  where c.id = target_checkout_id and c.buyer_id = auth.uid()
  for update;
  if not found then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  if checkout.payment_intent_id is not null and checkout.payment_intent_id <> intent_id then
    raise exception 'the checkout has another payment intent' using errcode = 'AG409';
  end if;
  update app.checkouts c set payment_intent_id = intent_id where c.id = checkout.id;
  insert into app_private.checkout_secrets (checkout_id, client_secret)
  values (checkout.id, intent_client_secret)
  on conflict (checkout_id) do update set client_secret = excluded.client_secret;
  -- Cancelled meanwhile (expiry): the intent must not stay payable.
  if checkout.closed_at is not null and checkout.payment_status <> 'succeeded' then
    perform app_private.enqueue_job('store.payment_intent_cancel',
      jsonb_build_object('checkoutId', checkout.id), now(), 'pi-cancel:' || checkout.id);
  end if;
  answer := app_private.checkout_json(checkout.id, intent_client_secret);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, answer);
  end if;
  return answer;
end;
$$;

COMMENT ON FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) IS 'Attaches the PaymentIntent the API created (idempotently: the same intent again is fine, another is AG409) to the caller''s checkout, keeps its client secret apart, and returns the checkout answer, stored for the idempotency key. security definer: checkouts have no update grant; only the buyer''s own checkout is touched.';

SET default_tablespace = '';

SET default_table_access_method = heap;

REVOKE ALL ON FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.attach_payment_intent(target_checkout_id uuid, intent_id text, intent_client_secret text, idempotency_key text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.change_order_status
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text DEFAULT NULL::text, tracking text DEFAULT NULL::text, ship_carrier text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  target app.orders;
  actors app.order_actor[] := '{}';
  acting app.order_actor;
  allowed jsonb;
begin
  select * into target from app.orders o where o.id = target_order_id;
  if found and me is not null and app.has_role('SUBSCRIBER') then
    if target.buyer_id = me then
      actors := actors || 'buyer'::app.order_actor;
    end if;
    if target.vendor_id in (select app.my_vendor_ids()) then
      actors := actors || 'vendor'::app.order_actor;
    end if;
    if app.is_admin() then
      actors := actors || 'admin'::app.order_actor;
    end if;
  end if;
  if cardinality(actors) = 0 then
    raise exception 'order not found' using errcode = 'AG404';
  end if;
  if not exists (
    select 1 from app.order_transitions t where t.to_status = change_order_status.to_status and t.actor = any(actors)
  ) then
    raise exception 'you may not move an order to %', to_status using errcode = 'AG403';
  end if;

  -- Lock order: the checkout, then the order (then products, in move_order).
  perform 1 from app.checkouts c where c.id = target.checkout_id for update;
  select * into target from app.orders o where o.id = target_order_id for update;

  select t.actor into acting from app.order_transitions t
  where t.from_status = target.status and t.to_status = change_order_status.to_status and t.actor = any(actors)
  order by array_position(array['buyer', 'vendor', 'admin']::app.order_actor[], t.actor)
  limit 1;
  if acting is null then
    select coalesce(jsonb_agg(distinct t.to_status), '[]'::jsonb) into allowed
    from app.order_transitions t where t.from_status = target.status and t.actor = any(actors);
    raise exception 'an order that is % cannot become %', target.status, to_status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('from', target.status, 'to', to_status, 'allowed', allowed)::text;
  end if;
  if to_status = 'shipped' and char_length(btrim(coalesce(tracking, ''))) = 0 then
    raise exception 'shipping needs a trackingNumber' using errcode = 'AG400',
      detail = jsonb_build_array(jsonb_build_object('path', 'trackingNumber', 'message', 'required when shipping'))::text;
  end if;

  if target.status = 'pending_payment' and to_status = 'cancelled' then
    -- One payment intent pays the whole checkout: an unpaid checkout is cancelled whole.
    perform app_private.cancel_unpaid_checkout(target.checkout_id, acting, me,
                                               coalesce(move_reason, 'cancelled by the ' || acting));
  else
    perform app_private.move_order(target, to_status, acting, me, move_reason,
                                   btrim(tracking), nullif(btrim(ship_carrier), ''));
  end if;
  select * into target from app.orders o where o.id = target_order_id;
  return app.order_json(target);
end;
$$;

COMMENT ON FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text) IS 'A person moves an order: buyer, vendor owner or ADMIN (the caller may hold several of these parts; the move is recorded under the first that may make it). 404 for an order the caller cannot see, then 403 for a status the caller may never set, then 422 invalid_transition (details: from, to, allowed), then 400 for shipping without a tracking number. Cancelling an unpaid order cancels its whole checkout. security definer: orders and stock have no write grants; every rule is checked here.';

REVOKE ALL ON FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_order_status(target_order_id uuid, to_status app.order_status, move_reason text, tracking text, ship_carrier text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.checkout_payment
-- created in 20261129140100_orders_resume_payment.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.checkout_payment(target_checkout_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  checkout app.checkouts;
  secret text;
begin
  select * into checkout from app.checkouts c
  where c.id = target_checkout_id and c.buyer_id = (select auth.uid())
    and app.has_role('SUBSCRIBER');
  if not found then
    raise exception 'checkout not found' using errcode = 'AG404';
  end if;
  if checkout.payment_status in ('succeeded', 'refunded') then
    raise exception 'this checkout is paid' using errcode = 'AG422', hint = 'invalid_transition',
      detail = jsonb_build_object('payment', checkout.payment_status)::text;
  end if;
  if checkout.closed_at is not null or not exists (
    select 1 from app.orders o where o.checkout_id = checkout.id and o.status = 'pending_payment'
  ) then
    raise exception 'this checkout no longer awaits payment (it was cancelled or its reservation ran out)'
      using errcode = 'AG422', hint = 'invalid_transition',
      detail = jsonb_build_object('reservedUntil', checkout.reserved_until)::text;
  end if;
  if checkout.reserved_until <= now() then
    raise exception 'the reservation of this checkout ran out; check out again'
      using errcode = 'AG422', hint = 'invalid_transition',
      detail = jsonb_build_object('reservedUntil', checkout.reserved_until)::text;
  end if;
  select s.client_secret into secret from app_private.checkout_secrets s
  where s.checkout_id = checkout.id;
  return app_private.checkout_json(checkout.id, nullif(secret, ''))
    || jsonb_build_object('needsIntent', checkout.payment_intent_id is null,
                          'currency', checkout.currency, 'amount', checkout.total);
end;
$$;

COMMENT ON FUNCTION app.checkout_payment(target_checkout_id uuid) IS 'The payment of the caller''s own checkout still awaiting payment within its reservation, as the checkout answer with its client secret, so that its buyer can pay from any tab or device (POST /api/store/checkouts/{id}/payment). needsIntent: no PaymentIntent attached yet (the API makes it, with the same idempotency key, and attaches it). Another''s checkout: AG404; paid, cancelled, closed or expired: AG422 invalid_transition. security definer: the client secret is in app_private.checkout_secrets, which no API role reads.';

REVOKE ALL ON FUNCTION app.checkout_payment(target_checkout_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.checkout_payment(target_checkout_id uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.create_checkout
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
declare
  me uuid := auth.uid();
  claim jsonb;
  store_currency text := app_private.store_currency();
  refused jsonb;
  short jsonb;
  wanted_ids uuid[];
  wanted_quantities integer[];
  wanted_prices bigint[];
  new_checkout_id uuid;
  checkout_total bigint;
  created app.orders;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'ordering needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  if jsonb_typeof(requested_items) <> 'array' or jsonb_array_length(requested_items) = 0 then
    raise exception 'a checkout needs items' using errcode = 'AG400';
  end if;

  if idempotency_key is not null then
    claim := app.claim_idempotency_key(idempotency_key, 'create_checkout', request_hash);
    if claim ? 'conflict' then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    if jsonb_typeof(claim -> 'response') = 'object' then
      return jsonb_build_object('replay', claim -> 'response');
    end if;
    if claim is not null then
      -- The key's first request committed its checkout but never stored an answer.
      select jsonb_build_object('resume', c.id, 'total', c.total, 'currency', c.currency) into claim
      from app.checkouts c
      where c.buyer_id = me and c.idempotency_key = create_checkout.idempotency_key;
      if claim is not null then
        return claim;
      end if;
      raise exception 'a request with this Idempotency-Key is still running' using errcode = 'AG409';
    end if;
  end if;

  -- The wanted quantities, one per product (a product named twice is summed).
  select array_agg(x.product_id order by x.product_id), array_agg(x.quantity order by x.product_id)
  into wanted_ids, wanted_quantities
  from (
    select (e ->> 'productId')::uuid as product_id, sum((e ->> 'quantity')::integer)::integer as quantity
    from jsonb_array_elements(requested_items) e
    group by 1
  ) x;
  if exists (select 1 from unnest(wanted_quantities) q where q < 1 or q > 1000) then
    raise exception 'a quantity is from 1 to 1000' using errcode = 'AG400';
  end if;

  -- First without locks: the refusals answer before anything is written.
  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'reason',
           case when p.id is null then 'not_found'
                when v.status <> 'approved' then 'vendor_not_selling'
                when p.status <> 'active' then 'not_active'
                else 'wrong_currency' end) order by w.product_id)
  into refused
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  left join app.products p on p.id = w.product_id
  left join app.vendors v on v.id = p.vendor_id
  where p.id is null or p.status <> 'active' or v.status <> 'approved' or p.currency <> store_currency;
  if refused is not null then
    raise exception 'only active products of approved vendors can be ordered' using errcode = 'AG422',
      detail = jsonb_build_object('items', refused)::text;
  end if;

  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'requested', w.quantity,
                                      'available', p.stock - p.reserved) order by w.product_id)
  into short
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id
  where p.stock - p.reserved < w.quantity;
  if short is not null then
    raise exception 'not enough stock for % of the items', jsonb_array_length(short)
      using errcode = 'AG422', hint = 'insufficient_stock', detail = jsonb_build_object('items', short)::text;
  end if;

  -- The server's prices, in the order of wanted_ids (checked again under the locks below).
  select array_agg(p.price_amount order by w.product_id), sum(p.price_amount * w.quantity)
  into wanted_prices, checkout_total
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id;

  insert into app.checkouts (buyer_id, total, currency, provider, idempotency_key, reserved_until)
  values (me, checkout_total, store_currency, payment_provider, create_checkout.idempotency_key,
          now() + make_interval(mins => app.config_int('store', 'reservationMinutes')))
  returning id into new_checkout_id;

  insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency, shipping_address)
  select new_checkout_id, me, v.id, v.name, sum(w.price * w.quantity), store_currency, shipping_address
  from unnest(wanted_ids, wanted_quantities, wanted_prices) as w (product_id, quantity, price)
  join app.products p on p.id = w.product_id
  join app.vendors v on v.id = p.vendor_id
  group by v.id, v.name;

  insert into app.order_items (order_id, product_id, title, unit_price, quantity, total)
  select o.id, p.id, p.title, w.price, w.quantity, w.price * w.quantity
  from unnest(wanted_ids, wanted_quantities, wanted_prices) as w (product_id, quantity, price)
  join app.products p on p.id = w.product_id
  join app.orders o on o.checkout_id = new_checkout_id and o.vendor_id = p.vendor_id;

  insert into app.order_history (order_id, from_status, to_status, actor, actor_id, reason)
  select o.id, null, 'pending_payment', 'buyer', me, 'checkout'
  from app.orders o where o.checkout_id = new_checkout_id;

  for created in select * from app.orders o where o.checkout_id = new_checkout_id order by o.id loop
    perform app_private.emit_order_event(created, 'order.created');
  end loop;

  -- Last, the row locks, so they are held only until the commit that follows: in one fixed order
  -- (product id), so concurrent checkouts queue and never deadlock; NO KEY UPDATE, which the
  -- order items' foreign-key locks (KEY SHARE) of other checkouts do not block. A rollback
  -- (refused below) takes the rows and events above with it.
  perform 1 from app.products p where p.id = any(wanted_ids) order by p.id for no key update of p;

  if exists (
    select 1 from unnest(wanted_ids, wanted_prices) as w (product_id, price)
    join app.products p on p.id = w.product_id
    join app.vendors v on v.id = p.vendor_id
    where p.price_amount <> w.price or p.status <> 'active' or v.status <> 'approved'
       or p.currency <> store_currency
  ) then
    raise exception 'a product changed during the checkout; try again' using errcode = 'AG409';
  end if;

  select jsonb_agg(jsonb_build_object('productId', w.product_id, 'requested', w.quantity,
                                      'available', p.stock - p.reserved) order by w.product_id)
  into short
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  join app.products p on p.id = w.product_id
  where p.stock - p.reserved < w.quantity;
  if short is not null then
    raise exception 'not enough stock for % of the items', jsonb_array_length(short)
      using errcode = 'AG422', hint = 'insufficient_stock', detail = jsonb_build_object('items', short)::text;
  end if;

  update app.products p set reserved = p.reserved + w.quantity
  from unnest(wanted_ids, wanted_quantities) as w (product_id, quantity)
  where p.id = w.product_id;

  return jsonb_build_object('created', new_checkout_id, 'total', checkout_total, 'currency', store_currency);
end;
$$;

COMMENT ON FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) IS 'The checkout in one transaction: idempotency key (replay, resume or AG409), only active products of approved vendors in the store''s currency (AG422 with the refused items), enough available stock (AG422 insufficient_stock with the items short), the checkout, one order per vendor with items at the server''s prices, history and order.created events, and last the products row-locked in id order (held only until the commit), the rules and the stock checked again under the locks (AG409 if a price or status changed meanwhile) and the reservation (store.reservationMinutes). security definer: buyers cannot write products or orders; every rule is checked here, with no read-modify-write outside the database.';

REVOKE ALL ON FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_checkout(requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.order_buyer_name
-- created in 20261130080000_orders_buyer_name.sql; last changed in 20261206000200_orders_buyer_name_by_id.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.order_buyer_name(target app.orders) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (
    select u.name from app.users u
    where u.id = target.buyer_id
      -- The order's own buyer, by the order's primary key (as a pair, the buyer's index matched
      -- both columns and was walked across all of the buyer's orders).
      and u.id = (select o.buyer_id from app.orders o where o.id = target.id)
  );
end;
$$;

COMMENT ON FUNCTION app.order_buyer_name(target app.orders) IS 'The profile name of an order''s buyer, for app.order_json (the shop''s owner and ADMINs see who ordered). security definer: app.users shows a user only their own row; it answers only for an order that exists with that buyer, so a made-up row learns nothing.';

REVOKE ALL ON FUNCTION app.order_buyer_name(target app.orders) FROM PUBLIC;
GRANT ALL ON FUNCTION app.order_buyer_name(target app.orders) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.order_json
-- created in 20261124110200_orders.sql; last changed in 20261130080000_orders_buyer_name.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.order_json(target app.orders) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (
    select jsonb_build_object(
      'id', target.id,
      'checkoutId', target.checkout_id,
      'buyerId', target.buyer_id,
      'buyer', case when target.buyer_id is not null then
        jsonb_build_object('id', target.buyer_id, 'name', app.order_buyer_name(target)) end,
      'vendor', jsonb_build_object('id', target.vendor_id, 'name', target.vendor_name),
      'status', target.status,
      'items', coalesce((
        select jsonb_agg(jsonb_build_object(
          'productId', i.product_id,
          'title', i.title,
          'unitPrice', jsonb_build_object('amount', i.unit_price, 'currency', target.currency),
          'quantity', i.quantity,
          'total', jsonb_build_object('amount', i.total, 'currency', target.currency)
        ) order by i.title, i.product_id)
        from app.order_items i where i.order_id = target.id
      ), '[]'::jsonb),
      'total', jsonb_build_object('amount', target.total, 'currency', target.currency),
      'payment', jsonb_build_object(
        'status', target.payment_status,
        'refund', (
          select jsonb_build_object('status', r.status,
                                    'amount', jsonb_build_object('amount', r.amount, 'currency', r.currency))
          from app.refunds r where r.order_id = target.id
        )
      ),
      'shipping', jsonb_build_object(
        'address', target.shipping_address,
        'carrier', target.carrier,
        'trackingNumber', target.tracking_number
      ),
      'history', coalesce((
        select jsonb_agg(jsonb_build_object(
          'from', h.from_status, 'to', h.to_status, 'actor', h.actor, 'reason', h.reason,
          'at', to_char(h.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
        ) order by h.id)
        from app.order_history h where h.order_id = target.id
      ), '[]'::jsonb),
      'createdAt', to_char(target.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'updatedAt', to_char(target.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    )
  );
end;
$$;

COMMENT ON FUNCTION app.order_json(target app.orders) IS 'An order as the API shows it (GET /api/store/orders/:id and every order event): buyer (id and profile name), vendor, items with money, total, payment (with its refund), shipping and history. security invoker: items, refund and history are read with the caller''s rights, which show them to exactly those who see the order; the buyer''s name through app.order_buyer_name.';

REVOKE ALL ON FUNCTION app.order_json(target app.orders) FROM PUBLIC;
GRANT ALL ON FUNCTION app.order_json(target app.orders) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.after_order_change
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.after_order_change(target app.orders, event text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  last app.order_history;
  owner uuid;
  amount text := to_char(target.total / 100.0, 'FM999999999990.00') || ' ' || target.currency;
  ref text := left(target.id::text, 8);
  data jsonb := jsonb_build_object('kind', event, 'orderId', target.id, 'checkoutId', target.checkout_id,
                                   'vendorId', target.vendor_id, 'status', target.status);
  title text;
  body text;
begin
  select * into last from app.order_history h where h.order_id = target.id order by h.id desc limit 1;
  select v.owner_id into owner from app.vendors v where v.id = target.vendor_id;

  -- The buyer.
  title := null;
  if event = 'order.status_changed' and target.buyer_id is distinct from last.actor_id then
    case target.status
      when 'paid' then
        title := 'Payment received';
        body := format('Your order %s from %s is paid (%s).', ref, target.vendor_name, amount);
      when 'shipped' then
        title := 'Your order has shipped';
        body := format('%s shipped your order %s%s%s.', target.vendor_name, ref,
                       coalesce(' with ' || target.carrier, ''),
                       coalesce(', tracking number ' || target.tracking_number, ''));
      when 'delivered' then
        title := 'Your order was delivered';
        body := format('Your order %s from %s was delivered.', ref, target.vendor_name);
      when 'cancelled' then
        title := 'Your order was cancelled';
        body := format('Your order %s from %s was cancelled%s.', ref, target.vendor_name,
                       coalesce(': ' || last.reason, ''))
                || case when target.payment_status = 'refunded' then ' Your payment will be refunded.' else '' end;
      when 'refunded' then
        title := 'Your order was refunded';
        body := format('Your order %s from %s was refunded (%s).', ref, target.vendor_name, amount);
      else
        title := null;
    end case;
  elsif event = 'order.payment_failed' then
    title := 'Your payment failed';
    body := format('The payment for your order %s from %s failed. You can pay again until the reservation ends.',
                   ref, target.vendor_name);
  elsif event = 'order.refund_succeeded' then
    title := 'Your refund was issued';
    body := format('%s for your order %s from %s is on its way back to you.', amount, ref, target.vendor_name);
  end if;
  if title is not null and target.buyer_id is not null then
    perform app_private.notify(target.buyer_id, 'SYSTEM', title, body, data, 'normal',
      case when event = 'order.payment_failed' then 'checkout-payment:' || target.checkout_id end);
  end if;

  -- The vendor's owner.
  title := null;
  if event = 'order.status_changed' and owner is not null and owner is distinct from last.actor_id then
    if target.status = 'paid' then
      title := 'New order to fulfil';
      body := format('Order %s (%s) is paid and waits for you.', ref, amount);
    elsif target.status = 'cancelled' and last.from_status in ('paid', 'processing') then
      title := 'An order was cancelled';
      body := format('Order %s (%s) was cancelled%s; the buyer is refunded.', ref, amount,
                     coalesce(': ' || last.reason, ''));
    elsif target.status = 'refunded' then
      title := 'An order was refunded';
      body := format('Order %s (%s) was refunded; it is deducted from your next settlement.', ref, amount);
    elsif target.status = 'completed' then
      title := 'An order was completed';
      body := format('Order %s (%s) is complete.', ref, amount);
    end if;
  end if;
  if title is not null then
    perform app_private.notify(owner, 'SYSTEM', title, body, data);
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.after_order_change(target app.orders, event text) IS 'The SYSTEM notifications of an order change (data: kind, orderId, checkoutId, vendorId, status), through app_private.notify: the buyer on payment, shipping, delivery, cancellation, refund, a failed payment (one per checkout, collapsed) and an issued refund; the vendor''s owner on a paid order to fulfil and a paid order cancelled, refunded or completed. Whoever made the move is not told of it.';

REVOKE ALL ON FUNCTION app_private.after_order_change(target app.orders, event text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.cancel_unpaid_checkout
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  pending app.orders;
  ids uuid[];
begin
  perform 1 from app.checkouts c where c.id = target_checkout_id for update;
  select array_agg(o.id order by o.id) into ids from app.orders o
  where o.checkout_id = target_checkout_id and o.status = 'pending_payment';
  if ids is null then
    return;
  end if;
  perform 1 from app.orders o where o.id = any(ids) order by o.id for update;
  perform app_private.lock_order_products(ids);
  for pending in
    select * from app.orders o where o.id = any(ids) and o.status = 'pending_payment' order by o.id
  loop
    perform app_private.move_order(pending, 'cancelled', by_actor, by_user, cancel_reason);
  end loop;
  perform app_private.close_checkout_if_settled(target_checkout_id);
end;
$$;

COMMENT ON FUNCTION app_private.cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text) IS 'Cancels all orders of a checkout that await payment, releasing their reservations: one PaymentIntent pays the whole checkout, so an unpaid checkout is cancelled whole (by its buyer, an ADMIN or the expiry). Locks the checkout, then its orders, then their products, in that order.';

REVOKE ALL ON FUNCTION app_private.cancel_unpaid_checkout(target_checkout_id uuid, by_actor app.order_actor, by_user uuid, cancel_reason text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.checkout_json
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.checkout_json(target_checkout_id uuid, client_secret text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
begin
  return (
    select jsonb_build_object('checkout', jsonb_build_object(
      'id', c.id,
      'total', jsonb_build_object('amount', c.total, 'currency', c.currency),
      'reservedUntil', to_char(c.reserved_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'orders', coalesce((select jsonb_agg(app.order_json(o) order by o.vendor_name, o.id)
                          from app.orders o where o.checkout_id = c.id), '[]'::jsonb),
      'payment', jsonb_build_object(
        'provider', c.provider,
        'paymentIntentId', c.payment_intent_id,
        'clientSecret', client_secret,
        'status', c.payment_status
      )
    ))
    from app.checkouts c where c.id = target_checkout_id
  );
end;
$$;

COMMENT ON FUNCTION app_private.checkout_json(target_checkout_id uuid, client_secret text) IS 'The answer of POST /api/store/orders: { checkout: { id, total, reservedUntil, orders, payment: { provider, paymentIntentId, clientSecret, status } } }.';

REVOKE ALL ON FUNCTION app_private.checkout_json(target_checkout_id uuid, client_secret text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.close_checkout_if_settled
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.close_checkout_if_settled(target_checkout_id uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  checkout app.checkouts;
begin
  select * into checkout from app.checkouts c where c.id = target_checkout_id;
  if checkout.closed_at is not null or exists (
    select 1 from app.orders o where o.checkout_id = target_checkout_id and o.status = 'pending_payment'
  ) then
    return;
  end if;
  update app.checkouts c set closed_at = now() where c.id = target_checkout_id;
  if checkout.payment_status <> 'succeeded' and checkout.payment_intent_id is not null then
    perform app_private.enqueue_job('store.payment_intent_cancel',
      jsonb_build_object('checkoutId', target_checkout_id), now(), 'pi-cancel:' || target_checkout_id);
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.close_checkout_if_settled(target_checkout_id uuid) IS 'Marks a checkout closed once no order of it awaits payment (so expiry no longer looks at it) and, when it was never paid, queues the cancellation of its PaymentIntent (store.payment_intent_cancel), so a late payment attempt fails at the provider instead of charging for cancelled orders.';

REVOKE ALL ON FUNCTION app_private.close_checkout_if_settled(target_checkout_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.complete_delivered_orders
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.complete_delivered_orders() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  due app.orders;
  n integer := 0;
begin
  for due in
    select o.* from app.orders o
    where o.status = 'delivered'
      and o.delivered_at < now() - make_interval(days => app.config_int('store', 'autoCompleteDays'))
    order by o.delivered_at
    for update skip locked
  loop
    perform app_private.move_order(due, 'completed', 'system', null,
                                   'completed automatically after delivery');
    n := n + 1;
  end loop;
  return n;
end;
$$;

COMMENT ON FUNCTION app_private.complete_delivered_orders() IS 'Completes orders delivered more than store.autoCompleteDays ago (actor system). Run hourly by pg_cron.';

REVOKE ALL ON FUNCTION app_private.complete_delivered_orders() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.create_checkout_as
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.create_checkout(requested_items, shipping_address, idempotency_key, request_hash,
                             payment_provider);
end;
$$;

COMMENT ON FUNCTION app_private.create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) IS 'A checkout in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.create_checkout as the caller, so the commit follows at once on the server and the products'' row locks are never held across a round trip. Only the API''s own role may call it: it trusts the claims it is given.';

REVOKE ALL ON FUNCTION app_private.create_checkout_as(claims text, requested_items jsonb, shipping_address jsonb, idempotency_key text, request_hash text, payment_provider text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.emit_order_event
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.emit_order_event(target app.orders, event text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  payload jsonb := app.order_json(target);
begin
  if target.buyer_id is not null then
    perform app_private.emit_event('user:' || target.buyer_id, event, payload);
  end if;
  perform app_private.emit_event('vendor:' || target.vendor_id, event, payload);
end;
$$;

COMMENT ON FUNCTION app_private.emit_order_event(target app.orders, event text) IS 'order.created / order.status_changed on user:<buyerId> and vendor:<vendorId>, each carrying the order as GET /api/store/orders/:id returns it. Called inside the order functions, with their rights.';

REVOKE ALL ON FUNCTION app_private.emit_order_event(target app.orders, event text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.expire_reservations
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.expire_reservations() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  expired uuid;
  n integer := 0;
begin
  for expired in
    select c.id from app.checkouts c
    where c.closed_at is null and c.reserved_until < now()
    order by c.reserved_until
    for update skip locked
  loop
    perform app_private.cancel_unpaid_checkout(expired, 'system', null, 'reservation expired');
    perform app_private.close_checkout_if_settled(expired);
    n := n + 1;
  end loop;
  return n;
end;
$$;

COMMENT ON FUNCTION app_private.expire_reservations() IS 'Cancels the unpaid orders of checkouts whose reservation (store.reservationMinutes) ran out, so their stock is available again, and queues the cancellation of their payment intents. Returns how many checkouts it closed. Skips checkouts locked by a payment in progress (the next run sees them). Run every minute by pg_cron.';

REVOKE ALL ON FUNCTION app_private.expire_reservations() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.lock_order_products
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.lock_order_products(order_ids uuid[]) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select 1 from app.products p
  where p.id in (select i.product_id from app.order_items i where i.order_id = any(order_ids))
  order by p.id
  for no key update of p
$$;

COMMENT ON FUNCTION app_private.lock_order_products(order_ids uuid[]) IS 'Row-locks the products of some orders in id order before their stock changes: every path takes product locks in this one order, so two of them never wait on each other in a cycle.';

REVOKE ALL ON FUNCTION app_private.lock_order_products(order_ids uuid[]) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.move_order
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text DEFAULT NULL::text, ship_carrier text DEFAULT NULL::text) RETURNS app.orders
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  moved app.orders;
begin
  if not exists (
    select 1 from app.order_transitions t
    where t.from_status = target.status and t.to_status = move_order.to_status and t.actor = by_actor
  ) then
    raise exception 'an order cannot move from % to % by %', target.status, to_status, by_actor
      using errcode = 'AG422', hint = 'invalid_transition';
  end if;

  -- Stock: a payment turns the reservation into a sale; a cancellation before payment releases
  -- it; a cancellation or refund after payment puts the units back.
  if target.status = 'pending_payment' and to_status in ('paid', 'cancelled') then
    perform app_private.lock_order_products(array[target.id]);
    update app.products p
    set reserved = p.reserved - i.quantity,
        stock = p.stock - case when to_status = 'paid' then i.quantity else 0 end
    from app.order_items i
    where i.order_id = target.id and p.id = i.product_id;
  elsif to_status in ('cancelled', 'refunded') then
    perform app_private.lock_order_products(array[target.id]);
    update app.products p set stock = p.stock + i.quantity
    from app.order_items i
    where i.order_id = target.id and p.id = i.product_id;
    perform app_private.request_refund(target, coalesce(move_reason, to_status::text), by_user);
  end if;

  update app.orders o
  set status = to_status,
      payment_status = case
        when to_status = 'paid' then 'succeeded'::app.payment_status
        when to_status in ('cancelled', 'refunded') and target.status <> 'pending_payment' then 'refunded'
        else o.payment_status end,
      paid_at = case when to_status = 'paid' then now() else o.paid_at end,
      shipped_at = case when to_status = 'shipped' then now() else o.shipped_at end,
      tracking_number = case when to_status = 'shipped' then tracking else o.tracking_number end,
      carrier = case when to_status = 'shipped' then ship_carrier else o.carrier end,
      delivered_at = case when to_status = 'delivered' then now() else o.delivered_at end,
      completed_at = case when to_status = 'completed' then now() else o.completed_at end,
      cancelled_at = case when to_status = 'cancelled' then now() else o.cancelled_at end,
      refunded_at = case when to_status = 'refunded' then now() else o.refunded_at end
  where o.id = target.id
  returning * into moved;

  insert into app.order_history (order_id, from_status, to_status, actor, actor_id, reason)
  values (target.id, target.status, to_status, by_actor, by_user, move_reason);

  perform app_private.emit_order_event(moved, 'order.status_changed');
  perform app_private.after_order_change(moved, 'order.status_changed');
  return moved;
end;
$$;

COMMENT ON FUNCTION app_private.move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text, ship_carrier text) IS 'One move of an order and its effects: stock (sale, release, restore, under ordered row locks), refunds owed (cancellation after payment, refund), payment status, the step''s time, the history row, the live order.status_changed to buyer and vendor. Refuses (AG422) a move app.order_transitions does not list for that actor; who the actor is is the caller''s business.';

REVOKE ALL ON FUNCTION app_private.move_order(target app.orders, to_status app.order_status, by_actor app.order_actor, by_user uuid, move_reason text, tracking text, ship_carrier text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.request_refund
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.request_refund(target app.orders, refund_reason text, requested uuid) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  insert into app.refunds (order_id, amount, currency, reason, requested_by)
  values (target.id, target.total, target.currency, refund_reason, requested)
  on conflict (order_id) do nothing;
  if found then
    perform app_private.enqueue_job('store.refund', jsonb_build_object('orderId', target.id),
                                    now(), 'refund:' || target.id);
  end if;
end;
$$;

COMMENT ON FUNCTION app_private.request_refund(target app.orders, refund_reason text, requested uuid) IS 'Records the refund owed for an order and queues the store.refund job (dedupe key refund:<orderId>) that makes it through the payment provider with that same idempotency key: at most one refund per order, however often it is asked for.';

REVOKE ALL ON FUNCTION app_private.request_refund(target app.orders, refund_reason text, requested uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-complete-delivered-orders
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 29 * * * *
-- command:
--   select app_private.complete_delivered_orders()

-- ---------------------------------------------------------------------------------------------
-- cron job agora-expire-reservations
-- created in 20261124110200_orders.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: * * * * *
-- command:
--   select app_private.expire_reservations()
