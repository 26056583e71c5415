/*
 * Attachment files follow their rows: every deleted attachment row (a deleted message, a
 * cascade from a conversation or a user, an upload never attached) queues its file for removal;
 * the server drains the queue (storage lives outside the database). Uploads left unattached for a
 * day are removed by pg_cron. Tables: app_private.storage_deletions (new), app.attachments
 * (trigger). Nothing destructive beyond the pruning described.
 */

/* Files whose rows are gone, waiting for the server to remove them from storage. */
create table app_private.storage_deletions (
  id bigint generated always as identity primary key,
  storage_key text not null,
  created_at timestamptz not null default now()
);
comment on table app_private.storage_deletions is 'Storage keys to remove; drained by the server.';
create index storage_deletions_created_at_idx on app_private.storage_deletions (created_at);
alter table app_private.storage_deletions enable row level security;

/* security definer: users delete attachments through other tables' cascades and functions. */
create function app_private.queue_storage_deletion() returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  insert into app_private.storage_deletions (storage_key) values (old.storage_key);
  return null;
end;
$$;
create trigger attachments_queue_storage_deletion after delete on app.attachments
  for each row execute function app_private.queue_storage_deletion();

/* Uploads never attached within `older_than` are dropped (their files queued by the trigger). */
create function app_private.collect_orphan_attachments(older_than interval default '24 hours') returns void
language sql volatile
set search_path = ''
as $$
  delete from app.attachments where message_id is null and created_at < now() - older_than
$$;

/*
 * Takes up to `batch` queued keys for removal. Rows are deleted as they are taken (skip locked,
 * so several servers drain in parallel); a server that fails to remove a file puts it back.
 */
create function app_private.take_storage_deletions(batch integer default 100) returns setof text
language sql volatile
set search_path = ''
as $$
  delete from app_private.storage_deletions d
  where d.id in (select s.id from app_private.storage_deletions s order by s.id limit batch for update skip locked)
  returning d.storage_key
$$;

revoke all on app_private.storage_deletions from public, anon, authenticated;
revoke execute on all functions in schema app, app_private from public;

select cron.schedule('agora-collect-orphan-attachments', '23 * * * *', 'select app_private.collect_orphan_attachments()');
