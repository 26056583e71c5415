/*
 * Reports and their resolution (app.create_report, app.resolve_report, app.reports,
 * app.report_snapshots), per persona: anonymous visitors can do nothing; a reporter reports what
 * they can see (404 for what they cannot: a message of another conversation, a suspended user,
 * another vendor's draft), once per subject while open (409), reads their own reports but no
 * snapshot; another user reads none of theirs and cannot resolve; an ADMIN reads every report and
 * snapshot (a deleted message's content stays there) and resolves: the action, every open report
 * on the subject, the security event and each reporter's SYSTEM notification commit together, or
 * nothing does. A hidden product leaves the catalog, its search and its counts; its vendor
 * cannot bring it back.
 */
begin;
select plan(42);

do $$
declare
  reporter uuid := tests.create_user('mod.rita@example.test', 'MEMBER');
  other uuid := tests.create_user('mod.otto@example.test', 'MEMBER');
  spammer uuid := tests.create_user('mod.sam@example.test', 'MEMBER');
  outsider uuid := tests.create_user('mod.olga@example.test', 'MEMBER');
  gone uuid := tests.create_user('mod.gus@example.test', 'MEMBER');
  admin uuid := tests.create_user('mod.ada@example.test', 'ADMIN');
  seller uuid := tests.create_user('mod.vic@example.test', 'MEMBER');
  group_id uuid;
  private_id uuid;
  vendor uuid;
begin
  group_id := tests.create_conversation(reporter, 'group', array[other, spammer], 'Moderated');
  private_id := tests.create_conversation(spammer, 'direct', array[outsider]);
  perform set_config('tests.spam', tests.insert_message(group_id, spammer, 'Buy cheap pills now')::text, false);
  perform set_config('tests.private', tests.insert_message(private_id, spammer, 'Just us')::text, false);
  update app.users set status = 'suspended' where id = gone;
  vendor := tests.create_vendor(seller, 'Moderated Goods');
  perform set_config('tests.product', tests.create_product(vendor, 'Fake watches', product_category => 'watches')::text, false);
  perform set_config('tests.draft', tests.create_product(vendor, 'Draft thing', product_status => 'draft')::text, false);
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Anonymous
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as_anon();
select throws_ok(
  format($$ select app.create_report('message', %L, 'spam') $$, current_setting('tests.spam')),
  '42501', null, 'An anonymous visitor cannot report (no execute privilege).');
select throws_ok($$ select count(*) from app.reports $$, '42501', null,
  'An anonymous visitor cannot read reports.');
select throws_ok($$ select count(*) from app.report_snapshots $$, '42501', null,
  'An anonymous visitor cannot read snapshots.');
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- The reporter
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('mod.rita@example.test'));
select lives_ok(
  format($$ select app.create_report('message', %L, 'spam', 'selling pills') $$, current_setting('tests.spam')),
  'A participant reports a message of their conversation.');
select results_eq(
  $$ select subject_type::text, reason::text, note, status::text from app.reports $$,
  $$ values ('message', 'spam', 'selling pills', 'open') $$,
  'The reporter reads their own open report.');
select throws_ok(
  format($$ select app.create_report('message', %L, 'abuse') $$, current_setting('tests.spam')),
  'AG409', null, 'A second open report on the same subject by the same person is AG409.');
select throws_ok(
  format($$ select app.create_report('message', %L, 'spam') $$, current_setting('tests.private')),
  'AG404', null, 'A message of a conversation the reporter is not in is AG404.');
select throws_ok(
  format($$ select app.create_report('message', %L, 'spam') $$, gen_random_uuid()),
  'AG404', null, 'An unknown message is AG404 too.');
select throws_ok(
  format($$ select app.create_report('user', %L, 'abuse') $$, tests.user_id('mod.gus@example.test')),
  'AG404', null, 'A suspended user is AG404.');
select throws_ok(
  format($$ select app.create_report('product', %L, 'fraud') $$, current_setting('tests.draft')),
  'AG404', null, 'Another vendor''s draft product is AG404.');
select throws_ok(
  format($$ select app.create_report('user', %L, 'other') $$, tests.user_id('mod.rita@example.test')),
  'AG422', null, 'Nobody reports themselves (AG422).');
select lives_ok(
  format($$ select app.create_report('product', %L, 'fraud') $$, current_setting('tests.product')),
  'A catalog product can be reported.');
select lives_ok(
  format($$ select app.create_report('user', %L, 'abuse', 'harasses people') $$, tests.user_id('mod.ada@example.test')),
  'An active user can be reported (here an ADMIN, for the failing action below).');
select is((select count(*)::int from app.report_snapshots), 0,
  'The reporter reads no snapshot (they are for ADMINs).');
select throws_ok($$ update app.reports set status = 'dismissed' $$, '42501', null,
  'The reporter cannot change a report directly.');
select throws_ok(
  format($$ select app.resolve_report(%L, 'dismissed', null, 'no') $$,
         (select id from app.reports where subject_type = 'message')),
  '42501', null, 'The reporter cannot resolve a report.');
select tests.clear_authentication();

-- ---------------------------------------------------------------------------------------------
-- Another user
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('mod.otto@example.test'));
select is((select count(*)::int from app.reports), 0, 'Another user reads none of the reporter''s reports.');
select lives_ok(
  format($$ select app.create_report('message', %L, 'abuse') $$, current_setting('tests.spam')),
  'Another participant reports the same message.');
select is((select count(*)::int from app.reports), 1, 'They read their own report only.');
select throws_ok(
  format($$ select app.resolve_report(%L, 'dismissed', null, 'no') $$,
         (select id from app.reports limit 1)),
  '42501', null, 'A MEMBER cannot resolve a report.');
