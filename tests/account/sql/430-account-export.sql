/*
 * The account export: one registry of parts (every app_private.account_export_<part> function is
 * listed, takes the user id, returns jsonb; the lists that grow are streamed, setof text), the
 * composer fills every key of the contract, the streamed parts put together are the same
 * document, a user exports only their own data and no secret, each export is a security event,
 * and only a signed-in user may ask (visitors and direct calls of the private functions are
 * refused).
 */
begin;
select plan(25);

-- ---------------------------------------------------------------------------------------------
-- The registry
-- ---------------------------------------------------------------------------------------------

select is_empty(
  $$ select p.oid::regprocedure::text from pg_proc p
     where p.pronamespace = 'app_private'::regnamespace and p.proname like 'account\_export\_%'
       and not exists (select 1 from app_private.account_export_parts e
                       where e.function_name::regprocedure = p.oid or e.rows_function::regprocedure = p.oid) $$,
  'Every app_private.account_export_<part> function is listed in app_private.account_export_parts (a part, or the rows of its list).'
);
select is_empty(
  $$ select e.part from app_private.account_export_parts e join pg_proc p on p.oid = e.rows_function::regprocedure
     where p.pronargs <> 1 or p.proargtypes[0] <> 'uuid'::regtype or p.prorettype <> 'text'::regtype or not p.proretset $$,
  'Every streamed list takes the user id and returns setof text.'
);
select set_eq(
  $$ select part || coalesce('.' || rows_key, '') from app_private.account_export_parts where rows_function is not null $$,
  $$ values ('conversations'), ('messages'), ('notifications'), ('orders'), ('wallet.transactions') $$,
  'The lists that grow with a person''s use are streamed.'
);
select is_empty(
  $$ select e.part from app_private.account_export_parts e join pg_proc p on p.oid = e.function_name::regprocedure
     where p.pronargs <> 1 or p.proargtypes[0] <> 'uuid'::regtype or p.prorettype <> 'jsonb'::regtype $$,
  'Every part takes the user id and returns jsonb.'
);
select is_empty(
  $$ select e.part from app_private.account_export_parts e
     where e.part not in ('profile', 'identities', 'sessions', 'conversations', 'messages',
                          'notifications', 'preferences', 'orders', 'vendor', 'wallet') $$,
  'Every part is a key of the contract''s export document.'
);
select set_has(
  $$ select part from app_private.account_export_parts $$,
  $$ values ('profile'), ('identities'), ('sessions'), ('conversations'), ('messages'),
            ('notifications'), ('preferences') $$,
  'The parts of the foundation, messaging and notifications are registered.'
);

-- The registries name functions as text (pg_upgrade refuses regprocedure columns); a check keeps
-- what the type checked, and asks for the schema, since the callers run with search_path = ''.
select throws_ok(
  $$ insert into app_private.account_export_parts (part, function_name, description)
     values ('missing', 'app_private.account_export_missing(uuid)', 'No such function.') $$,
  '23514', null,
  'A part naming no function is refused.'
);
select throws_ok(
  $$ insert into app_private.account_export_parts (part, function_name, description)
     values ('unqualified', 'now()', 'Not schema-qualified.') $$,
  '23514', null,
  'A part naming a function without its schema is refused.'
);
select throws_ok(
  $$ insert into app_private.account_erasure_steps (domain, function_name, position, description)
     values ('missing', 'app_private.account_erase_missing(uuid)', 999, 'No such function.') $$,
  '23514', null,
  'An erasure step naming no function is refused.'
);
select is_empty(
  $$ select e.part from app_private.account_export_parts e
     where e.function_name::regprocedure::text <> e.function_name
        or e.rows_function::regprocedure::text <> e.rows_function
     union all
     select s.domain from app_private.account_erasure_steps s
     where s.function_name::regprocedure::text <> s.function_name $$,
  'Every registered name reads back as the function''s own name (schema-qualified, as the callers cast it).'
);

-- ---------------------------------------------------------------------------------------------
-- A user's export
-- ---------------------------------------------------------------------------------------------

do $$
declare
  conv uuid;
