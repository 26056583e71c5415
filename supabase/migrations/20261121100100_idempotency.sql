/*
 * Idempotency keys: a POST that creates something (a message today; payments and transfers in
 * their domains) with an `Idempotency-Key` header replays its first response for 24 hours, and the
 * same key with another body is a conflict. The key is claimed inside the request's own
 * transaction, so a concurrent duplicate waits for the first and then replays it.
 *
 * Tables: app_private.idempotency_keys. Nothing destructive.
 */

create table app_private.idempotency_keys (
  user_id uuid not null references app.users (id) on delete cascade,
  key text not null check (char_length(key) between 1 and 255),
  scope text not null,
  request_hash text not null,
  response jsonb,
  created_at timestamptz not null default now(),
  primary key (user_id, key)
);
comment on table app_private.idempotency_keys is
  'Idempotency keys per user with the request''s hash and its first response, replayed for 24 h.';

create index idempotency_keys_created_at_idx on app_private.idempotency_keys (created_at);

alter table app_private.idempotency_keys enable row level security;

/* What a key already answers, read without claiming it: the one rule of replay and conflict. */
create function app_private.idempotent_answer(
  owner uuid,
  idempotency_key text,
  key_scope text,
  body_hash text
) returns jsonb
language plpgsql stable
set search_path = ''
as $$
declare
  existing app_private.idempotency_keys;
begin
  select * into existing from app_private.idempotency_keys k
  where k.user_id = owner and k.key = idempotency_key and k.created_at >= now() - interval '24 hours';
  if not found then
    return null;
  end if;
  if existing.scope <> key_scope or existing.request_hash <> body_hash then
    return jsonb_build_object('conflict', true);
  end if;
  return jsonb_build_object('response', existing.response);
end;
$$;
comment on function app_private.idempotent_answer(uuid, text, text, text) is
  'What a user''s key already answers: null when it is unused (or older than 24 h), {conflict: true} for another scope or body, else {response} (null while its first request runs). Read without claiming: claim_idempotency_key uses it after a duplicate insert, and a server path may ask before work that needs an outside service (a wallet transfer reads the chain first), so a finished key replays without it.';

create function app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
begin
  delete from app_private.idempotency_keys k
  where k.user_id = me and k.key = idempotency_key and k.created_at < now() - interval '24 hours';
  insert into app_private.idempotency_keys (user_id, key, scope, request_hash)
  values (me, idempotency_key, key_scope, body_hash)
  on conflict (user_id, key) do nothing;
  if found then
    return null;
  end if;
  -- The key exists (the insert waited for its first transaction): its answer, which says
  -- {response: null} while that first request has not stored one.
  return coalesce(app_private.idempotent_answer(me, idempotency_key, key_scope, body_hash),
                  '{"response": null}'::jsonb);
end;
$$;
comment on function app.claim_idempotency_key(text, text, text) is
  'Claims a key inside the caller''s transaction: null when it is new; when it exists, waits for its first transaction (the primary key) and returns {response} or {conflict: true} for another scope or body. security definer: the keys live in app_private; it acts only on the caller''s own keys.';
grant execute on function app.claim_idempotency_key(text, text, text) to authenticated;

create function app.store_idempotent_response(idempotency_key text, response jsonb) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  update app_private.idempotency_keys k set response = store_idempotent_response.response
  where k.user_id = (select auth.uid()) and k.key = idempotency_key;
end;
$$;
comment on function app.store_idempotent_response(text, jsonb) is
  'Records the first response for a claimed key, in the same transaction as the work it describes. security definer for the same reason as claim_idempotency_key.';
grant execute on function app.store_idempotent_response(text, jsonb) to authenticated;

create function app_private.prune_idempotency_keys() returns void
language sql volatile
set search_path = ''
as $$
  delete from app_private.idempotency_keys where created_at < now() - interval '24 hours';
$$;
comment on function app_private.prune_idempotency_keys() is
  'Keys replay for 24 hours; older ones are removed by pg_cron.';

select cron.schedule('agora-prune-idempotency-keys', '*/10 * * * *', 'select app_private.prune_idempotency_keys()');

revoke execute on all functions in schema app, app_private from public;
