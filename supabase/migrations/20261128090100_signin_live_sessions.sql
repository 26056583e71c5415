-- Replaces functions of other domains:
--   app.readable_topics (events), app_private.inbox_page_for_session (notifications).
/*
 * The live-session rule, once. A session is live while it is not revoked, not expired and its
 * user is active; that condition was written in four places (the API's session check in
 * TypeScript, the inbox page's statement, the topics a session may read, the fresh sign-in
 * check). Now app_private.live_sessions says it, and they read it: the API's check and the
 * refresh rotation (functions/api/auth/session-lookup.ts, sessions.ts) select from it, and the
 * three functions below call it (their comments say so).
 *
 * Changes: app.readable_topics and app.has_fresh_sign_in also refuse a suspended user's session
 * (suspension revokes the sessions anyway; now the rule does not depend on that). Nothing
 * destructive.
 */

create function app_private.live_sessions(session_ids uuid[])
returns table (
  id uuid,
  email text,
  name text,
  image text,
  role app.user_role,
  wallet_address text,
  session_id uuid,
  provider text,
  expires_ms double precision,
  auth_ms double precision
)
-- Plain SQL with no pinned search_path, so that Postgres inlines it into the statement that
-- reads it (every signed-in request, every inbox page): as a function of its own it cost
-- 0.33 ms a call against 0.10 ms inlined, and the inbox page 0.59 against 0.39 ms (pgbench,
-- 2 clients). Every name in it is schema-qualified and it runs with the caller's rights, so a
-- caller's search_path can change nothing but that caller's own result (docs/conventions.md).
language sql stable security invoker
as $$
  -- By session id only, so the plan is the primary key's whatever the array holds; the caller
  -- compares the user id its token named.
  select u.id, u.email, u.name, u.image, u.role, u.wallet_address, s.id, s.provider,
         (extract(epoch from s.expires_at) * 1000)::float8,
         (extract(epoch from s.authenticated_at) * 1000)::float8
  from app.sessions s join app.users u on u.id = s.user_id
  where s.id operator(pg_catalog.=) any(session_ids)
    and s.revoked_at is null
    and s.expires_at operator(pg_catalog.>) pg_catalog.now()
    and u.status operator(pg_catalog.=) 'active'
$$;
comment on function app_private.live_sessions(uuid[]) is
  'The live-session rule, written once: of the given sessions, those not revoked, not expired and whose user is active, each with its user''s public fields and the times (epoch ms) the API''s session check needs. The API''s check (functions/api/auth/session-lookup.ts), the inbox page, the readable topics and the fresh sign-in check all read it. The caller compares the user id it expects. Plain SQL without a pinned search_path so that it is inlined into the caller''s statement (a third of the cost of a call); every name is qualified and it has no rights of its own. Only server code and security definer functions call it.';
revoke all on function app_private.live_sessions(uuid[]) from public, anon, authenticated, service_role;

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
       select 1 from app_private.live_sessions(array[session_claim::uuid]) l where l.id = me
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

create or replace function app.has_fresh_sign_in() returns boolean
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
    select 1 from app_private.live_sessions(array[session_claim::uuid]) l
    where l.id = (select auth.uid())
      and l.auth_ms > extract(epoch from now()
        - make_interval(secs => app.config_int('security', 'freshSignInSeconds'))) * 1000
  );
end;
$$;

create or replace function app_private.inbox_page_for_session(
  caller_session uuid,
  caller_user uuid,
  only_type app.notification_type,
  only_unread boolean,
  pattern text,
  since timestamptz,
  after_time timestamptz,
  after_id uuid,
  page_limit integer
) returns table (
  id uuid,
  type app.notification_type,
  title text,
  body text,
  data jsonb,
  priority app.notification_priority,
  read_at text,
  created_at text,
  unread integer
)
language plpgsql volatile security invoker
set search_path = ''
as $$
#variable_conflict use_column
declare
  caller_claims text;
  bound_time timestamptz := coalesce(after_time, 'infinity'::timestamptz);
  bound_id uuid := coalesce(after_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid);
  lower_time timestamptz := coalesce(since, '-infinity'::timestamptz);
begin
  -- The live-session rule (app_private.live_sessions), with the pool's own rights, before the
  -- role changes.
  select json_build_object('sub', l.id, 'role', 'authenticated', 'session_id', l.session_id,
                           'email', coalesce(l.email, ''), 'user_role', l.role)::text
    into caller_claims
  from app_private.live_sessions(array[caller_session]) l
  where l.id = caller_user;
  if caller_claims is null then
    -- The message is the API's usual 401 (AG codes' messages reach the caller).
    raise exception 'Sign in to continue.' using errcode = 'AG401';
  end if;
  perform set_config('request.jwt.claims', caller_claims, true);
  perform set_config('role', 'authenticated', true);
  if only_type is null and only_unread is null and pattern is null then
    return query
      select n.id, n.type, n.title, n.body, n.data, n.priority, n.read_at::text, n.created_at::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0)
      from app.notifications n
      where n.user_id = (select auth.uid()) and n.inbox
        and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
      order by n.created_at desc, n.id desc
      limit page_limit;
  else
    return query
      select n.id, n.type, n.title, n.body, n.data, n.priority, n.read_at::text, n.created_at::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0)
      from app.notifications n
      where n.user_id = (select auth.uid()) and n.inbox
        and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
        and (only_type is null or n.type = only_type)
        and (only_unread is null or (n.read_at is null) = only_unread)
        and (pattern is null or lower(n.title) like pattern or lower(n.body) like pattern)
      order by n.created_at desc, n.id desc
      limit page_limit;
  end if;
  if not found then
    return query
      select null::uuid, null::app.notification_type, null::text, null::text, null::jsonb,
             null::app.notification_priority, null::text, null::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0);
  end if;
end;
$$;

comment on function app.readable_topics() is
  'THE topic rule, as the set of topics the current user may read: conversation:<id> for participants (active users of at least SUBSCRIBER), user:<id> for that user, vendor:<id> for the vendor''s owner, admin for ADMINs; only for a live session (app_private.live_sessions: not revoked, not expired, the user active), so signout or suspension ends realtime access at once. Every transport uses it: SSE and long-poll through app.can_read_topic, Realtime through the realtime.messages policy, the app.events policy as a set (evaluated once per statement, not per event row). security definer: it reads memberships, vendors and sessions the caller may not read, and returns only the caller''s own topics.';

comment on function app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) is
  'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path), session check included: the session the access token names must be live and its user active by the one rule, app_private.live_sessions (else AG401), the claims are built from those rows, then the page is read under RLS as role authenticated, newest first, with the unread count (app.notification_counters) on every row; an empty page is one row with a null id carrying the count. One round trip instead of two (the session check, then the page): measured, the round trips and the session query cost more than the page. Only the API''s own role may call it, with ids from an access token whose signature it verified.';

comment on function app.has_fresh_sign_in() is
  'Whether the caller''s session (the session_id claim) is live (app_private.live_sessions: not revoked, not expired, the user active) and was opened by a sign-in within security.freshSignInSeconds: what deleting the account and exporting a wallet key need. The API checks the same first (functions/api/core/middleware/freshness.ts); this is the database''s own check. security definer: it reads the caller''s session row and the configuration.';

revoke execute on all functions in schema app, app_private from public;
