/**
 * Every list endpoint, paged to the end with small limits: each row the list holds comes exactly
 * once, in the list's order, against what the database holds. Each list has more than ten rows,
 * some with the same sort time (the id breaks the tie) and some whose ids run against their
 * times (the order is by time, not by id).
 */
import assert from "node:assert/strict";
import { createUser, expectJson, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

interface Page {
  items: { id: string }[];
  nextCursor: string | null;
}

/**
 * Follows `nextCursor` from the first page to the last and returns the ids in the order served.
 * Every page before the last is full; more pages than `expected` rows need is a failure (a
 * cursor that does not move on).
 */
async function pageThrough(
  path: string,
  token: string,
  limit: number,
  expected: number,
): Promise<string[]> {
  const ids: string[] = [];
  const maxPages = Math.ceil(expected / limit) + 1;
  let cursor: string | null = null;
  for (let pages = 1;; pages++) {
    const url: string = `${path}${path.includes("?") ? "&" : "?"}limit=${limit}` +
      (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "");
    const page: Page = await expectJson(await t.request("GET", url, { token }), 200);
    assert.ok(page.items.length <= limit, `${url}: at most ${limit} items`);
    ids.push(...page.items.map((item) => item.id));
    if (page.nextCursor === null) return ids;
    assert.equal(page.items.length, limit, `${url}: a page before the last is full`);
    assert.ok(pages < maxPages, `${path}: more pages than ${expected} rows need`);
    cursor = page.nextCursor;
  }
}

/** The same ids in the same order, each once; on a mismatch, says where the two part. */
function assertServedInOrder(served: string[], expected: string[], list: string): void {
  assert.ok(expected.length > 10, `${list}: more than ten rows to page through`);
  assert.equal(new Set(served).size, served.length, `${list}: no row served twice`);
  const firstDifference = expected.findIndex((id, i) => served[i] !== id);
  assert.ok(
    served.length === expected.length && firstDifference === -1,
    `${list}: served ${served.length} of ${expected.length} rows; ` +
      `first difference at position ${firstDifference}`,
  );
}

/**
 * The ids of rows as the database orders them. The queries name their columns with the table's
 * alias in `order by`: a bare `id` there would sort the `id::text` of the select list.
 */
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

test("[lists] GET /api/admin/users pages to the end: every user once, newest first", async () => {
  const tag = `lists-${crypto.randomUUID().slice(0, 8)}`;
  for (let i = 0; i < 6; i++) await createUser(t.deps, "MEMBER", `${tag}-a${i}@test.example`);
  // Twelve users made by one statement share their created_at: the id orders them.
  await t.deps.sql`
    insert into app.users (email, name, role)
    select ${tag} || '-b' || g || '@test.example', ${tag} || '-b' || g, 'SUBSCRIBER'
    from generate_series(1, 12) g`;

  const tagged = ids(
    await t.deps.sql<{ id: string }[]>`
      select u.id::text from app.users u where u.email like ${tag + "%"}
      order by u.created_at desc, u.id desc`,
  );
  const first = await expectJson(
    await t.request("GET", `/api/admin/users?search=${tag}&limit=4`, { token: admin.accessToken }),
    200,
  );
  assert.equal(first.counts.total, tagged.length, "the count matches the rows");
  assertServedInOrder(
    await pageThrough(`/api/admin/users?search=${tag}`, admin.accessToken, 4, tagged.length),
    tagged,
    "admin users, searched",
  );

  const all = ids(
    await t.deps.sql<{ id: string }[]>`
      select u.id::text from app.users u order by u.created_at desc, u.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/admin/users", admin.accessToken, 9, all.length),
    all,
    "admin users",
  );
});

test("[lists] GET /api/admin/security-events pages to the end: every event once, newest first by createdAt", async () => {
  const user = await createUser(t.deps, "MEMBER");
  // Twelve events at one time, six at earlier times; then five with later ids but earlier
  // times: the list orders by time, so these come last.
  await t.deps.sql`
    insert into app.security_events (type, user_id, ip, created_at)
    select 'test.paging', ${user.id}, '192.0.2.77',
           now() - interval '1 hour' - case when g <= 12 then interval '0' else g * interval '1 s' end
    from generate_series(1, 18) g`;
  await t.deps.sql`
    insert into app.security_events (type, user_id, ip, created_at)
    select 'test.paging', ${user.id}, '192.0.2.77', now() - interval '2 hours' - g * interval '1 s'
    from generate_series(1, 5) g`;

  const own = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.security_events e where e.user_id = ${user.id}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/security-events?userId=${user.id}&type=test.paging&ip=192.0.2.77`,
      admin.accessToken,
      4,
      own.length,
    ),
    own,
    "security events of one user",
  );

  // Every event up to now (`to` holds the set still while the walk adds rows of its own).
  const to = new Date(Date.now() - 1).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const all = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.security_events e where e.created_at < ${to}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/security-events?to=${encodeURIComponent(to)}`,
      admin.accessToken,
      7,
      all.length,
    ),
    all,
    "security events",
  );
});

test("[lists] GET /api/admin/access-logs pages to the end: every entry once, newest first by createdAt", async () => {
  const user = await createUser(t.deps, "MEMBER");
  await t.deps.sql`
    insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
    select 'paging-' || g, ${user.id}, 'GET', '/api/test/paging', 200, 1, '192.0.2.78',
           now() - interval '1 hour' - case when g <= 12 then interval '0' else g * interval '1 s' end
    from generate_series(1, 18) g`;
  await t.deps.sql`
    insert into app.access_logs (request_id, user_id, method, route, status, duration_ms, ip, created_at)
    select 'paging-late-' || g, ${user.id}, 'GET', '/api/test/paging', 200, 1, '192.0.2.78',
           now() - interval '2 hours' - g * interval '1 s'
    from generate_series(1, 5) g`;

  const own = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.access_logs e where e.user_id = ${user.id}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/access-logs?userId=${user.id}&route=/api/test/paging&ip=192.0.2.78`,
      admin.accessToken,
      4,
      own.length,
    ),
    own,
    "access log of one user",
  );

  // The log of every request so far is written; the walk's own requests come after `to`.
  await t.deps.accessLog.flush();
  const to = new Date(Date.now() - 1).toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const all = ids(
    await t.deps.sql<{ id: string }[]>`
      select e.id::text from app.access_logs e where e.created_at < ${to}
      order by e.created_at desc, e.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/access-logs?to=${encodeURIComponent(to)}`,
      admin.accessToken,
      7,
      all.length,
    ),
    all,
    "access log",
  );
});

