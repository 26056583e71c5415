/*
 * Server-only state: the app_private tables (refresh tokens, magic links, rate limits) and the
 * local mailbox dev.mail are out of reach of every API role, admins included; only the server's
 * own connection (here: the superuser) uses them, and app_private.hit_rate_limit counts hits per
 * bucket and per fixed window.
 */
begin;
select plan(28);

do $$
begin
  perform tests.create_user('private.user@example.test');
  perform tests.create_user('private.admin@example.test', 'ADMIN');

  insert into app.sessions (id, user_id, provider, expires_at) values
    ('5e55a000-0000-4000-8000-0000000000f1', tests.user_id('private.user@example.test'), 'email', now() + interval '30 days');
  insert into app_private.refresh_tokens (session_id, token_hash)
    values ('5e55a000-0000-4000-8000-0000000000f1', 'test-refresh-hash');
  insert into app_private.magic_links (email, token_hash, expires_at)
    values ('private.user@example.test', 'test-magic-hash', now() + interval '15 minutes');
  insert into dev.mail (to_address, subject, text_body)
    values ('private.user@example.test', 'Your sign-in link', 'secret link');
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Self: a signed-in user, even about their own rows
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('private.user@example.test'));

select throws_ok(
  $$ select * from app_private.refresh_tokens $$,
  '42501', 'permission denied for schema app_private',
  'A signed-in user cannot read app_private.refresh_tokens, not even their own session''s.'
);
select throws_ok(
  $$ select * from app_private.magic_links $$,
  '42501', 'permission denied for schema app_private',
  'A signed-in user cannot read app_private.magic_links, not even their own.'
);
select throws_ok(
  $$ select * from app_private.rate_limits $$,
  '42501', 'permission denied for schema app_private',
  'A signed-in user cannot read app_private.rate_limits.'
);
select throws_ok(
  $$ select * from dev.mail $$,
  '42501', 'permission denied for schema dev',
  'A signed-in user cannot read dev.mail, not even their own mail.'
);
select throws_ok(
  $$ insert into app_private.rate_limits (bucket, window_start, hits) values ('test:forged', now(), -1000) $$,
  '42501', 'permission denied for schema app_private',
  'A signed-in user cannot write rate-limit counters.'
);
select throws_ok(
  $$ delete from app_private.rate_limits $$,
  '42501', 'permission denied for schema app_private',
  'A signed-in user cannot reset rate-limit counters.'
);
select throws_ok(
  $$ select * from app_private.hit_rate_limit('test:user', 60) $$,
  '42501', null,
  'A signed-in user cannot call app_private.hit_rate_limit.'
);

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();

select throws_ok(
  $$ select * from app_private.refresh_tokens $$,
  '42501', 'permission denied for schema app_private',
  'An anonymous visitor cannot read app_private.refresh_tokens.'
);
select throws_ok(
  $$ select * from app_private.magic_links $$,
  '42501', 'permission denied for schema app_private',
  'An anonymous visitor cannot read app_private.magic_links.'
);
select throws_ok(
  $$ select * from app_private.rate_limits $$,
  '42501', 'permission denied for schema app_private',
  'An anonymous visitor cannot read app_private.rate_limits.'
);
select throws_ok(
  $$ select * from dev.mail $$,
  '42501', 'permission denied for schema dev',
  'An anonymous visitor cannot read dev.mail.'
);
select throws_ok(
  $$ insert into app_private.magic_links (email, token_hash, expires_at) values ('x@example.test', 'forged', now() + interval '1 day') $$,
  '42501', 'permission denied for schema app_private',
  'An anonymous visitor cannot plant a magic link.'
);
select throws_ok(
  $$ select * from app_private.hit_rate_limit('test:anon', 60) $$,
  '42501', null,
  'An anonymous visitor cannot call app_private.hit_rate_limit.'
);

-- ---------------------------------------------------------------------------------------------
-- Admin: no exception for admins
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('private.admin@example.test'));

