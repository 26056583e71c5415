/**
 * `npm run bench -- growth [--domains messaging,store] [--scales 1,10] [--repeat 3]`: what each
 * list, search and job costs in Postgres as the data grows tenfold (docs/benchmarks.md, Growth).
 *
 * - For each scale (default 1 and 10: 10,000 and 100,000 users) a throwaway cluster is filled:
 *   the people (growth/people.ts), then each domain's seed (growth/index.ts), then VACUUM ANALYZE.
 * - Each operation of each domain calls its endpoint's own query functions in a transaction as
 *   the API would (role `authenticated` and the user's claims, or the pool's role for a job).
 *   The driver reports every statement it sends; the runner then replays those statements, in
 *   order, under `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` with the same parameters, role and
 *   claims, and sums their planning and execution time: the SQL alone, without the network or
 *   the server. Both transactions are rolled back, so a write (mark read, read-all) runs again.
 *   `--repeat` runs of that give the median.
 * - The table prints each operation at both sizes, the ratio large/small and the shape of the
 *   costliest statement's plan at the large size. A paged read ("page") meets its target when it
 *   takes at most 50 ms at the large size and at most twice its small figure (or 2 ms more); a job
 *   ("work") prints its cost per 1,000 units of work, which should be alike at both sizes.
 * - Last, the database's size per million users at each scale.
 *
 * A missed target exits 0 (the figures are the report); a broken run (an operation that throws,
 * a statement that cannot be replayed) exits 1.
 */
import postgres from "postgres";
import type { DbClaims, Sql, Tx } from "../../functions/_shared/db.ts";
import { throwawayCluster } from "../../stack/database.ts";
import { table } from "./stats.ts";
import { BenchArgs, finish, parseOptions, say } from "./scaffold.ts";
import { DOMAINS } from "./growth/index.ts";
import { seedPeople } from "./growth/people.ts";
import type { GrowthContext, GrowthDomain, GrowthOperation } from "./growth/types.ts";

const PAGE_TARGET_MS = 50;

interface Options {
  domains: GrowthDomain[];
  scales: number[];
  repeat: number;
}

function options(args: string[]): Options {
  return parseOptions(args, import.meta.url, (a: BenchArgs) => {
    const names = a.text("--domains", null);
    const known = DOMAINS.map((d) => d.domain);
    const wanted = names ? names.split(",").map((n) => n.trim()) : known;
    const unknown = wanted.filter((n) => !known.includes(n));
    if (unknown.length) {
      throw new Error(`no growth domain named ${unknown.join(", ")} (known: ${known.join(", ")})`);
    }
    return {
      domains: DOMAINS.filter((d) => wanted.includes(d.domain)),
      scales: a.wholes("--scales", [1, 10]),
      repeat: a.whole("--repeat", 3),
    };
  });
}

interface Statement {
  query: string;
  params: unknown[];
}

interface Measured {
  ms: number;
  statements: number;
  shape: string;
  units?: number;
}

class Rollback extends Error {}

/** Sets the role and claims as `withUser` does, or nothing for the pool's own role. */
async function actAs(tx: Tx, claims: DbClaims | null) {
  if (!claims) return;
  await tx`select set_config('role', 'authenticated', true),
                  set_config('request.jwt.claims', ${JSON.stringify(claims)}, true)`;
}

/** Runs `fn` in a transaction that is always rolled back; what it returned, or its error. */
async function rolledBack(sql: Sql, fn: (tx: Tx) => Promise<void>): Promise<void> {
  try {
    await sql.begin(async (tx) => {
      await fn(tx);
      throw new Rollback();
    });
  } catch (err) {
    if (!(err instanceof Rollback)) throw err;
  }
}

const UNEXPLAINABLE =
  /^\s*(set|reset|begin|commit|rollback|savepoint|release|listen|unlisten|notify|declare|fetch|close|copy|lock)\b/i;

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Function Name"?: string;
  "Parent Relationship"?: string;
  Plans?: PlanNode[];
}

/**
 * A plan in one line: each node's type and its index or relation; a node's inputs follow `>`
 * (several in brackets), and its sub-plans (a scalar subquery, an EXISTS) in braces after it.
 */
export function planShape(node: PlanNode): string {
  const what = node["Index Name"] ?? node["Relation Name"] ?? node["Function Name"];
  const self = what ? `${node["Node Type"]} (${what})` : node["Node Type"];
  const children = node.Plans ?? [];
  const isSub = (c: PlanNode) => /Plan$/.test(c["Parent Relationship"] ?? "");
  const inputs = children.filter((c) => !isSub(c)).map(planShape);
  const subs = children.filter(isSub).map(planShape);
  let text = self;
  if (subs.length) text += ` {${subs.join("; ")}}`;
  if (inputs.length === 1) text += ` > ${inputs[0]}`;
  else if (inputs.length > 1) text += ` [${inputs.join("; ")}]`;
  return text;
}

