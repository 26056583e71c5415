-- Replaces functions of other domains:
--   app_private.prune_auth_state (foundation), app_private.guard_read_mark (conversations),
--   app_private.guard_message_update (messages).
-- (Their current bodies are in supabase/schema/<that domain>.sql, marked "last changed in" this
-- migration. This comment was added after the migration was applied: `supabase db push` tracks
-- migrations by version only.)
/*
 * Sign-in providers, sessions a user can see and end, suspension and signout by an ADMIN, and the
 * account's export and deletion.
 *
 * - Google and Apple (OpenID Connect, authorization code with PKCE): the flow's state, nonce and
 *   browser binding live in app_private.oauth_flows, single use, ten minutes. Browser wallets
 *   (Sign-In with Ethereum, EIP-4361) spend a server nonce from app_private.siwe_nonces.
 * - app.users.email becomes the account's verified e-mail address, or null (a wallet account, or
 *   a provider that did not vouch for the address): sign-ins link to an account only through it.
 * - app.sessions.authenticated_at is the time of the sign-in that opened the session (the access
 *   token's auth_time, kept by refreshes); "fresh" means within security.freshSignInSeconds.
 * - Suspension and reactivation (app.change_user_status) and ending every session of a user
 *   (app.sign_out_user) are serialized with role changes, recorded in app.status_changes and as
 *   security events in the same transaction.
 * - The export (app.export_account) is composed of one part per domain, listed in
 *   app_private.account_export_parts; deletion (app.delete_account) runs the erasure steps listed
 *   in app_private.account_erasure_steps, then deletes the user row, whose foreign keys cascade or
 *   set null (tests/sql/440-account-foreign-keys.sql checks every one, present and future).
 *
 * Replaces two guards of the messaging migrations so that the foreign keys' own `set null` (an
 * author's or an adder's account deleted) is not refused as a user's edit, and the pruning of
 * sign-in state so that it covers the new tables. Nothing destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

alter table app.users alter column email drop not null;
comment on column app.users.email is
  'The account''s verified e-mail address (a magic link was followed, or Google or Apple said it is verified), or null: an account made by a wallet, or by a provider that did not vouch for the address. Sign-ins link to an account only through this address, so an unverified address is never stored here.';

alter table app.sessions add column authenticated_at timestamptz not null default now();
comment on column app.sessions.authenticated_at is
  'When the person proved who they are for this session (the sign-in that opened it): the access token''s auth_time, unchanged by refreshes. A sign-in is fresh while this is within security.freshSignInSeconds.';
comment on column app.sessions.provider is
  'How the session was opened: email, google, apple or wallet (the access token''s amr).';

/*
 * One row per OAuth authorization started with POST /api/auth/signin. state and nonce travel to
 * the provider; only their hashes are kept. The PKCE verifier is kept until the callback spends
 * the row (then it is cleared). A browser flow is bound to the browser that started it by the
 * hash of a random value in an HttpOnly cookie; an integrator flow (the client sent its own
 * PKCE challenge) ends with a single-use exchange code instead of cookies.
 */
create table app_private.oauth_flows (
  id uuid primary key default gen_random_uuid(),
  provider text not null check (provider in ('google', 'apple')),
  state_hash text not null unique,
  nonce_hash text not null,
  code_verifier text check (char_length(code_verifier) between 43 and 128),
  binding_hash text,
  client_challenge text check (client_challenge ~ '^[A-Za-z0-9_-]{43}$'),
  redirect_to text check (char_length(redirect_to) <= 2048),
  link_user_id uuid references app.users (id) on delete cascade,
  ip inet,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  exchange_code_hash text unique,
  exchange_expires_at timestamptz,
  exchanged_at timestamptz,
  result_identity jsonb check (jsonb_typeof(result_identity) = 'object'),
  result_authenticated_at timestamptz,
  constraint oauth_flows_bound check ((binding_hash is null) <> (client_challenge is null)),
  constraint oauth_flows_exchange check (
    (exchange_code_hash is null) = (exchange_expires_at is null)
    and (exchange_code_hash is null) = (result_authenticated_at is null)
    and (exchange_code_hash is null or client_challenge is not null)
    and (result_identity is null or exchange_code_hash is not null)
  )
);
comment on table app_private.oauth_flows is
  'OAuth sign-ins in progress (Google, Apple): hashes of state and nonce, the PKCE verifier until the callback, the browser binding (hash of a cookie value) or the integrator''s PKCE challenge, where to send the browser afterwards and, for an explicit link, the signed-in user. Single use, ten minutes. An integrator flow''s verified identity waits here (result_identity) behind a single-use exchange code: which account it signs in to, or links to, is decided only when the holder of the verifier exchanges it, and the identity is cleared then. Server only.';

