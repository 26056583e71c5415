/*
 * Notifications at a year's size (issue 30, "A year of data"): an inbox of 100,000 to 1,000,000
 * rows for one user, bulk sends to every user.
 *
 * - Reading is one statement-level trigger instead of a row trigger: read-all of 50,000 unread
 *   wrote 50,000 events and Realtime rows (65 of 77 s). Now each statement that makes inbox rows
 *   read takes them off the counter per user in one update and emits one event per user:
 *   `notification.read` (the notification) when it read one, `notification.read_all`
 *   ({ count, readAt, upTo, unreadCount }) when it read more.
 * - Inbox filters (search, type, unread only) no longer walk the whole inbox: the page walks at
 *   most 500 rows of the ordered inbox index and, when that did not fill the page, continues
 *   after them through app_private.notification_search, a GIN index on (user_id, type, title
 *   and body trigrams) (btree_gin) in a table of its own, so marking read never rewrites it.
 * - Bulk sends commit per chunk: notifications.batch only splits the audience into user-id
 *   ranges; each notifications.batch_chunk job writes its range's inbox rows and deliveries in a
 *   transaction of its own (app_private.write_batch_chunk), once (written_at), then announces
 *   and delivers them. Progress is kept on the batch row (written, pushSent, pushFailed,
 *   emailSent: the chunks and a statement trigger on deliveries add to it), so the poll reads
 *   one row.
 *
 * Tables touched: app.notification_batches (four counters, backfilled),
 * app_private.notification_batch_chunks (written_at, recipients), app.notifications (triggers:
 * one replaced, two added), app_private.notification_search (new, filled from the inbox rows),
 * app_private.notification_deliveries (a statement trigger). Nothing destructive for data.
 */

create extension if not exists btree_gin with schema extensions;

-- Tables ------------------------------------------------------------------------------------------

alter table app.notification_batches
  add column written integer not null default 0 check (written >= 0),
  add column push_sent integer not null default 0 check (push_sent >= 0),
  add column push_failed integer not null default 0 check (push_failed >= 0),
  add column email_sent integer not null default 0 check (email_sent >= 0);

comment on column app.notification_batches.written is
  'Inbox rows the batch''s chunks wrote so far (each chunk adds its own in the transaction that writes them): the progress poll''s created.';
comment on column app.notification_batches.push_sent is
  'The batch''s pushes sent so far, added by app_private.count_batch_outcomes as deliveries finish.';

alter table app_private.notification_batch_chunks
  add column written_at timestamptz,
  add column recipients integer check (recipients >= 0);

comment on column app_private.notification_batch_chunks.written_at is
  'When the chunk''s inbox rows and deliveries were written (app_private.write_batch_chunk, one transaction): a chunk is written once, whatever the job''s retries.';

create table app_private.notification_search (
  notification_id uuid primary key references app.notifications (id) on delete cascade,
  user_id uuid not null,
  type app.notification_type not null,
  created_at timestamptz not null,
  words text not null
);

comment on table app_private.notification_search is
  'The inbox''s search index, beside the notifications: one row per inbox notification (its user, type, creation time and lower(title || '' '' || body)), kept by statement triggers on app.notifications (insert; an update that changes a title or body, as a collapse does), deleted with it. A table of its own so that marking read, which rewrites every index entry of the row (read_at is in the unread index''s predicate, so never a HOT update), does not rewrite 50 trigrams: read-all took three times as long with the trigram index on app.notifications. Server only: read through app.inbox_search_ids.';

alter table app_private.notification_search enable row level security;

-- Indexes -----------------------------------------------------------------------------------------

-- The pending list kept small: a search scans what is pending in full.
create index notification_search_words_idx on app_private.notification_search
  using gin (user_id, type, words extensions.gin_trgm_ops)
  with (gin_pending_list_limit = 512);

-- Triggers ----------------------------------------------------------------------------------------

drop trigger notifications_read_event on app.notifications;
drop function app_private.notification_read_event();

