/*
 * Reactions in batches (group commit): one transaction applies many people's reactions to one
 * message (issue 29: 1,000 reactions a second on one hot message).
 *
 * app.set_reaction holds the message's advisory lock until its commit, so every commit's WAL
 * flush happened inside the lock and one message took about one change per commit latency. The
 * API now gathers the reactions that arrive for a message while its previous batch is in flight
 * (functions/api/messaging/reaction-batches.ts) and applies them with
 * app_private.set_reactions_as: one lock, one commit, one aggregate and one message.reactions
 * event per batch, under the same lock key as app.set_reaction (the two serialise together), so
 * events still carry their counts in commit order and never go backwards. Each item runs with its
 * caller's claims in a block of its own (a savepoint): its 404 or 422 is its own answer, and the
 * others' changes stand.
 *
 * Nothing destructive: one function added. app.set_reaction and app_private.set_reaction_as stay
 * (the first is the API of direct database clients; both keep their behaviour).
 */

-- API functions --------------------------------------------------------------------------------

create function app_private.set_reactions_as(target_message_id uuid, items jsonb) returns jsonb
language plpgsql
set search_path = ''
as $$
declare
  m app.messages;
  item jsonb;
  me uuid;
  reaction text;
  present boolean;
  changed integer;
  any_changed boolean := false;
  outcomes jsonb := '[]'::jsonb;
  counts jsonb;
  failed_code text;
  failed_message text;
  failed_hint text;
  failed_detail text;
begin
  -- The lock of app.set_reaction (its comment says why it comes before the first write: events
  -- are read in (xid, id) order, so ids must be handed out in lock order), then the message row
  -- in key share (a deletion in progress commits first; one that starts later waits for us).
  perform pg_advisory_xact_lock(hashtext('app.message_reactions'), hashtext(target_message_id::text));
  select * into m from app.messages where id = target_message_id for key share;
  for item in select value from jsonb_array_elements(items) loop
    begin
      -- The item's caller, for auth.uid() and app.has_role, until the next item's.
      perform set_config('request.jwt.claims', item ->> 'claims', true);
      me := auth.uid();
      reaction := item ->> 'emoji';
      present := (item ->> 'present')::boolean;
      if m.id is null or me is null or not app.has_role('SUBSCRIBER') or not exists (
        select 1 from app.conversation_participants p
        where p.conversation_id = m.conversation_id and p.user_id = me
      ) then
        raise exception 'message not found' using errcode = 'AG404';
      end if;
      if m.deleted_at is not null then
        if present then
          raise exception 'a deleted message takes no reactions' using errcode = 'AG422';
        end if;
      elsif present then
        insert into app.message_reactions (message_id, user_id, emoji, conversation_id)
        values (m.id, me, reaction, m.conversation_id)
        on conflict do nothing;
        get diagnostics changed = row_count;
        -- A new distinct emoji (nobody else has it) is the only change that can pass the limit.
        if changed > 0 and not exists (
          select 1 from app.message_reactions x
          where x.message_id = m.id and x.emoji = reaction and x.user_id <> me
        ) and (
          select count(distinct x.emoji) from app.message_reactions x where x.message_id = m.id
        ) > 20 then
          raise exception 'a message has at most 20 different reactions' using errcode = 'AG422';
        end if;
        any_changed := any_changed or changed > 0;
      else
        delete from app.message_reactions r
        where r.message_id = m.id and r.user_id = me and r.emoji = reaction;
        get diagnostics changed = row_count;
        any_changed := any_changed or changed > 0;
      end if;
      outcomes := outcomes || jsonb_build_array(jsonb_build_object('userId', me));
    exception when others then
      -- This item's changes are rolled back to its savepoint; the batch goes on.
      get stacked diagnostics failed_code = returned_sqlstate, failed_message = message_text,
        failed_hint = pg_exception_hint, failed_detail = pg_exception_detail;
      outcomes := outcomes || jsonb_build_array(jsonb_build_object('error', jsonb_build_object(
        'code', failed_code, 'message', failed_message,
        'hint', nullif(failed_hint, ''), 'detail', nullif(failed_detail, ''))));
    end;
  end loop;
  perform set_config('request.jwt.claims', '', true);
  -- One aggregate after the whole batch serves every answer and the event.
  select coalesce(jsonb_agg(e.value - 'me' order by e.n), '[]'::jsonb) into counts
  from jsonb_array_elements(app.message_reactions_json(target_message_id, null))
    with ordinality e(value, n);
  if any_changed then
    perform app_private.emit_event('conversation:' || m.conversation_id, 'message.reactions',
      jsonb_build_object('messageId', m.id, 'reactions', counts));
  end if;
  return jsonb_build_object('reactions', counts, 'items', (
    select coalesce(jsonb_agg(case when o.value ? 'error' then o.value
      else jsonb_build_object('mine', (
        select coalesce(jsonb_agg(x.emoji), '[]'::jsonb) from app.message_reactions x
        where x.message_id = target_message_id and x.user_id = (o.value ->> 'userId')::uuid))
      end order by o.n), '[]'::jsonb)
    from jsonb_array_elements(outcomes) with ordinality o(value, n)));
end;
$$;
comment on function app_private.set_reactions_as(uuid, jsonb) is
  'A batch of reactions to one message in one transaction (group commit, the API''s hot path): items is [{ claims, emoji, present }], each applied as its caller with app.set_reaction''s rules (participants at least SUBSCRIBER, else AG404; never added to a tombstone, AG422; at most 20 distinct emoji, AG422; idempotent both ways) in a block of its own, so a failing item is rolled back alone. Under app.set_reaction''s per-message lock; one message.reactions event per batch that changed anything, with the counts after it. Returns { reactions: counts after the batch, without `me`; items: per item, in order, { mine: the caller''s emoji after the batch } or { error: { code, message, hint, detail } } }. Only the API''s own role may call it: it trusts the claims it is given.';
revoke execute on function app_private.set_reactions_as(uuid, jsonb) from public;

revoke execute on all functions in schema app, app_private from public;
