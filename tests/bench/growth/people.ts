/**
 * The users every domain of the growth benchmark builds on: `10,000 × scale` of them, made by one
 * set-based INSERT with ids a seed can compute in SQL (`personId("i")`), so a domain's seed joins
 * people by number instead of reading 100,000 ids back. User 0 is the heavy user, 1 the typical
 * one, 2 an ADMIN; the rest are 70 % MEMBER, 25 % SUBSCRIBER and 5 % VISITOR, 1 in 200 suspended,
 * with sign-up times spread over the last year. The three acting users get a live session each,
 * which the claims name (RLS and the topic checks read the session row).
 */
import type { Sql } from "../../../functions/_shared/db.ts";
import type { GrowthPeople } from "./types.ts";

/** The SQL expression of user number `n` (an SQL expression itself)'s id. */
export const personId = (n: string) =>
  `('9a000000-0000-4000-8000-' || lpad((${n})::text, 12, '0'))::uuid`;

/** The id of user number `n`, in TypeScript. */
export const personIdOf = (n: number) => `9a000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

export const USERS_PER_SCALE = 10_000;

export async function seedPeople(
  sql: Sql,
  scale: number,
): Promise<{ people: GrowthPeople; sessions: Map<string, string> }> {
  const count = USERS_PER_SCALE * scale;
  await sql.unsafe(`
    insert into app.users (id, email, name, role, status, created_at, last_sign_in_at)
    select ${personId("i")}, 'person' || i || '@growth.example', 'Person ' || i,
      (case when i = 2 then 'ADMIN'
            when i < 2 or i % 20 < 14 then 'MEMBER'
            when i % 20 < 19 then 'SUBSCRIBER'
            else 'VISITOR' end)::app.user_role,
      (case when i > 2 and i % 200 = 7 then 'suspended' else 'active' end)::app.user_status,
      now() - interval '365 days' + (i::float / ${count}) * interval '364 days',
      now() - (i % 30) * interval '1 day'
    from generate_series(0, ${count - 1}) i`);
  const sessions = new Map<string, string>();
  for (const n of [0, 1, 2]) {
    const [row] = await sql<{ id: string }[]>`
      insert into app.sessions (user_id, provider, expires_at)
      values (${personIdOf(n)}, 'email', now() + interval '1 day') returning id`;
    sessions.set(personIdOf(n), row.id);
  }
  await sql`analyze app.users`;
  await sql`analyze app.sessions`;
  return {
    people: {
      count,
      userIds: Array.from({ length: count }, (_, i) => personIdOf(i)),
      heavy: personIdOf(0),
      typical: personIdOf(1),
      admin: personIdOf(2),
    },
    sessions,
  };
}
