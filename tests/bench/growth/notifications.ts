/**
 * The notifications' part of the growth benchmark (issue 30): `100,000 × scale` notifications
 * (1,000,000 at scale 10), the heavy user holding a tenth of them (100,000 at scale 10, 5 % of
 * them unread), the typical user about 300; a bulk batch to every user, planned and half
 * written. Operations: the inbox (first and deep page, search common / rare / missing, type,
 * unread only), read-all and mark-read, the bulk send's accept, one chunk's write and the
 * progress poll, and the account export of the heavy user (streamed).
 */
import type { Sql, Tx } from "../../../functions/_shared/db.ts";
import {
  batchProgress,
  createBatch,
  listNotifications,
  markAllRead,
  markRead,
} from "../../../functions/api/notifications/notifications.queries.ts";
import { streamOwnAccount } from "../../../functions/api/account/account.queries.ts";
import { BATCH_CHUNK_SIZE, READ_MARKS_BATCH } from "../../../functions/api/notifications/jobs.ts";
import type { GrowthContext, GrowthDomain, GrowthOperation } from "./types.ts";

const WORDS = [
  "order",
  "shipped",
  "wallet",
  "payment",
  "message",
  "reply",
  "update",
  "security",
  "vendor",
  "review",
  "invoice",
  "refund",
  "offer",
  "market",
  "profile",
  "signin",
];

/** The heavy user's share of every notification, and the typical user's inbox. */
const HEAVY_SHARE = 10;
const TYPICAL = 300;

async function seed(ctx: GrowthContext): Promise<void> {
  const { sql, scale, people } = ctx;
  const total = 100_000 * scale;
  const heavy = total / HEAVY_SHARE;
  const words = `array[${WORDS.map((w) => `'${w}'`).join(",")}]`;
  // Row i: the heavy user for i < heavy, the typical for the next TYPICAL, then everybody else
  // round the other users. One in 10,000 of the heavy user's rows holds the rare word "zephyr";
  // "update" is in one title of 16; 5 % of the heavy user's rows are unread, a third elsewhere.
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`set local maintenance_work_mem = '256MB'`;
    // The search index built once after the rows (as the migration defines it), not row by row.
    await tx`drop index if exists app_private.notification_search_words_idx`;
    await tx`create temporary table growth_people on commit drop as
      select t.id, (t.k - 1)::integer as k
      from unnest(${people.userIds}::uuid[]) with ordinality as t (id, k)`;
    await tx`create index on growth_people (k)`;
    await tx.unsafe(`
      insert into app.notifications (user_id, type, title, body, data, priority, inbox, read_at,
                                     created_at, updated_at)
      select case when i < ${heavy} then '${people.heavy}'::uuid
                  when i < ${heavy + TYPICAL} then '${people.typical}'::uuid
                  else p.id end,
             (array['OPPORTUNITY','MESSAGE','ENTITY','SYSTEM','WALLET'])[1 + (i % 5)]::app.notification_type
               as type,
             initcap((${words})[1 + (i % 16)]) || ' ' || (${words})[1 + ((i / 16) % 16)] || ' #' || i,
             'About your ' || (${words})[1 + ((i / 7) % 16)] || ' and ' || (${words})[1 + ((i / 3) % 16)]
               || case when i % 10000 = 4321 then ' zephyr' else '' end,
             jsonb_build_object('n', i), 'normal', i % 97 <> 0,
             case when i < ${heavy} and i % 20 = 0 then null
                  when i >= ${heavy} and i % 3 = 0 then null
                  else now() - (i % 1000) * interval '1 minute' end,
             now() - (i::float / ${total}) * interval '365 days',
             now() - (i::float / ${total}) * interval '365 days'
      from generate_series(0, ${total - 1}) i
      join growth_people p on p.k = 3 + (i % ${people.count - 3})`);
    // What the insert triggers would have written: the search rows and the counters.
    await tx`
      insert into app_private.notification_search (notification_id, user_id, type, created_at, words)
      select n.id, n.user_id, n.type, n.created_at, lower(n.title || ' ' || n.body)
      from app.notifications n where n.inbox
      -- Notifications written before this seed (another domain's, triggers on) have theirs.
      on conflict (notification_id) do nothing`;
    await tx`
      create index notification_search_words_idx on app_private.notification_search
        using gin (user_id, type, words extensions.gin_trgm_ops)
        with (gin_pending_list_limit = 512)`;
    await tx`
      insert into app.notification_counters (user_id, unread)
      select n.user_id, count(*)::integer from app.notifications n
      where n.inbox and n.read_at is null group by n.user_id
      on conflict (user_id) do update set unread = excluded.unread`;
  });
  // A bulk send to everyone, planned into chunks, the first half of them written.
  const [{ id }] = await sql<{ id: string }[]>`
    insert into app.notification_batches (created_by, audience, type, title, body, channels,
                                          recipients, created_at)
    values (${people.admin}, '{"all": true}', 'SYSTEM', 'Growth batch', 'To everyone',
            array['inApp'], ${people.count}, now())
    returning id`;
  await sql`select app_private.write_notification_batch(${id}::uuid, ${BATCH_CHUNK_SIZE})`;
  const [{ chunks }] = await sql<{ chunks: number }[]>`
    select chunks from app.notification_batches where id = ${id}`;
  for (let chunk = 0; chunk < Math.floor(chunks / 2); chunk++) {
    await sql`select app_private.write_batch_chunk(${id}::uuid, ${chunk})`;
  }
  await sql`delete from app_private.jobs where kind like 'notifications.batch%'`;
  for (
    const t of [
      "app.notifications",
      "app.notification_counters",
      "app_private.notification_search",
      "app.notification_batches",
      "app_private.notification_batch_chunks",
    ]
  ) await sql.unsafe(`analyze ${t}`);
}

