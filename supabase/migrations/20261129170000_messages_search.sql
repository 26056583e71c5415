/*
 * Message search (GET /api/messages/search, functions/api/messaging/search.queries.ts): words,
 * prefixes and substrings of three characters or more, in any script (German with umlauts,
 * Japanese and Chinese written without spaces), in the conversations the caller is in now.
 * docs/search.md says why this index and this plan.
 *
 * - A GIN trigram index on lower(content): `lower(content) like '%term%'` for every term finds the
 *   candidates through the index whatever the language, since trigrams need no word boundaries.
 *   It covers every row (not only the messages that are not tombstones): the planner uses the
 *   statistics ANALYZE gathers on an index expression only for an index without a predicate, and
 *   with them it sees how common a term is and ANDs the index with the conversations' index
 *   (a tombstone's empty content has no trigrams, so it costs the index nothing).
 * - app.search_messages, security definer: it restricts the search to the caller's current
 *   conversations itself (as an array of ids, from app.my_conversation_ids), because under RLS
 *   the `like` (not leakproof) may not be used as an index condition ahead of the policy, and a
 *   search would read every message of the caller's conversations.
 *
 * Tables touched: app.messages gains an index (built once over the existing messages). Nothing
 * destructive.
 */

-- Message search: lower(content) like '%term%' for every term of a search (app.search_messages).
create index messages_content_trgm on app.messages
  using gin (lower(content) extensions.gin_trgm_ops);

create function app.search_messages(
  terms text[],
  in_conversation uuid default null,
  after_score integer default null,
  after_created_at timestamptz default null,
  after_id uuid default null,
  max_rows integer default 51
)
returns table (message_id uuid, score integer, created_at timestamptz)
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  ids uuid[];
  term_filter text;
  words tsquery[];
  prefixes tsquery[];
begin
  if coalesce(cardinality(terms), 0) not between 1 and 8
     or exists (select 1 from unnest(terms) t where t is null or char_length(t) < 3 or char_length(t) > 200) then
    raise exception 'a search has 1 to 8 terms of 3 to 200 characters' using errcode = 'AG400';
  end if;
  if max_rows is null or max_rows not between 1 and 201 then
    raise exception 'max_rows is 1 to 201' using errcode = 'AG400';
  end if;
  -- What the caller may read now: the conversations they are in (none for a user below
  -- SUBSCRIBER or suspended, see app.my_conversation_ids). Someone who left is no longer in it.
  ids := array(select c from app.my_conversation_ids() c);
  if in_conversation is not null then
    if not (in_conversation = any(ids)) then
      raise exception 'conversation not found' using errcode = 'AG404';
    end if;
    ids := array[in_conversation];
  end if;
  if cardinality(ids) = 0 then
    return;
  end if;
  -- One `like` per term, and the conversation ids, as literals: the planner then estimates each
  -- term from the index expression's statistics and the ids by their number, and picks the
  -- trigram index alone (a rare term), or ANDed with the conversations' index (a common one).
  -- `\`, `%` and `_` in a term are taken literally.
  select string_agg(format('and lower(m.content) like %L',
           '%' || replace(replace(replace(lower(t), '\', '\\'), '%', '\%'), '_', '\_') || '%'), ' '),
         array_agg(case when numnode(plainto_tsquery('simple', t)) > 0 then plainto_tsquery('simple', t) end),
         array_agg(case when numnode(plainto_tsquery('simple', t)) > 0
                   then (plainto_tsquery('simple', t)::text || ':*')::tsquery end)
    into term_filter, words, prefixes
    from unnest(terms) t;
  -- Best match first: per term, 2 when it is a whole word of the message (full-text search with
  -- the `simple` configuration: lowercased, no stemming, any language), 1 when it starts a word,
  -- 0 when it is inside one (CJK text has no spaces, so its terms are mostly inside a word);
  -- then newest. The page continues after the (score, created_at, id) of the last row shown.
  return query execute format($q$
    select m.id, s.score, m.created_at
    from app.messages m
    cross join lateral (
      select coalesce(sum(case when v @@ w.word then 2 when v @@ w.prefix then 1 else 0 end), 0)::integer
      -- offset 0: one to_tsvector per message, not one per use of v
      from (select to_tsvector('simple', m.content) as v offset 0) tv, unnest($5, $6) as w(word, prefix)
    ) as s(score)
    where m.conversation_id = any(%L::uuid[]) and m.deleted_at is null %s
      and ($3::uuid is null or (s.score, m.created_at, m.id) < ($1, $2, $3))
    order by s.score desc, m.created_at desc, m.id desc
    limit $4
  $q$, ids, term_filter)
  using after_score, after_created_at, after_id, max_rows, words, prefixes;
end;
$$;

comment on function app.search_messages(text[], uuid, integer, timestamptz, uuid, integer) is
  'Message search for GET /api/messages/search: the messages (not tombstones) of the caller''s current conversations, or of one of them (AG404 when the caller is not in it), whose lowercased content contains every term (3 to 200 characters each, at most 8), best match first (per term: a whole word 2, a word''s start 1, inside a word 0; full-text search with the simple configuration), then newest; a page starts after the (score, created_at, id) given. Returns ids only: the caller reads the messages themselves under RLS. security definer so that the trigram index serves the `like` (under RLS a non-leakproof condition may not run before the policy, so no index could take it); the restriction to the caller''s conversations is explicit here, from app.my_conversation_ids. Each call is planned with its terms (dynamic SQL, literals), since the best plan depends on how common they are.';

grant execute on function app.search_messages(text[], uuid, integer, timestamptz, uuid, integer) to authenticated;

revoke execute on all functions in schema app, app_private from public;