create function app_private.notifications_read_events() returns trigger
language plpgsql security definer set search_path = '' as $$
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
$$;

comment on function app_private.notifications_read_events() is
  'After any update of notifications (a statement trigger with its before and after rows): the inbox rows it made read leave their users'' unread counters in one update, and each user gets one event: notification.read (the notification) when one was read, notification.read_all { count, readAt, upTo (the newest read row''s createdAt), unreadCount } when more were (read-all). One event per statement instead of one per row: read-all of 50,000 wrote 50,000 events. security definer: the counters and the event log are written by the server only.';

revoke execute on function app_private.notifications_read_events() from public;

create trigger notifications_read_events after update on app.notifications
  referencing old table as before_rows new table as after_rows
  for each statement execute function app_private.notifications_read_events();

create function app_private.index_new_notifications() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  insert into app_private.notification_search (notification_id, user_id, type, created_at, words)
  select a.id, a.user_id, a.type, a.created_at, lower(a.title || ' ' || a.body)
  from added a where a.inbox;
  return null;
end;
$$;

comment on function app_private.index_new_notifications() is
  'After an insert statement into notifications: their inbox rows into app_private.notification_search, one statement whatever its size. security definer: the search table is server-only.';

revoke execute on function app_private.index_new_notifications() from public;

create trigger notifications_index_new after insert on app.notifications
  referencing new table as added
  for each statement execute function app_private.index_new_notifications();

create function app_private.reindex_reworded_notifications() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  -- Only a collapse rewords a notification, and only an unread one: reading is out at once.
  if not exists (select 1 from after_rows n where n.read_at is null and n.inbox) then
    return null;
  end if;
  -- EXECUTE: planned for this statement's row counts (see notifications_read_events); the
  -- changed rows first, then the search rows of those only.
  execute $q$
    with changed as materialized (
      select n.id, lower(n.title || ' ' || n.body) as words
      from after_rows n join before_rows o on o.id = n.id
      where (o.title, o.body) is distinct from (n.title, n.body)
    )
    update app_private.notification_search s set words = c.words
    from changed c where s.notification_id = c.id
  $q$;
  return null;
end;
$$;

comment on function app_private.reindex_reworded_notifications() is
  'After an update statement on notifications: the rows whose title or body changed (a collapse key folding a new message into an unread notification) get their search words again; reading changes neither, and costs only this join. security definer: the search table is server-only.';

revoke execute on function app_private.reindex_reworded_notifications() from public;

create trigger notifications_reindex_reworded after update on app.notifications
  referencing old table as before_rows new table as after_rows
  for each statement execute function app_private.reindex_reworded_notifications();

