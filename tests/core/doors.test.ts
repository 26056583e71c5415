/**
 * The doors of functions/api/core/doors.ts, read from the sources: outside that file (and
 * deps.ts, which builds the pool) the API reaches the pool only through a named server path
 * (`serverSql(deps, "<path>")`), and the names are the rows of docs/authorization.md's table
 * "Server paths that run with the pool's own rights". No database: it reads files.
 */
import assert from "node:assert/strict";
import { SERVER_PATHS } from "../../functions/api/core/doors.ts";

const ROOT = new URL("../../", import.meta.url);
const API = "functions/api/";
/** The files that hold the pool: the doors, and deps.ts, which opens and closes it. */
const POOL_HOLDERS = new Set([`${API}core/doors.ts`, `${API}deps.ts`]);
const TABLE_HEADING = "## Server paths that run with the pool's own rights";

/**
 * Ways to reach the pool without a door: `deps.sql` (also across lines, or `deps?.sql`),
 * `c.get("deps").sql`, any `["sql"]`, and `sql` destructured out of deps (`const { sql } = deps`,
 * `{ sql }: Deps`, `{ deps: { sql } }`).
 */
const POOL_USES: { what: string; pattern: RegExp }[] = [
  { what: "deps.sql", pattern: /\bdeps\s*\??\.\s*sql\b/g },
  { what: '.get("deps").sql', pattern: /\.get\(\s*["'`]deps["'`]\s*\)\s*\??\.\s*sql\b/g },
  { what: '["sql"]', pattern: /\[\s*["'`]sql["'`]\s*\]/g },
  {
    what: "sql destructured out of deps",
    pattern:
      /\{[^{}]*\bsql\b[^{}]*\}\s*=\s*(?:await\s+)?(?:[\w.]+\.)?(?:deps\b|get\(\s*["'`]deps["'`]\s*\))/g,
  },
  {
    what: "sql destructured out of a Deps parameter",
    pattern: /\{[^{}]*\bsql\b[^{}]*\}\s*:\s*Deps\b/g,
  },
  {
    what: "sql destructured out of deps",
    pattern: /\bdeps\s*:\s*\{[^{}]*\bsql\b\s*(?:[,}]|:\s*[a-z_$][\w$]*\s*[,}])/g,
  },
];

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) files.push(...await sourceFiles(`${path}/`));
    else if (entry.name.endsWith(".ts")) files.push(path);
  }
  return files.sort();
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/**
 * The first cell of each row of the server-path table: the table's lines after its heading, up
 * to the next heading; not the header row or the separator.
 */
function serverPathRows(markdown: string): string[] {
  const lines = markdown.split("\n");
  const start = lines.indexOf(TABLE_HEADING);
  assert.ok(start >= 0, `docs/authorization.md has the heading "${TABLE_HEADING}"`);
  const rows: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#{1,6} /.test(line)) break;
    if (!line.startsWith("|")) continue;
    const first = line.split("|")[1].trim();
    if (/^-+$/.test(first) || first === "path") continue; // the separator and the header
    rows.push(first);
  }
  return rows;
}

Deno.test("[doors] the pool is reached only through a named server path (serverSql in core/doors.ts)", async () => {
  const found: string[] = [];
  for (const path of await sourceFiles(API)) {
    if (POOL_HOLDERS.has(path)) continue;
    const text = await Deno.readTextFile(new URL(path, ROOT));
    for (const { what, pattern } of POOL_USES) {
      for (const match of text.matchAll(pattern)) {
        found.push(`${path}:${lineOf(text, match.index)}: ${what} (${match[0].trim()})`);
      }
    }
  }
  assert.deepEqual(
    found.sort(),
    [],
    'name the server path: const sql = serverSql(deps, "<path>") (core/doors.ts), or a door ' +
      "that runs as the caller (asUser, asAnonymous, asClaims, asSessionOf)",
  );
});

Deno.test("[doors] every server path named in core/doors.ts has its row in docs/authorization.md, and every row is named there", async () => {
  const rows = serverPathRows(
    await Deno.readTextFile(new URL("docs/authorization.md", ROOT)),
  );
  const named: readonly string[] = SERVER_PATHS;
  assert.ok(rows.length > 0, "the server-path table has rows");
  assert.deepEqual(
    rows.filter((row, i) => rows.indexOf(row) !== i),
    [],
    "each row of the table names one path",
  );
  assert.deepEqual(
    named.filter((name, i) => named.indexOf(name) !== i),
    [],
    "SERVER_PATHS names each path once",
  );
  const noRow = named.filter((name) => !rows.includes(name));
  const notNamed = rows.filter((row) => !named.includes(row));
  assert.deepEqual(
    { "in SERVER_PATHS, no row": noRow, "a row, not in SERVER_PATHS": notNamed },
    { "in SERVER_PATHS, no row": [], "a row, not in SERVER_PATHS": [] },
    `SERVER_PATHS (core/doors.ts) and the first column of docs/authorization.md's ` +
      `"${TABLE_HEADING.slice(3)}" name the same paths`,
  );
});
