-- The current schema of Agora, generated from the migrations by `npm test` (stack/schema-dump.ts).
-- Do not edit: change a migration in supabase/migrations/, run `npm test`, commit both.
-- Every table and function says why it exists in its COMMENT.

--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: app; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app;

--
-- Name: SCHEMA app; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA app IS 'Agora data read and written by users through RLS.';

--
-- Name: app_private; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA app_private;

--
-- Name: SCHEMA app_private; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON SCHEMA app_private IS 'Agora secrets and server-only state; never granted to API roles.';

--
-- Name: conversation_type; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.conversation_type AS ENUM (
    'direct',
    'group'
);

--
-- Name: TYPE conversation_type; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.conversation_type IS 'Direct: exactly two people, one per pair. Group: a titled set with a creator.';

--
-- Name: notification_batch_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.notification_batch_status AS ENUM (
    'queued',
    'sending',
    'done'
);

--
-- Name: TYPE notification_batch_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.notification_batch_status IS 'queued: accepted, nothing written yet; sending: inbox rows written, deliveries going out; done.';

--
-- Name: notification_priority; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.notification_priority AS ENUM (
    'low',
    'normal',
    'high',
    'critical'
);

--
-- Name: TYPE notification_priority; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.notification_priority IS 'How urgent a notification is, in rank order; critical ignores preferences and quiet hours.';

--
-- Name: notification_type; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.notification_type AS ENUM (
    'OPPORTUNITY',
    'MESSAGE',
    'ENTITY',
    'SYSTEM',
    'WALLET'
);

--
-- Name: TYPE notification_type; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.notification_type IS 'What a notification is about; preferences are chosen per type.';

--
-- Name: push_platform; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.push_platform AS ENUM (
    'web',
    'ios',
    'android'
);

--
-- Name: TYPE push_platform; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.push_platform IS 'The kind of device a push token belongs to.';

--
-- Name: security_severity; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.security_severity AS ENUM (
    'info',
    'warning',
    'critical'
);

--
-- Name: TYPE security_severity; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.security_severity IS 'How urgently an admin should look at a security event.';

--
-- Name: user_role; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.user_role AS ENUM (
    'VISITOR',
    'SUBSCRIBER',
    'MEMBER',
    'CONFIDENTIAL',
    'ADMIN'
);

--
-- Name: TYPE user_role; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.user_role IS 'The five roles in rank order, so that enum comparison is rank comparison.';

--
-- Name: user_status; Type: TYPE; Schema: app; Owner: -
--

CREATE TYPE app.user_status AS ENUM (
    'active',
    'suspended'
);

--
-- Name: TYPE user_status; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TYPE app.user_status IS 'A suspended user authenticates nothing and is in no list.';

--
-- Name: delivery_channel; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.delivery_channel AS ENUM (
    'push',
    'email'
);

--
-- Name: TYPE delivery_channel; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TYPE app_private.delivery_channel IS 'The channels that leave the platform.';

--
-- Name: delivery_status; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.delivery_status AS ENUM (
    'queued',
    'sent',
    'failed',
    'pruned'
);

--
-- Name: TYPE delivery_status; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TYPE app_private.delivery_status IS 'queued: waiting (for its job, quiet hours or a retry); sent: accepted by FCM or the mailer; failed: not delivered, error_code says why; pruned: FCM refused the token, which was deleted.';

--
-- Name: job_state; Type: TYPE; Schema: app_private; Owner: -
--

CREATE TYPE app_private.job_state AS ENUM (
    'queued',
    'running',
    'done',
    'dead'
);

--
-- Name: TYPE job_state; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TYPE app_private.job_state IS 'queued: waits for run_at; running: claimed under a lease (locked_until); done: succeeded; dead: failed its last attempt or failed permanently, kept for operators.';

--
-- Name: add_participants(uuid, uuid[]); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) RETURNS SETOF uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  conv app.conversations;
  max_participants integer := app.config_int('limits', 'groupMaxParticipants');
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' or conv.created_by is distinct from me or not app.has_role('SUBSCRIBER') then
    raise exception 'only the group''s creator adds people' using errcode = 'AG403';
  end if;
  if (select count(*) from app.users u where u.id = any(user_ids) and u.status = 'active' and u.role >= 'SUBSCRIBER')
     <> (select count(distinct x) from unnest(user_ids) x) then
    raise exception 'every participant must be an active user who can message' using errcode = 'AG422';
  end if;
  if (select count(*) from app.conversation_participants p where p.conversation_id = conv.id)
     + (select count(distinct x) from unnest(user_ids) x
        where not exists (select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = x))
     > max_participants then
    raise exception 'a group has at most % participants', max_participants using errcode = 'AG422';
  end if;
  return query
    insert into app.conversation_participants (conversation_id, user_id, added_by)
    select conv.id, x, me from (select distinct unnest(user_ids) as x) ids
    on conflict do nothing
    returning user_id;
end;
$$;

--
-- Name: FUNCTION add_participants(target_conversation_id uuid, user_ids uuid[]); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) IS 'The group''s creator adds people (the conversation row lock serializes additions against the size limit). Returns the ids actually added; people already in are skipped. security definer as app.create_conversation.';

--
-- Name: admin_messaging_stats(text, timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) IS 'Messages, active senders and new conversations per interval, zero-filled, with totals: counts only, never content. security definer because ADMINs cannot read conversations they are not in, yet the platform''s figures count them all; it checks the caller is an ADMIN and returns aggregates only.';

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: attachments; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.attachments (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    uploader_id uuid NOT NULL,
    conversation_id uuid,
    message_id uuid,
    name text NOT NULL,
    content_type text NOT NULL,
    size bigint NOT NULL,
    storage_key text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT attachments_attached_together CHECK (((conversation_id IS NULL) = (message_id IS NULL))),
    CONSTRAINT attachments_content_type_check CHECK (((char_length(content_type) >= 3) AND (char_length(content_type) <= 255))),
    CONSTRAINT attachments_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 255))),
    CONSTRAINT attachments_size_check CHECK ((size >= 0))
);

--
-- Name: TABLE attachments; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.attachments IS 'Files: visible to their uploader, and once attached (exactly once, to the uploader''s own message) to the participants of that conversation.';

--
-- Name: attachment_json(app.attachments); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.attachment_json(a app.attachments) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', a.id, 'name', a.name, 'contentType', a.content_type, 'size', a.size,
    'url', '/api/attachments/' || a.id::text
  )
$$;

--
-- Name: FUNCTION attachment_json(a app.attachments); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.attachment_json(a app.attachments) IS 'One attachment as the API shows it. Inlinable pure SQL with no pinned search_path, like app.message_object and for the same reason.';

