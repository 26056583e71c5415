/*
 * Local seed: the four documented accounts, and enough history (sign-ups over the last 60 days,
 * sessions, sign-in events, access logs, a role change, a configuration version) for the admin
 * views to show something. Loaded once into a new local database (`npm start`, `--reset`, tests).
 * Everything is deterministic: the same seed gives the same data, relative to now().
 *
 * The admin lists are newest first by time (then id), as the server writes them: so history is
 * always in the past, and access-log rows and security events are inserted in time order, their
 * ids following their times (tests/core/sql/012-seed.sql).
 */

insert into app.users (id, email, name, role, created_at, last_sign_in_at) values
  ('00000000-0000-4000-8000-000000000001', 'admin@example.com', 'Ada Admin', 'ADMIN', now() - interval '90 days', now() - interval '1 day'),
  ('00000000-0000-4000-8000-000000000002', 'confidential@example.com', 'Cora Confidential', 'CONFIDENTIAL', now() - interval '80 days', now() - interval '2 days'),
  ('00000000-0000-4000-8000-000000000003', 'member@example.com', 'Max Member', 'MEMBER', now() - interval '70 days', now() - interval '3 days'),
  ('00000000-0000-4000-8000-000000000004', 'subscriber@example.com', 'Sam Subscriber', 'SUBSCRIBER', now() - interval '60 days', now() - interval '4 days');

-- 36 community members who signed up over the last 60 days; every seventh is suspended.
insert into app.users (email, name, role, status, created_at, last_sign_in_at)
select
  format('user%s@example.com', lpad(n::text, 2, '0')),
  format('Community User %s', n),
  (array['SUBSCRIBER', 'SUBSCRIBER', 'MEMBER', 'SUBSCRIBER', 'CONFIDENTIAL', 'MEMBER'])[1 + n % 6]::app.user_role,
  case when n % 7 = 0 then 'suspended' else 'active' end::app.user_status,
  now() - make_interval(days => 60 - (n * 5) / 3, hours => n % 24),
  -- At least an hour ago: the seeded access-log rows follow each sign-in by a few minutes.
  case when n % 3 = 0 then null else now() - make_interval(days => n % 10, hours => 1 + n % 5, mins => n) end
from generate_series(1, 36) as n;

insert into app.identities (user_id, provider, provider_user_id, email, created_at)
select id, 'email', lower(email), email, created_at from app.users;

-- Past sessions (expired or signed out) and the sign-in events that opened them.
insert into app.sessions (user_id, provider, ip, user_agent, created_at, authenticated_at, refreshed_at, expires_at, revoked_at, revoked_reason)
select u.id, 'email', '127.0.0.1', 'seed', u.last_sign_in_at, u.last_sign_in_at, u.last_sign_in_at + interval '1 hour',
       u.last_sign_in_at + interval '30 days', u.last_sign_in_at + interval '2 hours', 'signout'
from app.users u where u.last_sign_in_at is not null;

insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason, changed_at) values
  ('00000000-0000-4000-8000-000000000003', 'SUBSCRIBER', 'MEMBER', '00000000-0000-4000-8000-000000000001', 'Seed: promoted after onboarding', now() - interval '65 days');

