/*
 * The inbox page checks the caller's session itself. GET /api/notifications used to make two
 * round trips: the session middleware's check (is the session live, who is the user), then the
 * page's statement with the claims that check produced. Now the API verifies the access token's
 * signature and hands the page's statement the session id and user id the token names; the
 * statement checks, with the same conditions as the session middleware, that the session is live
 * and the user active, builds the claims from those rows, and reads the page under RLS as before.
 * One round trip, and the statement no longer trusts claims it is given: a revoked session, an
 * expired one or a suspended user reads nothing (AG401, 401 through the API).
 *
 * Replaces app_private.inbox_page_as(claims, ...) of 20261124100000_notifications.sql. Nothing
 * destructive.
 */

drop function app_private.inbox_page_as(text, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer);

/*
 * The page itself is the same two static queries under RLS as before (no filters: an ordered walk
 * of notifications_inbox_idx from the keyset bound; with filters: the same with them). An empty
 * page still answers one row, with a null id, to carry the unread count: the caller needs the
 * count and must not make a second round trip for it.
 */
create function app_private.inbox_page_for_session(
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
  -- The session middleware's conditions (functions/api/auth/session-lookup.ts), with the pool's
  -- own rights, before the role changes.
  select json_build_object('sub', u.id, 'role', 'authenticated', 'session_id', s.id,
                           'email', coalesce(u.email, ''), 'user_role', u.role)::text
    into caller_claims
  from app.sessions s join app.users u on u.id = s.user_id
  where s.id = caller_session and s.user_id = caller_user
    and s.revoked_at is null and s.expires_at > now() and u.status = 'active';
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
comment on function app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer) is
  'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path), session check included: the session the access token names must be live and its user active (else AG401), the claims are built from those rows, then the page is read under RLS as role authenticated, newest first, with the unread count (app.notification_counters) on every row; an empty page is one row with a null id carrying the count. One round trip instead of two (the session check, then the page): measured, the round trips and the session query cost more than the page. Only the API''s own role may call it, with ids from an access token whose signature it verified.';
revoke all on function app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer)
  from public, anon, authenticated, service_role;