test("[lists] GET /api/conversations pages to the end: every conversation once, newest activity first", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const other = await createUser(t.deps, "SUBSCRIBER");
  const made: string[] = [];
  for (let i = 0; i < 16; i++) {
    const created = await expectJson(
      await t.request("POST", "/api/conversations", {
        token: me.accessToken,
        body: { type: "group", participantIds: [other.id], title: `Paging ${i}` },
      }),
      201,
    );
    made.push(created.id);
  }
  // Eight with the same latest activity: the id orders them.
  await t.deps.sql`
    update app.conversations set last_activity_at = now() - interval '1 minute'
    where id = any(${made.slice(0, 8)}::uuid[])`;

  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select c.id::text from app.conversations c
      join app.conversation_participants p on p.conversation_id = c.id
      where p.user_id = ${me.user.id}
      order by c.last_activity_at desc, c.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/conversations", me.accessToken, 3, expected.length),
    expected,
    "conversations",
  );
  assertServedInOrder(
    await pageThrough("/api/conversations?type=group&search=paging", me.accessToken, 5, 16),
    expected,
    "conversations, filtered",
  );
});

test("[lists] GET /api/conversations/:id/messages pages to the end both ways: older by cursor, newer with after=", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const other = await createUser(t.deps, "SUBSCRIBER");
  const conversation = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: me.accessToken,
      body: { type: "direct", participantIds: [other.id] },
    }),
    201,
  );
  for (let i = 0; i < 17; i++) {
    await expectJson(
      await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
        token: me.accessToken,
        body: { content: `message ${i}` },
      }),
      201,
    );
  }
  const newestFirst = ids(
    await t.deps.sql<{ id: string }[]>`
      select m.id::text from app.messages m where m.conversation_id = ${conversation.id}
      order by m.seq desc`,
  );
  const path = `/api/conversations/${conversation.id}/messages`;
  assertServedInOrder(
    await pageThrough(path, me.accessToken, 4, newestFirst.length),
    newestFirst,
    "messages, older pages",
  );
  const oldest = newestFirst[newestFirst.length - 1];
  const newer = newestFirst.slice(0, -1).reverse();
  assertServedInOrder(
    await pageThrough(`${path}?after=${oldest}`, me.accessToken, 4, newer.length),
    newer,
    "messages, catching up with after=",
  );
});

