/*
 * Message search's order and paging against brute force (supabase/migrations/
 * 20261202000000_messages_search_tiers.sql): app.search_messages reads one score tier at a time,
 * newest first with a limit; here, on random messages (a vocabulary of words, word starts and
 * substrings of each other, German and Japanese, ties on created_at, tombstones, conversations the
 * caller is not in), every page chained by its cursor, for page sizes 5 and 13, must give exactly
 * the brute-force order: every match of the caller's conversations scored term by term (2 a whole
 * word, 1 a word start, 0 inside), sorted by score, created_at and id. Two callers: one in 1,050
 * conversations (the semi-join on their participant rows) and one in 40 (a literal array).
 * Each case twice: by tiers (agora.search_score_all_below 0) and by scoring every match (a line
 * above any estimate), the two ways the function chooses between by the matches it expects (a
 * caller in more than 1,000 conversations, caller 0, goes by tiers either way).
 */
begin;
select plan(98);

set local session_replication_role = replica;

insert into app.users (id, email, name, role)
select ('d0000000-0000-4000-8000-' || lpad(i::text, 12, '0'))::uuid, 'ord' || i || '@example.test',
  'ord ' || i, 'SUBSCRIBER'
from generate_series(0, 2) i;

insert into app.conversations (id, type, title, created_by, created_at, last_activity_at)
select ('d0000000-0000-4000-9000-' || lpad(c::text, 12, '0'))::uuid, 'group', 'Order ' || c,
  'd0000000-0000-4000-8000-000000000002', now() - interval '10 days', now()
from generate_series(0, 1099) c;

-- Caller 0 in 1,050 conversations (0 .. 1049), caller 1 in 40 (every 25th from 10), user 2 in all.
insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
select ('d0000000-0000-4000-9000-' || lpad(c::text, 12, '0'))::uuid, u, now() - interval '10 days', now()
from generate_series(0, 1099) c,
  lateral (values ('d0000000-0000-4000-8000-000000000000'::uuid, c < 1050),
                  ('d0000000-0000-4000-8000-000000000001'::uuid, c % 25 = 10),
                  ('d0000000-0000-4000-8000-000000000002'::uuid, true)) v(u, member)
where member;

select setseed(0.29);

