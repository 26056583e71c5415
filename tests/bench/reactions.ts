/**
 * Reactions and threads (`npm run bench -- reactions`): the issue's two figures.
 *
 * 1. One hot message, 100 people in its group, reacting at a paced 1,000 requests a second for
 *    `--seconds` (default 10): each person toggles one of five emoji (PUT when they have it not,
 *    DELETE when they do), one request at a time each, so the final state is known exactly. The
 *    figures: the rate reached, latency, and whether the counts the API shows at the end equal
 *    the expected ones (and the last `message.reactions` event's). The server applies the
 *    reactions to one message in batches (functions/api/messaging/reaction-batches.ts), one
 *    event per batch: the events must never go back (between consecutive events no more changes
 *    than were made) and the last must hold the final counts. The ceilings, without HTTP from
 *    the same 100 people: the same batches, and one transaction per change
 *    (`app_private.set_reaction_as`, the path before batches).
 * 2. A thread of 10,000 replies: GET /api/messages/:id/thread at its start (no cursor) and at its
 *    end (the cursor of the last page), 200 sequential pages of 50 each; the two p50s should be
 *    the same (the keyset on (thread_id, seq)).
 *
 * Options: --seconds N (default 10), --rate N (default 1000).
 */
import {
  BenchArgs,
  figuresTable,
  finish,
  parseOptions,
  say,
  sleep,
  sourceVersion,
  waitForQuietMachine,
  withStack,
} from "./scaffold.ts";
import {
  cpuTable,
  cpuUse,
  int,
  ms,
  postgresTicks,
  sampleCpu,
  signUpByMagicLink,
  summarize,
  ticksOf,
  UNTHROTTLED_ENV,
} from "./stats.ts";
import { encodeCursor } from "../../functions/api/core/openapi.ts";
import { ReactionBatches } from "../../functions/api/messaging/reaction-batches.ts";

type Counts = { emoji: string; count: number }[];

/** How many single changes lead from one set of counts to another. */
function distance(a: Counts, b: Counts): number {
  const counts = new Map<string, number>();
  for (const r of a) counts.set(r.emoji, r.count);
  for (const r of b) counts.set(r.emoji, (counts.get(r.emoji) ?? 0) - r.count);
  return [...counts.values()].reduce((n, d) => n + Math.abs(d), 0);
}

const EMOJI = ["👍", "❤️", "😂", "🎉", "🔥"];
const PEOPLE = 100;
const REPLIES = 10_000;

