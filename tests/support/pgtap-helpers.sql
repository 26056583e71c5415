/*
 * pgTAP helpers, loaded once into the throwaway test database by the test runner (never part of
 * the migrations). Identity switching uses the same mechanism as the API at run time: role and
 * `request.jwt.claims` set for the transaction only.
 */
create schema if not exists tests;
grant usage on schema tests to anon, authenticated;

/* A user created by a trusted path (no claims), like sign-in does. */
create or replace function tests.create_user(email text, role app.user_role default 'SUBSCRIBER')
returns uuid
language sql volatile
set search_path = ''
as $$
  insert into app.users (email, name, role) values (email, split_part(email, '@', 1), role) returning id
$$;

/*
 * A live session of the user for tests (provider 'test'), created once and reused: the topic rule
 * reads only live sessions. security definer so it works whoever the test is acting as.
 */
create or replace function tests.session_for(target uuid)
returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  sid uuid;
begin
  select s.id into sid from app.sessions s
  where s.user_id = target and s.provider = 'test' and s.revoked_at is null and s.expires_at > now()
  limit 1;
  if sid is null and exists (select 1 from app.users u where u.id = target) then
    insert into app.sessions (user_id, provider, expires_at)
    values (target, 'test', now() + interval '1 day') returning id into sid;
  end if;
  return sid;
end;
$$;

/* Act as a signed-in user (with a live session) for the rest of the transaction. */
create or replace function tests.authenticate_as(user_id uuid)
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims',
    json_build_object('sub', user_id, 'role', 'authenticated', 'session_id', tests.session_for(user_id))::text, true);
  perform set_config('role', 'authenticated', true);
end;
$$;

/* Act as an anonymous visitor for the rest of the transaction. */
create or replace function tests.authenticate_as_anon()
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', '{"role":"anon"}', true);
  perform set_config('role', 'anon', true);
end;
$$;

/* Back to the test's own (superuser) identity, with no claims. */
create or replace function tests.clear_authentication()
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform set_config('role', 'none', true);
  perform set_config('request.jwt.claims', '', true);
end;
$$;

/*
 * The id of a user by email, whoever is asking: a test acting as one user can name another user's
 * row in the statement it expects to be refused (RLS would hide it from a plain subquery, and the
 * statement would then target nothing and prove nothing). Raises for an unknown email, so a typo
 * cannot turn a denial test into one that passes by targeting no row. Tests only: bypasses RLS.
 */
create or replace function tests.user_id(user_email text)
returns uuid
language plpgsql stable security definer
set search_path = ''
as $$
declare
  found_id uuid;
begin
  select u.id into strict found_id from app.users u where lower(u.email) = lower(user_email);
  return found_id;
exception
  when no_data_found then
    raise exception 'tests.user_id: no user with email %', user_email;
end;
$$;

/*
 * How many rows one statement affected, run with the caller's identity. An update or delete that
 * RLS filters out affects 0 rows without an error; this is how a test tells that apart from one
 * that succeeded.
 */
create or replace function tests.row_count(statement text)
returns bigint
language plpgsql volatile
set search_path = ''
as $$
declare
  affected bigint;
begin
  execute statement;
  get diagnostics affected = row_count;
  return affected;
end;
$$;

grant execute on all functions in schema tests to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Messaging (tests/messaging/sql/, tests/realtime/sql/)
-- ---------------------------------------------------------------------------------------------

/*
 * Creates a conversation through app.create_conversation as `creator` (every rule of the function
 * applies: roles, statuses, limits), whoever is asking, and returns its id. The caller's claims
 * are restored afterwards, so a test can set up a conversation in the middle of a persona section.
 */
create or replace function tests.create_conversation(
  creator uuid,
  conversation_type app.conversation_type,
  participant_ids uuid[],
  conversation_title text default null
)
returns uuid
language plpgsql volatile
set search_path = ''
as $$
declare
  previous_claims text := current_setting('request.jwt.claims', true);
  new_id uuid;
