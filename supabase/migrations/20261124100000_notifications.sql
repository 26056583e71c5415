/*
 * Notifications: the inbox, the one way in (`app_private.notify`, and its set-based form
 * `app_private.notify_many`), preferences per type and channel with quiet hours, push devices,
 * the delivery rows behind push and e-mail, and bulk batches.
 *
 * One door: every notification, whatever its source (messages, role changes, and later orders,
 * vendors and wallet transactions), is written by `app_private.notify_many`, which applies the
 * recipient's preferences (in-app, push, e-mail per type; quiet hours; `critical` bypasses both),
 * folds notifications that share a collapse key into one unread row, emits
 * `notification.created` on `user:<id>` and queues the push and e-mail deliveries (rows in
 * app_private.notification_deliveries, sent by the `notifications.deliver` job). Preferences are
 * checked again when a delivery is sent.
 *
 * Tables: app.notifications, app.notification_preferences, app.push_devices,
 * app.notification_batches, app_private.notification_deliveries,
 * app_private.notification_batch_chunks. Triggers on app.messages,
 * app.conversation_participants and app.role_changes (the platform's own sources). Nothing
 * destructive.
 */

-- ---------------------------------------------------------------------------------------------
-- Types
-- ---------------------------------------------------------------------------------------------

create type app.notification_type as enum ('OPPORTUNITY', 'MESSAGE', 'ENTITY', 'SYSTEM', 'WALLET');
-- Declared in rank order: greatest() of two priorities is the more urgent one.
create type app.notification_priority as enum ('low', 'normal', 'high', 'critical');
create type app.push_platform as enum ('web', 'ios', 'android');
create type app.notification_batch_status as enum ('queued', 'sending', 'done');
create type app_private.delivery_channel as enum ('push', 'email');
create type app_private.delivery_status as enum ('queued', 'sent', 'failed', 'pruned');
comment on type app.notification_type is
  'What a notification is about; preferences are chosen per type.';
comment on type app.notification_priority is
  'How urgent a notification is, in rank order; critical ignores preferences and quiet hours.';
comment on type app.push_platform is 'The kind of device a push token belongs to.';
comment on type app.notification_batch_status is
  'queued: accepted, nothing written yet; sending: inbox rows written, deliveries going out; done.';
comment on type app_private.delivery_channel is 'The channels that leave the platform.';
comment on type app_private.delivery_status is
  'queued: waiting (for its job, quiet hours or a retry); sent: accepted by FCM or the mailer; '
  'failed: not delivered, error_code says why; pruned: FCM refused the token, which was deleted.';

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

/*
 * Bulk sends: one row per request, keyed by its Idempotency-Key per admin. The audience is kept
 * as sent; the recipients are the active users it names who existed when the batch was accepted.
 */
create table app.notification_batches (
  id uuid primary key default gen_random_uuid(),
  created_by uuid references app.users (id) on delete set null,
  idempotency_key text check (char_length(idempotency_key) between 1 and 255),
  request_hash text,
  audience jsonb not null check (jsonb_typeof(audience) = 'object'),
  type app.notification_type not null,
  title text not null check (char_length(title) between 1 and 200),
  body text not null check (char_length(body) <= 2000),
  data jsonb not null default '{}' check (jsonb_typeof(data) = 'object'),
  priority app.notification_priority not null default 'normal',
  channels text[] not null check (
    cardinality(channels) between 1 and 3 and channels <@ array['inApp', 'push', 'email']
  ),
  status app.notification_batch_status not null default 'queued',
  recipients integer not null default 0 check (recipients >= 0),
  chunks integer check (chunks >= 0),
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  constraint notification_batches_idempotency_key unique (created_by, idempotency_key)
);
comment on table app.notification_batches is
  'Bulk sends by ADMINs: the request (audience, notification, channels), its Idempotency-Key and progress. Written only through app.create_notification_batch and the batch jobs; ADMINs read them.';

/*
 * The inbox. `inbox` false: the recipient turned the type's in-app channel off, but push or
 * e-mail still need a notification to deliver (and analytics count it): such rows are never
 * shown. A collapse key folds notifications into one unread row (data.count adds up); the row
 * keeps its place (created_at) and is updated in place (updated_at), a HOT update when only
 * title, body and data change (fillfactor 80 keeps room on the page).
 */
