/*
 * Daily settlements and payouts. A run settles, per vendor, the orders delivered or completed
 * (and paid) at or before its cut-off that no earlier run settled: gross, commission (per order,
 * store.commissionBps or the vendor's override, rounded half up), refunds of orders an earlier
 * run settled, and net = gross - commission - refunds. The ledger (app.settlement_lines) is
 * append-only, and a unique key makes each order settled exactly once as a sale and deducted at
 * most once as a refund, whatever runs at the same time. A positive net is paid as a Stripe
 * Connect transfer (store.payout job, idempotency key settlement:<id>); a vendor whose payout
 * account is not active is held, and paid once its account becomes active; a negative net (more
 * refunds than sales) is held and carried into the vendor's next settlement.
 *
 * Schedule: pg_cron runs app_private.run_scheduled_settlements() every hour, which settles only
 * in the hour store.settlementHourUtc says (default 1, i.e. 01:00 UTC). So changing the setting
 * needs no rescheduling; a run that happens twice settles nothing twice.
 *
 * Tables: app.settlement_runs, app.settlements, app.settlement_lines. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.settlement_status as enum ('pending', 'paid', 'held', 'failed');
comment on type app.settlement_status is
  'pending: a transfer is queued; paid: transferred (or nothing to pay); held: not paid yet (the payout account is not active, or the net is negative and carried into the next settlement); failed: the provider refused the transfer (an operator must look).';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.settlement_runs (
  id uuid primary key default gen_random_uuid(),
  as_of timestamptz not null,
  started_by uuid references app.users (id) on delete set null,
  orders_settled integer not null default 0,
  settlements_created integer not null default 0,
  created_at timestamptz not null default now()
);
comment on table app.settlement_runs is
  'Each settlement run: its cut-off, who started it (null: the schedule) and what it settled.';

create table app.settlements (
  id uuid primary key default gen_random_uuid(),
  run_id uuid not null references app.settlement_runs (id) on delete restrict,
  vendor_id uuid not null references app.vendors (id) on delete restrict,
  period_end timestamptz not null,
  order_count integer not null check (order_count >= 0),
  gross bigint not null check (gross >= 0),
  commission bigint not null check (commission >= 0),
  refunds bigint not null check (refunds >= 0),
  net bigint not null,
  currency text not null check (currency ~ '^[A-Z]{3}$'),
  status app.settlement_status not null,
  transfer_id text unique,
  failure_reason text,
  carried_into uuid references app.settlements (id) on delete restrict,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  paid_at timestamptz,
  constraint settlements_net check (net = gross - commission - refunds),
  constraint settlements_one_per_run unique (run_id, vendor_id, currency)
);
comment on table app.settlements is
  'What one run owes one vendor: gross of the orders it settles, commission, refunds deducted, net, and the payout''s status and transfer. The amounts never change after the run (only status, transfer and carry fields do).';

create table app.settlement_lines (
  id bigint generated always as identity primary key,
  settlement_id uuid not null references app.settlements (id) on delete restrict,
  vendor_id uuid not null references app.vendors (id) on delete restrict,
  kind text not null check (kind in ('sale', 'refund', 'carry')),
  order_id uuid references app.orders (id) on delete restrict,
  source_settlement_id uuid references app.settlements (id) on delete restrict,
  amount bigint not null check (amount >= 0),
  commission bigint not null default 0 check (commission >= 0),
  created_at timestamptz not null default now(),
  constraint settlement_lines_order_once unique (order_id, kind),
  constraint settlement_lines_carry_once unique (source_settlement_id),
  constraint settlement_lines_shape check (
    (kind = 'carry') = (source_settlement_id is not null) and (kind = 'carry') = (order_id is null)
  )
);
comment on table app.settlement_lines is
  'The append-only ledger behind settlements: a sale line per settled order (with its commission), a refund line per settled order refunded later, a carry line per negative settlement carried forward. The unique keys (order_id, kind) and (source_settlement_id) make each order settled exactly once and each deduction made once, under any concurrency; a trigger refuses updates and deletes.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

create index settlement_runs_started_by_idx on app.settlement_runs (started_by);
create index settlements_vendor_idx on app.settlements (vendor_id, created_at desc, id desc);
create index settlements_created_idx on app.settlements (created_at desc, id desc);
create index settlements_status_idx on app.settlements (status, vendor_id);
create index settlements_carried_into_idx on app.settlements (carried_into);
create index settlement_lines_settlement_idx on app.settlement_lines (settlement_id);
create index settlement_lines_vendor_idx on app.settlement_lines (vendor_id);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.refuse_ledger_change() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'the settlement ledger is append-only' using errcode = '42501';
end;
$$;
comment on function app_private.refuse_ledger_change() is
  'Keeps app.settlement_lines append-only for every role, the server''s own included: a correction is a new line, never an edit.';

create function app_private.guard_settlement_update() returns trigger
language plpgsql
set search_path = ''
as $$
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
comment on function app_private.guard_settlement_update() is
  'A settlement''s vendor, period and amounts are fixed when its run writes it; only its payout (status, transfer, failure, carry, paid time) moves.';

create trigger settlement_lines_append_only before update or delete on app.settlement_lines
  for each row execute function app_private.refuse_ledger_change();
create trigger settlements_guard_update before update on app.settlements
  for each row execute function app_private.guard_settlement_update();
create trigger settlements_no_delete before delete on app.settlements
  for each row execute function app_private.refuse_ledger_change();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.settlement_runs enable row level security;
alter table app.settlements enable row level security;
alter table app.settlement_lines enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

create function app.settlement_json(settlement app.settlements) returns jsonb
language sql stable
set search_path = ''
as $$
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
comment on function app.settlement_json(app.settlements) is
  'A settlement as the API shows it (money as { amount, currency }). A builder: reads no table.';

/*
 * One settlement run at `cut_off`. Runs are serialized by an advisory lock (a concurrent run is
 * refused with AG409, or waits when `wait`); whatever happens, the unique keys of the ledger
 * make a second settlement of an order fail rather than happen.
 */
