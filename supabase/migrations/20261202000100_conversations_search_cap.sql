/*
 * Conversation search (GET /api/conversations?search=, docs/conversations.md) between its two
 * plans (issue 30): a term matching more than 1,000 participations (a "rarer" name at ten times
 * the people: `person 12` is 1,111 people, some 3,500 participations) left the trigram path and
 * walked all the caller's conversations newest first, testing each; with 10,000 conversations and
 * a handful of matches that walk read them all (229 ms). The trigram path now takes terms of up to
 * 5,000 participations and titles: a primary-key probe per candidate (a few milliseconds for
 * 5,000), never more than the walk's worst case for a caller with thousands of conversations; the
 * walk is kept for the common terms (it stops after the page, their matches being dense).
 *
 * Tables touched: none. Nothing destructive; the function's signature and results are unchanged.
 */

create or replace function app.search_my_conversations(
  pattern text,
  conversation_type app.conversation_type default null,
  after_activity timestamptz default null,
  after_id uuid default null,
  max_rows integer default 51
) returns table (conversation_id uuid)
language plpgsql stable security definer set search_path = '' as $$
declare
  me uuid := auth.uid();
  cap constant integer := 5000;
  by_name uuid[];
  by_title uuid[];
begin
  if me is null or not app.has_role('SUBSCRIBER') or pattern is null then
    return;
  end if;
  -- Through the trigram indexes: conversations with someone else whose name matches, and
  -- titles that match, each up to `cap`.
  by_name := array(
    select o.conversation_id from app.users u
    join app.conversation_participants o on o.user_id = u.id
    where lower(u.name) like pattern and u.id <> me
    limit cap + 1);
  by_title := array(
    select c.id from app.conversations c
    where lower(c.title) like pattern and c.title is not null
    limit cap + 1);
  if cardinality(by_name) <= cap and cardinality(by_title) <= cap then
    -- A rarer term: the caller's rows among those candidates (a primary-key probe each), newest
    -- first.
    return query
      select p.conversation_id
      from (select distinct x from unnest(by_name || by_title) x) cand
      join app.conversation_participants p on p.conversation_id = cand.x and p.user_id = me
      join app.conversations c on c.id = p.conversation_id
      where (conversation_type is null or c.type = conversation_type)
        and (after_id is null or (p.last_activity_at, p.conversation_id) < (after_activity, after_id))
      order by p.last_activity_at desc, p.conversation_id desc
      limit max_rows;
    return;
  end if;
  -- A common term: the caller's conversations newest first (their index), each tested on its
  -- own (`offset 0` keeps the test per row, so the walk stops when the page is full).
  return query
    select p.conversation_id from app.conversation_participants p
    cross join lateral (
      select 1 from app.conversations c
      where c.id = p.conversation_id
        and (conversation_type is null or c.type = conversation_type)
        and (lower(coalesce(c.title, '')) like pattern or exists (
          select 1 from app.conversation_participants o join app.users u on u.id = o.user_id
          where o.conversation_id = p.conversation_id and o.user_id <> me and lower(u.name) like pattern
          offset 0))
      offset 0) matched
    where p.user_id = me
      and (after_id is null or (p.last_activity_at, p.conversation_id) < (after_activity, after_id))
    order by p.last_activity_at desc, p.conversation_id desc
    limit max_rows;
end;
$$;

comment on function app.search_my_conversations(text, app.conversation_type, timestamptz, uuid, integer) is
  'The ids of a page of the caller''s conversations whose title or another participant''s name is like the pattern (lowercase, `%` around), newest activity first, after the (activity, id) given. A term matching at most 5,000 participations and titles is found through the trigram indexes of names and titles (a primary-key probe per candidate); a commoner one walks the caller''s conversations newest first until the page is full. security definer: it reads other people''s names and memberships; it returns only the caller''s own conversations.';

revoke execute on all functions in schema app, app_private from public;