create table app.notifications (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  type app.notification_type not null,
  title text not null check (char_length(title) between 1 and 200),
  body text not null check (char_length(body) <= 2000),
  data jsonb not null default '{}' check (jsonb_typeof(data) = 'object'),
  priority app.notification_priority not null default 'normal',
  collapse_key text check (char_length(collapse_key) between 1 and 200),
  batch_id uuid references app.notification_batches (id) on delete set null,
  inbox boolean not null default true,
  read_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
) with (fillfactor = 80);
comment on table app.notifications is
  'Each user''s notifications. Rows with inbox = false exist only for delivery (the type''s in-app channel is off) and are never shown. At most one unread row per (user, collapse_key). Written only through app_private.notify_many; users read, mark read and delete their own.';

/*
 * Choices only: a type or channel a user never chose follows `notifications.defaults` of the
 * configuration, so an admin's change of a default reaches everyone who did not choose.
 */
create table app.notification_preferences (
  user_id uuid primary key references app.users (id) on delete cascade,
  types jsonb not null default '{}' check (jsonb_typeof(types) = 'object'),
  quiet_start time,
  quiet_end time,
  quiet_time_zone text,
  updated_at timestamptz not null default now(),
  constraint notification_preferences_quiet_together check (
    (quiet_start is null) = (quiet_end is null) and (quiet_start is null) = (quiet_time_zone is null)
  )
);
comment on table app.notification_preferences is
  'A user''s own choices: per type and channel ({ TYPE: { inApp, push, email } }, only what was chosen) and quiet hours (HH:MM to HH:MM in an IANA time zone, possibly across midnight) that hold push and e-mail back. Users read and write their own row; a trigger validates it.';

