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
 * The inbox's unread count, kept by triggers (every path that writes notifications keeps it
 * right): counting a user's unread rows on every GET cost as much as reading the page itself.
 */
create table app.notification_counters (
  user_id uuid primary key references app.users (id) on delete cascade,
  unread integer not null default 0 check (unread >= 0)
);
comment on table app.notification_counters is
  'Each user''s unread inbox notifications, kept by the triggers on app.notifications (insert: a statement trigger adding the new unread inbox rows per user; read and delete: row triggers), so GET /api/notifications reads one row instead of counting. Users read their own.';

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
 * Message digests: a conversation with messages not yet told to its participants' inboxes has a
 * mark (inserted by the send, deleted by the digest that tells them); how far each conversation
 * was told is kept apart, so the send never writes a row the digest also writes.
 */
create table app_private.message_digests_pending (
  conversation_id uuid primary key references app.conversations (id) on delete cascade,
  marked_at timestamptz not null default now()
);
comment on table app_private.message_digests_pending is
  'Conversations with messages waiting for their digest (the MESSAGE notifications of the other participants): one row while any wait. Server only.';

create table app_private.message_digests (
  conversation_id uuid primary key references app.conversations (id) on delete cascade,
  digested_seq bigint not null default 0 check (digested_seq >= 0),
  digested_at timestamptz not null default now()
);
comment on table app_private.message_digests is
  'How far each conversation''s messages were told to its participants'' inboxes (the last message seq a digest covered). Server only.';

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
  update app.notification_counters c set unread = c.unread - 1
  where c.user_id = new.user_id and c.unread > 0;
  perform app_private.emit_event('user:' || new.user_id, 'notification.read', app.notification_json(new));
  return null;
end;
$$;
comment on function app_private.notification_read_event() is
  'When an inbox notification becomes read, by any path (the route, read-all, a conversation read up to its latest message): one unread fewer in app.notification_counters, and notification.read on user:<id>. security definer: the counters and the event log are written by the server only.';

create function app_private.notification_deleted_event() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if old.read_at is null then
    update app.notification_counters c set unread = c.unread - 1
    where c.user_id = old.user_id and c.unread > 0;
  end if;
  perform app_private.emit_event('user:' || old.user_id, 'notification.deleted', app.notification_json(old));
  return null;
end;
$$;
comment on function app_private.notification_deleted_event() is
  'When an inbox notification is deleted: one unread fewer if it was unread, and notification.deleted on user:<id>. security definer as notification_read_event.';

create function app_private.count_new_notifications() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app.notification_counters as c (user_id, unread)
  select a.user_id, count(*)::integer from added a
  where a.inbox and a.read_at is null
  group by a.user_id
  order by a.user_id
  on conflict (user_id) do update set unread = c.unread + excluded.unread;
  return null;
end;
$$;
comment on function app_private.count_new_notifications() is
  'Adds a statement''s new unread inbox rows to each recipient''s counter: one statement per insert statement, whatever its size (a bulk batch of 100,000 is one upsert; a message folding into unread notifications inserts nothing and adds nothing). Counters are taken in user order, so concurrent inserts never deadlock on them. security definer: the counters are written by the server only.';

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
create trigger notifications_count_new after insert on app.notifications
  referencing new table as added
  for each statement execute function app_private.count_new_notifications();
create trigger notifications_deleted_event after delete on app.notifications
  for each row when (old.inbox)
  execute function app_private.notification_deleted_event();
create trigger notification_preferences_validate before insert or update on app.notification_preferences
  for each row execute function app_private.validate_notification_preferences();
create trigger push_devices_touch before update on app.push_devices
  for each row execute function app_private.touch_push_device();

/*
 * The platform's own sources. Each is one set-based call of app_private.notify_many, so a
 * message to a group of 100 costs one statement, not 99.
 */

/*
 * The send's hot path: a message only marks its conversation as having news for the others'
 * inboxes, with one `insert ... on conflict do nothing` (an index probe, no write, while a mark
 * is already there), and the first mark of a quiet conversation queues its digest job, due a
 * second later. The digest (app_private.digest_conversation) then tells every other participant
 * of all the messages since the last one in one statement. Folding each message into the
 * participants' unread notifications inside the send cost the send more than the send itself
 * (one row update per participant, under the conversation's lock, on rows every send of the
 * conversation updates again): measured in the messaging benchmark, docs/notifications.md.
 */
create function app_private.mark_message_digest() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app_private.message_digests_pending (conversation_id) values (new.conversation_id)
  on conflict do nothing;
  if found then
    perform app_private.enqueue_job('notifications.digest',
      jsonb_build_object('conversationId', new.conversation_id), now() + interval '1 second',
      'notifications.digest:' || new.conversation_id::text || ':' || new.seq::text);
  end if;
  return null;
end;
$$;
comment on function app_private.mark_message_digest() is
  'A new message marks its conversation for a digest (app_private.message_digests_pending) and, when the conversation had no mark, queues its notifications.digest job a second later: the send does no notification work of its own. security definer: the marks and the job queue are server-only.';

create function app_private.conversation_notifications() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  joined record;
  adder_name text;
begin
  for joined in
    select a.conversation_id, a.added_by, c.type, c.title,
           array_agg(a.user_id) filter (where a.user_id is distinct from a.added_by) as users
    from added a join app.conversations c on c.id = a.conversation_id
    group by a.conversation_id, a.added_by, c.type, c.title
  loop
    continue when joined.users is null;
    select coalesce(nullif(u.name, ''), 'Someone') into adder_name from app.users u where u.id = joined.added_by;
    adder_name := coalesce(adder_name, 'Someone');
    perform app_private.notify_many(
      joined.users,
      'MESSAGE',
      left(coalesce(joined.title, adder_name), 200),
      case when joined.type = 'group' then adder_name || ' added you to ' || joined.title
           else adder_name || ' started a conversation with you' end,
      jsonb_build_object('conversationId', joined.conversation_id, 'messageId', null, 'count', 0),
      'normal',
      'conversation:' || joined.conversation_id::text
    );
  end loop;
  return null;
end;
$$;
comment on function app_private.conversation_notifications() is
  'A new conversation (or being added to a group) gives each person added, but not the one who added them, a MESSAGE notification under the conversation''s collapse key, with count 0: the first message then makes it 1. A statement trigger: one call per conversation however many people join. security definer: it writes other users'' inboxes through app_private.notify_many.';

create function app_private.conversation_read_notifications() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  update app.notifications n set read_at = now()
  where n.user_id = new.user_id
    and n.collapse_key = 'conversation:' || new.conversation_id::text
    and n.read_at is null
    and coalesce(
      (select m.seq from app.messages m
        where m.id = (n.data ->> 'messageId')::uuid and m.conversation_id = new.conversation_id),
      0) <= new.last_read_seq;
  return null;
