-- Agora's schema as it is now, domain idempotency: every object its migrations created, with
-- every later change from any migration applied. Its migrations:
--   supabase/migrations/20261121100100_idempotency.sql
-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not
-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and
-- commit both. docs/conventions.md says how to read it.
-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,
-- triggers, row security, policies, comments, grants), views, functions, policies on
-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose
-- create statement made it and the last one that replaced or altered it (create or replace,
-- alter, an index, trigger or policy on a table; comments and grants are not counted).

-- ---------------------------------------------------------------------------------------------
-- table app_private.idempotency_keys
-- created in 20261121100100_idempotency.sql
-- ---------------------------------------------------------------------------------------------

CREATE TABLE app_private.idempotency_keys (
    user_id uuid NOT NULL,
    key text NOT NULL,
    scope text NOT NULL,
    request_hash text NOT NULL,
    response jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255)))
);

COMMENT ON TABLE app_private.idempotency_keys IS 'Idempotency keys per user with the request''s hash and its first response, replayed for 24 h.';

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key);

CREATE INDEX idempotency_keys_created_at_idx ON app_private.idempotency_keys USING btree (created_at);

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

ALTER TABLE app_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

-- ---------------------------------------------------------------------------------------------
-- function app.claim_idempotency_key
-- created in 20261121100100_idempotency.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) IS 'Claims a key inside the caller''s transaction: null when it is new; when it exists, waits for its first transaction (the primary key) and returns {response} or {conflict: true} for another scope or body. security definer: the keys live in app_private; it acts only on the caller''s own keys.';

REVOKE ALL ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app.store_idempotent_response
-- created in 20261121100100_idempotency.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app_private.idempotency_keys k set response = store_idempotent_response.response
  where k.user_id = (select auth.uid()) and k.key = idempotency_key;
end;
$$;

COMMENT ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) IS 'Records the first response for a claimed key, in the same transaction as the work it describes. security definer for the same reason as claim_idempotency_key.';

REVOKE ALL ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) TO authenticated;

-- ---------------------------------------------------------------------------------------------
-- function app_private.idempotent_answer
-- created in 20261121100100_idempotency.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO ''
    AS $$
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

COMMENT ON FUNCTION app_private.idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text) IS 'What a user''s key already answers: null when it is unused (or older than 24 h), {conflict: true} for another scope or body, else {response} (null while its first request runs). Read without claiming: claim_idempotency_key uses it after a duplicate insert, and a server path may ask before work that needs an outside service (a wallet transfer reads the chain first), so a finished key replays without it.';

REVOKE ALL ON FUNCTION app_private.idempotent_answer(owner uuid, idempotency_key text, key_scope text, body_hash text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- function app_private.prune_idempotency_keys
-- created in 20261121100100_idempotency.sql
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION app_private.prune_idempotency_keys() RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app_private.idempotency_keys where created_at < now() - interval '24 hours';
$$;

COMMENT ON FUNCTION app_private.prune_idempotency_keys() IS 'Keys replay for 24 hours; older ones are removed by pg_cron.';

REVOKE ALL ON FUNCTION app_private.prune_idempotency_keys() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- cron job agora-prune-idempotency-keys
-- created in 20261121100100_idempotency.sql
-- ---------------------------------------------------------------------------------------------

-- schedule: */10 * * * *
-- command:
--   select app_private.prune_idempotency_keys()
