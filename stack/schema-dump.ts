/**
 * The readable schema: `supabase/schema/<domain>.sql`, one file per migration domain, each holding
 * the current definition of everything that domain's migrations created (in schemas `app` and
 * `app_private`: schemas, types, tables with their sequences, defaults, constraints, indexes,
 * triggers, row security, policies, comments and grants, views, functions with their current
 * bodies), plus the policies Agora adds to `realtime.messages` and its pg_cron jobs.
 *
 * Which domain holds an object, and the `-- created in …; last changed in …` line above it, come
 * from the text of the migrations (`migrationHistory`): the migration whose create statement made
 * the object, and the last one that replaced or altered it. The definitions themselves come from
 * the freshly migrated database (pg_dump, pg_policies, cron.job), so a function shows its current
 * body wherever it was last replaced.
 *
 * It is generated, never edited: `npm test` writes the files and its schema step fails when any
 * changed, so a commit whose migrations and readable schema disagree does not pass the gate.
 * docs/conventions.md says why a dump and not Supabase's declarative schemas, and why per domain.
 */
import { join } from "node:path";
import { run } from "./postgres.ts";
import type { Cluster } from "./postgres.ts";

export const SCHEMA_DIR = join("supabase", "schema");
export const MIGRATIONS_DIR = join("supabase", "migrations");

/**
 * The migration domains, in the order their first migrations apply. A migration file is named
 * `<timestamp>_<domain>.sql`, or `<timestamp>_<domain>_<change>.sql` for a later change; a new
 * domain is added here with its first migration.
 */
export const DOMAINS = [
  "foundation",
  "jobs",
  "events",
  "idempotency",
  "conversations",
  "messages",
  "attachments",
  "notifications",
  "vendors",
  "catalog",
  "orders",
  "payments",
  "settlements",
  "signin",
  "store_account",
  "wallet",
  "moderation",
] as const;

/**
 * Migration names (the part after the timestamp) whose domain their name does not start with.
 * Each says why; prefer naming a new change migration `<domain>_<change>` over adding one here.
 */
const ALIASES: Record<string, string> = {
  // The inbox page (`app.inbox_page`, created by the notifications migration) checks the
  // caller's session itself; named after what it changes, before the `<domain>_<change>` rule.
  inbox_session_check: "notifications",
};

/** The domain of a migration file, from its name; throws when it cannot be told. */
export function migrationDomain(file: string): string {
  const match = /^\d{14}_([a-z0-9_]+)\.sql$/.exec(file);
  if (!match) {
    throw new Error(
      `${MIGRATIONS_DIR}/${file}: a migration is named <YYYYMMDDHHMMSS>_<domain>[_<change>].sql`,
    );
  }
  const name = match[1];
  if (ALIASES[name]) return ALIASES[name];
  const domain = [...DOMAINS].sort((a, b) => b.length - a.length)
    .find((d) => name === d || name.startsWith(`${d}_`));
  if (!domain) {
    throw new Error(
      `${MIGRATIONS_DIR}/${file}: cannot tell its domain: "${name}" is not one of DOMAINS ` +
        `(${DOMAINS.join(", ")}) nor starts with one and "_"; rename it ` +
        `<timestamp>_<domain>_<change>.sql, or add the new domain to DOMAINS (or, for an ` +
        `irregular name, an entry with its reason to ALIASES) in stack/schema-dump.ts`,
    );
  }
  return domain;
}

export interface Migration {
  /** The file name, e.g. `20261121100300_messages.sql`. */
  file: string;
  domain: string;
  text: string;
}

/** Every migration, in the order `supabase db push` applies them (file name order). */
export async function readMigrations(root: string): Promise<Migration[]> {
  const dir = join(root, MIGRATIONS_DIR);
  const files = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".sql")) files.push(entry.name);
  }
  files.sort();
  const migrations = [];
  for (const file of files) {
    const domain = migrationDomain(file);
    migrations.push({ file, domain, text: await Deno.readTextFile(join(dir, file)) });
  }
  return migrations;
}

/**
 * The top-level statements of a migration, with comments removed and every dollar-quoted string
 * (function bodies, cron commands) reduced to `$$ $$`, so that only the statements themselves are
 * scanned, never the text inside a body. Single-quoted strings and quoted identifiers are kept.
 */
