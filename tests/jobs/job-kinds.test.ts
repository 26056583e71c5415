/**
 * Every job kind something enqueues has a handler, and every handler has something that enqueues
 * its kind. Jobs are queued through `app_private.enqueue_job(kind, …)` (the jobs migration) from
 * three places, all read here: the bodies of the migrated database's functions in `app` and
 * `app_private` (pg_proc.prosrc, so a function replaced by a later migration counts as it is
 * now), the pg_cron jobs' commands (cron.job), and the TypeScript under functions/ (SQL written
 * in a query, and `enqueueJob(sql, <kind>, …)` with a `defineJob` kind). The handlers are
 * `appJobs()` (functions/api/jobs/registry.ts), what the drain and the local worker claim.
 *
 * A kind passed as anything but a literal cannot be checked by reading: each such call must be
 * listed in NON_LITERAL below with the kinds it can pass, or the test fails naming it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test, testEnv } from "../support/helpers.ts";
import { createPool } from "../../functions/_shared/db.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Calls of enqueue_job whose kind is an expression, by `<where>: <expression>`, with the kinds it
 * can take. None today; the one generic TypeScript helper, `enqueueJob` (jobs/queue.ts, which
 * passes `${kind.kind}` of the JobKind it is given), is handled by reading its callers instead.
 */
const NON_LITERAL: Record<string, string[]> = {};

/** One place that enqueues: where (a function, a cron job, a file) and the kind, or the expression. */
interface Enqueue {
  where: string;
  kind?: string;
  expression?: string;
}

/** The first argument of every `enqueue_job(` call in SQL text (comments removed first). */
function sqlEnqueues(where: string, sql: string): Enqueue[] {
  const text = sql.replace(/--[^\n]*/g, "");
  const found: Enqueue[] = [];
  for (const m of text.matchAll(/\benqueue_job\s*\(\s*/g)) {
    const rest = text.slice(m.index! + m[0].length);
    const literal = /^'((?:[^']|'')*)'\s*(?:::\s*text\s*)?[,)]/.exec(rest);
    if (literal) found.push({ where, kind: literal[1].replace(/''/g, "'") });
    else found.push({ where, expression: firstArgument(rest) });
  }
  return found;
}

/** The text up to the first comma or closing parenthesis outside parentheses. */
function firstArgument(rest: string): string {
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === "(") depth++;
    else if (rest[i] === ")" && depth-- === 0) return rest.slice(0, i).trim();
    else if (rest[i] === "," && depth === 0) return rest.slice(0, i).trim();
  }
  return rest.trim();
}

async function tsFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...await tsFiles(path));
    else if (entry.isFile && /\.tsx?$/.test(entry.name)) files.push(path);
  }
  return files.sort();
}

/**
 * Everything TypeScript under functions/ enqueues: literal kinds in SQL it writes, and the kind
 * of each `enqueueJob(<sql>, <name>, …)` call, `<name>` being a `const <name> = defineJob({
 * kind: "…" })` somewhere under functions/.
 */
async function typescriptEnqueues(): Promise<Enqueue[]> {
  const sources = new Map<string, string>();
  for (const file of await tsFiles(join(ROOT, "functions"))) {
    const text = await Deno.readTextFile(file);
    // Comments only explain; a call quoted in one is not a call.
    sources.set(
      file.slice(ROOT.length),
      text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, ""),
    );
  }
  const defined = new Map<string, string>();
  for (const text of sources.values()) {
    for (const m of text.matchAll(/const (\w+) = defineJob(?:<[^>]*>)?\(\{\s*kind: "([^"]+)"/g)) {
      defined.set(m[1], m[2]);
    }
  }
  const found: Enqueue[] = [];
  for (const [file, text] of sources) {
    for (const e of sqlEnqueues(file, text)) {
      // enqueueJob itself: its kind is the JobKind its callers pass (read below).
      if (e.expression === "${kind.kind}" && /export async function enqueueJob\b/.test(text)) {
        continue;
      }
      found.push(e);
    }
    for (const m of text.matchAll(/\benqueueJob\s*\(\s*[\w.]+\s*,\s*([\w.]+)\s*[,)]/g)) {
      const kind = defined.get(m[1]);
      found.push(
        kind ? { where: file, kind } : { where: file, expression: `enqueueJob(…, ${m[1]})` },
      );
    }
  }
  return found;
}

/** What the migrated database enqueues: function bodies in app and app_private, cron commands. */
async function databaseEnqueues(): Promise<{ functions: Enqueue[]; cron: Enqueue[] }> {
  const sql = createPool(testEnv().AGORA_DB_URL, 1);
  try {
    const bodies = await sql<{ name: string; body: string }[]>`
      select format('%s.%s', n.nspname, p.proname) as name, p.prosrc as body
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname in ('app', 'app_private') and p.proname <> 'enqueue_job'`;
    const jobs = await sql<{ name: string; command: string }[]>`
      select jobname as name, command from cron.job`;
    return {
      functions: bodies.flatMap((f) => sqlEnqueues(`function ${f.name}`, f.body)),
      cron: jobs.flatMap((j) => sqlEnqueues(`cron job ${j.name}`, j.command)),
    };
  } finally {
    await sql.end();
  }
}

/** Every enqueue with its kinds resolved; fails naming an expression NON_LITERAL does not list. */
async function allEnqueues(): Promise<{ kind: string; where: string }[]> {
  const { functions, cron } = await databaseEnqueues();
  // The scan reads what it should: the chain follower's cron job queues wallet.index.
  assert.ok(
    cron.some((e) => e.kind === "wallet.index"),
    "cron job agora-follow-chain enqueues wallet.index",
  );
  assert.ok(functions.length > 0, "some SQL function enqueues a job");
  const all = [...functions, ...cron, ...await typescriptEnqueues()];
  const unlisted = all.filter((e) => e.expression && !NON_LITERAL[`${e.where}: ${e.expression}`]);
  assert.deepEqual(
    unlisted.map((e) => `${e.where}: ${e.expression}`),
    [],
    "enqueue calls whose kind is not a literal: list each in NON_LITERAL with the kinds it can pass",
  );
  return all.flatMap((e) =>
    e.kind
      ? [{ kind: e.kind, where: e.where }]
      : NON_LITERAL[`${e.where}: ${e.expression}`].map((kind) => ({ kind, where: e.where }))
  );
}

test("[jobs] every job kind enqueued in SQL (functions, pg_cron) or TypeScript has a registered handler", async () => {
  const registered = new Set(appJobs().kinds());
  const unhandled = (await allEnqueues()).filter((e) => !registered.has(e.kind))
    .map((e) => `${e.kind} (enqueued by ${e.where})`);
  assert.deepEqual(unhandled, [], "job kinds enqueued without a handler in appJobs()");
});

test("[jobs] every job kind with a registered handler is enqueued by SQL or TypeScript", async () => {
  const enqueued = new Set((await allEnqueues()).map((e) => e.kind));
  const orphans = appJobs().kinds().filter((kind) => !enqueued.has(kind)).sort();
  assert.deepEqual(orphans, [], "handlers in appJobs() whose kind nothing enqueues");
});
