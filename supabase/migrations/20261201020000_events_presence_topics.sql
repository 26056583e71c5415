-- Presence app-wide (issue 27): a person is online while they have the app open on any page, and
-- the people who share a conversation with them see it.
--
-- Each signed-in page tracks its person on their own topic, presence:<user id> (supabase-js
-- Presence, hosted Realtime or the local gateway); a conversation's view listens, without
-- tracking, on the presence topics of its other participants. Who may read presence:<id>: that
-- person, and anyone who shares a conversation with them unless that person blocks them. Who may
-- track on it: that person only. Both through the realtime.messages policies that already call
-- app.can_read_topic and app.can_write_topic, so hosted Realtime and the gateway decide alike.
--
-- The presence topics carry no events (nothing is emitted on them): they stay out of
-- app.readable_topics / app.readable_topics_among, so SSE and long-polling never serve them.

create function app.can_see_presence(topic text) returns boolean
language plpgsql stable security definer set search_path = '' as $_$
declare
  me uuid := auth.uid();
  uuid_re constant text := '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
  target uuid;
begin
  if me is null or topic is null or topic not like 'presence:%' or substr(topic, 10) !~ uuid_re then
    return false;
  end if;
  -- The topic rule's gate first (a live session, SUBSCRIBER or above): the caller's own user topic.
  if not exists (select 1 from app.readable_topics_among(array['user:' || me::text])) then
    return false;
  end if;
  target := substr(topic, 10)::uuid;
  if target = me then
    return true;
  end if;
  return exists (
      select 1
      from app.conversation_participants mine
      join app.conversation_participants theirs
        on theirs.conversation_id = mine.conversation_id and theirs.user_id = target
      where mine.user_id = me)
    and not exists (
      select 1 from app.user_blocks b where b.blocker_id = target and b.blocked_id = me);
end;
$_$;

comment on function app.can_see_presence(text) is
  'Whether the caller may see who is online on presence:<user id>: that user themself, or anyone sharing a conversation with them whom they do not block (a live session and SUBSCRIBER or above first, as app.readable_topics_among). Presence is app-wide (a person is online while any page of the app is open), so it is shown only to people who already share a conversation. security definer: it reads memberships, blocks and sessions the caller may not read; it returns a boolean.';

revoke all on function app.can_see_presence(text) from public;
grant execute on function app.can_see_presence(text) to authenticated;

create or replace function app.can_read_topic(topic text) returns boolean
language plpgsql stable security definer set search_path = '' as $$
begin
  if topic like 'presence:%' then
    return app.can_see_presence(topic);
  end if;
  return exists (select 1 from app.readable_topics_among(array[topic]) t);
end;
$$;

comment on function app.can_read_topic(topic text) is
  'Whether the caller may read one realtime topic: app.readable_topics_among of that one topic (the rule of app.readable_topics, checked by key), so one rule serves every transport; presence:<user id> topics (Realtime presence only, no events) by app.can_see_presence.';

create or replace function app.can_write_topic(topic text) returns boolean
language plpgsql stable security definer
set search_path = ''
as $$
begin
  return (topic like 'conversation:%' and app.can_read_topic(topic))
    or (topic = 'presence:' || auth.uid()::text and app.can_see_presence(topic));
end;
$$;

comment on function app.can_write_topic(text) is
  'Whether the caller may broadcast or track presence on a realtime topic: participants of a conversation may (presence, client-side signals); a person on their own presence:<user id> topic (app-wide presence); user: and admin topics are written by the server only (realtime.send), never by clients. security definer: it reads memberships through app.can_read_topic; it returns a boolean.';
