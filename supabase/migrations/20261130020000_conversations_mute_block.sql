-- Replaces functions of other domains:
--   app_private.notify_rows (notifications), app_private.take_deliveries (notifications).
/*
 * Mute and block (the contract's "Community" section).
 *
 * - app.conversation_settings: a participant's own settings for one conversation; for now its
 *   mute (`muted_until`: 'infinity' until unmuted, else until that time). The row goes with the
 *   participant (a foreign key to the participant row, on delete cascade): leaving forgets it.
 *   Written by app.set_conversation_mute; read by its owner only.
 * - app.user_blocks: who blocks whom. Read by the blocker (and ADMINs) only: the blocked person
 *   never sees a row of it. Written only by app.set_block (an active user, never oneself).
 * - Blocks are enforced by the database, on every insert path: a direct conversation the blocked
 *   person starts with the blocker (trigger conversations_guard_block: before the insert, so it
 *   also refuses the existing conversation's `on conflict` return), and adding the blocker to a
 *   group (participants_guard_block, also at a group's creation) raise AG403 with hint `blocked`.
 *   Sending into a direct conversation with the blocker is refused by the messages migration
 *   (20261130020100_messages_mentions.sql, trigger messages_guard_block).
 * - The one notification path, app_private.notify_rows, decides per recipient: a notification
 *   whose data names a conversationId the recipient muted gets no push and no e-mail (the inbox
 *   row, its event and the unread count still move); one with data.kind = "mention" is not
 *   written at all when the recipient muted that conversation or blocks data.senderId.
 *   app_private.take_deliveries checks the mute again at delivery (muted since: failed as
 *   `conversation_muted`), as it does preferences.
 *
 * Nothing destructive: two tables, their indexes, triggers and policies are added, two functions
 * of the notifications domain are replaced with the same signatures.
 */

-- Tables ---------------------------------------------------------------------------------------

create table app.conversation_settings (
  conversation_id uuid not null,
  user_id uuid not null,
  muted_until timestamptz,
  updated_at timestamptz not null default now(),
  primary key (user_id, conversation_id),
  foreign key (conversation_id, user_id)
    references app.conversation_participants (conversation_id, user_id) on delete cascade
);
comment on table app.conversation_settings is
  'A participant''s own settings for one conversation: muted_until (''infinity'' until unmuted; a past time means not muted). While muted, the conversation''s notifications are not pushed or mailed and mentions notify nothing (app_private.notify_rows). Gone with the participant row (leaving).';

