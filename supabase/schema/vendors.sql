-- Agora's schema as it is now, domain vendors: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261124110000_vendors.sql
--   supabase/migrations/20261129100300_vendors_one_policy_per_operation.sql
--   supabase/migrations/20261130060100_vendors_balances.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- type app.payouts_status
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.payouts_status AS ENUM (
    'not_started',
    'pending',
    'active',
    'restricted'
);

COMMENT ON TYPE app.payouts_status IS 'The vendor''s payout account: not_started (none yet), pending (onboarding not finished), active (can receive transfers), restricted (the provider needs more from the vendor). Only active accounts are paid; the others'' settlements are held.';

GRANT ALL ON TYPE app.payouts_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- type app.vendor_status
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE TYPE app.vendor_status AS ENUM (
    'pending',
    'approved',
    'rejected',
    'suspended'
);

COMMENT ON TYPE app.vendor_status IS 'pending: applied, waiting for an ADMIN; approved: sells; rejected: refused (the owner may apply again); suspended: stopped by an ADMIN, its products leave the catalog and it cannot sell.';

GRANT ALL ON TYPE app.vendor_status TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.vendor_decisions
-- created in 20261124110000_vendors.sql; last changed in 20261129100300_vendors_one_policy_per_operation.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.vendor_decisions (
    id bigint NOT NULL,
    vendor_id uuid NOT NULL,
    from_status app.vendor_status NOT NULL,
    to_status app.vendor_status NOT NULL,
    reason text NOT NULL,
    commission_bps integer,
    decided_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT vendor_decisions_commission_bps_check CHECK (((commission_bps >= 0) AND (commission_bps <= 10000))),
    CONSTRAINT vendor_decisions_reason_check CHECK (((char_length(btrim(reason)) >= 1) AND (char_length(btrim(reason)) <= 1000)))
);

COMMENT ON TABLE app.vendor_decisions IS 'Every ADMIN decision on a vendor (approve, reject, suspend, reinstate, a commission change) with its reason: the history the owner and ADMINs read. Written only by app.set_vendor_status, never updated.';

ALTER TABLE app.vendor_decisions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.vendor_decisions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app.vendor_decisions
    ADD CONSTRAINT vendor_decisions_pkey PRIMARY KEY (id);

CREATE INDEX vendor_decisions_decided_by_idx ON app.vendor_decisions USING btree (decided_by);

CREATE INDEX vendor_decisions_vendor_idx ON app.vendor_decisions USING btree (vendor_id, id);

ALTER TABLE ONLY app.vendor_decisions
    ADD CONSTRAINT vendor_decisions_decided_by_fkey FOREIGN KEY (decided_by) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE ONLY app.vendor_decisions
    ADD CONSTRAINT vendor_decisions_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

ALTER TABLE app.vendor_decisions ENABLE ROW LEVEL SECURITY;