end;
$$;
comment on function app_private.conversation_read_notifications() is
  'Reading a conversation up to the latest message its MESSAGE notification tells of marks that notification read (and notification.read goes out); a read mark short of it leaves it unread. security definer: notifications are updated by their owner only through RLS, and this runs on the participant row''s update.';

create function app_private.role_change_notification() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform app_private.notify(
    new.user_id,
    'SYSTEM',
    'Your role changed',
    format('Your role is now %s (it was %s).', new.new_role, new.previous_role),
    jsonb_build_object('kind', 'role.changed', 'previousRole', new.previous_role, 'newRole', new.new_role)
  );
  return null;
end;
$$;
comment on function app_private.role_change_notification() is
  'A role change gives the user a SYSTEM notification (data.kind role.changed, the roles before and after; never the admin''s reason, which is for the audit trail). security definer: it writes other users'' inboxes through app_private.notify_many.';

create trigger messages_mark_digest after insert on app.messages
  for each row execute function app_private.mark_message_digest();
create trigger participants_notify after insert on app.conversation_participants
  referencing new table as added
  for each statement execute function app_private.conversation_notifications();
create trigger participants_read_notifications after update of last_read_seq on app.conversation_participants
  for each row when (new.last_read_seq > old.last_read_seq)
  execute function app_private.conversation_read_notifications();
create trigger role_changes_notify after insert on app.role_changes
  for each row execute function app_private.role_change_notification();

-- ---------------------------------------------------------------------------------------------
-- Row level security
-- ---------------------------------------------------------------------------------------------

alter table app.notifications enable row level security;
alter table app.notification_counters enable row level security;
alter table app.notification_preferences enable row level security;
alter table app.push_devices enable row level security;
alter table app.notification_batches enable row level security;
alter table app_private.notification_deliveries enable row level security;
alter table app_private.notification_batch_chunks enable row level security;
alter table app_private.message_digests_pending enable row level security;
alter table app_private.message_digests enable row level security;

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
language plpgsql stable security definer
set search_path = ''
as $$
declare
  fallback jsonb := app_private.config_defaults() #> array['notifications', 'defaults', notification_type::text];
  stored jsonb;
begin
  select c.config #> array['notifications', 'defaults', notification_type::text] into stored
  from app.config_versions c order by c.version desc limit 1;
  return jsonb_build_object(
    'inApp', coalesce((stored ->> 'inApp')::boolean, (fallback ->> 'inApp')::boolean, true),
    'push', coalesce((stored ->> 'push')::boolean, (fallback ->> 'push')::boolean, true),
    'email', coalesce((stored ->> 'email')::boolean, (fallback ->> 'email')::boolean, false)
  );
end;
$$;
comment on function app_private.notification_type_defaults(app.notification_type) is
  'The channels ({ inApp, push, email }) of one type for users who did not choose: notifications.defaults of the current configuration, each channel falling back to app_private.config_defaults. plpgsql, not SQL, on purpose: it is on the send''s hot path, and a security definer SQL function is planned again on every call (with config_defaults'' JSON parsed each time: about 0.3 ms), while plpgsql keeps its plans for the session. security definer: the configuration is readable by ADMINs only; it returns three booleans.';

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
    when quiet_start is null or quiet_end is null or time_zone is null then null
    when quiet_start < quiet_end then
      case when (at at time zone time_zone)::time >= quiet_start and (at at time zone time_zone)::time < quiet_end
           then ((at at time zone time_zone)::date + quiet_end) at time zone time_zone end
    when (at at time zone time_zone)::time >= quiet_start
      then ((at at time zone time_zone)::date + 1 + quiet_end) at time zone time_zone
    when (at at time zone time_zone)::time < quiet_end
      then ((at at time zone time_zone)::date + quiet_end) at time zone time_zone
  end
$$;
comment on function app_private.quiet_until(time, time, text, timestamptz) is
  'When the quiet period that `at` falls in ends, or null when `at` is not in quiet hours. Start and end are wall-clock times in the time zone; a period whose start is after its end crosses midnight (22:00-07:00). Inlinable pure SQL (no pinned search_path, see app.notification_json).';

/*
 * The one way in. notify_rows is the core (per recipient its own title, body and data, for the
 * message digests); notify_many the same content for many recipients; notify one recipient.
 */
create function app_private.notify_rows(
  notification_type app.notification_type,
  recipients uuid[],
  titles text[],
  bodies text[],
  datas jsonb[],
  priority app.notification_priority default 'normal',
  collapse_key text default null
) returns table (recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
language plpgsql volatile security definer
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
#variable_conflict use_column
declare
  defaults jsonb := app_private.notification_type_defaults(notification_type);
  critical boolean := priority = 'critical';
  r record;
  deliveries integer;
begin
  if cardinality(recipients) is distinct from cardinality(titles)
     or cardinality(recipients) is distinct from cardinality(bodies)
     or cardinality(recipients) is distinct from cardinality(datas) then
    raise exception 'one title, body and data per recipient' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(titles) t where t is null or char_length(t) not between 1 and 200) then
    raise exception 'a notification''s title has 1 to 200 characters' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(bodies) b where b is null or char_length(b) > 2000) then
    raise exception 'a notification''s body has at most 2000 characters' using errcode = 'AG400';
  end if;
  if exists (select 1 from unnest(datas) d
             where d is not null and (jsonb_typeof(d) <> 'object' or octet_length(d::text) > 2048)) then
    raise exception 'a notification''s data is a JSON object of at most 2048 bytes' using errcode = 'AG400';
  end if;
  for r in
    with given as (
      -- One row per recipient (the first, if one is named twice).
      select distinct on (g.uid) g.uid, g.title, g.body,
             case when notify_rows.collapse_key is not null and not coalesce(g.data, '{}') ? 'count'
                  then coalesce(g.data, '{}') || '{"count": 1}'::jsonb
                  else coalesce(g.data, '{}') end as data
      from unnest(recipients, titles, bodies, datas) with ordinality as g (uid, title, body, data, i)
      order by g.uid, g.i
    ), decided as (
      select u.id as uid, g.title, g.body, g.data,
             critical or app_private.wants(p.types, notification_type, 'inApp', defaults) as want_inbox,
             critical or app_private.wants(p.types, notification_type, 'push', defaults) as want_push,
             -- No e-mail for people without an address (wallet and some OpenID sign-ins).
             u.email is not null
               and (critical or app_private.wants(p.types, notification_type, 'email', defaults)) as want_email,
             case when not critical
                  then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end
               as quiet_until
      from given g
      join app.users u on u.id = g.uid
      left join app.notification_preferences p on p.user_id = u.id
    ), written as (
      insert into app.notifications as n (user_id, type, title, body, data, priority, collapse_key, inbox)
      select d.uid, notification_type, d.title, d.body, d.data,
             notify_rows.priority, notify_rows.collapse_key, d.want_inbox
      from decided d
      on conflict (user_id, collapse_key) where read_at is null and collapse_key is not null
      do update set
        title = excluded.title,
        body = excluded.body,
        data = excluded.data || jsonb_build_object('count',
          coalesce((n.data ->> 'count')::integer, 0) + coalesce((excluded.data ->> 'count')::integer, 1)),
        priority = greatest(n.priority, excluded.priority),
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
comment on function app_private.notify_rows(app.notification_type, uuid[], text[], text[], jsonb[], app.notification_priority, text) is
  'THE way notifications are written (notify and notify_many call it), for any number of recipients in one statement, each with its own title, body and data. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences and quiet hours. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. Unknown recipients are skipped. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

create function app_private.notify_many(
  recipients uuid[],
  notification_type app.notification_type,
  title text,
  body text,
  data jsonb default '{}',
  priority app.notification_priority default 'normal',
  collapse_key text default null
) returns table (recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
language sql volatile security definer
set search_path = ''
as $$
  select * from app_private.notify_rows(
    notification_type, recipients,
    array_fill(title, array[cardinality(recipients)]),
    array_fill(body, array[cardinality(recipients)]),
    array_fill(coalesce(data, '{}'::jsonb), array[cardinality(recipients)]),
    priority, collapse_key)
$$;
comment on function app_private.notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text) is
  'The same notification for many recipients in one statement: app_private.notify_rows with one title, body and data for all (its rules apply). security definer as notify_rows; never granted to API roles.';

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

/*
 * The notifications.digest job, in two transactions: claim_message_digest waits for the senders
 * in flight and takes the mark away (a short transaction, so senders wait for it only
 * briefly), then digest_conversation tells the participants.
 */
create function app_private.claim_message_digest(target_conversation_id uuid) returns bigint
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  upto_seq bigint;
begin
  -- Senders hold the conversation row until they commit: once this lock is granted, every
  -- message numbered so far is committed. New senders wait for this short transaction, then mark
  -- the conversation again.
  select c.last_seq into upto_seq from app.conversations c
  where c.id = target_conversation_id for share;
  delete from app_private.message_digests_pending x where x.conversation_id = target_conversation_id;
  return upto_seq;
end;
$$;
comment on function app_private.claim_message_digest(uuid) is
  'First half of the notifications.digest job: waits for the conversation''s senders in flight (its row, which each holds for its seq until commit), takes the conversation''s mark away and returns the last message seq, all committed by then. A transaction of its own, so senders wait for it only briefly. Null for a conversation that is gone. security definer: the marks are server-only.';

create function app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint)
returns integer
language plpgsql volatile security definer
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
declare
  conversation app.conversations;
  from_seq bigint;
  recipients uuid[];
  titles text[];
  bodies text[];
  datas jsonb[];
