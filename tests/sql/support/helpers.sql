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
-- Messaging (tests/sql/101-*.sql and on)
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
-- Wallet (tests/sql/500-*.sql and on)
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