export function topLevelStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i, i + 2);
    if (rest === "--") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end;
      current += " ";
    } else if (rest === "/*") {
      let depth = 0;
      while (i < sql.length) {
        if (sql.startsWith("/*", i)) depth++, i += 2;
        else if (sql.startsWith("*/", i)) {
          depth--, i += 2;
          if (depth === 0) break;
        } else i++;
      }
      current += " ";
    } else if (sql[i] === "'" || sql[i] === '"') {
      const quote = sql[i];
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === quote && sql[j + 1] === quote) j += 2;
        else if (sql[j] === quote) break;
        else j++;
      }
      current += sql.slice(i, j + 1);
      i = j + 1;
    } else if (sql[i] === "$" && /^\$[A-Za-z_]*\$/.test(sql.slice(i, i + 64))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i, i + 64))![0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end < 0 ? sql.length : end + tag.length;
      current += "$$ $$";
    } else if (sql[i] === ";") {
      if (current.trim()) statements.push(current.replace(/\s+/g, " ").trim());
      current = "";
      i++;
    } else {
      current += sql[i];
      i++;
    }
  }
  if (current.trim()) statements.push(current.replace(/\s+/g, " ").trim());
  return statements;
}

/** The kinds of object the readable schema shows, in the order each domain's file lists them. */
const KINDS = ["schema", "type", "table", "view", "function", "policy", "cron job"] as const;
type Kind = typeof KINDS[number];

/** `kind name`, e.g. `function app_private.notify`, `policy realtime.messages.<name>`. */
export type ObjectKey = string;
const key = (kind: Kind, name: string): ObjectKey => `${kind} ${name}`;

export interface ObjectHistory {
  /** The migration whose create statement made the object. */
  created: string;
  /** Every later migration that replaced or altered it, in order (empty when none did). */
  changed: string[];
}

