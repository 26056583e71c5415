/**
 * The readable schema: `supabase/schema.sql`, the current definition of everything the migrations
 * build (schemas `app` and `app_private`: tables, comments, functions with their current bodies,
 * policies, grants), plus the policies Agora adds to `realtime.messages` and its pg_cron jobs.
 *
 * It is generated, never edited: `npm test` dumps the freshly migrated throwaway database, writes
 * the file, and fails when it changed, so a commit whose migrations and readable schema disagree
 * does not pass the gate. docs/conventions.md says why a dump and not Supabase's declarative
 * schemas.
 */
import { join } from "node:path";
import { run } from "./postgres.ts";
import type { Cluster } from "./postgres.ts";

export const SCHEMA_FILE = join("supabase", "schema.sql");

const HEADER =
  `-- The current schema of Agora, generated from the migrations by \`npm test\` (stack/schema-dump.ts).
-- Do not edit: change a migration in supabase/migrations/, run \`npm test\`, commit both.
-- Every table and function says why it exists in its COMMENT.
`;

/** Lines of pg_dump's output that differ between machines or runs, not between schemas. */
const UNSTABLE = [/^\\restrict /, /^\\unrestrict /, /^-- Dumped (from|by) /];

/** The readable schema of the database behind `cluster`, as the committed file should hold it. */
export async function dumpSchema(cluster: Cluster): Promise<string> {
  const dump = await run("pg_dump", [
    "--schema-only",
    "--no-owner",
    "--schema=app",
    "--schema=app_private",
    cluster.url(),
  ]);
  const body = dump.split("\n").filter((line) => !UNSTABLE.some((re) => re.test(line))).join("\n")
    .replace(/\n{3,}/g, "\n\n").trim();
  const policies = await cluster.psql(`
    select format(E'CREATE POLICY %I ON %I.%I AS %s FOR %s TO %s%s%s;',
                  policyname, schemaname, tablename, permissive, cmd, array_to_string(roles, ', '),
                  coalesce(E'\\n  USING (' || qual || ')', ''),
                  coalesce(E'\\n  WITH CHECK (' || with_check || ')', ''))
    from pg_policies where schemaname = 'realtime' order by tablename, policyname`);
  const jobs = await cluster.psql(`
    select format('%s  %s  %s', jobname, schedule, command) from cron.job order by jobname`);
  return [
    HEADER,
    body,
    "",
    "--",
    "-- Policies on realtime.messages (the table is hosted Supabase's; locally sql/local/ makes it)",
    "--",
    "",
    policies.trim(),
    "",
    "--",
    "-- pg_cron jobs (name, schedule, command), created by the migrations",
    "--",
    "",
    jobs.trim().split("\n").map((line) => `-- ${line}`).join("\n"),
    "",
  ].join("\n");
}
