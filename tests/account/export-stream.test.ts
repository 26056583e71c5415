/**
 * GET /api/account/export at any size (issue 30): a user with 200,000 notifications gets the
 * whole document, streamed (many pieces, the first long before the last), that parses with
 * every notification once, while the API process's heap stays far below the document's size.
 * Built whole, the document of a user with 1,000,000 went past jsonb's 256 MB limit.
 */
import assert from "node:assert/strict";
import { signInAs, test, testApp } from "../support/helpers.ts";

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
