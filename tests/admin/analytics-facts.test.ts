/**
 * The messaging, store and wallet sections of GET /api/admin/analytics read rollups
 * (app_private.analytics_facts plus app_private.analytics_fact_deltas, plus the messages and
 * orders created since the fold's mark, read live): the inserts of messages and orders run no
 * trigger (the every-minute job folds them from a mark), their rare changes after insert and
 * every write of app.conversations, app.wallets and app.wallet_transactions append deltas.
 * Here 12 writers on connections of their own create, change and delete rows of all five at
 * once, many rows in one statement, with the compaction and the fold racing them; afterwards
 * every figure equals a recount of the tables written here independently of the definitions,
 * read in the same snapshot, before and after the deltas and rows are folded. Then the fold
 * around transactions that commit late, and the page itself: after writes its totals move by
 * exactly what was written. The notifications' facts (the same machinery) are checked by
 * tests/notifications/analytics-facts.test.ts and pgTAP 210, so the recount here leaves them out.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createUser, expectJson, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();
const url = Deno.env.get("AGORA_TEST_DB_URL")!;

interface Drift {
  metric: string;
  bucket_interval: string;
  bucket: string;
  key: string;
  counted: string | null;
  rolled: string | null;
}

/** The rollups against a recount of the tables, in one snapshot: the figures that differ. */
async function drift(sql: postgres.Sql): Promise<Drift[]> {
  return [
    ...await sql<Drift[]>`
    with i(name) as (values ('day'), ('week'), ('month')),
    token(x, key) as (
      select x.id, jsonb_build_object('kind', x.token_kind, 'symbol', x.token_symbol,
                                      'address', x.token_address, 'decimals', x.token_decimals,
                                      'chainId', x.chain_id)::text
      from app.wallet_transactions x
    ),
    counted as (
      select 'messages.sent' as metric, i.name as bucket_interval,
             date_trunc(i.name, m.created_at, 'UTC') as bucket, '' as key, count(*)::numeric as value
      from app.messages m, i group by 2, 3
      union all
      select 'messages.senders', i.name, date_trunc(i.name, m.created_at, 'UTC'), '',
             count(distinct m.sender_id)
      from app.messages m, i where m.sender_id is not null group by 2, 3
      union all
      select 'messages.live', 'all', '-infinity', '', count(*) from app.messages m
      where m.deleted_at is null
      union all
      select 'conversations.created', i.name, date_trunc(i.name, c.created_at, 'UTC'), '', count(*)
      from app.conversations c, i group by 2, 3
      union all
      select 'conversations.all', 'all', '-infinity', '', count(*) from app.conversations
      union all
      select 'orders.created', i.name, date_trunc(i.name, o.created_at, 'UTC'), '', count(*)
      from app.orders o, i group by 2, 3
      union all
      select 'orders.status', 'all', '-infinity', o.status::text, count(*)
      from app.orders o group by 4
      union all
      select 'orders.sales', i.name, date_trunc(i.name, o.paid_at, 'UTC'), '', sum(o.total)
      from app.orders o, i where o.paid_at is not null group by 2, 3
      union all
      select 'orders.paid', i.name, date_trunc(i.name, o.paid_at, 'UTC'), '', count(*)
      from app.orders o, i where o.paid_at is not null group by 2, 3
      union all
      select 'orders.vendor_sales', i.name, date_trunc(i.name, o.paid_at, 'UTC'), o.vendor_id::text,
             sum(o.total)
      from app.orders o, i where o.paid_at is not null group by 2, 3, 4
      union all
      select 'orders.vendor_paid', i.name, date_trunc(i.name, o.paid_at, 'UTC'), o.vendor_id::text,
             count(*)
      from app.orders o, i where o.paid_at is not null group by 2, 3, 4
      union all
      select 'wallets.created', i.name, date_trunc(i.name, w.created_at, 'UTC'), '', count(*)
      from app.wallets w, i group by 2, 3
      union all
      select 'wallets.all', 'all', '-infinity', '', count(*) from app.wallets
      union all
      select 'wallets.exported', 'all', '-infinity', '', count(*) from app.wallets
      where exported_at is not null
      union all
      select 'wallet_transactions.all', 'all', '-infinity',
             x.status::text || ' ' || x.direction::text, count(*)
      from app.wallet_transactions x group by 4
      union all
      select 'wallet_transactions.volume', i.name, date_trunc(i.name, x.confirmed_at, 'UTC'), k.key,
             sum(x.amount)
      from app.wallet_transactions x join token k on k.x = x.id, i
      where x.direction = 'out' and x.status = 'confirmed' and x.confirmed_at is not null
      group by 2, 3, 4
      union all
      select 'wallet_transactions.transfers', i.name, date_trunc(i.name, x.confirmed_at, 'UTC'),
             k.key, count(*)
      from app.wallet_transactions x join token k on k.x = x.id, i
      where x.direction = 'out' and x.status = 'confirmed' and x.confirmed_at is not null
      group by 2, 3, 4
    ),
    rolled as (
      select r.metric, r.bucket_interval, r.bucket, r.key, sum(r.value) as value
      from (
        select f.metric, f.bucket_interval, f.bucket, f.key, f.value from app_private.analytics_facts f
        where f.metric not like 'notification%'
        union all
        select d.metric, d.bucket_interval, d.bucket, d.key, d.delta
        from app_private.analytics_fact_deltas d
        where d.metric not like 'notification%'
        union all
        select m.metric, i.name, l.bucket, l.key, l.value
        from unnest(array['messages.sent', 'messages.senders', 'messages.live', 'orders.created',
                          'orders.status', 'orders.sales', 'orders.paid', 'orders.vendor_sales',
                          'orders.vendor_paid']) m(metric)
        cross join (values ('all'), ('day'), ('week'), ('month')) i(name)
        cross join lateral app_private.analytics_fact_tail(m.metric, i.name) l
      ) r
      group by 1, 2, 3, 4
      having sum(r.value) <> 0
    )
    select coalesce(c.metric, r.metric) as metric,
           coalesce(c.bucket_interval, r.bucket_interval) as bucket_interval,
           coalesce(c.bucket, r.bucket)::text as bucket, coalesce(c.key, r.key) as key,
           c.value::text as counted, r.value::text as rolled
    from counted c
    full join rolled r
      on r.metric = c.metric and r.bucket_interval = c.bucket_interval and r.bucket = c.bucket
     and r.key = c.key
    where c.value is distinct from r.value`,
  ];
}

