/*
 * The bulk send's accept counts its audience from the maintained user counters
 * (app.create_notification_batch, app.user_counts): the number it returns is the number of users
 * app_private.in_audience admits (the rule the chunks write by), for everybody, roles, listed
 * users, and mixes of them with duplicates, suspended users, ids that are not uuids and users
 * already covered by a role.
 */
begin;
select plan(6);

do $$
begin
  perform tests.create_user('accept.mia@example.test', 'MEMBER');
  perform tests.create_user('accept.sam@example.test', 'SUBSCRIBER');
  perform tests.create_user('accept.sid@example.test', 'SUBSCRIBER');
  perform tests.create_user('accept.vic@example.test', 'VISITOR');
  perform tests.create_user('accept.ada@example.test', 'ADMIN');
end
$$;
select tests.user_id('accept.mia@example.test') as mia \gset
select tests.user_id('accept.sam@example.test') as sam \gset
select tests.user_id('accept.sid@example.test') as sid \gset
select tests.user_id('accept.vic@example.test') as vic \gset
select tests.user_id('accept.ada@example.test') as ada \gset
update app.users set status = 'suspended' where id = :'sid';

-- The accepted count against the rule, counted row by row.
-- (Accepted as the ADMIN, counted with the test's own rights.)
create function pg_temp.agrees(audience jsonb) returns boolean language plpgsql as $$
declare
  accepted integer;
  counted integer;
begin
  perform tests.authenticate_as(tests.user_id('accept.ada@example.test'));
  accepted := (app.create_notification_batch(audience, '{"type": "SYSTEM", "title": "Count"}',
                                             array['inApp']) ->> 'recipients')::integer;
  perform tests.clear_authentication();
  select count(*)::integer into counted from app.users u where app_private.in_audience(u, audience);
  if accepted <> counted then
    raise notice 'audience %: accepted %, counted %', audience, accepted, counted;
  end if;
  return accepted = counted;
end;
$$;

select ok(pg_temp.agrees('{"all": true}'), 'Everybody: every active user.');
select ok(pg_temp.agrees('{"roles": ["SUBSCRIBER"]}'), 'A role: its active users (not the suspended one).');
select ok(pg_temp.agrees(jsonb_build_object('userIds', jsonb_build_array(:'sam', :'sid', :'vic', :'vic'))),
  'Listed users: each once, active ones only.');
select ok(pg_temp.agrees(jsonb_build_object('roles', jsonb_build_array('MEMBER', 'ADMIN'),
                                            'userIds', jsonb_build_array(:'mia', :'sam', 'not-a-uuid', upper(:'vic')))),
  'Roles and users: a listed user of a named role once, ids that are not (lowercase) uuids nobody.');
select ok(pg_temp.agrees(jsonb_build_object('all', true, 'userIds', jsonb_build_array(:'sam', :'sid'))),
  'Everybody and users: everybody.');
select ok(pg_temp.agrees(jsonb_build_object('roles', jsonb_build_array('VISITOR'), 'userIds', jsonb_build_array(:'sid'))),
  'A role and a suspended user: the role''s active users.');

select * from finish();
rollback;
