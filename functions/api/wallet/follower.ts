/**
 * The chain follower as a long-lived worker, for processes that live (the local stack server; any
 * self-hosted server), beside the job queue's worker. Hosted, where nothing lives between
 * requests, pg_cron queues a `wallet.index` job once a minute instead (the migration's
 * `agora-follow-chain`); both run the same `followChain`, whose cursor moves by compare-and-set,
 * so any number of followers can run at once.
 *
 * Every `intervalMs` it indexes up to the chain's head. When the node does not answer it says so
 * once (and once when it is back), and keeps trying.
 */
import type { Deps } from "../core/context.ts";
import { isChainDown } from "./chain.ts";
import { followChain } from "./indexer.ts";

export interface ChainFollower {
  stop(): Promise<void>;
}

export function startChainFollower(
  deps: Deps,
  opts: { intervalMs?: number } = {},
): ChainFollower {
  const intervalMs = opts.intervalMs ?? 1_000;
  const stopping = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | null = null;
  let down = false;

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        await followChain(deps, { signal: stopping.signal });
        if (down) deps.log("info", "wallet: the chain node answers again; following blocks");
        down = false;
      } catch (err) {
        if (stopping.signal.aborted) break;
        if (isChainDown(err)) {
          if (!down) deps.log("warn", "wallet: the chain node does not answer; will keep trying");
          down = true;
        } else {
          deps.log("error", "wallet: following the chain failed", {
            error: err instanceof Error ? err.message : String(err),
          });
        }
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, intervalMs);
      });
    }
  })();

  return {
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
