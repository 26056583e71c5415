/*
 * A send in one statement, for the API's hot path (POST /api/conversations/:id/messages).
 *
 * Through an explicit transaction a send took two round trips (BEGIN, the claims and the call;
 * then COMMIT once the API had read the result), and the conversation's row lock, taken for the
 * message's seq, stayed held across the second: the next sender in that conversation waited for
 * the API's event loop. Here the caller's role and claims are set for this statement's own
 * transaction, app.send_message runs under them exactly as before (RLS, security invoker), and
 * the commit follows at once on the server.
 *
 * Only the API's own database role may call it: it takes the claims it is given, so it must never
 * be reachable by anon or authenticated (the revoke below and the one at the end).
 */
create function app_private.send_message_as(
  claims text,
  target_conversation_id uuid,
  message_content text,
  reply_to uuid,
  attachment_ids uuid[],
  idempotency_key text,
  request_hash text
) returns jsonb
language plpgsql volatile security invoker
set search_path = ''
as $$
begin
  perform set_config('request.jwt.claims', claims, true);
  perform set_config('role', 'authenticated', true);
  return app.send_message(target_conversation_id, message_content, reply_to, attachment_ids,
                          idempotency_key, request_hash);
end;
$$;
revoke all on function app_private.send_message_as(text, uuid, text, uuid, uuid[], text, text)
  from public, anon, authenticated, service_role;

revoke execute on all functions in schema app, app_private from public;
