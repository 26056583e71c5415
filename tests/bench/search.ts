/**
 * `npm run bench -- search [--requests 100] [--warmup 10] [--messages 1000000]`: message search
 * (GET /api/messages/search) over 1,000,000 messages in 10,000 group conversations, for a user in
 * 200 of them (about 20,000 messages).
 *
 * - The data is made by set-based SQL (generate_series) as the superuser, with the triggers off
 *   (`session_replication_role = replica`: no events, digests or notifications for history), then
 *   ANALYZEd; it takes a few minutes, most of it the trigram index. Messages arrive interleaved
 *   across conversations (one conversation's messages are scattered over the table, as in life):
 *   80 % English-like text from a Zipf-like vocabulary of 8,000 words, 12 % Japanese and Chinese
 *   without spaces, 8 % German with umlauts.
 * - Four searches, each `--requests` times one after another (after `--warmup`), limit 20: a
 *   common word ("meeting", in about 5 % of the English messages), a rare word ("zanzibar",
 *   about 1 in 10,000 messages), a prefix ("deploy": deployment, deployed, deploys) and a CJK
 *   substring ("会議室", inside longer runs of Japanese).
 * - Over HTTP (the stack server in this process, bearer token) and, beside it, the same query
 *   function (`searchMessages` of functions/api/messaging/search.queries.ts) in a transaction as
 *   the same user, without HTTP (the pool of the same server).
 *
 * Target: p95 under 50 ms over HTTP for each of the four. A missed target exits 0, a broken run 1.
 */
import type { DbClaims } from "../../functions/_shared/db.ts";
import { withUser } from "../../functions/_shared/db.ts";
import { searchMessages } from "../../functions/api/messaging/search.queries.ts";
import {
  type Figure,
  figuresTable,
  finish,
  parseOptions,
  say,
  sourceVersion,
  waitForQuietMachine,
  withStack,
} from "./scaffold.ts";
import { signInByMagicLink, summarize, type Summary } from "./stats.ts";

const TARGET_P95_MS = 50;

const options = (args: string[]) =>
  parseOptions(args, import.meta.url, (a) => ({
    requests: a.whole("--requests", 100),
    warmup: a.whole("--warmup", 10, 0),
    messages: a.whole("--messages", 1_000_000, 10_000),
  }));

const USER = "b0000000-0000-4000-8000-000000000000";
const EMAIL = "searcher@bench.example";

/** Users, 10,000 groups with two members each, the searcher in every 50th, then the messages. */
export function dataSql(messages: number): string {
  const user = (n: string) => `('b0000000-0000-4000-8000-' || lpad((${n})::text, 12, '0'))::uuid`;
  const conv = (n: string) => `('c0000000-0000-4000-9000-' || lpad((${n})::text, 12, '0'))::uuid`;
  return `
set session_replication_role = replica;
insert into app.users (id, email, name, role)
select ${user("i")}, case when i = 0 then '${EMAIL}' else 'u' || i || '@bench.example' end,
  'User ' || i, 'MEMBER'
from generate_series(0, 1000) i;
insert into app.conversations (id, type, title, created_by, last_seq, created_at)
select ${conv("c")}, 'group', 'Group ' || c, ${user("1 + c % 1000")}, ${messages} / 10000 + 1,
  now() - interval '400 days'
from generate_series(0, 9999) c;
insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
select ${conv("c")}, ${user("u")}, now() - interval '400 days', now()
from generate_series(0, 9999) c, lateral (values (1 + c % 1000), (1 + (c * 7 + 3) % 1000)) v(u)
on conflict do nothing;
insert into app.conversation_participants (conversation_id, user_id, joined_at, last_activity_at)
select ${conv("c")}, '${USER}'::uuid, now() - interval '400 days', now()
from generate_series(0, 9999, 50) c;
insert into app.messages (conversation_id, seq, sender_id, content, created_at)
select ${conv("(i * 7919) % 10000")}, i / 10000 + 1, ${user("1 + ((i * 7919) % 10000) % 1000")},
  case
    when kind < 12 then (
      select string_agg((array['今日は','会議室で','東京タワーに','行きました','明日の','予定を',
        '確認して','ください','资料','我们在','北京','开会','讨论','项目','进度','。'])
        [1 + floor(random() * 16)::int], '')
      from generate_series(1, 4 + i % 5) g where g > 0 * i)
    when kind < 20 then (
      select string_agg((array['Die','Größe','der','Übersicht','Straße','Grüße','aus','München',
        'für','Äpfel','schön','Tschüss','morgen','Besprechung','wir','sehen','uns'])
        [1 + floor(random() * 17)::int], ' ')
      from generate_series(1, 5 + i % 6) g where g > 0 * i)
    else (
      select string_agg(w, ' ') from (
        select case
          when r < 0.006 then 'meeting'
          when r < 0.008 then (array['deployment','deployed','deploys'])[1 + floor(random() * 3)::int]
          when r < 0.0080125 then 'zanzibar'
          when r < 0.4 then (array['the','and','for','with','this','that','team','today','we',
            'will','please','check','thanks','ok','is','on','it','to','a','of'])
            [1 + floor(random() * 20)::int]
          else (select s[1 + k % 20] || s[1 + (k / 20) % 20] || s[1 + (k / 400) % 20]
                from (select floor(power(8000, random() + 0 * r))::int as k,
                      array['ka','lo','mi','ne','ru','sa','ti','vo','be','da','fe','gu','ha','jo',
                        'pi','ze','wa','yo','xu','qi'] as s) z)
        end as w
        from (select random() as r from generate_series(1, 6 + i % 9) g where g > 0 * i) rr
      ) words)
  end,
  now() - interval '365 days' + i * interval '31 seconds'
from generate_series(0::bigint, ${messages - 1}) i,
  lateral (select floor(random() * 100 + 0 * i)::int as kind) k;
set session_replication_role = origin;
analyze app.users;
analyze app.conversations;
analyze app.conversation_participants;
analyze app.messages;
`;
}