--
-- Name: can_read_topic(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.can_read_topic(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (select 1 from app.readable_topics() t where t = topic);
end;
$$;

--
-- Name: FUNCTION can_read_topic(topic text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.can_read_topic(topic text) IS 'Whether the caller may read one realtime topic: membership of app.readable_topics(), so one rule serves every transport.';

--
-- Name: can_write_topic(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.can_write_topic(topic text) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return topic like 'conversation:%' and app.can_read_topic(topic);
end;
$$;

--
-- Name: FUNCTION can_write_topic(topic text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.can_write_topic(topic text) IS 'Whether the caller may broadcast or track presence on a realtime topic: participants of a conversation may (presence, client-side signals); user: and admin topics are written by the server only (realtime.send), never by clients. security definer: it reads memberships through app.can_read_topic; it returns a boolean.';

--
-- Name: role_changes; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.role_changes (
    id bigint NOT NULL,
    user_id uuid NOT NULL,
    previous_role app.user_role NOT NULL,
    new_role app.user_role NOT NULL,
    changed_by uuid,
    reason text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT role_changes_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500)))
);

--
-- Name: TABLE role_changes; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.role_changes IS 'The audit trail of role changes (who, why, before and after), written only by a trigger on app.users so it cannot be forged.';

--
-- Name: change_user_role(uuid, app.user_role, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) RETURNS app.role_changes
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  previous app.user_role;
  change app.role_changes;
begin
  if not app.is_admin() then
    raise exception 'only an ADMIN changes roles' using errcode = '42501';
  end if;
  if char_length(coalesce(trim(change_reason), '')) = 0 then
    raise exception 'a role change needs a reason' using errcode = 'AG400';
  end if;
  select u.role into previous from app.users u where u.id = target_user_id for update;
  if not found then
    raise exception 'user not found' using errcode = 'AG404';
  end if;
  if previous = new_role then
    -- Nothing changes, so nothing is recorded; the answer still describes the request.
    return row(null, target_user_id, previous, new_role, auth.uid(), change_reason, now())::app.role_changes;
  end if;
  perform set_config('agora.role_change_reason', change_reason, true);
  update app.users set role = new_role where id = target_user_id;
  perform set_config('agora.role_change_reason', '', true);
  select * into change from app.role_changes rc
  where rc.user_id = target_user_id order by rc.id desc limit 1;
  return change;
end;
$$;

--
-- Name: FUNCTION change_user_role(target_user_id uuid, new_role app.user_role, change_reason text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) IS 'Changes a user''s role and records it in one transaction, with the caller''s rights: the users policies and the guard trigger refuse non-admins, self-changes and removing the last ADMIN. AG404 for an unknown user (or one RLS hides).';

--
-- Name: claim_idempotency_key(text, text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  existing app_private.idempotency_keys;
begin
  delete from app_private.idempotency_keys k
  where k.user_id = me and k.key = idempotency_key and k.created_at < now() - interval '24 hours';
  insert into app_private.idempotency_keys (user_id, key, scope, request_hash)
  values (me, idempotency_key, key_scope, body_hash)
  on conflict (user_id, key) do nothing;
  if found then
    return null;
  end if;
  select * into existing from app_private.idempotency_keys k where k.user_id = me and k.key = idempotency_key;
  if existing.scope <> key_scope or existing.request_hash <> body_hash then
    return jsonb_build_object('conflict', true);
  end if;
  return jsonb_build_object('response', existing.response);
end;
$$;

--
-- Name: FUNCTION claim_idempotency_key(idempotency_key text, key_scope text, body_hash text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) IS 'Claims a key inside the caller''s transaction: null when it is new; when it exists, waits for its first transaction (the primary key) and returns {response} or {conflict: true} for another scope or body. security definer: the keys live in app_private; it acts only on the caller''s own keys.';

--
-- Name: config_int(text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.config_int(section text, key text) RETURNS integer
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  v jsonb;
begin
  select c.config -> section -> key into v from app.config_versions c order by c.version desc limit 1;
  v := coalesce(v, app_private.config_defaults() -> section -> key);
  if jsonb_typeof(v) = 'number' then
    return v::text::integer;
  end if;
  raise exception 'configuration setting %.% is not a number', section, key using errcode = 'AG500';
end;
$$;

--
-- Name: FUNCTION config_int(section text, key text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.config_int(section text, key text) IS 'A numeric setting of the current configuration (limits and the like, never secrets), with its default from app_private.config_defaults. security definer: the configuration table is readable by ADMINs only; it returns one number.';

--
-- Name: conversation_profiles(uuid[]); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.conversation_profiles(conversation_ids uuid[]) RETURNS TABLE(conversation_id uuid, user_id uuid, name text, image text, role app.user_role)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select p.conversation_id, u.id, u.name, u.image, u.role
  from app.conversation_participants p
  join app.users u on u.id = p.user_id
  where p.conversation_id = any(conversation_ids)
    and p.conversation_id in (select app.my_conversation_ids())
  order by p.conversation_id, p.joined_at, u.id
$$;

--
-- Name: FUNCTION conversation_profiles(conversation_ids uuid[]); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) IS 'Display profiles (name, image, role; never e-mail) of the people who share a conversation with the caller. security definer: app.users shows a user only their own row.';

--
-- Name: create_conversation(app.conversation_type, uuid[], text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text DEFAULT NULL::text) RETURNS TABLE(conversation_id uuid, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  others uuid[];
  max_participants integer := app.config_int('limits', 'groupMaxParticipants');
  key text;
  new_id uuid;
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    raise exception 'messaging needs the SUBSCRIBER role' using errcode = 'AG403';
  end if;
  select coalesce(array_agg(distinct p), '{}') into others from unnest(participant_ids) as p where p <> me;
  if (select count(*) from app.users u where u.id = any(others) and u.status = 'active' and u.role >= 'SUBSCRIBER')
     <> cardinality(others) then
    raise exception 'every participant must be an active user who can message' using errcode = 'AG422';
  end if;
  if conversation_type = 'direct' then
    if cardinality(others) <> 1 then
      raise exception 'a direct conversation has exactly two people' using errcode = 'AG400';
    end if;
    if conversation_title is not null then
      raise exception 'a direct conversation has no title' using errcode = 'AG400';
    end if;
    key := least(me, others[1])::text || ':' || greatest(me, others[1])::text;
    insert into app.conversations (type, created_by, direct_key)
    values ('direct', me, key)
    on conflict (direct_key) do nothing
    returning id into new_id;
    if new_id is null then
      return query select c.id, false from app.conversations c where c.direct_key = key;
      return;
    end if;
  else
    if conversation_title is null or char_length(trim(conversation_title)) = 0 then
      raise exception 'a group conversation needs a title' using errcode = 'AG400';
    end if;
    if cardinality(others) + 1 > max_participants then
      raise exception 'a group has at most % participants', max_participants using errcode = 'AG422';
    end if;
    insert into app.conversations (type, title, created_by)
    values ('group', trim(conversation_title), me)
    returning id into new_id;
  end if;
  insert into app.conversation_participants (conversation_id, user_id, added_by)
  select new_id, p, me from unnest(array_prepend(me, others)) as p;
  return query select new_id, true;
end;
$$;

--
-- Name: FUNCTION create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) IS 'Creates a conversation, or returns the existing direct one between the same two people (from either side; concurrent creations meet on the unique direct_key). Returns the id and whether it was created. security definer: it adds other people as participants, which no policy lets a user do; every rule is checked here.';

--
-- Name: create_notification(uuid, app.notification_type, text, text, jsonb, app.notification_priority); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) IS 'POST /api/notifications: a notification for oneself (target null or one''s own id), or, for an ADMIN, for anyone (AG403 otherwise; AG404 for an unknown user), through app_private.notify_many and its rules. Returns the notification with userId and inbox (false: the recipient''s preferences keep it out of their inbox). security definer: it writes through the one way in, which API roles cannot call; the caller is checked here.';

--
-- Name: create_notification_batch(jsonb, jsonb, text[], text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[] DEFAULT ARRAY['inApp'::text, 'push'::text], idempotency_key text DEFAULT NULL::text, request_hash text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) IS 'POST /api/notifications/bulk: accepts a batch (ADMIN only, AG403 otherwise) for an audience ({ userIds?, roles?, all? }: active users only) and queues its notifications.batch job; returns { id, status, recipients, replayed }. The same Idempotency-Key with the same request returns the same batch (replayed), with another request AG409. AG422 over notifications.bulkMaxRecipients. security definer: batches and the job queue are written by the server only; the caller is checked here.';

--
-- Name: current_user_role(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.current_user_role() RETURNS app.user_role
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return coalesce(
    (select u.role from app.users u where u.id = (select auth.uid()) and u.status = 'active'),
    'VISITOR'::app.user_role
  );
end;
$$;

--
-- Name: FUNCTION current_user_role(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.current_user_role() IS 'The signed-in user''s current role from the database; VISITOR without an active session user.';

--
-- Name: delete_message(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.delete_message(target_message_id uuid) RETURNS TABLE(conversation_id uuid, deleted_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  conv app.conversations;
  is_participant boolean;
begin
  select * into m from app.messages where id = target_message_id for update;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  select * into conv from app.conversations c where c.id = m.conversation_id;
  is_participant := exists (
    select 1 from app.conversation_participants p where p.conversation_id = m.conversation_id and p.user_id = me
  );
  if not is_participant and not app.is_admin() then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if not (
    (is_participant and m.sender_id = me and app.has_role('SUBSCRIBER'))
    or (is_participant and conv.type = 'group' and conv.created_by = me and app.has_role('SUBSCRIBER'))
    or app.is_admin()
  ) then
    raise exception 'only the author, the group''s creator or an ADMIN deletes a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    return query select m.conversation_id, m.deleted_at;
    return;
  end if;
  delete from app.attachments a where a.message_id = m.id;
  update app.messages set deleted_at = now() where id = m.id returning * into m;
  return query select m.conversation_id, m.deleted_at;
end;
$$;

--
-- Name: FUNCTION delete_message(target_message_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.delete_message(target_message_id uuid) IS 'Soft-deletes a message into a tombstone: by its author, the group''s creator, or an ADMIN. The content and the attachments go (the attachments'' delete trigger queues their files'' removal as storage.delete jobs). security definer: the creator and ADMINs act on messages that are not theirs, ADMINs even in conversations they cannot read; each case is checked here.';

--
-- Name: delete_notification(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.delete_notification(target_notification_id uuid) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION delete_notification(target_notification_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.delete_notification(target_notification_id uuid) IS 'DELETE /api/notifications/:id: deletes one of the caller''s own inbox notifications; anything else (another user''s, a hidden one, none) is AG404. security definer because no API role holds a table-wide delete; the ownership check is the where clause.';

--
-- Name: edit_message(uuid, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.edit_message(target_message_id uuid, new_content text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  m app.messages;
  window_minutes integer := app.config_int('limits', 'messageEditWindowMinutes');
  max_length integer := app.config_int('limits', 'messageMaxLength');
begin
  -- No FOR UPDATE here: under RLS it would hide the row from non-authors, who must get 403.
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  if m.sender_id is distinct from auth.uid() then
    raise exception 'only the author edits a message' using errcode = 'AG403';
  end if;
  if m.deleted_at is not null then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  if m.created_at < now() - make_interval(mins => window_minutes) then
    raise exception 'the edit window (% minutes) has closed', window_minutes using errcode = 'AG422';
  end if;
  if char_length(new_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  -- The update re-checks everything under the row lock (RLS: author, not deleted).
  update app.messages set content = new_content where id = m.id and deleted_at is null returning * into m;
  if not found then
    raise exception 'a deleted message cannot be edited' using errcode = 'AG422';
  end if;
  return app.message_json(m);
end;
$$;

--
-- Name: FUNCTION edit_message(target_message_id uuid, new_content text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.edit_message(target_message_id uuid, new_content text) IS 'Edits a message: the author only (AG403 otherwise), within the configured edit window and length (the same limit as sends), never a tombstone. Returns the message JSON. security invoker: RLS decides.';

--
-- Name: effective_config(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.effective_config() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if current_setting('role', true) in ('anon', 'authenticated') and not app.is_admin() then
    raise exception 'only an ADMIN reads the configuration' using errcode = '42501';
  end if;
  return app_private.jsonb_merge_deep(
    app_private.config_defaults(),
    coalesce((select c.config from app.config_versions c order by c.version desc limit 1), '{}'::jsonb)
  );
end;
$$;

--
-- Name: FUNCTION effective_config(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.effective_config() IS 'The current configuration with every default filled in: what the API reads. security definer because app.config_versions is readable by admins only, so an API role gets it only as an ADMIN; the server''s own connection (no API role) always may. The public part is app.public_config.';

--
-- Name: has_role(app.user_role); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.has_role(required app.user_role) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- plpgsql, not sql: policies call this several times per statement, and a non-inlinable SQL
  -- function is parsed and planned again on every call while plpgsql keeps its plan for the
  -- session. `(select auth.uid())` is evaluated once per statement; bare, it parsed the claims
  -- JSON once per row whenever the plan scanned (44 us a call with 41 users, 10 us now).
  return exists (
    select 1 from app.users u
    where u.id = (select auth.uid()) and u.status = 'active' and u.role >= required
  );
end;
$$;

--
-- Name: FUNCTION has_role(required app.user_role); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.has_role(required app.user_role) IS 'Whether the signed-in user is active and holds at least the given role, read from app.users (not from a possibly stale token). security definer because policies on app.users call it: invoker rights would recurse into those policies. It reads one row and returns a boolean.';

--
-- Name: is_admin(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.is_admin() RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return app.has_role('ADMIN');
end;
$$;

--
-- Name: FUNCTION is_admin(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.is_admin() IS 'Shorthand for app.has_role(''ADMIN''), used by every admin policy; plpgsql so its plan is kept.';

--
-- Name: is_participant(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.is_participant(target_conversation_id uuid) RETURNS boolean
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  return exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = (select auth.uid())
  ) and app.has_role('SUBSCRIBER');
end;
$$;

--
-- Name: FUNCTION is_participant(target_conversation_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.is_participant(target_conversation_id uuid) IS 'Whether the current user takes part in one conversation (and may use it): one primary-key lookup, cheaper than the whole set for single-conversation checks. security definer as app.my_conversation_ids.';

--
-- Name: mark_read(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.mark_read(target_message_id uuid) RETURNS TABLE(conversation_id uuid, last_read_message_id uuid, unread_count bigint)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  m app.messages;
  p app.conversation_participants;
begin
  select * into m from app.messages where id = target_message_id;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  update app.conversation_participants cp
  set last_read_seq = m.seq, last_read_message_id = m.id, last_read_at = now()
  where cp.conversation_id = m.conversation_id and cp.user_id = me
  returning * into p;
  if not found then
    raise exception 'message not found' using errcode = 'AG404';
  end if;
  return query select p.conversation_id, p.last_read_message_id, (
    select count(*) from app.messages x
    where x.conversation_id = p.conversation_id and x.seq > p.last_read_seq
      and x.deleted_at is null and x.sender_id is distinct from me
  );
end;
$$;

--
-- Name: FUNCTION mark_read(target_message_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.mark_read(target_message_id uuid) IS 'Moves the caller''s read watermark forward to a message (never backward; the guard trigger keeps the later mark) and returns it with the unread count. security invoker: RLS decides which message and row the caller reaches.';

--
-- Name: messages; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.messages (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    conversation_id uuid NOT NULL,
    seq bigint NOT NULL,
    sender_id uuid,
    content text NOT NULL,
    reply_to_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    edited_at timestamp with time zone,
    deleted_at timestamp with time zone,
    CONSTRAINT messages_content_length CHECK ((((deleted_at IS NULL) AND ((char_length(content) >= 1) AND (char_length(content) <= 10000))) OR ((deleted_at IS NOT NULL) AND (content = ''::text))))
);

--
-- Name: TABLE messages; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.messages IS 'Messages in per-conversation commit order (seq). A deleted message is a tombstone: content empty, attachments gone, place kept. The check''s 10000 is the hard ceiling; limits.messageMaxLength may be lower.';

--
-- Name: message_json(app.messages); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.message_json(m app.messages) RETURNS jsonb
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select app.message_object(m, (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id)
    from app.attachments a where a.message_id = m.id
  ))
$$;

--
-- Name: FUNCTION message_json(m app.messages); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.message_json(m app.messages) IS 'The message as the API shows it, attachments read here. For list queries, where it is planned once per query. security invoker: a user sees only the attachments RLS shows them.';

--
-- Name: message_object(app.messages, jsonb); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.message_object(m app.messages, attachments jsonb) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_object(
    'id', m.id,
    'conversationId', m.conversation_id,
    'seq', m.seq,
    'senderId', m.sender_id,
    'content', m.content,
    'replyToId', m.reply_to_id,
    'attachments', case when m.deleted_at is null then coalesce(attachments, '[]'::jsonb) else '[]'::jsonb end,
    'createdAt', to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'editedAt', to_char(m.edited_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    'deletedAt', to_char(m.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
  )
$$;

--
-- Name: FUNCTION message_object(m app.messages, attachments jsonb); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.message_object(m app.messages, attachments jsonb) IS 'The message object from its row and its attachments'' JSON. Inlinable pure SQL with no pinned search_path on purpose (a pin stops inlining; it reads no table and runs with the caller''s rights): inlined it costs nothing per call in lists and is planned once per session inside plpgsql. The send and the event trigger each read the attachments in a statement of their own and call this.';

--
-- Name: my_conversation_ids(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.my_conversation_ids() RETURNS SETOF uuid
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- plpgsql keeps its plan across calls (see app.has_role).
  if app.has_role('SUBSCRIBER') then
    return query
      select p.conversation_id from app.conversation_participants p where p.user_id = (select auth.uid());
  end if;
end;
$$;

--
-- Name: FUNCTION my_conversation_ids(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.my_conversation_ids() IS 'The conversations the current user takes part in and may use (an active user of at least SUBSCRIBER; a participant demoted to VISITOR or suspended sees nothing until reinstated). security definer so policies on the participants table can use it without recursing into their own policies; it returns only the caller''s memberships.';

--
-- Name: notification_analytics(timestamp with time zone, timestamp with time zone, text, app.notification_type); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text DEFAULT 'day'::text, only_type app.notification_type DEFAULT NULL::app.notification_type) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) IS 'GET /api/notifications/analytics and the notifications section of /api/admin/analytics: from the data, in [range_from, range_to). created and read count inbox notifications created in the range (read: those of them read since, so readRate = read / created and the median time to read is theirs); push and e-mail count deliveries by the time of their outcome (pushFailed includes pruned tokens; pushDelivered equals pushSent: FCM''s HTTP v1 API reports acceptance, not receipt). byType, byChannel (inApp, push, email) and a zero-filled series per hour, day, week or month. ADMIN only (42501). security definer: ADMINs cannot read other users'' notifications or any delivery row; it returns counts only.';

--
-- Name: notification_batch_progress(uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_batch_progress(target_batch_id uuid) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION notification_batch_progress(target_batch_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_batch_progress(target_batch_id uuid) IS 'GET /api/notifications/bulk/:id: a batch''s progress counted from the data (inbox rows written, pushes sent and failed, e-mails sent). ADMIN only (AG403); AG404 for an unknown batch. security definer: delivery rows are server-only.';

--
-- Name: notifications; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notifications (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    type app.notification_type NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    priority app.notification_priority DEFAULT 'normal'::app.notification_priority NOT NULL,
    collapse_key text,
    batch_id uuid,
    inbox boolean DEFAULT true NOT NULL,
    read_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notifications_body_check CHECK ((char_length(body) <= 2000)),
    CONSTRAINT notifications_collapse_key_check CHECK (((char_length(collapse_key) >= 1) AND (char_length(collapse_key) <= 200))),
    CONSTRAINT notifications_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT notifications_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
)
WITH (fillfactor='80');

--
-- Name: TABLE notifications; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notifications IS 'Each user''s notifications. Rows with inbox = false exist only for delivery (the type''s in-app channel is off) and are never shown. At most one unread row per (user, collapse_key). Written only through app_private.notify_many; users read, mark read and delete their own.';

--
-- Name: notification_json(app.notifications); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_json(n app.notifications) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
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

--
-- Name: FUNCTION notification_json(n app.notifications); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_json(n app.notifications) IS 'The notification as the API and the live events show it. Inlinable pure SQL with no pinned search_path on purpose, as app.message_object: it reads no table and runs with the caller''s rights.';

--
-- Name: notification_preferences_document(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.notification_preferences_document() RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION notification_preferences_document(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.notification_preferences_document() IS 'GET /api/notifications/preferences: the caller''s effective preferences, every type and channel (their choice, else the configured default), quiet hours or null, updatedAt (null before the first change). security definer: the defaults come from the configuration, readable by ADMINs only; it reads only the caller''s own row.';

--
-- Name: public_config(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.public_config() RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select jsonb_build_object(
    'version', coalesce(c.version, 0),
    'whiteLabel', merged -> 'whiteLabel',
    'features', merged -> 'features'
  )
  from (select max(v.version) as version from app.config_versions v) c,
       app_private.jsonb_merge_deep(
         app_private.config_defaults(),
         coalesce((select v.config from app.config_versions v order by v.version desc limit 1), '{}'::jsonb)
       ) as merged
$$;

--
-- Name: FUNCTION public_config(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.public_config() IS 'The public part of the configuration (white-label and feature flags, defaults filled in), for anyone, signed in or not. security definer because app.config_versions is readable by admins only; it returns only these two sections, never the rest.';

--
-- Name: readable_topics(); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.readable_topics() RETURNS SETOF text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  me uuid := auth.uid();
  session_claim text := auth.jwt() ->> 'session_id';
begin
  if me is null or not app.has_role('SUBSCRIBER') then
    return;
  end if;
  -- A signed-out (revoked) session reads nothing, on any transport, even before its token expires.
  if session_claim is null
     or session_claim !~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
     or not exists (
       select 1 from app.sessions s
       where s.id = session_claim::uuid and s.user_id = me
         and s.revoked_at is null and s.expires_at > now()
     ) then
    return;
  end if;
  return next 'user:' || me::text;
  if app.is_admin() then
    return next 'admin';
  end if;
  return query
    select 'conversation:' || p.conversation_id::text
    from app.conversation_participants p where p.user_id = me;
end;
$_$;

--
-- Name: FUNCTION readable_topics(); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.readable_topics() IS 'THE topic rule, as the set of topics the current user may read: conversation:<id> for participants (active users of at least SUBSCRIBER), user:<id> for that user, admin for ADMINs; only for a live session, so signout ends realtime access at once. Every transport uses it: SSE and long-poll through app.can_read_topic, Realtime through the realtime.messages policy, the app.events policy as a set (evaluated once per statement, not per event row). security definer: it reads memberships and sessions the caller may not read, and returns only the caller''s own topics.';

--
-- Name: register_push_device(text, app.push_platform, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text DEFAULT NULL::text) RETURNS TABLE(device_id uuid, platform app.push_platform, created_at timestamp with time zone, created boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION register_push_device(device_token text, device_platform app.push_platform, name text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) IS 'POST /api/notifications/fcm/register: registers an FCM token for the caller (created true), or refreshes it when it is already theirs (created false); a token registered by another user moves to the caller as a new device (deliveries queued for the previous owner then fail as device_gone instead of reaching the caller). security definer: moving a token touches another user''s row, which RLS hides; the token itself is never returned.';

--
-- Name: remove_participant(uuid, uuid); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  conv app.conversations;
begin
  select * into conv from app.conversations c where c.id = target_conversation_id for update;
  if not found or not exists (
    select 1 from app.conversation_participants p where p.conversation_id = conv.id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if conv.type <> 'group' then
    raise exception 'people cannot be removed from a direct conversation' using errcode = 'AG422';
  end if;
  if target_user_id <> me and conv.created_by is distinct from me then
    raise exception 'only the group''s creator removes people' using errcode = 'AG403';
  end if;
  delete from app.conversation_participants p
  where p.conversation_id = conv.id and p.user_id = target_user_id;
  if not found then
    raise exception 'not a participant' using errcode = 'AG404';
  end if;
  -- A group is never left without someone to manage it: the longest-standing participant takes
  -- over from a creator who leaves; a group nobody is in any more is removed.
  if conv.created_by = target_user_id then
    update app.conversations c set created_by = (
      select p.user_id from app.conversation_participants p
      where p.conversation_id = conv.id order by p.joined_at, p.user_id limit 1
    ) where c.id = conv.id;
  end if;
  if not exists (select 1 from app.conversation_participants p where p.conversation_id = conv.id) then
    delete from app.conversations c where c.id = conv.id;
  end if;
end;
$$;

--
-- Name: FUNCTION remove_participant(target_conversation_id uuid, target_user_id uuid); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) IS 'The group''s creator removes someone; anyone may leave a group; direct conversations are fixed. A creator who leaves hands the group to the longest-standing participant; an empty group is removed. security definer as app.create_conversation.';

--
-- Name: send_message(uuid, text, uuid, uuid[], text, text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid DEFAULT NULL::uuid, attachment_ids uuid[] DEFAULT '{}'::uuid[], idempotency_key text DEFAULT NULL::text, request_hash text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  claim jsonb;
  max_length integer;
  attached integer;
  created app.messages;
  files jsonb;
  result jsonb;
begin
  if not app.is_participant(target_conversation_id) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  if idempotency_key is not null then
    claim := app.claim_idempotency_key(idempotency_key, 'send_message', request_hash);
    if claim ? 'conflict' then
      raise exception 'this Idempotency-Key was used with another request' using errcode = 'AG409';
    end if;
    if jsonb_typeof(claim -> 'response') = 'object' then
      return claim -> 'response';
    end if;
  end if;
  max_length := app.config_int('limits', 'messageMaxLength');
  if char_length(message_content) > max_length then
    raise exception 'a message has at most % characters', max_length using errcode = 'AG400';
  end if;
  insert into app.messages (conversation_id, sender_id, content, reply_to_id)
  values (target_conversation_id, me, message_content, reply_to)
  returning * into created;
  if cardinality(attachment_ids) > 0 then
    update app.attachments a set message_id = created.id, conversation_id = target_conversation_id
    where a.id = any(attachment_ids) and a.uploader_id = me and a.message_id is null;
    get diagnostics attached = row_count;
    if attached <> cardinality(attachment_ids) then
      raise exception 'every attachment must be your own upload, not yet attached' using errcode = 'AG422';
    end if;
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) into files
    from app.attachments a where a.message_id = created.id;
  end if;
  result := app.message_object(created, files);
  if idempotency_key is not null then
    perform app.store_idempotent_response(idempotency_key, result);
  end if;
  return result;
end;
$$;

--
-- Name: FUNCTION send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) IS 'Sends a message in one call: participation (AG404 otherwise), the idempotency key (the first response again, AG409 for another body), the configured length, the insert (RLS: the sender is the caller; the seq trigger checks the reply) and the attachments (the caller''s own, not yet attached, else AG422). Returns the message as the API shows it. security invoker: every write is the caller''s, under RLS.';

--
-- Name: send_typing(uuid, boolean, integer); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer DEFAULT 2000) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  hits integer;
begin
  if not app.has_role('SUBSCRIBER') or not exists (
    select 1 from app.conversation_participants p
    where p.conversation_id = target_conversation_id and p.user_id = me
  ) then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  -- The caller names the throttle (a server setting), but cannot turn it off.
  throttle_ms := least(greatest(throttle_ms, 250), 60000);
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    'typing:' || me || ':' || target_conversation_id || ':' || is_typing,
    to_timestamp(floor(extract(epoch from clock_timestamp()) * 1000 / throttle_ms) * throttle_ms / 1000.0),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits into hits;
  if hits > 1 then
    return false;
  end if;
  perform app_private.emit_ephemeral('conversation:' || target_conversation_id, 'typing',
    jsonb_build_object('conversationId', target_conversation_id, 'userId', me, 'isTyping', is_typing,
                       'expiresAt', to_char((now() + interval '5 seconds') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
  return true;
end;
$$;

--
-- Name: FUNCTION send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) IS 'A participant''s ephemeral typing signal, throttled per user, conversation and state (one per throttle_ms, at least 250; the rest are accepted and dropped). Returns whether it was sent. security definer: it counts in the private rate-limit table; it checks participation first.';

--
-- Name: store_idempotent_response(text, jsonb); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app_private.idempotency_keys k set response = store_idempotent_response.response
  where k.user_id = (select auth.uid()) and k.key = idempotency_key;
end;
$$;

--
-- Name: FUNCTION store_idempotent_response(idempotency_key text, response jsonb); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) IS 'Records the first response for a claimed key, in the same transaction as the work it describes. security definer for the same reason as claim_idempotency_key.';

--
-- Name: unregister_push_device(text); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.unregister_push_device(device_token text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  delete from app.push_devices d where d.token = device_token and d.user_id = auth.uid();
  if not found then
    raise exception 'device not found' using errcode = 'AG404';
  end if;
  return true;
end;
$$;

--
-- Name: FUNCTION unregister_push_device(device_token text); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.unregister_push_device(device_token text) IS 'DELETE /api/notifications/fcm/register: removes one of the caller''s own tokens; a token that is not theirs (or unknown) is AG404, so no one learns whose a token is. security definer: no API role may delete devices directly.';

--
-- Name: update_notification_preferences(jsonb); Type: FUNCTION; Schema: app; Owner: -
--

CREATE FUNCTION app.update_notification_preferences(patch jsonb) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $_$
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
$_$;

--
-- Name: FUNCTION update_notification_preferences(patch jsonb); Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON FUNCTION app.update_notification_preferences(patch jsonb) IS 'PUT /api/notifications/preferences: lays a partial document ({ types?: { TYPE?: { inApp?, push?, email? } }, quietHours?: { start, end, timeZone } | null }) over the caller''s choices and returns the whole effective document. AG400 for unknown keys, types or channels, times that are not HH:MM, an unknown time zone (the row''s trigger checks pg_timezone_names). security invoker: the caller''s own row, under RLS.';

--
-- Name: announce_batch_chunk(uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS uuid[]
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION announce_batch_chunk(target_batch_id uuid, target_chunk integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'A batch chunk''s live events: notification.created on each recipient''s user:<id>, once (announced_at, set in the same transaction), whatever the job''s retries. Returns the chunk''s notifications that still have queued deliveries. security definer: emit_event on other users'' topics.';

--
-- Name: assign_message_seq(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.assign_message_seq() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- A nested `if`: as one condition the planner folded the known null and made a custom plan on
  -- every insert.
  if new.reply_to_id is not null then
    if not exists (
      select 1 from app.messages m where m.id = new.reply_to_id and m.conversation_id = new.conversation_id
    ) then
      raise exception 'a reply must point to a message of the same conversation' using errcode = 'AG422';
    end if;
  end if;
  update app.conversations c set last_seq = c.last_seq + 1, last_activity_at = now()
  where c.id = new.conversation_id
  returning c.last_seq into new.seq;
  if new.seq is null then
    raise exception 'conversation not found' using errcode = 'AG404';
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION assign_message_seq(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.assign_message_seq() IS 'A new message takes the next seq from its conversation; the update holds the conversation row''s lock until commit, so seq order is commit order within the conversation. Also checks a reply points into the same conversation.';

--
-- Name: jobs; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.jobs (
    id bigint NOT NULL,
    kind text NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    state app_private.job_state DEFAULT 'queued'::app_private.job_state NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 10 NOT NULL,
    last_error text,
    dedupe_key text,
    claim_token uuid,
    claimed_by text,
    locked_until timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT jobs_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT jobs_claim_held CHECK (((state = 'running'::app_private.job_state) = ((claim_token IS NOT NULL) AND (locked_until IS NOT NULL)))),
    CONSTRAINT jobs_dedupe_key_check CHECK (((length(dedupe_key) >= 1) AND (length(dedupe_key) <= 300))),
    CONSTRAINT jobs_finished CHECK (((state = ANY (ARRAY['done'::app_private.job_state, 'dead'::app_private.job_state])) = (finished_at IS NOT NULL))),
    CONSTRAINT jobs_kind_check CHECK ((kind ~ '^[a-z][a-z0-9_.:-]{0,99}$'::text)),
    CONSTRAINT jobs_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 100))),
    CONSTRAINT jobs_payload_check CHECK ((jsonb_typeof(payload) = 'object'::text))
);

--
-- Name: TABLE jobs; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.jobs IS 'The one job queue: work that calls the outside world, run by the api function''s drain (or the local stack''s worker). Server only: RLS on, no policies, no grants to API roles.';

--
-- Name: COLUMN jobs.kind; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.kind IS 'Which handler runs it (functions/api/jobs/registry.ts), e.g. storage.delete.';

--
-- Name: COLUMN jobs.payload; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.payload IS 'The handler''s input, a JSON object. Never secrets: operators read this table.';

--
-- Name: COLUMN jobs.run_at; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.run_at IS 'Not before this time: the enqueue time, or when the next retry is due.';

--
-- Name: COLUMN jobs.attempts; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.attempts IS 'Claims so far, the current one included.';

--
-- Name: COLUMN jobs.dedupe_key; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.dedupe_key IS 'Optional: enqueueing the same key again returns the existing job (until it is pruned).';

--
-- Name: COLUMN jobs.claim_token; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.claim_token IS 'Set by each claim; complete and fail must present it (a stale worker cannot).';

--
-- Name: COLUMN jobs.locked_until; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON COLUMN app_private.jobs.locked_until IS 'The lease: past it, a running job is claimable again (its worker is presumed gone).';

--
-- Name: claim_jobs(text[], text, integer, interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer DEFAULT 10, lease interval DEFAULT '00:01:00'::interval) RETURNS SETOF app_private.jobs
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if batch is null or batch < 1 or batch > 1000 then
    raise exception 'batch must be between 1 and 1000' using errcode = '22023';
  end if;
  if lease is null or lease <= interval '0' then
    raise exception 'lease must be positive' using errcode = '22023';
  end if;

  update app_private.jobs j
  set state = 'dead', finished_at = now(), claim_token = null, locked_until = null,
      last_error = 'the lease ran out on the last attempt (the worker stopped or timed out)'
  where j.id in (
    select x.id from app_private.jobs x
    where x.state = 'running' and x.locked_until < now() and x.attempts >= x.max_attempts
      and x.kind = any(kinds)
    for update skip locked
  );

  return query
  update app_private.jobs j
  set state = 'running', attempts = j.attempts + 1, claim_token = gen_random_uuid(),
      claimed_by = worker, locked_until = now() + lease, started_at = now()
  where j.id in (
    select x.id from app_private.jobs x
    where x.state in ('queued', 'running') and x.run_at <= now() and x.kind = any(kinds)
      and (x.state = 'queued' or (x.locked_until < now() and x.attempts < x.max_attempts))
    order by x.run_at, x.id
    limit batch
    for update skip locked
  )
  returning j.*;
end;
$$;

--
-- Name: FUNCTION claim_jobs(kinds text[], worker text, batch integer, lease interval); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer, lease interval) IS 'Claims up to batch due jobs of the given kinds (queued and due, or running with an expired lease) with for update skip locked; each gets attempts + 1, a new claim_token and a lease. Dead-letters jobs whose lease expired on their last attempt.';

--
-- Name: claim_message_digest(uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.claim_message_digest(target_conversation_id uuid) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION claim_message_digest(target_conversation_id uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.claim_message_digest(target_conversation_id uuid) IS 'First half of the notifications.digest job: waits for the conversation''s senders in flight (its row, which each holds for its seq until commit), takes the conversation''s mark away and returns the last message seq, all committed by then. A transaction of its own, so senders wait for it only briefly. Null for a conversation that is gone. security definer: the marks are server-only.';

--
-- Name: collect_orphan_attachments(interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.collect_orphan_attachments(older_than interval DEFAULT '24:00:00'::interval) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app.attachments where message_id is null and created_at < now() - older_than
$$;

--
-- Name: FUNCTION collect_orphan_attachments(older_than interval); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.collect_orphan_attachments(older_than interval) IS 'Uploads never attached within older_than are dropped (their files queued by the delete trigger). Run hourly by pg_cron.';

--
-- Name: complete_job(bigint, uuid); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.complete_job(job_id bigint, token uuid) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  update app_private.jobs j
  set state = 'done', finished_at = now(), claim_token = null, locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token;
  return found;
end;
$$;

--
-- Name: FUNCTION complete_job(job_id bigint, token uuid); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.complete_job(job_id bigint, token uuid) IS 'Records success of a claimed job (its claim_token must match); false if the lease was lost.';

--
-- Name: config_defaults(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.config_defaults() RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select '{
    "system": {
      "platformName": "Agora", "defaultRole": "SUBSCRIBER", "maintenanceMode": false,
      "signupsOpen": true
    },
    "features": {
      "messaging": true, "store": true, "wallet": true, "notifications": true,
      "signIn": { "email": true, "google": true, "apple": true, "wallet": true }
    },
    "security": { "freshSignInSeconds": 600 },
    "limits": {
      "messageMaxLength": 10000, "messageEditWindowMinutes": 15,
      "attachmentMaxBytes": 10485760, "groupMaxParticipants": 100
    },
    "whiteLabel": {
      "brandName": "Agora", "logoUrl": null, "primaryColor": "#1f6feb", "customDomain": null,
      "supportEmail": null
    },
    "store": {
      "currency": "USD", "commissionBps": 500, "reservationMinutes": 15, "autoCompleteDays": 14,
      "settlementHourUtc": 1
    },
    "wallet": {
      "chainId": 31337, "confirmations": 1, "pendingTtlSeconds": 600, "exportsPerDay": 3,
      "contracts": {
        "multicall3": null, "utility": null, "governance": null, "staking": null,
        "erc721": [], "erc1155": []
      }
    },
    "notifications": {
      "bulkMaxRecipients": 1000000,
      "defaults": {
        "OPPORTUNITY": { "inApp": true, "push": true, "email": false },
        "MESSAGE": { "inApp": true, "push": true, "email": false },
        "ENTITY": { "inApp": true, "push": true, "email": false },
        "SYSTEM": { "inApp": true, "push": true, "email": true },
        "WALLET": { "inApp": true, "push": true, "email": false }
      }
    }
  }'::jsonb
$$;

--
-- Name: FUNCTION config_defaults(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.config_defaults() IS 'The default of every configuration setting, and the only place defaults are written: the database enforces limits and runs scheduled work without the API, so it must know them; the API reads the effective document (app.effective_config) and only validates shapes. A new setting is a new version of this function.';

--
-- Name: conversation_notifications(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.conversation_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION conversation_notifications(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.conversation_notifications() IS 'A new conversation (or being added to a group) gives each person added, but not the one who added them, a MESSAGE notification under the conversation''s collapse key, with count 0: the first message then makes it 1. A statement trigger: one call per conversation however many people join. security definer: it writes other users'' inboxes through app_private.notify_many.';

--
-- Name: conversation_read_notifications(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.conversation_read_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION conversation_read_notifications(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.conversation_read_notifications() IS 'Reading a conversation up to the latest message its MESSAGE notification tells of marks that notification read (and notification.read goes out); a read mark short of it leaves it unread. security definer: notifications are updated by their owner only through RLS, and this runs on the participant row''s update.';

--
-- Name: count_new_notifications(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.count_new_notifications() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION count_new_notifications(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.count_new_notifications() IS 'Adds a statement''s new unread inbox rows to each recipient''s counter: one statement per insert statement, whatever its size (a bulk batch of 100,000 is one upsert; a message folding into unread notifications inserts nothing and adds nothing). Counters are taken in user order, so concurrent inserts never deadlock on them. security definer: the counters are written by the server only.';

--
-- Name: digest_conversation(uuid, bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION digest_conversation(target_conversation_id uuid, upto_seq bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) IS 'Second half of the notifications.digest job: tells each participant of the conversation''s messages of others after the last digest and up to upto_seq (from claim_message_digest) that they have not read, in one app_private.notify_rows call: under the conversation''s collapse key, one unread MESSAGE notification per participant whose count adds the new messages and whose messageId and preview are the newest one''s (a participant without one gets a new notification, its event and push). Digests of a conversation take turns (its message_digests row); read marks wait for it. Returns how many participants were told. security definer: it writes other users'' inboxes.';

--
-- Name: emit_ephemeral(text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  envelope jsonb := jsonb_build_object(
    'id', 'ephemeral.' || gen_random_uuid()::text,
    'topic', topic,
    'event', event,
    'payload', payload,
    'createdAt', to_char(now() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
  );
begin
  perform realtime.send(envelope, event, topic, true);
  perform set_config('realtime.topic', '', true);
  perform pg_notify('agora_ephemeral', envelope::text);
end;
$$;

--
-- Name: FUNCTION emit_ephemeral(topic text, event text, payload jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) IS 'Ephemeral events (typing): delivered to live subscribers only, never stored in app.events. Hosted Realtime gets them through realtime.send, API processes through NOTIFY. security definer for the same reason as emit_event.';

--
-- Name: emit_event(text, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.emit_event(topic text, event text, payload jsonb) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  row app.events;
begin
  insert into app.events (topic, event, payload) values (topic, event, payload) returning * into row;
  perform realtime.send(
    jsonb_build_object(
      'id', row.xid::text || '.' || row.id::text,
      'topic', row.topic,
      'event', row.event,
      'payload', row.payload,
      'createdAt', to_char(row.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    ),
    event, topic, true
  );
  -- realtime.send sets realtime.topic for the transaction; clear it so nothing later relies on it.
  perform set_config('realtime.topic', '', true);
  -- Wakes the event hubs of every API process; NOTIFY is delivered at commit.
  perform pg_notify('agora_events', '');
end;
$$;

--
-- Name: FUNCTION emit_event(topic text, event text, payload jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.emit_event(topic text, event text, payload jsonb) IS 'Appends a durable event and hands the same envelope to Realtime; its id is the event''s cursor (<xid>.<id>), the same on every transport, so clients remove duplicates. security definer: triggers write events on behalf of whichever user caused them.';

--
-- Name: enqueue_job(text, jsonb, timestamp with time zone, text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.enqueue_job(kind text, payload jsonb DEFAULT '{}'::jsonb, run_at timestamp with time zone DEFAULT now(), dedupe_key text DEFAULT NULL::text, max_attempts integer DEFAULT 10) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  job_id bigint;
begin
  insert into app_private.jobs (kind, payload, run_at, dedupe_key, max_attempts)
  values (
    enqueue_job.kind, coalesce(enqueue_job.payload, '{}'), coalesce(enqueue_job.run_at, now()),
    enqueue_job.dedupe_key, coalesce(enqueue_job.max_attempts, 10)
  )
  on conflict on constraint jobs_dedupe_key_key do nothing
  returning id into job_id;
  if job_id is null then
    select j.id into job_id from app_private.jobs j where j.dedupe_key = enqueue_job.dedupe_key;
    return job_id;
  end if;
  perform pg_notify('agora_jobs', enqueue_job.kind);
  return job_id;
end;
$$;

--
-- Name: FUNCTION enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer) IS 'Queues a job (kind, payload, not before run_at, at most max_attempts attempts) and NOTIFYs agora_jobs at commit; with a dedupe_key already taken, returns that job instead. For SQL functions and triggers (security definer) and the server''s own connection.';

--
-- Name: fail_job(bigint, uuid, text, interval, boolean); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval DEFAULT NULL::interval, permanent boolean DEFAULT false) RETURNS app_private.job_state
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  result app_private.job_state;
begin
  update app_private.jobs j
  set state = case when coalesce(permanent, false) or j.attempts >= j.max_attempts
                   then 'dead' else 'queued' end::app_private.job_state,
      run_at = case when coalesce(permanent, false) or j.attempts >= j.max_attempts then j.run_at
                    when retry_after is not null then now() + greatest(retry_after, interval '0')
                    else now() + app_private.job_backoff(j.attempts) end,
      finished_at = case when coalesce(permanent, false) or j.attempts >= j.max_attempts
                         then now() end,
      last_error = left(coalesce(error, 'failed'), 2000),
      claim_token = null,
      locked_until = null
  where j.id = job_id and j.state = 'running' and j.claim_token = token
  returning j.state into result;
  return result;
end;
$$;

--
-- Name: FUNCTION fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean) IS 'Records a failed attempt of a claimed job: queued again after retry_after or the backoff, or dead when permanent or out of attempts. Returns the new state, null if the lease was lost.';

--
-- Name: finish_batch_chunk(uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION finish_batch_chunk(target_batch_id uuid, target_chunk integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) IS 'Marks a batch chunk done; the last one marks the batch done (chunks finishing at the same time take turns on the batch row''s lock, so one of them always sees all done). Returns whether the batch is done. security definer: batches are written by the server only.';

--
-- Name: guard_attachment_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_attachment_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.id <> old.id or new.uploader_id <> old.uploader_id or new.storage_key <> old.storage_key
     or new.name <> old.name or new.content_type <> old.content_type or new.size <> old.size then
    raise exception 'an attachment''s file never changes' using errcode = '42501';
  end if;
  if old.message_id is not null and current_setting('role', true) in ('anon', 'authenticated') then
    raise exception 'an attachment is attached once' using errcode = 'AG409';
  end if;
  if new.message_id is not null and not exists (
    select 1 from app.messages m
    join app.conversation_participants p on p.conversation_id = m.conversation_id and p.user_id = new.uploader_id
    where m.id = new.message_id and m.sender_id = new.uploader_id and m.conversation_id = new.conversation_id
      and m.deleted_at is null
  ) then
    raise exception 'an attachment goes on a live message of its uploader, who takes part in the conversation'
      using errcode = 'AG422';
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_attachment_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_attachment_update() IS 'An attachment''s file never changes, it is attached once, and only to a live message of its uploader in a conversation the uploader takes part in. security definer: it reads messages and participants the update may not see.';

--
-- Name: guard_message_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_message_update() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  -- Users change content only; trusted server paths (no API role) may also fix metadata.
  -- (The `role` setting, not current_user: this function runs with its owner's rights.)
  if current_setting('role', true) in ('anon', 'authenticated') and (
     new.id <> old.id or new.conversation_id <> old.conversation_id or new.seq <> old.seq
     or new.sender_id is distinct from old.sender_id or new.created_at <> old.created_at
     or new.reply_to_id is distinct from old.reply_to_id) then
    raise exception 'only the content of a message can change' using errcode = '42501';
  end if;
  if old.deleted_at is not null then
    raise exception 'a deleted message cannot change' using errcode = 'AG422';
  end if;
  if new.deleted_at is not null then
    new.content := '';
    new.edited_at := old.edited_at;
    return new;
  end if;
  if new.content <> old.content then
    -- The edit window and the length limit hold for every path a user has, not only app.edit_message.
    if current_setting('role', true) in ('anon', 'authenticated') then
      if old.created_at < now() - make_interval(mins => app.config_int('limits', 'messageEditWindowMinutes')) then
        raise exception 'the edit window has closed' using errcode = 'AG422';
      end if;
      if char_length(new.content) > app.config_int('limits', 'messageMaxLength') then
        raise exception 'a message has at most % characters', app.config_int('limits', 'messageMaxLength')
          using errcode = 'AG400';
      end if;
    end if;
    insert into app.message_versions (message_id, content, written_at)
    values (old.id, old.content, coalesce(old.edited_at, old.created_at));
    new.edited_at := now();
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_message_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_message_update() IS 'Message edits keep the earlier version in app.message_versions; users change content only, within the configured edit window and length, never on a tombstone. Deletion (deleted_at set) empties the content.';

--
-- Name: guard_notification_read(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_notification_read() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION guard_notification_read(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_notification_read() IS 'Users only mark notifications read: the time is the server''s (no backdating into the read-time figures) and a read notification stays read. Fires only when read_at is in the update.';

--
-- Name: guard_read_mark(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_read_mark() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.conversation_id <> old.conversation_id or new.user_id <> old.user_id
     or new.joined_at <> old.joined_at or new.added_by is distinct from old.added_by then
    raise exception 'only the read mark of a participant can change' using errcode = '42501';
  end if;
  if new.last_read_seq <= old.last_read_seq then
    new.last_read_seq := old.last_read_seq;
    new.last_read_message_id := old.last_read_message_id;
    new.last_read_at := old.last_read_at;
    return new;
  end if;
  -- Moving forward: the mark must name a message of this conversation at that position.
  if not exists (
    select 1 from app.messages m
    where m.id = new.last_read_message_id and m.conversation_id = new.conversation_id and m.seq = new.last_read_seq
  ) then
    raise exception 'a read mark names a message of the conversation' using errcode = 'AG422';
  end if;
  new.last_read_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION guard_read_mark(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_read_mark() IS 'Read marks move forward only and name a real message at that position; nothing else of a participant row changes. security definer: it reads messages the row''s update may not see.';

--
-- Name: guard_session_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_session_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  if auth.uid() is not null or current_user in ('anon', 'authenticated') then
    if old.revoked_at is not null then
      raise exception 'a revoked session cannot change' using errcode = '42501';
    end if;
    new.revoked_at := now();
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_session_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_session_update() IS 'Users revoke their own sessions and nothing more: the revocation time is the server''s clock (no backdating into the prune window) and a revoked session never changes again.';

--
-- Name: guard_user_update(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.guard_user_update() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  me uuid := auth.uid();
  trusted boolean := me is null and current_user not in ('anon', 'authenticated');
begin
  if new.id <> old.id or new.created_at <> old.created_at then
    raise exception 'user ids and creation times never change' using errcode = '42501';
  end if;
  if not trusted and new.email <> old.email then
    raise exception 'the email address cannot be changed here' using errcode = '42501';
  end if;
  if new.role = old.role and new.status = old.status then
    return new;
  end if;
  if not trusted then
    if not app.is_admin() then
      raise exception 'only an ADMIN changes roles and status' using errcode = '42501';
    end if;
    if old.id = me then
      raise exception 'an ADMIN cannot change their own role or status' using errcode = 'AG422';
    end if;
    if new.role <> old.role and coalesce(current_setting('agora.role_change_reason', true), '') = '' then
      raise exception 'a role change needs a reason (use app.change_user_role)' using errcode = 'AG400';
    end if;
  end if;
  if old.role = 'ADMIN' and old.status = 'active' and (new.role <> 'ADMIN' or new.status <> 'active') then
    perform pg_advisory_xact_lock(hashtext('app.users.active_admins'));
    if not exists (
      select 1 from app.users u
      where u.role = 'ADMIN' and u.status = 'active' and u.id <> old.id
    ) then
      raise exception 'the last active ADMIN cannot be demoted or suspended' using errcode = 'AG422';
    end if;
  end if;
  return new;
end;
$$;

--
-- Name: FUNCTION guard_user_update(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.guard_user_update() IS 'Users edit their own profile but never their id, email, role or status; only an ADMIN changes roles and status, never their own, and never so that no active ADMIN is left (an advisory lock serializes concurrent demotions, so two admins cannot demote each other into an admin-less platform). A transaction without claims is a trusted server path (sign-in, seed) and passes.';

--
-- Name: hit_rate_limit(text, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) RETURNS TABLE(hits integer, reset_at timestamp with time zone)
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  insert into app_private.rate_limits as r (bucket, window_start, hits)
  values (
    bucket_key,
    to_timestamp(floor(extract(epoch from now()) / window_seconds) * window_seconds),
    1
  )
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  returning r.hits, r.window_start + make_interval(secs => window_seconds)
$$;

--
-- Name: FUNCTION hit_rate_limit(bucket_key text, window_seconds integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) IS 'Counts one hit against a fixed window and returns the count and when the window ends. One upsert, so concurrent instances count exactly. Called only by the server''s own connection, before any user transaction.';

--
-- Name: users; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.users (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    image text,
    role app.user_role DEFAULT 'SUBSCRIBER'::app.user_role NOT NULL,
    status app.user_status DEFAULT 'active'::app.user_status NOT NULL,
    wallet_address text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_sign_in_at timestamp with time zone,
    CONSTRAINT users_email_check CHECK ((((char_length(email) >= 3) AND (char_length(email) <= 320)) AND (email ~ '^[^@\s]+@[^@\s]+$'::text))),
    CONSTRAINT users_image_check CHECK ((char_length(image) <= 2048)),
    CONSTRAINT users_name_check CHECK ((char_length(name) <= 200)),
    CONSTRAINT users_wallet_address_check CHECK ((wallet_address ~ '^0x[0-9a-fA-F]{40}$'::text))
);

--
-- Name: TABLE users; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.users IS 'People on the platform, their role and status. The role here, not the one in a token, is what every check reads, so a change counts on the next statement.';

--
-- Name: in_audience(app.users, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.in_audience(u app.users, audience jsonb) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select u.status = 'active' and (
    coalesce((audience ->> 'all')::boolean, false)
    or coalesce(audience -> 'userIds' ? u.id::text, false)
    or coalesce(audience -> 'roles' ? u.role::text, false)
  )
$$;

--
-- Name: FUNCTION in_audience(u app.users, audience jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.in_audience(u app.users, audience jsonb) IS 'Whether a user is in a bulk audience ({ userIds?, roles?, all? }, any of them): active users only, never suspended ones. Inlinable pure SQL (no pinned search_path, see app.notification_json).';

--
-- Name: inbox_page_as(text, app.notification_type, boolean, text, timestamp with time zone, timestamp with time zone, uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.inbox_page_as(claims text, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) RETURNS TABLE(id uuid, type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, read_at text, created_at text, unread integer)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION inbox_page_as(claims text, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.inbox_page_as(claims text, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) IS 'A page of the caller''s inbox in one statement, for GET /api/notifications (its hot path): sets the caller''s role and claims for this statement''s own transaction, then reads under RLS, newest first, with the unread count (app.notification_counters) on every row. One round trip instead of a transaction''s four: measured, the transaction''s statements cost the API more than the page. Only the API''s own role may call it: it trusts the claims it is given.';

--
-- Name: job_backoff(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.job_backoff(attempts integer) RETURNS interval
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  select make_interval(secs => d / 2 + random() * d / 2)
  from (select least(3600, 10 * power(2, greatest(attempts, 1) - 1)) as d) x
$$;

--
-- Name: FUNCTION job_backoff(attempts integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.job_backoff(attempts integer) IS 'Backoff after a failed attempt: min(10 s * 2^(attempts-1), 1 h), jittered within its upper half.';

--
-- Name: jsonb_merge_deep(jsonb, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO ''
    AS $$
  select case
    when jsonb_typeof(base) = 'object' and jsonb_typeof(patch) = 'object' then (
      select coalesce(jsonb_object_agg(
        coalesce(b.key, p.key),
        case when b.key is null then p.value
             when p.key is null then b.value
             else app_private.jsonb_merge_deep(b.value, p.value) end
      ), '{}'::jsonb)
      from jsonb_each(base) b full join jsonb_each(patch) p on p.key = b.key
    )
    when patch is null then base
    else patch
  end
$$;

--
-- Name: FUNCTION jsonb_merge_deep(base jsonb, patch jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) IS 'Objects merged key by key at every depth, anything else replaced by the patch: how a partial stored configuration is laid over the defaults.';

--
-- Name: mark_message_digest(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.mark_message_digest() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION mark_message_digest(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.mark_message_digest() IS 'A new message marks its conversation for a digest (app_private.message_digests_pending) and, when the conversation had no mark, queues its notifications.digest job a second later: the send does no notification work of its own. security definer: the marks and the job queue are server-only.';

--
-- Name: message_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.message_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  current app.messages;
  files jsonb;
begin
  select * into current from app.messages where id = new.id;
  if not found then
    return null;
  end if;
  if tg_op = 'INSERT' or (current.deleted_at is null and current.content <> old.content) then
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) into files
    from app.attachments a where a.message_id = current.id;
  end if;
  if tg_op = 'INSERT' then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.created',
      app.message_object(current, files));
  elsif current.deleted_at is not null and old.deleted_at is null then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.deleted',
      jsonb_build_object('id', current.id, 'conversationId', current.conversation_id, 'seq', current.seq,
                         'deletedAt', to_char(current.deleted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')));
  elsif current.content <> old.content then
    perform app_private.emit_event('conversation:' || current.conversation_id, 'message.updated',
      app.message_object(current, files));
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION message_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.message_events() IS 'Durable message.created, message.updated and message.deleted events, emitted at commit (a deferred constraint trigger) so the payload is complete, attachments included; they are read here as the trigger''s owner.';

--
-- Name: next_job_at(text[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.next_job_at(kinds text[]) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO ''
    AS $$
  select least(
    (select min(j.run_at) from app_private.jobs j
      where j.state = 'queued' and j.kind = any(kinds)),
    (select min(j.locked_until) from app_private.jobs j
      where j.state = 'running' and j.kind = any(kinds))
  )
$$;

--
-- Name: FUNCTION next_job_at(kinds text[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.next_job_at(kinds text[]) IS 'The next time a job of these kinds becomes claimable (due run_at or lease end); null if none. The local worker sets its timer by it.';

--
-- Name: notification_deleted_event(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_deleted_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if old.read_at is null then
    update app.notification_counters c set unread = c.unread - 1
    where c.user_id = old.user_id and c.unread > 0;
  end if;
  perform app_private.emit_event('user:' || old.user_id, 'notification.deleted', app.notification_json(old));
  return null;
end;
$$;

--
-- Name: FUNCTION notification_deleted_event(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notification_deleted_event() IS 'When an inbox notification is deleted: one unread fewer if it was unread, and notification.deleted on user:<id>. security definer as notification_read_event.';

--
-- Name: notification_read_event(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_read_event() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  update app.notification_counters c set unread = c.unread - 1
  where c.user_id = new.user_id and c.unread > 0;
  perform app_private.emit_event('user:' || new.user_id, 'notification.read', app.notification_json(new));
  return null;
end;
$$;

--
-- Name: FUNCTION notification_read_event(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notification_read_event() IS 'When an inbox notification becomes read, by any path (the route, read-all, a conversation read up to its latest message): one unread fewer in app.notification_counters, and notification.read on user:<id>. security definer: the counters and the event log are written by the server only.';

--
-- Name: notification_type_defaults(app.notification_type); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION notification_type_defaults(notification_type app.notification_type); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) IS 'The channels ({ inApp, push, email }) of one type for users who did not choose: notifications.defaults of the current configuration, each channel falling back to app_private.config_defaults. plpgsql, not SQL, on purpose: it is on the send''s hot path, and a security definer SQL function is planned again on every call (with config_defaults'' JSON parsed each time: about 0.3 ms), while plpgsql keeps its plans for the session. security definer: the configuration is readable by ADMINs only; it returns three booleans.';

--
-- Name: notify(uuid, app.notification_type, text, text, jsonb, app.notification_priority, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS uuid
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) IS 'Notifies one user (app_private.notify_many''s rules): returns the notification''s id, or null when the recipient''s preferences keep it out of the inbox (it may still be pushed or mailed). AG404 for an unknown user. For other domains'' SQL functions and triggers (orders, vendors, wallet, sign-ins); never granted to API roles. security definer as notify_many.';

--
-- Name: notify_many(uuid[], app.notification_type, text, text, jsonb, app.notification_priority, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb DEFAULT '{}'::jsonb, priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO ''
    AS $$
  select * from app_private.notify_rows(
    notification_type, recipients,
    array_fill(title, array[cardinality(recipients)]),
    array_fill(body, array[cardinality(recipients)]),
    array_fill(coalesce(data, '{}'::jsonb), array[cardinality(recipients)]),
    priority, collapse_key)
$$;

--
-- Name: FUNCTION notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) IS 'The same notification for many recipients in one statement: app_private.notify_rows with one title, body and data for all (its rules apply). security definer as notify_rows; never granted to API roles.';

--
-- Name: notify_rows(app.notification_type, uuid[], text[], text[], jsonb[], app.notification_priority, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority DEFAULT 'normal'::app.notification_priority, collapse_key text DEFAULT NULL::text) RETURNS TABLE(recipient_id uuid, notification_id uuid, shown boolean, is_new boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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
             critical or app_private.wants(p.types, notification_type, 'email', defaults) as want_email,
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

--
-- Name: FUNCTION notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) IS 'THE way notifications are written (notify and notify_many call it), for any number of recipients in one statement, each with its own title, body and data. Per recipient: the in-app row is shown in the inbox unless the type''s inApp is off (then it is kept hidden, for delivery and analytics), push goes to each registered device and e-mail once, as chosen or by default, held until quiet hours end; critical priority bypasses preferences and quiet hours. With a collapse key, an unread row with the same key is updated in place instead (title, body, data, data.count added up, the higher priority) and nothing else happens: no event, no new delivery. A new row emits notification.created on user:<id> (inbox rows) and queues a notifications.deliver job for its deliveries. Unknown recipients are skipped. AG400 for a title over 200 or empty, a body over 2000 characters, data that is not an object of at most 2048 bytes. security definer: it writes other users'' inboxes and the server-only delivery rows; callers are SQL functions and triggers of the platform, never API roles.';

--
-- Name: participant_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.participant_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
declare
  p app.conversation_participants := case when tg_op = 'DELETE' then old else new end;
  name text := case when tg_op = 'DELETE' then 'participant.removed' else 'participant.added' end;
  body jsonb;
begin
  body := jsonb_build_object('conversationId', p.conversation_id, 'userId', p.user_id);
  perform app_private.emit_event('conversation:' || p.conversation_id, name, body);
  perform app_private.emit_event('user:' || p.user_id, case when tg_op = 'DELETE' then 'conversation.left' else 'conversation.joined' end, body);
  return null;
end;
$$;

--
-- Name: FUNCTION participant_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.participant_events() IS 'Joining and leaving are events on the conversation and, for the person, on their user topic (so a client learns of new conversations live).';

--
-- Name: prune_auth_state(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_auth_state() RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app_private.rate_limits where window_start < now() - interval '1 day';
  delete from app_private.magic_links where expires_at < now() - interval '1 day';
  delete from app.sessions
    where (revoked_at is not null and revoked_at < now() - interval '30 days')
       or expires_at < now() - interval '30 days';
$$;

--
-- Name: FUNCTION prune_auth_state(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_auth_state() IS 'Housekeeping for sign-in state (old rate-limit windows, used magic links, long-dead sessions), run by pg_cron every 15 minutes.';

--
-- Name: prune_events(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_events(keep_days integer DEFAULT 3) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app.events where created_at < now() - make_interval(days => keep_days);
$$;

--
-- Name: FUNCTION prune_events(keep_days integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_events(keep_days integer) IS 'The event log keeps keep_days (default 3): long enough for any client to resume, short enough to stay small. Run by pg_cron.';

--
-- Name: prune_idempotency_keys(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_idempotency_keys() RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app_private.idempotency_keys where created_at < now() - interval '24 hours';
$$;

--
-- Name: FUNCTION prune_idempotency_keys(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_idempotency_keys() IS 'Keys replay for 24 hours; older ones are removed by pg_cron.';

--
-- Name: prune_jobs(interval, interval); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_jobs(done_for interval DEFAULT '3 days'::interval, dead_for interval DEFAULT '30 days'::interval) RETURNS integer
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  with gone as (
    delete from app_private.jobs j
    where (j.state = 'done' and j.finished_at < now() - done_for)
       or (j.state = 'dead' and j.finished_at < now() - dead_for)
    returning 1
  )
  select count(*)::integer from gone
$$;

--
-- Name: FUNCTION prune_jobs(done_for interval, dead_for interval); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_jobs(done_for interval, dead_for interval) IS 'pg_cron (agora-prune-jobs): deletes done jobs older than done_for and dead ones older than dead_for; returns how many.';

--
-- Name: prune_logs(integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.prune_logs(keep_days integer DEFAULT 90) RETURNS void
    LANGUAGE sql
    SET search_path TO ''
    AS $$
  delete from app.access_logs where created_at < now() - make_interval(days => keep_days);
  delete from app.security_events where created_at < now() - make_interval(days => keep_days);
$$;

--
-- Name: FUNCTION prune_logs(keep_days integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.prune_logs(keep_days integer) IS 'Keeps access logs and security events for a number of days (90 by default), run by pg_cron daily.';

--
-- Name: queue_storage_deletion(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.queue_storage_deletion() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  perform app_private.enqueue_job(
    'storage.delete', jsonb_build_object('key', old.storage_key), now(),
    'storage.delete:' || old.storage_key
  );
  return null;
end;
$$;

--
-- Name: FUNCTION queue_storage_deletion(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.queue_storage_deletion() IS 'Trigger on app.attachments (after delete): enqueues a storage.delete job for the row''s file. security definer because users delete attachments through cascades and app_private has no grants.';

--
-- Name: quiet_until(time without time zone, time without time zone, text, timestamp with time zone); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
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

--
-- Name: FUNCTION quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) IS 'When the quiet period that `at` falls in ends, or null when `at` is not in quiet hours. Start and end are wall-clock times in the time zone; a period whose start is after its end crosses midnight (22:00-07:00). Inlinable pure SQL (no pinned search_path, see app.notification_json).';

--
-- Name: read_mark_events(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.read_mark_events() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  if new.last_read_seq > old.last_read_seq then
    perform app_private.emit_event('conversation:' || new.conversation_id, 'message.read',
      jsonb_build_object('conversationId', new.conversation_id, 'userId', new.user_id,
                         'lastReadMessageId', new.last_read_message_id, 'lastReadSeq', new.last_read_seq));
  end if;
  return null;
end;
$$;

--
-- Name: FUNCTION read_mark_events(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.read_mark_events() IS 'Each forward move of a read mark is a message.read event for the other participants.';

--
-- Name: record_deliveries(jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_deliveries(outcomes jsonb) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION record_deliveries(outcomes jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_deliveries(outcomes jsonb) IS 'Records the outcomes of claimed deliveries ([{ id, token, outcome: sent | failed | pruned | retry, code, message, providerId, retryAfter }]): sent keeps FCM''s message name, failed and pruned FCM''s error code; pruned also deletes the device (FCM said the token is unregistered or invalid); retry puts the row back in the queue, due after retryAfter seconds. Only a claim''s own token records (a stale attempt cannot overwrite another''s outcome). Returns how many were recorded. Server only.';

--
-- Name: record_role_change(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.record_role_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
begin
  insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
  values (
    new.id, old.role, new.role, auth.uid(),
    coalesce(nullif(current_setting('agora.role_change_reason', true), ''), 'changed by a server path')
  );
  return null;
end;
$$;

--
-- Name: FUNCTION record_role_change(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.record_role_change() IS 'The audit trail writes itself: every role change, by any path, lands in app.role_changes with the reason from agora.role_change_reason. security definer because nobody may insert audit rows directly: that is what makes the trail trustworthy.';

--
-- Name: retry_dead_job(bigint); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.retry_dead_job(job_id bigint) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
declare
  job_kind text;
begin
  update app_private.jobs j
  set state = 'queued', attempts = 0, run_at = now(), finished_at = null
  where j.id = job_id and j.state = 'dead'
  returning j.kind into job_kind;
  if job_kind is null then
    return false;
  end if;
  perform pg_notify('agora_jobs', job_kind);
  return true;
end;
$$;

--
-- Name: FUNCTION retry_dead_job(job_id bigint); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.retry_dead_job(job_id bigint) IS 'Operators: puts a dead job back in the queue, due now, with its attempts reset (after fixing the cause). last_error is kept until the next outcome.';

--
-- Name: role_change_notification(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.role_change_notification() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION role_change_notification(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.role_change_notification() IS 'A role change gives the user a SYSTEM notification (data.kind role.changed, the roles before and after; never the admin''s reason, which is for the audit trail). security definer: it writes other users'' inboxes through app_private.notify_many.';

--
-- Name: send_message_as(text, uuid, text, uuid, uuid[], text, text); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) RETURNS jsonb
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash);
end;
$$;

--
-- Name: FUNCTION send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) IS 'A send in one statement, for the API''s hot path: sets the caller''s role and claims for this statement''s own transaction and runs app.send_message under them (RLS as always), so the commit follows at once on the server and the conversation''s row lock is never held across a round trip to the API. Only the API''s own role may call it: it trusts the claims it is given.';

--
-- Name: take_deliveries(uuid[]); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.take_deliveries(notification_ids uuid[]) RETURNS TABLE(delivery_id bigint, attempt_token uuid, channel app_private.delivery_channel, device_token text, platform app.push_platform, email text, notification jsonb, collapse_key text)
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION take_deliveries(notification_ids uuid[]); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.take_deliveries(notification_ids uuid[]) IS 'Claims the due deliveries of some notifications for one attempt (attempts + 1, in_flight_since, a fresh attempt token) and returns what sending needs (device token and platform, e-mail address, the notification). Before that: rows an interrupted attempt left in flight fail as outcome_unknown (never sent twice); preferences are checked again (a channel turned off since, a suspended recipient, a device gone: failed with that code); quiet hours that began since hold rows back, with a notifications.deliver job queued for when they end. Server only (the job''s connection).';

--
-- Name: touch_push_device(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.touch_push_device() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION touch_push_device(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.touch_push_device() IS 'A device''s updated_at is the time of its last registration.';

--
-- Name: touch_updated_at(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO ''
    AS $$
begin
  new.updated_at := now();
  return new;
end;
$$;

--
-- Name: FUNCTION touch_updated_at(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.touch_updated_at() IS 'Keeps updated_at honest without trusting callers.';

--
-- Name: validate_notification_preferences(); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.validate_notification_preferences() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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

--
-- Name: FUNCTION validate_notification_preferences(); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.validate_notification_preferences() IS 'Preferences hold known types and channels with boolean values, and quiet hours on whole minutes, not empty, in a time zone Postgres knows by name (pg_timezone_names, checked only when the zone changes: reading that view costs milliseconds). AG400 otherwise, whatever path wrote the row. security definer: it reads pg_timezone_names whoever writes.';

--
-- Name: wants(jsonb, app.notification_type, text, jsonb); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  select coalesce((choices -> notification_type::text ->> channel)::boolean, (defaults ->> channel)::boolean, false)
$$;

--
-- Name: FUNCTION wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) IS 'Whether a user wants a type on a channel: their own choice, else the default. Inlinable pure SQL with no pinned search_path on purpose (see app.notification_json), so the send''s hot path pays no call per recipient.';

--
-- Name: write_notification_batch(uuid, integer); Type: FUNCTION; Schema: app_private; Owner: -
--

CREATE FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer DEFAULT 1000) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $$
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
           'email' = any(b.channels) and (critical or app_private.wants(p.types, b.type, 'email', defaults)) as want_email,
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

--
-- Name: FUNCTION write_notification_batch(target_batch_id uuid, chunk_size integer); Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer) IS 'The notifications.batch job: writes a batch''s inbox in one INSERT ... SELECT over its audience (active users who existed when it was accepted), with each recipient''s preferences (the batch''s channels, then the user''s choices and quiet hours, critical bypassing them) and the push and e-mail delivery rows, then splits the recipients into user-id ranges and queues one notifications.batch_chunk job per range. Idempotent: (batch_id, user_id) is unique and chunks and jobs are keyed. security definer: it writes every recipient''s inbox.';

--
-- Name: access_logs; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.access_logs (
    id bigint NOT NULL,
    request_id text NOT NULL,
    user_id uuid,
    method text NOT NULL,
    route text NOT NULL,
    status smallint NOT NULL,
    duration_ms real NOT NULL,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE access_logs; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.access_logs IS 'One row per /api request, written in batches off the request path by the server only. No foreign key on user_id: checking it cost a row lock per logged request, and a log keeps the id it saw.';

--
-- Name: access_logs_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.access_logs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.access_logs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: config_versions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.config_versions (
    version integer NOT NULL,
    config jsonb NOT NULL,
    diff jsonb DEFAULT '{}'::jsonb NOT NULL,
    reason text NOT NULL,
    changed_by uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT config_versions_reason_check CHECK (((char_length(reason) >= 1) AND (char_length(reason) <= 500))),
    CONSTRAINT config_versions_version_check CHECK ((version > 0))
);

--
-- Name: TABLE config_versions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.config_versions IS 'Versioned system configuration: every version kept, the highest is current, and a stored document may be partial (app_private.config_defaults fills the rest). The primary key is the optimistic lock: two writers that read version N cannot both write N + 1.';

--
-- Name: conversation_participants; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.conversation_participants (
    conversation_id uuid NOT NULL,
    user_id uuid NOT NULL,
    added_by uuid,
    joined_at timestamp with time zone DEFAULT now() NOT NULL,
    last_read_seq bigint DEFAULT 0 NOT NULL,
    last_read_message_id uuid,
    last_read_at timestamp with time zone
);

--
-- Name: TABLE conversation_participants; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.conversation_participants IS 'Who takes part in a conversation, and each one''s read watermark (only moves forward).';

--
-- Name: conversations; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.conversations (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    type app.conversation_type NOT NULL,
    title text,
    created_by uuid,
    direct_key text,
    last_seq bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_activity_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT conversations_direct_key CHECK (((type = 'direct'::app.conversation_type) = (direct_key IS NOT NULL))),
    CONSTRAINT conversations_direct_untitled CHECK (((type = 'group'::app.conversation_type) OR (title IS NULL))),
    CONSTRAINT conversations_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
)
WITH (fillfactor='70');

--
-- Name: TABLE conversations; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.conversations IS 'Direct and group conversations. last_seq hands out message numbers under the row''s lock (commit order within a conversation); direct_key keeps one direct conversation per pair. Unindexed activity columns and fillfactor 70 keep the per-message update HOT.';

--
-- Name: events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.events (
    id bigint NOT NULL,
    xid xid8 DEFAULT pg_current_xact_id() NOT NULL,
    topic text NOT NULL,
    event text NOT NULL,
    payload jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT events_event_check CHECK ((event ~ '^[a-z_]+(\.[a-z_]+)*$'::text)),
    CONSTRAINT events_topic_check CHECK (((char_length(topic) >= 1) AND (char_length(topic) <= 200)))
);

--
-- Name: TABLE events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.events IS 'Durable realtime events, read in (xid, id) order below the running-transaction horizon so a cursor never skips or repeats, whatever order concurrent writers commit in.';

--
-- Name: events_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: identities; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.identities (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    provider_user_id text NOT NULL,
    email text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT identities_provider_check CHECK ((provider = ANY (ARRAY['email'::text, 'google'::text, 'apple'::text, 'wallet'::text]))),
    CONSTRAINT identities_provider_user_id_check CHECK (((char_length(provider_user_id) >= 1) AND (char_length(provider_user_id) <= 320)))
);

--
-- Name: TABLE identities; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.identities IS 'How a person proves who they are: one row per provider account (email, google, apple, wallet).';

--
-- Name: message_versions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.message_versions (
    id bigint NOT NULL,
    message_id uuid NOT NULL,
    content text NOT NULL,
    written_at timestamp with time zone NOT NULL,
    replaced_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE message_versions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.message_versions IS 'Earlier contents of edited messages: the history an edit must not erase.';

--
-- Name: message_versions_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.message_versions ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.message_versions_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: notification_batches; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notification_batches (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    created_by uuid,
    idempotency_key text,
    request_hash text,
    audience jsonb NOT NULL,
    type app.notification_type NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    data jsonb DEFAULT '{}'::jsonb NOT NULL,
    priority app.notification_priority DEFAULT 'normal'::app.notification_priority NOT NULL,
    channels text[] NOT NULL,
    status app.notification_batch_status DEFAULT 'queued'::app.notification_batch_status NOT NULL,
    recipients integer DEFAULT 0 NOT NULL,
    chunks integer,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    finished_at timestamp with time zone,
    CONSTRAINT notification_batches_audience_check CHECK ((jsonb_typeof(audience) = 'object'::text)),
    CONSTRAINT notification_batches_body_check CHECK ((char_length(body) <= 2000)),
    CONSTRAINT notification_batches_channels_check CHECK ((((cardinality(channels) >= 1) AND (cardinality(channels) <= 3)) AND (channels <@ ARRAY['inApp'::text, 'push'::text, 'email'::text]))),
    CONSTRAINT notification_batches_chunks_check CHECK ((chunks >= 0)),
    CONSTRAINT notification_batches_data_check CHECK ((jsonb_typeof(data) = 'object'::text)),
    CONSTRAINT notification_batches_idempotency_key_check CHECK (((char_length(idempotency_key) >= 1) AND (char_length(idempotency_key) <= 255))),
    CONSTRAINT notification_batches_recipients_check CHECK ((recipients >= 0)),
    CONSTRAINT notification_batches_title_check CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))
);

--
-- Name: TABLE notification_batches; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notification_batches IS 'Bulk sends by ADMINs: the request (audience, notification, channels), its Idempotency-Key and progress. Written only through app.create_notification_batch and the batch jobs; ADMINs read them.';

--
-- Name: notification_counters; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notification_counters (
    user_id uuid NOT NULL,
    unread integer DEFAULT 0 NOT NULL,
    CONSTRAINT notification_counters_unread_check CHECK ((unread >= 0))
);

--
-- Name: TABLE notification_counters; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notification_counters IS 'Each user''s unread inbox notifications, kept by the triggers on app.notifications (insert: a statement trigger adding the new unread inbox rows per user; read and delete: row triggers), so GET /api/notifications reads one row instead of counting. Users read their own.';

--
-- Name: notification_preferences; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.notification_preferences (
    user_id uuid NOT NULL,
    types jsonb DEFAULT '{}'::jsonb NOT NULL,
    quiet_start time without time zone,
    quiet_end time without time zone,
    quiet_time_zone text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notification_preferences_quiet_together CHECK ((((quiet_start IS NULL) = (quiet_end IS NULL)) AND ((quiet_start IS NULL) = (quiet_time_zone IS NULL)))),
    CONSTRAINT notification_preferences_types_check CHECK ((jsonb_typeof(types) = 'object'::text))
);

--
-- Name: TABLE notification_preferences; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.notification_preferences IS 'A user''s own choices: per type and channel ({ TYPE: { inApp, push, email } }, only what was chosen) and quiet hours (HH:MM to HH:MM in an IANA time zone, possibly across midnight) that hold push and e-mail back. Users read and write their own row; a trigger validates it.';

--
-- Name: push_devices; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.push_devices (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    token text NOT NULL,
    platform app.push_platform NOT NULL,
    device_name text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT push_devices_device_name_check CHECK ((char_length(device_name) <= 200)),
    CONSTRAINT push_devices_token_check CHECK (((char_length(token) >= 1) AND (char_length(token) <= 1024)))
);

--
-- Name: TABLE push_devices; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.push_devices IS 'FCM registration tokens, one row per token. A token registered by another user moves to that user (a new row, so deliveries queued for the previous owner never reach the new one). Deleted when FCM says the token is unregistered or invalid. Users see their own devices but never a token (no column grant); registration goes through app.register_push_device.';

--
-- Name: role_changes_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.role_changes ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.role_changes_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: security_events; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.security_events (
    id bigint NOT NULL,
    type text NOT NULL,
    severity app.security_severity DEFAULT 'info'::app.security_severity NOT NULL,
    user_id uuid,
    ip inet,
    user_agent text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT security_events_type_check CHECK ((type ~ '^[a-z_]+(\.[a-z_]+)*$'::text))
);

--
-- Name: TABLE security_events; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.security_events IS 'What an admin needs to see of security (sign-ins, token reuse, denials, role changes); written by the server only.';

--
-- Name: security_events_id_seq; Type: SEQUENCE; Schema: app; Owner: -
--

ALTER TABLE app.security_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app.security_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: sessions; Type: TABLE; Schema: app; Owner: -
--

CREATE TABLE app.sessions (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    user_id uuid NOT NULL,
    provider text NOT NULL,
    ip inet,
    user_agent text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    refreshed_at timestamp with time zone,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    revoked_reason text,
    CONSTRAINT sessions_revoked_reason_check CHECK ((char_length(revoked_reason) <= 200)),
    CONSTRAINT sessions_user_agent_check CHECK ((char_length(user_agent) <= 1024))
);

--
-- Name: TABLE sessions; Type: COMMENT; Schema: app; Owner: -
--

COMMENT ON TABLE app.sessions IS 'A signed-in device. Every request checks its row, so revoking it kills its access tokens at once; a revoked or expired session authenticates nothing.';

--
-- Name: idempotency_keys; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.idempotency_keys (
    user_id uuid NOT NULL,
    key text NOT NULL,
    scope text NOT NULL,
    request_hash text NOT NULL,
    response jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT idempotency_keys_key_check CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255)))
);

--
-- Name: TABLE idempotency_keys; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.idempotency_keys IS 'Idempotency keys per user with the request''s hash and its first response, replayed for 24 h.';

--
-- Name: jobs_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.jobs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.jobs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: magic_links; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.magic_links (
    id uuid DEFAULT gen_random_uuid() NOT NULL,
    email text NOT NULL,
    token_hash text NOT NULL,
    redirect_to text,
    ip inet,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone
);

--
-- Name: TABLE magic_links; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.magic_links IS 'Magic-link tokens as SHA-256 hashes: single use, short-lived; a leaked table signs nobody in.';

--
-- Name: message_digests; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.message_digests (
    conversation_id uuid NOT NULL,
    digested_seq bigint DEFAULT 0 NOT NULL,
    digested_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT message_digests_digested_seq_check CHECK ((digested_seq >= 0))
);

--
-- Name: TABLE message_digests; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.message_digests IS 'How far each conversation''s messages were told to its participants'' inboxes (the last message seq a digest covered). Server only.';

--
-- Name: message_digests_pending; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.message_digests_pending (
    conversation_id uuid NOT NULL,
    marked_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: TABLE message_digests_pending; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.message_digests_pending IS 'Conversations with messages waiting for their digest (the MESSAGE notifications of the other participants): one row while any wait. Server only.';

--
-- Name: notification_batch_chunks; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.notification_batch_chunks (
    batch_id uuid NOT NULL,
    chunk integer NOT NULL,
    first_user_id uuid NOT NULL,
    last_user_id uuid NOT NULL,
    announced_at timestamp with time zone,
    done_at timestamp with time zone,
    CONSTRAINT notification_batch_chunks_chunk_check CHECK ((chunk >= 0))
);

--
-- Name: TABLE notification_batch_chunks; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.notification_batch_chunks IS 'A bulk batch''s recipients in user-id ranges, one job per range: its live events (once, announced_at) and its deliveries. Server only.';

--
-- Name: notification_deliveries; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.notification_deliveries (
    id bigint NOT NULL,
    notification_id uuid NOT NULL,
    channel app_private.delivery_channel NOT NULL,
    device_id uuid,
    status app_private.delivery_status DEFAULT 'queued'::app_private.delivery_status NOT NULL,
    not_before timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    in_flight_since timestamp with time zone,
    in_flight_token uuid,
    error_code text,
    error_message text,
    provider_message_id text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT notification_deliveries_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT notification_deliveries_email_has_no_device CHECK (((channel = 'push'::app_private.delivery_channel) OR (device_id IS NULL))),
    CONSTRAINT notification_deliveries_error_code_check CHECK ((char_length(error_code) <= 100)),
    CONSTRAINT notification_deliveries_error_message_check CHECK ((char_length(error_message) <= 1000)),
    CONSTRAINT notification_deliveries_finished CHECK (((status = 'queued'::app_private.delivery_status) = (finished_at IS NULL))),
    CONSTRAINT notification_deliveries_in_flight CHECK (((in_flight_since IS NULL) = (in_flight_token IS NULL))),
    CONSTRAINT notification_deliveries_provider_message_id_check CHECK ((char_length(provider_message_id) <= 500))
);

--
-- Name: TABLE notification_deliveries; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.notification_deliveries IS 'Push and e-mail deliveries: one per notification and device (push) or per notification (e-mail), with status, attempts, FCM''s error code and message name. Server only.';

--
-- Name: notification_deliveries_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.notification_deliveries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.notification_deliveries_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: rate_limits; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.rate_limits (
    bucket text NOT NULL,
    window_start timestamp with time zone NOT NULL,
    hits integer DEFAULT 0 NOT NULL
);

--
-- Name: TABLE rate_limits; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.rate_limits IS 'Fixed-window rate-limit counters, in the database so limits hold across many stateless API instances.';

--
-- Name: refresh_tokens; Type: TABLE; Schema: app_private; Owner: -
--

CREATE TABLE app_private.refresh_tokens (
    id bigint NOT NULL,
    session_id uuid NOT NULL,
    token_hash text NOT NULL,
    parent_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    spent_at timestamp with time zone
);

--
-- Name: TABLE refresh_tokens; Type: COMMENT; Schema: app_private; Owner: -
--

COMMENT ON TABLE app_private.refresh_tokens IS 'Opaque refresh tokens as SHA-256 hashes. parent_id links each to the one it replaced: that is how reuse of a spent token is told apart from the grace allowed to its parent.';

--
-- Name: refresh_tokens_id_seq; Type: SEQUENCE; Schema: app_private; Owner: -
--

ALTER TABLE app_private.refresh_tokens ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME app_private.refresh_tokens_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: access_logs access_logs_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.access_logs
    ADD CONSTRAINT access_logs_pkey PRIMARY KEY (id);

--
-- Name: attachments attachments_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_pkey PRIMARY KEY (id);

--
-- Name: attachments attachments_storage_key_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_storage_key_key UNIQUE (storage_key);

--
-- Name: config_versions config_versions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.config_versions
    ADD CONSTRAINT config_versions_pkey PRIMARY KEY (version);

--
-- Name: conversation_participants conversation_participants_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_pkey PRIMARY KEY (conversation_id, user_id);

--
-- Name: conversations conversations_direct_key_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_direct_key_key UNIQUE (direct_key);

--
-- Name: conversations conversations_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_pkey PRIMARY KEY (id);

--
-- Name: events events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (id);

--
-- Name: identities identities_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_pkey PRIMARY KEY (id);

--
-- Name: identities identities_provider_provider_user_id_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_provider_provider_user_id_key UNIQUE (provider, provider_user_id);

--
-- Name: message_versions message_versions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.message_versions
    ADD CONSTRAINT message_versions_pkey PRIMARY KEY (id);

--
-- Name: messages messages_conversation_id_seq_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_conversation_id_seq_key UNIQUE (conversation_id, seq);

--
-- Name: messages messages_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_pkey PRIMARY KEY (id);

--
-- Name: notification_batches notification_batches_idempotency_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_idempotency_key UNIQUE (created_by, idempotency_key);

--
-- Name: notification_batches notification_batches_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_pkey PRIMARY KEY (id);

--
-- Name: notification_counters notification_counters_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_counters
    ADD CONSTRAINT notification_counters_pkey PRIMARY KEY (user_id);

--
-- Name: notification_preferences notification_preferences_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_preferences
    ADD CONSTRAINT notification_preferences_pkey PRIMARY KEY (user_id);

--
-- Name: notifications notifications_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

--
-- Name: push_devices push_devices_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_pkey PRIMARY KEY (id);

--
-- Name: push_devices push_devices_token_key; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_token_key UNIQUE (token);

--
-- Name: role_changes role_changes_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_pkey PRIMARY KEY (id);

--
-- Name: security_events security_events_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.security_events
    ADD CONSTRAINT security_events_pkey PRIMARY KEY (id);

--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);

--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);

--
-- Name: idempotency_keys idempotency_keys_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (user_id, key);

--
-- Name: jobs jobs_dedupe_key_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.jobs
    ADD CONSTRAINT jobs_dedupe_key_key UNIQUE (dedupe_key);

--
-- Name: jobs jobs_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.jobs
    ADD CONSTRAINT jobs_pkey PRIMARY KEY (id);

--
-- Name: magic_links magic_links_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.magic_links
    ADD CONSTRAINT magic_links_pkey PRIMARY KEY (id);

--
-- Name: magic_links magic_links_token_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.magic_links
    ADD CONSTRAINT magic_links_token_hash_key UNIQUE (token_hash);

--
-- Name: message_digests_pending message_digests_pending_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests_pending
    ADD CONSTRAINT message_digests_pending_pkey PRIMARY KEY (conversation_id);

--
-- Name: message_digests message_digests_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests
    ADD CONSTRAINT message_digests_pkey PRIMARY KEY (conversation_id);

--
-- Name: notification_batch_chunks notification_batch_chunks_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_batch_chunks
    ADD CONSTRAINT notification_batch_chunks_pkey PRIMARY KEY (batch_id, chunk);

--
-- Name: notification_deliveries notification_deliveries_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_pkey PRIMARY KEY (id);

--
-- Name: rate_limits rate_limits_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.rate_limits
    ADD CONSTRAINT rate_limits_pkey PRIMARY KEY (bucket, window_start);

--
-- Name: refresh_tokens refresh_tokens_pkey; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id);

--
-- Name: refresh_tokens refresh_tokens_token_hash_key; Type: CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_token_hash_key UNIQUE (token_hash);

--
-- Name: access_logs_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX access_logs_created_at_brin ON app.access_logs USING brin (created_at);

--
-- Name: access_logs_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX access_logs_user_id_idx ON app.access_logs USING btree (user_id, id);

--
-- Name: attachments_conversation_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX attachments_conversation_id_idx ON app.attachments USING btree (conversation_id);

--
-- Name: attachments_message_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX attachments_message_id_idx ON app.attachments USING btree (message_id);

--
-- Name: attachments_uploader_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX attachments_uploader_id_idx ON app.attachments USING btree (uploader_id);

--
-- Name: config_versions_changed_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX config_versions_changed_by_idx ON app.config_versions USING btree (changed_by);

--
-- Name: conversation_participants_added_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversation_participants_added_by_idx ON app.conversation_participants USING btree (added_by);

--
-- Name: conversation_participants_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversation_participants_user_id_idx ON app.conversation_participants USING btree (user_id, conversation_id);

--
-- Name: conversations_created_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX conversations_created_by_idx ON app.conversations USING btree (created_by);

--
-- Name: events_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_created_at_brin ON app.events USING brin (created_at);

--
-- Name: events_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_order_idx ON app.events USING btree (xid, id);

--
-- Name: events_topic_order_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX events_topic_order_idx ON app.events USING btree (topic, xid, id);

--
-- Name: identities_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX identities_user_id_idx ON app.identities USING btree (user_id);

--
-- Name: message_versions_message_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX message_versions_message_id_idx ON app.message_versions USING btree (message_id);

--
-- Name: messages_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX messages_created_at_brin ON app.messages USING brin (created_at);

--
-- Name: messages_reply_to_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX messages_reply_to_id_idx ON app.messages USING btree (reply_to_id) WHERE (reply_to_id IS NOT NULL);

--
-- Name: messages_sender_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX messages_sender_id_idx ON app.messages USING btree (sender_id);

--
-- Name: notification_batches_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notification_batches_created_at_idx ON app.notification_batches USING btree (created_at DESC, id DESC);

--
-- Name: notifications_batch_user_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX notifications_batch_user_key ON app.notifications USING btree (batch_id, user_id) WHERE (batch_id IS NOT NULL);

--
-- Name: notifications_collapse_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX notifications_collapse_key ON app.notifications USING btree (user_id, collapse_key) WHERE ((read_at IS NULL) AND (collapse_key IS NOT NULL));

--
-- Name: notifications_created_at_brin; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notifications_created_at_brin ON app.notifications USING brin (created_at);

--
-- Name: notifications_inbox_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notifications_inbox_idx ON app.notifications USING btree (user_id, created_at DESC, id DESC) WHERE inbox;

--
-- Name: notifications_unread_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX notifications_unread_idx ON app.notifications USING btree (user_id, created_at DESC, id DESC) WHERE (inbox AND (read_at IS NULL));

--
-- Name: push_devices_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX push_devices_user_id_idx ON app.push_devices USING btree (user_id);

--
-- Name: role_changes_changed_by_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX role_changes_changed_by_idx ON app.role_changes USING btree (changed_by);

--
-- Name: role_changes_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX role_changes_user_id_idx ON app.role_changes USING btree (user_id, changed_at DESC);

--
-- Name: security_events_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX security_events_created_at_idx ON app.security_events USING btree (created_at DESC, id DESC);

--
-- Name: security_events_type_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX security_events_type_idx ON app.security_events USING btree (type, created_at DESC);

--
-- Name: security_events_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX security_events_user_id_idx ON app.security_events USING btree (user_id);

--
-- Name: sessions_created_at_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX sessions_created_at_idx ON app.sessions USING btree (created_at);

--
-- Name: sessions_user_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX sessions_user_id_idx ON app.sessions USING btree (user_id);

--
-- Name: users_created_at_id_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_created_at_id_idx ON app.users USING btree (created_at DESC, id DESC);

--
-- Name: users_email_key; Type: INDEX; Schema: app; Owner: -
--

CREATE UNIQUE INDEX users_email_key ON app.users USING btree (lower(email));

--
-- Name: users_role_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_role_idx ON app.users USING btree (role);

--
-- Name: users_search_idx; Type: INDEX; Schema: app; Owner: -
--

CREATE INDEX users_search_idx ON app.users USING gin ((((lower(email) || ' '::text) || lower(name))) extensions.gin_trgm_ops);

--
-- Name: idempotency_keys_created_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX idempotency_keys_created_at_idx ON app_private.idempotency_keys USING btree (created_at);

--
-- Name: jobs_due_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX jobs_due_idx ON app_private.jobs USING btree (run_at, id) WHERE (state = ANY (ARRAY['queued'::app_private.job_state, 'running'::app_private.job_state]));

--
-- Name: jobs_finished_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX jobs_finished_idx ON app_private.jobs USING btree (state, finished_at) WHERE (state = ANY (ARRAY['done'::app_private.job_state, 'dead'::app_private.job_state]));

--
-- Name: jobs_lease_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX jobs_lease_idx ON app_private.jobs USING btree (locked_until) WHERE (state = 'running'::app_private.job_state);

--
-- Name: magic_links_expires_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX magic_links_expires_at_idx ON app_private.magic_links USING btree (expires_at);

--
-- Name: notification_deliveries_device_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX notification_deliveries_device_id_idx ON app_private.notification_deliveries USING btree (device_id) WHERE (device_id IS NOT NULL);

--
-- Name: notification_deliveries_email_key; Type: INDEX; Schema: app_private; Owner: -
--

CREATE UNIQUE INDEX notification_deliveries_email_key ON app_private.notification_deliveries USING btree (notification_id) WHERE (channel = 'email'::app_private.delivery_channel);

--
-- Name: notification_deliveries_finished_at_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX notification_deliveries_finished_at_idx ON app_private.notification_deliveries USING btree (finished_at) WHERE (finished_at IS NOT NULL);

--
-- Name: notification_deliveries_notification_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX notification_deliveries_notification_id_idx ON app_private.notification_deliveries USING btree (notification_id);

--
-- Name: notification_deliveries_push_key; Type: INDEX; Schema: app_private; Owner: -
--

CREATE UNIQUE INDEX notification_deliveries_push_key ON app_private.notification_deliveries USING btree (notification_id, device_id) WHERE (channel = 'push'::app_private.delivery_channel);

--
-- Name: rate_limits_window_start_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX rate_limits_window_start_idx ON app_private.rate_limits USING btree (window_start);

--
-- Name: refresh_tokens_parent_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX refresh_tokens_parent_id_idx ON app_private.refresh_tokens USING btree (parent_id);

--
-- Name: refresh_tokens_session_id_idx; Type: INDEX; Schema: app_private; Owner: -
--

CREATE INDEX refresh_tokens_session_id_idx ON app_private.refresh_tokens USING btree (session_id);

--
-- Name: attachments attachments_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER attachments_guard_update BEFORE UPDATE ON app.attachments FOR EACH ROW EXECUTE FUNCTION app_private.guard_attachment_update();

--
-- Name: attachments attachments_queue_storage_deletion; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER attachments_queue_storage_deletion AFTER DELETE ON app.attachments FOR EACH ROW EXECUTE FUNCTION app_private.queue_storage_deletion();

--
-- Name: messages messages_assign_seq; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER messages_assign_seq BEFORE INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.assign_message_seq();

--
-- Name: messages messages_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE CONSTRAINT TRIGGER messages_events AFTER INSERT OR UPDATE ON app.messages DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION app_private.message_events();

--
-- Name: messages messages_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER messages_guard_update BEFORE UPDATE ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.guard_message_update();

--
-- Name: messages messages_mark_digest; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER messages_mark_digest AFTER INSERT ON app.messages FOR EACH ROW EXECUTE FUNCTION app_private.mark_message_digest();

--
-- Name: notification_preferences notification_preferences_validate; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notification_preferences_validate BEFORE INSERT OR UPDATE ON app.notification_preferences FOR EACH ROW EXECUTE FUNCTION app_private.validate_notification_preferences();

--
-- Name: notifications notifications_count_new; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_count_new AFTER INSERT ON app.notifications REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.count_new_notifications();

--
-- Name: notifications notifications_deleted_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_deleted_event AFTER DELETE ON app.notifications FOR EACH ROW WHEN (old.inbox) EXECUTE FUNCTION app_private.notification_deleted_event();

--
-- Name: notifications notifications_guard_read; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_guard_read BEFORE UPDATE OF read_at ON app.notifications FOR EACH ROW EXECUTE FUNCTION app_private.guard_notification_read();

--
-- Name: notifications notifications_read_event; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER notifications_read_event AFTER UPDATE OF read_at ON app.notifications FOR EACH ROW WHEN (((old.read_at IS NULL) AND (new.read_at IS NOT NULL) AND new.inbox)) EXECUTE FUNCTION app_private.notification_read_event();

--
-- Name: conversation_participants participants_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_events AFTER INSERT OR DELETE ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.participant_events();

--
-- Name: conversation_participants participants_guard_read_mark; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_guard_read_mark BEFORE UPDATE ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.guard_read_mark();

--
-- Name: conversation_participants participants_notify; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_notify AFTER INSERT ON app.conversation_participants REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app_private.conversation_notifications();

--
-- Name: conversation_participants participants_read_mark_events; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_read_mark_events AFTER UPDATE OF last_read_seq ON app.conversation_participants FOR EACH ROW EXECUTE FUNCTION app_private.read_mark_events();

--
-- Name: conversation_participants participants_read_notifications; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER participants_read_notifications AFTER UPDATE OF last_read_seq ON app.conversation_participants FOR EACH ROW WHEN ((new.last_read_seq > old.last_read_seq)) EXECUTE FUNCTION app_private.conversation_read_notifications();

--
-- Name: push_devices push_devices_touch; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER push_devices_touch BEFORE UPDATE ON app.push_devices FOR EACH ROW EXECUTE FUNCTION app_private.touch_push_device();

--
-- Name: role_changes role_changes_notify; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER role_changes_notify AFTER INSERT ON app.role_changes FOR EACH ROW EXECUTE FUNCTION app_private.role_change_notification();

--
-- Name: sessions sessions_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER sessions_guard_update BEFORE UPDATE ON app.sessions FOR EACH ROW EXECUTE FUNCTION app_private.guard_session_update();

--
-- Name: users users_guard_update; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_guard_update BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.guard_user_update();

--
-- Name: users users_record_role_change; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_record_role_change AFTER UPDATE OF role ON app.users FOR EACH ROW WHEN ((old.role IS DISTINCT FROM new.role)) EXECUTE FUNCTION app_private.record_role_change();

--
-- Name: users users_touch_updated_at; Type: TRIGGER; Schema: app; Owner: -
--

CREATE TRIGGER users_touch_updated_at BEFORE UPDATE ON app.users FOR EACH ROW EXECUTE FUNCTION app_private.touch_updated_at();

--
-- Name: attachments attachments_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: attachments attachments_message_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

--
-- Name: attachments attachments_uploader_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.attachments
    ADD CONSTRAINT attachments_uploader_id_fkey FOREIGN KEY (uploader_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: config_versions config_versions_changed_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.config_versions
    ADD CONSTRAINT config_versions_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: conversation_participants conversation_participants_added_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_added_by_fkey FOREIGN KEY (added_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: conversation_participants conversation_participants_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: conversation_participants conversation_participants_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversation_participants
    ADD CONSTRAINT conversation_participants_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: conversations conversations_created_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.conversations
    ADD CONSTRAINT conversations_created_by_fkey FOREIGN KEY (created_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: identities identities_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.identities
    ADD CONSTRAINT identities_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: message_versions message_versions_message_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.message_versions
    ADD CONSTRAINT message_versions_message_id_fkey FOREIGN KEY (message_id) REFERENCES app.messages(id) ON DELETE CASCADE;

--
-- Name: messages messages_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: messages messages_reply_to_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_reply_to_id_fkey FOREIGN KEY (reply_to_id) REFERENCES app.messages(id) ON DELETE SET NULL;

--
-- Name: messages messages_sender_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.messages
    ADD CONSTRAINT messages_sender_id_fkey FOREIGN KEY (sender_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: notification_batches notification_batches_created_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_batches
    ADD CONSTRAINT notification_batches_created_by_fkey FOREIGN KEY (created_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: notification_counters notification_counters_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_counters
    ADD CONSTRAINT notification_counters_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: notification_preferences notification_preferences_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notification_preferences
    ADD CONSTRAINT notification_preferences_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: notifications notifications_batch_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES app.notification_batches(id) ON DELETE SET NULL;

--
-- Name: notifications notifications_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.notifications
    ADD CONSTRAINT notifications_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: push_devices push_devices_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.push_devices
    ADD CONSTRAINT push_devices_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: role_changes role_changes_changed_by_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_changed_by_fkey FOREIGN KEY (changed_by) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: role_changes role_changes_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.role_changes
    ADD CONSTRAINT role_changes_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: security_events security_events_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.security_events
    ADD CONSTRAINT security_events_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE SET NULL;

--
-- Name: sessions sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: app; Owner: -
--

ALTER TABLE ONLY app.sessions
    ADD CONSTRAINT sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: idempotency_keys idempotency_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.idempotency_keys
    ADD CONSTRAINT idempotency_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES app.users(id) ON DELETE CASCADE;

--
-- Name: message_digests message_digests_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests
    ADD CONSTRAINT message_digests_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: message_digests_pending message_digests_pending_conversation_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.message_digests_pending
    ADD CONSTRAINT message_digests_pending_conversation_id_fkey FOREIGN KEY (conversation_id) REFERENCES app.conversations(id) ON DELETE CASCADE;

--
-- Name: notification_batch_chunks notification_batch_chunks_batch_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_batch_chunks
    ADD CONSTRAINT notification_batch_chunks_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES app.notification_batches(id) ON DELETE CASCADE;

--
-- Name: notification_deliveries notification_deliveries_device_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_device_id_fkey FOREIGN KEY (device_id) REFERENCES app.push_devices(id) ON DELETE SET NULL;

--
-- Name: notification_deliveries notification_deliveries_notification_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.notification_deliveries
    ADD CONSTRAINT notification_deliveries_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES app.notifications(id) ON DELETE CASCADE;

--
-- Name: refresh_tokens refresh_tokens_parent_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_parent_id_fkey FOREIGN KEY (parent_id) REFERENCES app_private.refresh_tokens(id) ON DELETE CASCADE;

--
-- Name: refresh_tokens refresh_tokens_session_id_fkey; Type: FK CONSTRAINT; Schema: app_private; Owner: -
--

ALTER TABLE ONLY app_private.refresh_tokens
    ADD CONSTRAINT refresh_tokens_session_id_fkey FOREIGN KEY (session_id) REFERENCES app.sessions(id) ON DELETE CASCADE;

--
-- Name: access_logs; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.access_logs ENABLE ROW LEVEL SECURITY;

--
-- Name: access_logs access_logs_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY access_logs_select_admin ON app.access_logs FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: attachments; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.attachments ENABLE ROW LEVEL SECURITY;

--
-- Name: attachments attachments_insert_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY attachments_insert_self ON app.attachments FOR INSERT TO authenticated WITH CHECK (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NULL) AND (conversation_id IS NULL)));

--
-- Name: attachments attachments_select_visible; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY attachments_select_visible ON app.attachments FOR SELECT TO authenticated USING (((uploader_id = ( SELECT auth.uid() AS uid)) OR (conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids))));

--
-- Name: attachments attachments_update_attach; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY attachments_update_attach ON app.attachments FOR UPDATE TO authenticated USING (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NULL))) WITH CHECK (((uploader_id = ( SELECT auth.uid() AS uid)) AND (message_id IS NOT NULL)));

--
-- Name: config_versions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.config_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: config_versions config_versions_insert_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY config_versions_insert_admin ON app.config_versions FOR INSERT TO authenticated WITH CHECK ((( SELECT app.is_admin() AS is_admin) AND (changed_by = ( SELECT auth.uid() AS uid))));

--
-- Name: config_versions config_versions_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY config_versions_select_admin ON app.config_versions FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: conversation_participants; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.conversation_participants ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.conversations ENABLE ROW LEVEL SECURITY;

--
-- Name: conversations conversations_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY conversations_select_participant ON app.conversations FOR SELECT TO authenticated USING ((id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

--
-- Name: events; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.events ENABLE ROW LEVEL SECURITY;

--
-- Name: events events_select_readable; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY events_select_readable ON app.events FOR SELECT TO authenticated USING ((topic IN ( SELECT app.readable_topics() AS readable_topics)));

--
-- Name: identities; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.identities ENABLE ROW LEVEL SECURITY;

--
-- Name: identities identities_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY identities_select_admin ON app.identities FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: identities identities_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY identities_select_self ON app.identities FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: message_versions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.message_versions ENABLE ROW LEVEL SECURITY;

--
-- Name: message_versions message_versions_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY message_versions_select_participant ON app.message_versions FOR SELECT TO authenticated USING ((message_id IN ( SELECT m.id
   FROM app.messages m
  WHERE (m.conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)))));

--
-- Name: messages; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.messages ENABLE ROW LEVEL SECURITY;

--
-- Name: messages messages_insert_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY messages_insert_participant ON app.messages FOR INSERT TO authenticated WITH CHECK (((sender_id = ( SELECT auth.uid() AS uid)) AND app.is_participant(conversation_id)));

--
-- Name: messages messages_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY messages_select_participant ON app.messages FOR SELECT TO authenticated USING ((conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

--
-- Name: messages messages_update_author; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY messages_update_author ON app.messages FOR UPDATE TO authenticated USING (((sender_id = ( SELECT auth.uid() AS uid)) AND (deleted_at IS NULL) AND ( SELECT app.has_role('SUBSCRIBER'::app.user_role) AS has_role))) WITH CHECK ((sender_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_batches; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notification_batches ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_batches notification_batches_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_batches_select_admin ON app.notification_batches FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: notification_counters; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notification_counters ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_counters notification_counters_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_counters_select_own ON app.notification_counters FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_preferences; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notification_preferences ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_preferences notification_preferences_insert_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_preferences_insert_own ON app.notification_preferences FOR INSERT TO authenticated WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_preferences notification_preferences_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_preferences_select_own ON app.notification_preferences FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notification_preferences notification_preferences_update_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notification_preferences_update_own ON app.notification_preferences FOR UPDATE TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: notifications; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.notifications ENABLE ROW LEVEL SECURITY;

--
-- Name: notifications notifications_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notifications_select_own ON app.notifications FOR SELECT TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND inbox));

--
-- Name: notifications notifications_update_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY notifications_update_own ON app.notifications FOR UPDATE TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND inbox)) WITH CHECK (((user_id = ( SELECT auth.uid() AS uid)) AND inbox));

--
-- Name: conversation_participants participants_select_participant; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY participants_select_participant ON app.conversation_participants FOR SELECT TO authenticated USING ((conversation_id IN ( SELECT app.my_conversation_ids() AS my_conversation_ids)));

--
-- Name: conversation_participants participants_update_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY participants_update_self ON app.conversation_participants FOR UPDATE TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid))) WITH CHECK ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: push_devices; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.push_devices ENABLE ROW LEVEL SECURITY;

--
-- Name: push_devices push_devices_select_own; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY push_devices_select_own ON app.push_devices FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: role_changes; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.role_changes ENABLE ROW LEVEL SECURITY;

--
-- Name: role_changes role_changes_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY role_changes_select_admin ON app.role_changes FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: role_changes role_changes_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY role_changes_select_self ON app.role_changes FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: security_events; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.security_events ENABLE ROW LEVEL SECURITY;

--
-- Name: security_events security_events_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY security_events_select_admin ON app.security_events FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: sessions; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.sessions ENABLE ROW LEVEL SECURITY;

--
-- Name: sessions sessions_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY sessions_select_admin ON app.sessions FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: sessions sessions_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY sessions_select_self ON app.sessions FOR SELECT TO authenticated USING ((user_id = ( SELECT auth.uid() AS uid)));

--
-- Name: sessions sessions_update_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY sessions_update_self ON app.sessions FOR UPDATE TO authenticated USING (((user_id = ( SELECT auth.uid() AS uid)) AND (revoked_at IS NULL))) WITH CHECK (((user_id = ( SELECT auth.uid() AS uid)) AND (revoked_at IS NOT NULL)));

--
-- Name: users; Type: ROW SECURITY; Schema: app; Owner: -
--

ALTER TABLE app.users ENABLE ROW LEVEL SECURITY;

--
-- Name: users users_select_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_select_admin ON app.users FOR SELECT TO authenticated USING (( SELECT app.is_admin() AS is_admin));

--
-- Name: users users_select_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_select_self ON app.users FOR SELECT TO authenticated USING ((id = ( SELECT auth.uid() AS uid)));

--
-- Name: users users_update_admin; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_update_admin ON app.users FOR UPDATE TO authenticated USING (( SELECT app.is_admin() AS is_admin)) WITH CHECK (( SELECT app.is_admin() AS is_admin));

--
-- Name: users users_update_self; Type: POLICY; Schema: app; Owner: -
--

CREATE POLICY users_update_self ON app.users FOR UPDATE TO authenticated USING ((id = ( SELECT auth.uid() AS uid))) WITH CHECK ((id = ( SELECT auth.uid() AS uid)));

--
-- Name: idempotency_keys; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.idempotency_keys ENABLE ROW LEVEL SECURITY;

--
-- Name: jobs; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.jobs ENABLE ROW LEVEL SECURITY;

--
-- Name: magic_links; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.magic_links ENABLE ROW LEVEL SECURITY;

--
-- Name: message_digests; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.message_digests ENABLE ROW LEVEL SECURITY;

--
-- Name: message_digests_pending; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.message_digests_pending ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_batch_chunks; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.notification_batch_chunks ENABLE ROW LEVEL SECURITY;

--
-- Name: notification_deliveries; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.notification_deliveries ENABLE ROW LEVEL SECURITY;

--
-- Name: rate_limits; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.rate_limits ENABLE ROW LEVEL SECURITY;

--
-- Name: refresh_tokens; Type: ROW SECURITY; Schema: app_private; Owner: -
--

ALTER TABLE app_private.refresh_tokens ENABLE ROW LEVEL SECURITY;

--
-- Name: SCHEMA app; Type: ACL; Schema: -; Owner: -
--

GRANT USAGE ON SCHEMA app TO anon;
GRANT USAGE ON SCHEMA app TO authenticated;
GRANT USAGE ON SCHEMA app TO service_role;

--
-- Name: TYPE conversation_type; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.conversation_type TO authenticated;

--
-- Name: TYPE notification_batch_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.notification_batch_status TO authenticated;

--
-- Name: TYPE notification_priority; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.notification_priority TO authenticated;

--
-- Name: TYPE notification_type; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.notification_type TO authenticated;

--
-- Name: TYPE push_platform; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.push_platform TO authenticated;

--
-- Name: TYPE security_severity; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.security_severity TO anon;
GRANT ALL ON TYPE app.security_severity TO authenticated;

--
-- Name: TYPE user_role; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.user_role TO anon;
GRANT ALL ON TYPE app.user_role TO authenticated;

--
-- Name: TYPE user_status; Type: ACL; Schema: app; Owner: -
--

GRANT ALL ON TYPE app.user_status TO anon;
GRANT ALL ON TYPE app.user_status TO authenticated;

--
-- Name: FUNCTION add_participants(target_conversation_id uuid, user_ids uuid[]); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.add_participants(target_conversation_id uuid, user_ids uuid[]) TO authenticated;

--
-- Name: FUNCTION admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) FROM PUBLIC;
GRANT ALL ON FUNCTION app.admin_messaging_stats(bucket text, range_from timestamp with time zone, range_to timestamp with time zone) TO authenticated;

--
-- Name: TABLE attachments; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.uploader_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(uploader_id) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.conversation_id; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(conversation_id) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.message_id; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(message_id) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.name; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(name) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.content_type; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(content_type) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.size; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(size) ON TABLE app.attachments TO authenticated;

--
-- Name: COLUMN attachments.storage_key; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(storage_key) ON TABLE app.attachments TO authenticated;

--
-- Name: FUNCTION attachment_json(a app.attachments); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.attachment_json(a app.attachments) FROM PUBLIC;
GRANT ALL ON FUNCTION app.attachment_json(a app.attachments) TO authenticated;

--
-- Name: FUNCTION can_read_topic(topic text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.can_read_topic(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_read_topic(topic text) TO authenticated;

--
-- Name: FUNCTION can_write_topic(topic text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.can_write_topic(topic text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.can_write_topic(topic text) TO authenticated;

--
-- Name: TABLE role_changes; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.role_changes TO authenticated;

--
-- Name: FUNCTION change_user_role(target_user_id uuid, new_role app.user_role, change_reason text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.change_user_role(target_user_id uuid, new_role app.user_role, change_reason text) TO authenticated;

--
-- Name: FUNCTION claim_idempotency_key(idempotency_key text, key_scope text, body_hash text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.claim_idempotency_key(idempotency_key text, key_scope text, body_hash text) TO authenticated;

--
-- Name: FUNCTION config_int(section text, key text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.config_int(section text, key text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.config_int(section text, key text) TO authenticated;

--
-- Name: FUNCTION conversation_profiles(conversation_ids uuid[]); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) FROM PUBLIC;
GRANT ALL ON FUNCTION app.conversation_profiles(conversation_ids uuid[]) TO authenticated;

--
-- Name: FUNCTION create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_conversation(conversation_type app.conversation_type, participant_ids uuid[], conversation_title text) TO authenticated;

--
-- Name: FUNCTION create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_notification(target_user_id uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority) TO authenticated;

--
-- Name: FUNCTION create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.create_notification_batch(audience jsonb, notification jsonb, channels text[], idempotency_key text, request_hash text) TO authenticated;

--
-- Name: FUNCTION current_user_role(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.current_user_role() FROM PUBLIC;
GRANT ALL ON FUNCTION app.current_user_role() TO anon;
GRANT ALL ON FUNCTION app.current_user_role() TO authenticated;

--
-- Name: FUNCTION delete_message(target_message_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.delete_message(target_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_message(target_message_id uuid) TO authenticated;

--
-- Name: FUNCTION delete_notification(target_notification_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.delete_notification(target_notification_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.delete_notification(target_notification_id uuid) TO authenticated;

--
-- Name: FUNCTION edit_message(target_message_id uuid, new_content text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.edit_message(target_message_id uuid, new_content text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.edit_message(target_message_id uuid, new_content text) TO authenticated;

--
-- Name: FUNCTION effective_config(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.effective_config() FROM PUBLIC;
GRANT ALL ON FUNCTION app.effective_config() TO authenticated;

--
-- Name: FUNCTION has_role(required app.user_role); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.has_role(required app.user_role) FROM PUBLIC;
GRANT ALL ON FUNCTION app.has_role(required app.user_role) TO anon;
GRANT ALL ON FUNCTION app.has_role(required app.user_role) TO authenticated;

--
-- Name: FUNCTION is_admin(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.is_admin() FROM PUBLIC;
GRANT ALL ON FUNCTION app.is_admin() TO anon;
GRANT ALL ON FUNCTION app.is_admin() TO authenticated;

--
-- Name: FUNCTION is_participant(target_conversation_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.is_participant(target_conversation_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.is_participant(target_conversation_id uuid) TO authenticated;

--
-- Name: FUNCTION mark_read(target_message_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.mark_read(target_message_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.mark_read(target_message_id uuid) TO authenticated;

--
-- Name: TABLE messages; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.conversation_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(conversation_id) ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.sender_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(sender_id) ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.content; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(content),UPDATE(content) ON TABLE app.messages TO authenticated;

--
-- Name: COLUMN messages.reply_to_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(reply_to_id) ON TABLE app.messages TO authenticated;

--
-- Name: FUNCTION message_json(m app.messages); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.message_json(m app.messages) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_json(m app.messages) TO authenticated;

--
-- Name: FUNCTION message_object(m app.messages, attachments jsonb); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.message_object(m app.messages, attachments jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.message_object(m app.messages, attachments jsonb) TO authenticated;

--
-- Name: FUNCTION my_conversation_ids(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.my_conversation_ids() FROM PUBLIC;
GRANT ALL ON FUNCTION app.my_conversation_ids() TO authenticated;

--
-- Name: FUNCTION notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_analytics(range_from timestamp with time zone, range_to timestamp with time zone, bucket text, only_type app.notification_type) TO authenticated;

--
-- Name: FUNCTION notification_batch_progress(target_batch_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_batch_progress(target_batch_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_batch_progress(target_batch_id uuid) TO authenticated;

--
-- Name: TABLE notifications; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notifications TO authenticated;

--
-- Name: COLUMN notifications.read_at; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(read_at) ON TABLE app.notifications TO authenticated;

--
-- Name: FUNCTION notification_json(n app.notifications); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_json(n app.notifications) FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_json(n app.notifications) TO authenticated;

--
-- Name: FUNCTION notification_preferences_document(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.notification_preferences_document() FROM PUBLIC;
GRANT ALL ON FUNCTION app.notification_preferences_document() TO authenticated;

--
-- Name: FUNCTION public_config(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.public_config() FROM PUBLIC;
GRANT ALL ON FUNCTION app.public_config() TO anon;
GRANT ALL ON FUNCTION app.public_config() TO authenticated;

--
-- Name: FUNCTION readable_topics(); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.readable_topics() FROM PUBLIC;
GRANT ALL ON FUNCTION app.readable_topics() TO authenticated;

--
-- Name: FUNCTION register_push_device(device_token text, device_platform app.push_platform, name text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.register_push_device(device_token text, device_platform app.push_platform, name text) TO authenticated;

--
-- Name: FUNCTION remove_participant(target_conversation_id uuid, target_user_id uuid); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) FROM PUBLIC;
GRANT ALL ON FUNCTION app.remove_participant(target_conversation_id uuid, target_user_id uuid) TO authenticated;

--
-- Name: FUNCTION send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.send_message(target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) TO authenticated;

--
-- Name: FUNCTION send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) FROM PUBLIC;
GRANT ALL ON FUNCTION app.send_typing(target_conversation_id uuid, is_typing boolean, throttle_ms integer) TO authenticated;

--
-- Name: FUNCTION store_idempotent_response(idempotency_key text, response jsonb); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.store_idempotent_response(idempotency_key text, response jsonb) TO authenticated;

--
-- Name: FUNCTION unregister_push_device(device_token text); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.unregister_push_device(device_token text) FROM PUBLIC;
GRANT ALL ON FUNCTION app.unregister_push_device(device_token text) TO authenticated;

--
-- Name: FUNCTION update_notification_preferences(patch jsonb); Type: ACL; Schema: app; Owner: -
--

REVOKE ALL ON FUNCTION app.update_notification_preferences(patch jsonb) FROM PUBLIC;
GRANT ALL ON FUNCTION app.update_notification_preferences(patch jsonb) TO authenticated;

--
-- Name: FUNCTION announce_batch_chunk(target_batch_id uuid, target_chunk integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.announce_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

--
-- Name: FUNCTION assign_message_seq(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.assign_message_seq() FROM PUBLIC;

--
-- Name: FUNCTION claim_jobs(kinds text[], worker text, batch integer, lease interval); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.claim_jobs(kinds text[], worker text, batch integer, lease interval) FROM PUBLIC;

--
-- Name: FUNCTION claim_message_digest(target_conversation_id uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.claim_message_digest(target_conversation_id uuid) FROM PUBLIC;

--
-- Name: FUNCTION collect_orphan_attachments(older_than interval); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.collect_orphan_attachments(older_than interval) FROM PUBLIC;

--
-- Name: FUNCTION complete_job(job_id bigint, token uuid); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.complete_job(job_id bigint, token uuid) FROM PUBLIC;

--
-- Name: FUNCTION config_defaults(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.config_defaults() FROM PUBLIC;

--
-- Name: FUNCTION conversation_notifications(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.conversation_notifications() FROM PUBLIC;

--
-- Name: FUNCTION conversation_read_notifications(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.conversation_read_notifications() FROM PUBLIC;

--
-- Name: FUNCTION count_new_notifications(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.count_new_notifications() FROM PUBLIC;

--
-- Name: FUNCTION digest_conversation(target_conversation_id uuid, upto_seq bigint); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) FROM PUBLIC;

--
-- Name: FUNCTION emit_ephemeral(topic text, event text, payload jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.emit_ephemeral(topic text, event text, payload jsonb) FROM PUBLIC;

--
-- Name: FUNCTION emit_event(topic text, event text, payload jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.emit_event(topic text, event text, payload jsonb) FROM PUBLIC;

--
-- Name: FUNCTION enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.enqueue_job(kind text, payload jsonb, run_at timestamp with time zone, dedupe_key text, max_attempts integer) FROM PUBLIC;

--
-- Name: FUNCTION fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.fail_job(job_id bigint, token uuid, error text, retry_after interval, permanent boolean) FROM PUBLIC;

--
-- Name: FUNCTION finish_batch_chunk(target_batch_id uuid, target_chunk integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.finish_batch_chunk(target_batch_id uuid, target_chunk integer) FROM PUBLIC;

--
-- Name: FUNCTION guard_attachment_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_attachment_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_message_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_message_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_notification_read(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_notification_read() FROM PUBLIC;

--
-- Name: FUNCTION guard_read_mark(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_read_mark() FROM PUBLIC;

--
-- Name: FUNCTION guard_session_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_session_update() FROM PUBLIC;

--
-- Name: FUNCTION guard_user_update(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.guard_user_update() FROM PUBLIC;

--
-- Name: FUNCTION hit_rate_limit(bucket_key text, window_seconds integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.hit_rate_limit(bucket_key text, window_seconds integer) FROM PUBLIC;

--
-- Name: TABLE users; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.name; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(name) ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.image; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(image) ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.role; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(role) ON TABLE app.users TO authenticated;

--
-- Name: COLUMN users.status; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(status) ON TABLE app.users TO authenticated;

--
-- Name: FUNCTION in_audience(u app.users, audience jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.in_audience(u app.users, audience jsonb) FROM PUBLIC;

--
-- Name: FUNCTION inbox_page_as(claims text, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.inbox_page_as(claims text, only_type app.notification_type, only_unread boolean, pattern text, since timestamp with time zone, after_time timestamp with time zone, after_id uuid, page_limit integer) FROM PUBLIC;

--
-- Name: FUNCTION job_backoff(attempts integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.job_backoff(attempts integer) FROM PUBLIC;

--
-- Name: FUNCTION jsonb_merge_deep(base jsonb, patch jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.jsonb_merge_deep(base jsonb, patch jsonb) FROM PUBLIC;

--
-- Name: FUNCTION mark_message_digest(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.mark_message_digest() FROM PUBLIC;

--
-- Name: FUNCTION message_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.message_events() FROM PUBLIC;

--
-- Name: FUNCTION next_job_at(kinds text[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.next_job_at(kinds text[]) FROM PUBLIC;

--
-- Name: FUNCTION notification_deleted_event(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_deleted_event() FROM PUBLIC;

--
-- Name: FUNCTION notification_read_event(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_read_event() FROM PUBLIC;

--
-- Name: FUNCTION notification_type_defaults(notification_type app.notification_type); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notification_type_defaults(notification_type app.notification_type) FROM PUBLIC;

--
-- Name: FUNCTION notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify(recipient uuid, notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) FROM PUBLIC;

--
-- Name: FUNCTION notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify_many(recipients uuid[], notification_type app.notification_type, title text, body text, data jsonb, priority app.notification_priority, collapse_key text) FROM PUBLIC;

--
-- Name: FUNCTION notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.notify_rows(notification_type app.notification_type, recipients uuid[], titles text[], bodies text[], datas jsonb[], priority app.notification_priority, collapse_key text) FROM PUBLIC;

--
-- Name: FUNCTION participant_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.participant_events() FROM PUBLIC;

--
-- Name: FUNCTION prune_auth_state(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_auth_state() FROM PUBLIC;

--
-- Name: FUNCTION prune_events(keep_days integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_events(keep_days integer) FROM PUBLIC;

--
-- Name: FUNCTION prune_idempotency_keys(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_idempotency_keys() FROM PUBLIC;

--
-- Name: FUNCTION prune_jobs(done_for interval, dead_for interval); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_jobs(done_for interval, dead_for interval) FROM PUBLIC;

--
-- Name: FUNCTION prune_logs(keep_days integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.prune_logs(keep_days integer) FROM PUBLIC;

--
-- Name: FUNCTION queue_storage_deletion(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.queue_storage_deletion() FROM PUBLIC;

--
-- Name: FUNCTION quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.quiet_until(quiet_start time without time zone, quiet_end time without time zone, time_zone text, at timestamp with time zone) FROM PUBLIC;

--
-- Name: FUNCTION read_mark_events(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.read_mark_events() FROM PUBLIC;

--
-- Name: FUNCTION record_deliveries(outcomes jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_deliveries(outcomes jsonb) FROM PUBLIC;

--
-- Name: FUNCTION record_role_change(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.record_role_change() FROM PUBLIC;

--
-- Name: FUNCTION retry_dead_job(job_id bigint); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.retry_dead_job(job_id bigint) FROM PUBLIC;

--
-- Name: FUNCTION role_change_notification(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.role_change_notification() FROM PUBLIC;

--
-- Name: FUNCTION send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.send_message_as(claims text, target_conversation_id uuid, message_content text, reply_to uuid, attachment_ids uuid[], idempotency_key text, request_hash text) FROM PUBLIC;

--
-- Name: FUNCTION take_deliveries(notification_ids uuid[]); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.take_deliveries(notification_ids uuid[]) FROM PUBLIC;

--
-- Name: FUNCTION touch_push_device(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.touch_push_device() FROM PUBLIC;

--
-- Name: FUNCTION touch_updated_at(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.touch_updated_at() FROM PUBLIC;

--
-- Name: FUNCTION validate_notification_preferences(); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.validate_notification_preferences() FROM PUBLIC;

--
-- Name: FUNCTION wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.wants(choices jsonb, notification_type app.notification_type, channel text, defaults jsonb) FROM PUBLIC;

--
-- Name: FUNCTION write_notification_batch(target_batch_id uuid, chunk_size integer); Type: ACL; Schema: app_private; Owner: -
--

REVOKE ALL ON FUNCTION app_private.write_notification_batch(target_batch_id uuid, chunk_size integer) FROM PUBLIC;

--
-- Name: TABLE access_logs; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.access_logs TO authenticated;

--
-- Name: TABLE config_versions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.version; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(version) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.config; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(config) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.diff; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(diff) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.reason; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(reason) ON TABLE app.config_versions TO authenticated;

--
-- Name: COLUMN config_versions.changed_by; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(changed_by) ON TABLE app.config_versions TO authenticated;

--
-- Name: TABLE conversation_participants; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.conversation_participants TO authenticated;

--
-- Name: COLUMN conversation_participants.last_read_seq; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(last_read_seq) ON TABLE app.conversation_participants TO authenticated;

--
-- Name: COLUMN conversation_participants.last_read_message_id; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(last_read_message_id) ON TABLE app.conversation_participants TO authenticated;

--
-- Name: COLUMN conversation_participants.last_read_at; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(last_read_at) ON TABLE app.conversation_participants TO authenticated;

--
-- Name: TABLE conversations; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.conversations TO authenticated;

--
-- Name: TABLE events; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.events TO authenticated;

--
-- Name: TABLE identities; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.identities TO authenticated;

--
-- Name: TABLE message_versions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.message_versions TO authenticated;

--
-- Name: TABLE notification_batches; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notification_batches TO authenticated;

--
-- Name: TABLE notification_counters; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notification_counters TO authenticated;

--
-- Name: TABLE notification_preferences; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.user_id; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(user_id) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.types; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(types),UPDATE(types) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.quiet_start; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(quiet_start),UPDATE(quiet_start) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.quiet_end; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(quiet_end),UPDATE(quiet_end) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN notification_preferences.quiet_time_zone; Type: ACL; Schema: app; Owner: -
--

GRANT INSERT(quiet_time_zone),UPDATE(quiet_time_zone) ON TABLE app.notification_preferences TO authenticated;

--
-- Name: COLUMN push_devices.id; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(id) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.user_id; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(user_id) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.platform; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(platform) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.device_name; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(device_name) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.created_at; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(created_at) ON TABLE app.push_devices TO authenticated;

--
-- Name: COLUMN push_devices.updated_at; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT(updated_at) ON TABLE app.push_devices TO authenticated;

--
-- Name: TABLE security_events; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.security_events TO authenticated;

--
-- Name: TABLE sessions; Type: ACL; Schema: app; Owner: -
--

GRANT SELECT ON TABLE app.sessions TO authenticated;

--
-- Name: COLUMN sessions.revoked_at; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(revoked_at) ON TABLE app.sessions TO authenticated;

--
-- Name: COLUMN sessions.revoked_reason; Type: ACL; Schema: app; Owner: -
--

GRANT UPDATE(revoked_reason) ON TABLE app.sessions TO authenticated;

--
-- PostgreSQL database dump complete
--

--
-- Policies on realtime.messages (the table is hosted Supabase's; locally sql/local/ makes it)
--

CREATE POLICY realtime_messages_insert_topic ON realtime.messages AS PERMISSIVE FOR INSERT TO authenticated
  WITH CHECK (((topic = ( SELECT realtime.topic() AS topic)) AND (extension = ANY (ARRAY['broadcast'::text, 'presence'::text])) AND ( SELECT app.can_write_topic(( SELECT realtime.topic() AS topic)) AS can_write_topic)));
CREATE POLICY realtime_messages_select_topic ON realtime.messages AS PERMISSIVE FOR SELECT TO authenticated
  USING (((topic = ( SELECT realtime.topic() AS topic)) AND ( SELECT app.can_read_topic(( SELECT realtime.topic() AS topic)) AS can_read_topic)));

--
-- pg_cron jobs (name, schedule, command), created by the migrations
--

-- agora-collect-orphan-attachments  23 * * * *  select app_private.collect_orphan_attachments()
-- agora-prune-auth-state  */15 * * * *  select app_private.prune_auth_state()
-- agora-prune-events  */10 * * * *  select app_private.prune_events(3)
-- agora-prune-idempotency-keys  */10 * * * *  select app_private.prune_idempotency_keys()
-- agora-prune-jobs  41 * * * *  select app_private.prune_jobs()
-- agora-prune-logs  17 3 * * *  select app_private.prune_logs(90)
