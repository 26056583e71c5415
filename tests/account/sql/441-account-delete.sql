/*
 * app.delete_account with data in every table that references app.users (the list below is
 * compared with the catalog, so a new reference fails this test until it is covered here): the
 * rows that are the person's go, the rows others keep lose the person, messages become tombstones
 * (the messaging guards let the keys' own set null through, on tombstones too), groups pass on,
 * sign-in state naming the person goes, and it is recorded. Needs a fresh sign-in; visitors refused.
 */
begin;
select plan(60);

-- Every (table, column) referencing app.users, each covered by the data below.
select set_eq(
  $$ select format('%s.%s', c.conrelid::regclass, a.attname)
     from pg_constraint c join pg_attribute a on a.attrelid = c.conrelid and a.attnum = any (c.conkey)
     where c.contype = 'f' and c.confrelid = 'app.users'::regclass $$,
  $$ values ('app.identities.user_id'), ('app.sessions.user_id'), ('app.security_events.user_id'),
            ('app.role_changes.user_id'), ('app.role_changes.changed_by'), ('app.config_versions.changed_by'),
            ('app_private.idempotency_keys.user_id'), ('app.conversations.created_by'),
            ('app.conversation_participants.user_id'), ('app.conversation_participants.added_by'),
            ('app.messages.sender_id'), ('app.attachments.uploader_id'), ('app.message_reactions.user_id'),
            ('app_private.oauth_flows.link_user_id'),
            ('app.status_changes.user_id'), ('app.status_changes.changed_by'),
            ('app.notification_batches.created_by'), ('app.notifications.user_id'),
            ('app.notification_preferences.user_id'), ('app.push_devices.user_id'),
            ('app.notification_counters.user_id'), ('app.notification_read_marks.user_id'),
            ('app_private.notification_write_gates.user_id'),
            ('app.vendors.owner_id'), ('app.vendor_decisions.decided_by'), ('app.checkouts.buyer_id'),
            ('app.orders.buyer_id'), ('app.order_history.actor_id'), ('app.refunds.requested_by'),
            ('app.settlement_runs.started_by'),
            ('app.wallets.user_id'), ('app.wallet_tokens.user_id'), ('app.wallet_transactions.user_id'),
            ('app.wallet_transactions.to_user_id'), ('app.wallet_nfts.user_id'),
            ('app.reports.reporter_id'), ('app.reports.resolved_by'),
            ('app.user_blocks.blocker_id'), ('app.user_blocks.blocked_id') $$,
  'This test covers every reference to app.users (add a new one''s data below).'
);

-- ---------------------------------------------------------------------------------------------
-- Data in every table
-- ---------------------------------------------------------------------------------------------

do $$
declare
  victim uuid := tests.create_user('delete.vic@example.test', 'MEMBER');
  friend uuid := tests.create_user('delete.fay@example.test', 'MEMBER');
  third uuid := tests.create_user('delete.tom@example.test', 'MEMBER');
  direct uuid;
  grp uuid;
  solo uuid;
  m_vic uuid;
  m_fay uuid;
  m_solo uuid;
  m_solo_reply uuid;
