/**
 * Group commit for reactions: the reactions that reach this process for one message while its
 * previous batch is in flight are applied together, in one transaction
 * (`setReactionsAs` → `app_private.set_reactions_as`), instead of one transaction each.
 *
 * Why: a message's reactions take turns under one lock held until commit (so the live events
 * carry their counts in commit order), and the commit's WAL flush is inside it; one at a time, a
 * hot message took about one change per commit latency (36–45 a second on a busy machine). A
 * batch pays that flush once for all its items (docs/messaging.md, "Reactions in batches").
 *
 * How: per message, at most one batch in flight. The first reaction starts a batch at once (on the
 * next microtask, so reactions submitted in the same tick share it); the ones that arrive while it
 * runs wait and form the next batch when it is done. A batch holds at most one item per person (a
 * person's second reaction waits for the next batch, so every answer, the counts after the batch
 * and the caller's own `me`, is the state after that caller's own change) and at most
 * MAX_BATCH items (each writing item is a subtransaction; Postgres keeps 64 per transaction in
 * shared memory before other sessions' snapshots get slower). Each caller gets their own answer or
 * their own error (404, 422); a failure of the whole statement (the database away) is every
 * item's error.
 *
 * Several server processes each batch their own reactions and still take turns on the lock.
 */
import type { DbClaims, Sql } from "../../_shared/db.ts";
import { type ReactionItem, type ReactionsJson, setReactionsAs } from "./messages.queries.ts";

/** The most reactions one transaction applies (see above: fewer than 64 subtransactions). */
export const MAX_BATCH = 50;

interface Waiting extends ReactionItem {
  resolve: (answer: ReactionsJson) => void;
  reject: (err: unknown) => void;
}

/** Per message: the reactions waiting for the next batch, while one is in flight. */
type Queue = Waiting[];

/** Coalesces reactions per message for one pool (one server process). */
export class ReactionBatches {
  readonly #queues = new Map<string, Queue>();

  constructor(readonly sql: Sql, readonly maxBatch = MAX_BATCH) {}

  /**
   * Adds (`present`) or removes the caller's reaction, in the message's next batch. Resolves to
   * the message's reactions after that batch, `me` for the caller; rejects with the caller's own
   * error (an `AGnnn` SQLSTATE error, mapped by the app's error handler).
   */
  set(
    claims: DbClaims,
    input: { messageId: string; emoji: string; present: boolean },
  ): Promise<ReactionsJson> {
    return new Promise((resolve, reject) => {
      const { messageId, emoji, present } = input;
      const item = { claims, emoji, present, resolve, reject };
      const queue = this.#queues.get(messageId);
      if (queue) {
        queue.push(item);
        return;
      }
      this.#queues.set(messageId, [item]);
      queueMicrotask(() => this.#drain(messageId));
    });
  }

  /** How many reactions to the message wait for its next batch (none without a batch in flight). */
  waiting(messageId: string): number {
    return this.#queues.get(messageId)?.length ?? 0;
  }

  /** Runs the message's batches one after the other until nobody waits. */
  async #drain(messageId: string): Promise<void> {
    const queue = this.#queues.get(messageId)!;
    while (queue.length > 0) {
      const batch = takeBatch(queue, this.maxBatch);
      try {
        const result = await setReactionsAs(this.sql, messageId, batch);
        batch.forEach((item, i) => {
          const outcome = result.items[i];
          if ("error" in outcome) {
            const { code, message, hint, detail } = outcome.error;
            item.reject(Object.assign(new Error(message), { code, hint, detail }));
            return;
          }
          item.resolve({
            messageId,
            reactions: result.reactions.map((r) => ({ ...r, me: outcome.mine.includes(r.emoji) })),
          });
        });
      } catch (err) {
        for (const item of batch) item.reject(err);
      }
    }
    // Nothing awaited since the last check: a reaction arriving now starts a new queue.
    this.#queues.delete(messageId);
  }
}

/**
 * Takes the next batch off the front of the queue, in arrival order: at most `max` items and one
 * per person; a person's later items stay, in order, for the batches after.
 */
export function takeBatch<T extends { claims: DbClaims }>(queue: T[], max: number): T[] {
  const batch: T[] = [];
  const people = new Set<string>();
  const rest: T[] = [];
  for (const item of queue) {
    if (batch.length < max && !people.has(item.claims.sub)) {
      batch.push(item);
      people.add(item.claims.sub);
    } else {
      rest.push(item);
    }
  }
  queue.splice(0, queue.length, ...rest);
  return batch;
}

const byPool = new WeakMap<Sql, ReactionBatches>();

/** The process's coalescer for this pool (one per pool, so one per server process). */
export function reactionBatches(sql: Sql): ReactionBatches {
  let batches = byPool.get(sql);
  if (!batches) {
    batches = new ReactionBatches(sql);
    byPool.set(sql, batches);
  }
  return batches;
}