-- Security events in time order: the sign-ins that opened the sessions above, the role change,
-- and a few refusals.
insert into app.security_events (type, severity, user_id, ip, user_agent, details, created_at)
select type, severity::app.security_severity, user_id, ip::inet, user_agent, details, created_at
from (
  select 'auth.signin' as type, 'info' as severity, s.user_id, host(s.ip) as ip, s.user_agent,
         jsonb_build_object('provider', 'email', 'seed', true) as details, s.created_at
  from app.sessions s
  union all
  select 'admin.role_changed', 'warning', rc.user_id, '127.0.0.1', 'seed',
         jsonb_build_object('by', rc.changed_by, 'from', rc.previous_role, 'to', rc.new_role,
                            'reason', rc.reason, 'seed', true),
         rc.changed_at
  from app.role_changes rc
  union all
  values
    ('auth.signin_failed', 'warning', null::uuid, '203.0.113.7', 'curl/8',
     '{"provider":"email","reason":"invalid_or_expired_token","seed":true}'::jsonb, now() - interval '5 days 2 minutes'),
    ('rate_limit.exceeded', 'warning', null::uuid, '203.0.113.7', 'curl/8',
     '{"group":"signin_ip","seed":true}'::jsonb, now() - interval '5 days'),
    ('admin.access_denied', 'warning', '00000000-0000-4000-8000-000000000004'::uuid, '198.51.100.4', 'seed',
     '{"method":"GET","path":"/api/admin/users","role":"SUBSCRIBER","seed":true}'::jsonb, now() - interval '3 days')
) as events
order by created_at;

-- Three requests a few minutes after each sign-in (every sign-in was at least an hour ago), in
-- time order.
insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
select format('seed-%s', row_number() over (order by u.last_sign_in_at + make_interval(mins => n), u.id)), u.id, 'GET',
       '/api/auth/session', 200, 3.5, '127.0.0.1', u.last_sign_in_at + make_interval(mins => n)
from app.users u, generate_series(1, 3) as n
where u.last_sign_in_at is not null
order by u.last_sign_in_at + make_interval(mins => n), u.id;

insert into app.config_versions (version, config, diff, reason, changed_by, created_at) values
  (2, '{"whiteLabel":{"brandName":"Agora Local","supportEmail":"support@example.com"}}',
   '{"whiteLabel.brandName":{"from":"Agora","to":"Agora Local"},"whiteLabel.supportEmail":{"from":null,"to":"support@example.com"}}',
   'Seed: local branding', '00000000-0000-4000-8000-000000000001', now() - interval '30 days');

-- ---------------------------------------------------------------------------------------------
-- Store: two approved vendors with products in stock (and one draft), their payout accounts
-- onboarded with the dev payment provider, so the local stack can be browsed, checked out
-- (POST /_dev/payments/<id>/succeed pays) and settled at once.
-- ---------------------------------------------------------------------------------------------

insert into app.vendors (id, owner_id, name, slug, description, contact_email, country, status,
                         payout_account_id, payouts_status, created_at) values
  ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-000000000003', 'Max''s Workshop',
   'maxs-workshop', 'Small-batch homeware, made by hand.', 'member@example.com', 'US', 'approved',
   'acct_dev_seed_workshop', 'active', now() - interval '40 days'),
  ('00000000-0000-4000-8000-0000000000a2', '00000000-0000-4000-8000-000000000002', 'Cora''s Pantry',
   'coras-pantry', 'Honey, oils, teas and treats from small producers.', 'confidential@example.com', 'US',
   'approved', 'acct_dev_seed_pantry', 'active', now() - interval '35 days');

insert into app.vendor_decisions (vendor_id, from_status, to_status, reason, decided_by, created_at) values
  ('00000000-0000-4000-8000-0000000000a1', 'pending', 'approved', 'Seed: approved',
   '00000000-0000-4000-8000-000000000001', now() - interval '39 days'),
  ('00000000-0000-4000-8000-0000000000a2', 'pending', 'approved', 'Seed: approved',
   '00000000-0000-4000-8000-000000000001', now() - interval '34 days');

-- The payout accounts as the dev provider keeps them: onboarded, transfers enabled.
insert into app_private.dev_payment_objects (id, object, data)
select account, 'account', jsonb_build_object(
  'id', account, 'object', 'account', 'type', 'express', 'email', email, 'country', 'US',
  'status', 'enabled', 'charges_enabled', true, 'payouts_enabled', true, 'details_submitted', true,
  'capabilities', jsonb_build_object('transfers', 'active'),
  'requirements', jsonb_build_object('currently_due', '[]'::jsonb, 'disabled_reason', null),
  'metadata', jsonb_build_object('vendorId', vendor), 'created', extract(epoch from now())::bigint)