create function app_private.settle(cut_off timestamptz, started uuid, wait boolean default false)
returns jsonb
language plpgsql volatile
set search_path = ''
as $$
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

  with sales as (
    select 'sale'::text as kind, o.id as order_id, null::uuid as source, o.vendor_id, o.currency,
           o.total as amount,
           -- Per order, rounded half up to the minor unit (totals are positive integers).
           (o.total * coalesce(v.commission_bps, default_bps) + 5000) / 10000 as commission
    from app.orders o join app.vendors v on v.id = o.vendor_id
    where o.status in ('delivered', 'completed') and o.payment_status = 'succeeded'
      and o.delivered_at <= cut_off
      and not exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'sale')
  ), refunded as (
    select 'refund'::text, o.id, null::uuid, o.vendor_id, o.currency, o.total, 0::bigint
    from app.orders o
    where o.status = 'refunded' and o.refunded_at <= cut_off
      and exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'sale')
      and not exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'refund')
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
  from app.settlement_lines l
  join app.settlements made on made.id = l.settlement_id and made.run_id = new_run_id
  where l.kind = 'carry' and s.id = l.source_settlement_id;

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
comment on function app_private.settle(timestamptz, uuid, boolean) is
  'A settlement run in a few set-based statements: sale lines for the orders delivered or completed and paid by the cut-off and not yet settled (commission per order, rounded half up), refund lines for settled orders refunded since, carry lines for negative settlements, one settlement per vendor (pending when its payout account is active and the net positive, else held; nothing to pay is paid), and a store.payout job per pending settlement. Serialized by an advisory lock (AG409, or waiting when asked); the ledger''s unique keys settle each order once whatever happens.';

create function app_private.run_scheduled_settlements() returns jsonb
language plpgsql volatile
set search_path = ''
as $$
begin
  if extract(hour from now() at time zone 'UTC')::integer <> app.config_int('store', 'settlementHourUtc') then
    return null;
  end if;
  return app_private.settle(now(), null, true);
end;
$$;
comment on function app_private.run_scheduled_settlements() is
  'The daily settlement: pg_cron calls it hourly and it settles only in the hour store.settlementHourUtc names (UTC), so changing that setting needs no rescheduling. Waits for a run in progress instead of failing.';

