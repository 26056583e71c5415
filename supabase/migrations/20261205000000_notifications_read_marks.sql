-- Replaces functions of other domains:
--   app.export_account_notifications (signin), app_private.account_export_notifications (signin).
/*
 * Read-all in constant time (issue 30, docs/notifications.md "Read-all"). Marking read rewrote
 * every unread row: read_at is in the predicates of the unread index and of the collapse key, so
 * no update of it is HOT, about 30 µs a row on this machine with every trigger off: 158 to 266 ms
 * for 4,949 unread at the growth benchmark's large size, seconds for the 50,000 of the review.
 *
 * Now a read-all of more than a few hundred rows writes one row, a mark: "everything of this
 * user's inbox created up to read_to was read at read_at" (app.notification_read_marks), zeroes
 * the counter, sends one notification.read_all event and queues a job
 * (notifications.read_marks) that writes read_at into the covered rows a batch at a time
 * (app_private.apply_read_marks) and then drops the mark. Until then every reader treats a
 * covered row as read at the mark's time (app.notification_read_at): the list, its unread
 * filter (which starts after the newest mark in the unread index), the search, the events, the
 * export, marking one read, deletion's counter, and a collapse key (a covered row is written
 * down as read first, so the new notification is a row of its own).
 *
 * Exactness: the mark covers creation times, so no row created by a transaction the read-all
 * could not see may be older than its mark. Writers (app_private.notify_rows and
 * write_batch_chunk) now lock their recipients' rows of app_private.notification_write_gates and
 * stamp created_at with the clock after that; the read-all locks its row before it reads the
 * newest unread row. A row is thus either committed and visible to the
 * read-all, or created after it committed (tests/notifications/read-marks.test.ts races them,
 * with a collapse key and readers too: no deadlock).
 *
 * Tables touched: app.notification_read_marks and app_private.notification_write_gates (new). Functions replaced: notification_json,
 * guard_notification_read, notifications_read_events, notification_deleted_event,
 * conversation_read_notifications, notify_rows, write_batch_chunk, inbox_page_for_session,
 * inbox_search_ids, export_account_notifications, account_export_notifications.
 */

create table app.notification_read_marks (
  user_id uuid not null references app.users (id) on delete cascade,
  read_to timestamptz not null,
  read_at timestamptz not null,
  primary key (user_id, read_to)
);

comment on table app.notification_read_marks is 'Pending read-alls: each row says that every inbox notification of user_id created up to read_to was read at read_at. Written by app.mark_all_notifications_read instead of updating every unread row (one row whatever the inbox), removed by app_private.apply_read_marks once it has written read_at into the rows it covers. A row is covered by the earliest mark with read_to at or after its created_at (app.notification_read_at). Users read their own (readers under RLS compute read times from them); only the server writes.';

alter table app.notification_read_marks enable row level security;

create policy notification_read_marks_select_own on app.notification_read_marks
  for select to authenticated using (user_id = (select auth.uid()));

grant select on app.notification_read_marks to authenticated;

create table app_private.notification_write_gates (
  user_id uuid primary key references app.users (id) on delete cascade
);

comment on table app_private.notification_write_gates is 'One row per user who has been notified: the lock that keeps a read-all''s mark exact. Writers of notifications (app_private.notify_rows, write_batch_chunk) lock their recipients'' rows (FOR UPDATE, in user order) before they stamp created_at and hold them until they commit; a read-all that writes a mark locks its row too, so it waits for every row stamped before it and every later row is stamped after its commit. Exclusive, not shared: a read-all waiting behind a stream of shared lockers was never let in (row locks queue only conflicting requests), and exclusive requests queue in order. Writers of one user thus take turns, as they already did at the counter. Nothing else touches these rows: the counters (app.notification_counters) would do, but marking read updates them, and a reader queued behind a waiting read-all while a collapse waited for the reader''s row deadlocked (seen in tests/notifications/read-marks.test.ts). No grants: server only.';

alter table app_private.notification_write_gates enable row level security;
revoke all on app_private.notification_write_gates from anon, authenticated, service_role;

insert into app_private.notification_write_gates (user_id)
select c.user_id from app.notification_counters c;