create table app_private.siwe_nonces (
  nonce_hash text primary key,
  ip inet,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
comment on table app_private.siwe_nonces is
  'Nonces handed out by GET /api/auth/nonce for Sign-In with Ethereum, as SHA-256 hashes: single use (spent by one conditional update when a signed message is accepted), ten minutes. Server only.';

create table app.status_changes (
  id bigint generated always as identity primary key,
  user_id uuid not null references app.users (id) on delete cascade,
  previous_status app.user_status not null,
  new_status app.user_status not null,
  changed_by uuid references app.users (id) on delete set null,
  reason text not null check (char_length(reason) between 1 and 500),
  sessions_revoked integer not null default 0 check (sessions_revoked >= 0),
  changed_at timestamptz not null default now()
);
comment on table app.status_changes is
  'The history of suspensions and reactivations (who, why, before and after, how many sessions ended), written only by app.change_user_status in the same transaction as the change.';

/*
 * The export is one JSON document made of parts: each domain writes a function
 * `app_private.account_export_<part>(user_id uuid) returns jsonb` and registers it here, in its own
 * migration (or, for a domain older than this table, in this one). app_private.account_export
 * lays the registered parts over a skeleton that holds every key of the contract, so a domain that
 * has not registered yet exports its empty value.
 */
create table app_private.account_export_parts (
  part text primary key check (part ~ '^[a-z][A-Za-z]*$'),
  function_name regprocedure not null unique,
  description text not null check (char_length(description) between 1 and 500)
);
comment on table app_private.account_export_parts is
  'The one list of the account export''s parts: the document key and the function (user_id uuid) returning jsonb that fills it. A domain adds its row in its migration; tests/sql/430-account-export.sql checks that every account_export_* function is listed and that no part holds a secret.';

/*
 * Deletion: most of it is the foreign keys (every key referencing app.users cascades or sets
 * null). What the keys cannot do (turn messages into tombstones, hand a group to someone else,
 * scrub what accounting keeps) is an erasure step per domain, `app_private.account_erase_<domain>
 * (user_id uuid) returns void`, registered here and run in position order before the user row goes.
 */
create table app_private.account_erasure_steps (
  domain text primary key check (domain ~ '^[a-z][a-z_]*$'),
  function_name regprocedure not null unique,
  position integer not null unique,
  description text not null check (char_length(description) between 1 and 500)
);
comment on table app_private.account_erasure_steps is
  'The one list of what an account deletion does beyond the foreign keys, one step per domain, run in position order by app.delete_account before the user row is deleted.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- The admin search matches address or name; an account without an address must still be found by
-- its name, so the indexed expression no longer turns null with the address.
drop index app.users_search_idx;
create index users_search_idx on app.users
  using gin ((coalesce(lower(email), '') || ' ' || lower(name)) extensions.gin_trgm_ops);
create index oauth_flows_expires_at_idx on app_private.oauth_flows (expires_at);
create index oauth_flows_link_user_id_idx on app_private.oauth_flows (link_user_id);
create index siwe_nonces_expires_at_idx on app_private.siwe_nonces (expires_at);
create index status_changes_user_id_idx on app.status_changes (user_id, changed_at desc);
create index status_changes_changed_by_idx on app.status_changes (changed_by);
-- The deletion nulls the deleted user's access-log rows; the existing (user_id, id) index serves it.

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.guard_user_delete() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  if old.role = 'ADMIN' and old.status = 'active' then
    -- The same lock as demotions and suspensions (app_private.guard_user_update).
    perform pg_advisory_xact_lock(hashtext('app.users.active_admins'));
    if not exists (
      select 1 from app.users u where u.role = 'ADMIN' and u.status = 'active' and u.id <> old.id
    ) then
      raise exception 'the last active ADMIN cannot be deleted' using errcode = 'AG422';
    end if;
  end if;
  return old;
end;
$$;
comment on function app_private.guard_user_delete() is
  'No path deletes the last active ADMIN: an account deletion of the only one is refused (AG422). The advisory lock is the one demotions and suspensions take, so two admins deleting themselves at once cannot leave none.';

create trigger users_guard_delete before delete on app.users
  for each row execute function app_private.guard_user_delete();

/*
 * The messaging guards, again: as before, plus one case each that is not a user's edit but a
 * foreign key's `on delete set null` after an account or a message was deleted.
 */
create or replace function app_private.guard_message_update() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- A foreign key's own `set null`: the author's account or the message replied to was deleted.
  -- Nothing else may change with it; the referenced row must really be gone.
  if (new.sender_id is null and old.sender_id is not null
      and not exists (select 1 from app.users u where u.id = old.sender_id))
     or (new.reply_to_id is null and old.reply_to_id is not null
         and not exists (select 1 from app.messages m where m.id = old.reply_to_id)) then
    if new.id = old.id and new.conversation_id = old.conversation_id and new.seq = old.seq
       and new.content = old.content and new.created_at = old.created_at
       and new.edited_at is not distinct from old.edited_at
       and new.deleted_at is not distinct from old.deleted_at
       and (new.sender_id is not distinct from old.sender_id or new.sender_id is null)
       and (new.reply_to_id is not distinct from old.reply_to_id or new.reply_to_id is null) then
      return new;
    end if;
  end if;
  -- Users change content only; trusted server paths (no API role) may also fix metadata.
  -- (The `role` setting, not current_user: this function runs with its owner's rights.)
  if current_setting('role', true) in ('anon', 'authenticated') and (
     new.id <> old.id or new.conversation_id <> old.conversation_id or new.seq <> old.seq
     or new.sender_id is distinct from old.sender_id or new.created_at <> old.created_at
     or new.reply_to_id is distinct from old.reply_to_id) then
    raise exception 'only the content of a message can change' using errcode = '42501';
  end if;
  if old.deleted_at is not null then
    raise exception 'a deleted message cannot change' using errcode = 'AG422';
  end if;
  if new.deleted_at is not null then
    new.content := '';
    new.edited_at := old.edited_at;
    return new;
  end if;
  if new.content <> old.content then
    -- The edit window and the length limit hold for every path a user has, not only app.edit_message.
    if current_setting('role', true) in ('anon', 'authenticated') then
      if old.created_at < now() - make_interval(mins => app.config_int('limits', 'messageEditWindowMinutes')) then
        raise exception 'the edit window has closed' using errcode = 'AG422';
      end if;
      if char_length(new.content) > app.config_int('limits', 'messageMaxLength') then
        raise exception 'a message has at most % characters', app.config_int('limits', 'messageMaxLength')
          using errcode = 'AG400';
      end if;
    end if;
    insert into app.message_versions (message_id, content, written_at)
    values (old.id, old.content, coalesce(old.edited_at, old.created_at));
    new.edited_at := now();
  end if;
  return new;
end;
$$;
comment on function app_private.guard_message_update() is
  'Message edits keep the earlier version in app.message_versions; users change content only, within the configured edit window and length, never on a tombstone. Deletion (deleted_at set) empties the content. The foreign keys'' own set null (the author''s account or the replied-to message deleted) passes, tombstones included, when nothing else changes and the referenced row is gone.';

create or replace function app_private.guard_read_mark() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  -- The foreign key's own `set null`: the person who added this participant deleted their account.
  if new.added_by is null and old.added_by is not null
     and not exists (select 1 from app.users u where u.id = old.added_by)
     and new.conversation_id = old.conversation_id and new.user_id = old.user_id
     and new.joined_at = old.joined_at and new.last_read_seq = old.last_read_seq
     and new.last_read_message_id is not distinct from old.last_read_message_id
     and new.last_read_at is not distinct from old.last_read_at then
    return new;
  end if;
  if new.conversation_id <> old.conversation_id or new.user_id <> old.user_id
     or new.joined_at <> old.joined_at or new.added_by is distinct from old.added_by then
    raise exception 'only the read mark of a participant can change' using errcode = '42501';
  end if;
  if new.last_read_seq <= old.last_read_seq then
    new.last_read_seq := old.last_read_seq;
    new.last_read_message_id := old.last_read_message_id;
    new.last_read_at := old.last_read_at;
    return new;
  end if;
  -- Moving forward: the mark must name a message of this conversation at that position.
  if not exists (
    select 1 from app.messages m
    where m.id = new.last_read_message_id and m.conversation_id = new.conversation_id and m.seq = new.last_read_seq
  ) then
    raise exception 'a read mark names a message of the conversation' using errcode = 'AG422';
  end if;
  new.last_read_at := now();
  return new;
end;
$$;
comment on function app_private.guard_read_mark() is
  'Read marks move forward only and name a real message at that position; nothing else of a participant row changes, except the foreign key''s own set null of added_by when that account was deleted. security definer: it reads messages the row''s update may not see.';

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app_private.oauth_flows enable row level security;
alter table app_private.siwe_nonces enable row level security;
alter table app.status_changes enable row level security;
alter table app_private.account_export_parts enable row level security;
alter table app_private.account_erasure_steps enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

create function app_private.record_security_event(
  event_type text,
  event_severity app.security_severity,
  subject_user_id uuid,
  event_details jsonb
) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  client_ip inet;
begin
  begin
    client_ip := nullif(current_setting('agora.client_ip', true), '')::inet;
  exception when invalid_text_representation then
    client_ip := null;
  end;
  insert into app.security_events (type, severity, user_id, ip, user_agent, details)
  values (event_type, event_severity, subject_user_id, client_ip,
          left(nullif(current_setting('agora.user_agent', true), ''), 1024), event_details);
end;
$$;
comment on function app_private.record_security_event(text, app.security_severity, uuid, jsonb) is
  'A security event written inside the transaction of the change it describes, with the client address and user agent the API put in agora.client_ip and agora.user_agent: the change and its record commit together or not at all. Called by the security definer API functions below.';

create function app_private.revoke_sessions(target_user_id uuid, why text, keep_session_id uuid default null)
returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  revoked integer;
begin
  update app.sessions s set revoked_at = now(), revoked_reason = why
  where s.user_id = target_user_id and s.revoked_at is null
    and (keep_session_id is null or s.id <> keep_session_id);
  get diagnostics revoked = row_count;
  return revoked;
end;
$$;
comment on function app_private.revoke_sessions(uuid, text, uuid) is
  'Ends every live session of a user (but keep_session_id), at once: the session check of every request and the topic rule read app.sessions. Returns how many ended.';

/*
 * The admin checks of app.change_user_role, shared: the same advisory lock (so every change an
 * ADMIN makes to users runs one at a time), then the caller's row share-locked until commit and
 * checked.
 */
create function app_private.lock_admin_caller() returns uuid
language plpgsql volatile
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
  caller_is_admin boolean;
begin
  if caller is null then
    raise exception 'only an ADMIN does this' using errcode = '42501';
  end if;
  perform pg_advisory_xact_lock(hashtext('app.change_user_role'));
  select u.role = 'ADMIN' and u.status = 'active' into caller_is_admin
  from app.users u where u.id = caller
  for share;
  if not coalesce(caller_is_admin, false) then
    raise exception 'only an ADMIN does this' using errcode = '42501';
  end if;
  return caller;
end;
$$;
comment on function app_private.lock_admin_caller() is
  'Serializes an ADMIN''s change to a user with role changes (the advisory lock app.change_user_role takes), then share-locks the caller''s row and checks it is an active ADMIN; returns the caller. A demotion or suspension of the caller either committed before (and the change is refused) or waits for this transaction.';

create function app.has_fresh_sign_in() returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
declare
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if (select auth.uid()) is null or session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
    return false;
  end if;
  return exists (
    select 1 from app.sessions s
    where s.id = session_claim::uuid and s.user_id = (select auth.uid())
      and s.revoked_at is null and s.expires_at > now()
      and s.authenticated_at > now() - make_interval(secs => app.config_int('security', 'freshSignInSeconds'))
  );
end;
$$;
comment on function app.has_fresh_sign_in() is
  'Whether the caller''s session (the session_id claim) is live and was opened by a sign-in within security.freshSignInSeconds: what deleting the account and exporting a wallet key need. The API checks the same first (functions/api/auth/freshness.ts); this is the database''s own check. security definer: it reads the caller''s session row and the configuration.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy status_changes_select_self on app.status_changes for select to authenticated
  using (user_id = (select auth.uid()));
create policy status_changes_select_admin on app.status_changes for select to authenticated
  using ((select app.is_admin()));
-- No insert policy: rows come only from app.change_user_status.

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

revoke all on app_private.oauth_flows, app_private.siwe_nonces, app_private.account_export_parts,
  app_private.account_erasure_steps from public, anon, authenticated;
grant select on app.status_changes to authenticated;
grant execute on function app.has_fresh_sign_in() to authenticated;

-- ---------------------------------------------------------------------------------------------
-- Housekeeping
-- ---------------------------------------------------------------------------------------------

create or replace function app_private.prune_auth_state() returns void
language sql volatile
set search_path = ''
as $$
  delete from app_private.rate_limits where window_start < now() - interval '1 day';
  delete from app_private.magic_links where expires_at < now() - interval '1 day';
  delete from app_private.oauth_flows
    where expires_at < now() - interval '1 day'
      and (exchange_expires_at is null or exchange_expires_at < now() - interval '1 day');
  -- A verified identity nobody exchanged is not kept past its code.
  update app_private.oauth_flows set result_identity = null
    where result_identity is not null and exchange_expires_at < now();
  delete from app_private.siwe_nonces where expires_at < now() - interval '1 day';
  delete from app.sessions
    where (revoked_at is not null and revoked_at < now() - interval '30 days')
       or expires_at < now() - interval '30 days';
$$;
comment on function app_private.prune_auth_state() is
  'Housekeeping for sign-in state (old rate-limit windows, used magic links, finished OAuth flows and wallet nonces, long-dead sessions), run by pg_cron every 15 minutes.';

-- ---------------------------------------------------------------------------------------------
-- The account export: parts and their composer
-- ---------------------------------------------------------------------------------------------

create function app_private.iso_time(t timestamptz) returns text
language sql immutable
set search_path = ''
as $$
  select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;
comment on function app_private.iso_time(timestamptz) is
  'A time as the API writes it (ISO-8601, UTC, microseconds), for the export''s parts.';

create function app_private.account_export_profile(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', u.id, 'email', u.email, 'name', u.name, 'image', u.image, 'role', u.role,
    'status', u.status, 'walletAddress', u.wallet_address,
    'createdAt', app_private.iso_time(u.created_at), 'updatedAt', app_private.iso_time(u.updated_at),
    'lastSignInAt', app_private.iso_time(u.last_sign_in_at),
    'roleHistory', coalesce((
      select jsonb_agg(jsonb_build_object(
        'previousRole', rc.previous_role, 'newRole', rc.new_role, 'changedBy', rc.changed_by,
        'reason', rc.reason, 'changedAt', app_private.iso_time(rc.changed_at)) order by rc.changed_at, rc.id)
      from app.role_changes rc where rc.user_id = u.id), '[]'::jsonb),
    'statusHistory', coalesce((
      select jsonb_agg(jsonb_build_object(
        'previousStatus', sc.previous_status, 'newStatus', sc.new_status, 'changedBy', sc.changed_by,
        'reason', sc.reason, 'changedAt', app_private.iso_time(sc.changed_at)) order by sc.changed_at, sc.id)
      from app.status_changes sc where sc.user_id = u.id), '[]'::jsonb)
  )
  from app.users u where u.id = target_user_id
$$;
comment on function app_private.account_export_profile(uuid) is
  'Export part `profile`: the user row and its role and status history.';

create function app_private.account_export_identities(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', i.id, 'provider', i.provider, 'providerUserId', i.provider_user_id, 'email', i.email,
    'createdAt', app_private.iso_time(i.created_at), 'lastUsedAt', app_private.iso_time(i.last_used_at)
  ) order by i.created_at, i.id), '[]'::jsonb)
  from app.identities i where i.user_id = target_user_id
