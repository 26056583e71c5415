/*
 * What a sent message writes besides itself, trimmed (docs/realtime.md, "Cost of a send"). Each
 * send inserts a message, moves its conversation's seq, and appends an event; every index on
 * those tables is an entry written per message, and an update that changes an indexed column
 * rewrites every index of the row.
 *
 * - The conversation's per-message update (last_seq, last_activity_at) becomes a HOT update:
 *   nothing indexes last_activity_at any more (the conversation list starts from the caller's
 *   participations and sorts those), and pages keep room for the new row versions.
 * - Creation times of messages and events are indexed with BRIN: rows arrive in time order, so a
 *   tiny range index serves the analytics ranges and the pruning job.
 * - Replies are indexed only where there is one (the index serves the foreign key's
 *   `on delete set null`).
 */
drop index app.conversations_last_activity_idx;
alter table app.conversations set (fillfactor = 70);

drop index app.messages_created_at_idx;
create index messages_created_at_brin on app.messages using brin (created_at);

drop index app.events_created_at_idx;
create index events_created_at_brin on app.events using brin (created_at);

drop index app.messages_reply_to_id_idx;
create index messages_reply_to_id_idx on app.messages (reply_to_id) where reply_to_id is not null;

revoke execute on all functions in schema app, app_private from public;
