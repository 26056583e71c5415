/**
 * Messaging in the growth benchmark (issue 30): conversations and messages at `scale` (the
 * issue's large size divided by 10 at scale 10): 100,000 × scale messages; the heavy user in
 * 1,000 × scale conversations (4 in 5 direct, 1 in 5 groups of five with a title), the typical
 * user in 6; a "Town hall" group of 50 with 10,000 × scale messages (the "long group" whose read
 * marks the table measures); the rest in direct conversations of 10 messages between other people.
 * 1 message in 50 is a tombstone. Contents mix a common word (`meeting`, 1 in 10), a CJK phrase
 * (`会議室`, 1 in 10) and a rare one (`zanzibar`, about 1 in 10,000).
 *
 * Triggers are off while it fills (`session_replication_role = replica`: they derive sequence
 * numbers, counters, events and notification digests), so it sets what they maintain itself:
 * each conversation's last_seq and activity, each participant's read mark, activity copy and
 * unread count (by today's definition, counted once).
 */
import type { Tx } from "../../../functions/_shared/db.ts";
import { listConversations } from "../../../functions/api/messaging/conversations.queries.ts";
import {
  listMessages,
  markRead,
  markUnread,
} from "../../../functions/api/messaging/messages.queries.ts";
import { searchMessages, searchTerms } from "../../../functions/api/messaging/search.queries.ts";
import { refusedTopics } from "../../../functions/api/realtime/realtime.queries.ts";
import { personId } from "./people.ts";
import type { GrowthContext, GrowthDomain, GrowthOperation } from "./types.ts";

/** The SQL expression of conversation number `n`'s id. */
const conversationId = (n: string) =>
  `('c0000000-0000-4000-8000-' || lpad((${n})::text, 12, '0'))::uuid`;

function sizes(scale: number, count: number) {
  const heavy = 1_000 * scale;
  const hall = heavy + 6;
  const background = 7_000 * scale;
  if (4 + background >= count) throw new Error("too few people for the background pairs");
  return {
    heavy, // conversations 0 .. heavy-1: the heavy user's
    typical: heavy, // heavy .. heavy+5: the typical user's six direct ones
    hall, // the Town hall group
    hallMessages: 10_000 * scale,
    backgroundFrom: hall + 1,
    background,
  };
}