begin
  insert into app.identities (user_id, provider, provider_user_id, email) values
    (victim, 'email', 'delete.vic@example.test', 'delete.vic@example.test'),
    (victim, 'wallet', '0x00000000000000000000000000000000000000D1', null);
  insert into app.sessions (id, user_id, provider, expires_at) values
    ('de100000-0000-4000-8000-000000000001', victim, 'email', now() + interval '1 day');
  insert into app_private.refresh_tokens (session_id, token_hash)
  values ('de100000-0000-4000-8000-000000000001', 'delete-441-refresh-hash');
  insert into app.security_events (type, user_id, details) values ('auth.signin', victim, '{"seed441":true}');
  insert into app.access_logs (request_id, user_id, method, route, status, duration_ms)
  values ('delete-441', victim, 'GET', '/api/auth/session', 200, 1);
  insert into app.role_changes (user_id, previous_role, new_role, changed_by, reason) values
    (victim, 'SUBSCRIBER', 'MEMBER', friend, 'promoted'),
    (friend, 'SUBSCRIBER', 'MEMBER', victim, 'promoted by the victim');
  insert into app.config_versions (version, config, reason, changed_by)
  select max(version) + 1, '{}', 'changed by the victim', victim from app.config_versions;
  insert into app_private.idempotency_keys (user_id, key, scope, request_hash)
  values (victim, 'k-441', 'message', 'h');
  insert into app.status_changes (user_id, previous_status, new_status, changed_by, reason) values
    (victim, 'active', 'suspended', friend, 'once'),
    (friend, 'active', 'suspended', victim, 'by the victim');
  insert into app_private.oauth_flows (provider, state_hash, nonce_hash, client_challenge, link_user_id,
                                       exchange_code_hash, exchange_expires_at, result_identity,
                                       result_authenticated_at, expires_at)
  values ('google', 'delete-441-state', 'n', repeat('c', 43), victim, 'delete-441-code',
          now() + interval '5 minutes', '{"subject":"g-441"}', now(), now() + interval '10 minutes');
  insert into app_private.magic_links (email, token_hash, expires_at)
  values ('delete.vic@example.test', 'delete-441-link', now() + interval '15 minutes');
  insert into app_private.rate_limits (bucket, window_start, hits) values
    ('signin:email:delete.vic@example.test', now(), 1),
    ('signin:wallet:0x00000000000000000000000000000000000000d1', now(), 1);

  direct := tests.create_conversation(victim, 'direct', array[friend]);
  grp := tests.create_conversation(victim, 'group', array[friend], 'The victim''s group');
  -- Added later by the victim: the friend is the longest-standing other participant.
  insert into app.conversation_participants (conversation_id, user_id, added_by, joined_at)
  values (grp, third, victim, now() + interval '1 second');
  solo := tests.create_conversation(victim, 'group', array[friend], 'Soon empty');
  delete from app.conversation_participants where conversation_id = solo and user_id = friend;

  m_vic := tests.insert_message(direct, victim, 'the victim wrote this');
  m_fay := tests.insert_message(direct, friend, 'the friend answered');
  update app.messages set reply_to_id = m_vic where id = m_fay;
  update app.messages set content = 'the victim edited this' where id = m_vic;
  insert into app.message_reactions (message_id, user_id, emoji, conversation_id)
  values (m_fay, victim, '👍', direct);
  m_solo := tests.insert_message(solo, victim, 'alone');
  m_solo_reply := tests.insert_message(solo, victim, 'alone, again');
  update app.messages set reply_to_id = m_solo where id = m_solo_reply;
  update app.messages set deleted_at = now() where id = m_solo_reply;
  perform tests.insert_message(grp, victim, 'hello group');
  insert into app.attachments (uploader_id, conversation_id, message_id, name, content_type, size, storage_key)
  values (victim, direct, m_vic, 'a.txt', 'text/plain', 1, 'delete-441/attached'),
         (victim, null, null, 'b.txt', 'text/plain', 1, 'delete-441/loose');
  perform app_private.emit_event('user:' || victim::text, 'test.event', '{}');

  -- Notifications: the inbox, a delivery to a device, choices, a bulk send the victim made.
  insert into app.push_devices (id, user_id, token, platform, device_name)
  values ('de100000-0000-4000-8000-0000000000d1', victim, 'delete-441-push-token', 'web', 'laptop');
  insert into app.notifications (id, user_id, type, title, body)
  values ('de100000-0000-4000-8000-0000000000a1', victim, 'SYSTEM', 'Hello', 'For the victim');
  -- (its trigger keeps the victim's unread counter: app.notification_counters has their row)
  insert into app_private.notification_deliveries (notification_id, channel, device_id)
  values ('de100000-0000-4000-8000-0000000000a1', 'push', 'de100000-0000-4000-8000-0000000000d1');
  insert into app.notification_preferences (user_id, types) values (victim, '{}');
  -- A pending read-all of theirs.
  insert into app.notification_read_marks (user_id, read_to, read_at) values (victim, now(), now());
  insert into app_private.notification_write_gates (user_id) values (victim) on conflict do nothing;
  insert into app.notification_batches (created_by, audience, type, title, body, channels)
  values (victim, '{"all":true}', 'SYSTEM', 'Bulk', 'From the victim', array['inApp']);
  -- Moderation: a report the victim made, and one the victim resolved (as if an ADMIN then).
  insert into app.report_snapshots (id, subject_type, subject_id, snapshot)
  values ('de100000-0000-4000-8000-0000000000e1', 'user', friend, '{"type":"user"}');
  insert into app.reports (reporter_id, subject_type, subject_id, reason, snapshot_id)
  values (victim, 'user', friend, 'spam', 'de100000-0000-4000-8000-0000000000e1');
  insert into app.reports (reporter_id, subject_type, subject_id, reason, snapshot_id, status,
                           resolution_note, resolved_by, resolved_at)
  values (friend, 'user', third, 'other', 'de100000-0000-4000-8000-0000000000e1', 'dismissed',
          'Delete 441 resolution', victim, now());

  -- The store: the victim's own shop, a shop of the friend's the victim bought from (one order
  -- delivered, one still to ship, one checkout unpaid), a decision and a settlement run the victim
  -- made (as if an ADMIN then), a refund the victim asked for.
  perform tests.create_vendor(victim, 'Victim Shop');
  perform tests.create_product(tests.create_vendor(friend, 'Friend Shop'), 'Delete 441 lamp', 1000, 10);
  perform tests.checkout(victim, jsonb_build_array(jsonb_build_object('productId',
    (select id from app.products where title = 'Delete 441 lamp'), 'quantity', 1)), 'pi_delete_441_a');
  perform tests.checkout(victim, jsonb_build_array(jsonb_build_object('productId',
    (select id from app.products where title = 'Delete 441 lamp'), 'quantity', 1)), 'pi_delete_441_b');
  perform tests.checkout(victim, jsonb_build_array(jsonb_build_object('productId',
    (select id from app.products where title = 'Delete 441 lamp'), 'quantity', 2)), 'pi_delete_441_c');
  perform app_private.apply_payment_intent('pi_delete_441_a', 'succeeded', 1000, 'usd');
  perform app_private.apply_payment_intent('pi_delete_441_b', 'succeeded', 1000, 'usd');
  update app.orders set shipping_address = '{"name": "Vic", "line1": "1 Road", "city": "Town", "postalCode": "1", "country": "US"}',
                        status = case when checkout_id = (select id from app.checkouts where payment_intent_id = 'pi_delete_441_a')
                                      then 'delivered'::app.order_status else status end
  where buyer_id = victim;
  insert into app.refunds (order_id, amount, currency, requested_by)
  select o.id, o.total, o.currency, victim from app.orders o
  join app.checkouts c on c.id = o.checkout_id where c.payment_intent_id = 'pi_delete_441_a';
  insert into app.vendor_decisions (vendor_id, from_status, to_status, reason, decided_by)
  select v.id, 'approved', 'approved', 'reviewed by the victim', victim from app.vendors v where v.name = 'Friend Shop';
  insert into app.settlement_runs (as_of, started_by) values (now(), victim);
  -- Wallet: the victim's wallet (sealed key, nonce counter), a token added, a transfer in, an NFT;
  -- the friend's transfer to the victim by user id.
  perform tests.create_wallet(victim);
  perform tests.create_wallet(friend);
  insert into app.chain_tokens (chain_id, address, symbol, name, decimals)
  values (31337, '0x0000000000000000000000000000000000000441', 'DEL', 'Delete test', 18)
  on conflict do nothing;
  insert into app.wallet_tokens (user_id, chain_id, address)
  values (victim, 31337, '0x0000000000000000000000000000000000000441');
  insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
    token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number)
  select w.id, victim, 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
         '0x0000000000000000000000000000000000000001', w.address, 441, '0x' || repeat('41', 32), -1, 1
  from app.wallets w where w.user_id = victim;
  insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
    token_symbol, token_name, token_decimals, from_address, to_address, to_user_id, amount, gas_limit, expires_at)
  select f.id, friend, 'out', 'pending', 31337, 'native', 'ETH', 'Ether', 18, f.address, v.address, victim,
         442, 21000, now() + interval '10 minutes'
  from app.wallets f, app.wallets v where f.user_id = friend and v.user_id = victim;
  insert into app.wallet_nfts (wallet_id, user_id, chain_id, contract, token_id, standard, balance)
  select w.id, victim, 31337, '0x0000000000000000000000000000000000000442', 1, 'ERC721', 1
  from app.wallets w where w.user_id = victim;
  insert into app.user_blocks (blocker_id, blocked_id) values (victim, third), (friend, victim);
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Refusals first: a stale sign-in, a visitor
-- ---------------------------------------------------------------------------------------------