$$;
comment on function app_private.account_export_identities(uuid) is
  'Export part `identities`: how the person signs in (provider, the provider''s id for them, the address it gave).';

create function app_private.account_export_sessions(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', s.id, 'provider', s.provider, 'ip', host(s.ip), 'userAgent', s.user_agent,
    'createdAt', app_private.iso_time(s.created_at),
    'authenticatedAt', app_private.iso_time(s.authenticated_at),
    'lastSeenAt', app_private.iso_time(greatest(s.created_at, s.refreshed_at)),
    'expiresAt', app_private.iso_time(s.expires_at),
    'revokedAt', app_private.iso_time(s.revoked_at), 'revokedReason', s.revoked_reason
  ) order by s.created_at, s.id), '[]'::jsonb)
  from app.sessions s where s.user_id = target_user_id
$$;
comment on function app_private.account_export_sessions(uuid) is
  'Export part `sessions`: every session still on record (live, ended, expired), never a token or its hash.';

create function app_private.account_export_conversations(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', c.id, 'type', c.type, 'title', c.title, 'isCreator', c.created_by = target_user_id,
    'createdAt', app_private.iso_time(c.created_at), 'joinedAt', app_private.iso_time(p.joined_at),
    'lastReadMessageId', p.last_read_message_id, 'lastReadAt', app_private.iso_time(p.last_read_at)
  ) order by p.joined_at, c.id), '[]'::jsonb)
  from app.conversation_participants p join app.conversations c on c.id = p.conversation_id
  where p.user_id = target_user_id