/** A vendor and a checkout to hang orders on, written directly. */
async function storeFixture(sql: postgres.Sql, owner: string, tag: string) {
  const [vendor] = await sql<{ id: string }[]>`
    insert into app.vendors (owner_id, name, slug, contact_email, country, status)
    values (${owner}, ${`Facts ${tag}`}, ${`facts-${tag}`}, ${`facts-${tag}@example.test`}, 'US',
            'approved')
    returning id`;
  const [checkout] = await sql<{ id: string }[]>`
    insert into app.checkouts (buyer_id, total, currency, provider, reserved_until)
    values (${owner}, 100, 'USD', 'dev', now() + interval '1 hour')
    returning id`;
  return { vendor: vendor.id, checkout: checkout.id };
}

test("[races] 12 writers write conversations, messages, orders, wallets and transfers at once: every analytics figure equals a recount", async () => {
  const writers = Array.from({ length: 12 }, () => postgres(url, { max: 1, onnotice: () => {} }));
  try {
    const people = await Promise.all(writers.map(() => createUser(t.deps, "MEMBER")));
    const shared = await storeFixture(
      t.deps.sql,
      (await createUser(t.deps, "MEMBER")).id,
      crypto.randomUUID().slice(0, 8),
    );
    await Promise.all(writers.map(async (sql, w) => {
      const me = people[w].id;
      const other = people[(w + 1) % people.length].id;
      const mine = await storeFixture(sql, me, crypto.randomUUID().slice(0, 8));
      const [conversation] = await sql<{ id: string }[]>`
        insert into app.conversations (type, title, created_by)
        values ('group', ${`Facts ${w}`}, ${me}) returning id`;
      await sql`
        insert into app.conversation_participants (conversation_id, user_id)
        values (${conversation.id}, ${me}), (${conversation.id}, ${other})`;
      const [wallet] = await sql<{ id: string }[]>`
        insert into app.wallets (user_id, address)
        values (${me}, ${"0x" + crypto.randomUUID().replaceAll("-", "").padEnd(40, "a")})
        returning id`;
      const orders: string[] = [];
      const transfers: string[] = [];
      for (let i = 0; i < 8; i++) {
        // Messages, one and three in a statement, by two senders.
        await sql`
          insert into app.messages (conversation_id, sender_id, content)
          values (${conversation.id}, ${i % 2 ? me : other}, ${`hello ${i}`})`;
        if (i % 3 === 0) {
          await sql`
            insert into app.messages (conversation_id, sender_id, content)
            select ${conversation.id}, ${me}, 'many ' || g from generate_series(1, 3) g`;
        }
        if (i % 4 === 1) {
          await sql`
            update app.messages set deleted_at = now(), content = ''
            where id = (select id from app.messages where conversation_id = ${conversation.id}
                          and deleted_at is null order by seq limit 1)`;
        }
        // Orders: created, paid (to my vendor or the shared one), moved on, some deleted.
        const [order] = await sql<{ id: string }[]>`
          insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency)
          values (${mine.checkout}, ${me}, ${i % 2 ? mine.vendor : shared.vendor}, 'Facts',
                  ${100 + w * 10 + i}, 'USD')
          returning id`;
        orders.push(order.id);
        await sql`update app.orders set status = 'paid', paid_at = now(), payment_status = 'succeeded'
                  where id = ${order.id}`;
        if (i % 3 === 2) {
          // Many rows in one statement, in a transaction with a delete.
          await sql.begin(async (tx) => {
            await tx`update app.orders set status = 'processing' where id = any(${orders}::uuid[])
                     and status = 'paid'`;
            await tx`delete from app.orders where id = ${orders.shift()!}`;
          });
        }
        // Transfers: out and in, confirmed or failed, one moved back and forth.
        const out = i % 3 !== 0;
        const hash = "0x" + crypto.randomUUID().replaceAll("-", "") +
          crypto.randomUUID().replaceAll("-", "");
        const [transfer] = await sql<{ id: string }[]>`
          insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id,
                                               token_kind, token_address, token_symbol, token_name,
                                               token_decimals, from_address, to_address, amount,
                                               hash, nonce, log_index, block_number, gas_limit,
                                               expires_at, confirmed_at)
          values (${wallet.id}, ${me}, ${out ? "out" : "in"}, 'submitted', 31337,
                  ${i % 2 ? "native" : "utility"}, ${i % 2 ? null : "0x" + "3".repeat(40)},
                  ${i % 2 ? "ETH" : "AGV"}, 'Token', 18,
                  ${"0x" + "1".repeat(40)}, ${"0x" + "2".repeat(40)},
                  ${`${10n ** 18n + BigInt(w * 100 + i)}`}, ${hash}, ${out ? i : null},
                  ${out ? null : 0}, ${out ? null : i}, ${out ? 21000 : null},
                  ${out ? new Date(Date.now() + 3_600_000) : null}, now())
          returning id`;
        transfers.push(transfer.id);
        await sql`update app.wallet_transactions set status = ${i % 4 ? "confirmed" : "failed"}
                  where id = ${transfer.id}`;
        if (i === 5) {
          await sql`update app.wallets set exported_at = now() where id = ${wallet.id}`;
          await sql`delete from app.wallet_transactions where id = ${transfers.shift()!}`;
        }
        // The fold with no margin, racing the writers (the mark moves up to the oldest of
        // their transactions): later changes of these rows are deltas.
        if (i % 3 === w % 3) await sql`select app_private.fold_analytics_facts(interval '0')`;
      }
      // The every-minute compaction, racing the writers.
      if (w % 4 === 0) await sql`select app_private.compact_counters()`;
      await sql`delete from app.orders where id = any(${orders.slice(0, 2)}::uuid[])`;
    }));
    assert.deepEqual(await drift(t.deps.sql), [], "every figure equals its recount");
    await t.deps.sql`select app_private.compact_counters()`;
    await t.deps.sql`select app_private.fold_analytics_facts(interval '0')`;
    assert.deepEqual(await drift(t.deps.sql), [], "and still does once the deltas are folded in");
    await t.deps.sql`select app_private.recount_analytics_facts()`;
    assert.deepEqual(await drift(t.deps.sql), [], "and after a recount");
  } finally {
    await Promise.all(writers.map((sql) => sql.end()));
  }
});