-- ---------------------------------------------------------------------------------------------
-- Payouts (server paths: store.payout jobs, account webhooks)
-- ---------------------------------------------------------------------------------------------

create function app_private.payout_to_make(target_settlement_id uuid)
returns table (status app.settlement_status, net bigint, currency text, vendor_id uuid,
               account_id text, payouts_status app.payouts_status)
language sql stable
set search_path = ''
as $$
  select s.status, s.net, s.currency, s.vendor_id, v.payout_account_id, v.payouts_status
  from app.settlements s join app.vendors v on v.id = s.vendor_id
  where s.id = target_settlement_id
$$;
comment on function app_private.payout_to_make(uuid) is
  'What a store.payout job needs: the settlement''s status and net, and the vendor''s payout account and its status.';

create function app_private.record_payout(target_settlement_id uuid, transfer text) returns void
language sql volatile
set search_path = ''
as $$
  update app.settlements s set status = 'paid', transfer_id = transfer, paid_at = now(), failure_reason = null
  where s.id = target_settlement_id and s.status = 'pending'
$$;
comment on function app_private.record_payout(uuid, text) is
  'A pending settlement was transferred: paid, with the transfer id.';

create function app_private.hold_settlement(target_settlement_id uuid, why text) returns void
language sql volatile
set search_path = ''
as $$
  update app.settlements s set status = 'held', failure_reason = why
  where s.id = target_settlement_id and s.status = 'pending'
$$;
comment on function app_private.hold_settlement(uuid, text) is
  'A pending settlement whose vendor cannot be paid now (no active payout account): held, paid when the account becomes active.';

create function app_private.fail_settlement(target_settlement_id uuid, why text) returns void
language sql volatile
set search_path = ''
as $$
  update app.settlements s set status = 'failed', failure_reason = why
  where s.id = target_settlement_id and s.status = 'pending'
$$;
comment on function app_private.fail_settlement(uuid, text) is
  'The provider refused a transfer for good: failed, with its reason, for an operator (set it back to pending and retry the dead store.payout job once fixed).';

/*
 * A payout account's status from the provider (account.updated, re-read by the job). When it
 * becomes active, the vendor's held settlements with a positive net are queued for payment.
 */
create function app_private.apply_payout_account(account text, new_status app.payouts_status) returns uuid
language plpgsql volatile
set search_path = ''
as $$
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
comment on function app_private.apply_payout_account(text, app.payouts_status) is
  'Keeps a vendor''s payouts status from its Connect account (account.updated webhooks, the account re-read from the provider); when the account becomes active, the vendor''s held settlements with a positive net become pending and get store.payout jobs. Returns the vendor''s id (null for an unknown account).';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy settlement_runs_select_admin on app.settlement_runs for select to authenticated
  using ((select app.is_admin()));
create policy settlements_select_vendor on app.settlements for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()));
create policy settlements_select_admin on app.settlements for select to authenticated
  using ((select app.is_admin()));
create policy settlement_lines_select_vendor on app.settlement_lines for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()));
create policy settlement_lines_select_admin on app.settlement_lines for select to authenticated
  using ((select app.is_admin()));

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant usage on type app.settlement_status to authenticated;
grant select on app.settlement_runs to authenticated;
grant select on app.settlements to authenticated;
grant select on app.settlement_lines to authenticated;
grant execute on function app.settlement_json(app.settlements) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

create function app.run_settlements(cut_off timestamptz default null) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN runs settlements' using errcode = 'AG403';
  end if;
  return app_private.settle(least(coalesce(cut_off, now()), now()), auth.uid(), false);
end;
$$;
comment on function app.run_settlements(timestamptz) is
  'POST /api/admin/settlements/run: the daily settlement now, up to cut_off (default and at most now). A run already in progress is AG409. security definer: settling reads and writes every vendor''s orders and ledger; the ADMIN check is explicit.';
grant execute on function app.run_settlements(timestamptz) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- Schedules
-- ---------------------------------------------------------------------------------------------

select cron.schedule('agora-settlements', '0 * * * *', 'select app_private.run_scheduled_settlements()');

revoke execute on all functions in schema app, app_private from public;