select throws_ok(
  $$ select * from app_private.refresh_tokens $$,
  '42501', 'permission denied for schema app_private',
  'An ADMIN cannot read app_private.refresh_tokens.'
);
select throws_ok(
  $$ select * from app_private.magic_links $$,
  '42501', 'permission denied for schema app_private',
  'An ADMIN cannot read app_private.magic_links.'
);
select throws_ok(
  $$ select * from dev.mail $$,
  '42501', 'permission denied for schema dev',
  'An ADMIN cannot read dev.mail.'
);
select throws_ok(
  $$ update app_private.refresh_tokens set spent_at = now() $$,
  '42501', 'permission denied for schema app_private',
  'An ADMIN cannot spend refresh tokens.'
);

-- ---------------------------------------------------------------------------------------------
-- The server's own connection
-- ---------------------------------------------------------------------------------------------

select tests.clear_authentication();

select results_eq(
  $$ select (select count(*) from app_private.refresh_tokens where token_hash = 'test-refresh-hash'),
            (select count(*) from app_private.magic_links where token_hash = 'test-magic-hash'),
            (select count(*) from dev.mail where text_body = 'secret link') $$,
  $$ values (1::bigint, 1::bigint, 1::bigint) $$,
  'The server''s own connection reads the private state, and the refused writes changed none of it.'
);

select is(
  (select hits from app_private.hit_rate_limit('test:bucket-a', 60)),
  1,
  'The first hit on a bucket counts 1.'
);
select is(
  (select hits from app_private.hit_rate_limit('test:bucket-a', 60)),
  2,
  'The second hit on the same bucket in the same window counts 2.'
);
select is(
  (select hits from app_private.hit_rate_limit('test:bucket-b', 60)),
  1,
  'Another bucket has its own counter.'
);
select is(
  (select reset_at from app_private.hit_rate_limit('test:bucket-a', 60)),
  to_timestamp(floor(extract(epoch from now()) / 60) * 60) + interval '60 seconds',
  'The window resets at the end of the current fixed 60-second window.'
);
select results_eq(
  $$ select bucket, hits from app_private.rate_limits where bucket like 'test:bucket-%' order by bucket $$,
  $$ values ('test:bucket-a', 3), ('test:bucket-b', 1) $$,
  'The counters are stored one row per bucket and window.'
);

-- A full counter from an earlier window does not count against the current one.
insert into app_private.rate_limits (bucket, window_start, hits)
  values ('test:bucket-c', to_timestamp(floor(extract(epoch from now()) / 60) * 60) - interval '60 seconds', 99);
select is(
  (select hits from app_private.hit_rate_limit('test:bucket-c', 60)),
  1,
  'A new window starts a new count: hits from the previous window do not carry over.'
);
select is(
  (select hits from app_private.rate_limits
   where bucket = 'test:bucket-c' and window_start < to_timestamp(floor(extract(epoch from now()) / 60) * 60)),
  99,
  'The previous window''s counter is left as it was.'
);

-- Housekeeping removes what is older than a day (rate limits) or long revoked (sessions).
insert into app_private.rate_limits (bucket, window_start, hits)
  values ('test:bucket-old', now() - interval '2 days', 5);
update app.sessions set revoked_at = now() - interval '31 days', revoked_reason = 'signout'
  where id = '5e55a000-0000-4000-8000-0000000000f1';
select app_private.prune_auth_state();

select is_empty(
  $$ select 1 from app_private.rate_limits where bucket = 'test:bucket-old' $$,
  'Pruning removes rate-limit windows older than a day.'
);
select isnt_empty(
  $$ select 1 from app_private.rate_limits where bucket = 'test:bucket-a' $$,
  'Pruning keeps the current rate-limit windows.'
);
select is_empty(
  $$ select 1 from app_private.refresh_tokens where token_hash = 'test-refresh-hash' $$,
  'Pruning a long-revoked session removes its refresh tokens with it.'
);

select * from finish();
rollback;