select tests.clear_authentication();

-- The message is edited after the first report: the snapshot keeps what was reported.
update app.messages set content = 'Edited to look innocent' where id = current_setting('tests.spam')::uuid;

-- ---------------------------------------------------------------------------------------------
-- ADMIN
-- ---------------------------------------------------------------------------------------------

select tests.authenticate_as(tests.user_id('mod.ada@example.test'));
select is((select count(*)::int from app.reports), 4, 'An ADMIN reads every report.');
select is(
  (select count(distinct snapshot_id)::int from app.reports where subject_type = 'message'), 1,
  'Both reports on the message share the first report''s snapshot.');
select is(
  (select s.snapshot ->> 'content' from app.report_snapshots s where s.subject_type = 'message'),
  'Buy cheap pills now', 'The snapshot holds the content as first reported.');
select throws_ok(
  format($$ select app.resolve_report(%L, 'actioned', 'hide_product', 'spam') $$,
         (select id from app.reports where subject_type = 'message' limit 1)),
  'AG422', null, 'hide_product does not fit a message (AG422).');
select throws_ok(
  format($$ select app.resolve_report(%L, 'actioned', 'delete_message', '  ') $$,
         (select id from app.reports where subject_type = 'message' limit 1)),
  'AG400', null, 'A resolution needs a note (AG400).');

-- An action that fails midway (the ADMIN suspending themselves) leaves nothing behind.
select throws_ok(
  format($$ select app.resolve_report(%L, 'actioned', 'suspend_user', 'abusive') $$,
         (select id from app.reports where subject_type = 'user')),
  'AG422', null, 'An action the domain refuses (suspending oneself) fails the resolution.');
select is((select status::text from app.reports where subject_type = 'user'), 'open',
  'The report stays open.');
select is((select count(*)::int from app.security_events where type = 'moderation.report_resolved'), 0,
  'No moderation event was written.');
select is(
  (select count(*)::int from app.notifications n where n.user_id = tests.user_id('mod.rita@example.test') and n.type = 'SYSTEM'
     and n.data ->> 'kind' = 'report_resolved'), 0,
  'No notification was written.');

select set_config('agora.client_ip', '198.51.100.7', true);
select lives_ok(
  format($$ select app.resolve_report(%L, 'actioned', 'delete_message', 'pill spam') $$,
         (select id from app.reports where subject_type = 'message' order by created_at limit 1)),
  'The ADMIN deletes the message through the report.');
select results_eq(
  $$ select status::text, action::text, resolution_note from app.reports where subject_type = 'message' $$,
  $$ values ('actioned', 'delete_message', 'pill spam'), ('actioned', 'delete_message', 'pill spam') $$,
  'Every open report on the message is resolved with it.');
select tests.clear_authentication();
select isnt((select deleted_at from app.messages where id = current_setting('tests.spam')::uuid), null,
  'The message is a tombstone.');
select tests.authenticate_as(tests.user_id('mod.ada@example.test'));
select set_config('agora.client_ip', '198.51.100.7', true);
select is(
  (select s.snapshot ->> 'content' from app.report_snapshots s where s.subject_type = 'message'),
  'Buy cheap pills now', 'The deleted message''s content stays readable to ADMINs in the snapshot.');
select results_eq(
  $$ select severity::text, host(ip), details ->> 'action', details -> 'subject' ->> 'type'
     from app.security_events where type = 'moderation.report_resolved' $$,
  $$ values ('warning', '198.51.100.7', 'delete_message', 'message') $$,
  'One security event, with the client address, in the same transaction.');
select throws_ok(
  format($$ select app.resolve_report(%L, 'dismissed', null, 'again') $$,
         (select id from app.reports where subject_type = 'message' limit 1)),
  'AG409', null, 'Resolving a resolved report again is AG409.');

select lives_ok(
  format($$ select app.resolve_report(%L, 'actioned', 'hide_product', 'counterfeit') $$,
         (select id from app.reports where subject_type = 'product')),
  'The ADMIN hides the reported product.');
select tests.clear_authentication();
select results_eq(
  $$ select n.user_id, n.data ->> 'status' from app.notifications n
     where n.type = 'SYSTEM' and n.data ->> 'kind' = 'report_resolved' and n.data ->> 'subjectType' = 'message'
     order by n.user_id $$,
  format($$ select * from (values (%L::uuid, 'actioned'), (%L::uuid, 'actioned')) v order by 1 $$,
         tests.user_id('mod.rita@example.test'), tests.user_id('mod.otto@example.test')),
  'Each reporter of the message got one SYSTEM notification.');
select is((select status::text from app.products where id = current_setting('tests.product')::uuid),
  'hidden', 'The product is hidden.');
select tests.authenticate_as_anon();
select is(
  (select count(*)::int from jsonb_array_elements(app.search_products('watches') -> 'items')),
  0, 'A hidden product is not found by the catalog''s search.');
select is(app.get_product(current_setting('tests.product')::uuid), null,
  'A visitor cannot open a hidden product.');
select tests.clear_authentication();
select is_empty($$ select * from tests.catalog_counts_drift() $$, 'The catalog counts stay right.');
select tests.authenticate_as(tests.user_id('mod.vic@example.test'));
select throws_ok(
  format($$ update app.products set status = 'active' where id = %L $$, current_setting('tests.product')),
  'AG403', null, 'Its vendor cannot put a hidden product back (AG403).');
select tests.clear_authentication();

select * from finish();
rollback;
