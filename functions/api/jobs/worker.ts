/**
 * A long-lived drain of the job queue, for processes that live (the local stack server; any
 * self-hosted server). Hosted, edge functions do not live between requests, and pg_cron calls the
 * drain route instead (docs/operations.md).
 *
 * It drains whenever a job is queued (NOTIFY `agora_jobs`, sent at the enqueueing commit), and
 * otherwise sleeps until the next job becomes claimable (a retry's run_at, a crashed worker's
 * lease end: `app_private.next_job_at`), at most `idleMs`, which also covers a missed
 * notification. Several processes each run one: `for update skip locked` gives every job to one
 * of them. `stop()` claims nothing more and waits briefly for the jobs in hand; a job cut off by
 * the process ending is claimed again when its lease runs out, or at once when a worker starts
 * again on the same machine and finds the process that held it gone (`releaseGoneWorkers`).
 */
import type { Deps } from "../core/context.ts";
import { drain, type JobRegistry } from "../core/job-queue.ts";
import { serverSql } from "../core/doors.ts";

export interface JobWorker {
  /** Resolves once the worker listens (and has drained what was due at start). */
  ready: Promise<void>;
  stop(): Promise<void>;
}

export interface JobWorkerOptions {
  registry: JobRegistry;
  /** Longest sleep without a notification (default 30 s). */
  idleMs?: number;
  /** How long `stop()` waits for the jobs in hand (default 5 s). */
  stopGraceMs?: number;
}

const CHANNEL = "agora_jobs";
/** Shortest sleep: a due job another drain holds in its claim transaction is gone in a moment. */
const MIN_SLEEP_MS = 25;
/** After a failure (the database is down), look again this soon. */
const RETRY_MS = 1_000;

export function startJobWorker(deps: Deps, opts: JobWorkerOptions): JobWorker {
  const sql = serverSql(deps, "job queue: claim and record");
  const { registry } = opts;
  const kinds = registry.kinds();
  const idleMs = opts.idleMs ?? 30_000;
  const stopping = new AbortController();
  let stopped = false;
  let pumping: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let unlisten: (() => Promise<void>) | null = null;

  const sleep = (ms: number) => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(wake, ms);
  };

  /** Drains until a round claims nothing, then sleeps until the next claimable job. */
  const pump = async () => {
    let next = idleMs;
    try {
      do {
        again = false;
        const result = await drain(deps, { registry, signal: stopping.signal });
        if (result.claimed > 0) again = true;
      } while (again && !stopped);
      if (stopped) return;
      const [{ ms }] = await sql<{ ms: number | null }[]>`
        select (extract(epoch from app_private.next_job_at(${kinds}::text[]) - clock_timestamp())
                * 1000)::float8 as ms`;
      if (ms !== null) next = Math.min(idleMs, Math.max(MIN_SLEEP_MS, Math.ceil(ms) + 5));
    } catch (err) {
      if (stopped) return;
      deps.log("error", "job worker: drain failed", { error: String(err) });
      next = RETRY_MS;
    }
    sleep(next);
  };

  function wake(): void {
    if (stopped) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = pump().finally(() => {
      pumping = null;
    });
  }

  const listen = async (): Promise<void> => {
    while (!stopped) {
      try {
        // The second callback runs on every (re)connection: what was queued meanwhile is drained.
        // On the process's session connection: the pool may be a transaction-mode pooler.
        const listening = await deps.listener.listen(CHANNEL, () => wake(), () => wake());
        unlisten = listening.unlisten;
        if (stopped) await unlisten();
        wake();
        return;
      } catch (err) {
        deps.log("error", "job worker: LISTEN failed; polling until it works", {
          error: String(err),
        });
        sleep(RETRY_MS);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  };

  const ready = releaseGoneWorkers(deps).then(listen).then(async () => {
    await pumping;
  });

  return {
    ready,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      stopping.abort();
      await unlisten?.().catch(() => {});
      if (pumping) {
        let grace: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          pumping,
          new Promise((resolve) => grace = setTimeout(resolve, opts.stopGraceMs ?? 5_000)),
        ]);
        clearTimeout(grace);
      }
    },
  };
}

/**
 * Gives back at once the jobs held by processes of this machine that no longer exist (a server
 * killed and started again): a worker's name is `host:pid:tag` (core/job-queue.ts), and a pid
 * without an entry in /proc is gone. Where that cannot be told (another machine, no /proc, a
 * runtime that does not say its host) the claim is left to its lease. A mistaken release costs a
 * second run of a job, which every handler must bear anyway (at least once). Never fails the
 * worker: a database that is down now is retried by the drain.
 */
export async function releaseGoneWorkers(deps: Deps): Promise<number> {
  let host: string;
  try {
    host = Deno.hostname();
    Deno.statSync("/proc/self");
  } catch {
    return 0;
  }
  try {
    const sql = serverSql(deps, "job queue: claim and record");
    const workers = await sql<{ worker: string }[]>`
      select w as worker from app_private.running_job_workers() w`;
    const gone = workers.map((w) => w.worker).filter((worker) => {
      const parts = worker.split(":");
      const pid = Number(parts.at(-2));
      return parts.length >= 3 && parts.slice(0, -2).join(":") === host &&
        Number.isInteger(pid) && pid > 0 && pid !== Deno.pid && !processExists(pid);
    });
    if (!gone.length) return 0;
    const [{ released }] = await sql<{ released: number }[]>`
      select app_private.release_jobs_of(${gone}::text[]) as released`;
    if (released) {
      deps.log("warn", "job worker: took back the jobs of a process that is gone", {
        workers: gone,
        jobs: released,
      });
    }
    return released;
  } catch (err) {
    deps.log("warn", "job worker: could not check for jobs of gone processes", {
      error: String(err),
    });
    return 0;
  }
}

function processExists(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}