begin
  select * into conversation from app.conversations c where c.id = target_conversation_id;
  if not found or upto_seq is null then
    return 0;
  end if;
  insert into app_private.message_digests (conversation_id) values (target_conversation_id)
  on conflict do nothing;
  -- One digest of a conversation at a time; a later one starts where this one ends.
  select d.digested_seq into from_seq from app_private.message_digests d
  where d.conversation_id = target_conversation_id for update;
  if upto_seq <= from_seq then
    return 0;
  end if;
  -- Read marks wait for this digest: one moved meanwhile would not see what it tells of.
  perform 1 from app.conversation_participants p
  where p.conversation_id = target_conversation_id for share;

  -- Per participant: the live messages of others since the last digest that they have not read
  -- (and sent after they joined), their number and the newest of them.
  with news as (
    select m.id, m.seq, m.sender_id, m.created_at
    from app.messages m
    where m.conversation_id = target_conversation_id and m.seq > from_seq and m.seq <= upto_seq
      and m.deleted_at is null
  ), told as (
    select p.user_id, count(*)::integer as n, (array_agg(x.id order by x.seq desc))[1] as newest
    from app.conversation_participants p
    join news x on x.sender_id is distinct from p.user_id and x.seq > p.last_read_seq
                   and x.created_at >= p.joined_at
    where p.conversation_id = target_conversation_id
    group by p.user_id
  ), shaped as (
    select t.user_id, t.n, m.id as message_id, m.content,
           coalesce((select nullif(u.name, '') from app.users u where u.id = m.sender_id), 'Someone')
             as sender_name
    from told t join app.messages m on m.id = t.newest
  )
  select array_agg(x.user_id order by x.user_id),
         array_agg(left(coalesce(conversation.title, x.sender_name), 200) order by x.user_id),
         array_agg(left(case when conversation.type = 'group' then x.sender_name || ': ' else '' end
                        || x.content, 140) order by x.user_id),
         array_agg(jsonb_build_object('conversationId', target_conversation_id,
                                      'messageId', x.message_id, 'count', x.n) order by x.user_id)
  into recipients, titles, bodies, datas
  from shaped x;

  if recipients is not null then
    perform app_private.notify_rows('MESSAGE', recipients, titles, bodies, datas, 'normal',
                                    'conversation:' || target_conversation_id::text);
  end if;
  update app_private.message_digests d set digested_seq = upto_seq, digested_at = now()
  where d.conversation_id = target_conversation_id;
  return coalesce(cardinality(recipients), 0);
end;
$$;
comment on function app_private.digest_conversation(uuid, bigint) is
  'Second half of the notifications.digest job: tells each participant of the conversation''s messages of others after the last digest and up to upto_seq (from claim_message_digest) that they have not read, in one app_private.notify_rows call: under the conversation''s collapse key, one unread MESSAGE notification per participant whose count adds the new messages and whose messageId and preview are the newest one''s (a participant without one gets a new notification, its event and push). Digests of a conversation take turns (its message_digests row); read marks wait for it. Returns how many participants were told. security definer: it writes other users'' inboxes.';

/*
 * Deliveries, for the `notifications.deliver` and `notifications.batch_chunk` jobs
 * (functions/api/jobs/notifications.ts): take what is due, send it, record each outcome.
 */
create function app_private.take_deliveries(notification_ids uuid[])
returns table (
  delivery_id bigint,
  attempt_token uuid,
  channel app_private.delivery_channel,
  device_token text,
  platform app.push_platform,
  email text,
  notification jsonb,
  collapse_key text
)
language plpgsql volatile
set search_path = ''
set plan_cache_mode = force_generic_plan -- docs/conventions.md, "Plans"
as $$
#variable_conflict use_column
declare
  next_at timestamptz;
  waiting uuid[];
