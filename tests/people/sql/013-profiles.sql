/*
 * Profiles (20261129160000_foundation_profiles.sql), per persona: a person changes their own
 * name, bio, time zone, locale and picture (an upload of their own with an image type), never
 * another's; the database checks the name and the picture whoever writes; SUBSCRIBER and above
 * read an active user's public profile and uploaded picture (never an e-mail, never a suspended
 * user's), anonymous callers and VISITORs nothing; a new account's name is not its e-mail's
 * local part; profile.updated goes to user:<id>; a profile picture is not an orphan upload.
 */
begin;
select plan(38);

do $$
declare
  ann uuid := tests.create_user('profiles.ann@example.test', 'SUBSCRIBER');
  bob uuid := tests.create_user('profiles.bob@example.test', 'MEMBER');
  sus uuid := tests.create_user('profiles.sus@example.test', 'SUBSCRIBER');
begin
  perform tests.create_user('profiles.vic@example.test', 'VISITOR');
  perform tests.create_user('profiles.ada@example.test', 'ADMIN');
  insert into app.attachments (id, uploader_id, name, content_type, size, storage_key) values
    ('10000000-0000-4000-8000-0000000000a1', ann, 'ann.png', 'image/png', 10, 'profiles/ann-png'),
    ('10000000-0000-4000-8000-0000000000a2', ann, 'ann.pdf', 'application/pdf', 10, 'profiles/ann-pdf'),
    ('10000000-0000-4000-8000-0000000000a3', ann, 'old.txt', 'text/plain', 10, 'profiles/ann-old'),
    ('10000000-0000-4000-8000-0000000000b1', bob, 'bob.png', 'image/png', 10, 'profiles/bob-png'),
    ('10000000-0000-4000-8000-0000000000c1', sus, 'sus.png', 'image/png', 10, 'profiles/sus-png');
  update app.users set image_attachment_id = '10000000-0000-4000-8000-0000000000c1' where id = sus;
  update app.users set status = 'suspended' where id = sus;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Schema
-- ---------------------------------------------------------------------------------------------

select ok(
  has_column_privilege('authenticated', 'app.users', 'bio', 'UPDATE')
  and has_column_privilege('authenticated', 'app.users', 'time_zone', 'UPDATE')
  and has_column_privilege('authenticated', 'app.users', 'locale', 'UPDATE')
  and has_column_privilege('authenticated', 'app.users', 'image_attachment_id', 'UPDATE')
  and not has_column_privilege('anon', 'app.users', 'bio', 'UPDATE'),
  'authenticated may update the profile columns (RLS and the guards decide whose); anon may not.'
);
select ok(
  has_function_privilege('authenticated', 'app.user_profile(uuid)', 'EXECUTE')
  and has_function_privilege('authenticated', 'app.profile_image(uuid)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.user_profile(uuid)', 'EXECUTE')
  and not has_function_privilege('anon', 'app.profile_image(uuid)', 'EXECUTE')
  and not has_function_privilege('authenticated', 'app_private.new_account_name()', 'EXECUTE'),
  'authenticated may execute app.user_profile and app.profile_image (they check the role inside); anon may not.'
);
select ok(
  (select bool_and(p.prosecdef and p.proconfig @> array['search_path=""']) from pg_proc p
   where p.oid in ('app.user_profile(uuid)'::regprocedure, 'app.profile_image(uuid)'::regprocedure)),
  'app.user_profile and app.profile_image are security definer with an empty search_path.'
);

-- ---------------------------------------------------------------------------------------------
-- A new account's name
-- ---------------------------------------------------------------------------------------------

