/*
 * A configuration change commits with its security event, or neither commits. The API used to
 * write `admin.config_changed` after the new version had committed, on a connection of its own:
 * an event it could not store (or a crash between the two) left a change nobody had recorded.
 * Now a trigger on app.config_versions writes it in the change's own transaction, through
 * app_private.record_security_event (with the client's address and user agent that the API puts
 * in agora.client_ip and agora.user_agent). Versions written by the server (the local stack
 * recording its deployed contracts) are recorded the same way, with no user.
 *
 * Tables touched: none changed; a trigger on app.config_versions. Nothing destructive.
 */

create function app_private.audit_config_version() returns trigger
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  perform app_private.record_security_event(
    'admin.config_changed',
    'warning',
    new.changed_by,
    jsonb_build_object(
      'version', new.version,
      'keys', (select coalesce(jsonb_agg(k order by k), '[]'::jsonb)
               from jsonb_object_keys(new.diff) k),
      'reason', new.reason
    )
  );
  return null;
end;
$$;
comment on function app_private.audit_config_version() is
  'Writes admin.config_changed (the version, the changed keys, the reason) in the transaction that saves a configuration version, so the change and its record commit together or not at all. security definer: an ADMIN saves versions under RLS, and security events are written by the server only.';

create trigger config_versions_audit
  after insert on app.config_versions
  for each row execute function app_private.audit_config_version();

revoke execute on all functions in schema app, app_private from public;
