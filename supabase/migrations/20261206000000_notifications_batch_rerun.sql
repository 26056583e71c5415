/*
 * A rerun of a bulk send's notifications.batch job no longer deadlocks with its chunk jobs
 * (docs/notifications.md "Bulk sends").
 *
 * The batch job holds the batch row (FOR UPDATE) while it plans the chunks. A rerun (the job
 * retried after its process died between its commit and the queue's record, or a lease taken
 * over) runs while the chunk jobs it queued run. Its `insert ... on conflict do nothing` met
 * their chunk rows, and an insert that meets a row another transaction is updating waits for
 * that transaction. app_private.write_batch_chunk updates its chunk row and then the batch row
 * (the written counter): each waited for the other, and Postgres cancelled one of them
 * ("deadlock detected"; the chunk's job retried 5 to 10 s later). Seen as a flaky test, where
 * the test's own rerun met the queued batch job.
 *
 * The chunks are planned in one statement, so a batch has all of them or none: the rerun now
 * looks (a plain read, which waits for nobody) and plans only when there are none.
 *
 * Tables touched: none (one function replaced).
 */

create or replace function app_private.write_notification_batch(target_batch_id uuid, chunk_size integer default 1000)
returns integer
language plpgsql security definer set search_path = '' as $$
declare
  b app.notification_batches;
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
  -- The audience in user-id ranges of chunk_size (ids only: nothing is written per recipient
  -- here); each range is written by its own job, in a transaction of its own. Planned once, in
  -- this one statement: a rerun finds the chunks by reading them (an insert meeting them would
  -- wait for the chunk jobs writing them, which wait for this batch row).
  if not exists (select 1 from app_private.notification_batch_chunks c where c.batch_id = b.id) then
    insert into app_private.notification_batch_chunks (batch_id, chunk, first_user_id, last_user_id)
    select b.id, x.chunk, (array_agg(x.id order by x.id))[1],
           (array_agg(x.id order by x.id desc))[1]
    from (
      select u.id, ((row_number() over (order by u.id)) - 1) / chunk_size as chunk
      from app.users u
      where app_private.in_audience(u, b.audience) and u.created_at <= b.created_at
    ) x
    group by x.chunk;
  end if;
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

comment on function app_private.write_notification_batch(uuid, integer) is
  'The notifications.batch job: splits a batch''s audience (active users who existed when it was accepted) into user-id ranges of chunk_size and queues one notifications.batch_chunk job per range; it writes no notification (app_private.write_batch_chunk does, a range per transaction). Idempotent: the chunks are planned once, in one statement, and a rerun only reads them (so it never waits for the chunk jobs writing them, which wait for the batch row it holds); the jobs are keyed. security definer: it reads every user and writes the server-only chunks.';