begin
  -- A row still in flight was claimed by an attempt that never recorded its outcome (the process
  -- died after sending, or before): it may have gone out, so it is never sent again.
  update app_private.notification_deliveries d
  set status = 'failed', error_code = 'outcome_unknown', finished_at = now(),
      error_message = 'an earlier attempt was interrupted before its outcome was recorded',
      in_flight_since = null, in_flight_token = null
  where d.notification_id = any(notification_ids) and d.status = 'queued' and d.in_flight_since is not null;

  -- Preferences again, at delivery: a channel turned off since, a recipient suspended since, a
  -- device unregistered since; and quiet hours that began since hold the row back again.
  with kinds as (
    -- The defaults of the types at hand only (one call each, not one per row).
    select x.t, app_private.notification_type_defaults(x.t) as defaults
    from (select distinct n.type from app.notifications n where n.id = any(notification_ids)) x (t)
  ), current_state as (
    select d.id,
           case
             when u.status <> 'active' then 'recipient_suspended'
             when d.channel = 'push' and d.device_id is null then 'device_gone'
             when d.channel = 'email' and u.email is null then 'no_email_address'
             when n.priority <> 'critical'
                  and not app_private.wants(p.types, n.type, d.channel::text, k.defaults) then 'preference_off'
           end as refusal,
           case when n.priority <> 'critical'
                then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end as quiet
    from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    join app.users u on u.id = n.user_id
    join kinds k on k.t = n.type
    left join app.notification_preferences p on p.user_id = n.user_id
    where d.notification_id = any(notification_ids) and d.status = 'queued' and d.not_before <= now()
  ), refused as (
    update app_private.notification_deliveries d
    set status = 'failed', error_code = c.refusal, finished_at = now(),
        error_message = 'not sent: ' || replace(c.refusal, '_', ' ')
    from current_state c
    where d.id = c.id and c.refusal is not null
    returning d.id
  )
  update app_private.notification_deliveries d set not_before = c.quiet
  from current_state c
  where d.id = c.id and c.refusal is null and c.quiet is not null;

  -- Rows not yet due (quiet hours) get a job of their own for when they are.
  select min(d.not_before), array_agg(distinct d.notification_id) into next_at, waiting
  from app_private.notification_deliveries d
  where d.notification_id = any(notification_ids) and d.status = 'queued' and d.not_before > now();
  if next_at is not null then
    perform app_private.enqueue_job('notifications.deliver',
      jsonb_build_object('notificationIds', to_jsonb(waiting)), next_at,
      'notifications.deliver:' || md5(array_to_string(waiting, ',')) || ':' || extract(epoch from next_at)::text);
  end if;

  return query
  with claimed as (
    update app_private.notification_deliveries d
    set attempts = d.attempts + 1, in_flight_since = now(), in_flight_token = gen_random_uuid()
    where d.id in (
      select x.id from app_private.notification_deliveries x
      where x.notification_id = any(notification_ids) and x.status = 'queued' and x.not_before <= now()
        and x.in_flight_since is null
      for update skip locked
    )
    returning d.id, d.in_flight_token, d.channel, d.device_id, d.notification_id
  )
  select c.id, c.in_flight_token, c.channel, dv.token, dv.platform, u.email,
         app.notification_json(n), n.collapse_key
  from claimed c
  join app.notifications n on n.id = c.notification_id
  join app.users u on u.id = n.user_id
  left join app.push_devices dv on dv.id = c.device_id
  order by c.id;
end;
$$;
comment on function app_private.take_deliveries(uuid[]) is
  'Claims the due deliveries of some notifications for one attempt (attempts + 1, in_flight_since, a fresh attempt token) and returns what sending needs (device token and platform, e-mail address, the notification). Before that: rows an interrupted attempt left in flight fail as outcome_unknown (never sent twice); preferences are checked again (a channel turned off since, a suspended recipient, a device gone: failed with that code); quiet hours that began since hold rows back, with a notifications.deliver job queued for when they end. Server only (the job''s connection).';

create function app_private.record_deliveries(outcomes jsonb) returns integer
language plpgsql volatile
set search_path = ''
as $$
declare
  recorded integer;
  refused_devices uuid[];
begin
  with outcome as (
    select * from jsonb_to_recordset(outcomes) as o(
      id bigint, token uuid, outcome text, code text, message text, "providerId" text,
      "retryAfter" double precision
    )
  ), updated as (
    update app_private.notification_deliveries d
    set status = case o.outcome when 'sent' then 'sent' when 'pruned' then 'pruned'
                                when 'failed' then 'failed' else 'queued' end::app_private.delivery_status,
        provider_message_id = left(o."providerId", 500),
        error_code = left(o.code, 100),
        error_message = left(o.message, 1000),
        finished_at = case when o.outcome = 'retry' then null else now() end,
        not_before = case when o.outcome = 'retry'
                          then now() + make_interval(secs => greatest(coalesce(o."retryAfter", 0), 0))
                          else d.not_before end,
        in_flight_since = null,
        in_flight_token = null
    from outcome o
    where d.id = o.id and d.in_flight_token = o.token and d.status = 'queued'
      and o.outcome in ('sent', 'failed', 'pruned', 'retry')
    returning d.device_id, o.outcome
  )
  select count(*)::integer, array_agg(u.device_id) filter (where u.outcome = 'pruned' and u.device_id is not null)
  into recorded, refused_devices
  from updated u;
  -- A statement of its own: the devices' foreign key sets device_id null on the rows just updated.
  if refused_devices is not null then
    delete from app.push_devices dv where dv.id = any(refused_devices);
  end if;
  return recorded;
end;
$$;
comment on function app_private.record_deliveries(jsonb) is
  'Records the outcomes of claimed deliveries ([{ id, token, outcome: sent | failed | pruned | retry, code, message, providerId, retryAfter }]): sent keeps FCM''s message name, failed and pruned FCM''s error code; pruned also deletes the device (FCM said the token is unregistered or invalid); retry puts the row back in the queue, due after retryAfter seconds. Only a claim''s own token records (a stale attempt cannot overwrite another''s outcome). Returns how many were recorded. Server only.';

/*
 * The inbox's hot path in one statement (GET /api/notifications): the caller's claims and role
 * set for this statement's own transaction, as app_private.send_message_as does for sends, then
 * one of two static queries under RLS, each with one cached plan: without type, unread or search
 * filters (nearly every request) the page is an ordered walk of notifications_inbox_idx from the
 * keyset bound, stopping at the limit; with them, the same with those filters. (One query for
 * both, with `filter is null or ...` conditions, made the planner expect a single row and read
 * and sort a user's whole inbox for every page.)
 */
