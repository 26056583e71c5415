-- Replaces functions of other domains:
--   app_private.collect_orphan_attachments (attachments), app_private.account_export_profile
--   (signin).
/*
 * Profiles: a person's name, picture, bio, time zone and locale, set by themselves
 * (GET and PUT /api/profile) and shown to SUBSCRIBER and above (GET /api/users/{id}, and the
 * picture at GET /api/users/{id}/image). app.users stays the one source of a person's name and
 * picture: every endpoint, live event and e-mail already reads `name` and `image` from it, so a
 * change shows from the next read with nothing copied anywhere.
 *
 * - New columns on app.users: bio, time_zone, locale, image_attachment_id (an uploaded image of
 *   the user's own, app.attachments; cleared when the file goes).
 * - `image` is what every reader shows; when image_attachment_id is set, the trigger
 *   users_guard_profile writes it as `/api/users/<id>/image?v=<attachment id>` (the version
 *   changes with the file, so a browser never shows a replaced picture), and clears it with the
 *   file. A picture set another way (a provider's URL at sign-up) stays as it was.
 * - A new account's name is no longer its e-mail's local part (that leaked the address into the
 *   directory and every conversation): the column's default is app_private.new_account_name(),
 *   "Member 4821", and the sign-in paths use it when the provider gives no name. Names set before
 *   this migration are left as they are.
 * - `profile.updated` on `user:<id>` (payload: the public profile) when name, image, bio or role
 *   change (users_publish_profile).
 * - app_private.collect_orphan_attachments keeps uploads that are someone's profile image.
 * - app_private.account_export_profile adds bio, timeZone and locale to the export's profile.
 *
 * Nothing destructive: columns are added, a default and a function replaced.
 */

-- Tables ---------------------------------------------------------------------------------------

alter table app.users
  add column bio text check (char_length(bio) <= 500),
  add column time_zone text check (char_length(time_zone) between 1 and 64),
  add column locale text check (char_length(locale) between 2 and 64),
  add column image_attachment_id uuid references app.attachments (id) on delete set null;

comment on column app.users.bio is
  'What the person says about themselves, up to 500 characters, shown on their profile; null when none.';
comment on column app.users.time_zone is
  'The person''s IANA time zone (Europe/Berlin), checked by the API against the runtime''s list; null when not set. Private: shown only to the person.';
comment on column app.users.locale is
  'The person''s BCP 47 language tag (de-CH), stored canonical as the API makes it; null when not set. Private: shown only to the person.';
comment on column app.users.image_attachment_id is
  'The uploaded image (one of the person''s own attachments, an image type) their profile shows, served by GET /api/users/{id}/image; null when the picture is not an upload. users_guard_profile keeps image in step with it.';

-- Indexes --------------------------------------------------------------------------------------

create index users_image_attachment_id_idx on app.users (image_attachment_id)
  where image_attachment_id is not null;

-- Helper functions -----------------------------------------------------------------------------

create function app_private.new_account_name() returns text
language sql
volatile
set search_path = ''
as $$
  select 'Member ' || lpad((floor(random() * 10000))::int::text, 4, '0')
$$;

comment on function app_private.new_account_name() is
  'The name a new account starts with when its provider gives none ("Member 4821"), until the person sets their own: never the e-mail''s local part, which would show part of the address to everyone who sees the name. Not unique; ids tell people apart.';

alter table app.users alter column name set default app_private.new_account_name();

create function app_private.public_profile_json(u app.users) returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object('id', u.id, 'name', u.name, 'image', u.image, 'bio', u.bio,
    'role', u.role)
$$;

comment on function app_private.public_profile_json(app.users) is
  'A person''s public profile as GET /api/users/{id} and the profile.updated event show it: id, name, image, bio and role; never the e-mail, time zone or locale.';

create function app_private.guard_profile() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  picture app.attachments;
begin
  -- A name a person or an ADMIN sets: 1 to 64 characters, trimmed, no control characters.
  -- (Names made at sign-up are not checked here: they come from providers, cut to 64.)
  if new.name is distinct from old.name and (
       char_length(new.name) not between 1 and 64
       or new.name <> btrim(new.name)
       or new.name ~ '[\x01-\x1f\x7f-\x9f]') then
    raise exception 'a name has 1 to 64 characters, no control characters and no spaces around it'
      using errcode = 'AG400', detail = '[{"path":"name","message":"1 to 64 characters"}]';
  end if;
  if new.image_attachment_id is distinct from old.image_attachment_id then
    if new.image_attachment_id is null then
      new.image := null;
    else
      select a.* into picture from app.attachments a where a.id = new.image_attachment_id;
      if not found or picture.uploader_id <> new.id then
        raise exception 'no such upload of yours' using errcode = 'AG404';
      end if;
      if picture.content_type not in ('image/png', 'image/jpeg', 'image/gif', 'image/webp') then
        raise exception 'a profile picture is a PNG, JPEG, GIF or WebP image' using errcode = 'AG415';
      end if;
      new.image := '/api/users/' || new.id::text || '/image?v=' || new.image_attachment_id::text;
    end if;
  elsif new.image is distinct from old.image and new.image_attachment_id is not null then
    -- The picture was replaced by a URL: the upload is no longer the profile's.
    new.image_attachment_id := null;
  end if;
  return new;
