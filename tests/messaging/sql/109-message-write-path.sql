/*
 * What a sent message costs to write (supabase/migrations/..._conversations.sql and ..._messages.sql):
 * the per-message update of its conversation (seq, last activity) must stay a HOT update, which
 * writes no index entries. It stops being one the moment an index covers a column it changes,
 * so this test fails then, and the benchmark's throughput with it.
 */
begin;
select plan(3);

do $$
begin
  perform tests.create_user('wp.ann@example.test', 'SUBSCRIBER');
  perform tests.create_user('wp.ben@example.test', 'SUBSCRIBER');
end
$$;

select tests.create_conversation(tests.user_id('wp.ann@example.test'), 'direct',
  array[tests.user_id('wp.ben@example.test')]) as conversation_id \gset

-- now() is fixed within this transaction: age the conversation so the first send really moves
-- last_activity_at (an index on it would then make that update non-HOT).
update app.conversations set last_activity_at = now() - interval '1 hour'
where id = :'conversation_id'::uuid;

select pg_stat_get_xact_tuples_updated('app.conversations'::regclass) as updated_before,
       pg_stat_get_xact_tuples_hot_updated('app.conversations'::regclass) as hot_before \gset

select tests.authenticate_as(tests.user_id('wp.ann@example.test'));
select app.send_message(:'conversation_id'::uuid, 'message ' || n) from generate_series(1, 20) n;
select tests.clear_authentication();

select is(
  pg_stat_get_xact_tuples_updated('app.conversations'::regclass) - :updated_before,
  20::bigint,
  'Each of the 20 sends updated its conversation once (seq and last activity).'
);
select is(
  pg_stat_get_xact_tuples_hot_updated('app.conversations'::regclass) - :hot_before,
  20::bigint,
  'Every one of those updates was HOT: no index entries written for them.'
);
select is(
  (select last_seq from app.conversations where id = :'conversation_id'::uuid),
  20::bigint,
  'The seq still counts every message.'
);

select * from finish();
rollback;