test("[lists] GET /api/users pages to the end: every active person once, by name", async () => {
  const member = await signInAs(t, "MEMBER");
  const tag = `pager${crypto.randomUUID().slice(0, 6)}`;
  // Fourteen people, four of them sharing one name (the id breaks the tie), one suspended (left
  // out of the directory).
  await t.deps.sql`
    insert into app.users (email, name, role, status)
    select ${tag} || g || '@test.example',
           case when g <= 4 then ${tag} || ' Same' else ${tag} || ' ' || lpad(g::text, 2, '0') end,
           'SUBSCRIBER', case when g = 15 then 'suspended' else 'active' end::app.user_status
    from generate_series(1, 15) g`;
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select u.id::text from app.users u
      where u.name like ${tag + "%"} and u.status = 'active'
      order by lower(u.name), u.id`,
  );
  assertServedInOrder(
    await pageThrough(`/api/users?search=${tag}`, member.accessToken, 3, expected.length),
    expected,
    "people, searched",
  );
});

test("[lists] GET /api/users/blocked pages to the end: every block once, newest first", async () => {
  const member = await signInAs(t, "MEMBER");
  const tag = `blocked${crypto.randomUUID().slice(0, 6)}`;
  // Twelve blocked people: four blocked at one time (the id breaks the tie), the others at times
  // that run against their ids; one suspended (still listed, so it can be unblocked).
  await t.deps.sql`
    insert into app.users (email, name, role, status)
    select ${tag} || g || '@test.example', ${tag} || ' ' || g, 'SUBSCRIBER',
           case when g = 12 then 'suspended' else 'active' end::app.user_status
    from generate_series(1, 12) g`;
  await t.deps.sql`
    insert into app.user_blocks (blocker_id, blocked_id, created_at)
    select ${member.user.id}, u.id,
           case when u.name in (${tag + " 1"}, ${tag + " 2"}, ${tag + " 3"}, ${tag + " 4"})
                then now() - interval '1 hour'
                else now() - (row_number() over (order by u.id desc)) * interval '1 minute' end
    from app.users u where u.name like ${tag + " %"}`;
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select b.blocked_id::text as id from app.user_blocks b
      where b.blocker_id = ${member.user.id}
      order by b.created_at desc, b.blocked_id desc`,
  );
  assert.equal(expected.length, 12);
  assertServedInOrder(
    await pageThrough("/api/users/blocked", member.accessToken, 5, expected.length),
    expected,
    "blocked people",
  );
});

test("[lists] GET /api/auth/sessions pages to the end: every live session once, newest first", async () => {
  const me = await signInAs(t, "MEMBER");
  // Twelve sessions opened at one time (the id orders them), six earlier ones, and ended or
  // expired sessions that the list leaves out.
  await t.deps.sql`
    insert into app.sessions (user_id, provider, expires_at, created_at)
    select ${me.user.id}, 'email', now() + interval '1 day',
           now() - interval '1 hour' - case when g <= 12 then interval '0' else g * interval '1 s' end
    from generate_series(1, 18) g`;
  await t.deps.sql`
    insert into app.sessions (user_id, provider, expires_at, revoked_at, revoked_reason)
    select ${me.user.id}, 'email', now() + interval '1 day', now(), 'test' from generate_series(1, 3)`;
  await t.deps.sql`
    insert into app.sessions (user_id, provider, expires_at, created_at)
    select ${me.user.id}, 'email', now() - interval '1 minute', now() - interval '2 days'
    from generate_series(1, 2)`;
  const live = ids(
    await t.deps.sql<{ id: string }[]>`
      select s.id::text from app.sessions s
      where s.user_id = ${me.user.id} and s.revoked_at is null and s.expires_at > now()
      order by s.created_at desc, s.id desc`,
  );
  assert.equal(live.length, 19);
  assertServedInOrder(
    await pageThrough("/api/auth/sessions", me.accessToken, 4, live.length),
    live,
    "sessions",
  );
});