create function app_private.count_batch_outcomes() returns trigger
language plpgsql security definer set search_path = '' as $$
begin
  -- Claims and retries leave rows queued: out at once (take_deliveries' hot path).
  if not exists (select 1 from after_rows d where d.status <> 'queued') then
    return null;
  end if;
  -- EXECUTE: planned for this statement's row counts (see notifications_read_events).
  execute $q$
  with finished as (
    select n.batch_id, d.channel, d.status
    from after_rows d
    join before_rows o on o.id = d.id
    join app.notifications n on n.id = d.notification_id
    where o.status = 'queued' and d.status <> 'queued' and n.batch_id is not null
  ), per_batch as (
    select f.batch_id,
           count(*) filter (where f.channel = 'push' and f.status = 'sent')::integer as push_sent,
           count(*) filter (where f.channel = 'push' and f.status in ('failed', 'pruned'))::integer as push_failed,
           count(*) filter (where f.channel = 'email' and f.status = 'sent')::integer as email_sent
    from finished f group by f.batch_id
  )
  update app.notification_batches b
  set push_sent = b.push_sent + p.push_sent, push_failed = b.push_failed + p.push_failed,
      email_sent = b.email_sent + p.email_sent
  from per_batch p where b.id = p.batch_id
  $q$;
  return null;
end;
$$;

comment on function app_private.count_batch_outcomes() is
  'After any update of deliveries (a statement trigger): the bulk batches'' deliveries that left the queue (sent, failed, pruned, by whatever path) are added to their batch''s counters, so GET /api/notifications/bulk/:id reads one row instead of counting a million. security definer: batches are written by the server only.';

revoke execute on function app_private.count_batch_outcomes() from public;

create trigger notification_deliveries_batch_outcomes after update on app_private.notification_deliveries
  referencing old table as before_rows new table as after_rows
  for each statement execute function app_private.count_batch_outcomes();

-- API functions -----------------------------------------------------------------------------------

create function app.inbox_search_ids(
  only_type app.notification_type, only_unread boolean, pattern text, lower_time timestamptz,
  bound_time timestamptz, bound_id uuid, wanted integer
)
returns uuid[]
language plpgsql stable security definer set search_path = '' as $$
declare
  me uuid := (select auth.uid());
  found_ids uuid[];
begin
  if me is null then
    return '{}';
  end if;
  -- A plan made for these values (EXECUTE): the user's share of the table and the term's
  -- trigrams are known to the planner. The search table is server-only (and under RLS the
  -- planner would keep like and enum equality, not leakproof, out of index conditions): this
  -- reads with the owner's rights, the caller's rows only. The words are a necessary condition;
  -- the exact test (title or body) runs on each candidate.
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
      where n.inbox and ($3::boolean is null or (n.read_at is null) = $3)
        and ($4::text is null or lower(n.title) like $4 or lower(n.body) like $4)
      order by m.created_at desc, m.id desc limit $8)
  $q$ into found_ids
  using me, only_type, only_unread, pattern, lower_time, bound_time, bound_id, wanted;
  return found_ids;
end;
$$;

comment on function app.inbox_search_ids(app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer) is
  'The second half of a filtered inbox page (app_private.inbox_page_for_session): the ids of the caller''s next `wanted` inbox rows before (bound_time, bound_id) matching the filters (type, unread, a like pattern on title or body), newest first, found through app_private.notification_search (a GIN index on user, type and trigrams) and sorted, instead of walking the inbox. security definer: the search table is server-only; it only ever reads the caller''s rows (auth.uid()) and returns ids, which the page then reads under RLS.';

grant execute on function app.inbox_search_ids(app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer) to authenticated;

create or replace function app_private.inbox_page_for_session(
  caller_session uuid, caller_user uuid, only_type app.notification_type, only_unread boolean,
  pattern text, since timestamptz, after_time timestamptz, after_id uuid, page_limit integer
)
returns table (
  id uuid, type app.notification_type, title text, body text, data jsonb,
  priority app.notification_priority, read_at text, created_at text, unread integer
)
language plpgsql set search_path = '' as $$
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
               and (only_unread is null or (n.read_at is null) = only_unread)
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
        select n.id, n.type, n.title, n.body, n.data, n.priority, n.read_at::text, n.created_at::text,
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

comment on function app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer) is
  'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path), session check included: the session the access token names must be live and its user active by the one rule, app_private.live_sessions (else AG401), the claims are built from those rows, then the page is read under RLS as role authenticated, newest first, with the unread count (app.notification_counters) on every row; an empty page is one row with a null id carrying the count. One round trip instead of two (the session check, then the page): measured, the round trips and the session query cost more than the page. With a filter (type, unread only, search) it walks at most 500 rows in inbox order (the unread index for unread only) and, when they did not fill the page, takes the rest after them from app_private.notification_search (app.inbox_search_ids: user, type, trigrams of title and body): the cost follows the page, not the inbox (a search matching nothing read a whole inbox of a million). Only the API''s own role may call it, with ids from an access token whose signature it verified.';