async function seed(ctx: GrowthContext) {
  const { sql, scale } = ctx;
  const count = ctx.people.count;
  const s = sizes(scale, count);
  const heavyUser = personId("0");
  const typicalUser = personId("1");
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    // Conversations: the heavy user's (groups every fifth), the typical user's, the hall, the rest.
    await tx.unsafe(`
      insert into app.conversations (id, type, title, created_by, direct_key, created_at, last_activity_at)
      select ${conversationId("n")}, k.type, k.title, ${heavyUser},
             case when k.type = 'direct' then least(${heavyUser}, ${
      personId("3 + n")
    })::text || ':' || greatest(${heavyUser}, ${personId("3 + n")})::text end,
             now() - interval '400 days', now() - (n::float / ${s.heavy}) * interval '300 days'
      from generate_series(0, ${s.heavy - 1}) n,
      lateral (select case when n % 5 = 0 then 'group' else 'direct' end::app.conversation_type as type,
                      case when n % 5 = 0 then 'Group ' || n || ' of the heavy user' end as title) k;
      insert into app.conversations (id, type, created_by, direct_key, created_at, last_activity_at)
      select ${conversationId(`${s.typical} + k`)}, 'direct', ${typicalUser},
             least(${typicalUser}, ${personId("3 + k")})::text || ':' || greatest(${typicalUser}, ${
      personId("3 + k")
    })::text,
             now() - interval '400 days', now() - k * interval '1 day'
      from generate_series(0, 5) k;
      insert into app.conversations (id, type, title, created_by, created_at, last_activity_at)
      values (${conversationId(String(s.hall))}, 'group', 'Town hall', ${personId("100")},
              now() - interval '400 days', now() - interval '2 hours');
      insert into app.conversations (id, type, created_by, direct_key, created_at, last_activity_at)
      select ${conversationId(`${s.backgroundFrom} + j`)}, 'direct', ${personId("3 + j")},
             ${personId("3 + j")}::text || ':' || ${personId("4 + j")}::text,
             now() - interval '400 days', now() - (j::float / ${s.background}) * interval '360 days'
      from generate_series(0, ${s.background - 1}) j`);
    // Participants (read marks come after the messages).
    await tx.unsafe(`
      insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
      select ${conversationId("n")}, ${heavyUser}, now() - interval '400 days', now()
      from generate_series(0, ${s.heavy - 1}) n;
      insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
      select ${conversationId("n")}, ${personId("3 + n")}, now() - interval '400 days', now()
      from generate_series(0, ${s.heavy - 1}) n where n % 5 <> 0;
      insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
      select distinct ${conversationId("n")},
             ${
      personId(`3 + ((n * 13 + j * 1009) % ${count - 3})`)
    }, now() - interval '400 days', now()
      from generate_series(0, ${s.heavy - 1}) n, generate_series(1, 4) j where n % 5 = 0;
      insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
      select ${conversationId(`${s.typical} + k`)}, u, now() - interval '400 days', now()
      from generate_series(0, 5) k, lateral (values (${typicalUser}), (${personId("3 + k")})) x(u);
      insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
      select ${conversationId(String(s.hall))}, u, now() - interval '400 days', now()
      from (select ${heavyUser} as u union all select ${typicalUser}
            union all select ${personId("100 + i")} from generate_series(0, 47) i) x;
      insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
      select ${conversationId(`${s.backgroundFrom} + j`)}, u, now() - interval '400 days', now()
      from generate_series(0, ${s.background - 1}) j,
      lateral (values (${personId("3 + j")}), (${personId("4 + j")})) x(u)`);
    // Messages: the trigram index is built once after the rows, not row by row.
    const [{ def }] = await tx<{ def: string }[]>`
      select pg_get_indexdef('app.messages_content_trgm'::regclass) as def`;
    await tx`drop index app.messages_content_trgm`;
    await tx.unsafe(`
      create temporary table growth_counts (conversation_id uuid primary key, n int) on commit drop;
      insert into growth_counts
      select ${conversationId("n")}, 20 from generate_series(0, ${s.heavy - 1}) n
      union all select ${conversationId(`${s.typical} + k`)}, 10 from generate_series(0, 5) k
      union all select ${conversationId(String(s.hall))}, ${s.hallMessages}
      union all select ${conversationId(`${s.backgroundFrom} + j`)}, 10
        from generate_series(0, ${s.background - 1}) j;
      create temporary table growth_members on commit drop as
      select conversation_id, array_agg(user_id order by user_id) as members
      from app.conversation_participants group by conversation_id;
      insert into app.messages (conversation_id, seq, sender_id, content, created_at, deleted_at)
      select g.conversation_id, q.seq,
             mm.members[1 + (q.seq * 7 % cardinality(mm.members))],
             case when q.seq % 50 = 0 then '' else
               'message ' || q.seq || ' ' ||
               (array['meeting at noon', 'see you tomorrow', 'the report is ready',
                      '会議室を予約しました', 'shipping update', 'call me back', 'thanks a lot',
                      'good morning team', 'lunch later?', 'new photos'])[1 + (hashint4(q.seq::int # x.h) & 1023) % 10]
               || case when (hashint4(q.seq::int # x.h) & 16383) = 7 then ' zanzibar trip' else '' end
             end,
             c.last_activity_at - (g.n - q.seq) * interval '1 minute',
             case when q.seq % 50 = 0 then c.last_activity_at - (g.n - q.seq) * interval '1 minute' end
      from growth_counts g
      join app.conversations c on c.id = g.conversation_id
      join growth_members mm on mm.conversation_id = g.conversation_id
      cross join lateral (select hashtext(g.conversation_id::text) as h) x
      cross join lateral generate_series(1, g.n) q(seq);
      update app.conversations c set last_seq = g.n from growth_counts g where g.conversation_id = c.id;
      select app_private.recount_message_buckets()`);
    await tx.unsafe(def);
    // Read marks: the heavy user has 0 to 3 unread per conversation and is half-way through the
    // hall (a page short of its middle); the typical user never read the hall; others are up to date.
    await tx.unsafe(`
      update app.conversation_participants p
      set last_read_seq = case
            when p.conversation_id = ${conversationId(String(s.hall))} then
              case when p.user_id = ${heavyUser} then ${s.hallMessages / 2 - 50}
                   when p.user_id = ${typicalUser} then 0
                   else (hashtext(p.user_id::text) & 65535) % ${s.hallMessages} end
            when p.user_id = ${heavyUser} then c.last_seq - (hashtext(c.id::text) & 3)
            else c.last_seq end,
          last_activity_at = c.last_activity_at
      from app.conversations c where c.id = p.conversation_id;
      update app.conversation_participants p set last_read_message_id = m.id
      from app.messages m where m.conversation_id = p.conversation_id and m.seq = p.last_read_seq;
      update app.conversation_participants p set unread_count = u.n
      from (select p2.conversation_id, p2.user_id, count(m.id)::int as n
            from app.conversation_participants p2
            join app.messages m on m.conversation_id = p2.conversation_id and m.seq > p2.last_read_seq
              and m.deleted_at is null and m.sender_id is distinct from p2.user_id
            group by 1, 2) u
      where u.conversation_id = p.conversation_id and u.user_id = p.user_id`);
  });
  for (const table of ["conversations", "conversation_participants", "messages"]) {
    await sql.unsafe(`analyze app.${table}`);
  }
}