create function app_private.inbox_page_as(
  claims text,
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
  bound_time timestamptz := coalesce(after_time, 'infinity'::timestamptz);
  bound_id uuid := coalesce(after_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid);
  lower_time timestamptz := coalesce(since, '-infinity'::timestamptz);
begin
  perform set_config('request.jwt.claims', claims, true);
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
end;
$$;
comment on function app_private.inbox_page_as(text, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer) is
  'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path): sets the caller''s role and claims for this statement''s own transaction, then reads under RLS, newest first, with the unread count (app.notification_counters) on every row. One round trip instead of a transaction''s four: measured, the transaction''s statements cost the API more than the page. Only the API''s own role may call it: it trusts the claims it is given.';
revoke all on function app_private.inbox_page_as(text, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer)
  from public, anon, authenticated, service_role;

/*
 * Bulk: an audience test inlined into the one INSERT ... SELECT that writes a whole batch.
 */
create function app_private.in_audience(u app.users, audience jsonb) returns boolean
language sql stable
as $$
  select u.status = 'active' and (
    coalesce((audience ->> 'all')::boolean, false)
    or coalesce(audience -> 'userIds' ? u.id::text, false)
    or coalesce(audience -> 'roles' ? u.role::text, false)
  )
$$;
comment on function app_private.in_audience(app.users, jsonb) is
  'Whether a user is in a bulk audience ({ userIds?, roles?, all? }, any of them): active users only, never suspended ones. Inlinable pure SQL (no pinned search_path, see app.notification_json).';

create function app_private.write_notification_batch(target_batch_id uuid, chunk_size integer default 1000)
returns integer
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  b app.notification_batches;
  defaults jsonb;
  critical boolean;
  chunk_count integer;
begin
  select * into b from app.notification_batches where id = target_batch_id for update;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  if b.status = 'done' then
    return coalesce(b.chunks, 0);
  end if;
  update app.notification_batches set status = 'sending', started_at = coalesce(started_at, now())
  where id = b.id;
  defaults := app_private.notification_type_defaults(b.type);
  critical := b.priority = 'critical';

  -- The whole batch's inbox in one INSERT ... SELECT; a rerun (the drain crashed after commit)
  -- writes nothing twice: (batch_id, user_id) is unique.
  with decided as (
    select u.id as uid,
           'inApp' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'inApp', defaults)) as want_inbox,
           'push' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'push', defaults)) as want_push,
           'email' = any(b.channels) and u.email is not null
             and (critical or app_private.wants(p.types, b.type, 'email', defaults)) as want_email,
           case when not critical
                then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end as quiet_until
    from app.users u
    left join app.notification_preferences p on p.user_id = u.id
    where app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
  ), written as (
    insert into app.notifications (user_id, type, title, body, data, priority, batch_id, inbox)
    select d.uid, b.type, b.title, b.body, b.data, b.priority, b.id, d.want_inbox from decided d
    on conflict do nothing
    returning id, user_id
  ), pushes as (
    insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
    select w.id, 'push', dv.id, coalesce(d.quiet_until, now())
    from written w join decided d on d.uid = w.user_id join app.push_devices dv on dv.user_id = w.user_id
    where d.want_push
  )
  insert into app_private.notification_deliveries (notification_id, channel, not_before)
  select w.id, 'email', coalesce(d.quiet_until, now())
  from written w join decided d on d.uid = w.user_id
  where d.want_email;

  -- Its recipients in user-id ranges of chunk_size: one job each for events and deliveries.
  insert into app_private.notification_batch_chunks (batch_id, chunk, first_user_id, last_user_id)
  select b.id, x.chunk, (array_agg(x.user_id order by x.user_id))[1],
         (array_agg(x.user_id order by x.user_id desc))[1]
  from (
    select n.user_id, ((row_number() over (order by n.user_id)) - 1) / chunk_size as chunk
    from app.notifications n where n.batch_id = b.id
  ) x
  group by x.chunk
  on conflict do nothing;
  select count(*)::integer into chunk_count from app_private.notification_batch_chunks c where c.batch_id = b.id;
  update app.notification_batches
  set chunks = chunk_count,
      status = case when chunk_count = 0 then 'done' else 'sending' end::app.notification_batch_status,
      finished_at = case when chunk_count = 0 then now() end
  where id = b.id;
  perform app_private.enqueue_job('notifications.batch_chunk',
            jsonb_build_object('batchId', b.id, 'chunk', c.chunk), now(),
            'notifications.batch_chunk:' || b.id::text || ':' || c.chunk::text)
  from app_private.notification_batch_chunks c
  where c.batch_id = b.id and c.done_at is null;
  return chunk_count;
end;
$$;
comment on function app_private.write_notification_batch(uuid, integer) is
  'The notifications.batch job: writes a batch''s inbox in one INSERT ... SELECT over its audience (active users who existed when it was accepted), with each recipient''s preferences (the batch''s channels, then the user''s choices and quiet hours, critical bypassing them) and the push and e-mail delivery rows, then splits the recipients into user-id ranges and queues one notifications.batch_chunk job per range. Idempotent: (batch_id, user_id) is unique and chunks and jobs are keyed. security definer: it writes every recipient''s inbox.';

create function app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer)
returns uuid[]
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  c app_private.notification_batch_chunks;
begin
  update app_private.notification_batch_chunks x set announced_at = now()
  where x.batch_id = target_batch_id and x.chunk = target_chunk and x.announced_at is null
  returning * into c;
  if found then
    perform app_private.emit_event('user:' || n.user_id, 'notification.created', app.notification_json(n))
    from app.notifications n
    where n.batch_id = target_batch_id and n.user_id between c.first_user_id and c.last_user_id and n.inbox;
  else
    select * into c from app_private.notification_batch_chunks x
    where x.batch_id = target_batch_id and x.chunk = target_chunk;
    if not found then
      raise exception 'chunk not found' using errcode = 'AG404';
    end if;
  end if;
  return array(
    select distinct d.notification_id
    from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
    where n.batch_id = target_batch_id and n.user_id between c.first_user_id and c.last_user_id
      and d.status = 'queued'
  );
end;
$$;
comment on function app_private.announce_batch_chunk(uuid, integer) is
  'A batch chunk''s live events: notification.created on each recipient''s user:<id>, once (announced_at, set in the same transaction), whatever the job''s retries. Returns the chunk''s notifications that still have queued deliveries. security definer: emit_event on other users'' topics.';

create function app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  -- The batch row's lock serializes the chunks finishing together: each one's check below (a
  -- statement of its own, so a fresh snapshot) sees the others' commits, and the last one sees
  -- them all.
  perform 1 from app.notification_batches b where b.id = target_batch_id for update;
  update app_private.notification_batch_chunks x set done_at = coalesce(x.done_at, now())
  where x.batch_id = target_batch_id and x.chunk = target_chunk;
  if exists (select 1 from app_private.notification_batch_chunks x
             where x.batch_id = target_batch_id and x.done_at is null) then
    return false;
  end if;
  update app.notification_batches set status = 'done', finished_at = coalesce(finished_at, now())
  where id = target_batch_id;
  return true;
end;
$$;
comment on function app_private.finish_batch_chunk(uuid, integer) is
  'Marks a batch chunk done; the last one marks the batch done (chunks finishing at the same time take turns on the batch row''s lock, so one of them always sees all done). Returns whether the batch is done. security definer: batches are written by the server only.';

-- ---------------------------------------------------------------------------------------------
-- Policies
-- ---------------------------------------------------------------------------------------------

create policy notifications_select_own on app.notifications for select to authenticated
  using (user_id = (select auth.uid()) and inbox);