-- 600 messages of 1 to 5 words in conversations 0 .. 1099 (3 in 10 in caller 1's first four), at
-- one of 400 instants (so many share a created_at), 1 in 20 a tombstone.
insert into app.messages (conversation_id, seq, sender_id, content, created_at, deleted_at)
select ('d0000000-0000-4000-9000-' || lpad(conv::text, 12, '0'))::uuid,
  row_number() over (partition by conv order by i) + case when conv = 1099 then 8000 else 0 end, 'd0000000-0000-4000-8000-000000000002',
  case when gone then '' else words end,
  now() - (floor(random() * 400))::int * interval '1 minute',
  case when gone then now() end
from (
  select i, case when random() < 0.3 then 10 + 25 * floor(random() * 4)::int else floor(random() * 1100)::int end as conv,
    random() < 0.05 as gone,
    (select string_agg((array['pelican', 'Pelicans', 'superpelican', 'pel', 'PEL-ican', 'pelican!',
       'meeting', 'meet', 'meetings', 'premeeting', 'the', 'can', 'Größe', 'größer', 'GRÖSSE',
       '会議室で', '会議室', '東京タワー', 'e-mail', 'mail', 'mailbox', '100%', 'a_b'])
       [1 + floor(random() * 23)::int], ' ')
     from generate_series(1, 1 + (i % 5)) g where g > 0 * i) as words
  from generate_series(1, 600) i
) x;

-- 8,000 more in a conversation neither caller is in: 3,999 newer than all the above, the rest
-- older. The search's first query per dense tier covers the newest 4,000 messages of all, so
-- both its queries (that range, then the older messages) take part, and the first page's edge
-- between them is the newest of the messages above (one the callers may find).
insert into app.messages (conversation_id, seq, sender_id, content, created_at)
select 'd0000000-0000-4000-9000-000000001099', i, 'd0000000-0000-4000-8000-000000000002',
  (array['pelican meeting', 'the mailbox', '会議室で', 'superpelican'])[1 + i % 4],
  case when i <= 3999 then now() + (1 + i % 50) * interval '1 minute'
       else now() - (500 + i % 50) * interval '1 minute' end
from generate_series(1, 8000) i;

set local session_replication_role = origin;
-- Statistics, so that the search tells dense terms (the fill's) from sparse ones, as in life.
analyze app.messages;
analyze app.conversation_participants;

-- The brute-force order (as the superuser): every match of the caller's conversations, scored.
create function pg_temp.brute(me uuid, terms text[], conv uuid) returns text[]
language sql stable as $$
  select coalesce(array_agg(x.id::text || ':' || x.score order by x.score desc, x.created_at desc, x.id desc), '{}')
  from (
    select m.id, m.created_at,
      (select sum(case
         when numnode(plainto_tsquery('simple', t)) = 0 then 0
         when to_tsvector('simple', m.content) @@ plainto_tsquery('simple', t) then 2
         when to_tsvector('simple', m.content) @@ (plainto_tsquery('simple', t)::text || ':*')::tsquery then 1
         else 0 end) from unnest(terms) t)::integer as score
    from app.messages m
    where m.deleted_at is null
      and m.conversation_id in (select p.conversation_id from app.conversation_participants p where p.user_id = me)
      and (conv is null or m.conversation_id = conv)
      and (select bool_and(strpos(lower(m.content), lower(t)) > 0) from unnest(terms) t)
  ) x
$$;

-- Every page of app.search_messages, each continuing from the last row of the one before.
create function pg_temp.paged(terms text[], conv uuid, page integer) returns text[]
language plpgsql as $$
declare
  acc text[] := '{}';
  s integer;
  c timestamptz;
  i uuid;
  r record;
  n integer;
  calls integer := 0;
begin
  loop
    calls := calls + 1;
    if calls > 1000 then
      return acc || 'more than 1,000 pages'::text;  -- a cursor that does not move on
    end if;
    n := 0;
    for r in select * from app.search_messages(terms, conv, s, c, i, page) loop
      acc := acc || (r.message_id::text || ':' || r.score);
      s := r.score;
      c := r.created_at;
      i := r.message_id;
      n := n + 1;
    end loop;
    exit when n < page;
  end loop;
  return acc;
end;
$$;

create temporary table cases (n serial, me uuid, terms text[], conv uuid, expected text[], got text[]);
grant all on cases to authenticated;
create temporary table results (n serial, name text, got text[], expected text[]);

insert into cases (me, terms, conv)
select me, terms, conv
from (values ('d0000000-0000-4000-8000-000000000000'::uuid), ('d0000000-0000-4000-8000-000000000001'::uuid)) u(me),
  (values (array['pelican']), (array['PEL']), (array['ican']), (array['meet']), (array['meeting', 'pelican']),
          (array['pel', 'mee']), (array['größe']), (array['会議室']), (array['mail']), (array['100%']),
          (array['the', 'pelican', 'meet'])) t(terms),
  (values (null::uuid)) c(conv);
-- One conversation of each caller.
insert into cases (me, terms, conv)
values ('d0000000-0000-4000-8000-000000000000', array['pelican'], 'd0000000-0000-4000-9000-000000000060'),
       ('d0000000-0000-4000-8000-000000000001', array['meet'], 'd0000000-0000-4000-9000-000000000035');

update cases set expected = pg_temp.brute(me, terms, conv);

select ok((select count(*) from cases where cardinality(expected) >= 30) >= 16,
  'Most cases have many matches (at least 30), so pages are chained many times.');
select ok((select count(distinct s) from cases, unnest(expected) e, lateral (select split_part(e, ':', 2) s) x
           where terms = array['pel', 'mee']) >= 3,
  'A search of two terms spans several score tiers.');

-- Each case, as its caller, with pages of 5 and 13 rows, by tiers and by scoring every match.
do $$
declare
  k record;
  p integer;
  way text;
begin
  foreach way in array array['tiers', 'scored'] loop
    perform set_config('agora.search_score_all_below',
                       case way when 'tiers' then '0' else '1000000000' end, true);
    for k in select * from cases order by n loop
      foreach p in array array[5, 13] loop
        perform tests.authenticate_as(k.me);
        update cases set got = pg_temp.paged(k.terms, k.conv, p) where n = k.n;
        perform tests.clear_authentication();
        insert into results (name, got, expected)
        select format('%s, caller %s, conversation %s, pages of %s, %s: the brute-force order',
                 k.terms, right(k.me::text, 1), coalesce(right(k.conv::text, 2), 'any'), p, way),
               got, expected
        from cases where n = k.n;
      end loop;
    end loop;
  end loop;
end;
$$;

select is(got, expected, name) from results order by n;

select * from finish();
rollback;
