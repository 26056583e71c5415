/*
 * app.role_changes, the audit trail of role changes: a user reads their own history, an ADMIN
 * reads everyone's and may record a change only in their own name; nobody edits or deletes it.
 */
begin;
select plan(18);

do $$
begin
  perform tests.create_user('audit.admin@example.test', 'ADMIN');
  perform tests.create_user('audit.erin@example.test', 'MEMBER');
  perform tests.create_user('audit.frank@example.test', 'MEMBER');

  insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason) values
    (tests.user_id('audit.erin@example.test'), 'SUBSCRIBER', 'MEMBER',
     tests.user_id('audit.admin@example.test'), 'Erin promoted'),
    (tests.user_id('audit.frank@example.test'), 'SUBSCRIBER', 'MEMBER',
     tests.user_id('audit.admin@example.test'), 'Frank promoted');
end
$$;

select count(*) as change_count from app.role_changes \gset

-- ---------------------------------------------------------------------------------------------
-- Self
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('audit.erin@example.test'));

select results_eq(
  $$ select reason from app.role_changes $$,
  array['Erin promoted'],
  'A user sees exactly their own role changes.'
);
select throws_ok(
  $$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
     values (auth.uid(), 'MEMBER', 'ADMIN', auth.uid(), 'Forged') $$,
  '42501', 'new row violates row-level security policy for table "role_changes"',
  'A user cannot record a role change, not even about themselves.'
);
select throws_ok(
  $$ update app.role_changes set reason = 'Rewritten' where user_id = auth.uid() $$,
  '42501', 'permission denied for table role_changes',
  'A user cannot edit their own role-change history.'
);
select throws_ok(
  $$ delete from app.role_changes where user_id = auth.uid() $$,
  '42501', 'permission denied for table role_changes',
  'A user cannot delete their own role-change history.'
);

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select is_empty(
  format('select * from app.role_changes where user_id = %L', tests.user_id('audit.frank@example.test')),
  'Another user''s role changes are invisible.'
);
select throws_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
            values (%L, 'MEMBER', 'VISITOR', auth.uid(), 'Forged') $$, tests.user_id('audit.frank@example.test')),
  '42501', 'new row violates row-level security policy for table "role_changes"',
  'A user cannot record a role change about another user.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.role_changes $$,
  '42501', 'permission denied for table role_changes',
  'An anonymous visitor cannot read app.role_changes.'
);
select throws_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, reason)
            values (%L, 'MEMBER', 'ADMIN', 'Anonymous') $$, tests.user_id('audit.erin@example.test')),
  '42501', 'permission denied for table role_changes',
  'An anonymous visitor cannot record a role change.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('audit.admin@example.test'));

select is(
  (select count(*) from app.role_changes),
  :'change_count'::bigint,
  'An ADMIN sees every role change.'
);
select set_has(
  $$ select reason from app.role_changes $$,
  $$ values ('Erin promoted'), ('Frank promoted') $$,
  'An ADMIN sees the role changes of both users.'
);
select lives_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
            values (%L, 'MEMBER', 'CONFIDENTIAL', auth.uid(), 'Recorded by the admin') $$,
    tests.user_id('audit.erin@example.test')),
  'An ADMIN can record a role change in their own name.'
);
select throws_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
            values (%L, 'MEMBER', 'CONFIDENTIAL', %L, 'Blame someone else') $$,
    tests.user_id('audit.erin@example.test'), tests.user_id('audit.frank@example.test')),
  '42501', 'new row violates row-level security policy for table "role_changes"',
  'An ADMIN cannot record a role change in someone else''s name.'
);
select throws_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
            values (%L, 'MEMBER', 'CONFIDENTIAL', null, 'Nobody did it') $$,
    tests.user_id('audit.erin@example.test')),
  '42501', 'new row violates row-level security policy for table "role_changes"',
  'An ADMIN cannot record an anonymous role change.'
);
select throws_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason, changed_at)
            values (%L, 'MEMBER', 'CONFIDENTIAL', auth.uid(), 'Backdated', now() - interval '1 year') $$,
    tests.user_id('audit.erin@example.test')),
  '42501', 'permission denied for table role_changes',
  'An ADMIN cannot backdate a role change (no insert privilege on changed_at).'
);
select throws_ok(
  $$ update app.role_changes set reason = 'Rewritten' $$,
  '42501', 'permission denied for table role_changes',
  'An ADMIN cannot rewrite the role-change history.'
);
select throws_ok(
  $$ delete from app.role_changes $$,
  '42501', 'permission denied for table role_changes',
  'An ADMIN cannot delete the role-change history.'
);

select tests.clear_authentication();
select results_eq(
  format($$ select reason from app.role_changes where user_id = %L order by id $$,
    tests.user_id('audit.erin@example.test')),
  $$ values ('Erin promoted'), ('Recorded by the admin') $$,
  'Erin''s history holds the original entry and the admin''s entry, untouched.'
);
select is(
  (select count(*) from app.role_changes),
  :'change_count'::bigint + 1,
  'Only the one allowed insert added a role change.'
);

select * from finish();
rollback;
