/*
 * Unread counts in bounded time (supabase/migrations/..._conversations_unread_buckets.sql,
 * docs/conversations.md): the live-message buckets follow sends, thread replies and tombstones;
 * app_private.count_unread_between equals the count by definition on every kind of range (inside
 * one bucket, across whole buckets, on their edges, with the reader's own messages and
 * tombstones); and the marks that move far (first mark-read mid-way, a mark moved far back, a
 * person joining a long group) leave exact counters. Server only: no API role reads the buckets
 * or runs the counting function.
 */
begin;
select plan(12);

do $$
begin
  perform tests.create_user('bkt.carol@example.test', 'SUBSCRIBER');   -- group creator
  perform tests.create_user('bkt.alice@example.test', 'MEMBER');       -- reader, sends too
  perform tests.create_user('bkt.bob@example.test', 'SUBSCRIBER');     -- sender
  perform tests.create_user('bkt.dan@example.test', 'SUBSCRIBER');     -- joins later
end
$$;

select tests.create_conversation(tests.user_id('bkt.carol@example.test'), 'group',
  array[tests.user_id('bkt.alice@example.test'), tests.user_id('bkt.bob@example.test')], 'Long hall') as hall \gset
select tests.user_id('bkt.alice@example.test') as alice \gset

-- 5,500 messages: every seventh Alice's, the rest Bob's and Carol's; then every eleventh a
-- tombstone and a few thread replies (they share the seq space).
insert into app.messages (conversation_id, sender_id, content)
select :'hall',
       case when g % 7 = 0 then tests.user_id('bkt.alice@example.test')
            when g % 2 = 0 then tests.user_id('bkt.bob@example.test')
            else tests.user_id('bkt.carol@example.test') end,
       'message ' || g
from generate_series(1, 5500) g;
select id as root from app.messages where conversation_id = :'hall' and seq = 10 \gset
insert into app.messages (conversation_id, sender_id, content, thread_id)
select :'hall', tests.user_id('bkt.bob@example.test'), 'reply ' || g, :'root'
from generate_series(1, 30) g;
update app.messages set deleted_at = now()
where conversation_id = :'hall' and seq % 11 = 0 and seq > 1;

create temporary table bucket_truth on commit drop as
  select m.conversation_id, m.seq / 1000 as bucket, count(*)::int as live
  from app.messages m where m.deleted_at is null group by 1, 2;

select set_eq(
  format($$ select bucket, live from app_private.message_seq_buckets where conversation_id = %L $$, :'hall'),
  format($$ select bucket, live from bucket_truth where conversation_id = %L $$, :'hall'),
  'Every bucket of the hall holds its live messages after sends, thread replies and tombstones.'
);
select is(app_private.recount_message_buckets() > 0, true, 'A recount writes the buckets again...');
select set_eq(
  'select conversation_id, bucket, live from app_private.message_seq_buckets',
  'select conversation_id, bucket, live from bucket_truth',
  '...to the same figures.'
);

-- The function against the definition, on ranges of every kind: empty, inside one bucket, on a
-- bucket's first and last seq, across two, across many, from 0, to the end.
select is_empty(
  format($$
    select r.a, r.b, app_private.count_unread_between(%1$L, %2$L, r.a, r.b) as fast, t.n
    from (values (0::bigint, 0::bigint), (100, 50), (0, 999), (0, 1000), (999, 1000), (998, 2001),
                 (1, 5530), (0, 5530), (999, 3999), (1000, 4000), (1234, 4321), (2500, 5530),
                 (3999, 5000), (17, 3017)) r(a, b)
    cross join lateral (
      select count(*) as n from app.messages m
      where m.conversation_id = %1$L and m.seq > r.a and m.seq <= r.b
        and m.deleted_at is null and m.sender_id is distinct from %2$L) t
    where app_private.count_unread_between(%1$L, %2$L, r.a, r.b) <> t.n
  $$, :'hall', :'alice'),
  'count_unread_between equals the count by definition on every kind of range (the failing ranges are listed otherwise).'
);
select is(
  app_private.count_unread_between(:'hall', null, 0, 5530),
  (select count(*) from app.messages where conversation_id = :'hall' and deleted_at is null),
  'For no reader (a deleted account''s messages are everyone''s) it counts every live message.'
);

create temporary view hall_counters as
  select p.user_id, p.unread_count,
         (select count(*)::int from app.messages m
           where m.conversation_id = p.conversation_id and m.seq > p.last_read_seq
             and m.deleted_at is null and m.sender_id is distinct from p.user_id) as counted
  from app.conversation_participants p;
grant select on hall_counters to authenticated;

select is_empty(
  format($$ select * from hall_counters where unread_count <> counted and user_id in
            (select user_id from app.conversation_participants where conversation_id = %L) $$, :'hall'),
  'After the history every participant''s counter is exact.'
);

select id as mid from app.messages where conversation_id = :'hall' and seq = 2701 \gset
select id as late from app.messages where conversation_id = :'hall' and seq = 5003 \gset
select id as early from app.messages where conversation_id = :'hall' and seq = 101 \gset

select tests.authenticate_as(:'alice');
select is(
  (select unread_count from app.mark_read(:'mid')),
  (select count(*) from app.messages where conversation_id = :'hall' and seq > 2701
     and deleted_at is null and sender_id is distinct from :'alice'::uuid),
  'Alice''s first mark, mid-way in the hall (from no mark): the counter is exact.'
);
select is(
  (select unread_count from app.mark_read(:'late')),
  (select count(*) from app.messages where conversation_id = :'hall' and seq > 5003
     and deleted_at is null and sender_id is distinct from :'alice'::uuid),
  'Read further, across two buckets: exact.'
);
select is(
  (select unread_count from app.mark_unread(:'hall', :'early')),
  (select count(*) from app.messages where conversation_id = :'hall' and seq > 100
     and deleted_at is null and sender_id is distinct from :'alice'::uuid),
  'Marked unread far back: exact.'
);
select tests.clear_authentication();

insert into app.conversation_participants (conversation_id, user_id, added_by)
values (:'hall', tests.user_id('bkt.dan@example.test'), tests.user_id('bkt.carol@example.test'));
select is(
  (select unread_count from app.conversation_participants
    where conversation_id = :'hall' and user_id = tests.user_id('bkt.dan@example.test')),
  (select count(*)::int from app.messages where conversation_id = :'hall' and deleted_at is null),
  'Dan joins the long hall: every live message is unread for him, counted by buckets.'
);

select tests.authenticate_as(:'alice');
select throws_ok(
  'select * from app_private.message_seq_buckets',
  '42501', null,
  'A participant cannot read the buckets.'
);
select throws_ok(
  format($$ select app_private.count_unread_between(%L, %L, 0, 10) $$, :'hall', :'alice'),
  '42501', null,
  'Nor run the counting function.'
);
select tests.clear_authentication();

select * from finish();
rollback;
