/*
 * app.list_people, the people directory: SUBSCRIBER and above find other active users by name,
 * and see only their id, name, image and role. Visitors and anonymous callers are refused; the
 * caller and suspended users are left out; the search is a case-insensitive substring with LIKE
 * wildcards taken literally; pages follow a keyset. app.users itself still shows a user only
 * their own row.
 */
begin;
select plan(26);

do $$
begin
  perform tests.create_user('people.ann@example.test', 'SUBSCRIBER');
  perform tests.create_user('people.bob@example.test', 'MEMBER');
  perform tests.create_user('people.cat@example.test', 'SUBSCRIBER');
  perform tests.create_user('people.vic@example.test', 'VISITOR');
  perform tests.create_user('people.ada@example.test', 'ADMIN');
  perform tests.create_user('people.pat@example.test', 'CONFIDENTIAL');
  perform tests.create_user('people.uma@example.test', 'SUBSCRIBER');
  perform tests.create_user('people.ras@example.test', 'SUBSCRIBER');
  update app.users set name = case email
      when 'people.ann@example.test' then 'Quokka Ann'
      when 'people.bob@example.test' then 'quokka bob'
      when 'people.cat@example.test' then 'Quokka Cat'
      when 'people.vic@example.test' then 'QUOKKA Vic'
      when 'people.ada@example.test' then 'Quokka Ada'
      when 'people.pat@example.test' then 'Quokka 100% Pat'
      when 'people.uma@example.test' then 'Quokka Under_Score'
      when 'people.ras@example.test' then 'Quokka Ras'
    end,
    image = case when email = 'people.bob@example.test' then 'https://img.example.test/bob.png' end
  where email like 'people.%@example.test';
  update app.users set status = 'suspended' where email = 'people.cat@example.test';
end
$$;

select count(*) as active_users from app.users where status = 'active' \gset

-- ---------------------------------------------------------------------------------------------
-- Schema
-- ---------------------------------------------------------------------------------------------

select is(
  (select array_agg(x.arg_name order by x.ord)
   from pg_proc p,
     unnest(p.proargnames, p.proargmodes) with ordinality as x (arg_name, arg_mode, ord)
   where p.oid = 'app.list_people(text, text, uuid, integer)'::regprocedure and x.arg_mode = 't'),
  array['id', 'name', 'image', 'role']::text[],
  'app.list_people returns exactly id, name, image and role: never an e-mail.'
);
select ok(
  (select p.prosecdef and p.proconfig @> array['search_path=""']
   from pg_proc p where p.oid = 'app.list_people(text, text, uuid, integer)'::regprocedure),
  'app.list_people is security definer with an empty search_path.'
);
select ok(
  has_function_privilege('authenticated', 'app.list_people(text, text, uuid, integer)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.list_people(text, text, uuid, integer)', 'EXECUTE'),
  'authenticated may execute app.list_people (it checks the role inside); anon may not.'
);
select isnt(
  obj_description('app.list_people(text, text, uuid, integer)'::regprocedure, 'pg_proc'),
  null,
  'app.list_people says why in comment on.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok(
  $$ select * from app.list_people('quokka') $$,
  '42501', null,
  'An anonymous visitor cannot list people (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- VISITOR
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('people.vic@example.test'));
select throws_ok(
  $$ select * from app.list_people('quokka') $$,
  '42501', 'the people directory needs the SUBSCRIBER role',
  'A signed-in VISITOR cannot list people (42501).'
);