begin
  perform set_config('request.jwt.claims',
    json_build_object('sub', creator, 'role', 'authenticated')::text, true);
  select c.conversation_id into strict new_id
  from app.create_conversation(conversation_type, participant_ids, conversation_title) c;
  perform set_config('request.jwt.claims', coalesce(previous_claims, ''), true);
  return new_id;
end;
$$;

/*
 * A message written on a trusted path (no RLS, any sender, any creation time), for fixtures such
 * as a message older than the edit window. The seq trigger still numbers it. Tests only.
 */
create or replace function tests.insert_message(
  target_conversation_id uuid,
  sender uuid,
  message_content text,
  written_at timestamptz default now()
)
returns uuid
language sql volatile security definer
set search_path = ''
as $$
  insert into app.messages (conversation_id, sender_id, content, created_at)
  values (target_conversation_id, sender, message_content, written_at)
  returning id
$$;

grant execute on function tests.create_conversation(uuid, app.conversation_type, uuid[], text) to anon, authenticated;
grant execute on function tests.insert_message(uuid, uuid, text, timestamptz) to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Store (tests/store/sql/)
-- ---------------------------------------------------------------------------------------------

/* A vendor written on a trusted path (any status), for fixtures. Tests only. */
create or replace function tests.create_vendor(
  owner uuid,
  vendor_name text,
  vendor_status app.vendor_status default 'approved',
  vendor_commission_bps integer default null
)
returns uuid
language sql volatile security definer
set search_path = ''
as $$
  insert into app.vendors (owner_id, name, slug, contact_email, country, status, commission_bps)
  values (owner, vendor_name,
          trim(both '-' from regexp_replace(lower(vendor_name), '[^a-z0-9]+', '-', 'g')) || '-' || substr(md5(random()::text), 1, 6),
          'shop@example.test', 'US', vendor_status, vendor_commission_bps)
  returning id
$$;

/* A product written on a trusted path, in the store's currency. Tests only. */
create or replace function tests.create_product(
  vendor uuid,
  product_title text,
  price bigint default 1000,
  units integer default 10,
  product_status app.product_status default 'active',
  product_category text default 'misc',
  product_description text default ''
)
returns uuid
language sql volatile security definer
set search_path = ''
as $$
  insert into app.products (vendor_id, title, description, category, price_amount, currency, stock, status)
  values (vendor, product_title, product_description, product_category, price, 'USD', units, product_status)
  returning id
$$;

/*
 * A checkout through app.create_checkout as `buyer` (every rule applies), with a dev payment
 * intent attached; returns the checkout id. The caller's claims are restored afterwards.
 */
create or replace function tests.checkout(buyer uuid, items jsonb, intent_id text default null)
returns uuid
language plpgsql volatile
set search_path = ''
as $$
declare
  previous_claims text := current_setting('request.jwt.claims', true);
  previous_role text := current_setting('role', true);
  made jsonb;
  checkout_id uuid;
begin
  perform set_config('request.jwt.claims',
    json_build_object('sub', buyer, 'role', 'authenticated')::text, true);
  made := app.create_checkout(items, null, null, null, 'dev');
  checkout_id := (made ->> 'created')::uuid;
  perform app.attach_payment_intent(checkout_id, coalesce(intent_id, 'pi_test_' || checkout_id), 'secret', null);
  perform set_config('request.jwt.claims', coalesce(previous_claims, ''), true);
  return checkout_id;
end;
$$;

/* The (one) order of a checkout for a vendor, whoever asks. Tests only: bypasses RLS. */
create or replace function tests.order_of(target_checkout uuid, vendor uuid default null)
returns uuid
language sql stable security definer
set search_path = ''
as $$
  select o.id from app.orders o
  where o.checkout_id = target_checkout and (vendor is null or o.vendor_id = vendor)
  order by o.id limit 1
$$;

grant execute on function tests.create_vendor(uuid, text, app.vendor_status, integer) to anon, authenticated;
grant execute on function tests.create_product(uuid, text, bigint, integer, app.product_status, text, text) to anon, authenticated;
grant execute on function tests.checkout(uuid, jsonb, text) to anon, authenticated;
grant execute on function tests.order_of(uuid, uuid) to anon, authenticated;