-- (session_for in a statement of its own: it creates the session the next one updates.)
select tests.session_for(tests.user_id('delete.vic@example.test'));
update app.sessions set authenticated_at = now() - interval '1 hour'
where id = tests.session_for(tests.user_id('delete.vic@example.test'));
select tests.authenticate_as(tests.user_id('delete.vic@example.test'));
select throws_ok($$ select app.delete_account() $$, 'AG403', null,
  'Deleting needs a fresh sign-in.');
select tests.authenticate_as_anon();
select throws_ok($$ select app.delete_account() $$, '42501', null, 'A visitor cannot delete.');
select tests.clear_authentication();
select isnt_empty($$ select 1 from app.users where email = 'delete.vic@example.test' $$,
  'Nothing happened.');
update app.sessions set authenticated_at = now()
where id = tests.session_for(tests.user_id('delete.vic@example.test'));

-- ---------------------------------------------------------------------------------------------
-- The deletion
-- ---------------------------------------------------------------------------------------------

create temporary table victim as
select tests.user_id('delete.vic@example.test') as id, tests.user_id('delete.fay@example.test') as friend,
       tests.user_id('delete.tom@example.test') as third;
grant select on victim to authenticated;

select tests.authenticate_as((select id from victim));
select ok(app.delete_account() <= now(), 'The account is deleted.');
select tests.clear_authentication();