-- ---------------------------------------------------------------------------------------------
-- SUBSCRIBER
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('people.ann@example.test'));
select results_eq(
  $$ select name from app.list_people('quokka') $$,
  $$ values ('Quokka 100% Pat'), ('Quokka Ada'), ('quokka bob'), ('Quokka Ras'),
            ('Quokka Under_Score'), ('QUOKKA Vic') $$,
  'A SUBSCRIBER finds the other active users, by name without regard to case; not themselves, not the suspended one.'
);
select results_eq(
  $$ select id, name, image, role from app.list_people('bob') $$,
  format($$ values (%L::uuid, 'quokka bob', 'https://img.example.test/bob.png', 'MEMBER'::app.user_role) $$,
    tests.user_id('people.bob@example.test')),
  'Each row carries the id, name, image and role.'
);
select results_eq(
  $$ select name from app.list_people('QUOKKA B') $$,
  $$ values ('quokka bob') $$,
  'The search is case-insensitive.'
);
select results_eq(
  $$ select name from app.list_people('ka b') $$,
  $$ values ('quokka bob') $$,
  'The search matches anywhere in the name.'
);
select results_eq(
  $$ select name from app.list_people('100%') $$,
  $$ values ('Quokka 100% Pat') $$,
  'A % in the search is a literal percent sign, not a wildcard.'
);
select results_eq(
  $$ select name from app.list_people('r_s') $$,
  $$ values ('Quokka Under_Score') $$,
  'An _ in the search is a literal underscore, not a wildcard (Quokka Ras does not match).'
);
select is_empty(
  $$ select 1 from app.list_people('people.') $$,
  'The search never looks at e-mail addresses.'
);
select is_empty(
  $$ select 1 from app.list_people('Quokka Ann') $$,
  'The caller is left out of the directory.'
);
select is_empty(
  $$ select 1 from app.list_people('Quokka Cat') $$,
  'Suspended users are left out of the directory.'
);
select is(
  (select count(*)::int from app.list_people(null, null, null, 1000)),
  :active_users - 1,
  'Without a search every other active user is listed (a page holds at most 201).'
);
select results_eq(
  $$ select name from app.list_people('quokka', null, null, 2) $$,
  $$ values ('Quokka 100% Pat'), ('Quokka Ada') $$,
  'A page holds at most max_rows rows.'
);
select results_eq(
  format($$ select name from app.list_people('quokka', 'Quokka Ada', %L, 2) $$,
    tests.user_id('people.ada@example.test')),
  $$ values ('quokka bob'), ('Quokka Ras') $$,
  'The next page starts after the last row seen (name, id).'
);
select results_eq(
  format($$ select name from app.list_people('quokka', 'Quokka Ras', %L, 2) $$,
    tests.user_id('people.ras@example.test')),
  $$ values ('Quokka Under_Score'), ('QUOKKA Vic') $$,
  'Paging reaches the last row, each row once.'
);
select results_eq(
  $$ select id from app.users $$,
  array[tests.user_id('people.ann@example.test')],
  'app.users still shows a SUBSCRIBER only their own row.'
);

-- ---------------------------------------------------------------------------------------------
-- MEMBER and ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('people.bob@example.test'));
select results_eq(
  $$ select name from app.list_people('quokka') $$,
  $$ values ('Quokka 100% Pat'), ('Quokka Ada'), ('Quokka Ann'), ('Quokka Ras'),
            ('Quokka Under_Score'), ('QUOKKA Vic') $$,
  'A MEMBER finds the same people, without themselves.'
);
select results_eq(
  $$ select id from app.users $$,
  array[tests.user_id('people.bob@example.test')],
  'app.users still shows a MEMBER only their own row.'
);

select tests.authenticate_as(tests.user_id('people.ada@example.test'));
select results_eq(
  $$ select name from app.list_people('quokka') $$,
  $$ values ('Quokka 100% Pat'), ('Quokka Ann'), ('quokka bob'), ('Quokka Ras'),
            ('Quokka Under_Score'), ('QUOKKA Vic') $$,
  'An ADMIN finds the same people, without themselves and without the suspended one.'
);

-- ---------------------------------------------------------------------------------------------
-- A suspended caller
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('people.cat@example.test'));
select throws_ok(
  $$ select * from app.list_people('quokka') $$,
  '42501', 'the people directory needs the SUBSCRIBER role',
  'A suspended user cannot list people (42501).'
);

select tests.clear_authentication();
select is(
  (select count(*)::int from app.users where email like 'people.%@example.test'),
  8,
  'Listing changed nothing: the fixtures are all still there.'
);
select ok(
  not exists (
    select 1 from pg_proc p
    where p.oid = 'app.list_people(text, text, uuid, integer)'::regprocedure and p.provolatile = 'v'
  ),
  'app.list_people is read-only (stable).'
);

select * from finish();
rollback;