$$;
comment on function app_private.account_export_conversations(uuid) is
  'Export part `conversations`: the conversations the person takes part in and how far they read; nothing about the other people in them.';

create function app_private.account_export_messages(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', m.id, 'conversationId', m.conversation_id, 'content', m.content, 'replyToId', m.reply_to_id,
    'createdAt', app_private.iso_time(m.created_at), 'editedAt', app_private.iso_time(m.edited_at),
    'deletedAt', app_private.iso_time(m.deleted_at),
    'attachments', coalesce((
      select jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name, 'contentType', a.content_type,
                                          'size', a.size, 'url', '/api/attachments/' || a.id::text)
                       order by a.created_at, a.id)
      from app.attachments a where a.message_id = m.id), '[]'::jsonb),
    'earlierVersions', coalesce((
      select jsonb_agg(jsonb_build_object('content', v.content, 'writtenAt', app_private.iso_time(v.written_at),
                                          'replacedAt', app_private.iso_time(v.replaced_at))
                       order by v.replaced_at, v.id)
      from app.message_versions v where v.message_id = m.id), '[]'::jsonb)
  ) order by m.created_at, m.id), '[]'::jsonb)
  from app.messages m where m.sender_id = target_user_id
$$;
comment on function app_private.account_export_messages(uuid) is
  'Export part `messages`: every message the person wrote (in conversations they left too), with its files and earlier versions.';

