/**
 * RateLimit headers on every answer of a rate-limited group, not only on 429s: a request that
 * counts against several limits reports the tightest one.
 */
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { type RateDecision, rateHeaders } from "../../_shared/rate-limit.ts";

export type RateRecorder = (decision: RateDecision) => void;

export function rateRecorder(c: Context<AppEnv>): RateRecorder {
  let tightest: RateDecision | null = null;
  return (decision) => {
    if (tightest && decision.remaining >= tightest.remaining) return;
    tightest = decision;
    for (const [name, value] of Object.entries(rateHeaders(decision))) c.header(name, value);
  };
}