// ---------------------------------------------------------------------------------------------
// The store's lists
// ---------------------------------------------------------------------------------------------

/** An approved vendor owned by a new MEMBER, written directly (a trusted path). */
async function storeVendor(name: string, createdAt = "now()") {
  const owner = await signInAs(t, "MEMBER");
  const [row] = await t.deps.sql<{ id: string }[]>`
    insert into app.vendors (owner_id, name, slug, contact_email, country, status, created_at)
    values (${owner.user.id}, ${name}, ${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")},
            'shop@example.test', 'US', 'approved', ${
    createdAt === "now()" ? new Date() : createdAt
  })
    returning id`;
  return { owner, id: row.id };
}

test("[lists] GET /api/store/products pages to the end in every sort: each product once, in order", async () => {
  const tag = `lists${crypto.randomUUID().slice(0, 8)}`;
  const vendor = await storeVendor(`Shop ${tag}`);
  // Twelve products made by one statement (same created_at), prices repeating; five older ones
  // whose ids run against their times.
  await t.deps.sql`
    insert into app.products (vendor_id, title, category, price_amount, currency, stock)
    select ${vendor.id}, ${tag} || ' item ' || g, 'misc', 100 * (1 + g % 3), 'USD', 1
    from generate_series(1, 12) g`;
  await t.deps.sql`
    insert into app.products (vendor_id, title, category, price_amount, currency, stock, created_at)
    select ${vendor.id}, ${tag} || ' old ' || g, 'misc', 250, 'USD', 1, now() - g * interval '1 minute'
    from generate_series(1, 5) g`;
  const expectedBySort: Record<string, string[]> = {
    newest: ids(
      await t.deps.sql<{ id: string }[]>`
        select p.id::text from app.products p where p.vendor_id = ${vendor.id}
        order by p.created_at desc, p.id desc`,
    ),
    price_asc: ids(
      await t.deps.sql<{ id: string }[]>`
        select p.id::text from app.products p where p.vendor_id = ${vendor.id}
        order by p.price_amount asc, p.id asc`,
    ),
    price_desc: ids(
      await t.deps.sql<{ id: string }[]>`
        select p.id::text from app.products p where p.vendor_id = ${vendor.id}
        order by p.price_amount desc, p.id desc`,
    ),
  };
  for (const [sort, expected] of Object.entries(expectedBySort)) {
    assertServedInOrder(
      await pageThrough(
        `/api/store/products?vendorId=${vendor.id}&sort=${sort}`,
        admin.accessToken,
        4,
        expected.length,
      ),
      expected,
      `products by ${sort}`,
    );
  }
  // By relevance: every matching product once (ranks tie, the id breaks them).
  const matching = await pageThrough(
    `/api/store/products?q=${tag}&sort=relevance`,
    admin.accessToken,
    5,
    17,
  );
  assert.equal(new Set(matching).size, 17);
});

