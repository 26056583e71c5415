-- Agora's schema as it is now, domain settlements: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124110400_settlements.sql
--   supabase/migrations/20261129100600_settlements_one_policy_per_operation.sql
--   supabase/migrations/20261130060000_settlements_unsettled.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.settlement_status
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.settlement_status AS ENUM (
    'pending',
    'paid',
    'held',
    'failed'
);

COMMENT ON TYPE app.settlement_status IS 'pending: a transfer is queued; paid: transferred (or nothing to pay); held: not paid yet (the payout account is not active, or the net is negative and carried into the next settlement); failed: the provider refused the transfer (an operator must look).';

GRANT ALL ON TYPE app.settlement_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.settlement_lines
-- created in 20261124110400_settlements.sql; last changed in 20261130060000_settlements_unsettled.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.settlement_lines (
    id bigint NOT NULL,
    settlement_id uuid NOT NULL,
    vendor_id uuid NOT NULL,
    kind text NOT NULL,
    order_id uuid,
    source_settlement_id uuid,
    amount bigint NOT NULL,
    commission bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT settlement_lines_amount_check CHECK ((amount >= 0)),
    CONSTRAINT settlement_lines_commission_check CHECK ((commission >= 0)),
    CONSTRAINT settlement_lines_kind_check CHECK ((kind = ANY (ARRAY['sale'::text, 'refund'::text, 'carry'::text]))),
    CONSTRAINT settlement_lines_shape CHECK ((((kind = 'carry'::text) = (source_settlement_id IS NOT NULL)) AND ((kind = 'carry'::text) = (order_id IS NULL))))
);

COMMENT ON TABLE app.settlement_lines IS 'The append-only ledger behind settlements: a sale line per settled order (with its commission), a refund line per settled order refunded later, a carry line per negative settlement carried forward. The unique keys (order_id, kind) and (source_settlement_id) make each order settled exactly once and each deduction made once, under any concurrency; a trigger refuses updates and deletes.';

ALTER TABLE app.settlement_lines ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.settlement_lines_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_carry_once UNIQUE (source_settlement_id);

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_order_once UNIQUE (order_id, kind);

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_pkey PRIMARY KEY (id);

CREATE INDEX settlement_lines_settlement_idx ON app.settlement_lines USING btree (settlement_id);

CREATE INDEX settlement_lines_vendor_idx ON app.settlement_lines USING btree (vendor_id);

CREATE TRIGGER settlement_lines_append_only BEFORE DELETE OR UPDATE ON app.settlement_lines FOR EACH ROW EXECUTE FUNCTION app_private.refuse_ledger_change();

CREATE TRIGGER settlement_lines_mark_orders AFTER INSERT ON app.settlement_lines REFERENCING NEW TABLE AS new_lines FOR EACH STATEMENT EXECUTE FUNCTION app_private.mark_orders_settled();

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_order_id_fkey FOREIGN KEY (order_id) REFERENCES app.orders(id) ON DELETE RESTRICT;

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_settlement_id_fkey FOREIGN KEY (settlement_id) REFERENCES app.settlements(id) ON DELETE RESTRICT;

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_source_settlement_id_fkey FOREIGN KEY (source_settlement_id) REFERENCES app.settlements(id) ON DELETE RESTRICT;

ALTER TABLE ONLY app.settlement_lines
    ADD CONSTRAINT settlement_lines_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE RESTRICT;

ALTER TABLE app.settlement_lines ENABLE ROW LEVEL SECURITY;

