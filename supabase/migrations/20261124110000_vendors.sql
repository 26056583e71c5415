-- Replaces functions of other domains:
--   app.readable_topics (events).
-- (Its current body is in supabase/schema/events.sql, marked "last changed in" this migration.
-- This comment was added after the migration was applied: `supabase db push` tracks migrations
-- by version only.)
/*
 * Vendors of the store: applications (one live application per user), the ADMIN's decisions with
 * reasons and a history, a per-vendor commission override, the payout account (a Stripe Connect
 * account whose status comes from `account.updated` webhooks), the public list of approved
 * vendors, and the `vendor:<id>` realtime topic for the owner (THE topic rule is replaced here
 * with one more branch).
 *
 * Tables: app.vendors, app.vendor_decisions. Replaces app.readable_topics() (events migration)
 * with the same rule plus vendor topics. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.vendor_status as enum ('pending', 'approved', 'rejected', 'suspended');
comment on type app.vendor_status is
  'pending: applied, waiting for an ADMIN; approved: sells; rejected: refused (the owner may apply again); suspended: stopped by an ADMIN, its products leave the catalog and it cannot sell.';

create type app.payouts_status as enum ('not_started', 'pending', 'active', 'restricted');
comment on type app.payouts_status is
  'The vendor''s payout account: not_started (none yet), pending (onboarding not finished), active (can receive transfers), restricted (the provider needs more from the vendor). Only active accounts are paid; the others'' settlements are held.';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

create table app.vendors (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid references app.users (id) on delete set null,
  name text not null check (char_length(btrim(name)) between 2 and 100),
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and char_length(slug) <= 80),
  description text not null default '' check (char_length(description) <= 5000),
  logo_url text check (char_length(logo_url) <= 2048),
  contact_email text not null check (char_length(contact_email) between 3 and 320 and contact_email ~ '^[^@\s]+@[^@\s]+$'),
  country text not null check (country ~ '^[A-Z]{2}$'),
  status app.vendor_status not null default 'pending',
  commission_bps integer check (commission_bps between 0 and 10000),
  payout_account_id text unique check (char_length(payout_account_id) between 1 and 255),
  payouts_status app.payouts_status not null default 'not_started',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table app.vendors is
  'Sellers of the store, owned by one user each. Only approved vendors sell and appear in the catalog. commission_bps overrides store.commissionBps when set; payout_account_id is the vendor''s Stripe Connect account, and payouts_status follows its account.updated webhooks. Rows are written only by the functions below; owners and ADMINs read them (contact e-mail, account, commission), everyone else reads the public fields of approved vendors through app.list_vendors.';

create table app.vendor_decisions (
  id bigint generated always as identity primary key,
  vendor_id uuid not null references app.vendors (id) on delete cascade,
  from_status app.vendor_status not null,
  to_status app.vendor_status not null,
  reason text not null check (char_length(btrim(reason)) between 1 and 1000),
  commission_bps integer check (commission_bps between 0 and 10000),
  decided_by uuid references app.users (id) on delete set null,
  created_at timestamptz not null default now()
);
comment on table app.vendor_decisions is
  'Every ADMIN decision on a vendor (approve, reject, suspend, reinstate, a commission change) with its reason: the history the owner and ADMINs read. Written only by app.set_vendor_status, never updated.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- One live application per user: a rejected vendor may apply again, nobody holds two at once.
create unique index vendors_one_live_per_owner on app.vendors (owner_id)
  where status in ('pending', 'approved', 'suspended');
create index vendors_owner_id_idx on app.vendors (owner_id);
create index vendors_status_created_idx on app.vendors (status, created_at desc, id desc);
create index vendors_created_idx on app.vendors (created_at desc, id desc);
create index vendors_name_search_idx on app.vendors using gin (lower(name) extensions.gin_trgm_ops);
create index vendor_decisions_vendor_idx on app.vendor_decisions (vendor_id, id);
create index vendor_decisions_decided_by_idx on app.vendor_decisions (decided_by);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create trigger vendors_touch_updated_at before update on app.vendors
  for each row execute function app_private.touch_updated_at();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.vendors enable row level security;
alter table app.vendor_decisions enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

create function app.my_vendor_ids() returns setof uuid
language plpgsql stable security definer
set search_path = ''
as $$
begin
  if app.has_role('SUBSCRIBER') then
    return query select v.id from app.vendors v where v.owner_id = (select auth.uid());
  end if;
end;
$$;
comment on function app.my_vendor_ids() is
  'The vendors the current user owns, whatever their status (an active user of at least SUBSCRIBER; a suspended or demoted owner owns nothing until reinstated). security definer so the store''s policies can use it without recursing into the vendors policies; it returns only the caller''s own vendors.';

create function app.my_selling_vendor_ids() returns setof uuid
language plpgsql stable security definer
set search_path = ''
as $$
begin
  if app.has_role('SUBSCRIBER') then
    return query select v.id from app.vendors v
      where v.owner_id = (select auth.uid()) and v.status = 'approved';
  end if;
end;
$$;
comment on function app.my_selling_vendor_ids() is
  'The approved vendors the current user owns: who may create and edit products. security definer as app.my_vendor_ids.';

create function app_private.store_currency() returns text
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return (
    select coalesce(
      (select c.config -> 'store' ->> 'currency' from app.config_versions c order by c.version desc limit 1),
      app_private.config_defaults() -> 'store' ->> 'currency'
    )
  );
end;
$$;
comment on function app_private.store_currency() is
  'The store''s one currency (store.currency of the current configuration, its default otherwise). security definer: the configuration is readable by ADMINs only; it returns one code.';

/* The vendor as the API shows it; `detailed` adds what only the owner and ADMINs see. */
create function app.vendor_json(vendor app.vendors, detailed boolean default false) returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', vendor.id,
    'name', vendor.name,
    'slug', vendor.slug,
    'description', vendor.description,
    'logoUrl', vendor.logo_url,
    'status', vendor.status,
    'payouts', jsonb_build_object('status', vendor.payouts_status),
    'createdAt', to_char(vendor.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  ) || case when detailed then jsonb_build_object(
    'ownerId', vendor.owner_id,
    'contactEmail', vendor.contact_email,
    'country', vendor.country,
    'commissionBps', coalesce(vendor.commission_bps, app.config_int('store', 'commissionBps')),
    'commissionOverride', vendor.commission_bps is not null,
    'updatedAt', to_char(vendor.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'decisions', coalesce((
      select jsonb_agg(jsonb_build_object(
        'from', d.from_status, 'to', d.to_status, 'reason', d.reason,
        'commissionBps', d.commission_bps, 'decidedBy', d.decided_by,
        'at', to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      ) order by d.id)
      from app.vendor_decisions d where d.vendor_id = vendor.id
    ), '[]'::jsonb)
  ) else '{}'::jsonb end
$$;
comment on function app.vendor_json(app.vendors, boolean) is
  'A vendor as the API shows it: the public fields, plus owner, contact, country, the effective commission and the decision history when detailed (for the owner and ADMINs; callers decide, and RLS on app.vendor_decisions still applies to the history). security invoker.';

/* The owner's SYSTEM notification of an ADMIN's decision on their vendor. */
create function app_private.after_vendor_change(vendor app.vendors, decision_reason text) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  title text;
begin
  if vendor.owner_id is null or vendor.owner_id = auth.uid() then
    return;
  end if;
  title := case vendor.status
    when 'approved' then format('%s can sell', vendor.name)
    when 'rejected' then format('%s was not approved', vendor.name)
    when 'suspended' then format('%s is suspended', vendor.name)
    else format('%s was reviewed', vendor.name)
  end;
  perform app_private.notify(
    vendor.owner_id, 'SYSTEM', title, left(decision_reason, 2000),
    jsonb_build_object('kind', 'vendor.status_changed', 'vendorId', vendor.id, 'status', vendor.status,
                       'commissionBps', vendor.commission_bps),
    case when vendor.status = 'suspended' then 'high' else 'normal' end::app.notification_priority
  );
end;
$$;
comment on function app_private.after_vendor_change(app.vendors, text) is
  'The owner''s SYSTEM notification of an ADMIN''s decision on their vendor (data: kind vendor.status_changed, vendorId, status, commissionBps), with the decision''s reason as its body; a suspension is high priority.';

-- ---------------------------------------------------------------------------------------------
-- The topic rule, now with vendor topics (replaces the events migration's version)
-- ---------------------------------------------------------------------------------------------

create or replace function app.readable_topics() returns setof text
language plpgsql stable security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  -- A signed-out (revoked) session reads nothing, on any transport, even before its token expires.
  if session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or not exists (
       select 1 from app.sessions s
       where s.id = session_claim::uuid and s.user_id = me
         and s.revoked_at is null and s.expires_at > now()
     ) then
    return;
  end if;
  return next 'user:' || me::text;
  if app.is_admin() then
    return next 'admin';
  end if;
  return query
    select 'conversation:' || p.conversation_id::text
    from app.conversation_participants p where p.user_id = me;
  -- The owner reads its vendor's topic (orders of the vendor), whatever the vendor's status.
  return query
    select 'vendor:' || v.id::text from app.vendors v where v.owner_id = me;
end;
$$;
comment on function app.readable_topics() is
  'THE topic rule, as the set of topics the current user may read: conversation:<id> for participants (active users of at least SUBSCRIBER), user:<id> for that user, vendor:<id> for the vendor''s owner, admin for ADMINs; only for a live session, so signout ends realtime access at once. Every transport uses it: SSE and long-poll through app.can_read_topic, Realtime through the realtime.messages policy, the app.events policy as a set (evaluated once per statement, not per event row). security definer: it reads memberships, vendors and sessions the caller may not read, and returns only the caller''s own topics.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy vendors_select_owner on app.vendors for select to authenticated
  using (owner_id = (select auth.uid()) and (select app.has_role('SUBSCRIBER')));
create policy vendors_select_admin on app.vendors for select to authenticated
  using ((select app.is_admin()));

create policy vendor_decisions_select_owner on app.vendor_decisions for select to authenticated
  using (vendor_id in (select app.my_vendor_ids()));
create policy vendor_decisions_select_admin on app.vendor_decisions for select to authenticated
  using ((select app.is_admin()));

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant usage on type app.vendor_status, app.payouts_status to authenticated;
grant select on app.vendors to authenticated;
grant select on app.vendor_decisions to authenticated;
grant execute on function app.my_vendor_ids() to authenticated;
grant execute on function app.my_selling_vendor_ids() to authenticated;
grant execute on function app.vendor_json(app.vendors, boolean) to authenticated;

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/*
 * Applies for a vendor: SUBSCRIBER and up, one live application per user (the partial unique
 * index decides under concurrency; the check before it only words the refusal). The slug comes
 * from the name, made unique with a counter.
 */
create function app.apply_for_vendor(
  vendor_name text,
  vendor_description text,
  vendor_contact_email text,
  vendor_country text
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  base_slug text;
  candidate text;
  n integer := 1;
  created app.vendors;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'applying as a vendor needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  if exists (
    select 1 from app.vendors v
    where v.owner_id = me and v.status in ('pending', 'approved', 'suspended')
  ) then
    raise exception 'you already have a vendor application or a vendor' using errcode = 'AG409';
  end if;
  base_slug := left(btrim(regexp_replace(lower(vendor_name), '[^a-z0-9]+', '-', 'g'), '-'), 60);
  if base_slug = '' then
    base_slug := 'vendor';
  end if;
  candidate := base_slug;
  while exists (select 1 from app.vendors v where v.slug = candidate) loop
    n := n + 1;
    candidate := base_slug || '-' || n;
  end loop;
  begin
    insert into app.vendors (owner_id, name, slug, description, contact_email, country)
    values (me, btrim(vendor_name), candidate, coalesce(vendor_description, ''),
            btrim(vendor_contact_email), upper(vendor_country))
    returning * into created;
  exception when unique_violation then
    raise exception 'you already have a vendor application or a vendor (or the name is taken)'
      using errcode = 'AG409';
  end;
  return app.vendor_json(created, true);
end;
$$;
comment on function app.apply_for_vendor(text, text, text, text) is
  'A user applies to sell (status pending): SUBSCRIBER and up (AG403), one live (pending, approved or suspended) vendor per user (AG409, enforced by the partial unique index vendors_one_live_per_owner). security definer: vendors have no insert grant, so every row comes through this check.';
grant execute on function app.apply_for_vendor(text, text, text, text) to authenticated;

/*
 * The ADMIN's decision: approve (from pending or suspended), reject (from pending), suspend (from
 * approved), or keep the status and change the commission. Recorded with its reason; the owner
 * hears of it live (`vendor.status_changed` on user:<ownerId>).
 */
create function app.set_vendor_status(
  target_vendor_id uuid,
  new_status app.vendor_status,
  decision_reason text,
  new_commission_bps integer default null
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  vendor app.vendors;
  allowed app.vendor_status[];
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN decides on vendors' using errcode = 'AG403';
  end if;
  if char_length(btrim(coalesce(decision_reason, ''))) = 0 then
    raise exception 'a decision needs a reason' using errcode = 'AG400';
  end if;
  select * into vendor from app.vendors v where v.id = target_vendor_id for update;
  if not found then
    raise exception 'vendor not found' using errcode = 'AG404';
  end if;
  allowed := case vendor.status
    when 'pending' then array['approved', 'rejected']::app.vendor_status[]
    when 'approved' then array['suspended']::app.vendor_status[]
    when 'suspended' then array['approved']::app.vendor_status[]
    else array[]::app.vendor_status[]
  end;
  -- The same status is a commission change only.
  if not (new_status = any(allowed)
          or (new_status = vendor.status and new_commission_bps is not null and new_status <> 'rejected')) then
    raise exception 'a % vendor cannot become %', vendor.status, new_status
      using errcode = 'AG422', hint = 'invalid_transition',
            detail = jsonb_build_object('from', vendor.status, 'to', new_status, 'allowed', to_jsonb(allowed))::text;
  end if;
  insert into app.vendor_decisions (vendor_id, from_status, to_status, reason, commission_bps, decided_by)
  values (vendor.id, vendor.status, new_status, btrim(decision_reason), new_commission_bps, auth.uid());
  update app.vendors v
  set status = new_status, commission_bps = coalesce(new_commission_bps, v.commission_bps)
  where v.id = vendor.id
  returning * into vendor;
  if vendor.owner_id is not null then
    perform app_private.emit_event('user:' || vendor.owner_id, 'vendor.status_changed',
                                   app.vendor_json(vendor, true));
  end if;
  perform app_private.after_vendor_change(vendor, decision_reason);
  return app.vendor_json(vendor, true);
end;
$$;
comment on function app.set_vendor_status(uuid, app.vendor_status, text, integer) is
  'An ADMIN approves, rejects, suspends or reinstates a vendor, or changes its commission, with a reason recorded in app.vendor_decisions; a move the vendor''s status does not allow is AG422 invalid_transition with the allowed ones. The owner gets vendor.status_changed on user:<ownerId>. security definer: vendors have no update grant; the ADMIN check is explicit.';
grant execute on function app.set_vendor_status(uuid, app.vendor_status, text, integer) to authenticated;

/* Public list of approved vendors: anyone, signed in or not, sees only the public fields. */
create function app.list_vendors(
  search text default null,
  after_created_at text default null,
  after_id uuid default null,
  page_size integer default 50
) returns table (vendor jsonb, sort_key text)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  pattern text := case when search is null or search = '' then null
    else '%' || replace(replace(replace(lower(search), '\', '\\'), '%', '\%'), '_', '\_') || '%' end;
begin
  return query
    select app.vendor_json(v, false), v.created_at::text
    from app.vendors v
    where v.status = 'approved'
      and (pattern is null or lower(v.name) like pattern)
      and (after_id is null or (v.created_at, v.id) < (after_created_at::timestamptz, after_id))
    order by v.created_at desc, v.id desc
    limit least(greatest(page_size, 1), 201);
end;
$$;
comment on function app.list_vendors(text, text, uuid, integer) is
  'The public vendor list: approved vendors only, public fields only, newest first, keyset-paged by (created_at, id) (sort_key is created_at with its microseconds, for the cursor); search is a case-insensitive substring of the name. security definer: visitors hold no privilege on app tables; this returns only what anyone may see.';
grant execute on function app.list_vendors(text, text, uuid, integer) to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Payout accounts (server paths: the API's own connection; no API role executes these)
-- ---------------------------------------------------------------------------------------------

create function app_private.set_payout_account(target_vendor_id uuid, account_id text) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  update app.vendors v
  set payout_account_id = account_id,
      payouts_status = case when v.payouts_status = 'not_started' then 'pending' else v.payouts_status end
  where v.id = target_vendor_id and (v.payout_account_id is null or v.payout_account_id = account_id);
  if not found then
    raise exception 'the vendor has another payout account' using errcode = 'AG409';
  end if;
end;
$$;
comment on function app_private.set_payout_account(uuid, text) is
  'Records the Connect account created for a vendor (once; a second, different account is AG409) and marks onboarding as started. Called by the API''s payouts route after creating the account with the provider.';

revoke execute on all functions in schema app, app_private from public;