test("[lists] GET /api/store/vendors and /api/admin/vendors page to the end, newest first", async () => {
  const tag = `vlist${crypto.randomUUID().slice(0, 8)}`;
  const at = new Date(Date.now() - 60_000).toISOString();
  for (let i = 0; i < 12; i++) await storeVendor(`${tag} same ${i}`, at);
  for (let i = 0; i < 4; i++) await storeVendor(`${tag} later ${i}`);
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select v.id::text from app.vendors v where v.name like ${tag + "%"}
      order by v.created_at desc, v.id desc`,
  );
  assertServedInOrder(
    await pageThrough(`/api/store/vendors?search=${tag}`, admin.accessToken, 5, expected.length),
    expected,
    "public vendors",
  );
  assertServedInOrder(
    await pageThrough(`/api/admin/vendors?search=${tag}`, admin.accessToken, 3, expected.length),
    expected,
    "admin vendors",
  );
});

test("[lists] GET /api/store/orders pages to the end, newest first, as buyer and as vendor", async () => {
  const tag = `olist${crypto.randomUUID().slice(0, 8)}`;
  const vendor = await storeVendor(`Orders ${tag}`);
  const [item] = await t.deps.sql<{ id: string }[]>`
    insert into app.products (vendor_id, title, category, price_amount, currency, stock)
    values (${vendor.id}, ${tag}, 'misc', 500, 'USD', 100) returning id`;
  const buyer = await signInAs(t, "SUBSCRIBER");
  for (let i = 0; i < 14; i++) {
    await expectJson(
      await t.request("POST", "/api/store/orders", {
        token: buyer.accessToken,
        body: { items: [{ productId: item.id, quantity: 1 }] },
      }),
      201,
    );
  }
  // Eight share one time: the id orders them.
  await t.deps.sql`
    update app.orders set created_at = now() - interval '1 minute'
    where id in (select id from app.orders where buyer_id = ${buyer.user.id} order by id limit 8)`;
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select o.id::text from app.orders o where o.buyer_id = ${buyer.user.id}
      order by o.created_at desc, o.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/store/orders", buyer.accessToken, 4, expected.length),
    expected,
    "orders as buyer",
  );
  assertServedInOrder(
    await pageThrough("/api/store/orders?as=vendor", vendor.owner.accessToken, 5, expected.length),
    expected,
    "orders as vendor",
  );
});

test("[lists] GET /api/admin/settlements and /api/store/vendors/me/settlements page to the end, newest first", async () => {
  const tag = `slist${crypto.randomUUID().slice(0, 8)}`;
  const vendor = await storeVendor(`Settled ${tag}`);
  // One settlement per run and vendor: a run each. Ten share one time (the id orders them).
  for (let g = 1; g <= 15; g++) {
    await t.deps.sql`
      with run as (insert into app.settlement_runs (as_of) values (now()) returning id)
      insert into app.settlements (run_id, vendor_id, period_end, order_count, gross,
                                   commission, refunds, net, currency, status, created_at)
      select run.id, ${vendor.id}, now(), 1, 100, 5, 0, 95, 'USD', 'paid',
             now() - ${g <= 10 ? "0 s" : `${g} s`}::interval
      from run`;
  }
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select s.id::text from app.settlements s where s.vendor_id = ${vendor.id}
      order by s.created_at desc, s.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      `/api/admin/settlements?vendorId=${vendor.id}`,
      admin.accessToken,
      4,
      expected.length,
    ),
    expected,
    "admin settlements",
  );
  assertServedInOrder(
    await pageThrough(
      "/api/store/vendors/me/settlements",
      vendor.owner.accessToken,
      6,
      expected.length,
    ),
    expected,
    "a vendor's settlements",
  );
});

test("[lists] GET /api/wallet/transactions pages to the end: every transaction once, newest first", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const [wallet] = await t.deps.sql<{ id: string; address: string }[]>`
    select id, address from app.wallets where user_id = ${me.user.id}`;
  // Fourteen incoming rows at one time (the id breaks the tie), five with later ids but earlier
  // times: the list orders by time.
  const insert = (n: number, at: string) =>
    t.deps.sql`
      insert into app.wallet_transactions (
        wallet_id, user_id, direction, status, chain_id, token_kind, token_symbol, token_name,
        token_decimals, from_address, to_address, amount, hash, log_index, block_number, created_at)
      select ${wallet.id}, ${me.user.id}, 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
             '0x0000000000000000000000000000000000000001', ${wallet.address}, g,
             '0x' || lpad(to_hex(g) || md5(random()::text), 64, '0'), -1, 1, ${at}::timestamptz
      from generate_series(1, ${n}) g`;
  await insert(14, new Date(Date.now() - 60_000).toISOString());
  await insert(5, new Date(Date.now() - 120_000).toISOString());
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select x.id::text from app.wallet_transactions x where x.user_id = ${me.user.id}
      order by x.created_at desc, x.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/wallet/transactions", me.accessToken, 4, expected.length),
    expected,
    "wallet transactions",
  );
  assertServedInOrder(
    await pageThrough("/api/wallet/transactions?direction=in&token=native", me.accessToken, 6, 19),
    expected,
    "wallet transactions, filtered",
  );
});

test("[lists] GET /api/wallet/nfts pages to the end: every holding once, newest first", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const [wallet] = await t.deps.sql<{ id: string }[]>`
    select id from app.wallets where user_id = ${me.user.id}`;
  // Twelve holdings of one collection recorded at once (contract and token id break the tie),
  // and four of another, earlier.
  await t.deps.sql`
    insert into app.wallet_nfts (wallet_id, user_id, chain_id, contract, token_id, standard, balance, created_at)
    select ${wallet.id}, ${me.user.id}, 31337, '0x00000000000000000000000000000000000000A1', g,
           'ERC721', 1, now() - interval '1 minute'
    from generate_series(1, 12) g`;
  await t.deps.sql`
    insert into app.wallet_nfts (wallet_id, user_id, chain_id, contract, token_id, standard, balance, created_at)
    select ${wallet.id}, ${me.user.id}, 31337, '0x00000000000000000000000000000000000000B2', g,
           'ERC1155', g, now() - interval '2 minutes'
    from generate_series(1, 4) g`;
  const expected = (await t.deps.sql<{ id: string }[]>`
    select n.contract || ':' || n.token_id as id from app.wallet_nfts n
    where n.user_id = ${me.user.id} and n.chain_id = 31337
    order by n.created_at desc, n.contract desc, n.token_id desc`).map((r) => r.id);
  const served: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10; pages++) {
    const page: { items: { contract: string; tokenId: string }[]; nextCursor: string | null } =
      await expectJson(
        await t.request(
          "GET",
          `/api/wallet/nfts?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          { token: me.accessToken },
        ),
        200,
      );
    served.push(...page.items.map((i) => `${i.contract}:${i.tokenId}`));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  assertServedInOrder(served, expected, "wallet NFTs");
});
test("[lists] GET /api/notifications pages to the end: every notification once, newest first by createdAt", async () => {
  const me = await signInAs(t, "MEMBER");
  // Twelve written by one statement share their created_at (the id orders them); six more at
  // earlier times whose ids run against their times.
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body)
    select ${me.user.id}, 'SYSTEM', 'same time ' || g, '' from generate_series(1, 12) g`;
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body, created_at)
    select ${me.user.id}, case when g % 2 = 0 then 'WALLET' else 'SYSTEM' end::app.notification_type,
           'earlier ' || g, '', now() - g * interval '1 minute'
    from generate_series(1, 6) g`;
  // A hidden row (in-app off) and another user's never show.
  await t.deps.sql`
    insert into app.notifications (user_id, type, title, body, inbox)
    values (${me.user.id}, 'SYSTEM', 'hidden', '', false)`;
  const expected = ids(
    await t.deps.sql<{ id: string }[]>`
      select n.id::text from app.notifications n where n.user_id = ${me.user.id} and n.inbox
      order by n.created_at desc, n.id desc`,
  );
  assertServedInOrder(
    await pageThrough("/api/notifications", me.accessToken, 5, expected.length),
    expected,
    "notifications",
  );
  await t.deps
    .sql`update app.notifications set read_at = now() where user_id = ${me.user.id} and title like 'same time 1%'`;
  const unread = ids(
    await t.deps.sql<{ id: string }[]>`
      select n.id::text from app.notifications n
      where n.user_id = ${me.user.id} and n.inbox and n.read_at is null and n.type = 'SYSTEM'
      order by n.created_at desc, n.id desc`,
  );
  assertServedInOrder(
    await pageThrough(
      "/api/notifications?unread=true&type=SYSTEM",
      me.accessToken,
      3,
      unread.length,
    ),
    unread,
    "notifications, unread SYSTEM",
  );
});
