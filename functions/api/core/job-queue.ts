/**
 * The job queue from TypeScript: job kinds and their registry, enqueueing, and `drain`, which
 * claims due jobs, runs their handlers and records each outcome. The queue itself is
 * `app_private.jobs` (supabase/migrations/20261121090100_jobs.sql; its current SQL in
 * supabase/schema/jobs.sql); docs/operations.md says how it is drained hosted (pg_cron + pg_net
 * → `POST /api/internal/jobs/drain`) and locally (the stack server's worker, jobs/worker.ts).
 *
 * A handler gets the payload (parsed by its kind's zod schema) and a context with the deps. It
 * returns to succeed, throws `RetryJobAfter` when it was told when to come back (an HTTP 429's
 * Retry-After: see `retryAfterSeconds`), throws `PermanentJobFailure` when retrying cannot help
 * (the job is dead-lettered at once), and throws anything else for a retry after the backoff. A
 * payload its schema refuses is a permanent failure.
 *
 * Idempotency: a job runs at least once and may run more than once. A process can crash (or its
 * lease run out) after the handler's effect and before `complete`, and the job is then claimed
 * again. So every handler must be harmless to repeat:
 * - calls to a provider carry an idempotency key derived from the job (`job:<id>` or, better, the
 *   domain row the job is about, e.g. `refund:<orderId>`): Stripe's `Idempotency-Key` header;
 * - what was delivered is recorded in a row keyed by what must happen once (a delivery row keyed
 *   by notification and recipient, a transaction row keyed by nonce) and checked before acting;
 *   the handler inserts it `on conflict do nothing` and skips what is already there;
 * - removals treat "already gone" as success (storage.delete: a missing file is fine);
 * - a job that fans out (one notification to many recipients) enqueues one job per recipient
 *   with a dedupe key, rather than looping over recipients in one job.
 */
import { z } from "zod";
import type { Deps } from "./context.ts";
import type { Sql, Tx } from "../../_shared/db.ts";
import { serverSql } from "./doors.ts";
import { isConnectionGone } from "../../_shared/errors.ts";

/** What a handler gets besides its payload. */
export interface JobContext {
  deps: Deps;
  job: {
    id: string;
    kind: string;
    /** 1 on the first attempt. */
    attempt: number;
    maxAttempts: number;
    createdAt: Date;
  };
  /**
   * Aborted when the lease is about to run out (the drain stops waiting and records a failure)
   * or the process is stopping: pass it to `fetch` and stop early.
   */
  signal: AbortSignal;
}

/** One kind of job: its name, the shape of its payload and its handler. */
export interface JobKind<P = unknown> {
  /** Lowercase, e.g. `storage.delete`, `push.send`, `stripe.refund`. */
  kind: string;
  payload: z.ZodType<P>;
  /** Must be idempotent (see the module's documentation). */
  run(payload: P, ctx: JobContext): Promise<void>;
  /**
   * How long one attempt may take before the job is claimable again; default 30 s. A longer one
   * is how long a crashed attempt's job waits, so set it only for work that needs it, and say why.
   */
  leaseSeconds?: number;
  /** Attempts before the job is dead-lettered, for jobs enqueued from TypeScript; default 10. */
  maxAttempts?: number;
}

/** Declares a job kind (the identity function, for the payload's type inference). */
export function defineJob<P>(kind: JobKind<P>): JobKind<P> {
  return kind;
}

/** Thrown by a handler that was told when to try again (e.g. HTTP 429 with Retry-After). */
export class RetryJobAfter extends Error {
  constructor(readonly seconds: number, message = `retry after ${seconds} s`) {
    super(message);
    this.name = "RetryJobAfter";
  }
}

/** Thrown by a handler when retrying cannot help: the job is dead-lettered at once. */
export class PermanentJobFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentJobFailure";
  }
}

/**
 * Seconds to wait from an HTTP `Retry-After` header (delay-seconds or an HTTP date), or null when
 * there is none or it cannot be read.
 */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (!/^[A-Za-z]{3}/.test(text)) return null; // HTTP dates start with the day: "Sun, 06 Nov …"
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

const KIND = /^[a-z][a-z0-9_.:-]{0,99}$/;
/**
 * A kind's lease unless it says otherwise: how long a job a crash interrupted waits before it is
 * claimed again (a payment's application, a transfer's broadcast). Short, because most handlers
 * take milliseconds; a kind whose attempt may take longer sets `leaseSeconds` and says why.
 */
const DEFAULT_LEASE_SECONDS = 30;

function leaseOf(kind: JobKind): number {
  return kind.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
}

/** The job kinds a process can run, by name. */
export class JobRegistry {
  readonly #kinds = new Map<string, JobKind>();

  constructor(kinds: readonly JobKind[] = []) {
    for (const kind of kinds) this.register(kind);
  }

