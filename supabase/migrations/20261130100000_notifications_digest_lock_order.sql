-- A digest and a send in the same conversation could deadlock (seen in tests/realtime/resume.test.ts
-- under load: 409 on a send): the send locks the participants' rows in user order to count their
-- unread messages (20261130030000), the digest took a share lock on the same rows in whatever order
-- the scan met them. The digest now takes them in user order too.

create or replace function app_private.digest_conversation(target_conversation_id uuid, upto_seq bigint) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    SET plan_cache_mode TO 'force_generic_plan'
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
  -- Read marks wait for this digest: one moved meanwhile would not see what it tells of. The
  -- rows are locked in user order, as a send locks them (app_private.count_unread_message), so a
  -- digest and a send never hold one each while waiting for the other's.
  perform 1 from app.conversation_participants p
  where p.conversation_id = target_conversation_id order by p.user_id for share;

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
  'Second half of the notifications.digest job: tells each participant of the conversation''s messages of others after the last digest and up to upto_seq (from claim_message_digest) that they have not read, in one app_private.notify_rows call: under the conversation''s collapse key, one unread MESSAGE notification per participant whose count adds the new messages and whose messageId and preview are the newest one''s (a participant without one gets a new notification, its event and push). Digests of a conversation take turns (its message_digests row); read marks wait for it (the participants'' rows are share-locked in user order, the order a send locks them in, so the two never deadlock). Returns how many participants were told. security definer: it writes other users'' inboxes.';