begin
  perform tests.create_user('export.mia@example.test', 'MEMBER');
  perform tests.create_user('export.ned@example.test', 'MEMBER');
  insert into app.identities (user_id, provider, provider_user_id, email)
  values (tests.user_id('export.mia@example.test'), 'email', 'export.mia@example.test', 'export.mia@example.test');
  insert into app.sessions (id, user_id, provider, expires_at)
  values ('e1000000-0000-4000-8000-000000000001', tests.user_id('export.mia@example.test'), 'email', now() + interval '1 day');
  insert into app_private.refresh_tokens (session_id, token_hash)
  values ('e1000000-0000-4000-8000-000000000001', 'hash-that-must-not-leak-430');
  conv := tests.create_conversation(tests.user_id('export.mia@example.test'), 'direct',
    array[tests.user_id('export.ned@example.test')]);
  perform tests.insert_message(conv, tests.user_id('export.mia@example.test'), 'from mia');
  perform tests.insert_message(conv, tests.user_id('export.ned@example.test'), 'from ned');
end
$$;

select tests.authenticate_as(tests.user_id('export.mia@example.test'));
create temporary table export_doc as select app.export_account() as doc;
-- What the route streams, put together as it writes it: the same document.
create temporary table streamed_doc as
  select d || coalesce((
    select jsonb_object_agg(s.part, case
      when s.rows_key is null then l.list
      when d -> s.part = 'null'::jsonb then 'null'::jsonb
      else (d -> s.part) || jsonb_build_object(s.rows_key, l.list) end)
    from app.export_account_streamed_parts() s,
    lateral (select coalesce(jsonb_agg(r::jsonb order by n), '[]'::jsonb) as list
             from app.export_account_rows(s.part) with ordinality x (r, n)) l), '{}'::jsonb) as doc
  from app.export_account_streamed() d;
select tests.clear_authentication();

select is(
  (select array_agg(k order by k) from export_doc, jsonb_object_keys(doc) k),
  array['conversations', 'exportedAt', 'identities', 'messages', 'notifications', 'orders',
        'preferences', 'profile', 'sessions', 'vendor', 'wallet'],
  'The document has every key of the contract.'
);
select is((select doc #>> '{profile,email}' from export_doc), 'export.mia@example.test',
  'The profile is the caller''s.');
select is((select jsonb_array_length(doc -> 'messages') from export_doc), 1,
  'Only the messages the caller wrote.');
select is((select doc #>> '{messages,0,content}' from export_doc), 'from mia', 'Their content.');
select ok((select jsonb_array_length(doc -> 'sessions') >= 1 from export_doc), 'Their sessions.');
select ok(
  (select doc::text not like '%hash-that-must-not-leak-430%' from export_doc)
  and not exists (
    select 1 from export_doc, jsonb_path_query(doc, 'strict $.**') v
    where jsonb_typeof(v) = 'object'
      and exists (select 1 from jsonb_object_keys(v) k
                  where k ~* '(token|hash|secret|password|csrf|refresh|verifier|nonce|private)')
  ),
  'No secret: no refresh-token hash, and no key that looks like one, anywhere in the document.'
);
select is(
  (select doc - 'exportedAt' from streamed_doc), (select doc - 'exportedAt' from export_doc),
  'The streamed parts put together are the whole document.');
select is((select jsonb_array_length(doc -> 'messages') from streamed_doc), 1,
  'The streamed messages are there (the comparison above compares something).');
select is(
  (select count(*)::int from app.security_events where type = 'account.exported'
   and user_id = tests.user_id('export.mia@example.test')),
  2, 'Each export, whole or streamed, is recorded as account.exported.');

-- ---------------------------------------------------------------------------------------------
-- Who may ask
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok($$ select app.export_account() $$, '42501', null, 'A visitor cannot export.');
select tests.authenticate_as(tests.user_id('export.ned@example.test'));
select throws_ok(
  format($$ select app_private.account_export(%L) $$, tests.user_id('export.mia@example.test')),
  '42501', null, 'A user cannot call the composer for someone else.');
select is(
  (select app.export_account() #>> '{profile,id}'), tests.user_id('export.ned@example.test')::text,
  'A user''s export is always their own.');
select is(
  (select count(*)::int from app.export_account_rows('messages') r where r::jsonb ->> 'content' = 'from mia'),
  0, 'A streamed list is always the caller''s own.');
select throws_ok($$ select app.export_account_rows('profile') $$, '22023', null,
  'A part that is not streamed has no rows.');
select tests.authenticate_as_anon();
select throws_ok($$ select app.export_account_rows('messages') $$, '42501', null,
  'A visitor cannot read a streamed list.');

select * from finish();
rollback;
