/*
 * The daily settlement reads only what is not settled yet (issue 30, "a year of data").
 *
 * Before, `app_private.settle` found the orders to settle with an anti-join of every delivered or
 * completed order against the whole ledger, and the refunds with a semi- and anti-join of every
 * refunded order: two sequential scans of all orders and all settlement lines, so a run cost
 * what a year of history costs (1.3 s with 1k new sales, 16 s at ten times the history).
 *
 * Now each order says whether its sale and its refund are in the ledger (`sale_settled`,
 * `refund_settled`), set by a statement trigger on app.settlement_lines (the one place a ledger
 * line is made, so the flags cannot disagree with the ledger), and two partial indexes hold only
 * the orders still to settle. A run reads those indexes: its cost follows the day's sales. The
 * ledger's unique keys still decide, under any concurrency, that an order is settled once (a
 * flag that disagreed with the ledger would fail the run on them, never pay twice).
 *
 * Tables touched: app.orders (two columns, filled from the ledger once here, without moving
 * updated_at; its updated_at trigger skips the flags' own updates), app.settlement_lines (a trigger), app.settlements (a partial index for the carried
 * deductions). Nothing destructive.
 */

alter table app.orders
  add column sale_settled boolean not null default false,
  add column refund_settled boolean not null default false;

comment on column app.orders.sale_settled is
  'A sale line of the settlement ledger exists for this order (kept by app_private.mark_orders_settled, the trigger on app.settlement_lines): what the settlement''s partial index skips.';
comment on column app.orders.refund_settled is
  'A refund line of the settlement ledger exists for this order (kept by app_private.mark_orders_settled).';

-- The orders already in the ledger, once; updated_at stays what it was.
alter table app.orders disable trigger orders_touch_updated_at;
update app.orders o set sale_settled = true
where exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'sale');
update app.orders o set refund_settled = true
where exists (select 1 from app.settlement_lines l where l.order_id = o.id and l.kind = 'refund');
alter table app.orders enable trigger orders_touch_updated_at;

create index orders_unsettled_sales_idx on app.orders (delivered_at)
  where status in ('delivered', 'completed') and payment_status = 'succeeded' and not sale_settled;
create index orders_unsettled_refunds_idx on app.orders (refunded_at)
  where status = 'refunded' and sale_settled and not refund_settled;
create index settlements_to_carry_idx on app.settlements (vendor_id)
  where status = 'held' and net < 0 and carried_into is null;

create function app_private.mark_orders_settled() returns trigger
language plpgsql
set search_path = ''
as $$
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

comment on function app_private.mark_orders_settled() is
  'Sets app.orders.sale_settled / refund_settled for the orders a statement put in the settlement ledger, in the same transaction: the flags are what the settlement''s partial indexes read, so they must never disagree with the ledger.';

-- Settling is not a change of the order anyone sees: its updatedAt stays (the flags are set
-- alone, by the trigger below, never with another column).
drop trigger orders_touch_updated_at on app.orders;
create trigger orders_touch_updated_at before update on app.orders
  for each row
  when ((old.sale_settled, old.refund_settled) is not distinct from (new.sale_settled, new.refund_settled))
  execute function app_private.touch_updated_at();

create trigger settlement_lines_mark_orders after insert on app.settlement_lines
  referencing new table as new_lines
  for each statement execute function app_private.mark_orders_settled();

create or replace function app_private.settle(cut_off timestamptz, started uuid, wait boolean default false)
returns jsonb
language plpgsql
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

comment on function app_private.settle(timestamptz, uuid, boolean) is
  'A settlement run in a few set-based statements: sale lines for the orders delivered or completed and paid by the cut-off and not yet settled (commission per order, rounded half up), refund lines for settled orders refunded since, carry lines for negative settlements, one settlement per vendor (pending when its payout account is active and the net positive, else held; nothing to pay is paid), and a store.payout job per pending settlement. It reads only the orders still to settle (the partial indexes on app.orders.sale_settled / refund_settled), so its cost follows the day''s sales, not the history. Serialized by an advisory lock (AG409, or waiting when asked); the ledger''s unique keys settle each order once whatever happens.';

revoke execute on all functions in schema app, app_private from public;