create table app.user_blocks (
  blocker_id uuid not null references app.users (id) on delete cascade,
  blocked_id uuid not null references app.users (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (blocker_id, blocked_id),
  check (blocker_id <> blocked_id)
);
comment on table app.user_blocks is
  'Who blocks whom (written only by app.set_block). The blocked person cannot start a direct conversation with the blocker, send into one, or add them to a group (AG403 blocked, by triggers), and their mentions of the blocker notify nothing; in shared groups their messages arrive marked senderBlocked for the blocker. Visible to the blocker and ADMINs only, never to the blocked person.';

-- Indexes --------------------------------------------------------------------------------------

create index conversation_settings_conversation_id_idx
  on app.conversation_settings (conversation_id, user_id);
-- "Is this sender blocked by anyone": one probe that is empty for nearly every sender.
create index user_blocks_blocked_id_idx on app.user_blocks (blocked_id, blocker_id);
-- The blocker's list, newest first.
create index user_blocks_blocker_id_created_at_idx
  on app.user_blocks (blocker_id, created_at desc, blocked_id desc);

-- Triggers -------------------------------------------------------------------------------------

create function app_private.guard_direct_block() returns trigger
language plpgsql security definer
set search_path = ''
as $$
declare
  other uuid;
begin
  other := case when split_part(new.direct_key, ':', 1)::uuid = new.created_by
                then split_part(new.direct_key, ':', 2)::uuid
                else split_part(new.direct_key, ':', 1)::uuid end;
  if exists (select 1 from app.user_blocks b where b.blocker_id = other and b.blocked_id = new.created_by) then
    raise exception 'you cannot message this person' using errcode = 'AG403', hint = 'blocked';
  end if;
  return new;
end;
$$;
comment on function app_private.guard_direct_block() is
  'Before a direct conversation is inserted (also when it exists and the insert meets its direct_key: a before trigger runs first): refused with AG403 hint blocked when the other person blocks its creator. security definer: the blocked person cannot read the block.';

create function app_private.guard_participant_block() returns trigger
language plpgsql security definer
set search_path = ''
as $$
begin
  if exists (select 1 from app.user_blocks b where b.blocker_id = new.user_id and b.blocked_id = new.added_by)
     and not exists (
       select 1 from app.conversation_participants p
       where p.conversation_id = new.conversation_id and p.user_id = new.user_id
     ) then
    raise exception 'you cannot add this person' using errcode = 'AG403', hint = 'blocked';
  end if;
  return new;
end;
$$;
comment on function app_private.guard_participant_block() is
  'Before someone is added to a conversation by another: refused with AG403 hint blocked when they block the person adding them (a group''s creation and app.add_participants alike). Someone already in is skipped by the insert as before, so re-adding a member reveals nothing. security definer: the adder cannot read the block.';

create trigger conversations_guard_block before insert on app.conversations
  for each row when (new.type = 'direct') execute function app_private.guard_direct_block();
create trigger participants_guard_block before insert on app.conversation_participants
  for each row when (new.added_by is not null and new.added_by <> new.user_id)
  execute function app_private.guard_participant_block();

alter table app.conversation_settings enable row level security;
alter table app.user_blocks enable row level security;

-- Policies and grants --------------------------------------------------------------------------

create policy conversation_settings_select_self on app.conversation_settings for select to authenticated
  using (user_id = (select auth.uid()));

create policy user_blocks_select_blocker_or_admin on app.user_blocks for select to authenticated
  using (blocker_id = (select auth.uid()) or (select app.is_admin()));

grant select on app.conversation_settings to authenticated;
-- Written only through app.set_block (an active user, never oneself): no write grants.
grant select on app.user_blocks to authenticated;

-- API functions --------------------------------------------------------------------------------

create function app.conversation_mute(target_conversation_id uuid) returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  until timestamptz;
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  select s.muted_until into until from app.conversation_settings s
  where s.user_id = (select auth.uid()) and s.conversation_id = target_conversation_id
    and s.muted_until > now();
  return jsonb_build_object(
    'conversationId', target_conversation_id,
    'muted', until is not null,
    'mutedUntil', case when until is not null and until <> 'infinity'
                       then to_char(until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') end);
end;
$$;
comment on function app.conversation_mute(uuid) is
  'The caller''s mute of one conversation, { conversationId, muted, mutedUntil } (mutedUntil null when muted until unmuted, or not muted; a mute whose time passed is not muted). AG404 for a conversation the caller is not in. security definer: one participant lookup, as app.is_participant; it reads the caller''s own row only.';

create function app.set_conversation_mute(target_conversation_id uuid, mute boolean, until timestamptz)
returns jsonb
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if mute is false then
    if until is not null then
      raise exception 'mutedUntil goes with muted: true' using errcode = 'AG400';
    end if;
    delete from app.conversation_settings s
    where s.user_id = me and s.conversation_id = target_conversation_id;
  elsif mute or until is not null then
    if until is not null and until <= now() then
      raise exception 'mutedUntil is a time in the future' using errcode = 'AG422';
    end if;
    insert into app.conversation_settings as s (conversation_id, user_id, muted_until)
    values (target_conversation_id, me, coalesce(until, 'infinity'))
    on conflict (user_id, conversation_id)
    do update set muted_until = excluded.muted_until, updated_at = now();
  end if;
  return app.conversation_mute(target_conversation_id);
end;
$$;
comment on function app.set_conversation_mute(uuid, boolean, timestamptz) is
  'PUT /api/conversations/{id}/settings: mute true mutes until unmuted, with until (a future time, else AG422) until then, until alone the same; mute false clears both (AG400 with until); neither changes nothing. Returns app.conversation_mute. AG404 for a conversation the caller is not in. security definer: the settings table has no user write grants; the caller writes only their own row.';

create function app.set_block(target uuid, block boolean) returns jsonb
language plpgsql security definer
set search_path = ''
as $$
declare
  me uuid := auth.uid();
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'blocking needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  if target = me then
    raise exception 'you cannot block yourself' using errcode = 'AG422';
  end if;
  if block then
    if not exists (select 1 from app.users u where u.id = target and u.status = 'active') then
      raise exception 'user not found' using errcode = 'AG404';
    end if;
    insert into app.user_blocks (blocker_id, blocked_id) values (me, target) on conflict do nothing;
  else
    delete from app.user_blocks b where b.blocker_id = me and b.blocked_id = target;
  end if;
  return jsonb_build_object('userId', target, 'blocked', block);
end;
$$;
comment on function app.set_block(uuid, boolean) is
  'PUT (block true) and DELETE /api/users/{id}/block: blocks an active user (AG404 for one who is not, as their profile is; AG422 for oneself) or unblocks anyone; idempotent both ways. Nothing is sent to the blocked person. security definer: it checks that the user is active, which app.users shows no one else, and writes app.user_blocks, which has no user write grants (the caller''s own rows only).';

create function app.list_blocked(after_at timestamptz, after_id uuid, max_rows integer)
returns table (id uuid, name text, image text, blocked_at text)
language plpgsql stable security definer
set search_path = ''
as $$
begin
  if not app.has_role('SUBSCRIBER') then
    raise exception 'blocking needs the SUBSCRIBER role' using errcode = '42501';
  end if;
  return query
    select u.id, u.name, u.image, b.created_at::text
    from app.user_blocks b join app.users u on u.id = b.blocked_id
    where b.blocker_id = (select auth.uid())
      and (after_id is null or (b.created_at, b.blocked_id) < (after_at, after_id))
    order by b.created_at desc, b.blocked_id desc
    limit least(greatest(coalesce(max_rows, 50), 1), 201);
end;
$$;
comment on function app.list_blocked(timestamptz, uuid, integer) is
  'GET /api/users/blocked: the people the caller blocks (id, name, image; suspended ones too, so they can be unblocked), newest block first, in keyset pages after (after_at, after_id). security definer: app.users shows a user only their own row; public fields only.';

grant execute on function app.conversation_mute(uuid) to authenticated;
grant execute on function app.set_conversation_mute(uuid, boolean, timestamptz) to authenticated;
grant execute on function app.set_block(uuid, boolean) to authenticated;
grant execute on function app.list_blocked(timestamptz, uuid, integer) to authenticated;

-- The one notification path: mutes and blocks ---------------------------------------------------

create or replace function app_private.notify_rows(
  notification_type app.notification_type, recipients uuid[], titles text[], bodies text[],
  datas jsonb[], priority app.notification_priority default 'normal', collapse_key text default null
) returns table (recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
language plpgsql security definer
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
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
    ), judged as (
      -- Mutes and blocks, here and nowhere else: a conversation the recipient muted (data names
      -- it; compared as text, so data that is not a uuid simply matches nothing) and a sender
      -- the recipient blocks (a mention's data.senderId).
      select g.*,
             exists (select 1 from app.conversation_settings s
                     where s.user_id = g.uid and s.conversation_id::text = g.data ->> 'conversationId'
                       and s.muted_until > now()) as muted,
             (g.data ->> 'kind') is not distinct from 'mention' and exists (
               select 1 from app.user_blocks b
               where b.blocker_id = g.uid and b.blocked_id::text = g.data ->> 'senderId') as blocks_sender
      from given g
    ), decided as (
      select u.id as uid, g.title, g.body, g.data,
             critical or app_private.wants(p.types, notification_type, 'inApp', defaults) as want_inbox,
             (critical or not g.muted)
               and (critical or app_private.wants(p.types, notification_type, 'push', defaults)) as want_push,
             -- No e-mail for people without an address (wallet and some OpenID sign-ins).
             u.email is not null and (critical or not g.muted)
               and (critical or app_private.wants(p.types, notification_type, 'email', defaults)) as want_email,
             case when not critical
                  then app_private.quiet_until(p.quiet_start, p.quiet_end, p.quiet_time_zone, now()) end
               as quiet_until
      from judged g
      join app.users u on u.id = g.uid
      left join app.notification_preferences p on p.user_id = u.id
      -- A mention is not written at all for a muted conversation or a blocked sender.
      -- (`is not distinct from`: data without a kind is not a mention, never null here.)
      where not ((g.data ->> 'kind') is not distinct from 'mention' and (g.muted or g.blocks_sender))
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
  'THE way notifications are written (notify and notify_many call it), for any number of recipients in one statement, each with its own title, body and data. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences, quiet hours and mutes. Mutes and blocks are decided here: a notification whose data.conversationId the recipient muted (app.conversation_settings) gets no push or e-mail (its inbox row, event and count still move); a mention (data.kind = "mention") of a muted conversation or from a sender the recipient blocks (data.senderId, app.user_blocks) is not written at all. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. Unknown recipients are skipped. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

create or replace function app_private.take_deliveries(notification_ids uuid[], max_rows integer, tried_ids bigint[])
returns table (
  delivery_id bigint, attempt_token uuid, channel app_private.delivery_channel, device_token text,
  platform app.push_platform, email text, notification jsonb, collapse_key text
)
language plpgsql
set search_path = ''
set plan_cache_mode = 'force_generic_plan'
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
  -- device unregistered since, the conversation muted since; and quiet hours that began since
  -- hold the row back again.
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
             -- The same mute as app_private.notify_rows decides with.
             when n.priority <> 'critical' and exists (
                    select 1 from app.conversation_settings s
                    where s.user_id = n.user_id and s.conversation_id::text = n.data ->> 'conversationId'
                      and s.muted_until > now()) then 'conversation_muted'
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

  -- At most max_rows: what the caller sends now. The rest stays queued and unclaimed, so an
  -- attempt that dies costs only the rows it had in flight (they fail as outcome_unknown above,
  -- at the next call); the others are sent by the next attempt. tried_ids: the rows this
  -- attempt already tried and put back for a retry, not taken again before the job's retry.
  return query
  with claimed as (
    update app_private.notification_deliveries d
    set attempts = d.attempts + 1, in_flight_since = now(), in_flight_token = gen_random_uuid()
    where d.id in (
      select x.id from app_private.notification_deliveries x
      where x.notification_id = any(notification_ids) and x.status = 'queued' and x.not_before <= now()
        and x.in_flight_since is null and x.id <> all(coalesce(tried_ids, '{}'))
      order by x.id
      limit greatest(max_rows, 0)
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
comment on function app_private.take_deliveries(uuid[], integer, bigint[]) is
  'Claims at most max_rows due deliveries of some notifications (except tried_ids, the rows this attempt already tried and put back for a retry) for one attempt (attempts + 1, in_flight_since, a fresh attempt token) and returns what sending needs (device token and platform, e-mail address, the notification); the caller sends them, records them (record_deliveries) and calls again until none is returned, so a crash costs only the rows in flight. Before that: rows an interrupted attempt left in flight fail as outcome_unknown (never sent twice; the caller records every slice before it takes the next, so its own rows are never in flight here); preferences are checked again (a channel turned off since, a suspended recipient, a device gone, the notification''s conversation muted since: failed with that code); quiet hours that began since hold rows back, with a notifications.deliver job queued for when they end. Server only (the job''s connection).';

revoke execute on all functions in schema app, app_private from public;