create function app_private.account_export_notifications(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox, 'readAt', app_private.iso_time(n.read_at),
    'createdAt', app_private.iso_time(n.created_at)
  ) order by n.created_at, n.id), '[]'::jsonb)
  from app.notifications n where n.user_id = target_user_id
$$;
comment on function app_private.account_export_notifications(uuid) is
  'Export part `notifications`: every notification of the person, those kept only for delivery (inbox false) included.';

create function app_private.account_export_preferences(target_user_id uuid) returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object(
    'types', coalesce(p.types, '{}'::jsonb),
    'quietHours', case when p.quiet_start is null then null else jsonb_build_object(
      'start', to_char(p.quiet_start, 'HH24:MI'), 'end', to_char(p.quiet_end, 'HH24:MI'),
      'timeZone', p.quiet_time_zone) end,
    'updatedAt', app_private.iso_time(p.updated_at),
    'pushDevices', coalesce((
      select jsonb_agg(jsonb_build_object(
        'id', d.id, 'platform', d.platform, 'deviceName', d.device_name,
        'createdAt', app_private.iso_time(d.created_at), 'updatedAt', app_private.iso_time(d.updated_at)
      ) order by d.created_at, d.id)
      from app.push_devices d where d.user_id = target_user_id), '[]'::jsonb)
  )
  from (select target_user_id as id) me
  left join app.notification_preferences p on p.user_id = me.id
