/*
 * app.role_changes, the audit trail of role changes: it is written only by the trigger on
 * app.users, so every role change by any path is recorded with its author and reason, and nobody
 * can forge, edit or delete an entry. A user reads their own history; an ADMIN reads everyone's.
 */
begin;
select plan(17);

do $$
begin
  perform tests.create_user('audit.admin@example.test', 'ADMIN');
  perform tests.create_user('audit.erin@example.test', 'SUBSCRIBER');
  perform tests.create_user('audit.frank@example.test', 'SUBSCRIBER');
  -- Two promotions by a trusted server path, with reasons.
  perform set_config('agora.role_change_reason', 'Erin promoted', true);
  update app.users set role = 'MEMBER' where email = 'audit.erin@example.test';
  perform set_config('agora.role_change_reason', 'Frank promoted', true);
  update app.users set role = 'MEMBER' where email = 'audit.frank@example.test';
  perform set_config('agora.role_change_reason', '', true);
end
$$;

select results_eq(
  format($$ select previous_role::text, new_role::text, changed_by, reason from app.role_changes where user_id = %L $$,
    tests.user_id('audit.erin@example.test')),
  $$ values ('SUBSCRIBER', 'MEMBER', null::uuid, 'Erin promoted') $$,
  'A role change by a server path is recorded by the trigger with its reason and no author.'
);

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
  '42501', 'permission denied for table role_changes',
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
select throws_ok(
  format($$ insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason)
            values (%L, 'MEMBER', 'CONFIDENTIAL', auth.uid(), 'Recorded by hand') $$,
    tests.user_id('audit.erin@example.test')),
  '42501', 'permission denied for table role_changes',
  'Not even an ADMIN can write an audit entry by hand.'
);
select throws_ok(
  format($$ update app.users set role = 'CONFIDENTIAL' where id = %L $$, tests.user_id('audit.erin@example.test')),
  'AG400', 'a role change needs a reason (use app.change_user_role)',
  'An ADMIN cannot change a role without a reason, even with a direct update.'
);
select lives_ok(
  format($$ select app.change_user_role(%L, 'CONFIDENTIAL', 'Needs the vault') $$,
    tests.user_id('audit.erin@example.test')),
  'An ADMIN changes a role through app.change_user_role.'
);
select results_eq(
  format($$ select previous_role::text, new_role::text, changed_by, reason from app.role_changes
            where user_id = %L order by id desc limit 1 $$, tests.user_id('audit.erin@example.test')),
  format($$ values ('MEMBER', 'CONFIDENTIAL', %L::uuid, 'Needs the vault') $$, tests.user_id('audit.admin@example.test')),
  'The change is recorded with the admin as author and the reason given.'
);
select lives_ok(
  format($$ select app.change_user_role(%L, 'CONFIDENTIAL', 'Again') $$, tests.user_id('audit.erin@example.test')),
  'Setting the role a user already holds is accepted.'
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
select is(
  (select count(*) from app.role_changes),
  :'change_count'::bigint + 1,
  'Only the one real change added an entry; the no-op and the refused attempts added none.'
);

select * from finish();
rollback;
