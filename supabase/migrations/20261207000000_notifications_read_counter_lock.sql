/*
 * Read-all by a mark and a person reading one notification at the same moment could take that
 * notification off the unread counter twice (tests/notifications/read-marks.test.ts, the
 * collapse-key race, failed once in CI: the counter 56, the unread rows 57).
 *
 * app_private.notifications_read_events (the statement trigger after an update of
 * notifications) chose the rows it takes off the counter in its snapshot, then updated the
 * counter. A read-all by mark (app.mark_all_notifications_read) writes its mark and sets the
 * counter to 0 in one transaction, holding the counter's row until it commits. When the trigger's
 * snapshot was taken before that commit, the mark was invisible: the row it covers counted as
 * read now, and the trigger's update, waiting for the read-all, then took it off the counter
 * again. With another notification counted in between (a writer that got the counter first),
 * the counter ended one short.
 *
 * Now the trigger locks its users' counters first (in user order) and only then chooses the
 * rows, in a new snapshot: a read-all that held a counter has committed by then and its mark is
 * seen; one that comes later waits for this transaction and reads these rows as read.
 *
 * Functions replaced: app_private.notifications_read_events.
 */

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
  -- The counters of the users whose rows became read, locked first, in user order: a read-all by
  -- mark holds its user's counter until it commits, so the statement below (a new snapshot)
  -- sees its mark and leaves the rows it covered alone.
  execute $q$
    select 1 from app.notification_counters c
    where c.user_id in (select n.user_id from after_rows n join before_rows o on o.id = n.id
                        where o.read_at is null and n.read_at is not null and n.inbox)
    order by c.user_id
    for update of c
  $q$;
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

comment on function app_private.notifications_read_events() is 'After any update of notifications (a statement trigger with its before and after rows): the inbox rows it made read leave their users'' unread counters in one update, and each user gets one event: notification.read (the notification) when one was read, notification.read_all { count, readAt, upTo (the newest read row''s createdAt), unreadCount } when more were (read-all). Rows a pending read-all covers (app.notification_read_marks) are skipped: app.mark_all_notifications_read counted and announced them, and app_private.apply_read_marks only writes down their read_at. The users'' counters are locked first, so a read-all by mark committed meanwhile is seen and its rows are not taken off twice. One event per statement instead of one per row: read-all of 50,000 wrote 50,000 events. security definer: the counters and the event log are written by the server only.';