/** A conversation of one member, to hang messages on. */
async function conversationOf(sql: postgres.Sql, me: string) {
  const [conversation] = await sql<{ id: string }[]>`
    insert into app.conversations (type, title, created_by) values ('group', 'Fold', ${me})
    returning id`;
  await sql`insert into app.conversation_participants (conversation_id, user_id)
            values (${conversation.id}, ${me})`;
  return conversation.id;
}

test("[races] the fold moves its mark no further than a transaction in progress: rows committed after the fold are counted once", async () => {
  const sql = t.deps.sql;
  const late = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const me = (await createUser(t.deps, "MEMBER")).id;
    const fixture = await storeFixture(sql, me, crypto.randomUUID().slice(0, 8));
    const conversation = await conversationOf(sql, me);
    await late.begin(async (tx) => {
      // created_at is the transaction's start: earlier than the fold that runs meanwhile.
      await tx`select 1`;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx`insert into app.messages (conversation_id, sender_id, content)
               values (${conversation}, ${me}, 'late')`;
      await tx`insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total,
                                       currency, status, payment_status, paid_at)
               values (${fixture.checkout}, ${me}, ${fixture.vendor}, 'Late', 777, 'USD', 'paid',
                       'succeeded', now())`;
      await sql`select app_private.fold_analytics_facts(interval '0')`;
      const marks = await tx<{ source: string; below: boolean }[]>`
        select source, folded_before <= now() as below from app_private.analytics_fold_marks
        order by source`;
      assert.ok(marks.every((m) => m.below), "no mark past its start");
      assert.deepEqual(await drift(sql), [], "exact while it is in progress");
    });
    assert.deepEqual(await drift(sql), [], "exact once it committed after the fold");
    await sql`select app_private.fold_analytics_facts(interval '0')`;
    assert.deepEqual(await drift(sql), [], "and once its rows are folded, counted once");
    const [folded] = await sql<{ n: number }[]>`
      select count(*)::int as n from app.messages m, app_private.analytics_fold_marks k
      where k.source = 'app.messages' and m.conversation_id = ${conversation}
        and m.created_at < k.folded_before`;
    assert.equal(folded.n, 1, "the late message is below the mark now");
  } finally {
    await late.end();
  }
});