const SEARCHES = [
  { label: "common word", q: "meeting" },
  { label: "rare word", q: "zanzibar" },
  { label: "prefix", q: "deploy" },
  { label: "CJK substring", q: "会議室" },
];

const fmt = (s: Summary | null) =>
  s ? `p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms` : "no sample";

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  const problems: string[] = [];
  const figures: Figure[] = [];
  const counts: string[] = [];
  await withStack(async (stack) => {
    const started = Date.now();
    say(`building ${opts.messages.toLocaleString("en")} messages in 10,000 conversations`);
    await stack.cluster.cluster.psql(dataSql(opts.messages));
    say(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const bench = await stack.startServer({ pool: 10 });
    const session = await signInByMagicLink(bench.base, bench.deps.sql, EMAIL);
    const claims = JSON.parse(
      new TextDecoder().decode(
        Uint8Array.from(
          atob(session.accessToken.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")),
          (c) => c.charCodeAt(0),
        ),
      ),
    ) as DbClaims;
    const [{ total }] = await bench.deps.sql<{ total: number }[]>`
      select count(*)::int as total from app.messages m
      join app.conversation_participants p on p.conversation_id = m.conversation_id
      where p.user_id = ${USER}`;
    counts.push(`the searcher's conversations hold ${total.toLocaleString("en")} messages`);

    const http = async (q: string) => {
      const t0 = performance.now();
      const response = await fetch(
        `${bench.base}/api/messages/search?q=${encodeURIComponent(q)}&limit=20`,
        { headers: { authorization: `Bearer ${session.accessToken}` } },
      );
      const body = await response.json();
      const ms = performance.now() - t0;
      if (response.status !== 200) {
        throw new Error(`${q}: ${response.status} ${JSON.stringify(body)}`);
      }
      return { ms, items: body.items.length as number };
    };
    const direct = async (q: string) => {
      const t0 = performance.now();
      const page = await withUser(
        bench.deps.sql,
        claims,
        (tx) => searchMessages(tx, { terms: [q], cursor: null, limit: 20 }),
      );
      return { ms: performance.now() - t0, items: page.items.length };
    };

    await waitForQuietMachine({ maxWaitMs: 20_000 });
    for (const s of SEARCHES) {
      const [{ matches }] = await bench.deps.sql<{ matches: number }[]>`
        select count(*)::int as matches from app.messages m
        join app.conversation_participants p on p.conversation_id = m.conversation_id
        where p.user_id = ${USER} and lower(m.content) like ${"%" + s.q + "%"}`;
      for (let i = 0; i < opts.warmup; i++) {
        await http(s.q);
        await direct(s.q);
      }
      const overHttp: number[] = [];
      const bare: number[] = [];
      let shown = 0;
      for (let i = 0; i < opts.requests; i++) {
        const a = await http(s.q);
        overHttp.push(a.ms);
        shown = a.items;
        bare.push((await direct(s.q)).ms);
      }
      if (shown !== Math.min(20, matches)) {
        problems.push(`${s.label}: ${shown} results shown, ${matches} matches exist`);
      }
      const h = summarize(overHttp)!;
      figures.push({
        label: `${s.label} "${s.q}" (${matches.toLocaleString("en")} matches for the user)`,
        value: `HTTP ${fmt(h)}`,
        ceiling: `SQL ${fmt(summarize(bare))}`,
        target: `p95 < ${TARGET_P95_MS} ms`,
        ok: h.p95 < TARGET_P95_MS,
      });
    }
    if (bench.errors.count) {
      problems.push(`server errors: ${bench.errors.count} ${bench.errors.samples.join(" | ")}`);
    }
  }).catch((err) => {
    problems.push(`the run stopped: ${err instanceof Error ? err.stack : err}`);
  });
  console.log(`
Message search, ${
    opts.messages.toLocaleString("en")
  } messages in 10,000 conversations, a user in 200 of them (${
    counts.join("; ")
  }); ${opts.requests} searches each, one at a time, limit 20; ${sourceVersion()}
${figuresTable(figures, true)}`);
  finish(
    problems,
    `${figures.filter((f) => f.ok).length} of ${figures.length} targets met`,
  );
}