create policy notifications_update_own on app.notifications for update to authenticated
  using (user_id = (select auth.uid()) and inbox)
  with check (user_id = (select auth.uid()) and inbox);
-- No delete grant (no API role holds a table-wide delete): app.delete_notification deletes one's own.

create policy notification_counters_select_own on app.notification_counters for select
  to authenticated using (user_id = (select auth.uid()));

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
grant select on app.notification_counters to authenticated;
grant select on app.notification_preferences to authenticated;
grant insert (user_id, types, quiet_start, quiet_end, quiet_time_zone) on app.notification_preferences
  to authenticated;
grant update (types, quiet_start, quiet_end, quiet_time_zone) on app.notification_preferences
  to authenticated;
grant select (id, user_id, platform, device_name, created_at, updated_at) on app.push_devices
  to authenticated;
grant select on app.notification_batches to authenticated;
grant execute on function app.notification_json(app.notifications) to authenticated;

revoke all on app_private.notification_deliveries, app_private.notification_batch_chunks,
  app_private.message_digests_pending, app_private.message_digests
  from public, anon, authenticated, service_role;
revoke all on function app_private.notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text)
  from public, anon, authenticated, service_role;
revoke all on function app_private.notify_rows(app.notification_type, uuid[], text[], text[], jsonb[], app.notification_priority, text)
  from public, anon, authenticated, service_role;
revoke all on function app_private.claim_message_digest(uuid) from public, anon, authenticated, service_role;
revoke all on function app_private.digest_conversation(uuid, bigint) from public, anon, authenticated, service_role;
revoke all on function app_private.notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text)
  from public, anon, authenticated, service_role;


-- ---------------------------------------------------------------------------------------------
-- API functions
-- ---------------------------------------------------------------------------------------------