create or replace function app_private.write_notification_batch(target_batch_id uuid, chunk_size integer default 1000)
returns integer
language plpgsql security definer set search_path = '' as $$
declare
  b app.notification_batches;
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
  -- The audience in user-id ranges of chunk_size (ids only: nothing is written per recipient
  -- here); each range is written by its own job, in a transaction of its own.
  insert into app_private.notification_batch_chunks (batch_id, chunk, first_user_id, last_user_id)
  select b.id, x.chunk, (array_agg(x.id order by x.id))[1],
         (array_agg(x.id order by x.id desc))[1]
  from (
    select u.id, ((row_number() over (order by u.id)) - 1) / chunk_size as chunk
    from app.users u
    where app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
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
  'The notifications.batch job: splits a batch''s audience (active users who existed when it was accepted) into user-id ranges of chunk_size and queues one notifications.batch_chunk job per range; it writes no notification (app_private.write_batch_chunk does, a range per transaction). Idempotent: chunks and jobs are keyed. security definer: it reads every user and writes the server-only chunks.';

create function app_private.write_batch_chunk(target_batch_id uuid, target_chunk integer)
returns integer
language plpgsql security definer set search_path = '' as $$
declare
  b app.notification_batches;
  c app_private.notification_batch_chunks;
  defaults jsonb;
  critical boolean;
  shown integer;
  total integer;
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
    insert into app.notifications (user_id, type, title, body, data, priority, batch_id, inbox)
    select d.uid, b.type, b.title, b.body, b.data, b.priority, b.id, d.want_inbox from decided d
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

comment on function app_private.write_batch_chunk(uuid, integer) is
  'First step of a notifications.batch_chunk job, in a transaction of its own: writes the chunk''s recipients'' notifications (the batch''s channels, then each user''s choices and quiet hours, critical bypassing them) and their push and e-mail delivery rows, marks the chunk written and adds its inbox rows to the batch''s written counter. Once per chunk (written_at, under the chunk row''s lock): a job killed before its commit writes nothing, its rerun writes the chunk whole. Returns the rows written. security definer: it writes every recipient''s inbox.';

revoke execute on function app_private.write_batch_chunk(uuid, integer) from public;

create or replace function app.notification_batch_progress(target_batch_id uuid)
returns jsonb
language plpgsql stable security definer set search_path = '' as $$
declare
  b app.notification_batches;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads bulk sends' using errcode = 'AG403';
  end if;
  select * into b from app.notification_batches x where x.id = target_batch_id;
  if not found then
    raise exception 'batch not found' using errcode = 'AG404';
  end if;
  return jsonb_build_object(
    'id', b.id,
    'status', b.status,
    'recipients', b.recipients,
    'created', b.written,
    'pushSent', b.push_sent,
    'pushFailed', b.push_failed,
    'emailSent', b.email_sent,
    'createdAt', to_char(b.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'finishedAt', to_char(b.finished_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  );
end;
$$;

comment on function app.notification_batch_progress(uuid) is
  'GET /api/notifications/bulk/:id: a batch''s progress from its counters (one row, however big the batch): inbox rows written (each chunk adds its own when it commits), pushes sent and failed, e-mails sent (added as deliveries finish, app_private.count_batch_outcomes). ADMIN only (AG403); AG404 for an unknown batch. security definer: batches are read by ADMINs through this function.';

-- Data --------------------------------------------------------------------------------------------

insert into app_private.notification_search (notification_id, user_id, type, created_at, words)
select n.id, n.user_id, n.type, n.created_at, lower(n.title || ' ' || n.body)
from app.notifications n where n.inbox;

-- Batches of an earlier release: their counters from the data, once; chunks they wrote whole.
update app.notification_batches b
set written = (select count(*) from app.notifications n where n.batch_id = b.id and n.inbox),
    push_sent = (select count(*) from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
                 where n.batch_id = b.id and d.channel = 'push' and d.status = 'sent'),
    push_failed = (select count(*) from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
                   where n.batch_id = b.id and d.channel = 'push' and d.status in ('failed', 'pruned')),
    email_sent = (select count(*) from app.notifications n join app_private.notification_deliveries d on d.notification_id = n.id
                  where n.batch_id = b.id and d.channel = 'email' and d.status = 'sent');
update app_private.notification_batch_chunks set written_at = coalesce(announced_at, now());

revoke execute on all functions in schema app, app_private from public;
