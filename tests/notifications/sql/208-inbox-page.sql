/*
 * app_private.inbox_page_for_session, the inbox page of GET /api/notifications, which checks the
 * caller's session in its own statement: it reads the page of the session's user only, under RLS
 * with claims built from the session and user rows (not from anything the caller passes), and
 * refuses with AG401 a session that is not the named user's, revoked, expired, or of a suspended
 * user. An empty page is one row with a null id carrying the unread count. Only the API's own
 * role may call it.
 */
begin;
select plan(14);

do $$
begin
  perform tests.create_user('inbox.olive@example.test', 'MEMBER');
  perform tests.create_user('inbox.piet@example.test', 'SUBSCRIBER');
  perform tests.create_user('inbox.nina@example.test', 'VISITOR');
end
$$;
select tests.user_id('inbox.olive@example.test') as olive \gset
select tests.user_id('inbox.piet@example.test') as piet \gset
select tests.user_id('inbox.nina@example.test') as nina \gset
select tests.session_for(:'olive') as olive_session \gset
select tests.session_for(:'piet') as piet_session \gset
select tests.session_for(:'nina') as nina_session \gset

select app_private.notify(:'olive', 'SYSTEM', 'Olive one', '') as o1 \gset
select app_private.notify(:'olive', 'WALLET', 'Olive two', '') as o2 \gset
select app_private.notify(:'piet', 'SYSTEM', 'Piet one', '') as p1 \gset
insert into app.notifications (user_id, type, title, body, inbox)
values (:'olive', 'ENTITY', 'Olive hidden', '', false);
update app.notifications set created_at = created_at - interval '1 minute' where id = :'o1';

-- The page of a live session.
select results_eq(
  format($$ select title, unread from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         :'olive_session', :'olive'),
  $$ values ('Olive two', 2), ('Olive one', 2) $$,
  'A live session reads its user''s inbox rows only, newest first, each with the unread count (never the hidden row, never another user''s).'
);
select is(
  current_setting('request.jwt.claims')::jsonb,
  jsonb_build_object('sub', :'olive', 'role', 'authenticated', 'session_id', :'olive_session',
                     'email', 'inbox.olive@example.test', 'user_role', 'MEMBER'),
  'The claims it reads under are built from the session and user rows.'
);
select is(current_user::text, 'authenticated', 'It reads as role authenticated, so RLS decides.');
select tests.clear_authentication();

select results_eq(
  format($$ select title from app_private.inbox_page_for_session(%L, %L, 'WALLET', null, null, null, null, null, 51) $$,
         :'olive_session', :'olive'),
  $$ values ('Olive two') $$,
  'Filters take the filtered query (here by type).'
);
select tests.clear_authentication();

select results_eq(
  format($$ select title from app_private.inbox_page_for_session(%L, %L, null, null, null, null, now(), %L, 51) $$,
         :'olive_session', :'olive', :'o2'),
  $$ values ('Olive one') $$,
  'The keyset bound applies: the page after Olive two starts with the one before it.'
);
select tests.clear_authentication();

-- An empty page still carries the count.
select results_eq(
  format($$ select id, unread from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         :'nina_session', :'nina'),
  $$ values (null::uuid, 0) $$,
  'An empty page is one row with a null id and the unread count.'
);
select tests.clear_authentication();
select results_eq(
  format($$ select id, unread from app_private.inbox_page_for_session(%L, %L, 'MESSAGE', null, null, null, null, null, 51) $$,
         :'olive_session', :'olive'),
  $$ values (null::uuid, 2) $$,
  'A filter that finds nothing gives the same row, with the caller''s unread count.'
);
select tests.clear_authentication();

-- The refusals.
select throws_ok(
  format($$ select * from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         :'piet_session', :'olive'),
  'AG401', 'Sign in to continue.',
  'Another user''s session presented with this user''s id reads nothing (AG401).'
);
select throws_ok(
  format($$ select * from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         gen_random_uuid(), :'olive'),
  'AG401', 'Sign in to continue.',
  'An unknown session reads nothing (AG401).'
);

update app.sessions set revoked_at = now(), revoked_reason = 'signout' where id = :'piet_session';
select throws_ok(
  format($$ select * from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         :'piet_session', :'piet'),
  'AG401', 'Sign in to continue.',
  'A revoked session reads nothing (AG401).'
);

update app.sessions set expires_at = now() - interval '1 second' where id = :'nina_session';
select throws_ok(
  format($$ select * from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         :'nina_session', :'nina'),
  'AG401', 'Sign in to continue.',
  'An expired session reads nothing (AG401).'
);

update app.users set status = 'suspended' where id = :'olive';
select throws_ok(
  format($$ select * from app_private.inbox_page_for_session(%L, %L, null, null, null, null, null, null, 51) $$,
         :'olive_session', :'olive'),
  'AG401', 'Sign in to continue.',
  'A suspended user''s live session reads nothing (AG401).'
);
update app.users set status = 'active' where id = :'olive';

select ok(
  not has_function_privilege('authenticated', 'app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer)', 'execute')
  and not has_function_privilege('anon', 'app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer)', 'execute')
  and not has_function_privilege('service_role', 'app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer)', 'execute'),
  'Only the API''s own role may call it (not anon, authenticated or service_role).'
);
select isnt(
  obj_description('app_private.inbox_page_for_session(uuid, uuid, app.notification_type, boolean, text, timestamptz, timestamptz, uuid, integer)'::regprocedure, 'pg_proc'),
  null,
  'It says why it exists (comment on).'
);

select * from finish();
rollback;