-- The person's own rows go.
select is_empty($$ select 1 from app.users where id = (select id from victim) $$, 'The user row is gone.');
select is_empty($$ select 1 from app.identities where user_id = (select id from victim) $$, 'Identities are gone.');
select is_empty($$ select 1 from app.sessions where user_id = (select id from victim) $$, 'Sessions are gone.');
select is_empty($$ select 1 from app_private.refresh_tokens where token_hash = 'delete-441-refresh-hash' $$,
  'Their refresh tokens are gone.');
select is_empty($$ select 1 from app.role_changes where user_id = (select id from victim) $$,
  'Their role history is gone.');
select is_empty($$ select 1 from app.status_changes where user_id = (select id from victim) $$,
  'Their status history is gone.');
select is_empty($$ select 1 from app_private.idempotency_keys where key = 'k-441' $$, 'Idempotency keys are gone.');
select is_empty($$ select 1 from app_private.oauth_flows where state_hash = 'delete-441-state' $$,
  'Sign-in flows naming them are gone.');
select is_empty($$ select 1 from app_private.magic_links where token_hash = 'delete-441-link' $$,
  'Magic links to their address are gone.');
select is_empty($$ select 1 from app_private.rate_limits where bucket like 'signin:%:%d1' or bucket like '%delete.vic%' $$,
  'Rate-limit counters naming their address or wallet are gone.');
select is_empty($$ select 1 from app.conversation_participants where user_id = (select id from victim) $$,
  'Their memberships are gone.');
select is_empty($$ select 1 from app.attachments where storage_key like 'delete-441/%' $$, 'Their files'' rows are gone.');
select is_empty($$ select 1 from app.message_reactions where user_id = (select id from victim) $$,
  'Their reactions are gone.');
select is_empty(
  $$ select 1 from app.user_blocks b where (select id from victim) in (b.blocker_id, b.blocked_id) $$,
  'Their blocks, and others'' blocks of them, are gone.');
