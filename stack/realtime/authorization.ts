/**
 * Private-channel authorization the way hosted Realtime does it, so the same RLS policies on
 * `realtime.messages` decide locally and hosted:
 *
 * - read (join): in one transaction, probe rows are inserted for the topic with the server's
 *   rights, then the transaction switches to the caller's role, claims and `realtime.topic`, and
 *   selects the probes back. A probe the select policy lets through is read permission for its
 *   extension (broadcast, presence). The transaction is always rolled back.
 * - write (broadcast, track): as the caller, a row is inserted for the topic in a savepoint; an
 *   insufficient-privilege error is "no". Rolled back as well.
 */
import type { Sql, Tx } from "../../functions/_shared/db.ts";
import type { Claims } from "./tokens.ts";

export type Extension = "broadcast" | "presence";
export type Decisions = Partial<Record<Extension, boolean>>;

/** Roles a token may act as in the database; anything else is refused outright. */
const DB_ROLES = new Set(["anon", "authenticated", "service_role"]);

class Rollback {
  constructor(readonly value: Decisions) {}
}

async function actAs(tx: Tx, topic: string, claims: Claims) {
  await tx`
    select set_config('role', ${claims.role}, true),
           set_config('realtime.topic', ${topic}, true),
           set_config('request.jwt.claims', ${JSON.stringify(claims)}, true),
           set_config('request.jwt.claim.sub', ${
    typeof claims.sub === "string" ? claims.sub : ""
  }, true),
           set_config('request.jwt.claim.role', ${claims.role}, true),
           set_config('request.headers', '{}', true)`;
}

/** Runs `fn` in a transaction that is always rolled back, returning what `fn` decided. */
async function rolledBack(sql: Sql, fn: (tx: Tx) => Promise<Decisions>): Promise<Decisions> {
  try {
    await sql.begin(async (tx) => {
      throw new Rollback(await fn(tx));
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value;
    throw err;
  }
  return {};
}

export async function readDecisions(
  sql: Sql,
  topic: string,
  claims: Claims,
  extensions: Extension[],
): Promise<Decisions> {
  if (!DB_ROLES.has(claims.role)) return Object.fromEntries(extensions.map((e) => [e, false]));
  return await rolledBack(sql, async (tx) => {
    const ids = extensions.map(() => crypto.randomUUID());
    await tx`
      insert into realtime.messages (id, topic, extension)
      select * from unnest(${ids}::uuid[], ${
      extensions.map(() => topic)
    }::text[], ${extensions}::text[])`;
    await actAs(tx, topic, claims);
    const rows = await tx<
      { id: string }[]
    >`select id from realtime.messages where id = any(${ids}::uuid[])`;
    const seen = new Set(rows.map((r) => r.id));
    return Object.fromEntries(extensions.map((e, i) => [e, seen.has(ids[i])]));
  });
}

export async function writeDecisions(
  sql: Sql,
  topic: string,
  claims: Claims,
  extensions: Extension[],
): Promise<Decisions> {
  if (!DB_ROLES.has(claims.role)) return Object.fromEntries(extensions.map((e) => [e, false]));
  return await rolledBack(sql, async (tx) => {
    await actAs(tx, topic, claims);
    const decided: Decisions = {};
    for (const extension of extensions) {
      try {
        await tx.savepoint((sp) =>
          sp`insert into realtime.messages (topic, extension) values (${topic}, ${extension})`
        );
        decided[extension] = true;
      } catch (err) {
        if ((err as { code?: string }).code !== "42501") throw err;
        decided[extension] = false;
      }
    }
    return decided;
  });
}