  register<P>(kind: JobKind<P>): this {
    if (!KIND.test(kind.kind)) throw new Error(`invalid job kind: ${kind.kind}`);
    if (this.#kinds.has(kind.kind)) throw new Error(`job kind registered twice: ${kind.kind}`);
    this.#kinds.set(kind.kind, kind as JobKind);
    return this;
  }

  get(kind: string): JobKind | undefined {
    return this.#kinds.get(kind);
  }

  /** The names; a drain claims only these. */
  kinds(): string[] {
    return [...this.#kinds.keys()];
  }

  /** Each kind's lease in seconds, in the order of `kinds()`: what a claim asks for per kind. */
  leases(): number[] {
    return [...this.#kinds.values()].map(leaseOf);
  }
}

export interface EnqueueOptions {
  /** Not before this time (default: now). */
  runAt?: Date;
  /** Enqueueing the same key again returns the existing job. */
  dedupeKey?: string;
  maxAttempts?: number;
}

/**
 * Enqueues a job from TypeScript, in `sql`'s transaction when it is one (the job then exists only
 * if that transaction commits). Runs with the connection's own rights: a server path, never
 * inside `withUser` (the API roles cannot reach the queue). Returns the job's id.
 */
export async function enqueueJob<P>(
  sql: Sql | Tx,
  kind: JobKind<P>,
  payload: P,
  opts: EnqueueOptions = {},
): Promise<string> {
  const parsed = kind.payload.parse(payload);
  const [row] = await sql<{ id: string }[]>`
    select app_private.enqueue_job(
      ${kind.kind}, ${sql.json(parsed as never)}::jsonb, ${opts.runAt ?? null}::timestamptz,
      ${opts.dedupeKey ?? null}, ${opts.maxAttempts ?? kind.maxAttempts ?? 10}
    )::text as id`;
  return row.id;
}

export interface DrainOptions {
  /** The kinds to run: `appJobs()` (registry.ts), or a test's own. */
  registry: JobRegistry;
  /** Stop claiming after this many jobs (default 100). */
  maxJobs?: number;
  /** Stop claiming after this long (default 20 s); claimed jobs still finish. */
  maxMs?: number;
  /** Jobs run at a time (default 10); more are claimed as half of them finish. */
  batch?: number;
  /** Who claims, recorded in `claimed_by` (default: host and process). */
  worker?: string;
  /** Stop claiming; running handlers see it through `ctx.signal`. */
  signal?: AbortSignal;
}

export interface DrainResult {
  /** Jobs claimed by this drain. */
  claimed: number;
  done: number;
  /** Failed and queued again (backoff or Retry-After). */
  retried: number;
  /** Failed for good: dead-lettered. */
  dead: number;
  /** Finished after their lease ran out and another drain took them: outcome not recorded. */
  lost: number;
}

export interface JobRow {
  id: string;
  kind: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  claim_token: string;
  created_at: Date;
}

let processWorker: string | undefined;

/** `host:pid` (or less, where the runtime does not tell), plus a random tag per process. */
function defaultWorker(): string {
  if (processWorker) return processWorker;
  const parts: string[] = [];
  try {
    parts.push(Deno.hostname());
  } catch {
    // not allowed or not available (hosted edge runtime)
  }
  try {
    parts.push(String(Deno.pid));
  } catch {
    // not available
  }
  parts.push(crypto.randomUUID().slice(0, 8));
  processWorker = parts.join(":");
  return processWorker;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}

/**
 * Claims up to `batch` due jobs of `kinds` for `worker` (`app_private.claim_jobs`: `for update
 * skip locked`, each kind's lease from `leases`, e.g. "60 seconds"). Its cost follows the due
 * jobs, not the done ones kept until they are pruned (the growth benchmark claims with 1M done).
 */
export async function claimJobs(
  sql: Sql | Tx,
  kinds: string[],
  worker: string,
  batch: number,
  leases: string[],
): Promise<JobRow[]> {
  return await sql<JobRow[]>`
    select id::text, kind, payload, attempts, max_attempts, claim_token, created_at
    from app_private.claim_jobs(${kinds}::text[], ${worker}, ${batch}, ${leases}::interval[])`;
}

/**
 * Claims due jobs of the registry's kinds (`for update skip locked`: concurrent drains never get
 * the same job), runs up to `batch` handlers at a time, claiming more as they finish, and records
 * every outcome. Returns, once the handlers in hand are done, when nothing is due, or `maxJobs`
 * were claimed, or `maxMs` passed.
 */
export async function drain(deps: Deps, opts: DrainOptions): Promise<DrainResult> {
  const sql = serverSql(deps, "job queue: claim and record");
  const registry = opts.registry;
  const kinds = registry.kinds();
  const maxJobs = opts.maxJobs ?? 100;
  const deadline = Date.now() + (opts.maxMs ?? 20_000);
  const batch = Math.max(1, Math.min(opts.batch ?? 10, 1000));
  const worker = opts.worker ?? defaultWorker();
  const leases = registry.leases().map((seconds) => `${seconds} seconds`);
  const result: DrainResult = { claimed: 0, done: 0, retried: 0, dead: 0, lost: 0 };
  if (!kinds.length) return result;

  // A window of `batch` jobs in flight, topped up whenever half of it is free: one slow handler
  // holds its own slot, not the next batch (waiting for a whole batch made every job as slow as
  // the slowest of its batch).
  const running = new Set<Promise<void>>();
  const refill = Math.max(1, Math.floor(batch / 2));
  let failure = null as { err: unknown } | null;
  // Nothing was due at the last claim: claim again only once a handler has finished (it may have
  // queued more work, which this drain then runs too).
  let idle = false;
  for (;;) {
    const stop = result.claimed >= maxJobs || Date.now() >= deadline || opts.signal?.aborted ||
      failure !== null;
    if (!stop && !idle && batch - running.size >= refill) {
      const rows = await claimJobs(
        sql,
        kinds,
        worker,
        Math.min(batch - running.size, maxJobs - result.claimed),
        leases,
      );
      result.claimed += rows.length;
      for (const row of rows) {
        const job: Promise<void> = runOne(deps, registry.get(row.kind)!, row, opts.signal)
          .then((outcome) => {
            result[outcome]++;
          }, (err) => {
            // Recording an outcome failed (the database away past the job's lease, or
            // another error): no more claims; the others finish, then the drain fails with
            // the first error.
            failure ??= { err };
          })
          .finally(() => running.delete(job));
        running.add(job);
      }
      if (rows.length) continue;
      idle = true;
    }
    if (!running.size) break;
    await Promise.race(running);
    idle = false;
  }
  if (failure) throw failure.err;
  return result;
}

type Outcome = "done" | "retried" | "dead" | "lost";

/**
 * A job's outcome written down, tried again while the database is away (a restart, a failover)
 * until the job's lease ends. The handler's work is committed by then: left unrecorded, the job
 * would stay `running` until its lease ran out, then run again. Past the lease another drain may
 * hold the job, so the error is the drain's (it stops claiming; the job is taken back later).
 */
async function recorded<T>(leaseEnds: number, write: () => Promise<T>): Promise<T> {
  for (let wait = 100;; wait = Math.min(wait * 2, 2_000)) {
    try {
      return await write();
    } catch (err) {
      if (!isConnectionGone(err) || Date.now() + wait >= leaseEnds) throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

async function runOne(
  deps: Deps,
  kind: JobKind,
  row: JobRow,
  stopping: AbortSignal | undefined,
): Promise<Outcome> {
  const sql = serverSql(deps, "job queue: claim and record");
  const fields = { jobId: row.id, kind: row.kind, attempt: row.attempts };
  // The claim was just made: its lease ends about then.
  const leaseEnds = Date.now() + leaseOf(kind) * 1000;
  let failure: { error: string; retryAfter: number | null; permanent: boolean } | null = null;

  const parsed = kind.payload.safeParse(row.payload);
  if (!parsed.success) {
    failure = {
      error: `invalid payload: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
      retryAfter: null,
      permanent: true,
    };
  } else {
    // Stop waiting a second before the lease ends, so the failure is recorded by this claim.
    const leaseMs = leaseOf(kind) * 1000;
    const controller = new AbortController();
    const onStop = () => controller.abort(new Error("the worker is stopping"));
    stopping?.addEventListener("abort", onStop, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`timed out after ${Math.round(leaseMs / 1000) - 1} s`);
        controller.abort(error);
        reject(error);
      }, Math.max(leaseMs - 1000, 100));
    });
    try {
      await Promise.race([
        kind.run(parsed.data, {
          deps,
          job: {
            id: row.id,
            kind: row.kind,
            attempt: row.attempts,
            maxAttempts: row.max_attempts,
            createdAt: row.created_at,
          },
          signal: controller.signal,
        }),
        timedOut,
      ]);
    } catch (err) {
      failure = {
        error: errorText(err),
        retryAfter: err instanceof RetryJobAfter && Number.isFinite(err.seconds)
          ? Math.max(0, err.seconds)
          : null,
        permanent: err instanceof PermanentJobFailure,
      };
    } finally {
      clearTimeout(timer);
      stopping?.removeEventListener("abort", onStop);
    }
  }

  if (!failure) {
    const [{ ok }] = await recorded(leaseEnds, () =>
      sql<{ ok: boolean }[]>`
        select app_private.complete_job(${row.id}::bigint, ${row.claim_token}::uuid) as ok`);
    if (!ok) deps.log("warn", "job finished after its lease was taken over", fields);
    return ok ? "done" : "lost";
  }
  const { error, permanent } = failure;
  const retryAfter = failure.retryAfter === null ? null : `${failure.retryAfter} seconds`;
  const [{ state }] = await recorded(leaseEnds, () =>
    sql<{ state: string | null }[]>`
      select app_private.fail_job(
        ${row.id}::bigint, ${row.claim_token}::uuid, ${error}, ${retryAfter}::interval, ${permanent}
      ) as state`);
  if (state === null) {
    deps.log("warn", "job failed after its lease was taken over", {
      ...fields,
      error: failure.error,
    });
    return "lost";
  }
  if (state === "dead") {
    deps.log("error", "job dead-lettered", { ...fields, error: failure.error });
    return "dead";
  }
  deps.log("warn", "job failed; it will be retried", { ...fields, error: failure.error });
  return "retried";
}