test("[races] a tombstone and an order's payment committing while the fold runs: the fold waits for them, each counted once", async () => {
  const sql = t.deps.sql;
  const change = postgres(url, { max: 1, onnotice: () => {} });
  const folder = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const me = (await createUser(t.deps, "MEMBER")).id;
    const fixture = await storeFixture(sql, me, crypto.randomUUID().slice(0, 8));
    const conversation = await conversationOf(sql, me);
    const [message] = await sql<{ id: string }[]>`
      insert into app.messages (conversation_id, sender_id, content)
      values (${conversation}, ${me}, 'soon gone') returning id`;
    // A sender stays counted once their message is removed; the recount here counts the senders
    // of the messages there are, so this one stays.
    await sql`insert into app.messages (conversation_id, sender_id, content)
              values (${conversation}, ${me}, 'stays')`;
    const [order] = await sql<{ id: string }[]>`
      insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency)
      values (${fixture.checkout}, ${me}, ${fixture.vendor}, 'Fold', 555, 'USD') returning id`;
    let folding: Promise<unknown> | undefined;
    await change.begin(async (tx) => {
      // Both rows are above the mark: their triggers append nothing (the fold will read them).
      await tx`update app.messages set deleted_at = now(), content = '' where id = ${message.id}`;
      await tx`update app.orders set status = 'paid', paid_at = now(), payment_status = 'succeeded'
               where id = ${order.id}`;
      // The fold, which would fold both rows as they were, waits for this transaction.
      folding = folder`select app_private.fold_analytics_facts(interval '0')`.execute();
      const early = await Promise.race([
        folding.then(() => "folded"),
        new Promise((resolve) => setTimeout(() => resolve("waiting"), 500)),
      ]);
      assert.equal(early, "waiting", "the fold waits for the change in progress");
    });
    await folding;
    const [folded] = await sql<{ n: number }[]>`
      select count(*)::int as n
      from app.messages m, app.orders o, app_private.analytics_fold_marks k
      where m.id = ${message.id} and o.id = ${order.id} and k.source = 'app.messages'
        and m.created_at < k.folded_before and o.created_at < k.folded_before`;
    assert.equal(folded.n, 1, "it folded both, once their change had committed");
    assert.deepEqual(await drift(sql), [], "exact after the fold that waited");
    // Changed again now they are folded: deltas.
    await sql`update app.orders set status = 'processing' where id = ${order.id}`;
    await sql`delete from app.messages where id = ${message.id}`;
    assert.deepEqual(await drift(sql), [], "and after changes to folded rows");
  } finally {
    await change.end();
    await folder.end();
  }
});

