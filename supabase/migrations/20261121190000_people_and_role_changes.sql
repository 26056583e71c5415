/*
 * The people directory, and role changes that commit with their record and security event, or
 * change nothing.
 *
 * People: a signed-in member must be able to find whom to message, and app.users shows a user
 * only their own row (that stays). app.list_people returns the public fields of active users
 * (id, name, image, role; never an e-mail) to SUBSCRIBER and up, searched by name, in keyset
 * pages. New: two indexes on app.users, the function app.list_people.
 *
 * Role changes: tables touched: none created; app.role_changes and app.security_events receive
 * rows from the replaced trigger. Functions replaced (same signatures and grants):
 * app.change_user_role, app_private.record_role_change. Nothing destructive.
 *
 * What was wrong: an ADMIN demoted by another ADMIN while their own role change ran could pass
 * the admin check, have the demotion commit, and then read back the change and the user through
 * RLS they had just lost (a 500 after the change committed, and the security event, written
 * after the commit by the API, never written). Two admins demoting each other at once could both
 * pass their checks, an outcome no serial order of the two gives.
 */

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- The directory's order and keyset (active users by lower(name), id), and its name search
-- (a substring anywhere in the name: trigrams).
create index users_directory_idx on app.users (lower(name), id) where status = 'active';
create index users_name_search_idx on app.users using gin (lower(name) extensions.gin_trgm_ops);

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

/*
 * The audit trail writes itself: every role change, by any path, lands in app.role_changes with
 * the reason the caller put in `agora.role_change_reason`; a change made by a signed-in ADMIN
 * also writes its `admin.role_changed` security event, with the client address and user agent
 * the API put in `agora.client_ip` and `agora.user_agent`. Both in the transaction of the change,
 * so a change never commits without them. security definer because nobody may insert audit rows
 * or security events directly: that is what makes them trustworthy.
 */
create or replace function app_private.record_role_change() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  actor uuid := (select auth.uid());
  why text := coalesce(
    nullif(current_setting('agora.role_change_reason', true), ''), 'changed by a server path'
  );
  client_ip inet;
begin
  insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
  values (new.id, old.role, new.role, actor, why);
  if actor is not null then
    begin
      client_ip := nullif(current_setting('agora.client_ip', true), '')::inet;
    exception when invalid_text_representation then
      client_ip := null;
    end;
    insert into app.security_events (type, severity, user_id, ip, user_agent, details)
    values (
      'admin.role_changed',
      case when 'ADMIN' in (old.role, new.role) then 'critical' else 'warning' end::app.security_severity,
      new.id,
      client_ip,
      left(nullif(current_setting('agora.user_agent', true), ''), 1024),
      jsonb_build_object('by', actor, 'from', old.role, 'to', new.role, 'reason', why)
    );
  end if;
  return null;
end;
$$;
comment on function app_private.record_role_change() is
  'Writes the audit row of every role change and, for a change by a signed-in ADMIN, its '
  'admin.role_changed security event, in the same transaction. security definer: nobody writes '
  'these rows directly.';

-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

/*
 * Changes a user's role and records it, in one transaction, with the caller's rights: the users
 * policies and the guard trigger refuse non-admins, self-changes and removing the last ADMIN.
 * Raises AG404 for an unknown user (or one RLS hides).
 *
 * Concurrency: role changes run one at a time (a transaction-level advisory lock, taken first),
 * so of two admins demoting each other the second sees the first's change and is refused. The
 * caller's own row is then share-locked until commit and checked: a demotion or suspension of the
 * caller by any other path either committed before (and the change is refused) or waits for this
 * transaction to end. So everything after the check, the update, the record and whatever the API
 * reads back through RLS in the same transaction, runs as the ADMIN the caller was when checked.
 */
create or replace function app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text)
returns app.role_changes
language plpgsql volatile security invoker
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
  caller_is_admin boolean;
  previous app.user_role;
  change app.role_changes;
begin
  if caller is null then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  perform pg_advisory_xact_lock(hashtext('app.change_user_role'));
  select u.role = 'ADMIN' and u.status = 'active' into caller_is_admin
  from app.users u where u.id = caller
  for share;
  if not coalesce(caller_is_admin, false) then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a role change needs a reason' using errcode = 'AG400';
  end if;
  select u.role into previous from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if previous = new_role then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_role, caller, change_reason, now())::app.role_changes;
  end if;
  perform set_config('agora.role_change_reason', change_reason, true);
  update app.users set role = new_role where id = target_user_id;
  perform set_config('agora.role_change_reason', '', true);
  select * into strict change from app.role_changes rc
  where rc.user_id = target_user_id and rc.changed_by = caller
  order by rc.id desc limit 1;
  return change;
end;
$$;
comment on function app.change_user_role(uuid, app.user_role, text) is
  'An ADMIN changes another user''s role: recorded with its reason (and, through the trigger, its '
  'security event) in the same transaction, or refused with nothing changed. Serialized with '
  'other role changes; the caller''s own row stays share-locked until commit.';
revoke execute on function app.change_user_role(uuid, app.user_role, text) from public, anon;
grant execute on function app.change_user_role(uuid, app.user_role, text) to authenticated;

/*
 * The people directory: active users other than the caller, by name (case-insensitive), with only
 * their public fields. security definer because app.users shows a user only their own row (the
 * e-mail, status and sign-in times stay private); this function returns nothing else than id,
 * name, image and role, of active users, to a signed-in SUBSCRIBER or above, checked inside.
 * `search` is a substring of the name (LIKE wildcards in it are literal). Keyset pages: pass the
 * name and id of the last row seen as `after_name` and `after_id`.
 */
create function app.list_people(
  search text default null,
  after_name text default null,
  after_id uuid default null,
  max_rows integer default 50
)
returns table (id uuid, name text, image text, role app.user_role)
language plpgsql stable security definer
set search_path = ''
as $$
declare
  caller uuid := (select auth.uid());
  pattern text;
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'the people directory needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  if nullif(search, '') is not null then
    pattern := '%' || replace(replace(replace(lower(search), '\', '\\'), '%', '\%'), '_', '\_') || '%';
  end if;
  return query
    select u.id, u.name, u.image, u.role
    from app.users u
    where u.status = 'active'
      and u.id <> caller
      and (pattern is null or lower(u.name) like pattern)
      and (after_id is null or (lower(u.name), u.id) > (lower(coalesce(after_name, '')), after_id))
    order by lower(u.name), u.id
    limit least(greatest(coalesce(max_rows, 50), 1), 201);
end;
$$;
comment on function app.list_people(text, text, uuid, integer) is
  'The people directory: id, name, image and role of active users other than the caller, for '
  'SUBSCRIBER and above, searched by name, in keyset pages. security definer: app.users shows '
  'a user only their own row; this returns public fields only, never an e-mail.';
revoke execute on function app.list_people(text, text, uuid, integer) from public, anon;
grant execute on function app.list_people(text, text, uuid, integer) to authenticated;

-- Deny by default (see the foundation migration).
revoke execute on all functions in schema app, app_private from public;