const IDENT = String.raw`(?:"[^"]+"|[a-z_][a-z0-9_$]*)`;
const QNAME = String.raw`(${IDENT}(?:\.${IDENT})?)`;
const unquote = (name: string) => name.replace(/"/g, "");
const qualified = (name: string) => unquote(name.includes(".") ? name : `public.${name}`);

/** What a top-level statement does to which object: creates it, or changes one already made. */
function statementEffect(statement: string): { kind: Kind; name: string; create: boolean } | null {
  const s = statement.toLowerCase();
  let m: RegExpExecArray | null;
  if ((m = new RegExp(`^create (?:or replace )?(?:function|procedure) ${QNAME}`).exec(s))) {
    return { kind: "function", name: qualified(m[1]), create: true };
  }
  if (
    (m = new RegExp(`^create (?:or replace )?(?:materialized )?view (?:if not exists )?${QNAME}`)
      .exec(s))
  ) {
    return { kind: "view", name: qualified(m[1]), create: true };
  }
  if ((m = new RegExp(`^create (?:unlogged )?table (?:if not exists )?${QNAME}`).exec(s))) {
    return { kind: "table", name: qualified(m[1]), create: true };
  }
  if ((m = new RegExp(`^create type ${QNAME}`).exec(s))) {
    return { kind: "type", name: qualified(m[1]), create: true };
  }
  if ((m = new RegExp(`^create schema (?:if not exists )?(${IDENT})`).exec(s))) {
    return { kind: "schema", name: unquote(m[1]), create: true };
  }
  if (
    (m = new RegExp(`^(create|alter|drop) policy (?:if exists )?(${IDENT}) on ${QNAME}`).exec(s))
  ) {
    const table = qualified(m[3]);
    // A policy on a table of Agora's schemas is part of that table; the ones on
    // realtime.messages (whose table is hosted Supabase's) are objects of their own.
    if (table.startsWith("app.") || table.startsWith("app_private.")) {
      return { kind: "table", name: table, create: false };
    }
    if (m[1] === "drop") return null;
    return { kind: "policy", name: `${table}.${unquote(m[2])}`, create: m[1] === "create" };
  }
  if (
    (m = new RegExp(
      `^create (?:unique )?index (?:concurrently )?(?:if not exists )?(?:${IDENT} )?on (?:only )?${QNAME}`,
    ).exec(s))
  ) {
    return { kind: "table", name: qualified(m[1]), create: false };
  }
  if (
    (m = new RegExp(`^create (?:or replace )?(?:constraint )?trigger ${IDENT} .*? on ${QNAME}`)
      .exec(s))
  ) {
    return { kind: "table", name: qualified(m[1]), create: false };
  }
  if ((m = new RegExp(`^alter table (?:if exists )?(?:only )?${QNAME}`).exec(s))) {
    return { kind: "table", name: qualified(m[1]), create: false };
  }
  if ((m = new RegExp(`^alter (?:function|procedure) ${QNAME}`).exec(s))) {
    return { kind: "function", name: qualified(m[1]), create: false };
  }
  if ((m = new RegExp(`^alter type ${QNAME}`).exec(s))) {
    return { kind: "type", name: qualified(m[1]), create: false };
  }
  if ((m = new RegExp(`^alter (?:materialized )?view ${QNAME}`).exec(s))) {
    return { kind: "view", name: qualified(m[1]), create: false };
  }
  // cron.schedule with a job name creates the job, or replaces the one of that name.
  if ((m = /^select cron\.schedule\s*\(\s*'([^']+)'/.exec(statement))) {
    return { kind: "cron job", name: m[1], create: true };
  }
  return null;
}

/**
 * For every object the migrations make: the migration that created it and the ones that changed
 * it since, from the migrations' text. A change counts when it is a `create or replace`, an
 * `alter`, or an index, trigger or policy created on a table; `comment on`, grants and data
 * statements do not count.
 */
export function migrationHistory(migrations: Migration[]): Map<ObjectKey, ObjectHistory> {
  const history = new Map<ObjectKey, ObjectHistory>();
  for (const migration of migrations) {
    for (const statement of topLevelStatements(migration.text)) {
      const effect = statementEffect(statement);
      if (!effect) continue;
      const k = key(effect.kind, effect.name);
      const seen = history.get(k);
      if (seen) {
        if (seen.created !== migration.file && seen.changed.at(-1) !== migration.file) {
          seen.changed.push(migration.file);
        }
      } else if (effect.create) {
        history.set(k, { created: migration.file, changed: [] });
      }
      // A change to an object no migration created (realtime.messages itself) is not shown.
    }
  }
  return history;
}

/**
 * Functions (and other objects) a migration changes that another domain's migration created:
 * `{ migration, domain, objects }` for each migration that does so.
 */
export function crossDomainChanges(migrations: Migration[]) {
  const history = migrationHistory(migrations);
  const domainOf = new Map(migrations.map((m) => [m.file, m.domain]));
  return migrations.map((migration) => ({
    migration: migration.file,
    domain: migration.domain,
    objects: [...history].filter(([, h]) =>
      h.changed.includes(migration.file) && domainOf.get(h.created) !== migration.domain
    ).map(([k, h]) => ({ object: k, domain: domainOf.get(h.created)! })),
  })).filter((c) => c.objects.length);
}

/** One entry of pg_dump's output: its `-- Name: …; Type: …; Schema: …` header and its SQL. */
interface DumpEntry {
  name: string;
  type: string;
  schema: string;
  sql: string;
}

/** Lines of pg_dump's output that differ between machines or runs, not between schemas. */
const UNSTABLE = [/^\\restrict /, /^\\unrestrict /, /^-- Dumped (from|by) /];

function dumpEntries(dump: string): DumpEntry[] {
  const text = dump.split("\n").filter((line) => !UNSTABLE.some((re) => re.test(line))).join("\n");
  const header = /^--\n-- Name: (.*); Type: (.*); Schema: (.*); Owner: .*\n--\n/gm;
  const starts = [...text.matchAll(header)];
  return starts.map((m, i) => ({
    name: m[1],
    type: m[2],
    schema: m[3],
    sql: text.slice(m.index! + m[0].length, starts[i + 1]?.index ?? text.length)
      .replace(/\n{3,}/g, "\n\n").trim(),
  }));
}

/** The object of the readable schema a pg_dump entry belongs to (a table's index: the table). */
function entryOwner(entry: DumpEntry, sequences: Map<string, string>): ObjectKey | null {
  const { name, type, schema } = entry;
  const first = unquote(name.split(" ")[0]);
  const tableIn = (sql: string, re: RegExp) => {
    const m = re.exec(sql);
    return m ? key("table", unquote(m[1])) : null;
  };
  switch (type) {
    case "SCHEMA":
      return key("schema", name);
    case "TYPE":
    case "DOMAIN":
      return key("type", `${schema}.${name}`);
    case "TABLE":
    case "ROW SECURITY":
      return key("table", `${schema}.${name}`);
    case "VIEW":
    case "MATERIALIZED VIEW":
      return key("view", `${schema}.${name}`);
    case "FUNCTION":
    case "PROCEDURE":
      return key("function", `${schema}.${name.slice(0, name.indexOf("("))}`);
    case "CONSTRAINT":
    case "FK CONSTRAINT":
    case "POLICY":
    case "TRIGGER":
    case "DEFAULT":
      return key("table", `${schema}.${first}`);
    case "INDEX":
      return tableIn(entry.sql, /^CREATE (?:UNIQUE )?INDEX \S+ ON (?:ONLY )?(\S+)/m);
    case "SEQUENCE":
    case "SEQUENCE OWNED BY": {
      const owner = tableIn(entry.sql, /^ALTER TABLE (?:ONLY )?(\S+) ALTER COLUMN/m) ??
        tableIn(entry.sql, /OWNED BY ([^.\s]+\.[^.\s]+)\.\S+;/);
      if (owner) sequences.set(`${schema}.${name}`, owner);
      return owner;
    }
    case "COMMENT":
    case "ACL": {
      const [kind, ...restParts] = name.split(" ");
      const rest = restParts.join(" ");
      if (kind === "SCHEMA") return key("schema", rest);
      if (kind === "TABLE" || kind === "COLUMN") {
        return key("table", `${schema}.${unquote(rest.split(".")[0])}`);
      }
      if (kind === "FUNCTION" || kind === "PROCEDURE") {
        return key("function", `${schema}.${rest.slice(0, rest.indexOf("("))}`);
      }
      if (kind === "TYPE" || kind === "DOMAIN") return key("type", `${schema}.${rest}`);
      if (kind === "VIEW") return key("view", `${schema}.${rest}`);
      if (kind === "SEQUENCE") return sequences.get(`${schema}.${rest}`) ?? null;
      return null;
    }
    default:
      return null;
  }
}

const RULE = "-- " + "-".repeat(93);

function fileHeader(domain: string, files: string[]): string {
  return [
    `-- Agora's schema as it is now, domain ${domain}: every object its migrations created, with`,
    "-- every later change from any migration applied. Its migrations:",
    ...files.map((file) => `--   supabase/migrations/${file}`),
    "-- Generated from the freshly migrated database by `npm test` (stack/schema-dump.ts). Do not",
    "-- edit: change the schema with a new migration in supabase/migrations/, run `npm test`, and",
    "-- commit both. docs/conventions.md says how to read it.",
    "-- Order: schemas, types, tables (each with its sequences, defaults, constraints, indexes,",
    "-- triggers, row security, policies, comments, grants), views, functions, policies on",
    "-- realtime.messages, pg_cron jobs; by name within each. Above each object: the migration whose",
    "-- create statement made it and the last one that replaced or altered it (create or replace,",
    "-- alter, an index, trigger or policy on a table; comments and grants are not counted).",
  ].join("\n");
}

/**
 * The readable schema of the database behind `cluster`, as the committed files should hold it:
 * file name (`<domain>.sql`) to content. Throws, naming them, when the database has objects no
 * migration's text creates (the history could not place them).
 */
export async function dumpSchema(
  cluster: Cluster,
  migrations: Migration[],
): Promise<Map<string, string>> {
  const history = migrationHistory(migrations);
  const domainOf = new Map(migrations.map((m) => [m.file, m.domain]));

  const objects = new Map<ObjectKey, string[]>();
  const add = (k: ObjectKey, sql: string) => objects.set(k, [...(objects.get(k) ?? []), sql]);
  const unplaced: string[] = [];
  const sequences = new Map<string, string>();
  const dump = await run("pg_dump", [
    "--schema-only",
    "--no-owner",
    "--schema=app",
    "--schema=app_private",
    cluster.url(),
  ]);
  for (const entry of dumpEntries(dump)) {
    const owner = entryOwner(entry, sequences);
    if (owner) add(owner, entry.sql);
    else unplaced.push(`pg_dump entry ${entry.type} ${entry.schema}.${entry.name}`);
  }

  const policies = JSON.parse(
    await cluster.psql(`
    select coalesce(json_agg(json_build_object('name', format('%s.%s.%s', schemaname, tablename,
             policyname), 'sql', format(E'CREATE POLICY %I ON %I.%I AS %s FOR %s TO %s%s%s;',
               policyname, schemaname, tablename, permissive, cmd, array_to_string(roles, ', '),
               coalesce(E'\\n  USING (' || qual || ')', ''),
               coalesce(E'\\n  WITH CHECK (' || with_check || ')', '')))), '[]')
    from pg_policies where schemaname = 'realtime'`),
  ) as { name: string; sql: string }[];
  for (const p of policies) add(key("policy", p.name), p.sql);

  const jobs = JSON.parse(
    await cluster.psql(`
    select coalesce(json_agg(json_build_object('name', jobname, 'schedule', schedule,
             'command', command)), '[]')
    from cron.job`),
  ) as { name: string; schedule: string; command: string }[];
  for (const job of jobs) {
    add(
      key("cron job", job.name),
      [`-- schedule: ${job.schedule}`, "-- command:", ...job.command.trim().split("\n")]
        .map((line, i) => i < 2 ? line : `--   ${line}`).join("\n"),
    );
  }

  const byDomain = new Map<string, ObjectKey[]>();
  for (const k of objects.keys()) {
    const h = history.get(k);
    if (!h) {
      unplaced.push(k);
      continue;
    }
    const domain = domainOf.get(h.created)!;
    byDomain.set(domain, [...(byDomain.get(domain) ?? []), k]);
  }
  if (unplaced.length) {
    throw new Error(
      "the readable schema cannot place these objects of the migrated database (no migration's " +
        "create statement names them, or stack/schema-dump.ts does not know the kind):\n  " +
        unplaced.sort().join("\n  "),
    );
  }

  const kindOrder = (k: ObjectKey) => KINDS.findIndex((kind) => k.startsWith(`${kind} `));
  const files = new Map<string, string>();
  for (const domain of new Set(migrations.map((m) => m.domain))) {
    const keys = (byDomain.get(domain) ?? []).sort((a, b) =>
      kindOrder(a) - kindOrder(b) || (a < b ? -1 : a > b ? 1 : 0)
    );
    const parts = [
      fileHeader(domain, migrations.filter((m) => m.domain === domain).map((m) => m.file)),
    ];
    if (!keys.length) parts.push("\n-- Its migrations create no object of their own.");
    for (const k of keys) {
      const h = history.get(k)!;
      const last = h.changed.at(-1);
      parts.push(
        [
          "",
          RULE,
          `-- ${k}`,
          `-- created in ${h.created}${last ? `; last changed in ${last}` : ""}`,
          RULE,
          "",
          objects.get(k)!.join("\n\n"),
        ].join("\n"),
      );
    }
    files.set(`${domain}.sql`, parts.join("\n") + "\n");
  }
  return files;
}

/** What opens a migration: its leading comments, before the first statement. */
function openingComments(sql: string): string {
  const m = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/.exec(sql);
  return m ? m[0] : "";
}

/** The line that opens the list of other domains' functions a migration replaces. */
export const REPLACES_LINE = "Replaces functions of other domains:";

/**
 * docs/conventions.md: a migration that replaces (or alters) a function another domain's
 * migration created says so at its top, in a comment with REPLACES_LINE naming each function.
 * One message per migration that does not.
 */
export function unannouncedReplacements(migrations: Migration[]): string[] {
  const text = new Map(migrations.map((m) => [m.file, m.text]));
  return crossDomainChanges(migrations).flatMap(({ migration, objects }) => {
    const opening = openingComments(text.get(migration)!);
    const functions = objects.filter((o) => o.object.startsWith("function "));
    const missing = functions.filter((o) =>
      !opening.includes(REPLACES_LINE) || !opening.includes(o.object.slice("function ".length))
    );
    if (!missing.length) return [];
    return [
      `${MIGRATIONS_DIR}/${migration} replaces functions of other domains without saying so at ` +
      `its top: start it with a comment "-- ${REPLACES_LINE}" naming ${
        missing.map((o) => `${o.object.slice("function ".length)} (${o.domain})`).join(", ")
      }`,
    ];
  });
}