create function app.notification_read_at(n app.notifications) returns timestamptz
    language sql stable
    set search_path to ''
    as $$
  select coalesce(n.read_at, case when n.inbox then (
    select m.read_at from app.notification_read_marks m
    where m.user_id = n.user_id and m.read_to >= n.created_at
    order by m.read_to limit 1) end)
$$;

comment on function app.notification_read_at(n app.notifications) is 'When a notification was read: its read_at, else the time of the earliest pending read-all that covers it (app.notification_read_marks), else null (unread). Every reader of the read state goes through it or its condition written out (created_at up to the newest mark). The caller''s rights: under RLS a user sees their own marks. Not inlinable (a subquery), so its search_path is pinned; a call costs about 4 µs, and the list calls it only for the rows up to the newest mark.';

revoke all on function app.notification_read_at(n app.notifications) from public;
grant execute on function app.notification_read_at(n app.notifications) to authenticated;


create or replace function app.notification_json(n app.notifications) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', n.id,
    'type', n.type,
    'title', n.title,
    'body', n.body,
    'data', n.data,
    'priority', n.priority,
    'readAt', to_char(app.notification_read_at(n) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;

comment on function app.notification_json(n app.notifications) is 'The notification as the API and the live events show it (readAt through app.notification_read_at, so a notification a read-all covered is read at that read-all''s time). Inlinable SQL with no pinned search_path on purpose, as app.message_object: it runs with the caller''s rights.';

create or replace function app_private.guard_notification_read() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  -- (The `role` setting, not current_user: security definer callers keep the caller's setting.)
  if current_setting('role', true) in ('anon', 'authenticated') then
    if old.read_at is not null then
      new.read_at := old.read_at;
    elsif new.read_at is not null then
      -- A read-all covering the row read it then (app.notification_read_at).
      new.read_at := coalesce(app.notification_read_at(old), now());
    end if;
  end if;
  return new;
end;
$$;

comment on function app_private.guard_notification_read() is 'Users only mark notifications read: the time is the server''s (no backdating into the read-time figures), or the time of the read-all that already covers the row (app.notification_read_marks), and a read notification stays read. Fires only when read_at is in the update.';

create or replace function app_private.notifications_read_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  r record;
begin
  -- Most updates read nothing (a collapse folding a message in): out at once.
  if not exists (select 1 from after_rows n where n.read_at is not null and n.inbox) then
    return null;
  end if;
  -- EXECUTE: planned for this statement's row counts. A cached plan, made when the first
  -- statement of the session read one row, joined 5,000 rows by a nested loop (25 million
  -- comparisons: 45 s instead of 1).
  for r in execute $q$
    with became as (
      select n.user_id, n.id, n.read_at, n.created_at
      from after_rows n join before_rows o on o.id = n.id
      where o.read_at is null and n.read_at is not null and n.inbox
        -- A row a read-all covered was counted and announced by the read-all (its mark).
        and not exists (select 1 from app.notification_read_marks m
                        where m.user_id = n.user_id and m.read_to >= n.created_at)
    ), per_user as (
      select b.user_id, count(*)::integer as n, max(b.read_at) as read_at,
             max(b.created_at) as up_to, (array_agg(b.id))[1] as one_id
      from became b group by b.user_id
    ), counted as (
      update app.notification_counters c set unread = greatest(c.unread - p.n, 0)
      from per_user p where c.user_id = p.user_id
      returning c.user_id, c.unread
    )
    select p.user_id, p.n, p.read_at, p.up_to, p.one_id, coalesce(c.unread, 0) as unread
    from per_user p left join counted c on c.user_id = p.user_id
    order by p.user_id
  $q$
  loop
    if r.n = 1 then
      perform app_private.emit_event('user:' || r.user_id, 'notification.read',
        (select app.notification_json(n) from app.notifications n where n.id = r.one_id));
    else
      perform app_private.emit_event('user:' || r.user_id, 'notification.read_all',
        jsonb_build_object('count', r.n,
                           'readAt', to_char(r.read_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'upTo', to_char(r.up_to at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           'unreadCount', r.unread));
    end if;
  end loop;
  return null;
end;
$_$;

comment on function app_private.notifications_read_events() is 'After any update of notifications (a statement trigger with its before and after rows): the inbox rows it made read leave their users'' unread counters in one update, and each user gets one event: notification.read (the notification) when one was read, notification.read_all { count, readAt, upTo (the newest read row''s createdAt), unreadCount } when more were (read-all). Rows a pending read-all covers (app.notification_read_marks) are skipped: app.mark_all_notifications_read counted and announced them, and app_private.apply_read_marks only writes down their read_at. One event per statement instead of one per row: read-all of 50,000 wrote 50,000 events. security definer: the counters and the event log are written by the server only.';

create or replace function app_private.notification_deleted_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if app.notification_read_at(old) is null then
    update app.notification_counters c set unread = c.unread - 1
    where c.user_id = old.user_id and c.unread > 0;
  end if;
  perform app_private.emit_event('user:' || old.user_id, 'notification.deleted', app.notification_json(old));
  return null;
end;
$$;

comment on function app_private.notification_deleted_event() is 'When an inbox notification is deleted: one unread fewer if it was unread (not read, nor covered by a read-all: app.notification_read_at), and notification.deleted on user:<id>. security definer as notification_read_event.';

create or replace function app_private.conversation_read_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app.notifications n set read_at = coalesce(app.notification_read_at(n), now())
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

comment on function app_private.conversation_read_notifications() is 'Reading a conversation up to the latest message its MESSAGE notification tells of marks that notification read (and notification.read goes out); a read mark short of it leaves it unread; one a read-all already covers is written down with the read-all''s time (no second event). security definer: notifications are updated by their owner only through RLS, and this runs on the participant row''s update.';

create or replace function app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
declare
  defaults jsonb := app_private.notification_type_defaults(notification_type);
  critical boolean := priority = 'critical';
  r record;
  deliveries integer;
  stamp timestamptz;
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
  -- The recipients' write gates, in user order, before the creation time: a read-all that
  -- writes a mark (app.mark_all_notifications_read) takes its gate too, so it waits for the rows
  -- stamped before it and every later row is stamped after its commit, newer than its mark.
  -- Only writers and read-alls touch the gates (see its table comment).
  insert into app_private.notification_write_gates (user_id)
  select u.id from app.users u where u.id = any(recipients) order by u.id
  on conflict (user_id) do nothing;
  perform 1 from app_private.notification_write_gates g
  where g.user_id = any(recipients) order by g.user_id for update;
  stamp := clock_timestamp();
  -- A collapse folds into the unread row with its key; one a pending read-all covers is read,
  -- so it is written down as read first and the notification is new.
  if notify_rows.collapse_key is not null then
    update app.notifications n set read_at = app.notification_read_at(n)
    where n.user_id = any(recipients) and n.collapse_key = notify_rows.collapse_key
      and n.read_at is null and app.notification_read_at(n) is not null;
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
      insert into app.notifications as n (user_id, type, title, body, data, priority, collapse_key, inbox, created_at)
      select d.uid, notification_type, d.title, d.body, d.data,
             notify_rows.priority, notify_rows.collapse_key, d.want_inbox, stamp
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

comment on function app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) is 'THE way notifications are written (notify and notify_many call it), for any number of recipients in one statement, each with its own title, body and data. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences, quiet hours and mutes. Mutes and blocks are decided here: a notification whose data.conversationId the recipient muted (app.conversation_settings) gets no push or e-mail (its inbox row, event and count still move); a mention (data.kind = "mention") of a muted conversation or from a sender the recipient blocks (data.senderId, app.user_blocks) is not written at all. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. Each recipient''s write gate (app_private.notification_write_gates) is taken first, in user order, and the rows'' created_at is the clock after that (see app.mark_all_notifications_read); a collapse row a pending read-all covers is written down as read first, so the notification is a new row. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. Unknown recipients are skipped. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

create or replace function app_private.write_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  b app.notification_batches;
  c app_private.notification_batch_chunks;
  defaults jsonb;
  critical boolean;
  shown integer;
  total integer;
  stamp timestamptz;
begin
  select * into c from app_private.notification_batch_chunks x
  where x.batch_id = target_batch_id and x.chunk = target_chunk for update;
  if not found then
    raise exception 'chunk not found' using errcode = 'AG404';
  end if;
  if c.written_at is not null then
    return 0;
  end if;
  select * into b from app.notification_batches x where x.id = target_batch_id;
  defaults := app_private.notification_type_defaults(b.type);
  critical := b.priority = 'critical';
  -- The recipients' write gates, then the creation time (as app_private.notify_rows).
  insert into app_private.notification_write_gates (user_id)
  select u.id from app.users u
  where u.id between c.first_user_id and c.last_user_id
    and app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
  order by u.id
  on conflict (user_id) do nothing;
  perform 1 from app_private.notification_write_gates g
  where g.user_id between c.first_user_id and c.last_user_id order by g.user_id for update;
  stamp := clock_timestamp();
  -- (batch_id, user_id) is unique: rows a batch of an earlier release wrote are not written again.
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
    where u.id between c.first_user_id and c.last_user_id
      and app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
  ), written as (
    insert into app.notifications (user_id, type, title, body, data, priority, batch_id, inbox, created_at)
    select d.uid, b.type, b.title, b.body, b.data, b.priority, b.id, d.want_inbox, stamp from decided d
    on conflict do nothing
    returning id, user_id, inbox
  ), pushes as (
    insert into app_private.notification_deliveries (notification_id, channel, device_id, not_before)
    select w.id, 'push', dv.id, coalesce(d.quiet_until, now())
    from written w join decided d on d.uid = w.user_id join app.push_devices dv on dv.user_id = w.user_id
    where d.want_push
  ), emails as (
    insert into app_private.notification_deliveries (notification_id, channel, not_before)
    select w.id, 'email', coalesce(d.quiet_until, now())
    from written w join decided d on d.uid = w.user_id
    where d.want_email
  )
  select count(*) filter (where w.inbox)::integer, count(*)::integer into shown, total from written w;
  update app_private.notification_batch_chunks x set written_at = now(), recipients = total
  where x.batch_id = target_batch_id and x.chunk = target_chunk;
  update app.notification_batches x set written = x.written + shown where x.id = target_batch_id;
  return total;
end;
$$;

comment on function app_private.write_batch_chunk(target_batch_id uuid, target_chunk integer) is 'First step of a notifications.batch_chunk job, in a transaction of its own: writes the chunk''s recipients'' notifications (the batch''s channels, then each user''s choices and quiet hours, critical bypassing them) and their push and e-mail delivery rows, takes the recipients'' write gates before it stamps the rows'' created_at (as notify_rows), marks the chunk written and adds its inbox rows to the batch''s written counter. Once per chunk (written_at, under the chunk row''s lock): a job killed before its commit writes nothing, its rerun writes the chunk whole. Returns the rows written. security definer: it writes every recipient''s inbox.';

create or replace function app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) RETURNS TABLE(id uuid, type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, read_at text, created_at text, unread integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
#variable_conflict use_column
declare
  caller_claims text;
  bound_time timestamptz := coalesce(after_time, 'infinity'::timestamptz);
  bound_id uuid := coalesce(after_id, 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid);
  lower_time timestamptz := coalesce(since, '-infinity'::timestamptz);
  -- The rows a filtered page walks in order before it asks the search index.
  walk_limit constant integer := 500;
  walked integer := 0;
  hits uuid[] := '{}';
  hit uuid;
  listed boolean;
  w record;
  -- The newest creation time a pending read-all covers: rows up to it are read.
  marked_to timestamptz;
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
  select coalesce(max(m.read_to), '-infinity') into marked_to
  from app.notification_read_marks m where m.user_id = caller_user;
  if only_type is null and only_unread is null and pattern is null then
    return query
      select n.id, n.type, n.title, n.body, n.data, n.priority, (case when n.read_at is null and n.created_at <= marked_to then app.notification_read_at(n) else n.read_at end)::text, n.created_at::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0)
      from app.notifications n
      where n.user_id = (select auth.uid()) and n.inbox
        and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
      order by n.created_at desc, n.id desc
      limit page_limit;
    listed := found;
  else
    -- 1. The next walk_limit rows in inbox order, filtered: a common filter fills the page here.
    --    Unread only walks the unread index (its own statement, so the plan can use it).
    if only_unread then
      for w in
        select n.id, n.created_at,
               (only_type is null or n.type = only_type)
               and (pattern is null or lower(n.title) like pattern or lower(n.body) like pattern) as hit
        from app.notifications n
        where n.user_id = (select auth.uid()) and n.inbox and n.read_at is null
          and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
          and n.created_at > marked_to
        order by n.created_at desc, n.id desc
        limit walk_limit
      loop
        walked := walked + 1;
        bound_time := w.created_at;
        bound_id := w.id;
        if w.hit then
          hits := hits || w.id;
          exit when cardinality(hits) >= page_limit;
        end if;
      end loop;
    else
      for w in
        select n.id, n.created_at,
               (only_type is null or n.type = only_type)
               and (only_unread is null or (n.read_at is null and n.created_at > marked_to) = only_unread)
               and (pattern is null or lower(n.title) like pattern or lower(n.body) like pattern) as hit
        from app.notifications n
        where n.user_id = (select auth.uid()) and n.inbox
          and (n.created_at, n.id) < (bound_time, bound_id) and n.created_at >= lower_time
        order by n.created_at desc, n.id desc
        limit walk_limit
      loop
        walked := walked + 1;
        bound_time := w.created_at;
        bound_id := w.id;
        if w.hit then
          hits := hits || w.id;
          exit when cardinality(hits) >= page_limit;
        end if;
      end loop;
    end if;
    -- 2. A rare filter: the rest of the page after the walked rows, from the search index (the
    --    rows matching it, sorted), never the whole inbox.
    if cardinality(hits) < page_limit and walked = walk_limit then
      hits := hits || app.inbox_search_ids(only_type, only_unread, pattern, lower_time,
                                           bound_time, bound_id, page_limit - cardinality(hits));
    end if;
    -- hits is in page order already (the walk's, then the index's after it); each row by its
    -- key: one statement over all of them was planned as a walk of the user's inbox index.
    foreach hit in array hits loop
      return query
        select n.id, n.type, n.title, n.body, n.data, n.priority, (case when n.read_at is null and n.created_at <= marked_to then app.notification_read_at(n) else n.read_at end)::text, n.created_at::text,
               coalesce((select c.unread from app.notification_counters c
                         where c.user_id = (select auth.uid())), 0)
        from app.notifications n
        where n.id = hit and n.inbox;
    end loop;
    listed := cardinality(hits) > 0;
  end if;
  if not listed then
    return query
      select null::uuid, null::app.notification_type, null::text, null::text, null::jsonb,
             null::app.notification_priority, null::text, null::text,
             coalesce((select c.unread from app.notification_counters c
                       where c.user_id = (select auth.uid())), 0);
  end if;
end;
$$;

comment on function app_private.inbox_page_for_session(caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) is 'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path), session check included: the session the access token names must be live and its user active by the one rule, app_private.live_sessions (else AG401), the claims are built from those rows, then the page is read under RLS as role authenticated, newest first, with the unread count (app.notification_counters) on every row; a row a pending read-all covers (app.notification_read_marks, up to its newest creation time) is read at that read-all''s time, and the unread filter starts after it in the unread index; an empty page is one row with a null id carrying the count. One round trip instead of two (the session check, then the page): measured, the round trips and the session query cost more than the page. With a filter (type, unread only, search) it walks at most 500 rows in inbox order (the unread index for unread only) and, when they did not fill the page, takes the rest after them from app_private.notification_search (app.inbox_search_ids: user, type, trigrams of title and body): the cost follows the page, not the inbox (a search matching nothing read a whole inbox of a million). Only the API''s own role may call it, with ids from an access token whose signature it verified.';

create or replace function app.inbox_search_ids(only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamp with time zone, bound_time timestamp with time zone, bound_id uuid, wanted integer) RETURNS uuid[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := (select auth.uid());
  found_ids uuid[];
  marked_to timestamptz;
begin
  if me is null then
    return '{}';
  end if;
  -- A plan made for these values (EXECUTE): the user's share of the table and the term's
  -- trigrams are known to the planner. The search table is server-only (and under RLS the
  -- planner would keep like and enum equality, not leakproof, out of index conditions): this
  -- reads with the owner's rights, the caller's rows only. The words are a necessary condition;
  -- the exact test (title or body) runs on each candidate.
  select coalesce(max(m.read_to), '-infinity') into marked_to
  from app.notification_read_marks m where m.user_id = me;
  execute $q$
    with matching as materialized (
      select s.notification_id as id, s.created_at
      from app_private.notification_search s
      where s.user_id = $1
        and (s.created_at, s.notification_id) < ($6, $7) and s.created_at >= $5
        and ($2::app.notification_type is null or s.type = $2)
        and ($4::text is null or s.words like $4)
    )
    select array(
      select m.id from matching m join app.notifications n on n.id = m.id
      where n.inbox and ($3::boolean is null or (n.read_at is null and n.created_at > $9) = $3)
        and ($4::text is null or lower(n.title) like $4 or lower(n.body) like $4)
      order by m.created_at desc, m.id desc limit $8)
  $q$ into found_ids
  using me, only_type, only_unread, pattern, lower_time, bound_time, bound_id, wanted, marked_to;
  return found_ids;
end;
$_$;

comment on function app.inbox_search_ids(only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamp with time zone, bound_time timestamp with time zone, bound_id uuid, wanted integer) is 'The second half of a filtered inbox page (app_private.inbox_page_for_session): the ids of the caller''s next `wanted` inbox rows before (bound_time, bound_id) matching the filters (type, unread: neither read nor covered by a pending read-all, a like pattern on title or body), newest first, found through app_private.notification_search (a GIN index on user, type and trigrams) and sorted, instead of walking the inbox. security definer: the search table is server-only; it only ever reads the caller''s rows (auth.uid()) and returns ids, which the page then reads under RLS.';

create or replace function app.export_account_notifications() RETURNS SETOF text
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox,
    -- app_private.iso_time's expression, written out: that function (pinned search_path) is
    -- parsed and planned again on every call, 200 µs a row, 21 of 22 s for 100,000 rows.
    -- Read, or covered by a pending read-all: app.notification_read_at, called only for the
    -- unread rows up to the newest mark (the max is computed once).
    'readAt', to_char(coalesce(n.read_at,
                        case when n.created_at <= (select max(m.read_to) from app.notification_read_marks m
                                                   where m.user_id = (select auth.uid()))
                             then app.notification_read_at(n) end)
                      at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'createdAt', to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )::text
  from app.notifications n
  where n.user_id = (select auth.uid())
  order by n.created_at, n.id
$$;

create or replace function app_private.account_export_notifications(target_user_id uuid) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select coalesce(jsonb_agg(jsonb_build_object(
    'id', n.id, 'type', n.type, 'title', n.title, 'body', n.body, 'data', n.data,
    'priority', n.priority, 'inbox', n.inbox, 'readAt', app_private.iso_time(app.notification_read_at(n)),
    'createdAt', app_private.iso_time(n.created_at)
  ) order by n.created_at, n.id), '[]'::jsonb)
  from app.notifications n where n.user_id = target_user_id
$$;

comment on function app.export_account_notifications() is 'GET /api/account/export, second statement: every notification of the caller (those kept only for delivery, inbox false, included), oldest first, one JSON text per row as app_private.account_export_notifications shapes it (its times written out: app_private.iso_time, planned again on every call, cost 200 µs a row); the route reads it through a cursor and writes it to the response part by part, so no document of every notification is ever built. security definer: RLS shows users their inbox rows only; it only ever reads the caller''s. readAt is the notification''s read time as every reader shows it (app.notification_read_at: a pending read-all''s time for the rows it covers).';

comment on function app_private.account_export_notifications(target_user_id uuid) is 'Export part `notifications`: every notification of the person, those kept only for delivery (inbox false) included. readAt is the notification''s read time as every reader shows it (app.notification_read_at: a pending read-all''s time for the rows it covers).';

create function app.mark_all_notifications_read(direct_limit integer default 500)
    returns table(updated integer, unread integer)
    language plpgsql security definer
    set search_path to ''
    as $$
#variable_conflict use_column
declare
  me uuid := (select auth.uid());
  was integer;
  marked_to timestamptz;
  newest timestamptz;
  changed integer;
begin
  if me is null then
    raise exception 'Sign in to continue.' using errcode = 'AG401';
  end if;
  select c.unread into was from app.notification_counters c where c.user_id = me;
  if coalesce(was, 0) = 0 then
    return query select 0, 0;
    return;
  end if;
  if was <= direct_limit then
    -- Few: the rows themselves, as before (each row, then the counter in the read events
    -- trigger, which counts and announces them: the order marking one read takes).
    update app.notifications n set read_at = now()
    where n.user_id = me and n.inbox and n.read_at is null
      and n.created_at > coalesce((select max(m.read_to) from app.notification_read_marks m
                                   where m.user_id = me), '-infinity');
    get diagnostics changed = row_count;
    return query select changed, c.unread from app.notification_counters c where c.user_id = me;
    return;
  end if;
  -- Many: the caller's write gate. Writers hold it from before they stamp a row's creation time
  -- to their commit (app_private.notify_rows), so this waits for every row stamped before it,
  -- and rows stamped later are newer than the mark. Then the counter.
  -- No notification row is locked.
  perform 1 from app_private.notification_write_gates g where g.user_id = me for update;
  select c.unread into was from app.notification_counters c where c.user_id = me for update;
  if coalesce(was, 0) = 0 then
    return query select 0, 0;
    return;
  end if;
  select coalesce(max(m.read_to), '-infinity') into marked_to
  from app.notification_read_marks m where m.user_id = me;
  select n.created_at into newest
  from app.notifications n
  where n.user_id = me and n.inbox and n.read_at is null and n.created_at > marked_to
  order by n.created_at desc, n.id desc
  limit 1;
  update app.notification_counters c set unread = 0 where c.user_id = me;
  if newest is null then
    return query select 0, 0;
    return;
  end if;
  insert into app.notification_read_marks (user_id, read_to, read_at) values (me, newest, now());
  perform app_private.emit_event('user:' || me, 'notification.read_all',
    jsonb_build_object('count', was,
                       'readAt', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                       'upTo', to_char(newest at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                       'unreadCount', 0));
  perform app_private.enqueue_job('notifications.read_marks', jsonb_build_object('userId', me), now(),
    'notifications.read_marks:' || me::text || ':' || newest::text);
  return query select was, 0;
end;
$$;

comment on function app.mark_all_notifications_read(direct_limit integer) is 'PUT /api/notifications/read-all: marks every unread inbox notification of the caller read; returns how many and the unread count left (0). Up to direct_limit unread (the counter) it updates the rows, as before. Beyond, it writes one mark instead (app.notification_read_marks: everything created up to the newest unread row, read now), zeroes the counter, emits notification.read_all { count, readAt, upTo, unreadCount } on user:<id> and queues notifications.read_marks, which writes the rows'' read_at behind it: the request costs the same for 10 or 100,000 unread. For a mark it takes the caller''s row of app_private.notification_write_gates, which writers hold from before they stamp created_at to their commit, so the mark covers exactly the rows this transaction sees; it locks no notification row (the direct way locks rows, then the counter, as marking one read does: no deadlock with a collapse, app_private.notify_rows). security definer: the marks, the counter and the events are server-written; it only ever touches the caller''s rows.';

revoke all on function app.mark_all_notifications_read(direct_limit integer) from public;
grant execute on function app.mark_all_notifications_read(direct_limit integer) to authenticated;

create function app_private.apply_read_marks(target_user_id uuid, batch_size integer default 2000)
    returns boolean
    language plpgsql security definer
    set search_path to ''
    as $$
declare
  mark app.notification_read_marks;
  written integer;
begin
  select * into mark from app.notification_read_marks m
  where m.user_id = target_user_id
  order by m.read_to
  limit 1
  for update;
  if not found then
    return false;
  end if;
  -- The earliest mark covers every unread row created up to its read_to (later marks only
  -- newer ones): its time, written down, a batch at a time through the unread index.
  update app.notifications n set read_at = mark.read_at
  where n.id = any(array(
    select x.id from app.notifications x
    where x.user_id = target_user_id and x.inbox and x.read_at is null and x.created_at <= mark.read_to
    order by x.created_at desc, x.id desc
    limit batch_size));
  get diagnostics written = row_count;
  if written < batch_size then
    delete from app.notification_read_marks m
    where m.user_id = target_user_id and m.read_to = mark.read_to;
  end if;
  return exists (select 1 from app.notification_read_marks m where m.user_id = target_user_id);
end;
$$;

comment on function app_private.apply_read_marks(target_user_id uuid, batch_size integer) is 'One step of a notifications.read_marks job, in a transaction of its own: writes the read_at of the earliest pending read-all (app.notification_read_marks) into at most batch_size of the rows it covers, and drops the mark once none is left. Returns whether marks remain (the job calls it again). The rows were read already for every reader (app.notification_read_at); the read events trigger skips them (the read-all counted and announced them) and the analytics facts take their read time now. Idempotent: a killed step is redone. Server only.';

revoke all on function app_private.apply_read_marks(target_user_id uuid, batch_size integer) from public;

