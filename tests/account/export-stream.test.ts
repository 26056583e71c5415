/**
 * GET /api/account/export at any size (issue 30): a user with 200,000 notifications gets the
 * whole document, streamed (many pieces, the first long before the last), that parses with
 * every notification once, while the API process's heap stays far below the document's size.
 * Built whole, the document of a user with 1,000,000 went past jsonb's 256 MB limit. Every list
 * that grows is streamed the same way (conversations, messages, orders, the wallet's
 * transactions): for a person with some of each, the streamed document is the one built whole.
 */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { approvedVendor, checkout, product } from "../support/store.ts";
import { addressOfCaller } from "../support/wallet.ts";

const t = testApp();
const ROWS = 200_000;

test("[account] the export of a user with 200,000 notifications streams, completes and parses, the server's memory bounded", async () => {
  const me = await signInAs(t, "MEMBER");
  await t.deps.sql.begin(async (tx) => {
    // Set-based, events and counters off: the export reads the rows only.
    await tx`set local session_replication_role = replica`;
    await tx`
      insert into app.notifications (user_id, type, title, body, data, inbox, read_at, created_at)
      select ${me.user.id}, 'SYSTEM', 'Export row ' || i, 'A body with "quotes" and \\ ' || i,
             jsonb_build_object('i', i), i % 10 <> 0, case when i % 2 = 0 then now() end,
             now() - (${ROWS} - i) * interval '1 second'
      from generate_series(1, ${ROWS}) i`;
  });

  const file = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const out = await Deno.open(file, { write: true });
    const heapBefore = Deno.memoryUsage().heapUsed;
    let heapPeak = heapBefore;
    const started = performance.now();
    // The app itself (not the helper that validates the whole body): the pieces as they come.
    const response = await t.app.request("http://localhost/api/account/export", {
      headers: { authorization: `Bearer ${me.accessToken}` },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(response.headers.get("cache-control"), "no-store");
    let pieces = 0;
    let bytes = 0;
    let firstAt = 0;
    for await (const piece of response.body!) {
      if (!pieces) firstAt = performance.now() - started;
      pieces++;
      bytes += piece.byteLength;
      await out.write(piece);
      if (pieces % 20 === 0) heapPeak = Math.max(heapPeak, Deno.memoryUsage().heapUsed);
    }
    out.close();
    const total = performance.now() - started;
    const growth = heapPeak - heapBefore;
    console.log(
      `export: ${ROWS} notifications, ${(bytes / 1e6).toFixed(1)} MB in ${pieces} pieces, ` +
        `first after ${firstAt.toFixed(0)} ms, all in ${total.toFixed(0)} ms, ` +
        `heap growth ${(growth / 1e6).toFixed(1)} MB`,
    );
    assert.ok(pieces >= ROWS / 1000, `streamed in ${pieces} pieces`);
    assert.ok(firstAt < total / 2, "the first piece came long before the last");
    // Coarse (no forced GC here: garbage of the pieces counts too): built whole, the document
    // and its parsed objects alone are several times its size.
    assert.ok(
      growth < bytes * 2,
      `the heap grew ${(growth / 1e6).toFixed(1)} MB for a ${(bytes / 1e6).toFixed(1)} MB document`,
    );

    const document = JSON.parse(await Deno.readTextFile(file));
    assert.deepEqual(Object.keys(document).sort(), [
      "conversations",
      "exportedAt",
      "identities",
      "messages",
      "notifications",
      "orders",
      "preferences",
      "profile",
      "sessions",
      "vendor",
      "wallet",
    ]);
    assert.equal(document.profile.id, me.user.id);
    const notifications = document.notifications as {
      title: string;
      body: string;
      inbox: boolean;
      readAt: string | null;
      data: { i: number };
    }[];
    assert.equal(notifications.length, ROWS);
    assert.equal(new Set(notifications.map((n) => n.data.i)).size, ROWS, "every row once");
    assert.deepEqual(notifications[0].data, { i: 1 }, "oldest first");
    assert.equal(notifications[ROWS - 1].title, `Export row ${ROWS}`);
    assert.equal(notifications[9].inbox, false, "rows kept only for delivery are exported too");
    assert.equal(notifications[1].body, 'A body with "quotes" and \\ 2');
    const [event] = await t.deps.sql<{ parts: string[] }[]>`
      select details -> 'parts' as parts from app.security_events
      where type = 'account.exported' and user_id = ${me.user.id}`;
    assert.ok(event.parts.includes("notifications"), "recorded with every part");
  } finally {
    await Deno.remove(file).catch(() => {});
  }
});

test("[account] every streamed list (conversations, messages, notifications, orders, the wallet's transactions) comes out as the document built whole", async () => {
  const admin = await signInAs(t, "ADMIN");
  const me = await signInAs(t, "MEMBER");
  const other = await signInAs(t, "MEMBER");
  const talk = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: me.accessToken,
      body: { type: "direct", participantIds: [other.user.id] },
    }),
    [200, 201],
  );
  for (const content of ["first", "second"]) {
    await expectJson(
      await t.request("POST", `/api/conversations/${talk.id}/messages`, {
        token: me.accessToken,
        body: { content },
      }),
      201,
    );
  }
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 1200, stock: 5 });
  for (let i = 0; i < 2; i++) await checkout(t, me, [{ productId: item.id, quantity: 1 }]);
  await addressOfCaller(t, me.accessToken);
  await t.deps.sql`
    insert into app.wallet_transactions (wallet_id, user_id, direction, status, chain_id, token_kind,
      token_symbol, token_name, token_decimals, from_address, to_address, amount, hash, log_index,
      block_number, created_at)
    select w.id, w.user_id, 'in', 'confirmed', 31337, 'native', 'ETH', 'Ether', 18,
           '0x0000000000000000000000000000000000000001', w.address, 70 + i,
           '0x' || lpad(to_hex(i), 64, 'e'), -1, i, now() - (4 - i) * interval '1 minute'
    from app.wallets w, generate_series(1, 3) i where w.user_id = ${me.user.id}`;

  const response = await t.app.request("http://localhost/api/account/export", {
    headers: { authorization: `Bearer ${me.accessToken}` },
  });
  assert.equal(response.status, 200);
  const streamed = JSON.parse(await response.text());
  const [{ whole }] = await t.deps.sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${
      JSON.stringify({ sub: me.user.id, role: "authenticated" })
    }, true)`;
    return await tx<{ whole: Record<string, unknown> }[]>`select app.export_account() as whole`;
  });
  delete streamed.exportedAt;
  delete whole.exportedAt;
  assert.equal(streamed.messages.length, 2);
  assert.equal(streamed.orders.length, 2);
  assert.equal(streamed.conversations.length, 1);
  assert.equal(streamed.wallet.transactions.length, 3);
  assert.deepEqual(
    streamed.wallet.transactions.map((x: { amount: string }) => x.amount),
    ["71", "72", "73"],
    "oldest first",
  );
  assert.deepEqual(streamed, whole, "the streamed document is the one built whole");
});