end;
$$;

comment on function app_private.guard_profile() is
  'Profile rules the database keeps whoever writes: a changed name has 1-64 characters, trimmed, without control characters (AG400); image_attachment_id is an upload of the user''s own (AG404 otherwise, so another person''s file is indistinguishable from none) with an image type (AG415), and sets image to its URL (null removes it). security definer: it reads the upload whatever RLS would show the writer, and decides by uploader_id itself.';

create function app_private.publish_profile() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.emit_event('user:' || new.id::text, 'profile.updated',
    app_private.public_profile_json(new));
  return null;
end;
$$;

comment on function app_private.publish_profile() is
  'Emits profile.updated on user:<id> with the public profile when the name, image, bio or role changed, so the person''s other tabs and devices show it at once. security definer: app_private.emit_event is not the writer''s to call.';

-- Triggers -------------------------------------------------------------------------------------

create trigger users_guard_profile before update on app.users
  for each row execute function app_private.guard_profile();

create trigger users_publish_profile after update on app.users
  for each row
  when (old.name is distinct from new.name or old.image is distinct from new.image
        or old.bio is distinct from new.bio or old.role is distinct from new.role)
  execute function app_private.publish_profile();

-- Grants ---------------------------------------------------------------------------------------

grant update (bio, time_zone, locale, image_attachment_id) on app.users to authenticated;

-- API functions --------------------------------------------------------------------------------

create function app.user_profile(target uuid) returns jsonb
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'profiles need the SUBSCRIBER role' using errcode = '42501';
  end if;
  return (
    select app_private.public_profile_json(u) from app.users u
    where u.id = target and u.status = 'active'
  );
end;
$$;

comment on function app.user_profile(uuid) is
  'GET /api/users/{id}: an active user''s public profile (id, name, image, bio, role; never an e-mail) for SUBSCRIBER and above, or null (a suspended, deleted or unknown user: 404). security definer: app.users shows a user only their own row.';

grant execute on function app.user_profile(uuid) to authenticated;

create function app.profile_image(target uuid)
returns table (content_type text, storage_key text, size bigint)
language plpgsql
stable
security definer
set search_path = ''
as $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'profiles need the SUBSCRIBER role' using errcode = '42501';
  end if;
  return query
    select a.content_type, a.storage_key, a.size
    from app.users u join app.attachments a on a.id = u.image_attachment_id
    where u.id = target and u.status = 'active';
end;
$$;

comment on function app.profile_image(uuid) is
  'GET /api/users/{id}/image: the stored file of an active user''s uploaded profile picture, for SUBSCRIBER and above (whoever may see the profile); no row for a suspended, deleted or unknown user or one without an uploaded picture. security definer: the upload is not attached to any conversation of the caller''s, so attachment RLS would hide it; this returns only the file the profile names.';

grant execute on function app.profile_image(uuid) to authenticated;

-- Replaced: uploads that are someone's profile picture are not orphans.

create or replace function app_private.collect_orphan_attachments(older_than interval default '24 hours')
returns void
language sql
set search_path = ''
as $$
  delete from app.attachments a
  where a.message_id is null and a.created_at < now() - older_than
    and not exists (select 1 from app.users u where u.image_attachment_id = a.id)
$$;

comment on function app_private.collect_orphan_attachments(interval) is
  'Uploads never attached within older_than, and not a profile picture, are dropped (their files queued by the delete trigger). Run hourly by pg_cron.';

create or replace function app_private.account_export_profile(target_user_id uuid)
returns jsonb
language sql
stable
set search_path = ''
as $$
  select jsonb_build_object(
    'id', u.id, 'email', u.email, 'name', u.name, 'image', u.image, 'bio', u.bio,
    'timeZone', u.time_zone, 'locale', u.locale, 'role', u.role,
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
  'Export part `profile`: the user row (bio, time zone and locale included) and its role and status history.';

revoke execute on all functions in schema app, app_private from public;
