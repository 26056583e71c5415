/*
 * Message search for a common word (issue 29, docs/search.md). A word in 5 % of the messages
 * ("meeting") had about 900 matches for a user in 200 of 10,000 conversations: under the line of
 * 2,000 expected matches, so app.search_messages scored them all. That built three bitmaps of
 * tens of thousands of rows (the trigram index 13 to 18 ms, the conversations' index 3 to 10) and
 * computed to_tsvector for each of the 900 (8 ms): 35 to 44 ms for the function alone.
 *
 * Now, when the top tier (every term a whole word) is expected to fill the page several times
 * over for this caller (the words index's estimate of those rows times the caller's share of the
 * messages: at least four pages), the search reads by tiers, and the top tier is found by the
 * words index and the conversations' alone: the `like` filters the rows they found (a whole word
 * contains the term) instead of ANDing in the trigram index's posting lists. Usually the top tier
 * fills the page and is the only query: 23 to 26 ms on the same data. The newest-first walk
 * (dense matches) now asks whether the walked messages are expected to hold a page of the
 * caller's matches, not only whether 1 in 100 messages match: a user in 2 % of the
 * conversations found 4 of a page of 21 there and then ran the whole query anyway.
 *
 * Both choices change only the cost: every plan gives the same rows in the same order (pgTAP 119
 * runs every case both ways).
 *
 * Tables touched: none (one function replaced).
 */

create or replace function app.search_messages(terms text[], in_conversation uuid DEFAULT NULL::uuid, after_score integer DEFAULT NULL::integer, after_created_at timestamp with time zone DEFAULT NULL::timestamp with time zone, after_id uuid DEFAULT NULL::uuid, max_rows integer DEFAULT 51) RETURNS TABLE(message_id uuid, score integer, created_at timestamp with time zone)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO ''
    AS $_$