create table app.push_devices (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references app.users (id) on delete cascade,
  token text not null unique check (char_length(token) between 1 and 1024),
  platform app.push_platform not null,
  device_name text check (char_length(device_name) <= 200),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table app.push_devices is
  'FCM registration tokens, one row per token. A token registered by another user moves to that user (a new row, so deliveries queued for the previous owner never reach the new one). Deleted when FCM says the token is unregistered or invalid. Users see their own devices but never a token (no column grant); registration goes through app.register_push_device.';

/*
 * One row per notification and device (push) or per notification (e-mail): the key that makes a
 * delivery happen at most once. A send claims its row first (in_flight_since, in_flight_token);
 * a row found still in flight by a later attempt had its outcome lost (a crash between FCM's
 * answer and the record), and is never sent again.
 */
create table app_private.notification_deliveries (
  id bigint generated always as identity primary key,
  notification_id uuid not null references app.notifications (id) on delete cascade,
  channel app_private.delivery_channel not null,
  device_id uuid references app.push_devices (id) on delete set null,
  status app_private.delivery_status not null default 'queued',
  not_before timestamptz not null default now(),
  attempts integer not null default 0 check (attempts >= 0),
  in_flight_since timestamptz,
  in_flight_token uuid,
  error_code text check (char_length(error_code) <= 100),
  error_message text check (char_length(error_message) <= 1000),
  provider_message_id text check (char_length(provider_message_id) <= 500),
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  constraint notification_deliveries_email_has_no_device check (channel = 'push' or device_id is null),
  constraint notification_deliveries_finished check ((status = 'queued') = (finished_at is null)),
  constraint notification_deliveries_in_flight check ((in_flight_since is null) = (in_flight_token is null))
);
comment on table app_private.notification_deliveries is
  'Push and e-mail deliveries: one per notification and device (push) or per notification (e-mail), with status, attempts, FCM''s error code and message name. Server only.';

/*
 * The chunks a batch's deliveries and live events go out in: one job each. announced_at makes
 * the events of a chunk go out once, whatever the job's retries.
 */
create table app_private.notification_batch_chunks (
  batch_id uuid not null references app.notification_batches (id) on delete cascade,
  chunk integer not null check (chunk >= 0),
  first_user_id uuid not null,
  last_user_id uuid not null,
  announced_at timestamptz,
  done_at timestamptz,
  primary key (batch_id, chunk)
);
comment on table app_private.notification_batch_chunks is
  'A bulk batch''s recipients in user-id ranges, one job per range: its live events (once, announced_at) and its deliveries. Server only.';

-- ---------------------------------------------------------------------------------------------
-- Indexes
-- ---------------------------------------------------------------------------------------------

-- The inbox, newest first (keyset pages), and the unread part of it (unreadCount, unread=true).
create index notifications_inbox_idx on app.notifications (user_id, created_at desc, id desc)
  where inbox;
create index notifications_unread_idx on app.notifications (user_id, created_at desc, id desc)
  where inbox and read_at is null;
-- At most one unread notification per collapse key; the upsert's arbiter.
create unique index notifications_collapse_key on app.notifications (user_id, collapse_key)
  where read_at is null and collapse_key is not null;
-- Each recipient of a batch exactly once, whatever the drain's crashes and retries.
create unique index notifications_batch_user_key on app.notifications (batch_id, user_id)
  where batch_id is not null;
-- Rows arrive in time order: a tiny range index serves the analytics ranges.
create index notifications_created_at_brin on app.notifications using brin (created_at);
create index notification_batches_created_at_idx on app.notification_batches (created_at desc, id desc);
create index push_devices_user_id_idx on app.push_devices (user_id);
create unique index notification_deliveries_push_key on app_private.notification_deliveries
  (notification_id, device_id) where channel = 'push';
create unique index notification_deliveries_email_key on app_private.notification_deliveries
  (notification_id) where channel = 'email';
create index notification_deliveries_notification_id_idx on app_private.notification_deliveries
  (notification_id);
create index notification_deliveries_device_id_idx on app_private.notification_deliveries (device_id)
  where device_id is not null;
create index notification_deliveries_finished_at_idx on app_private.notification_deliveries
  (finished_at) where finished_at is not null;

-- ---------------------------------------------------------------------------------------------
-- Triggers
-- ---------------------------------------------------------------------------------------------

create function app_private.guard_notification_read() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  -- (The `role` setting, not current_user: security definer callers keep the caller's setting.)
  if current_setting('role', true) in ('anon', 'authenticated') then
    if old.read_at is not null then
      new.read_at := old.read_at;
    elsif new.read_at is not null then
      new.read_at := now();
    end if;
  end if;
  return new;
end;
$$;
comment on function app_private.guard_notification_read() is
  'Users only mark notifications read: the time is the server''s (no backdating into the read-time figures) and a read notification stays read. Fires only when read_at is in the update.';

create function app_private.notification_read_event() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.emit_event('user:' || new.user_id, 'notification.read', app.notification_json(new));
  return null;
end;
$$;
comment on function app_private.notification_read_event() is
  'notification.read on user:<id> when an inbox notification becomes read, by any path (the route, read-all, a conversation read up to its latest message). security definer: emit_event writes the event log.';

create function app_private.notification_deleted_event() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.emit_event('user:' || old.user_id, 'notification.deleted', app.notification_json(old));
  return null;
end;
$$;
comment on function app_private.notification_deleted_event() is
  'notification.deleted on user:<id> when an inbox notification is deleted. security definer as notification_read_event.';

create function app_private.validate_notification_preferences() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  entry record;
  channel record;
begin
  for entry in select * from jsonb_each(new.types) loop
    if entry.key not in ('OPPORTUNITY', 'MESSAGE', 'ENTITY', 'SYSTEM', 'WALLET') then
      raise exception 'unknown notification type %', entry.key using errcode = 'AG400';
    end if;
    if jsonb_typeof(entry.value) <> 'object' then
      raise exception 'the channels of % are an object', entry.key using errcode = 'AG400';
    end if;
    for channel in select * from jsonb_each(entry.value) loop
      if channel.key not in ('inApp', 'push', 'email') or jsonb_typeof(channel.value) <> 'boolean' then
        raise exception 'the channels of % are inApp, push and email, each true or false', entry.key
          using errcode = 'AG400';
      end if;
    end loop;
  end loop;
  if new.quiet_start is not null then
    if extract(second from new.quiet_start) <> 0 or extract(second from new.quiet_end) <> 0 then
      raise exception 'quiet hours start and end on a minute (HH:MM)' using errcode = 'AG400';
    end if;
    if new.quiet_start = new.quiet_end then
      raise exception 'quiet hours start and end at different times' using errcode = 'AG400';
    end if;
    if tg_op = 'INSERT' or new.quiet_time_zone is distinct from old.quiet_time_zone then
      if not exists (select 1 from pg_catalog.pg_timezone_names z where z.name = new.quiet_time_zone) then
        raise exception 'unknown time zone %', new.quiet_time_zone using errcode = 'AG400';
      end if;
    end if;
  end if;
  new.updated_at := now();
  return new;
end;
$$;
comment on function app_private.validate_notification_preferences() is
  'Preferences hold known types and channels with boolean values, and quiet hours on whole minutes, not empty, in a time zone Postgres knows by name (pg_timezone_names, checked only when the zone changes: reading that view costs milliseconds). AG400 otherwise, whatever path wrote the row. security definer: it reads pg_timezone_names whoever writes.';

create function app_private.touch_push_device() returns trigger
language plpgsql
set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end;
$$;
comment on function app_private.touch_push_device() is
  'A device''s updated_at is the time of its last registration.';

create trigger notifications_guard_read before update of read_at on app.notifications
  for each row execute function app_private.guard_notification_read();
create trigger notifications_read_event after update of read_at on app.notifications
  for each row when (old.read_at is null and new.read_at is not null and new.inbox)
  execute function app_private.notification_read_event();
create trigger notifications_deleted_event after delete on app.notifications
  for each row when (old.inbox)
  execute function app_private.notification_deleted_event();
create trigger notification_preferences_validate before insert or update on app.notification_preferences
  for each row execute function app_private.validate_notification_preferences();
create trigger push_devices_touch before update on app.push_devices
  for each row execute function app_private.touch_push_device();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.notifications enable row level security;
alter table app.notification_preferences enable row level security;
alter table app.push_devices enable row level security;
alter table app.notification_batches enable row level security;
alter table app_private.notification_deliveries enable row level security;
alter table app_private.notification_batch_chunks enable row level security;

-- ---------------------------------------------------------------------------------------------
-- Helper functions
-- ---------------------------------------------------------------------------------------------

create function app.notification_json(n app.notifications) returns jsonb
language sql stable
as $$
  select jsonb_build_object(
    'id', n.id,
    'type', n.type,
    'title', n.title,
    'body', n.body,
    'data', n.data,
    'priority', n.priority,
    'readAt', to_char(n.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;
comment on function app.notification_json(app.notifications) is
  'The notification as the API and the live events show it. Inlinable pure SQL with no pinned search_path on purpose, as app.message_object: it reads no table and runs with the caller''s rights.';

create function app_private.notification_type_defaults(notification_type app.notification_type)
returns jsonb
language sql stable security definer
set search_path = ''
as $$
  select jsonb_build_object(
    'inApp', coalesce((stored ->> 'inApp')::boolean, (fallback ->> 'inApp')::boolean, true),
    'push', coalesce((stored ->> 'push')::boolean, (fallback ->> 'push')::boolean, true),
    'email', coalesce((stored ->> 'email')::boolean, (fallback ->> 'email')::boolean, false)
  )
  from (
    select app_private.config_defaults() #> array['notifications', 'defaults', notification_type::text] as fallback,
           (select c.config #> array['notifications', 'defaults', notification_type::text]
              from app.config_versions c order by c.version desc limit 1) as stored
  ) x
$$;
comment on function app_private.notification_type_defaults(app.notification_type) is
  'The channels ({ inApp, push, email }) of one type for users who did not choose: notifications.defaults of the current configuration, each channel falling back to app_private.config_defaults. security definer: the configuration is readable by ADMINs only; it returns three booleans.';

create function app_private.wants(
  choices jsonb,
  notification_type app.notification_type,
  channel text,
  defaults jsonb
) returns boolean
language sql immutable
as $$
  select coalesce((choices -> notification_type::text ->> channel)::boolean, (defaults ->> channel)::boolean, false)
$$;
comment on function app_private.wants(jsonb, app.notification_type, text, jsonb) is
  'Whether a user wants a type on a channel: their own choice, else the default. Inlinable pure SQL with no pinned search_path on purpose (see app.notification_json), so the send''s hot path pays no call per recipient.';

create function app_private.quiet_until(
  quiet_start time,
  quiet_end time,
  time_zone text,
  at timestamptz
) returns timestamptz
language sql stable
as $$
  select case
    when quiet_start is null or time_zone is null then null
    when quiet_start < quiet_end and local::time >= quiet_start and local::time < quiet_end
      then (local::date + quiet_end) at time zone time_zone
    when quiet_start > quiet_end and local::time >= quiet_start
      then (local::date + 1 + quiet_end) at time zone time_zone
    when quiet_start > quiet_end and local::time < quiet_end
      then (local::date + quiet_end) at time zone time_zone
  end
  from (select at at time zone coalesce(time_zone, 'UTC') as local) x
$$;
comment on function app_private.quiet_until(time, time, text, timestamptz) is
  'When the quiet period that `at` falls in ends, or null when `at` is not in quiet hours. Start and end are wall-clock times in the time zone; a period whose start is after its end crosses midnight (22:00-07:00). Inlinable pure SQL (no pinned search_path, see app.notification_json).';

/*
 * The one way in, set-based. See the comment below for the rules; the return has one row per
 * known recipient (unknown ids are skipped: app_private.notify refuses them).
 */
create function app_private.notify_many(
  recipients uuid[],
  notification_type app.notification_type,
  title text,
  body text,
  data jsonb default '{}',
  priority app.notification_priority default 'normal',
  collapse_key text default null
) returns table (recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  defaults jsonb := app_private.notification_type_defaults(notification_type);
  critical boolean := priority = 'critical';
  payload jsonb := coalesce(data, '{}'::jsonb);
  r record;
  deliveries integer;
begin
  if title is null or char_length(title) not between 1 and 200 then
    raise exception 'a notification''s title has 1 to 200 characters' using errcode = 'AG400';
  end if;
  if body is null or char_length(body) > 2000 then
    raise exception 'a notification''s body has at most 2000 characters' using errcode = 'AG400';
  end if;
  if jsonb_typeof(payload) <> 'object' or octet_length(payload::text) > 2048 then
    raise exception 'a notification''s data is a JSON object of at most 2048 bytes' using errcode = 'AG400';
  end if;
  if collapse_key is not null and not payload ? 'count' then
    payload := payload || '{"count": 1}'::jsonb;
  end if;
  for r in
    with decided as (
      select u.id as uid,
             critical or app_private.wants(p.types, notification_type, 'inApp', defaults) as want_inbox,
             critical or app_private.wants(p.types, notification_type, 'push', defaults) as want_push,
             critical or app_private.wants(p.types, notification_type, 'email', defaults) as want_email,
             case when not critical
                  then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end
               as quiet_until
      from app.users u
      left join app.notification_preferences p on p.user_id = u.id
      where u.id = any(recipients)
    ), written as (
      insert into app.notifications as n (user_id, type, title, body, data, priority, collapse_key, inbox)
      select d.uid, notification_type, notify_many.title, notify_many.body, payload,
             notify_many.priority, notify_many.collapse_key, d.want_inbox
      from decided d
      on conflict (user_id, collapse_key) where read_at is null and collapse_key is not null
      do update set
        title = excluded.title,
        body = excluded.body,
        data = excluded.data || jsonb_build_object('count',
          coalesce((n.data ->> 'count')::integer, 0) + coalesce((excluded.data ->> 'count')::integer, 1)),
        priority = greatest(n.priority, excluded.priority),
        inbox = n.inbox or excluded.inbox,
        updated_at = now()
      returning n.id, n.user_id, n.inbox, n.xmax = 0 as created
    )
    select w.id, w.user_id, w.inbox, w.created, d.want_push, d.want_email, d.quiet_until
    from written w join decided d on d.uid = w.user_id
  loop
    if r.created then
      if r.inbox then
        perform app_private.emit_event('user:' || r.user_id, 'notification.created',
          (select app.notification_json(n) from app.notifications n where n.id = r.id));
      end if;
      deliveries := 0;
      if r.want_push then
        insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
        select r.id, 'push', d.id, coalesce(r.quiet_until, now())
        from app.push_devices d where d.user_id = r.user_id;
        get diagnostics deliveries = row_count;
      end if;
      if r.want_email then
        insert into app_private.notification_deliveries (notification_id, channel, not_before)
        values (r.id, 'email', coalesce(r.quiet_until, now()));
        deliveries := deliveries + 1;
      end if;
      if deliveries > 0 then
        perform app_private.enqueue_job('notifications.deliver',
          jsonb_build_object('notificationIds', jsonb_build_array(r.id)),
          coalesce(r.quiet_until, now()), 'notifications.deliver:' || r.id::text);
      end if;
    end if;
    recipient_id := r.user_id;
    notification_id := r.id;
    shown := r.inbox;
    is_new := r.created;
    return next;
  end loop;
end;
$$;
comment on function app_private.notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text) is
  'THE way notifications are written, for any number of recipients in one statement. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences and quiet hours. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

create function app_private.notify(
  recipient uuid,
  notification_type app.notification_type,
  title text,
  body text,
  data jsonb default '{}',
  priority app.notification_priority default 'normal',
  collapse_key text default null
) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  written record;
begin
  if recipient is null or not exists (select 1 from app.users u where u.id = recipient) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select * into written
  from app_private.notify_many(array[recipient], notification_type, title, body, data, priority, collapse_key);
  return case when written.shown then written.notification_id end;
end;
$$;
comment on function app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text) is
  'Notifies one user (app_private.notify_many''s rules): returns the notification''s id, or null when the recipient''s preferences keep it out of the inbox (it may still be pushed or mailed). AG404 for an unknown user. For other domains'' SQL functions and triggers (orders, vendors, wallet, sign-ins); never granted to API roles. security definer as notify_many.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy notifications_select_own on app.notifications for select to authenticated
  using (user_id = (select auth.uid()) and inbox);
create policy notifications_update_own on app.notifications for update to authenticated
  using (user_id = (select auth.uid()) and inbox)
  with check (user_id = (select auth.uid()) and inbox);
-- No delete grant (no API role holds a table-wide delete): app.delete_notification deletes one's own.

create policy notification_preferences_select_own on app.notification_preferences for select
  to authenticated using (user_id = (select auth.uid()));
create policy notification_preferences_insert_own on app.notification_preferences for insert
  to authenticated with check (user_id = (select auth.uid()));
create policy notification_preferences_update_own on app.notification_preferences for update
  to authenticated using (user_id = (select auth.uid())) with check (user_id = (select auth.uid()));

create policy push_devices_select_own on app.push_devices for select to authenticated
  using (user_id = (select auth.uid()));

create policy notification_batches_select_admin on app.notification_batches for select
  to authenticated using ((select app.is_admin()));

-- app_private tables: RLS on, no policies, no grants.

-- ---------------------------------------------------------------------------------------------
-- Grants
-- ---------------------------------------------------------------------------------------------

grant usage on type app.notification_type, app.notification_priority, app.push_platform,
  app.notification_batch_status to authenticated;
grant select on app.notifications to authenticated;
grant update (read_at) on app.notifications to authenticated;
grant select on app.notification_preferences to authenticated;
grant insert (user_id, types, quiet_start, quiet_end, quiet_time_zone) on app.notification_preferences
  to authenticated;
grant update (types, quiet_start, quiet_end, quiet_time_zone) on app.notification_preferences
  to authenticated;
grant select (id, user_id, platform, device_name, created_at, updated_at) on app.push_devices
  to authenticated;
grant select on app.notification_batches to authenticated;
grant execute on function app.notification_json(app.notifications) to authenticated;

revoke all on app_private.notification_deliveries, app_private.notification_batch_chunks
  from public, anon, authenticated, service_role;
revoke all on function app_private.notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text)
  from public, anon, authenticated, service_role;
revoke all on function app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text)
  from public, anon, authenticated, service_role;

revoke execute on all functions in schema app, app_private from public;
