/**
 * The wallet's jobs (functions/api/wallet/transfers.ts and indexer.ts hold the logic):
 *
 * - `wallet.broadcast` (queued by `app_private.submit_wallet_transaction` when a transfer is
 *   confirmed; dedupe key per transaction): sends the stored signed bytes and checks the receipt.
 *   Idempotent: it acts only on a transfer still `submitted`, and sending the same bytes again is
 *   harmless (the node already has them, or they are mined: one nonce, one transaction).
 * - `wallet.watch` (queued by the broadcast, by itself and by a rollback): one receipt check of a
 *   submitted transfer; queues the next check until the transfer has `wallet.confirmations`.
 * - `wallet.index` (queued by pg_cron once a minute, hosted; the local stack also follows blocks
 *   itself): runs the chain follower. Idempotent: the follower's cursor moves by compare-and-set.
 *   With the node down it retries twice, then ends (the next minute's job goes on from the cursor).
 */
import { z } from "zod";
import { defineJob, RetryJobAfter } from "../core/job-queue.ts";
import { broadcastTransfer, outageDelay, watchTransfer } from "./transfers.ts";
import { followChain } from "./indexer.ts";
import { isChainDown } from "./chain.ts";

export const walletBroadcast = defineJob({
  kind: "wallet.broadcast",
  payload: z.object({ transactionId: z.uuid() }),
  maxAttempts: 25,
  async run({ transactionId }, { deps, job }) {
    await broadcastTransfer(
      { deps, attempt: job.attempt, maxAttempts: job.maxAttempts },
      transactionId,
    );
  },
});

export const walletWatch = defineJob({
  kind: "wallet.watch",
  payload: z.object({ transactionId: z.uuid(), round: z.number().int().min(1).default(1) }),
  maxAttempts: 100,
  async run({ transactionId, round }, { deps, job }) {
    await watchTransfer(
      { deps, attempt: job.attempt, maxAttempts: job.maxAttempts },
      transactionId,
      round,
    );
  },
});

export const walletIndex = defineJob({
  kind: "wallet.index",
  payload: z.object({}),
  maxAttempts: 3,
  // A catch-up over many blocks (after the node or the follower was down) reads them in ranges.
  leaseSeconds: 60,
  async run(_payload, { deps, job, signal }) {
    // Nothing to follow: no node configured, or the wallet turned off.
    if (!deps.chain.url || !(await deps.config.get()).features.wallet) return;
    try {
      await followChain(deps, { maxMs: 40_000, signal });
    } catch (err) {
      if (isChainDown(err)) {
        // A job of a minute whose node stayed down: the next minute's job follows from the same
        // cursor, so this one ends instead of being dead-lettered as if work were lost.
        if (job.attempt >= job.maxAttempts) {
          deps.log("warn", "wallet: the chain node does not answer; the next index job follows", {
            jobId: job.id,
          });
          return;
        }
        throw new RetryJobAfter(outageDelay(job.attempt), "the chain node does not answer");
      }
      throw err;
    }
  },
});
