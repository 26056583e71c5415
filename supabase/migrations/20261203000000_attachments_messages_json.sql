/*
 * Pages of messages as the API shows them, in one call (issue 30: the long group's first page at
 * ten times the data; issue 29: message search). app.message_json built each row in its own call:
 * a SQL function with subqueries and a pinned search_path is never inlined, so every row paid a
 * function call and an executor start for it and for app.message_extras and
 * app.message_reactions_json under it, about 0.5 ms a row (26 ms for a page of 51 messages, when
 * the same subqueries in one query cost 7 ms). app.messages_json takes the page's ids and builds
 * every row in one query, planned and started once.
 *
 * It is the one definition of the message's shape for readers: app.message_json (one row: edits)
 * now reads it. The send's response and the events keep app.message_object and
 * app.message_extras (their rows are built before they can be read back); the pgTAP test
 * 111-message-json checks that all of them agree.
 *
 * Tables touched: none. Nothing destructive; app.message_json's signature and results are
 * unchanged.
 */

create function app.messages_json(ids uuid[])
returns table (id uuid, conversation_id uuid, thread_id uuid, seq bigint, json jsonb)
language sql stable set search_path = '' as $$
  select m.id, m.conversation_id, m.thread_id, m.seq,
    app.message_object(m, att.list) || jsonb_build_object(
      'thread', th.thread,
      'reactions', case when m.deleted_at is null then coalesce(rx.list, '[]'::jsonb)
                        else '[]'::jsonb end,
      'senderBlocked', exists (
        select 1 from app.user_blocks b
        where b.blocker_id = (select auth.uid()) and b.blocked_id = m.sender_id))
  from unnest(ids) with ordinality as i(id, n)
  join app.messages m on m.id = i.id
  left join lateral (
    select jsonb_agg(app.attachment_json(a) order by a.created_at, a.id) as list
    from app.attachments a where a.message_id = m.id
  ) att on true
  left join lateral (
    select jsonb_build_object(
      'replyCount', t.reply_count,
      'lastReplyAt', to_char(t.last_reply_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    ) as thread
    from app.message_threads t where t.root_id = m.id and t.reply_count > 0
  ) th on true
  left join lateral (
    select jsonb_agg(jsonb_build_object('emoji', r.emoji, 'count', r.n, 'me', r.mine)
                     order by r.first_at, r.emoji) as list
    from (
      select x.emoji, count(*)::int as n,
             coalesce(bool_or(x.user_id = (select auth.uid())), false) as mine,
             min(x.created_at) as first_at
      from app.message_reactions x where x.message_id = m.id
      group by x.emoji
    ) r
  ) rx on true
  order by i.n
$$;
comment on function app.messages_json(uuid[]) is
  'The messages of ids as the API shows them, in the order of ids (RLS leaves out what the caller cannot read): attachments, thread counts, reactions (`me` for the caller) and senderBlocked, as app.message_json gives one. For pages (history, threads, search): the page''s rows are built in one query, planned and started once, instead of one function call per row (about 0.5 ms a row). Also returns each message''s conversation, thread and seq for the caller''s cursor. security invoker: a user sees only what RLS shows them.';
revoke all on function app.messages_json(uuid[]) from public;
grant execute on function app.messages_json(uuid[]) to authenticated;

create or replace function app.message_json(m app.messages) returns jsonb
language sql stable set search_path = '' as $$
  select j.json from app.messages_json(array[m.id]) j
$$;
comment on function app.message_json(app.messages) is
  'The message as the API shows it (app.messages_json of its id, the one definition of the shape): attachments, thread counts and reactions (`me` for the caller), and senderBlocked: whether the caller blocks its sender (RLS shows a block to its blocker only, so it is false for everyone else, the blocked person included). For one message (an edit''s response); a page reads app.messages_json once. Reads the message as stored, so call it after the change is made. security invoker: a user sees only what RLS shows them (null for a message they cannot read).';
