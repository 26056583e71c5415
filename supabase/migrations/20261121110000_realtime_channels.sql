/*
 * Realtime private channels: who may write to a topic (client broadcast, presence track). Read
 * (joining a channel) is the topic rule from the messaging migration, already installed as the
 * select policy on realtime.messages. Hosted Realtime evaluates these policies by inserting probe
 * rows into realtime.messages as the caller; the local gateway (stack/realtime/) does the same.
 *
 * Tables touched: policies on realtime.messages only. Nothing destructive.
 */

/*
 * May the current user write (broadcast, track presence) on this topic? Participants of a
 * conversation may, to talk to each other live (who is online, cursors, client-side typing);
 * `user:` and `admin` topics are written by the server only (realtime.send), never by clients.
 * security definer: it reads memberships the caller may not read directly; it returns a boolean.
 */
create function app.can_write_topic(topic text) returns boolean
language sql stable security definer
set search_path = ''
as $$
  select topic like 'conversation:%' and app.can_read_topic(topic)
$$;
comment on function app.can_write_topic(text) is
  'The rule deciding who may broadcast or track presence on a realtime topic.';
grant execute on function app.can_write_topic(text) to authenticated;

create policy realtime_messages_insert_topic on realtime.messages for insert to authenticated
  with check (
    topic = (select realtime.topic())
    and extension in ('broadcast', 'presence')
    and (select app.can_write_topic((select realtime.topic())))
  );

-- Deny by default (see the foundation migration): only the explicit grants above stay.
revoke execute on all functions in schema app, app_private from public;