create function app.create_notification(
  target_user_id uuid,
  notification_type app.notification_type,
  title text,
  body text,
  data jsonb default '{}',
  priority app.notification_priority default 'normal'
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  target uuid := coalesce(target_user_id, auth.uid());
  written record;
begin
  if me is null then
    raise exception 'sign in to create notifications' using errcode = 'AG403';
  end if;
  if target <> me and not app.is_admin() then
    raise exception 'only an ADMIN notifies other users' using errcode = 'AG403';
  end if;
  if not exists (select 1 from app.users u where u.id = target) then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  select * into written
  from app_private.notify_many(array[target], notification_type, title, body, data, priority);
  return (select app.notification_json(n) || jsonb_build_object('userId', n.user_id, 'inbox', n.inbox)
          from app.notifications n where n.id = written.notification_id);
end;
$$;
comment on function app.create_notification(uuid, app.notification_type, text, text, jsonb, app.notification_priority) is
  'POST /api/notifications: a notification for oneself (target null or one''s own id), or, for an ADMIN, for anyone (AG403 otherwise; AG404 for an unknown user), through app_private.notify_many and its rules. Returns the notification with userId and inbox (false: the recipient''s preferences keep it out of their inbox). security definer: it writes through the one way in, which API roles cannot call; the caller is checked here.';
grant execute on function app.create_notification(uuid, app.notification_type, text, text, jsonb, app.notification_priority) to authenticated;

create function app.delete_notification(target_notification_id uuid) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
declare
  gone uuid;
begin
  delete from app.notifications n
  where n.id = target_notification_id and n.user_id = auth.uid() and n.inbox
  returning n.id into gone;
  if gone is null then
    raise exception 'notification not found' using errcode = 'AG404';
  end if;
  return jsonb_build_object('id', gone, 'deleted', true);
end;
$$;
comment on function app.delete_notification(uuid) is
  'DELETE /api/notifications/:id: deletes one of the caller''s own inbox notifications; anything else (another user''s, a hidden one, none) is AG404. security definer because no API role holds a table-wide delete; the ownership check is the where clause.';
grant execute on function app.delete_notification(uuid) to authenticated;

create function app.notification_preferences_document() returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  p app.notification_preferences;
begin
  if me is null then
    raise exception 'sign in to read preferences' using errcode = 'AG403';
  end if;
  select * into p from app.notification_preferences x where x.user_id = me;
  return jsonb_build_object(
    'types', (
      select jsonb_object_agg(t::text, jsonb_build_object(
        'inApp', app_private.wants(p.types, t, 'inApp', d.defaults),
        'push', app_private.wants(p.types, t, 'push', d.defaults),
        'email', app_private.wants(p.types, t, 'email', d.defaults)))
      from unnest(enum_range(null::app.notification_type)) t,
           lateral (select app_private.notification_type_defaults(t) as defaults) d
    ),
    'quietHours', case when p.quiet_start is null then null else jsonb_build_object(
      'start', to_char(p.quiet_start, 'HH24:MI'),
      'end', to_char(p.quiet_end, 'HH24:MI'),
      'timeZone', p.quiet_time_zone) end,
    'updatedAt', to_char(p.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  );
end;
$$;
comment on function app.notification_preferences_document() is
  'GET /api/notifications/preferences: the caller''s effective preferences, every type and channel (their choice, else the configured default), quiet hours or null, updatedAt (null before the first change). security definer: the defaults come from the configuration, readable by ADMINs only; it reads only the caller''s own row.';
grant execute on function app.notification_preferences_document() to authenticated;

create function app.update_notification_preferences(patch jsonb) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
declare
  me uuid := auth.uid();
  current_types jsonb;
  merged jsonb;
  quiet jsonb := patch -> 'quietHours';
  has_quiet boolean := patch ? 'quietHours';
begin
  if me is null then
    raise exception 'sign in to change preferences' using errcode = 'AG403';
  end if;
  if jsonb_typeof(patch) <> 'object' or exists (
       select 1 from jsonb_object_keys(patch) k where k not in ('types', 'quietHours')) then
    raise exception 'preferences take types and quietHours' using errcode = 'AG400';
  end if;
  if patch ? 'types' and jsonb_typeof(patch -> 'types') <> 'object' then
    raise exception 'types is an object of types' using errcode = 'AG400';
  end if;
  if has_quiet and jsonb_typeof(quiet) not in ('object', 'null') then
    raise exception 'quietHours is { start, end, timeZone } or null' using errcode = 'AG400';
  end if;
  if has_quiet and jsonb_typeof(quiet) = 'object' and (
       coalesce(quiet ->> 'start', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       or coalesce(quiet ->> 'end', '') !~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'
       or jsonb_typeof(quiet -> 'timeZone') is distinct from 'string') then
    raise exception 'quiet hours are { start: "HH:MM", end: "HH:MM", timeZone }' using errcode = 'AG400';
  end if;
  select p.types into current_types from app.notification_preferences p where p.user_id = me;
  current_types := coalesce(current_types, '{}'::jsonb);
  -- Two levels, type then channel: a patch's channels are laid over the stored ones.
  select coalesce(jsonb_object_agg(k, case
           when jsonb_typeof(patch -> 'types' -> k) = 'object'
             then coalesce(current_types -> k, '{}'::jsonb) || (patch -> 'types' -> k)
           else coalesce(patch -> 'types' -> k, current_types -> k) end), '{}'::jsonb)
  into merged
  from (select jsonb_object_keys(current_types)
        union select jsonb_object_keys(coalesce(patch -> 'types', '{}'::jsonb))) keys (k);
  insert into app.notification_preferences as p (user_id, types, quiet_start, quiet_end, quiet_time_zone)
  values (
    me, merged,
    case when has_quiet then (quiet ->> 'start')::time end,
    case when has_quiet then (quiet ->> 'end')::time end,
    case when has_quiet then quiet ->> 'timeZone' end
  )
  on conflict (user_id) do update set
    types = excluded.types,
    quiet_start = case when has_quiet then excluded.quiet_start else p.quiet_start end,
    quiet_end = case when has_quiet then excluded.quiet_end else p.quiet_end end,
    quiet_time_zone = case when has_quiet then excluded.quiet_time_zone else p.quiet_time_zone end;
  return app.notification_preferences_document();
end;
$$;
comment on function app.update_notification_preferences(jsonb) is
  'PUT /api/notifications/preferences: lays a partial document ({ types?: { TYPE?: { inApp?, push?, email? } }, quietHours?: { start, end, timeZone } | null }) over the caller''s choices and returns the whole effective document. AG400 for unknown keys, types or channels, times that are not HH:MM, an unknown time zone (the row''s trigger checks pg_timezone_names). security invoker: the caller''s own row, under RLS.';
grant execute on function app.update_notification_preferences(jsonb) to authenticated;

create function app.register_push_device(device_token text, device_platform app.push_platform, name text default null)
returns table (device_id uuid, platform app.push_platform, created_at timestamptz, created boolean)
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  me uuid := auth.uid();
  existing app.push_devices;
  device app.push_devices;
begin
  if me is null then
    raise exception 'sign in to register a device' using errcode = 'AG403';
  end if;
  if device_token is null or char_length(device_token) not between 1 and 1024 then
    raise exception 'a device token has 1 to 1024 characters' using errcode = 'AG400';
  end if;
  select * into existing from app.push_devices d where d.token = device_token for update;
  if found and existing.user_id = me then
    update app.push_devices d set platform = device_platform, device_name = coalesce(name, d.device_name)
    where d.id = existing.id returning * into device;
    return query select device.id, device.platform, device.created_at, false;
    return;
  end if;
  if found then
    -- Another user's token moves: a new row, so what was queued for them never reaches the caller.
    delete from app.push_devices d where d.id = existing.id;
  end if;
  insert into app.push_devices (user_id, token, platform, device_name)
  values (me, device_token, device_platform, name)
  on conflict (token) do nothing
  returning * into device;
  if device.id is null then
    -- A concurrent registration of the same token won; it is registered, to whoever was first.
    raise exception 'this token is being registered at the same time; try again' using errcode = 'AG409';
  end if;
  return query select device.id, device.platform, device.created_at, true;
end;
$$;
comment on function app.register_push_device(text, app.push_platform, text) is
  'POST /api/notifications/fcm/register: registers an FCM token for the caller (created true), or refreshes it when it is already theirs (created false); a token registered by another user moves to the caller as a new device (deliveries queued for the previous owner then fail as device_gone instead of reaching the caller). security definer: moving a token touches another user''s row, which RLS hides; the token itself is never returned.';
grant execute on function app.register_push_device(text, app.push_platform, text) to authenticated;

create function app.unregister_push_device(device_token text) returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  delete from app.push_devices d where d.token = device_token and d.user_id = auth.uid();
  if not found then
    raise exception 'device not found' using errcode = 'AG404';
  end if;
  return true;
end;
$$;
comment on function app.unregister_push_device(text) is
  'DELETE /api/notifications/fcm/register: removes one of the caller''s own tokens; a token that is not theirs (or unknown) is AG404, so no one learns whose a token is. security definer: no API role may delete devices directly.';
grant execute on function app.unregister_push_device(text) to authenticated;

create function app.create_notification_batch(
  audience jsonb,
  notification jsonb,
  channels text[] default array['inApp', 'push'],
  idempotency_key text default null,
  request_hash text default null
) returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_variable
declare
  me uuid := auth.uid();
  b app.notification_batches;
  recipient_count integer;
  max_recipients integer := app.config_int('notifications', 'bulkMaxRecipients');
  kind app.notification_type;
  urgency app.notification_priority;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN sends bulk notifications' using errcode = 'AG403';
  end if;
  if jsonb_typeof(audience) <> 'object'
     or not (audience ? 'userIds' or audience ? 'roles' or coalesce((audience ->> 'all')::boolean, false)) then
    raise exception 'an audience names userIds, roles or all' using errcode = 'AG400';
  end if;
  kind := (notification ->> 'type')::app.notification_type;
  urgency := coalesce(notification ->> 'priority', 'normal')::app.notification_priority;
  if char_length(coalesce(notification ->> 'title', '')) not between 1 and 200
     or char_length(coalesce(notification ->> 'body', '')) > 2000
     or jsonb_typeof(coalesce(notification -> 'data', '{}')) <> 'object'
     or octet_length(coalesce(notification -> 'data', '{}')::text) > 2048 then
    raise exception 'a notification has a title of 1 to 200 characters, a body of at most 2000 and data of at most 2048 bytes'
      using errcode = 'AG400';
  end if;
  if idempotency_key is not null then
    select * into b from app.notification_batches x
    where x.created_by = me and x.idempotency_key = idempotency_key;
    if found then
      if b.request_hash is distinct from request_hash then
        raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
      end if;
      return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', true);
    end if;
  end if;
  select count(*)::integer into recipient_count from app.users u where app_private.in_audience(u, audience);
  if recipient_count > max_recipients then
    raise exception 'this audience has % recipients; a batch has at most %', recipient_count, max_recipients
      using errcode = 'AG422';
  end if;
  insert into app.notification_batches as x
    (created_by, idempotency_key, request_hash, audience, type, title, body, data, priority, channels, recipients)
  values (
    me, idempotency_key, request_hash, audience, kind, notification ->> 'title',
    coalesce(notification ->> 'body', ''), coalesce(notification -> 'data', '{}'), urgency,
    array(select distinct c from unnest(channels) c order by c), recipient_count
  )
  on conflict on constraint notification_batches_idempotency_key do nothing
  returning * into b;
  if b.id is null then
    -- The same key at the same time: the first request's batch, once it committed.
    select * into b from app.notification_batches x
    where x.created_by = me and x.idempotency_key = idempotency_key;
    if b.request_hash is distinct from request_hash then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', true);
  end if;
  perform app_private.enqueue_job('notifications.batch', jsonb_build_object('batchId', b.id), now(),
    'notifications.batch:' || b.id::text);
  return jsonb_build_object('id', b.id, 'status', b.status, 'recipients', b.recipients, 'replayed', false);
end;
$$;
comment on function app.create_notification_batch(jsonb, jsonb, text[], text, text) is
  'POST /api/notifications/bulk: accepts a batch (ADMIN only, AG403 otherwise) for an audience ({ userIds?, roles?, all? }: active users only) and queues its notifications.batch job; returns { id, status, recipients, replayed }. The same Idempotency-Key with the same request returns the same batch (replayed), with another request AG409. AG422 over notifications.bulkMaxRecipients. security definer: batches and the job queue are written by the server only; the caller is checked here.';
grant execute on function app.create_notification_batch(jsonb, jsonb, text[], text, text) to authenticated;

create function app.notification_batch_progress(target_batch_id uuid) returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  b app.notification_batches;
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads bulk sends' using errcode = 'AG403';
  end if;
  select * into b from app.notification_batches x where x.id = target_batch_id;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  select jsonb_build_object(
    'id', b.id,
    'status', b.status,
    'recipients', b.recipients,
    'created', (select count(*) from app.notifications n where n.batch_id = b.id and n.inbox),
    'pushSent', count(*) filter (where d.channel = 'push' and d.status = 'sent'),
    'pushFailed', count(*) filter (where d.channel = 'push' and d.status in ('failed', 'pruned')),
    'emailSent', count(*) filter (where d.channel = 'email' and d.status = 'sent'),
    'createdAt', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'finishedAt', to_char(b.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  ) into result
  from app.notifications n
  join app_private.notification_deliveries d on d.notification_id = n.id
  where n.batch_id = b.id;
  return result;
end;
$$;
comment on function app.notification_batch_progress(uuid) is
  'GET /api/notifications/bulk/:id: a batch''s progress counted from the data (inbox rows written, pushes sent and failed, e-mails sent). ADMIN only (AG403); AG404 for an unknown batch. security definer: delivery rows are server-only.';
grant execute on function app.notification_batch_progress(uuid) to authenticated;

create function app.notification_analytics(
  range_from timestamptz,
  range_to timestamptz,
  bucket text default 'day',
  only_type app.notification_type default null
) returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('hour', 'day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  if range_from >= range_to then
    raise exception 'from must be before to' using errcode = 'AG400';
  end if;
  with created as (
    select n.type, n.created_at, n.read_at
    from app.notifications n
    where n.created_at >= range_from and n.created_at < range_to and n.inbox
      and (only_type is null or n.type = only_type)
  ), finished as (
    select n.type, d.channel, d.status, d.finished_at
    from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    where d.finished_at >= range_from and d.finished_at < range_to
      and (only_type is null or n.type = only_type)
  ), created_by as (
    select c.type, date_trunc(bucket, c.created_at, 'UTC') as t,
           count(*) as created, count(*) filter (where c.read_at is not null) as read
    from created c group by 1, 2
  ), finished_by as (
    select f.type, date_trunc(bucket, f.finished_at, 'UTC') as t,
           count(*) filter (where f.channel = 'push' and f.status = 'sent') as push_sent,
           count(*) filter (where f.channel = 'push' and f.status in ('failed', 'pruned')) as push_failed,
           count(*) filter (where f.channel = 'email' and f.status = 'sent') as email_sent,
           count(*) filter (where f.channel = 'email' and f.status = 'failed') as email_failed
    from finished f group by 1, 2
  ), buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ), kinds as (
    select k from unnest(enum_range(null::app.notification_type)) k
    where only_type is null or k = only_type
  ), totals as (
    select coalesce((select sum(created) from created_by), 0)::bigint as created,
           coalesce((select sum(read) from created_by), 0)::bigint as read,
           coalesce((select sum(push_sent) from finished_by), 0)::bigint as push_sent,
           coalesce((select sum(push_failed) from finished_by), 0)::bigint as push_failed,
           coalesce((select sum(email_sent) from finished_by), 0)::bigint as email_sent,
           coalesce((select sum(email_failed) from finished_by), 0)::bigint as email_failed,
           (select percentile_cont(0.5) within group (order by extract(epoch from c.read_at - c.created_at))
              from created c where c.read_at is not null) as median_read
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'created', t.created, 'read', t.read, 'pushSent', t.push_sent, 'pushDelivered', t.push_sent,
      'pushFailed', t.push_failed, 'emailSent', t.email_sent),
    'byType', (
      select jsonb_agg(jsonb_build_object(
        'type', k.k,
        'created', coalesce((select sum(c.created) from created_by c where c.type = k.k), 0),
        'read', coalesce((select sum(c.read) from created_by c where c.type = k.k), 0),
        'pushSent', coalesce((select sum(f.push_sent) from finished_by f where f.type = k.k), 0),
        'pushFailed', coalesce((select sum(f.push_failed) from finished_by f where f.type = k.k), 0)
      ) order by k.k)
      from kinds k
    ),
    'byChannel', jsonb_build_array(
      jsonb_build_object('channel', 'inApp', 'sent', t.created, 'failed', 0),
      jsonb_build_object('channel', 'push', 'sent', t.push_sent, 'failed', t.push_failed),
      jsonb_build_object('channel', 'email', 'sent', t.email_sent, 'failed', t.email_failed)
    ),
    'series', (
      select jsonb_agg(jsonb_build_object(
        't', to_char(b.t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'created', coalesce((select sum(c.created) from created_by c where c.t = b.t), 0),
        'read', coalesce((select sum(c.read) from created_by c where c.t = b.t), 0),
        'pushSent', coalesce((select sum(f.push_sent) from finished_by f where f.t = b.t), 0),
        'pushFailed', coalesce((select sum(f.push_failed) from finished_by f where f.t = b.t), 0)
      ) order by b.t)
      from buckets b
    ),
    'readRate', case when t.created = 0 then 0 else round(t.read::numeric / t.created, 4) end,
    'medianSecondsToRead', case when t.median_read is null then null else round(t.median_read::numeric, 3) end
  ) into result
  from totals t;
  return result;
end;
$$;
comment on function app.notification_analytics(timestamptz, timestamptz, text, app.notification_type) is
  'GET /api/notifications/analytics and the notifications section of /api/admin/analytics: from the data, in [range_from, range_to). created and read count inbox notifications created in the range (read: those of them read since, so readRate = read / created and the median time to read is theirs); push and e-mail count deliveries by the time of their outcome (pushFailed includes pruned tokens; pushDelivered equals pushSent: FCM''s HTTP v1 API reports acceptance, not receipt). byType, byChannel (inApp, push, email) and a zero-filled series per hour, day, week or month. ADMIN only (42501). security definer: ADMINs cannot read other users'' notifications or any delivery row; it returns counts only.';
grant execute on function app.notification_analytics(timestamptz, timestamptz, text, app.notification_type) to authenticated;

revoke execute on all functions in schema app, app_private from public;