const JSON_TYPES = new Set([114, 3802]); // json, jsonb

/**
 * A statement's parameters to send again. The driver reports them serialized: a json or jsonb
 * one (`tx.json(...)`) is the text of its JSON, which sending again would encode a second time
 * (a string, not the object: "an audience names userIds, roles or all"), so those go back parsed.
 */
async function replayedParams(tx: Tx, s: Statement): Promise<postgres.ParameterOrJSON<never>[]> {
  const params = s.params as postgres.ParameterOrJSON<never>[];
  if (!params.some((p) => typeof p === "string")) return params;
  const { types } = await tx.unsafe(s.query).describe();
  return params.map((p, i) =>
    JSON_TYPES.has(types[i]) && typeof p === "string" ? JSON.parse(p) as never : p
  );
}

async function measure(
  url: string,
  op: GrowthOperation,
  ctx: GrowthContext,
  repeat: number,
): Promise<Measured> {
  const captured: Statement[] = [];
  let recording = false;
  const capture = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection, query, parameters) => {
      if (recording) captured.push({ query, params: parameters });
    },
  });
  try {
    const claims = op.as ? ctx.claims(op.as) : null;
    await rolledBack(capture, async (tx) => {
      await actAs(tx, claims);
      recording = true;
      await op.run(tx, ctx);
      recording = false;
    });
    const statements = captured.filter((s) => !UNEXPLAINABLE.test(s.query));
    if (!statements.length) throw new Error("it sent no statement");
    const runs: { ms: number; shape: string }[] = [];
    for (let i = 0; i < repeat; i++) {
      let ms = 0;
      let worst = { ms: -1, shape: "" };
      await rolledBack(capture, async (tx) => {
        await actAs(tx, claims);
        for (const s of statements) {
          const [row] = await tx.unsafe(
            `explain (analyze, buffers, format json) ${s.query}`,
            await replayedParams(tx, s),
          );
          const [plan] = row["QUERY PLAN"] as {
            Plan: PlanNode;
            "Planning Time": number;
            "Execution Time": number;
          }[];
          const spent = plan["Planning Time"] + plan["Execution Time"];
          ms += spent;
          if (spent > worst.ms) worst = { ms: spent, shape: planShape(plan.Plan) };
        }
      });
      runs.push({ ms, shape: worst.shape });
    }
    runs.sort((a, b) => a.ms - b.ms);
    const median = runs[Math.floor(runs.length / 2)];
    return { ms: median.ms, statements: statements.length, shape: median.shape, units: op.units };
  } finally {
    await capture.end({ timeout: 5 });
  }
}

interface ScaleResult {
  scale: number;
  users: number;
  bytes: number;
  /** The largest tables (with their indexes and TOAST), partitions summed into their parent. */
  tables: { name: string; bytes: number }[];
  seedSeconds: Record<string, number>;
  figures: Map<string, { op: GrowthOperation; m: Measured }>;
}

async function runScale(opts: Options, scale: number, problems: string[]): Promise<ScaleResult> {
  say(`scale ${scale}: creating a throwaway database`);
  const cluster = await throwawayCluster();
  const url = cluster.cluster.url();
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  try {
    const seedSeconds: Record<string, number> = {};
    let t0 = Date.now();
    const { people, sessions } = await seedPeople(sql, scale);
    seedSeconds.people = (Date.now() - t0) / 1000;
    const ctx: GrowthContext = {
      sql,
      scale,
      people,
      claims(userId) {
        const session = sessions.get(userId);
        if (!session) throw new Error(`no session for ${userId}: act as heavy, typical or admin`);
        return { sub: userId, role: "authenticated", session_id: session, email: "" };
      },
    };
    for (const domain of opts.domains) {
      t0 = Date.now();
      await domain.seed(ctx);
      seedSeconds[domain.domain] = (Date.now() - t0) / 1000;
      say(`scale ${scale}: ${domain.domain} seeded in ${seedSeconds[domain.domain].toFixed(0)} s`);
    }
    for (const domain of opts.domains) {
      if (!domain.settle) continue;
      t0 = Date.now();
      await domain.settle(ctx);
      seedSeconds[`${domain.domain} settle`] = (Date.now() - t0) / 1000;
    }
    await sql`vacuum analyze`;
    const figures = new Map<string, { op: GrowthOperation; m: Measured }>();
    for (const domain of opts.domains) {
      for (const op of await domain.operations(ctx)) {
        const key = `${domain.domain}: ${op.name}`;
        try {
          figures.set(key, { op, m: await measure(url, op, ctx, opts.repeat) });
        } catch (err) {
          problems.push(`scale ${scale}, ${key}: ${(err as Error).message}`);
        }
      }
    }
    const [{ bytes }] = await sql<{ bytes: string }[]>`
      select pg_database_size(current_database())::text as bytes`;
    const tables = await sql<{ name: string; bytes: string }[]>`
      select coalesce(p.inhparent::regclass, c.oid::regclass)::text as name,
             sum(pg_total_relation_size(c.oid))::text as bytes
      from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_inherits p on p.inhrelid = c.oid
      where c.relkind = 'r' and n.nspname not in ('pg_catalog', 'information_schema')
      group by 1 order by sum(pg_total_relation_size(c.oid)) desc limit 15`;
    return {
      scale,
      users: people.count,
      bytes: Number(bytes),
      tables: tables.map((t) => ({ name: t.name, bytes: Number(t.bytes) })),
      seedSeconds,
      figures,
    };
  } finally {
    await sql.end({ timeout: 5 });
    await cluster.dispose();
  }
}