declare
  ids uuid[];
  membership text;
  term_filter text;
  words tsquery[];
  prefixes tsquery[];
  all_words tsquery;
  any_prefix tsquery;
  ranked integer;
  top integer;
  tier integer;
  tier_filter text;
  wanted integer := max_rows;
  got integer;
  walk constant integer := 4000;
  top_at timestamptz;
  top_id uuid;
  top_known boolean := false;
  edge_at timestamptz;
  edge_id uuid;
  query text;
  plan jsonb;
  dense boolean;
  estimate float8;
  top_estimate float8 := 0;
  share float8;
  tier_terms text;
  unindexed_terms text;
  total float8;
  caller_rows float8;
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
  -- The rule of app.my_conversation_ids, but at most 1,001 ids: more are not needed (below).
  if app.has_role('SUBSCRIBER') then
    ids := array(select p.conversation_id from app.conversation_participants p
                 where p.user_id = auth.uid() limit 1001);
  else
    ids := '{}';
  end if;
  if in_conversation is not null then
    if cardinality(ids) = 0 or not exists (
      select 1 from app.conversation_participants p
      where p.conversation_id = in_conversation and p.user_id = auth.uid()
    ) then
      raise exception 'conversation not found' using errcode = 'AG404';
    end if;
    ids := array[in_conversation];
  end if;
  if cardinality(ids) = 0 then
    return;
  end if;
  -- Up to 1,000 conversations as a literal (the planner estimates it, ANDs it with the
  -- conversations' index or hashes it); more as a semi-join on the caller's participant rows,
  -- the same rows app.my_conversation_ids read (its role check passed above).
  membership := case when cardinality(ids) <= 1000
    then format('m.conversation_id = any(%L::uuid[])', ids)
    else format('m.conversation_id in (select p.conversation_id from app.conversation_participants p where p.user_id = %L::uuid)', auth.uid())
  end;
  -- One `like` per term, as literals (`\`, `%` and `_` taken literally): every match contains
  -- every term. Words and prefixes: full-text search with the `simple` configuration (a term
  -- without a word, only punctuation, scores 0).
  select string_agg(format('and lower(m.content) like %L',
           '%' || replace(replace(replace(lower(t), '\', '\\'), '%', '\%'), '_', '\_') || '%'), ' '),
         -- The same conditions in a form no index matches (`|| ''` changes no value): for the
         -- top tier, whose whole words the words index finds more cheaply (below).
         string_agg(format('and (lower(m.content) || '''') like %L',
           '%' || replace(replace(replace(lower(t), '\', '\\'), '%', '\%'), '_', '\_') || '%'), ' '),
         array_agg(case when numnode(plainto_tsquery('simple', t)) > 0 then plainto_tsquery('simple', t) end),
         array_agg(case when numnode(plainto_tsquery('simple', t)) > 0
                   then (plainto_tsquery('simple', t)::text || ':*')::tsquery end)
    into term_filter, unindexed_terms, words, prefixes
    from unnest(terms) t;
  -- The terms that can score (with a word), and what every tier's condition is made of: all of
  -- them whole words (the top tier), any of them starting a word (any tier above 0).
  ranked := 0;
  for i in 1 .. cardinality(terms) loop
    if words[i] is not null then
      ranked := ranked + 1;
      all_words := case when all_words is null then words[i] else all_words && words[i] end;
      any_prefix := case when any_prefix is null then prefixes[i] else any_prefix || prefixes[i] end;
    end if;
  end loop;
  top := 2 * ranked;
  -- How many messages match? The planner's estimates (planning only, nothing run): of the rows
  -- containing every term, from the trigram index expression's statistics, and of the rows
  -- holding every term as a whole word (the top tier), from the words index's.
  execute format('explain (format json) select 1 from app.messages m where true %s', term_filter)
    into plan;
  estimate := (plan->0->'Plan'->>'Plan Rows')::float8;
  total := greatest((select c.reltuples from pg_catalog.pg_class c where c.oid = 'app.messages'::regclass), 1);
  if ranked > 0 then
    execute format('explain (format json) select 1 from app.messages m where to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', all_words)
      into plan;
    top_estimate := least((plan->0->'Plan'->>'Plan Rows')::float8, estimate);
  end if;
  if cardinality(ids) <= 1000 then
    -- The caller's share of the messages (their conversations' last_seq against the table).
    select coalesce(sum(c.last_seq), 0) into caller_rows from app.conversations c where c.id = any(ids);
    share := caller_rows / total;
    -- Dense: the newest `walk` messages (any conversation's) are expected to hold a page of
    -- the caller's matches, and reading them first is cheaper than any index.
    dense := estimate * share * walk / total >= max_rows;
    -- Few matches expected for this caller: score them all and take the page, one query.
    -- Unless the top tier alone is expected to fill the page several times over: then one
    -- query of that tier (the words index and the conversations', no trigram index and no
    -- scoring) is cheaper, and usually the only one.
    if estimate * share
         < coalesce(nullif(current_setting('agora.search_score_all_below', true), '')::float8, 2000)
       and top_estimate * share < 4 * max_rows then
      return query execute format($q$
        select m.id, s.score, m.created_at
        from app.messages m
        cross join lateral (
          select coalesce(sum(case when v @@ w.word then 2 when v @@ w.prefix then 1 else 0 end), 0)::integer
          -- offset 0: one to_tsvector per message, not one per use of v
          from (select to_tsvector('simple', m.content) as v offset 0) tv, unnest($5, $6) as w(word, prefix)
        ) as s(score)
        where %s and m.deleted_at is null %s
          and ($3::uuid is null or (s.score, m.created_at, m.id) < ($1, $2, $3))
        order by s.score desc, m.created_at desc, m.id desc
        limit $4
      $q$, membership, term_filter)
      using after_score, after_created_at, after_id, max_rows, words, prefixes;
      return;
    end if;
  else
    -- A caller in more than 1,000 conversations goes by tiers without counting; the matches
    -- are dense when at least 1 in 100 messages holds them.
    dense := estimate >= 0.01 * total;
  end if;
  -- Best match first: tier by tier from the cursor's (or the top one), newest first within a
  -- tier, each tier asked only for what the page still lacks.
  if after_id is not null and after_score is null then
    return;  -- no row sorts after a cursor without a score
  end if;
  tier := case when after_id is null then top else least(after_score, top) end;
  while tier >= 0 and wanted > 0 loop
    -- The tier as conditions on the message's words (to_tsvector, as messages_content_words
    -- indexes it): exact for the top tier (every term a whole word), for tier 0 (no term starts
    -- a word) and for every tier of one term; a middle tier of several terms adds the score.
    tier_filter := case
      when ranked = 0 then 'true'
      when tier = top then format('to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', all_words)
      when tier = 0 then format('not to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', any_prefix)
      when ranked = 1 then format('to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery and not to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery', any_prefix, all_words)
      else format('to_tsvector(''simple''::regconfig, m.content) @@ %L::tsquery and (select coalesce(sum(case when v @@ w.word then 2 when v @@ w.prefix then 1 else 0 end), 0) from (select to_tsvector(''simple''::regconfig, m.content) as v offset 0) tv, unnest($5, $6) as w(word, prefix)) = %s', any_prefix, tier)
    end;
    -- The top tier's whole words imply the terms, so the `like` only filters the rows the words
    -- index found (every term has a word); otherwise the trigram index finds them.
    tier_terms := case when tier = top and ranked = cardinality(terms) then unindexed_terms else term_filter end;
    query := format($q$
      select s.id, %s, s.created_at from (
        select m.id, m.created_at
        from /* from */ app.messages m
        where %s and m.deleted_at is null %s
          and %s
          and ($3::uuid is null or (m.created_at, m.id) < ($2, $3))
          and /* range */ true
        -- offset 0: the matches first, then their sort; never a walk of the whole table newest
        -- first, which the planner may pick for a sparse tier and which reads until it finds them
        offset 0) s
      order by s.created_at desc, s.id desc
      limit $4
    $q$, tier, membership, tier_terms, tier_filter);
    -- First the newest `walk` messages before the tier's cursor (any conversation's): their
    -- position is one index read; the tier's rows among them are found by that range (the
    -- planner walks it newest first), enough when the caller's matches are dense. Then, only
    -- if the page still lacks rows, the older ones, the planner choosing the indexes.
    if not dense then
      edge_id := null;
    elsif tier = after_score and after_id is not null then
      select m.created_at, m.id into edge_at, edge_id from app.messages m
      where (m.created_at, m.id) < (after_created_at, after_id)
      order by m.created_at desc, m.id desc offset walk - 1 limit 1;
    else
      if not top_known then
        select m.created_at, m.id into top_at, top_id from app.messages m
        order by m.created_at desc, m.id desc offset walk - 1 limit 1;
        top_known := true;
      end if;
      edge_at := top_at;
      edge_id := top_id;
    end if;
    if edge_id is null then
      -- Sparse matches, or fewer than `walk` messages before the cursor: one query.
      return query execute query
      using after_score, case when tier = after_score then after_created_at end,
            case when tier = after_score then after_id end, wanted, words, prefixes;
      get diagnostics got = row_count;
      wanted := wanted - got;
    else
      -- `offset 0`: only that range from its index, every other condition tested on its rows
      -- (the planner would otherwise AND in the word and trigram indexes, whole posting lists).
      return query execute replace(query, '/* from */ app.messages m',
        '(select * from app.messages m where (m.created_at, m.id) >= ($7, $8) offset 0) m')
      using after_score, case when tier = after_score then after_created_at end,
            case when tier = after_score then after_id end, wanted, words, prefixes, edge_at, edge_id;
      get diagnostics got = row_count;
      wanted := wanted - got;
      if wanted > 0 then
        return query execute replace(query, '/* range */ true', '(m.created_at, m.id) < ($7, $8)')
        using after_score, null::timestamptz, null::uuid, wanted, words, prefixes, edge_at, edge_id;
        get diagnostics got = row_count;
        wanted := wanted - got;
      end if;
    end if;
    tier := tier - 1;
  end loop;
end;
$_$;

COMMENT ON FUNCTION app.search_messages(terms text[], in_conversation uuid, after_score integer, after_created_at timestamp with time zone, after_id uuid, max_rows integer) IS 'Message search for GET /api/messages/search: the messages (not tombstones) of the caller''s current conversations, or of one of them (AG404 when the caller is not in it), whose lowercased content contains every term (3 to 200 characters each, at most 8), best match first (per term: a whole word 2, a word''s start 1, inside a word 0; full-text search with the simple configuration), then newest; a page starts after the (score, created_at, id) given. Returns ids only: the caller reads the messages themselves under RLS. When few matches are expected for the caller (the planner''s estimate of the term times the caller''s share of the messages, under 2,000 or the session setting agora.search_score_all_below), and the top tier (every term a whole word) is not expected to hold four pages of them, it scores them all and sorts; otherwise it reads one score tier at a time, newest first with a limit, and stops when the page is full, so the cost follows the page rather than the number of matches, and the top tier is found by the words index (by the trigram index when a term has no word) (docs/search.md). Both give the same rows in the same order. security definer so that the trigram and word indexes serve the conditions (under RLS a non-leakproof condition may not run before the policy, so no index could take it); the restriction to the caller''s conversations is explicit here, from app.my_conversation_ids. Each tier''s query is planned with its terms (dynamic SQL, literals), since the best plan depends on how common they are.';