select is(
  (select count(*)::int from app_private.jobs where kind = 'storage.delete' and payload ->> 'key' like 'delete-441/%'),
  2, 'Both files are queued for removal.');
select is_empty($$ select 1 from app.events where topic = 'user:' || (select id from victim)::text $$,
  'Their user topic''s events are gone.');
select is_empty($$ select 1 from app.access_logs where user_id = (select id from victim) $$,
  'The access log no longer names them.');
select is(
  (select count(*)::int from app_private.jobs where kind = 'account.erase_access_logs'
   and payload ->> 'userId' = (select id from victim)::text and run_at > now()),
  1, 'Log lines still on their way are nulled later by a queued job.');

select is_empty($$ select 1 from app.notifications where id = 'de100000-0000-4000-8000-0000000000a1' $$,
  'Their notifications are gone.');
select is_empty(
  $$ select 1 from app_private.notification_deliveries where notification_id = 'de100000-0000-4000-8000-0000000000a1' $$,
  'Their deliveries are gone.');
select is_empty($$ select 1 from app.push_devices where token = 'delete-441-push-token' $$,
  'Their push tokens are gone.');
select is_empty($$ select 1 from app.notification_preferences where user_id = (select id from victim) $$,
  'Their notification preferences are gone.');
select is_empty($$ select 1 from app.notification_counters where user_id = (select id from victim) $$,
  'Their unread counter is gone.');
select is_empty($$ select 1 from app.notification_read_marks where user_id = (select id from victim) $$,
  'Their pending read-all marks are gone.');
select is_empty($$ select 1 from app_private.notification_write_gates where user_id = (select id from victim) $$,
  'Their notifications'' write gate is gone.');

select is_empty($$ select 1 from app.wallets where user_id = (select id from victim) $$,
  'Their wallet is gone ...');
select is_empty(
  $$ select 1 from app_private.wallet_keys k where not exists (select 1 from app.wallets w where w.id = k.wallet_id) $$,
  '... with its sealed key (no key is left without its wallet).');
select is_empty(
  $$ select 1 from app.wallet_transactions where user_id = (select id from victim)
     union all select 1 from app.wallet_tokens where user_id = (select id from victim)
     union all select 1 from app.wallet_nfts where user_id = (select id from victim) $$,
  'Their wallet''s transactions, tokens and NFTs are gone.');

-- What others keep loses the person.
select isnt_empty(
  $$ select 1 from app.wallet_transactions where user_id = (select friend from victim) and amount = 442
     and to_user_id is null $$,
  'A transfer another user addressed to them stays (to their address), without them.');
select isnt_empty($$ select 1 from app.notification_batches where title = 'Bulk' and created_by is null $$,
  'A bulk notification they sent stays, without them.');
select isnt_empty($$ select 1 from app.security_events where details ->> 'seed441' = 'true' and user_id is null $$,
  'Security events stay, without the person.');
select isnt_empty(
  $$ select 1 from app.role_changes where user_id = (select friend from victim) and changed_by is null $$,
  'A role change they made stays, without them.');
select isnt_empty(
  $$ select 1 from app.status_changes where user_id = (select friend from victim) and changed_by is null $$,
  'A status change they made stays, without them.');
select isnt_empty($$ select 1 from app.config_versions where reason = 'changed by the victim' and changed_by is null $$,
  'A configuration version they wrote stays, without them.');
select results_eq(
  $$ select content, sender_id is null, deleted_at is not null from app.messages
     where conversation_id = (select c.id from app.conversations c where c.type = 'direct'
                              and c.direct_key like '%' || (select friend from victim)::text || '%')
     order by seq $$,
  $$ values ('', true, true), ('the friend answered', false, false) $$,
  'Their messages are tombstones without a sender; the friend''s answer stays as it was.'
);
select isnt_empty(
  $$ select 1 from app.messages m where m.content = 'the friend answered' and m.reply_to_id is not null $$,
  'The answer still points at the tombstone it replied to.');
select is_empty(
  $$ select 1 from app.message_versions v join app.messages m on m.id = v.message_id where m.sender_id is null
     and m.deleted_at is not null and v.content like 'the victim%' $$,
  'The earlier versions of their messages are gone.');
