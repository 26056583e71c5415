/**
 * What a domain adds to the growth benchmark (`npm run bench -- growth`, tests/bench/growth.ts):
 * a seed that fills its tables at a given scale, and the operations its endpoints run, each
 * calling the endpoint's own query functions so that the benchmark measures the SQL the API sends
 * (captured from the driver and replayed under `EXPLAIN (ANALYZE, BUFFERS)` with the same role
 * and claims), never a copy of it.
 */
import type { DbClaims, Sql, Tx } from "../../../functions/_shared/db.ts";

/** The people every domain's seed and operations may use; the runner creates them first. */
export interface GrowthPeople {
  /** How many users exist (`app.users`), ids in `userIds` order: `10_000 × scale`. */
  count: number;
  /** Every user's id, in creation order (index 0 is the heavy user). */
  userIds: string[];
  /** The user with the most of everything (conversations, notifications, orders, …). */
  heavy: string;
  /** A user with a typical amount (a few conversations, a few hundred notifications). */
  typical: string;
  /** An ADMIN. */
  admin: string;
}

export interface GrowthContext {
  /** The superuser connection of the database being filled or measured. */
  sql: Sql;
  /** 1 for the small size, 10 for the large one (or what `--scales` says). */
  scale: number;
  people: GrowthPeople;
  /** The claims `withUser` would set for this user (role `authenticated`, a live session). */
  claims(userId: string): DbClaims;
}

export interface GrowthOperation {
  /** What a reader recognises, e.g. "conversation list, heavy user, first page". */
  name: string;
  /** The endpoint or job, e.g. "GET /api/conversations" or "job settlement.daily". */
  endpoint: string;
  /**
   * Whose request this is: a user id (the runner runs `run` as `withUser` would, with
   * `ctx.claims(id)`), or null for server work (jobs) that runs with the pool's own role.
   */
  as: string | null;
  /**
   * "page": a paged read, which must cost the same at both sizes (ratio near 1, at most 50 ms);
   * "work": a job whose cost follows the work it is given (the settlement of one day's sales).
   */
  kind: "page" | "work";
  /**
   * For "work": how much work the operation is given at this scale (e.g. the sales a settlement
   * settles); the runner prints the cost per 1,000 units at both sizes, which should be alike.
   */
  units?: number;
  /**
   * Calls the endpoint's query functions in the transaction given (always rolled back at the
   * end, so writes such as mark-read can run again). Throws if the result is not what the
   * operation expects (an empty page where the seed put rows), so a fast wrong answer fails.
   */
  run(tx: Tx, ctx: GrowthContext): Promise<unknown>;
}

export interface GrowthDomain {
  /** The domain, as its folder under functions/api is named. */
  domain: string;
  /**
   * Fills the domain's tables for `ctx.scale` with set-based SQL as the superuser (triggers may
   * be off with `session_replication_role = replica` where they only derive events; then the
   * seed must fill what those triggers maintain itself). Seeds run in the order of
   * growth/index.ts, after the people exist.
   */
  seed(ctx: GrowthContext): Promise<void>;
  /**
   * Runs after every domain's seed (before VACUUM ANALYZE): for what must see all the seeded
   * data, such as the analytics rollups recounted from the tables other seeds filled with their
   * triggers off.
   */
  settle?(ctx: GrowthContext): Promise<void>;
  /** The operations to measure, built after the seed (they may look up ids it made). */
  operations(ctx: GrowthContext): Promise<GrowthOperation[]>;
}