$$;
comment on function app_private.account_export_preferences(uuid) is
  'Export part `preferences`: the notification choices per type and channel, quiet hours, and the push devices registered (platform and name; never the device''s token).';

insert into app_private.account_export_parts (part, function_name, description) values
  ('profile', 'app_private.account_export_profile(uuid)', 'The user row, role and status history (foundation).'),
  ('identities', 'app_private.account_export_identities(uuid)', 'Sign-in identities (foundation).'),
  ('sessions', 'app_private.account_export_sessions(uuid)', 'Sessions on record, without tokens (foundation).'),
  ('conversations', 'app_private.account_export_conversations(uuid)', 'Conversations taken part in (messaging).'),
  ('messages', 'app_private.account_export_messages(uuid)', 'Messages written, with files and versions (messaging).'),
  ('notifications', 'app_private.account_export_notifications(uuid)', 'Notifications received (notifications).'),
  ('preferences', 'app_private.account_export_preferences(uuid)', 'Notification choices and push devices, without tokens (notifications).');

create function app_private.account_export(target_user_id uuid) returns jsonb
language plpgsql stable
set search_path = ''
as $$
declare
  -- Every key of the contract, with the value of a domain that has nothing (or no part yet).
  document jsonb := jsonb_build_object(
    'exportedAt', app_private.iso_time(now()),
    'profile', null, 'identities', '[]'::jsonb, 'sessions', '[]'::jsonb,
    'conversations', '[]'::jsonb, 'messages', '[]'::jsonb, 'notifications', '[]'::jsonb,
    'preferences', null, 'orders', '[]'::jsonb, 'vendor', null, 'wallet', null
  );
  p record;
  value jsonb;
begin
  for p in select e.part, e.function_name from app_private.account_export_parts e order by e.part loop
    execute format('select %s($1)', p.function_name::regproc) using target_user_id into value;
    document := document || jsonb_build_object(p.part, coalesce(value, document -> p.part, 'null'::jsonb));
  end loop;
  return document;
end;
$$;
comment on function app_private.account_export(uuid) is
  'The account export of one user: the contract''s skeleton (every key, empty values) with every part registered in app_private.account_export_parts laid over it.';

-- ---------------------------------------------------------------------------------------------
-- The account deletion: erasure steps
-- ---------------------------------------------------------------------------------------------