/*
 * Where app_private.catalog_counts (kept by triggers) disagrees with the products themselves:
 * empty when the counts are right.
 */
create or replace function tests.catalog_counts_drift()
returns table (vendor_id uuid, category text, in_stock boolean, counted integer, actual integer)
language sql stable security definer
set search_path = ''
as $$
  -- catalog_counts (every vendor), then the facet rollups (approved vendors): a category's row
  -- has no vendor; a vendor's facet row says its products (in_stock null) and its available ones
  -- (in_stock true); category '' is every category.
  with actual as (
    select p.vendor_id, p.category, p.stock > p.reserved as in_stock, count(*)::integer as n
    from app.products p where p.status = 'active' group by 1, 2, 3
  ), approved as (
    select a.* from actual a join app.vendors v on v.id = a.vendor_id and v.status = 'approved'
  ), per_category as (
    select a.category, a.in_stock, sum(a.n)::integer as n from approved a group by 1, 2
  ), per_vendor as (
    select x.category, a.vendor_id, sum(a.n)::integer as n,
           coalesce(sum(a.n) filter (where a.in_stock), 0)::integer as available
    from approved a cross join lateral (values (a.category), ('')) as x (category)
    group by 1, 2
  )
  select coalesce(c.vendor_id, a.vendor_id), coalesce(c.category, a.category),
         coalesce(c.in_stock, a.in_stock), coalesce(c.products, 0), coalesce(a.n, 0)
  from app_private.catalog_counts c
  full join actual a on a.vendor_id = c.vendor_id and a.category = c.category and a.in_stock = c.in_stock
  where coalesce(c.products, 0) <> coalesce(a.n, 0)
  union all
  select null, coalesce(c.category, a.category), coalesce(c.in_stock, a.in_stock),
         coalesce(c.products, 0), coalesce(a.n, 0)
  from app_private.catalog_category_counts c
  full join per_category a on a.category = c.category and a.in_stock = c.in_stock
  where coalesce(c.products, 0) <> coalesce(a.n, 0)
  union all
  select coalesce(f.vendor_id, a.vendor_id), coalesce(f.category, a.category), x.in_stock,
         x.counted, x.actual
  from app_private.catalog_vendor_facets f
  full join per_vendor a on a.category = f.category and a.vendor_id = f.vendor_id
  cross join lateral (values (null::boolean, coalesce(f.products, 0), coalesce(a.n, 0)),
                             (true, coalesce(f.in_stock, 0), coalesce(a.available, 0)))
    as x (in_stock, counted, actual)
  where x.counted <> x.actual
$$;
grant execute on function tests.catalog_counts_drift() to anon, authenticated;

-- ---------------------------------------------------------------------------------------------
-- Wallet (tests/wallet/sql/)
-- ---------------------------------------------------------------------------------------------

/*
 * A wallet for `owner` through the server path's own function (app_private.insert_wallet), with
 * placeholder ciphertext (the real sealing happens in the API, which holds the master key) and
 * an address made from the ids. Returns the wallet id. Tests only.
 */
create or replace function tests.create_wallet(owner uuid)
returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  new_id uuid := gen_random_uuid();
begin
  perform app_private.insert_wallet(
    new_id, owner, '0x' || substr(md5(owner::text), 1, 20) || substr(md5(new_id::text), 1, 20),
    '0123456789abcdef', decode(repeat('00', 60), 'hex'), decode(repeat('11', 60), 'hex'));
  return new_id;
end;
$$;

/* The address of a wallet, whoever is asking (tests only: bypasses RLS). */
create or replace function tests.wallet_address(wallet uuid)
returns text
language sql stable security definer
set search_path = ''
as $$
  select w.address from app.wallets w where w.id = wallet
$$;

grant execute on function tests.create_wallet(uuid) to anon, authenticated;
grant execute on function tests.wallet_address(uuid) to anon, authenticated;
