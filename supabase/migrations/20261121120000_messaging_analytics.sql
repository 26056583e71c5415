/*
 * Messaging figures for the admin analytics: counts only, never content. Tables read:
 * app.conversations, app.messages. Nothing destructive.
 */

/*
 * Messages, active senders and new conversations per interval, zero-filled, and totals.
 * security definer because ADMINs cannot read conversations they are not in (RLS), yet the
 * platform's figures count them all; it checks the caller is an ADMIN and returns aggregates only.
 */
create function app.admin_messaging_stats(bucket text, range_from timestamptz, range_to timestamptz)
returns jsonb
language plpgsql stable security definer
set search_path = ''
as $$
declare
  result jsonb;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN reads platform analytics' using errcode = '42501';
  end if;
  if bucket not in ('day', 'week', 'month') then
    raise exception 'unknown interval %', bucket using errcode = 'AG400';
  end if;
  with buckets as (
    select generate_series(date_trunc(bucket, range_from, 'UTC'), range_to, ('1 ' || bucket)::interval) as t
  ),
  messages as (
    select date_trunc(bucket, m.created_at, 'UTC') as t, count(*)::int as n, count(distinct m.sender_id)::int as senders
    from app.messages m where m.created_at >= range_from and m.created_at < range_to group by 1
  ),
  conversations as (
    select date_trunc(bucket, c.created_at, 'UTC') as t, count(*)::int as n
    from app.conversations c where c.created_at >= range_from and c.created_at < range_to group by 1
  )
  select jsonb_build_object(
    'totals', jsonb_build_object(
      'conversations', (select count(*) from app.conversations),
      'messages', (select count(*) from app.messages where deleted_at is null)
    ),
    'messages', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(m.n, 0)) order by b.t)
                 from buckets b left join messages m on m.t = b.t),
    'activeSenders', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(m.senders, 0)) order by b.t)
                      from buckets b left join messages m on m.t = b.t),
    'conversationsCreated', (select jsonb_agg(jsonb_build_object('t', b.t, 'value', coalesce(c.n, 0)) order by b.t)
                             from buckets b left join conversations c on c.t = b.t)
  ) into result;
  return result;
end;
$$;
grant execute on function app.admin_messaging_stats(text, timestamptz, timestamptz) to authenticated;

-- Deny by default (see the foundation migration): only the explicit grants above stay.
revoke execute on all functions in schema app, app_private from public;
