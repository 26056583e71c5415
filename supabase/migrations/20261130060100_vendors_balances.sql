/*
 * A vendor's pending balance, maintained (issue 30, "a year of data").
 *
 * Before, GET /api/store/vendors/me summed every order of the vendor anti-joined to the
 * settlement ledger on each request (0.5 s for a top vendor, 7.5 s at ten times the history).
 * Now the writes keep it: statement triggers on app.orders append, per vendor, the change each
 * statement made to the sum of its paid, unsettled orders (app_private.vendor_balance_changes);
 * app_private.fold_vendor_balances folds those changes into one row per vendor
 * (app_private.vendor_balances) every minute. A reader adds the
 * vendor's row and its changes not folded yet (a few minutes' worth), in one snapshot, so the
 * figure is exact at any moment.
 *
 * Why a log of changes and not one counter row updated by the trigger: a checkout pays the
 * orders of several vendors, and a counter row per vendor would be locked by every sale of a top
 * vendor until its transaction commits (one sale at a time for that vendor), with a deadlock as
 * soon as two transactions touch two vendors in opposite orders. Appending takes no lock a
 * writer could wait on; the fold is one transaction (its delete and its upsert commit together).
 *
 * "Pending" is what it was: the total of the vendor's orders with a succeeded payment, in
 * status paid, processing, shipped, delivered or completed, whose sale is not in the ledger
 * (app.orders.sale_settled, the settlements migration before this one).
 *
 * Tables: app_private.vendor_balances, app_private.vendor_balance_changes (new, filled from the
 * orders here). Nothing destructive.
 */

create table app_private.vendor_balances (
  vendor_id uuid primary key references app.vendors (id) on delete cascade,
  pending bigint not null default 0,
  updated_at timestamptz not null default now()
);

comment on table app_private.vendor_balances is
  'Per vendor, the folded part of its pending balance (paid orders not settled yet, gross, minor units): app_private.vendor_pending adds the changes not folded yet. Server only: read through that security definer function.';

create table app_private.vendor_balance_changes (
  id bigint generated always as identity primary key,
  vendor_id uuid not null references app.vendors (id) on delete cascade,
  delta bigint not null,
  created_at timestamptz not null default now()
);

comment on table app_private.vendor_balance_changes is
  'What each statement on app.orders changed in a vendor''s pending balance, appended by the orders'' statement triggers (no lock taken, so sales of one vendor never wait for each other) and folded into app_private.vendor_balances by app_private.fold_vendor_balances. Server only.';

create index vendor_balance_changes_vendor_idx on app_private.vendor_balance_changes (vendor_id) include (delta);

alter table app_private.vendor_balances enable row level security;
alter table app_private.vendor_balance_changes enable row level security;

create function app_private.track_vendor_balances() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into app_private.vendor_balance_changes (vendor_id, delta)
    select x.vendor_id, sum(x.delta)
    from (select n.vendor_id, case when n.payment_status = 'succeeded' and not n.sale_settled
                    and n.status in ('paid', 'processing', 'shipped', 'delivered', 'completed')
               then n.total else 0 end as delta
          from new_rows n) x
    group by x.vendor_id having sum(x.delta) <> 0;
  elsif tg_op = 'DELETE' then
    insert into app_private.vendor_balance_changes (vendor_id, delta)
    select x.vendor_id, -sum(x.delta)
    from (select o.vendor_id, case when o.payment_status = 'succeeded' and not o.sale_settled
                    and o.status in ('paid', 'processing', 'shipped', 'delivered', 'completed')
               then o.total else 0 end as delta
          from old_rows o) x
    group by x.vendor_id having sum(x.delta) <> 0;
  else
    insert into app_private.vendor_balance_changes (vendor_id, delta)
    select x.vendor_id, sum(x.delta)
    from (
      select n.vendor_id, case when n.payment_status = 'succeeded' and not n.sale_settled
                    and n.status in ('paid', 'processing', 'shipped', 'delivered', 'completed')
               then n.total else 0 end as delta
      from new_rows n
      union all
      select o.vendor_id, -case when o.payment_status = 'succeeded' and not o.sale_settled
                    and o.status in ('paid', 'processing', 'shipped', 'delivered', 'completed')
               then o.total else 0 end
      from old_rows o
    ) x
    group by x.vendor_id having sum(x.delta) <> 0;
  end if;
  return null;
end;
$$;

comment on function app_private.track_vendor_balances() is
  'The statement triggers on app.orders: appends, per vendor, the change the statement made to its pending balance (what the new rows add minus what the old rows added: an order adds its total while its payment succeeded, its status is paid to completed and its sale is not in the ledger). security definer: the order functions run as the buyer or the vendor, who may not write the balances.';

create trigger orders_balance_insert after insert on app.orders
  referencing new table as new_rows
  for each statement execute function app_private.track_vendor_balances();
create trigger orders_balance_update after update on app.orders
  referencing old table as old_rows new table as new_rows
  for each statement execute function app_private.track_vendor_balances();
create trigger orders_balance_delete after delete on app.orders
  referencing old table as old_rows
  for each statement execute function app_private.track_vendor_balances();

create function app_private.fold_vendor_balances() returns integer
language plpgsql
set search_path = ''
as $$
declare
  folded integer;
begin
  -- One fold at a time (another one running folds the same rows: nothing is lost if this one
  -- skips).
  if not pg_try_advisory_xact_lock(hashtext('agora.vendor_balances')) then
    return 0;
  end if;
  with taken as (
    delete from app_private.vendor_balance_changes returning vendor_id, delta
  ), sums as (
    select t.vendor_id, sum(t.delta)::bigint as delta, count(*)::integer as n
    from taken t group by t.vendor_id
  ), applied as (
    insert into app_private.vendor_balances as b (vendor_id, pending)
    select s.vendor_id, s.delta from sums s order by s.vendor_id
    on conflict (vendor_id) do update set pending = b.pending + excluded.pending, updated_at = now()
    returning 1
  )
  select coalesce(sum(s.n), 0)::integer into folded from sums s;
  return folded;
end;
$$;

comment on function app_private.fold_vendor_balances() is
  'Folds the appended balance changes into app_private.vendor_balances in one transaction (a reader sees either the changes or their sum, never both or neither); returns how many changes it folded. pg_cron runs it every minute (agora-fold-vendor-balances).';

create function app.vendor_pending(target uuid) returns bigint
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if not (target in (select app.my_vendor_ids()) or app.is_admin()) then
    return null;
  end if;
  return (
    select coalesce((select b.pending from app_private.vendor_balances b where b.vendor_id = target), 0)
         + coalesce((select sum(c.delta) from app_private.vendor_balance_changes c
                     where c.vendor_id = target), 0));
end;
$$;

comment on function app.vendor_pending(uuid) is
  'A vendor''s pending balance (paid orders not settled yet, gross), for its owner or an ADMIN (null for anyone else): the folded row plus the changes not folded yet, read in one snapshot, so it is exact. GET /api/store/vendors/me. security definer: the balances are server-only tables.';

grant execute on function app.vendor_pending(uuid) to authenticated;

-- The balances as they are now, from the orders (every change from here on is appended).
insert into app_private.vendor_balances (vendor_id, pending)
select o.vendor_id, sum(o.total)
from app.orders o
where o.payment_status = 'succeeded' and not o.sale_settled
  and o.status in ('paid', 'processing', 'shipped', 'delivered', 'completed')
group by o.vendor_id;

select cron.schedule('agora-fold-vendor-balances', '* * * * *', 'select app_private.fold_vendor_balances()');

revoke execute on all functions in schema app, app_private from public;
