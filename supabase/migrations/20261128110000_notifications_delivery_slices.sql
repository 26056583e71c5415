/*
 * Deliveries claimed in slices (issue 25, item 7). app_private.take_deliveries claimed every due
 * delivery of up to 500 notifications at once and the job then sent them pushConcurrency at a
 * time: a bulk send's attempt that died after claiming a round of 146 e-mails left all 146 in
 * flight, and the next attempt failed them all as outcome_unknown (never sent twice, by design)
 * though none had gone out. It now takes max_rows: the job claims what it sends at once
 * (pushConcurrency), records those outcomes, and claims the next slice, so a crash costs at most
 * the messages in flight; tried_ids keeps the rows a slice put back for a retry out of the
 * attempt's next slices.
 *
 * Tables touched: none. Functions: app_private.take_deliveries(uuid[]) is dropped (its one
 * caller, functions/api/notifications/jobs.ts, calls the new one from this release on) and
 * app_private.take_deliveries(uuid[], integer, bigint[]) created. Nothing destructive for data.
 */

drop function app_private.take_deliveries(uuid[]);

create function app_private.take_deliveries(
  notification_ids uuid[], max_rows integer, tried_ids bigint[]
)
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
  'Claims at most max_rows due deliveries of some notifications (except tried_ids, the rows this attempt already tried and put back for a retry) for one attempt (attempts + 1, in_flight_since, a fresh attempt token) and returns what sending needs (device token and platform, e-mail address, the notification); the caller sends them, records them (record_deliveries) and calls again until none is returned, so a crash costs only the rows in flight. Before that: rows an interrupted attempt left in flight fail as outcome_unknown (never sent twice; the caller records every slice before it takes the next, so its own rows are never in flight here); preferences are checked again (a channel turned off since, a suspended recipient, a device gone: failed with that code); quiet hours that began since hold rows back, with a notifications.deliver job queued for when they end. Server only (the job''s connection).';

revoke execute on all functions in schema app, app_private from public;