async function operations(ctx: GrowthContext): Promise<GrowthOperation[]> {
  const { sql, people } = ctx;
  const caller = (userId: string) => ({
    sessionId: ctx.claims(userId).session_id,
    userId,
  });
  const list = (
    tx: Tx,
    userId: string,
    q: Partial<Parameters<typeof listNotifications>[2]> = {},
  ) =>
    listNotifications(tx as unknown as Sql, caller(userId), {
      after: null,
      limit: 20,
      ...q,
    });
  const needItems = (page: { items: unknown[] }, what: string) => {
    if (!page.items.length) throw new Error(`${what}: an empty page`);
    return page;
  };
  // The heavy user's row 60 % down the inbox: a deep page's cursor.
  const [deep] = await sql<{ created_at: string; id: string }[]>`
    select created_at::text, id from app.notifications
    where user_id = ${people.heavy} and inbox
    order by created_at desc, id desc offset (select count(*) * 6 / 10 from app.notifications
                                              where user_id = ${people.heavy} and inbox) limit 1`;
  const [{ heavyUnread }] = await sql<{ heavyUnread: number }[]>`
    select count(*)::int as "heavyUnread" from app.notifications
    where user_id = ${people.heavy} and inbox and read_at is null`;
  // The job's batch, or every unread row when there are fewer (500 at scale 1).
  const jobBatch = Math.min(READ_MARKS_BATCH, heavyUnread);
  const [unreadOne] = await sql<{ id: string }[]>`
    select id from app.notifications where user_id = ${people.heavy} and inbox and read_at is null
    order by created_at desc limit 1`;
  const [batch] = await sql<{ id: string; chunks: number; recipients: number }[]>`
    select id, chunks, recipients from app.notification_batches where title = 'Growth batch'
    order by created_at desc limit 1`;
  // Every element the export streams (its lists: whatever the domains loaded with this one hold).
  const [{ exported }] = await sql<{ exported: number }[]>`
    select ((select count(*) from app.notifications where user_id = ${people.heavy})
          + (select count(*) from app.messages where sender_id = ${people.heavy})
          + (select count(*) from app.conversation_participants where user_id = ${people.heavy})
          + (select count(*) from app.orders where buyer_id = ${people.heavy})
          + (select count(*) from app.wallet_transactions where user_id = ${people.heavy}))::int
           as exported`;
  const [open] = await sql<{ chunk: number }[]>`
    select chunk from app_private.notification_batch_chunks
    where batch_id = ${batch.id} and written_at is null order by chunk limit 1`;
  const ops: GrowthOperation[] = [];
  // The inbox's one statement checks the session itself and sets the role and claims for its own
  // part (app_private.inbox_page_for_session): it runs with the pool's role, as the API runs it.
  const page = (name: string, as: string, q: Parameters<typeof list>[2], empty = false) =>
    ops.push({
      name,
      endpoint: "GET /api/notifications",
      as: null,
      kind: "page",
      run: async (tx) => {
        const got = await list(tx, as, q);
        return empty ? got : needItems(got, name);
      },
    });
  page("inbox, heavy user, first page", people.heavy, {});
  page("inbox, heavy user, deep page (60 %)", people.heavy, { after: [deep.created_at, deep.id] });
  page("inbox, typical user, first page", people.typical, {});
  page("inbox search, heavy user, common term", people.heavy, { search: "update" });
  page("inbox search, heavy user, rare term", people.heavy, { search: "zephyr" });
  page("inbox search, heavy user, no match", people.heavy, { search: "nothing-like-this" }, true);
  page(
    "inbox search, typical user, no match",
    people.typical,
    { search: "nothing-like-this" },
    true,
  );
  page("inbox, heavy user, type WALLET", people.heavy, { type: "WALLET" });
  page("inbox, heavy user, unread only", people.heavy, { unread: true });
  ops.push({
    name: "mark one read, heavy user",
    endpoint: "PUT /api/notifications/:id/read",
    as: people.heavy,
    kind: "page",
    run: (tx) => markRead(tx, unreadOne.id),
  });
  // Read-all costs the same whatever the unread: beyond 500 it writes one mark
  // (app.mark_all_notifications_read); the rows are written down by a job, measured next.
  ops.push({
    name: "read-all, heavy user (5 % of the inbox unread)",
    endpoint: "PUT /api/notifications/read-all",
    as: people.heavy,
    kind: "page",
    run: async (tx) => {
      const done = await markAllRead(tx);
      if (!done.updated || done.unreadCount !== 0) throw new Error("read-all read nothing");
      return done;
    },
  });
  ops.push({
    name: "read-all's job: the mark, then a batch of its rows written down",
    endpoint: "job notifications.read_marks",
    as: null,
    kind: "work",
    units: jobBatch,
    run: async (tx) => {
      await tx`select set_config('request.jwt.claims', ${
        JSON.stringify({ sub: people.heavy, role: "authenticated" })
      }, true)`;
      const [{ updated }] = await tx<{ updated: number }[]>`
        select updated from app.mark_all_notifications_read(0)`;
      if (updated < jobBatch) throw new Error(`only ${updated} unread: no full batch`);
      // A full batch leaves the mark for the next step (which finds the rest, or nothing, and
      // drops it). pgTAP 211 checks what the steps write.
      const [{ more }] = await tx<{ more: boolean }[]>`
        select app_private.apply_read_marks(${people.heavy}::uuid, ${jobBatch}) as more`;
      if (!more) throw new Error("a full batch dropped the mark");
      return jobBatch;
    },
  });
  ops.push({
    name: "bulk send to everyone: accept",
    endpoint: "POST /api/notifications/bulk",
    as: people.admin,
    kind: "work",
    run: (tx) =>
      createBatch(tx, {
        audience: { all: true },
        notification: { type: "SYSTEM", title: "Accepted", body: "", data: {} },
        channels: ["inApp"],
        idempotencyKey: null,
        requestHash: null,
      }),
  });
  ops.push({
    name: "bulk send to everyone: plan the chunks",
    endpoint: "job notifications.batch",
    as: null,
    // Reads the audience's ids once (a row per chunk): its work is the audience.
    kind: "work",
    units: batch.recipients,
    run: async (tx) => {
      await tx`update app.notification_batches set status = 'queued' where id = ${batch.id}`;
      await tx`delete from app_private.notification_batch_chunks where batch_id = ${batch.id}`;
      const [{ n }] = await tx<{ n: number }[]>`
        select app_private.write_notification_batch(${batch.id}::uuid, ${BATCH_CHUNK_SIZE}) as n`;
      if (n !== batch.chunks) throw new Error(`planned ${n} chunks, not ${batch.chunks}`);
      return n;
    },
  });
  ops.push({
    name: `bulk send to everyone: write one chunk (${BATCH_CHUNK_SIZE} recipients)`,
    endpoint: "job notifications.batch_chunk",
    as: null,
    // A job's step with a fixed amount of work (a chunk's recipients) at both sizes.
    kind: "work",
    units: BATCH_CHUNK_SIZE,
    run: async (tx) => {
      const [{ n }] = await tx<{ n: number }[]>`
        select app_private.write_batch_chunk(${batch.id}::uuid, ${open.chunk}) as n`;
      if (!n) throw new Error("the chunk wrote nothing");
      return n;
    },
  });
  ops.push({
    name: "bulk send to everyone: progress poll",
    endpoint: "GET /api/notifications/bulk/:id",
    as: people.admin,
    kind: "page",
    run: async (tx) => {
      const p = await batchProgress(tx, batch.id);
      if (!p.created) throw new Error("no progress");
      return p;
    },
  });
  ops.push({
    name: "account export, heavy user (streamed)",
    endpoint: "GET /api/account/export",
    as: people.heavy,
    // Streamed: its cost follows the person's data (every element of its lists: notifications,
    // messages, conversations, orders, wallet transactions), and it must not fail.
    kind: "work",
    units: exported,
    run: async (tx) => {
      let bytes = 0;
      const counts = await streamOwnAccount(tx, { ip: null, userAgent: null }, () => {}, (text) => {
        bytes += text.length;
        return Promise.resolve();
      });
      const n = Object.values(counts).reduce((a, b) => a + b, 0);
      if (n !== exported) throw new Error(`exported ${n} elements of ${exported}`);
      return { ...counts, bytes };
    },
  });
  return ops;
}

export const growth: GrowthDomain = { domain: "notifications", seed, operations };