create function app_private.account_erase_messaging(target_user_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  g record;
begin
  -- Their messages become tombstones (content emptied by the guard trigger; message.deleted
  -- events go out at commit), their earlier versions go, and their files (the delete trigger
  -- queues each file's removal).
  delete from app.message_versions v
  using app.messages m where m.id = v.message_id and m.sender_id = target_user_id;
  delete from app.attachments a where a.uploader_id = target_user_id;
  update app.messages m set deleted_at = now()
  where m.sender_id = target_user_id and m.deleted_at is null;
  -- A group they created passes to its longest-standing other participant, as when a creator
  -- leaves; a group nobody else is in goes.
  for g in
    select c.id from app.conversations c
    where c.type = 'group'
      and exists (select 1 from app.conversation_participants p
                  where p.conversation_id = c.id and p.user_id = target_user_id)
    for update of c
  loop
    if not exists (select 1 from app.conversation_participants p
                   where p.conversation_id = g.id and p.user_id <> target_user_id) then
      delete from app.conversations c where c.id = g.id;
    else
      update app.conversations c set created_by = (
        select p.user_id from app.conversation_participants p
        where p.conversation_id = g.id and p.user_id <> target_user_id
        order by p.joined_at, p.user_id limit 1
      ) where c.id = g.id and c.created_by = target_user_id;
    end if;
  end loop;
end;
$$;
comment on function app_private.account_erase_messaging(uuid) is
  'Erasure step `messaging`: the person''s messages become tombstones (their place kept for the others), earlier versions and files go, groups they created pass to the longest-standing other participant and groups left empty are removed. Their memberships go with the user row (cascade).';

insert into app_private.account_erasure_steps (domain, function_name, position, description) values
  ('messaging', 'app_private.account_erase_messaging(uuid)', 100,
   'Messages to tombstones, versions and files removed, groups handed over or removed.');

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/*
 * Concurrency as app.change_user_role (app_private.lock_admin_caller): serialized with every role
 * and status change, the caller share-locked and checked, the target row locked. The status, the
 * history row, the sessions' end and the security event commit together or not at all.
 */
create function app.change_user_status(target_user_id uuid, new_status app.user_status, change_reason text)
returns app.status_changes
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  caller uuid := app_private.lock_admin_caller();
  previous app.user_status;
  target_role app.user_role;
  revoked integer := 0;
  change app.status_changes;
begin
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a status change needs a reason' using errcode = 'AG400';
  end if;
  select u.status, u.role into previous, target_role from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if target_user_id = caller then
    raise exception 'an ADMIN cannot change their own status' using errcode = 'AG422';
  end if;
  if previous = new_status then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_status, caller, change_reason, 0, now())::app.status_changes;
  end if;
  -- The guard trigger refuses suspending the last active ADMIN.
  update app.users set status = new_status where id = target_user_id;
  if new_status = 'suspended' then
    revoked := app_private.revoke_sessions(target_user_id, 'suspended');
  end if;
  insert into app.status_changes (user_id, previous_status, new_status, changed_by, reason, sessions_revoked)
  values (target_user_id, previous, new_status, caller, change_reason, revoked)
  returning * into change;
  perform app_private.record_security_event(
    case when new_status = 'suspended' then 'admin.user_suspended' else 'admin.user_reactivated' end,
    case when new_status = 'suspended' and target_role = 'ADMIN' then 'critical'
         when new_status = 'suspended' then 'warning' else 'info' end::app.security_severity,
    target_user_id,
    jsonb_build_object('by', caller, 'from', previous, 'to', new_status, 'reason', change_reason,
                       'sessionsRevoked', revoked)
  );
  return change;
end;
$$;
comment on function app.change_user_status(uuid, app.user_status, text) is
  'An ADMIN suspends or reactivates another user, with a reason: a suspension ends every session of the user at once; the change, its history row (app.status_changes) and its security event commit together. Serialized with role changes; the caller''s row stays share-locked until commit. security definer: it ends another user''s sessions and writes the history and the event, which no API role may do directly; every rule is checked here.';
grant execute on function app.change_user_status(uuid, app.user_status, text) to authenticated;

create function app.sign_out_user(target_user_id uuid) returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  caller uuid := app_private.lock_admin_caller();
  revoked integer;
begin
  if not exists (select 1 from app.users u where u.id = target_user_id) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  revoked := app_private.revoke_sessions(target_user_id, 'admin_signout');
  perform app_private.record_security_event('admin.sessions_revoked', 'warning', target_user_id,
    jsonb_build_object('by', caller, 'sessionsRevoked', revoked));
  return revoked;
end;
$$;
comment on function app.sign_out_user(uuid) is
  'An ADMIN ends every live session of a user at once (the user may sign in again); recorded as admin.sessions_revoked in the same transaction. Returns how many ended. security definer: no API role may end another user''s sessions; the caller is checked as in app.change_user_status.';
grant execute on function app.sign_out_user(uuid) to authenticated;

create function app.unlink_identity(target_identity_id uuid) returns void
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  identity app.identities;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to unlink an identity' using errcode = '42501';
  end if;
  -- The user's row lock serializes unlinks (and links, which lock it too): two at once cannot
  -- both see a second identity and leave none.
  perform 1 from app.users u where u.id = me for update;
  select * into identity from app.identities i where i.id = target_identity_id and i.user_id = me;
  if not found then
    raise exception 'identity not found' using errcode = 'AG404';
  end if;
  if identity.provider = 'email' then
    raise exception 'the e-mail identity is the account''s own address and cannot be unlinked'
      using errcode = 'AG422';
  end if;
  if (select count(*) from app.identities i where i.user_id = me) <= 1 then
    raise exception 'the last identity of an account cannot be unlinked' using errcode = 'AG422';
  end if;
  delete from app.identities i where i.id = identity.id;
  perform app_private.record_security_event('auth.identity_unlinked', 'warning', me,
    jsonb_build_object('provider', identity.provider, 'identityId', identity.id));
end;
$$;
comment on function app.unlink_identity(uuid) is
  'The signed-in user removes one of their sign-in identities (Google, Apple, a wallet); never the last one, never the e-mail identity (magic links reach the account through its address anyway). Recorded as auth.identity_unlinked in the same transaction. security definer: identities have no delete grant; ownership and the rules are checked here, under the user''s row lock.';
grant execute on function app.unlink_identity(uuid) to authenticated;

create function app.export_account() returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  document jsonb;
begin
  if me is null or not exists (select 1 from app.users u where u.id = me and u.status = 'active') then
    raise exception 'sign in to export your account' using errcode = '42501';
  end if;
  document := app_private.account_export(me);
  perform app_private.record_security_event('account.exported', 'info', me,
    jsonb_build_object('parts', (select jsonb_agg(k order by k) from jsonb_object_keys(document) k)));
  return document;
end;
$$;
comment on function app.export_account() is
  'The caller''s data as one JSON document (app_private.account_export), recorded as account.exported. security definer: it reads the caller''s own rows across domains, messages in conversations they left included, which RLS would hide; it only ever reads the caller''s.';
grant execute on function app.export_account() to authenticated;

create function app.delete_account() returns timestamptz
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := (select auth.uid());
  victim app.users;
  step record;
  wallets text[];
begin
  if me is null then
    raise exception 'sign in to delete your account' using errcode = '42501';
  end if;
  if not app.has_fresh_sign_in() then
    raise exception 'deleting the account needs a fresh sign-in' using errcode = 'AG403',
      hint = 'reauthentication_required';
  end if;
  select * into victim from app.users u where u.id = me for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select coalesce(array_agg(lower(i.provider_user_id)), '{}') into wallets
  from app.identities i where i.user_id = me and i.provider = 'wallet';
  for step in select s.function_name from app_private.account_erasure_steps s order by s.position loop
    execute format('select %s($1)', step.function_name::regproc) using me;
  end loop;
  -- Sign-in state that names the person but has no key to the user row.
  if victim.email is not null then
    delete from app_private.magic_links l where lower(l.email) = lower(victim.email);
    delete from app_private.rate_limits r where r.bucket = 'signin:email:' || lower(victim.email);
  end if;
  delete from app_private.rate_limits r
  where r.bucket = any (select 'signin:wallet:' || w from unnest(wallets) w);
  update app.access_logs l set user_id = null where l.user_id = me;
  -- Log lines still on their way from the API instances (written in batches) are nulled later.
  perform app_private.enqueue_job('account.erase_access_logs', jsonb_build_object('userId', me),
    now() + interval '2 minutes', 'account.erase_access_logs:' || me::text);
  -- The row: identities, sessions (and their refresh tokens), memberships, files, histories and
  -- every other domain's rows cascade; what others keep (messages, security events, orders)
  -- sets the person to null. The guard trigger refuses the last active ADMIN.
  delete from app.users u where u.id = me;
  delete from app.events e where e.topic = 'user:' || me::text;
  perform app_private.record_security_event('account.deleted', 'warning', null,
    jsonb_build_object('userId', me, 'role', victim.role));
  return now();
end;
$$;
comment on function app.delete_account() is
  'The caller deletes their own account: needs a fresh sign-in (AG403 reauthentication_required), never the last active ADMIN (AG422). Runs the erasure steps (app_private.account_erasure_steps), removes sign-in state naming the person and its id from the access log (and queues account.erase_access_logs for log lines still being written), then the user row (every foreign key cascades or sets null), the user topic''s events, and records account.deleted. Every session ends with its row. security definer: it deletes the caller''s row and rows across domains that no API role may delete; it only ever touches the caller''s.';
grant execute on function app.delete_account() to authenticated;

revoke execute on all functions in schema app, app_private from public;