export async function main(args: string[]): Promise<void> {
  const options = parseOptions(args, import.meta.url, (a: BenchArgs) => ({
    seconds: a.whole("--seconds", 10),
    rate: a.whole("--rate", 1000),
  }));
  await withStack(async (stack) => {
    const bench = await stack.startServer({ pool: 20, env: UNTHROTTLED_ENV });
    const { base } = bench;
    const sql = bench.deps.sql;
    say(`signing up ${PEOPLE} people`);
    const people: Awaited<ReturnType<typeof signUpByMagicLink>>[] = [];
    for (let i = 0; i < PEOPLE; i++) {
      people.push(
        await signUpByMagicLink(base, sql, `react${i}@bench.test`, `Reactor ${i}`, "MEMBER"),
      );
    }
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body ? { "content-type": "application/json" } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = await response.json();
      return { status: response.status, json };
    };
    const owner = people[0];
    const group = await call(owner.accessToken, "POST", "/api/conversations", {
      type: "group",
      title: "Hot message",
      participantIds: people.slice(1).map((p) => p.user.id),
    });
    if (group.status !== 201) {
      throw new Error(`group: ${group.status} ${JSON.stringify(group.json)}`);
    }
    const conversationId = group.json.id;
    const hot = await call(
      owner.accessToken,
      "POST",
      `/api/conversations/${conversationId}/messages`,
      {
        content: "react to this",
      },
    );
    const hotId = hot.json.id;

    // 1. Reactions on one hot message ------------------------------------------------------------
    await waitForQuietMachine();
    say(`reacting: ${options.rate}/s from ${PEOPLE} people for ${options.seconds} s`);
    const mine = people.map(() => new Set<string>());
    const latencies: number[] = [];
    let errors = 0;
    const errorSamples: string[] = [];
    const perPersonGap = (1000 * PEOPLE) / options.rate;
    const consumers = {
      server: () => ticksOf("self"),
      postgres: () => postgresTicks(bench.postmasterPid),
    };
    const cpuBefore = sampleCpu(consumers);
    const started = performance.now();
    const endAt = started + options.seconds * 1000;
    await Promise.all(people.map(async (p, i) => {
      let next = started + (perPersonGap * i) / PEOPLE;
      while (next < endAt) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        const emoji = EMOJI[Math.floor(Math.random() * EMOJI.length)];
        const present = !mine[i].has(emoji);
        const t0 = performance.now();
        const answer = await call(
          p.accessToken,
          present ? "PUT" : "DELETE",
          `/api/messages/${hotId}/reactions/${encodeURIComponent(emoji)}`,
        );
        latencies.push(performance.now() - t0);
        if (answer.status === 200) {
          if (present) mine[i].add(emoji);
          else mine[i].delete(emoji);
        } else {
          errors++;
          if (errorSamples.length < 3) {
            errorSamples.push(`${answer.status} ${JSON.stringify(answer.json)}`);
          }
        }
        next += perPersonGap;
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    const httpCpu = cpuUse(cpuBefore, sampleCpu(consumers));
    const rate = latencies.length / elapsed;
    const lat = summarize(latencies)!;
    const expected = EMOJI.map((e) => ({ emoji: e, count: mine.filter((s) => s.has(e)).length }))
      .filter((r) => r.count > 0);
    const page = await call(
      owner.accessToken,
      "GET",
      `/api/conversations/${conversationId}/messages`,
    );
    const shown = page.json.items.find((m: { id: string }) => m.id === hotId).reactions
      .map((r: { emoji: string; count: number }) => ({ emoji: r.emoji, count: r.count }));
    const [event] = await sql<{ payload: { reactions: { emoji: string; count: number }[] } }[]>`
      select payload from app.events where event = 'message.reactions'
        and payload ->> 'messageId' = ${hotId} order by xid desc, id desc limit 1`;
    // Compared as { emoji, count } pairs: an event's objects come from jsonb, whose keys are in
    // jsonb's order (count, emoji), not the order they were written in.
    const sorted = (rs: { emoji: string; count: number }[]) =>
      JSON.stringify(
        rs.map((r) => ({ emoji: r.emoji, count: r.count }))
          .sort((a, b) => a.emoji.localeCompare(b.emoji)),
      );
    const exact = sorted(shown) === sorted(expected);
    const eventExact = sorted(event?.payload.reactions ?? []) === sorted(expected);
    // The events in the clients' order: one per batch, so an event may be several changes after
    // the one before it, but the steps between them never add up to more changes than were made
    // (an event behind an earlier one would take counts back, and the step forward again counts
    // twice).
    const history = await sql<
      { xid: string; id: string; created_at: Date; payload: { reactions: Counts } }[]
    >`
      select e.xid::text as xid, e.id::text as id, e.created_at, e.payload from app.events e
      where e.event = 'message.reactions' and e.payload ->> 'messageId' = ${hotId}
      order by e.xid, e.id`; // the columns, not the text aliases (as text, 12467 < 2322)
    let steps = 0;
    for (let i = 0; i < history.length; i++) {
      steps += distance(i ? history[i - 1].payload.reactions : [], history[i].payload.reactions);
    }
    const changes = latencies.length - errors; // every request toggles: each 200 is one change
    const inStep = steps <= changes;

    // The ceilings, without HTTP, from the same people on the server's own pool, as fast as they
    // go, each on a message of its own: the route's batches (a coalescer of their own on this
    // pool), and one statement per change (app_private.set_reaction_as, before batches).
    const ceiling = async (
      react: (claims: string, id: string, emoji: string, on: boolean) => Promise<unknown>,
    ) => {
      const [{ id }] = await sql<{ id: string }[]>`
        insert into app.messages (conversation_id, sender_id, content)
        values (${conversationId}, ${owner.user.id}, 'the ceiling') returning id`;
      const held = people.map(() => new Set<string>());
      let calls = 0;
      const cpuBefore = sampleCpu(consumers);
      const started = performance.now();
      const end = started + Math.min(options.seconds, 5) * 1000;
      await Promise.all(people.map(async (p, i) => {
        const claims = JSON.stringify({ sub: p.user.id, role: "authenticated" });
        while (performance.now() < end) {
          const emoji = EMOJI[Math.floor(Math.random() * EMOJI.length)];
          const present = !held[i].has(emoji);
          await react(claims, id, emoji, present);
          if (present) held[i].add(emoji);
          else held[i].delete(emoji);
          calls++;
        }
      }));
      const rate = calls / ((performance.now() - started) / 1000);
      return { rate, cpu: cpuUse(cpuBefore, sampleCpu(consumers)) };
    };
    await waitForQuietMachine();
    const batches = new ReactionBatches(sql);
    const batched = await ceiling((claims, id, emoji, present) =>
      batches.set(JSON.parse(claims), { messageId: id, emoji, present })
    );
    const single = await ceiling((claims, id, emoji, present) =>
      sql`select app_private.set_reaction_as(${claims}, ${id}, ${emoji}, ${present})`
    );

    // 2. A thread of 10,000 replies --------------------------------------------------------------
    // In a group of three, not the hot message's 100: every reply's insert updates each
    // participant's unread counter, so 10,000 replies among 100 people are a million row updates
    // (the phase ran for more than 9 minutes), among 3 a few seconds. Paging is the same.
    say(`a thread of ${int(REPLIES)} replies`);
    const threadGroup = await call(owner.accessToken, "POST", "/api/conversations", {
      type: "group",
      title: "Long thread",
      participantIds: [people[1].user.id, people[2].user.id],
    });
    if (threadGroup.status !== 201) {
      throw new Error(`thread group: ${threadGroup.status} ${JSON.stringify(threadGroup.json)}`);
    }
    const root = await call(
      owner.accessToken,
      "POST",
      `/api/conversations/${threadGroup.json.id}/messages`,
      { content: "a thread's root" },
    );
    const rootId = root.json.id;
    await sql`
      insert into app.messages (conversation_id, sender_id, content, thread_id)
      select ${threadGroup.json.id}, ${people[1].user.id}, 'reply ' || n, ${rootId}
      from generate_series(1, ${REPLIES}) n`;
    await sql`analyze app.messages`;
    const [{ seq }] = await sql<{ seq: number }[]>`
      select seq::int from app.messages where thread_id = ${rootId} order by seq desc offset 50 limit 1`;
    const lastCursor = encodeCursor([seq]);
    await waitForQuietMachine();
    const pages = async (cursor: string | null) => {
      const times: number[] = [];
      let items = 0;
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now();
        const answer = await call(
          people[2].accessToken,
          "GET",
          `/api/messages/${rootId}/thread?limit=50${cursor ? `&cursor=${cursor}` : ""}`,
        );
        times.push(performance.now() - t0);
        if (answer.status !== 200) throw new Error(`thread: ${answer.status}`);
        items = answer.json.items.length;
      }
      return { summary: summarize(times)!, items };
    };
    const first = await pages(null);
    const last = await pages(lastCursor);
    const [count] = await sql<{ reply_count: number }[]>`
      select reply_count from app.message_threads where root_id = ${rootId}`;

    console.log(`\nreactions and threads, ${sourceVersion()}\n`);
    console.log(figuresTable([
      {
        label: `reactions on one message, ${PEOPLE} people (req/s)`,
        value: int(rate),
        target: `${int(options.rate)}`,
        ok: rate >= options.rate * 0.97,
      },
      {
        label: "ceiling: the same batches without HTTP, 100 people (changes/s)",
        value: int(batched.rate),
      },
      {
        label: "one transaction per change (set_reaction_as, before batches), 20 connections (/s)",
        value: int(single.rate),
      },
      {
        label: "reaction latency p50 / p95 / p99",
        value: `${ms(lat.p50)} / ${ms(lat.p95)} / ${ms(lat.p99)}`,
      },
      { label: "requests, errors", value: `${int(latencies.length)}, ${errors}` },
      {
        label: "message.reactions events (one per batch), changes per event",
        value: `${int(history.length)}, ${(changes / Math.max(history.length, 1)).toFixed(1)}`,
      },
      {
        label: "events never go back: steps between them, at most the changes made",
        value: `${int(steps)} of ${int(changes)}`,
        ok: inStep,
      },
      {
        label: "counts exact at the end (API)",
        value: exact ? "yes" : "NO",
        target: "yes",
        ok: exact,
      },
      {
        label: "counts exact at the end (last event)",
        value: eventExact ? "yes" : "NO",
        target: "yes",
        ok: eventExact,
      },
      {
        label: `thread of ${int(REPLIES)}: first page p50 / p95 (50 items)`,
        value: `${ms(first.summary.p50)} / ${ms(first.summary.p95)}`,
      },
      {
        label: `thread of ${int(REPLIES)}: last pages p50 / p95 (${last.items} items)`,
        value: `${ms(last.summary.p50)} / ${ms(last.summary.p95)}`,
        target: "same as the first",
        ok: last.summary.p50 <= first.summary.p50 * 1.25 + 1,
      },
      {
        label: "thread reply count",
        value: int(count.reply_count),
        target: int(REPLIES),
        ok: count.reply_count === REPLIES,
      },
    ], true));
    console.log(
      cpuTable("phase", { "server and clients": "server", Postgres: "postgres" }, [
        ["reactions over HTTP", httpCpu],
        ["the batches without HTTP", batched.cpu],
        ["one transaction per change", single.cpu],
      ]),
    );
    const problems = [
      ...(errors ? [`${errors} reaction requests failed: ${errorSamples.join("; ")}`] : []),
      ...(exact ? [] : [`counts ${sorted(shown)}, expected ${sorted(expected)}`]),
      ...(eventExact
        ? []
        : [`last event ${sorted(event?.payload.reactions ?? [])}, expected ${sorted(expected)}`]),
      ...(inStep
        ? []
        : [`${history.length} events ${steps} changes apart, ${changes} changes made`]),
      ...(bench.errors.count
        ? [`${bench.errors.count} server errors: ${bench.errors.samples.join("; ")}`]
        : []),
    ];
    finish(problems, "reaction counts exact; thread pages measured");
  });
}