CREATE POLICY vendor_decisions_select_owner_or_admin ON app.vendor_decisions FOR SELECT TO authenticated USING (((vendor_id IN ( SELECT app.my_vendor_ids() AS my_vendor_ids)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.vendor_decisions TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app.vendors
-- created in 20261124110000_vendors.sql; last changed in 20261130060200_catalog_facets.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app.vendors (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    owner_id uuid,
    name text NOT NULL,
    slug text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    logo_url text,
    contact_email text NOT NULL,
    country text NOT NULL,
    status app.vendor_status DEFAULT 'pending'::app.vendor_status NOT NULL,
    commission_bps integer,
    payout_account_id text,
    payouts_status app.payouts_status DEFAULT 'not_started'::app.payouts_status NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT vendors_commission_bps_check CHECK (((commission_bps >= 0) AND (commission_bps <= 10000))),
    CONSTRAINT vendors_contact_email_check CHECK ((((char_length(contact_email) >= 3) AND (char_length(contact_email) <= 320)) AND (contact_email ~ '^[^@\s]+@[^@\s]+$'::text))),
    CONSTRAINT vendors_country_check CHECK ((country ~ '^[A-Z]{2}$'::text)),
    CONSTRAINT vendors_description_check CHECK ((char_length(description) <= 5000)),
    CONSTRAINT vendors_logo_url_check CHECK ((char_length(logo_url) <= 2048)),
    CONSTRAINT vendors_name_check CHECK (((char_length(btrim(name)) >= 2) AND (char_length(btrim(name)) <= 100))),
    CONSTRAINT vendors_payout_account_id_check CHECK (((char_length(payout_account_id) >= 1) AND (char_length(payout_account_id) <= 255))),
    CONSTRAINT vendors_slug_check CHECK (((slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'::text) AND (char_length(slug) <= 80)))
);

COMMENT ON TABLE app.vendors IS 'Sellers of the store, owned by one user each. Only approved vendors sell and appear in the catalog. commission_bps overrides store.commissionBps when set; payout_account_id is the vendor''s Stripe Connect account, and payouts_status follows its account.updated webhooks. Rows are written only by the functions below; owners and ADMINs read them (contact e-mail, account, commission), everyone else reads the public fields of approved vendors through app.list_vendors.';

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_payout_account_id_key UNIQUE (payout_account_id);

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_pkey PRIMARY KEY (id);

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_slug_key UNIQUE (slug);

CREATE INDEX vendors_created_idx ON app.vendors USING btree (created_at DESC, id DESC);

CREATE INDEX vendors_name_search_idx ON app.vendors USING gin (lower(name) extensions.gin_trgm_ops);

CREATE UNIQUE INDEX vendors_one_live_per_owner ON app.vendors USING btree (owner_id) WHERE (status = ANY (ARRAY['pending'::app.vendor_status, 'approved'::app.vendor_status, 'suspended'::app.vendor_status]));

CREATE INDEX vendors_owner_id_idx ON app.vendors USING btree (owner_id);

CREATE INDEX vendors_status_created_idx ON app.vendors USING btree (status, created_at DESC, id DESC);

CREATE TRIGGER vendors_count_catalog AFTER UPDATE OF status ON app.vendors FOR EACH ROW WHEN (((old.status = 'approved'::app.vendor_status) IS DISTINCT FROM (new.status = 'approved'::app.vendor_status))) EXECUTE FUNCTION app_private.count_vendor_catalog();

CREATE TRIGGER vendors_touch_updated_at BEFORE UPDATE ON app.vendors FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

ALTER TABLE ONLY app.vendors
    ADD CONSTRAINT vendors_owner_id_fkey FOREIGN KEY (owner_id) REFERENCES app.users(id) ON DELETE SET NULL;

ALTER TABLE app.vendors ENABLE ROW LEVEL SECURITY;

CREATE POLICY vendors_select_owner_or_admin ON app.vendors FOR SELECT TO authenticated USING ((((owner_id = ( SELECT auth.uid() AS uid)) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role)) OR ( SELECT app.is_admin() AS is_admin)));

GRANT SELECT ON TABLE app.vendors TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- table app_private.vendor_balance_changes
-- created in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.vendor_balance_changes (
    id bigint NOT NULL,
    vendor_id uuid NOT NULL,
    delta bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app_private.vendor_balance_changes IS 'What each statement on app.orders changed in a vendor''s pending balance, appended by the orders'' statement triggers (no lock taken, so sales of one vendor never wait for each other) and folded into app_private.vendor_balances by app_private.fold_vendor_balances. Server only.';

ALTER TABLE app_private.vendor_balance_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.vendor_balance_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY app_private.vendor_balance_changes
    ADD CONSTRAINT vendor_balance_changes_pkey PRIMARY KEY (id);

CREATE INDEX vendor_balance_changes_vendor_idx ON app_private.vendor_balance_changes USING btree (vendor_id) INCLUDE (delta);

ALTER TABLE ONLY app_private.vendor_balance_changes
    ADD CONSTRAINT vendor_balance_changes_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

ALTER TABLE app_private.vendor_balance_changes ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- table app_private.vendor_balances
-- created in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.vendor_balances (
    vendor_id uuid NOT NULL,
    pending bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

COMMENT ON TABLE app_private.vendor_balances IS 'Per vendor, the folded part of its pending balance (paid orders not settled yet, gross, minor units): app_private.vendor_pending adds the changes not folded yet. Server only: read through that security definer function.';

ALTER TABLE ONLY app_private.vendor_balances
    ADD CONSTRAINT vendor_balances_pkey PRIMARY KEY (vendor_id);

ALTER TABLE ONLY app_private.vendor_balances
    ADD CONSTRAINT vendor_balances_vendor_id_fkey FOREIGN KEY (vendor_id) REFERENCES app.vendors(id) ON DELETE CASCADE;

ALTER TABLE app_private.vendor_balances ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.apply_for_vendor
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) IS 'A user applies to sell (status pending): SUBSCRIBER and up (AG403), one live (pending, approved or suspended) vendor per user (AG409, enforced by the partial unique index vendors_one_live_per_owner). security definer: vendors have no insert grant, so every row comes through this check.';

REVOKE ALL ON FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.apply_for_vendor(vendor_name text, vendor_description text, vendor_contact_email text, vendor_country text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.list_vendors
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.list_vendors(search text DEFAULT NULL::text, after_created_at text DEFAULT NULL::text, after_id uuid DEFAULT NULL::uuid, page_size integer DEFAULT 50) RETURNS TABLE(vendor jsonb, sort_key text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) IS 'The public vendor list: approved vendors only, public fields only, newest first, keyset-paged by (created_at, id) (sort_key is created_at with its microseconds, for the cursor); search is a case-insensitive substring of the name. security definer: visitors hold no privilege on app tables; this returns only what anyone may see.';

REVOKE ALL ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) TO anon;
GRANT ALL ON FUNCTION app.list_vendors(search text, after_created_at text, after_id uuid, page_size integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.my_selling_vendor_ids
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.my_selling_vendor_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if app.has_role('SUBSCRIBER') then
    return query select v.id from app.vendors v
      where v.owner_id = (select auth.uid()) and v.status = 'approved';
  end if;
end;
$$;

COMMENT ON FUNCTION app.my_selling_vendor_ids() IS 'The approved vendors the current user owns: who may create and edit products. security definer as app.my_vendor_ids.';

REVOKE ALL ON FUNCTION app.my_selling_vendor_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_selling_vendor_ids() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.my_vendor_ids
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.my_vendor_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if app.has_role('SUBSCRIBER') then
    return query select v.id from app.vendors v where v.owner_id = (select auth.uid());
  end if;
end;
$$;

COMMENT ON FUNCTION app.my_vendor_ids() IS 'The vendors the current user owns, whatever their status (an active user of at least SUBSCRIBER; a suspended or demoted owner owns nothing until reinstated). security definer so the store''s policies can use it without recursing into the vendors policies; it returns only the caller''s own vendors.';

REVOKE ALL ON FUNCTION app.my_vendor_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_vendor_ids() TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.set_vendor_status
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer DEFAULT NULL::integer) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer) IS 'An ADMIN approves, rejects, suspends or reinstates a vendor, or changes its commission, with a reason recorded in app.vendor_decisions; a move the vendor''s status does not allow is AG422 invalid_transition with the allowed ones. The owner gets vendor.status_changed on user:<ownerId>. security definer: vendors have no update grant; the ADMIN check is explicit.';

REVOKE ALL ON FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.set_vendor_status(target_vendor_id uuid, new_status app.vendor_status, decision_reason text, new_commission_bps integer) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.vendor_json
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.vendor_json(vendor app.vendors, detailed boolean DEFAULT false) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.vendor_json(vendor app.vendors, detailed boolean) IS 'A vendor as the API shows it: the public fields, plus owner, contact, country, the effective commission and the decision history when detailed (for the owner and ADMINs; callers decide, and RLS on app.vendor_decisions still applies to the history). security invoker.';

REVOKE ALL ON FUNCTION app.vendor_json(vendor app.vendors, detailed boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION app.vendor_json(vendor app.vendors, detailed boolean) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.vendor_pending
-- created in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.vendor_pending(target uuid) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.vendor_pending(target uuid) IS 'A vendor''s pending balance (paid orders not settled yet, gross), for its owner or an ADMIN (null for anyone else): the folded row plus the changes not folded yet, read in one snapshot, so it is exact. GET /api/store/vendors/me. security definer: the balances are server-only tables.';

REVOKE ALL ON FUNCTION app.vendor_pending(target uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.vendor_pending(target uuid) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.after_vendor_change
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.after_vendor_change(vendor app.vendors, decision_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.after_vendor_change(vendor app.vendors, decision_reason text) IS 'The owner''s SYSTEM notification of an ADMIN''s decision on their vendor (data: kind vendor.status_changed, vendorId, status, commissionBps), with the decision''s reason as its body; a suspension is high priority.';

REVOKE ALL ON FUNCTION app_private.after_vendor_change(vendor app.vendors, decision_reason text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.fold_vendor_balances
-- created in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.fold_vendor_balances() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.fold_vendor_balances() IS 'Folds the appended balance changes into app_private.vendor_balances in one transaction (a reader sees either the changes or their sum, never both or neither); returns how many changes it folded. pg_cron runs it every minute (agora-fold-vendor-balances).';

REVOKE ALL ON FUNCTION app_private.fold_vendor_balances() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.set_payout_account
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.set_payout_account(target_vendor_id uuid, account_id text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.set_payout_account(target_vendor_id uuid, account_id text) IS 'Records the Connect account created for a vendor (once; a second, different account is AG409) and marks onboarding as started. Called by the API''s payouts route after creating the account with the provider.';

REVOKE ALL ON FUNCTION app_private.set_payout_account(target_vendor_id uuid, account_id text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.store_currency
-- created in 20261124110000_vendors.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.store_currency() RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return (
    select coalesce(
      (select c.config -> 'store' ->> 'currency' from app.config_versions c order by c.version desc limit 1),
      app_private.config_defaults() -> 'store' ->> 'currency'
    )
  );
end;
$$;

COMMENT ON FUNCTION app_private.store_currency() IS 'The store''s one currency (store.currency of the current configuration, its default otherwise). security definer: the configuration is readable by ADMINs only; it returns one code.';

REVOKE ALL ON FUNCTION app_private.store_currency() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.track_vendor_balances
-- created in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.track_vendor_balances() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.track_vendor_balances() IS 'The statement triggers on app.orders: appends, per vendor, the change the statement made to its pending balance (what the new rows add minus what the old rows added: an order adds its total while its payment succeeded, its status is paid to completed and its sale is not in the ledger). security definer: the order functions run as the buyer or the vendor, who may not write the balances.';

REVOKE ALL ON FUNCTION app_private.track_vendor_balances() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-fold-vendor-balances
-- created in 20261130060100_vendors_balances.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: * * * * *
-- command:
--   select app_private.fold_vendor_balances()
