/*
 * app.config_versions, the versioned system configuration: an ADMIN reads every version and adds
 * new ones in their own name; history is never edited; everyone else reads only the public part,
 * through app.public_config(), which returns the version, whiteLabel and features and nothing else.
 */
begin;
select plan(21);

do $$
begin
  perform tests.create_user('config.admin@example.test', 'ADMIN');
  perform tests.create_user('config.liz@example.test', 'CONFIDENTIAL');
end
$$;

select max(version) + 1 as next_version from app.config_versions \gset

insert into app.config_versions (version, config, reason, changed_by) values (
  :next_version,
  '{"whiteLabel": {"brandName": "Test Brand"}, "features": {"marketplace": true},
    "smtp": {"password": "hunter2"}, "jwtSecret": "s3cret"}',
  'Test configuration',
  tests.user_id('config.admin@example.test')
);

select count(*) as version_count from app.config_versions \gset

-- ---------------------------------------------------------------------------------------------
-- Admin (self)
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('config.admin@example.test'));

select is(
  (select count(*) from app.config_versions),
  :'version_count'::bigint,
  'An ADMIN reads every configuration version.'
);
select is(
  (select config -> 'smtp' ->> 'password' from app.config_versions where version = :next_version),
  'hunter2',
  'An ADMIN reads the full configuration, private settings included.'
);
select lives_ok(
  format($$ insert into app.config_versions (version, config, diff, reason, changed_by)
            values (%s, '{"whiteLabel": {"brandName": "Test Brand Two"}, "features": {"marketplace": false},
                          "smtp": {"password": "hunter3"}}',
                    '{"whiteLabel.brandName": {"from": "Test Brand", "to": "Test Brand Two"}}',
                    'Rebrand', auth.uid()) $$, :next_version + 1),
  'An ADMIN can add the next configuration version in their own name.'
);
select results_eq(
  format('select changed_by, reason from app.config_versions where version = %s', :next_version + 1),
  format($$ values (%L::uuid, 'Rebrand') $$, tests.user_id('config.admin@example.test')),
  'The new version is stored with its author and reason.'
);
select throws_ok(
  format($$ insert into app.config_versions (version, config, reason, changed_by)
            values (%s, '{}', 'Concurrent edit', auth.uid()) $$, :next_version + 1),
  '23505', null,
  'Two writers cannot both add the same version (the primary key is the optimistic lock).'
);

-- ---------------------------------------------------------------------------------------------
-- Admin acting for another user
-- ---------------------------------------------------------------------------------------------

select throws_ok(
  format($$ insert into app.config_versions (version, config, reason, changed_by)
            values (%s, '{}', 'Blame Liz', %L) $$, :next_version + 2, tests.user_id('config.liz@example.test')),
  '42501', 'new row violates row-level security policy for table "config_versions"',
  'An ADMIN cannot add a version in someone else''s name.'
);
select throws_ok(
  format($$ insert into app.config_versions (version, config, reason, changed_by)
            values (%s, '{}', 'Nobody did it', null) $$, :next_version + 2),
  '42501', 'new row violates row-level security policy for table "config_versions"',
  'An ADMIN cannot add a version without an author.'
);
select throws_ok(
  format($$ insert into app.config_versions (version, config, reason, changed_by, created_at)
            values (%s, '{}', 'Backdated', auth.uid(), now() - interval '1 year') $$, :next_version + 2),
  '42501', 'permission denied for table config_versions',
  'An ADMIN cannot backdate a version.'
);
select throws_ok(
  format($$ update app.config_versions set reason = 'Rewritten' where version = %s $$, :next_version),
  '42501', 'permission denied for table config_versions',
  'An ADMIN cannot edit a past version.'
);
select throws_ok(
  format($$ delete from app.config_versions where version = %s $$, :next_version),
  '42501', 'permission denied for table config_versions',
  'An ADMIN cannot delete a version.'
);

-- ---------------------------------------------------------------------------------------------
-- Another (non-admin) user
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('config.liz@example.test'));

select is_empty(
  $$ select * from app.config_versions $$,
  'A non-admin user, even CONFIDENTIAL, sees no configuration version.'
);
select throws_ok(
  format($$ insert into app.config_versions (version, config, reason, changed_by)
            values (%s, '{}', 'Takeover', auth.uid()) $$, :next_version + 2),
  '42501', 'new row violates row-level security policy for table "config_versions"',
  'A non-admin user cannot add a configuration version.'
);
select is(
  (app.public_config() ->> 'version')::integer,
  :next_version + 1,
  'A signed-in user can read the public configuration of the newest version.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app.config_versions $$,
  '42501', 'permission denied for table config_versions',
  'An anonymous visitor cannot read app.config_versions.'
);
select throws_ok(
  format($$ insert into app.config_versions (version, config, reason) values (%s, '{}', 'Anonymous') $$,
    :next_version + 2),
  '42501', 'permission denied for table config_versions',
  'An anonymous visitor cannot add a configuration version.'
);
select is(
  (select array_agg(k order by k) from jsonb_object_keys(app.public_config()) as k),
  array['features', 'version', 'whiteLabel'],
  'app.public_config returns exactly the keys version, whiteLabel and features.'
);
select is(
  jsonb_build_object(
    'version', app.public_config() -> 'version',
    'brandName', app.public_config() #> '{whiteLabel,brandName}',
    'primaryColor', app.public_config() #> '{whiteLabel,primaryColor}',
    'marketplace', app.public_config() #> '{features,marketplace}',
    'messaging', app.public_config() #> '{features,messaging}'),
  jsonb_build_object('version', :next_version + 1, 'brandName', 'Test Brand Two',
    'primaryColor', '#1f6feb', 'marketplace', false, 'messaging', true),
  'app.public_config returns the whiteLabel and features of the newest version laid over the defaults.'
);
select ok(
  app.public_config()::text not like '%hunter%' and app.public_config()::text not like '%s3cret%',
  'app.public_config reveals no private setting of any version.'
);

-- ---------------------------------------------------------------------------------------------
-- Trusted server path
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select results_eq(
  format('select version, reason from app.config_versions where version >= %s order by version', :next_version),
  format($$ values (%s, 'Test configuration'), (%s, 'Rebrand') $$, :next_version, :next_version + 1),
  'Only the ADMIN''s allowed version was added, and the earlier one is untouched.'
);

insert into app.config_versions (version, config, reason) values (:next_version + 2, '{"other": 1}', 'No public keys');
select is(
  app.public_config(),
  jsonb_build_object('version', :next_version + 2,
    'whiteLabel', app_private.config_defaults() -> 'whiteLabel',
    'features', app_private.config_defaults() -> 'features'),
  'Without whiteLabel or features, app.public_config returns their defaults.'
);
select throws_ok(
  $$ insert into app.config_versions (version, config, reason) values (0, '{}', 'Zero') $$,
  '23514', null,
  'Configuration versions start at 1.'
);

select * from finish();
rollback;
