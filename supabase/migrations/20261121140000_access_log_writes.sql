/*
 * The access log takes a row for every /api request, so what each row costs to write counts
 * (docs/sessions.md, "Access log"):
 *
 * - No foreign key to app.users: the check is a `select ... for key share` on the user's row for
 *   every logged request. A log keeps the id it saw; a removed user's entries stay attributable
 *   to that id rather than being rewritten.
 * - Time is indexed with BRIN: rows arrive in time order, so a tiny range index serves the time
 *   filters of GET /api/admin/access-logs and the pruning job, where a B-tree cost an entry per
 *   row. Pages are read newest first by id (the primary key).
 * - The per-user filter reads newest first by id too, so that index is (user_id, id).
 */
alter table app.access_logs drop constraint access_logs_user_id_fkey;

drop index app.access_logs_created_at_idx;
create index access_logs_created_at_brin on app.access_logs using brin (created_at);

drop index app.access_logs_user_id_idx;
create index access_logs_user_id_idx on app.access_logs (user_id, id);

revoke execute on all functions in schema app, app_private from public;