test("[admin] GET /api/admin/analytics: the messaging, store and wallet totals move by exactly what was written, and equal a count of the tables", async () => {
  const admin = await signInAs(t, "ADMIN");
  const page = async () =>
    await expectJson(
      await t.request("GET", "/api/admin/analytics?interval=month", { token: admin.accessToken }),
      200,
    );
  const sql = t.deps.sql;
  const before = await page();
  const me = await createUser(t.deps, "MEMBER");
  const fixture = await storeFixture(sql, me.id, crypto.randomUUID().slice(0, 8));
  const [conversation] = await sql<{ id: string }[]>`
    insert into app.conversations (type, title, created_by) values ('group', 'Page', ${me.id})
    returning id`;
  await sql`insert into app.conversation_participants (conversation_id, user_id)
            values (${conversation.id}, ${me.id})`;
  await sql`insert into app.messages (conversation_id, sender_id, content)
            select ${conversation.id}, ${me.id}, 'm ' || g from generate_series(1, 4) g`;
  await sql`update app.messages set deleted_at = now(), content = ''
            where conversation_id = ${conversation.id} and seq = 1`;
  await sql`insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency,
                                    status, payment_status, paid_at)
            values (${fixture.checkout}, ${me.id}, ${fixture.vendor}, 'Page', 123456789012, 'USD',
                    'paid', 'succeeded', now())`;
  const after = await page();
  const last = (s: { value: number }[]) => s[s.length - 1].value;
  assert.equal(after.messaging.totals.conversations, before.messaging.totals.conversations + 1);
  assert.equal(after.messaging.totals.messages, before.messaging.totals.messages + 3);
  assert.equal(last(after.messaging.messages), last(before.messaging.messages) + 4);
  assert.equal(
    last(after.messaging.conversationsCreated),
    last(before.messaging.conversationsCreated) + 1,
  );
  assert.equal(after.store.totals.sales, before.store.totals.sales + 123456789012);
  assert.equal(after.store.totals.paidOrders, before.store.totals.paidOrders + 1);
  assert.equal(after.store.ordersByStatus.paid, before.store.ordersByStatus.paid + 1);
  assert.deepEqual(after.store.topVendors.find((v: { id: string }) => v.id === fixture.vendor), {
    id: fixture.vendor,
    name: (await sql`select name from app.vendors where id = ${fixture.vendor}`)[0].name,
    sales: 123456789012,
    orders: 1,
  });
  const [counted] = await sql`
    select (select count(*)::int from app.conversations) as conversations,
           (select count(*)::int from app.messages where deleted_at is null) as messages,
           (select count(*)::int from app.orders where status = 'paid') as paid,
           (select count(*)::int from app.wallets) as wallets,
           (select count(*)::int from app.wallet_transactions) as transactions`;
  assert.equal(after.messaging.totals.conversations, counted.conversations);
  assert.equal(after.messaging.totals.messages, counted.messages);
  assert.equal(after.store.ordersByStatus.paid, counted.paid);
  assert.equal(after.wallet.totals.wallets, counted.wallets);
  assert.equal(after.wallet.totals.transactions, counted.transactions);
});