from (values ('acct_dev_seed_workshop', 'member@example.com', '00000000-0000-4000-8000-0000000000a1'),
             ('acct_dev_seed_pantry', 'confidential@example.com', '00000000-0000-4000-8000-0000000000a2'))
  as a (account, email, vendor);

insert into app.products (id, vendor_id, title, description, category, tags, price_amount, currency,
                          stock, status, created_at)
select ('00000000-0000-4000-8000-0000000001' || lpad(n::text, 2, '0'))::uuid, vendor::uuid, title,
       description, category, tags, price, 'USD', stock, status::app.product_status,
       now() - make_interval(days => 30 - n)
from (values
  (1, '00000000-0000-4000-8000-0000000000a1', 'Walnut cutting board', 'Oiled black walnut, end grain, 40 x 25 cm.', 'kitchen', array['wood', 'gift'], 4500, 25, 'active'),
  (2, '00000000-0000-4000-8000-0000000000a1', 'Ceramic pour-over coffee set', 'Dripper, carafe and two cups in speckled stoneware.', 'kitchen', array['coffee', 'ceramic'], 3800, 12, 'active'),
  (3, '00000000-0000-4000-8000-0000000000a1', 'Brass desk lamp', 'Adjustable arm, warm LED, solid brass.', 'lighting', array['brass', 'desk'], 8900, 6, 'active'),
  (4, '00000000-0000-4000-8000-0000000000a1', 'Linen table runner', 'Washed linen, natural dye, 180 cm.', 'textiles', array['linen'], 2400, 30, 'active'),
  (5, '00000000-0000-4000-8000-0000000000a1', 'Hand-thrown mug', 'Stoneware mug, 350 ml, each one a little different.', 'kitchen', array['ceramic', 'coffee', 'gift'], 1800, 40, 'active'),
  (6, '00000000-0000-4000-8000-0000000000a1', 'Oak wall shelf', 'Solid oak shelf with hidden brackets, 80 cm.', 'furniture', array['wood'], 6500, 0, 'active'),
  (7, '00000000-0000-4000-8000-0000000000a1', 'Beeswax candle set', 'Three hand-dipped beeswax candles.', 'lighting', array['candle', 'gift'], 1500, 50, 'active'),
  (8, '00000000-0000-4000-8000-0000000000a1', 'Leather notebook cover', 'Vegetable-tanned leather, A5. Coming soon.', 'stationery', array['leather'], 3200, 10, 'draft'),
  (9, '00000000-0000-4000-8000-0000000000a2', 'Wildflower honey', 'Raw honey from meadows, 450 g jar.', 'pantry', array['honey', 'gift'], 1200, 60, 'active'),
  (10, '00000000-0000-4000-8000-0000000000a2', 'Smoked sea salt', 'Flaky salt, cold-smoked over oak.', 'pantry', array['salt'], 900, 80, 'active'),
  (11, '00000000-0000-4000-8000-0000000000a2', 'Cold-pressed olive oil', 'Early-harvest extra virgin olive oil, 500 ml.', 'pantry', array['oil'], 2200, 35, 'active'),
  (12, '00000000-0000-4000-8000-0000000000a2', 'Dark chocolate bar 72%', 'Single-origin cacao, 80 g.', 'sweets', array['chocolate', 'gift'], 450, 120, 'active'),
  (13, '00000000-0000-4000-8000-0000000000a2', 'Loose-leaf green tea', 'Spring sencha, 100 g tin.', 'tea', array['tea'], 1600, 45, 'active'),
  (14, '00000000-0000-4000-8000-0000000000a2', 'Spiced granola', 'Oats, almonds, honey and cinnamon, 400 g.', 'breakfast', array['honey', 'breakfast'], 1100, 25, 'active')
) as p (n, vendor, title, description, category, tags, price, stock, status);