insert into app.users (email) values ('jane.doe@example.test');
select matches(
  (select name from app.users where email = 'jane.doe@example.test'),
  '^Member [0-9]{4}$',
  'A new account without a name is "Member NNNN" (app_private.new_account_name()) ...'
);
select ok(
  (select name not ilike '%jane%' from app.users where email = 'jane.doe@example.test'),
  '... never its e-mail''s local part.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous and VISITOR
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok(
  format('select app.user_profile(%L)', tests.user_id('profiles.ann@example.test')),
  '42501', null, 'Anonymous: app.user_profile is refused (42501).'
);
select throws_ok(
  format('select * from app.profile_image(%L)', tests.user_id('profiles.ann@example.test')),
  '42501', null, 'Anonymous: app.profile_image is refused (42501).'
);
select throws_ok(
  format($$ update app.users set bio = 'x' where id = %L $$,
    tests.user_id('profiles.ann@example.test')),
  '42501', null, 'Anonymous: no profile changes (42501).'
);

select tests.clear_authentication();
select tests.authenticate_as(tests.user_id('profiles.vic@example.test'));
select throws_ok(
  format('select app.user_profile(%L)', tests.user_id('profiles.ann@example.test')),
  '42501', null, 'VISITOR: another person''s profile is refused (42501).'
);
select is(
  tests.row_count($$ update app.users set name = 'Victor', bio = 'hi' where id = auth.uid() $$),
  1::bigint, 'VISITOR: changes their own name and bio.'
);

-- ---------------------------------------------------------------------------------------------
-- SUBSCRIBER: their own profile
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();
select tests.authenticate_as(tests.user_id('profiles.ann@example.test'));
select is(
  tests.row_count($$ update app.users set name = 'Ann Example', bio = 'Botanist',
    time_zone = 'Europe/Berlin', locale = 'de-CH' where id = auth.uid() $$),
  1::bigint, 'SUBSCRIBER: changes their own name, bio, time zone and locale.'
);
select is(
  tests.row_count(format($$ update app.users set bio = 'hacked', name = 'Mallory' where id = %L $$,
    tests.user_id('profiles.bob@example.test'))),
  0::bigint, 'SUBSCRIBER: another person''s profile is not theirs to change (RLS: nothing updated).'
);
select throws_ok(
  $$ update app.users set name = '' where id = auth.uid() $$,
  'AG400', null, 'An empty name is refused by the database (AG400).'
);
select throws_ok(
  format($$ update app.users set name = %L where id = auth.uid() $$, repeat('n', 65)),
  'AG400', null, 'A name of 65 characters is refused (AG400).'
);
select throws_ok(
  $$ update app.users set name = E'Ann\x07' where id = auth.uid() $$,
  'AG400', null, 'A name with a control character is refused (AG400).'
);
select throws_ok(
  $$ update app.users set name = ' Ann ' where id = auth.uid() $$,
  'AG400', null, 'A name with spaces around it is refused (AG400): the API stores it trimmed.'
);
select throws_ok(
  format($$ update app.users set bio = %L where id = auth.uid() $$, repeat('b', 501)),
  '23514', null, 'A bio over 500 characters is refused (23514).'
);
select throws_ok(
  $$ update app.users set image_attachment_id = '10000000-0000-4000-8000-0000000000b1'
     where id = auth.uid() $$,
  'AG404', null, 'Another person''s upload as the picture: AG404 (as if there were none).'
);
select throws_ok(
  $$ update app.users set image_attachment_id = '10000000-0000-4000-8000-0000000000a2'
     where id = auth.uid() $$,
  'AG415', null, 'An upload that is not an image as the picture: AG415.'
);
select is(
  tests.row_count($$ update app.users set image_attachment_id = '10000000-0000-4000-8000-0000000000a1'
    where id = auth.uid() $$),
  1::bigint, 'SUBSCRIBER: an image upload of their own becomes their picture ...'
);
select is(
  (select image from app.users where id = auth.uid()),
  '/api/users/' || auth.uid()::text || '/image?v=10000000-0000-4000-8000-0000000000a1',
  '... and image, what every endpoint shows, is its URL.'
);
select ok(
  (select count(*) = 1 from app.events e
   where e.topic = 'user:' || auth.uid()::text and e.event = 'profile.updated'
     and e.payload = jsonb_build_object('id', auth.uid(), 'name', 'Ann Example',
       'image', '/api/users/' || auth.uid()::text || '/image?v=10000000-0000-4000-8000-0000000000a1',
       'bio', 'Botanist', 'role', 'SUBSCRIBER')),
  'profile.updated on user:<id> carries the public profile (no e-mail, time zone or locale).'
);
select is(
  tests.row_count($$ update app.users set locale = 'fr' where id = auth.uid() $$),
  1::bigint, 'A change to the locale alone ...'
);
select is(
  (select count(*)::int from app.events e
   where e.topic = 'user:' || auth.uid()::text and e.event = 'profile.updated'),
  2, '... emits no profile.updated (the locale is not public): two events so far, the name and the picture.'
);

-- ---------------------------------------------------------------------------------------------
-- MEMBER: someone else's public profile and picture
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();
select tests.authenticate_as(tests.user_id('profiles.bob@example.test'));
select is(
  app.user_profile(tests.user_id('profiles.ann@example.test')),
  jsonb_build_object('id', tests.user_id('profiles.ann@example.test'), 'name', 'Ann Example',
    'image', '/api/users/' || tests.user_id('profiles.ann@example.test')::text
      || '/image?v=10000000-0000-4000-8000-0000000000a1',
    'bio', 'Botanist', 'role', 'SUBSCRIBER'),
  'Another SUBSCRIBER+ sees id, name, image, bio and role: never e-mail, time zone or locale.'
);
select is(
  (select storage_key from app.profile_image(tests.user_id('profiles.ann@example.test'))),
  'profiles/ann-png', '... and may fetch the uploaded picture (app.profile_image).'
);
select is(
  app.user_profile(tests.user_id('profiles.sus@example.test')), null,
  'A suspended user''s profile is not shown (null: 404).'
);
select is(
  (select count(*)::int from app.profile_image(tests.user_id('profiles.sus@example.test'))), 0,
  'Nor their picture.'
);
select is(
  app.user_profile('00000000-0000-4000-8000-00000000dead'), null,
  'An unknown user: null (404).'
);
select is(
  (select count(*)::int from app.attachments where id = '10000000-0000-4000-8000-0000000000a1'),
  0, 'The picture''s attachment row itself stays hidden by attachment RLS (the file is served only through app.profile_image).'
);

-- ---------------------------------------------------------------------------------------------
-- ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();
select tests.authenticate_as(tests.user_id('profiles.ada@example.test'));
select is(
  app.user_profile(tests.user_id('profiles.ann@example.test')) ->> 'name', 'Ann Example',
  'ADMIN: reads a public profile.'
);
select throws_ok(
  format($$ update app.users set image_attachment_id = '10000000-0000-4000-8000-0000000000b1' where id = %L $$,
    tests.user_id('profiles.ann@example.test')),
  'AG404', null, 'ADMIN: cannot make someone''s picture an upload that is not theirs (AG404).'
);

-- ---------------------------------------------------------------------------------------------
-- The picture's life
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();
update app.attachments set created_at = now() - interval '2 days'
where id in ('10000000-0000-4000-8000-0000000000a1', '10000000-0000-4000-8000-0000000000a3');
select app_private.collect_orphan_attachments();
select is(
  (select array_agg(id::text order by id) from app.attachments
   where id in ('10000000-0000-4000-8000-0000000000a1', '10000000-0000-4000-8000-0000000000a3')),
  array['10000000-0000-4000-8000-0000000000a1'],
  'The orphan collector keeps an old upload that is a profile picture, drops an old one that is not.'
);

select tests.authenticate_as(tests.user_id('profiles.ann@example.test'));
select is(
  tests.row_count($$ update app.users set image = 'https://img.example.test/ann.png' where id = auth.uid() $$),
  1::bigint, 'A picture set as a URL ...'
);
select is(
  (select image_attachment_id from app.users where id = auth.uid()), null,
  '... lets go of the upload.'
);
select lives_ok(
  $$ update app.users set image_attachment_id = '10000000-0000-4000-8000-0000000000a1' where id = auth.uid() $$,
  'The upload is the picture again.'
);
select tests.clear_authentication();
delete from app.attachments where id = '10000000-0000-4000-8000-0000000000a1';
select is(
  (select array[image_attachment_id::text, image] from app.users
   where id = tests.user_id('profiles.ann@example.test')),
  array[null, null]::text[],
  'When the file goes, the picture goes (image_attachment_id and image null).'
);
select lives_ok(
  format('delete from app.users where id = %L', tests.user_id('profiles.sus@example.test')),
  'A user with an uploaded picture can be deleted (their uploads with them).'
);

select * from finish();
rollback;