select is(
  (select created_by from app.conversations where title = 'The victim''s group'),
  (select friend from victim),
  'Their group passes to the longest-standing other participant.');
select is(
  (select count(*)::int from app.conversation_participants p join app.conversations c on c.id = p.conversation_id
   where c.title = 'The victim''s group'),
  2, 'The others stay in it.');
select is_empty($$ select 1 from app.conversations where title = 'Soon empty' $$,
  'A group nobody else was in is gone (with its messages, tombstones and replies included).');
select isnt_empty(
  $$ select 1 from app.conversation_participants where user_id = (select third from victim) and added_by is null $$,
  'The people they added stay, without who added them.');

-- The store: what others keep stays, without the person; their shop stops selling.
select is(
  (select array_agg(o.status::text || '/' || (o.buyer_id is null)::text || '/' || (o.shipping_address is null)::text
                    order by c.payment_intent_id)
   from app.orders o join app.checkouts c on c.id = o.checkout_id
   where c.payment_intent_id like 'pi_delete_441_%'),
  array['delivered/true/true', 'paid/true/false', 'cancelled/true/true'],
  'Their orders stay for the vendor without them; a delivered order loses its address, one still to ship keeps it, an unpaid one is cancelled.'
);
select is((select stock - reserved from app.products where title = 'Delete 441 lamp'), 8,
  'The unpaid checkout''s stock went back.');
select is(
  (select (status::text, owner_id is null)::text from app.vendors where name = 'Victim Shop'),
  '(suspended,t)', 'Their shop is suspended and has no owner.'
);
select is(
  (select reason from app.vendor_decisions d join app.vendors v on v.id = d.vendor_id
   where v.name = 'Victim Shop' order by d.id desc limit 1),
  'the owner deleted their account', 'The suspension is recorded.'
);
select isnt_empty($$ select 1 from app.vendor_decisions where reason = 'reviewed by the victim' and decided_by is null $$,
  'A decision they made stays, without them.');
select isnt_empty($$ select 1 from app.refunds r join app.orders o on o.id = r.order_id
                     where r.requested_by is null and o.buyer_id is null $$,
  'A refund they asked for stays, without them.');
select isnt_empty($$ select 1 from app.settlement_runs where started_by is null and as_of > now() - interval '1 minute' $$,
  'A settlement run they started stays, without them.');
select is_empty($$ select 1 from app.order_history h join app.orders o on o.id = h.order_id
                   join app.checkouts c on c.id = o.checkout_id
                   where c.payment_intent_id like 'pi_delete_441_%' and h.actor_id is not null and h.actor = 'buyer' $$,
  'The orders'' history keeps the buyer''s moves, without naming them.');

-- Recorded.
select results_eq(
  $$ select user_id is null, details ->> 'userId', details ->> 'role' from app.security_events
     where type = 'account.deleted' $$,
  $$ values (true, (select id from victim)::text, 'MEMBER') $$,
  'The deletion is recorded as account.deleted with the id only.');

-- The address is free.
select lives_ok($$ select tests.create_user('delete.vic@example.test') $$,
  'The address may be used again, by a new account.');
select isnt(tests.user_id('delete.vic@example.test'), (select id from victim), 'A new account.');

-- The guards still refuse what is not a key's own set null.
select throws_ok(
  $$ update app.messages set content = 'rewritten' where sender_id is null and deleted_at is not null
     and content = '' and id in (select m.id from app.messages m join app.conversations c on c.id = m.conversation_id
                                 where c.type = 'direct') $$,
  'AG422', null, 'A tombstone still cannot change, even on a trusted path.');
select is((select count(*)::int from app.reports where subject_type = 'user' and reason = 'spam'
            and snapshot_id = 'de100000-0000-4000-8000-0000000000e1'), 0,
  'The reports the account made are gone with it.');
select is((select resolved_by from app.reports where resolution_note = 'Delete 441 resolution'),
  null::uuid, 'A report the account resolved stays, its resolver set to null.');
select * from finish();
rollback;