const ms = (n: number) => n < 10 ? n.toFixed(2) : n.toFixed(1);

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  if (!opts.domains.length) throw new Error("no growth domain to run (growth/index.ts is empty)");
  const problems: string[] = [];
  const results: ScaleResult[] = [];
  for (const scale of opts.scales) results.push(await runScale(opts, scale, problems));

  const small = results[0];
  const large = results[results.length - 1];
  const rows = [[
    "operation",
    "endpoint",
    ...results.map((r) => `x${r.scale} ms`),
    "ratio",
    "plan (largest)",
    "target",
    "",
  ]];
  let missed = 0;
  for (const [key, { op }] of large.figures) {
    const each = results.map((r) => r.figures.get(key)?.m);
    const a = small.figures.get(key)?.m;
    const b = large.figures.get(key)?.m;
    if (!a || !b) continue;
    let target: string;
    let ok: boolean;
    let cells: string[];
    if (op.kind === "work" && a.units && b.units) {
      const perA = a.ms / a.units * 1000;
      const perB = b.ms / b.units * 1000;
      cells = each.map((m) => m ? `${ms(m.ms)} (${ms(m.ms / m.units! * 1000)}/1k)` : "-");
      target = "per 1k units alike";
      ok = perB <= perA * 2 + 2;
    } else {
      cells = each.map((m) => m ? ms(m.ms) : "-");
      target = `<= ${PAGE_TARGET_MS} ms, ~1x`;
      ok = b.ms <= PAGE_TARGET_MS && (b.ms <= a.ms * 2 || b.ms - a.ms <= 2);
    }
    if (!ok) missed++;
    const shape = b.shape.length > 120 ? `${b.shape.slice(0, 117)}...` : b.shape;
    rows.push([
      key,
      op.endpoint,
      ...cells,
      (b.ms / Math.max(a.ms, 0.01)).toFixed(1),
      shape,
      target,
      ok ? "PASS" : "MISS",
    ]);
  }
  console.log(`\nGrowth: the SQL of each operation (Postgres alone, median of ${opts.repeat})`);
  console.log(table(rows));
  const domains = opts.domains.map((d) => d.domain).join(", ");
  console.log(
    `\nDatabase size: the whole database (pg_database_size) with the ${domains} seed${
      opts.domains.length > 1 ? "s loaded together" : " alone"
    }`,
  );
  console.log(table([
    ["scale", "users", "size", "per million users", "seed seconds"],
    ...results.map((r) => [
      `x${r.scale}`,
      r.users.toLocaleString("en"),
      `${(r.bytes / 2 ** 20).toFixed(0)} MB`,
      `${(r.bytes / r.users * 1e6 / 2 ** 30).toFixed(1)} GB`,
      Object.entries(r.seedSeconds).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", "),
    ]),
  ]));
  const gb = (bytes: number, users: number) => `${(bytes / users * 1e6 / 2 ** 30).toFixed(2)} GB`;
  console.log(
    `\nThe largest tables at x${large.scale} (indexes and TOAST included, partitions summed)`,
  );
  console.log(table([
    ["table", "size", "per million users"],
    ...large.tables.map((t) => [
      t.name,
      `${(t.bytes / 2 ** 20).toFixed(0)} MB`,
      gb(t.bytes, large.users),
    ]),
  ]));
  finish(
    problems,
    `${large.figures.size - missed} of ${large.figures.size} operations met their target`,
  );
}