CREATE POLICY settlement_lines_select_vendor_or_admin ON app.settlement_lines FOR SELECT TO authenticated USING (((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.settlement_lines TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.settlement_runs
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.settlement_runs (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    as_of timestamp with time zone NOT NULL,
    started_by uuid,
    orders_settled integer DEFAULT 0 NOT NULL,
    settlements_created integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app.settlement_runs IS 'Each settlement run: its cut-off, who started it (null: the schedule) and what it settled.';

ALTER TABLE ONLY app.settlement_runs
    ADD CONSTRAINT settlement_runs_pkey PRIMARY KEY (id);

CREATE INDEX settlement_runs_started_by_idx ON app.settlement_runs USING btree (started_by);

ALTER TABLE ONLY app.settlement_runs
    ADD CONSTRAINT settlement_runs_started_by_fkey FOREIGN KEY (started_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.settlement_runs ENABLE ROW LEVEL SECURITY;

CREATE POLICY settlement_runs_select_admin ON app.settlement_runs FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

GRANT SELECT ON TABLE app.settlement_runs TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.settlements
-- created in 20261124110400_settlements.sql; last changed in 20261130060000_settlements_unsettled.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.settlements (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    run_id uuid NOT NULL,
    vendor_id uuid NOT NULL,
    period_end timestamp with time zone NOT NULL,
    order_count integer NOT NULL,
    gross bigint NOT NULL,
    commission bigint NOT NULL,
    refunds bigint NOT NULL,
    net bigint NOT NULL,
    currency text NOT NULL,
    status app.settlement_status NOT NULL,
    transfer_id text,
    failure_reason text,
    carried_into uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paid_at timestamp with time zone,
    CONSTRAINT settlements_commission_check CHECK ((commission >= 0)),
    CONSTRAINT settlements_currency_check CHECK ((currency ~ '^[A-Z]{3}$'::text)),
    CONSTRAINT settlements_gross_check CHECK ((gross >= 0)),
    CONSTRAINT settlements_net CHECK ((net = ((gross - commission) - refunds))),
    CONSTRAINT settlements_order_count_check CHECK ((order_count >= 0)),
    CONSTRAINT settlements_refunds_check CHECK ((refunds >= 0))
);

COMMENT ON TABLE app.settlements IS 'What one run owes one vendor: gross of the orders it settles, commission, refunds deducted, net, and the payout''s status and transfer. The amounts never change after the run (only status, transfer and carry fields do).';

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_one_per_run UNIQUE (run_id, vendor_id, currency);

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_transfer_id_key UNIQUE (transfer_id);

CREATE INDEX settlements_carried_into_idx ON app.settlements USING btree (carried_into);

CREATE INDEX settlements_created_idx ON app.settlements USING btree (created_at DESC, id DESC);

CREATE INDEX settlements_status_idx ON app.settlements USING btree (status, vendor_id);

CREATE INDEX settlements_to_carry_idx ON app.settlements USING btree (vendor_id) WHERE ((status = 'held'::app.settlement_status) AND (net < 0) AND (carried_into IS NULL));

CREATE INDEX settlements_vendor_idx ON app.settlements USING btree (vendor_id, created_at DESC, id DESC);

CREATE TRIGGER settlements_guard_update BEFORE UPDATE ON app.settlements FOR EACH ROW EXECUTE FUNCTION app_private.guard_settlement_update();

CREATE TRIGGER settlements_no_delete BEFORE DELETE ON app.settlements FOR EACH ROW EXECUTE FUNCTION app_private.refuse_ledger_change();

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_carried_into_fkey FOREIGN KEY (carried_into) REFERENCES app.settlements(id) ON DELETE RESTRICT;

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_run_id_fkey FOREIGN KEY (run_id) REFERENCES app.settlement_runs(id) ON DELETE RESTRICT;

ALTER TABLE ONLY app.settlements
    ADD CONSTRAINT settlements_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE RESTRICT;

ALTER TABLE app.settlements ENABLE ROW LEVEL SECURITY;

CREATE POLICY settlements_select_vendor_or_admin ON app.settlements FOR SELECT TO authenticated USING (((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.settlements TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.run_settlements
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.run_settlements(cut_off timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN runs settlements' using errcode = 'AG403';
  end if;
  return app_private.settle(least(coalesce(cut_off, now()), now()), auth.uid(), false);
end;
$$;

COMMENT ON FUNCTION app.run_settlements(cut_off timestamp with time zone) IS 'POST /api/admin/settlements/run: the daily settlement now, up to cut_off (default and at most now). A run already in progress is AG409. security definer: settling reads and writes every vendor''s orders and ledger; the ADMIN check is explicit.';

REVOKE ALL ON FUNCTION app.run_settlements(cut_off timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.run_settlements(cut_off timestamp with time zone) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.settlement_json
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.settlement_json(settlement app.settlements) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', settlement.id,
    'vendorId', settlement.vendor_id,
    'runId', settlement.run_id,
    'periodEnd', to_char(settlement.period_end at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'orderCount', settlement.order_count,
    'gross', jsonb_build_object('amount', settlement.gross, 'currency', settlement.currency),
    'commission', jsonb_build_object('amount', settlement.commission, 'currency', settlement.currency),
    'refunds', jsonb_build_object('amount', settlement.refunds, 'currency', settlement.currency),
    'net', jsonb_build_object('amount', settlement.net, 'currency', settlement.currency),
    'status', settlement.status,
    'transferId', settlement.transfer_id,
    'carriedInto', settlement.carried_into,
    'createdAt', to_char(settlement.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'paidAt', to_char(settlement.paid_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  )
$$;

COMMENT ON FUNCTION app.settlement_json(settlement app.settlements) IS 'A settlement as the API shows it (money as { amount, currency }). A builder: reads no table.';

REVOKE ALL ON FUNCTION app.settlement_json(settlement app.settlements) FROM PUBLIC;
GRANT ALL ON FUNCTION app.settlement_json(settlement app.settlements) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.apply_payout_account
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.apply_payout_account(account text, new_status app.payouts_status) RETURNS uuid
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  vendor app.vendors;
  released_count integer;
begin
  update app.vendors v set payouts_status = new_status
  where v.payout_account_id = account
  returning * into vendor;
  if not found then
    return null;
  end if;
  if new_status = 'active' then
    -- No dedupe key: the settlement's earlier job (which held it) is done; the job itself is
    -- idempotent (it pays only pending settlements, with the key settlement:<id> at the provider).
    with released as (
      update app.settlements s set status = 'pending', failure_reason = null
      where s.vendor_id = vendor.id and s.status = 'held' and s.net > 0 and s.carried_into is null
      returning s.id
    )
    select count(app_private.enqueue_job('store.payout', jsonb_build_object('settlementId', r.id)))
    into released_count
    from released r;
  end if;
  return vendor.id;
end;
$$;

COMMENT ON FUNCTION app_private.apply_payout_account(account text, new_status app.payouts_status) IS 'Keeps a vendor''s payouts status from its Connect account (account.updated webhooks, the account re-read from the provider); when the account becomes active, the vendor''s held settlements with a positive net become pending and get store.payout jobs. Returns the vendor''s id (null for an unknown account).';

REVOKE ALL ON FUNCTION app_private.apply_payout_account(account text, new_status app.payouts_status) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fail_settlement
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fail_settlement(target_settlement_id uuid, why text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app.settlements s set status = 'failed', failure_reason = why
  where s.id = target_settlement_id and s.status = 'pending'
$$;

COMMENT ON FUNCTION app_private.fail_settlement(target_settlement_id uuid, why text) IS 'The provider refused a transfer for good: failed, with its reason, for an operator (set it back to pending and retry the dead store.payout job once fixed).';

REVOKE ALL ON FUNCTION app_private.fail_settlement(target_settlement_id uuid, why text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.guard_settlement_update
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.guard_settlement_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if (new.id, new.run_id, new.vendor_id, new.period_end, new.order_count, new.gross, new.commission,
      new.refunds, new.net, new.currency, new.created_at)
     is distinct from
     (old.id, old.run_id, old.vendor_id, old.period_end, old.order_count, old.gross, old.commission,
      old.refunds, old.net, old.currency, old.created_at) then
    raise exception 'a settlement''s amounts never change' using errcode = '42501';
  end if;
  new.updated_at := now();
  return new;
end;
$$;

COMMENT ON FUNCTION app_private.guard_settlement_update() IS 'A settlement''s vendor, period and amounts are fixed when its run writes it; only its payout (status, transfer, failure, carry, paid time) moves.';

REVOKE ALL ON FUNCTION app_private.guard_settlement_update() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.hold_settlement
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.hold_settlement(target_settlement_id uuid, why text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app.settlements s set status = 'held', failure_reason = why
  where s.id = target_settlement_id and s.status = 'pending'
$$;

COMMENT ON FUNCTION app_private.hold_settlement(target_settlement_id uuid, why text) IS 'A pending settlement whose vendor cannot be paid now (no active payout account): held, paid when the account becomes active.';

REVOKE ALL ON FUNCTION app_private.hold_settlement(target_settlement_id uuid, why text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.mark_orders_settled
-- created in 20261130060000_settlements_unsettled.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.mark_orders_settled() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update app.orders o set sale_settled = true
  from new_lines l
  where l.kind = 'sale' and o.id = l.order_id and not o.sale_settled;
  update app.orders o set refund_settled = true
  from new_lines l
  where l.kind = 'refund' and o.id = l.order_id and not o.refund_settled;
  return null;
end;
$$;

COMMENT ON FUNCTION app_private.mark_orders_settled() IS 'Sets app.orders.sale_settled / refund_settled for the orders a statement put in the settlement ledger, in the same transaction: the flags are what the settlement''s partial indexes read, so they must never disagree with the ledger.';

REVOKE ALL ON FUNCTION app_private.mark_orders_settled() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.payout_to_make
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.payout_to_make(target_settlement_id uuid) RETURNS TABLE(status app.settlement_status, net bigint, currency text, vendor_id uuid, account_id text, payouts_status app.payouts_status)
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select s.status, s.net, s.currency, s.vendor_id, v.payout_account_id, v.payouts_status
  from app.settlements s join app.vendors v on v.id = s.vendor_id
  where s.id = target_settlement_id
$$;

COMMENT ON FUNCTION app_private.payout_to_make(target_settlement_id uuid) IS 'What a store.payout job needs: the settlement''s status and net, and the vendor''s payout account and its status.';

REVOKE ALL ON FUNCTION app_private.payout_to_make(target_settlement_id uuid) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.record_payout
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.record_payout(target_settlement_id uuid, transfer text) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  update app.settlements s set status = 'paid', transfer_id = transfer, paid_at = now(), failure_reason = null
  where s.id = target_settlement_id and s.status = 'pending'
$$;

COMMENT ON FUNCTION app_private.record_payout(target_settlement_id uuid, transfer text) IS 'A pending settlement was transferred: paid, with the transfer id.';

REVOKE ALL ON FUNCTION app_private.record_payout(target_settlement_id uuid, transfer text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.refuse_ledger_change
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.refuse_ledger_change() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  raise exception 'the settlement ledger is append-only' using errcode = '42501';
end;
$$;

COMMENT ON FUNCTION app_private.refuse_ledger_change() IS 'Keeps app.settlement_lines append-only for every role, the server''s own included: a correction is a new line, never an edit.';

REVOKE ALL ON FUNCTION app_private.refuse_ledger_change() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.run_scheduled_settlements
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.run_scheduled_settlements() RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if extract(hour from now() at time zone 'UTC')::integer <> app.config_int('store', 'settlementHourUtc') then
    return null;
  end if;
  return app_private.settle(now(), null, true);
end;
$$;

COMMENT ON FUNCTION app_private.run_scheduled_settlements() IS 'The daily settlement: pg_cron calls it hourly and it settles only in the hour store.settlementHourUtc names (UTC), so changing that setting needs no rescheduling. Waits for a run in progress instead of failing.';

REVOKE ALL ON FUNCTION app_private.run_scheduled_settlements() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.settle
-- created in 20261124110400_settlements.sql; last changed in 20261130060000_settlements_unsettled.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.settle(cut_off timestamp with time zone, started uuid, wait boolean DEFAULT false) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  new_run_id uuid := gen_random_uuid();
  default_bps integer := app.config_int('store', 'commissionBps');
  settled integer;
  created integer;
begin
  if wait then
    perform pg_advisory_xact_lock(hashtext('agora.settlements'));
  elsif not pg_try_advisory_xact_lock(hashtext('agora.settlements')) then
    raise exception 'a settlement run is in progress; try again when it is done' using errcode = 'AG409';
  end if;

  insert into app.settlement_runs (id, as_of, started_by) values (new_run_id, cut_off, started);

  -- Candidates come from the partial indexes of what is not settled yet (orders_unsettled_*),
  -- whose flags the ledger's own trigger keeps. Were a flag ever wrong, the ledger's unique keys
  -- (order_id, kind) would fail the run: an order is never settled twice.
  with sales as (
    select 'sale'::text as kind, o.id as order_id, null::uuid as source, o.vendor_id, o.currency,
           o.total as amount,
           -- Per order, rounded half up to the minor unit (totals are positive integers).
           (o.total * coalesce(v.commission_bps, default_bps) + 5000) / 10000 as commission
    from app.orders o join app.vendors v on v.id = o.vendor_id
    where o.status in ('delivered', 'completed') and o.payment_status = 'succeeded'
      and not o.sale_settled and o.delivered_at <= cut_off
  ), refunded as (
    select 'refund'::text, o.id, null::uuid, o.vendor_id, o.currency, o.total, 0::bigint
    from app.orders o
    where o.status = 'refunded' and o.sale_settled and not o.refund_settled
      and o.refunded_at <= cut_off
  ), carried as (
    select 'carry'::text, null::uuid, s.id, s.vendor_id, s.currency, -s.net, 0::bigint
    from app.settlements s
    where s.status = 'held' and s.net < 0 and s.carried_into is null
  ), lines as materialized (
    select * from sales union all select * from refunded union all select * from carried
  ), totals as (
    select l.vendor_id, l.currency,
           count(*) filter (where l.kind = 'sale')::integer as order_count,
           coalesce(sum(l.amount) filter (where l.kind = 'sale'), 0)::bigint as gross,
           coalesce(sum(l.commission), 0)::bigint as commission,
           coalesce(sum(l.amount) filter (where l.kind <> 'sale'), 0)::bigint as refunds
    from lines l group by l.vendor_id, l.currency
  ), made as (
    insert into app.settlements (run_id, vendor_id, period_end, order_count, gross, commission,
                                 refunds, net, currency, status, paid_at)
    select new_run_id, t.vendor_id, cut_off, t.order_count, t.gross, t.commission, t.refunds,
           t.gross - t.commission - t.refunds, t.currency,
           case when t.gross - t.commission - t.refunds = 0 then 'paid'
                when t.gross - t.commission - t.refunds < 0 then 'held'
                when v.payouts_status = 'active' then 'pending'
                else 'held' end::app.settlement_status,
           case when t.gross - t.commission - t.refunds = 0 then now() end
    from totals t join app.vendors v on v.id = t.vendor_id
    returning id, vendor_id, currency
  )
  insert into app.settlement_lines (settlement_id, vendor_id, kind, order_id, source_settlement_id, amount, commission)
  select m.id, l.vendor_id, l.kind, l.order_id, l.source, l.amount, l.commission
  from lines l join made m on m.vendor_id = l.vendor_id and m.currency = l.currency;

  update app.settlements s set carried_into = l.settlement_id
  from app.settlements made
  join app.settlement_lines l on l.settlement_id = made.id
  where made.run_id = new_run_id and l.kind = 'carry' and s.id = l.source_settlement_id;

  perform app_private.enqueue_job('store.payout', jsonb_build_object('settlementId', s.id), now(),
                                  'payout:' || s.id)
  from app.settlements s where s.run_id = new_run_id and s.status = 'pending';

  select count(*)::integer, coalesce(sum(s.order_count), 0)::integer into created, settled
  from app.settlements s where s.run_id = new_run_id;
  update app.settlement_runs r set orders_settled = settled, settlements_created = created
  where r.id = new_run_id;

  return jsonb_build_object(
    'runId', new_run_id,
    'settlements', coalesce((select jsonb_agg(app.settlement_json(s) order by s.vendor_id)
                             from app.settlements s where s.run_id = new_run_id), '[]'::jsonb),
    'orders', settled
  );
end;
$$;

COMMENT ON FUNCTION app_private.settle(cut_off timestamp with time zone, started uuid, wait boolean) IS 'A settlement run in a few set-based statements: sale lines for the orders delivered or completed and paid by the cut-off and not yet settled (commission per order, rounded half up), refund lines for settled orders refunded since, carry lines for negative settlements, one settlement per vendor (pending when its payout account is active and the net positive, else held; nothing to pay is paid), and a store.payout job per pending settlement. It reads only the orders still to settle (the partial indexes on app.orders.sale_settled / refund_settled), so its cost follows the day''s sales, not the history. Serialized by an advisory lock (AG409, or waiting when asked); the ledger''s unique keys settle each order once whatever happens.';

REVOKE ALL ON FUNCTION app_private.settle(cut_off timestamp with time zone, started uuid, wait boolean) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-settlements
-- created in 20261124110400_settlements.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: 0 * * * *
-- command:
--   select app_private.run_scheduled_settlements()