/** A conversation id of the seed, by number. */
async function conversationOf(ctx: GrowthContext, n: number): Promise<string> {
  const [row] = await ctx.sql.unsafe<{ id: string }[]>(`select ${conversationId(String(n))} as id`);
  return row.id;
}

function expect(ok: boolean, what: string) {
  if (!ok) throw new Error(`messaging growth: ${what}`);
}

async function operations(ctx: GrowthContext): Promise<GrowthOperation[]> {
  const { sql, people } = ctx;
  const s = sizes(ctx.scale, people.count);
  const hall = await conversationOf(ctx, s.hall);
  const heavyOwn = await conversationOf(ctx, 1);
  const notHeavys = await conversationOf(ctx, s.backgroundFrom + 5);
  const [deep] = await sql<{ time: string; id: string }[]>`
    select last_activity_at::text as time, conversation_id as id
    from app.conversation_participants where user_id = ${people.heavy}
    order by last_activity_at desc, conversation_id desc offset ${
    Math.floor(s.heavy * 0.8)
  } limit 1`;
  const hallAt = async (seq: number) => {
    const [row] = await sql<{ id: string }[]>`
      select id from app.messages where conversation_id = ${hall} and seq = ${seq}`;
    return row.id;
  };
  const mid = s.hallMessages / 2;
  const midMessage = await hallAt(mid);
  const pageBack = await hallAt(mid - 150);
  const list = (who: string, name: string, opts: Parameters<typeof listConversations>[1]) => ({
    name,
    endpoint: "GET /api/conversations",
    as: who,
    kind: "page" as const,
    run: async (tx: Tx) => {
      const page = await listConversations(tx, opts);
      return page;
    },
  });
  const listed = (name: string, min: number, opts: Parameters<typeof listConversations>[1]) => ({
    ...list(people.heavy, name, opts),
    run: async (tx: Tx) => {
      const page = await listConversations(tx, opts);
      expect(page.items.length >= min, `${name}: ${page.items.length} rows`);
      return page;
    },
  });
  const search = (name: string, q: string, min: number) => ({
    name,
    endpoint: "GET /api/messages/search",
    as: people.heavy,
    kind: "page" as const,
    run: async (tx: Tx) => {
      const page = await searchMessages(tx, { terms: searchTerms(q), cursor: null, limit: 50 });
      expect(page.items.length >= min, `${name}: ${page.items.length} rows`);
      return page;
    },
  });
  return [
    listed("conversation list, heavy user, first page", 50, { limit: 50 }),
    listed("conversation list, heavy user, deep page", 50, {
      limit: 50,
      after: [deep.time, deep.id],
    }),
    {
      ...list(people.typical, "conversation list, typical user", { limit: 50 }),
      run: async (tx: Tx) => {
        const page = await listConversations(tx, { limit: 50 });
        expect(page.items.length === 7, `typical list: ${page.items.length} rows`);
        return page;
      },
    },
    {
      ...list(people.heavy, "conversation search, heavy user, no match", { limit: 50 }),
      run: async (tx: Tx) => {
        const page = await listConversations(tx, { limit: 50, search: "qxzqxz" });
        expect(page.items.length === 0, "no match found something");
        return page;
      },
    },
    listed("conversation search, heavy user, many (a common name)", 50, {
      limit: 50,
      search: "person",
    }),
    listed("conversation search, heavy user, some (a rarer name)", 1, {
      limit: 50,
      search: "person 12",
    }),
    listed("conversation search, heavy user, group titles", 50, { limit: 50, search: "group" }),
    {
      name: "mark read, a page further, mid-way in the long group",
      endpoint: "PUT /api/messages/:id/read",
      as: people.heavy,
      kind: "page",
      run: async (tx: Tx) => {
        const mark = await markRead(tx, midMessage);
        expect(mark.unreadCount > 0, "nothing unread after the middle");
        return mark;
      },
    },
    {
      name: "mark read mid-way in the long group, from no mark",
      endpoint: "PUT /api/messages/:id/read",
      as: people.typical,
      kind: "page",
      run: async (tx: Tx) => await markRead(tx, midMessage),
    },
    {
      name: "mark unread, a page back, mid-way in the long group",
      endpoint: "PUT /api/conversations/:id/unread",
      as: people.heavy,
      kind: "page",
      run: async (tx: Tx) => await markUnread(tx, hall, pageBack),
    },
    {
      name: "messages of the long group, first page",
      endpoint: "GET /api/conversations/:id/messages",
      as: people.heavy,
      kind: "page",
      run: async (tx: Tx) => {
        const page = await listMessages(tx, hall, { cursor: null, limit: 50 });
        expect(page.items.length === 50, "short message page");
        return page;
      },
    },
    {
      name: "messages of the long group, mid-way page",
      endpoint: "GET /api/conversations/:id/messages",
      as: people.heavy,
      kind: "page",
      run: async (tx: Tx) => await listMessages(tx, hall, { cursor: ["before", mid], limit: 50 }),
    },
    {
      name: "topic check of an SSE stream, heavy user (3 topics)",
      endpoint: "GET /api/realtime/events",
      as: people.heavy,
      kind: "page",
      run: async (tx: Tx) => {
        const refused = await refusedTopics(tx, [
          `user:${people.heavy}`,
          `conversation:${heavyOwn}`,
          `conversation:${notHeavys}`,
        ]);
        expect(
          refused.length === 1 && refused[0] === `conversation:${notHeavys}`,
          `topic check refused ${refused.join(", ")}`,
        );
        return refused;
      },
    },
    search("message search, heavy user, common word", "meeting", 50),
    search("message search, heavy user, prefix", "meet", 50),
    search("message search, heavy user, CJK", "会議室", 50),
    search("message search, heavy user, rare word", "zanzibar", 0),
    search("message search, heavy user, no match", "qxzqxz", 0),
  ];
}

export const growth: GrowthDomain = { domain: "messaging", seed, operations };
