/**
 * Rate limits counted in Postgres (`app_private.hit_rate_limit`), so they hold across any number
 * of stateless API instances. A fixed window per bucket; one upsert per check.
 */
import type { Sql } from "./db.ts";
import { ApiError } from "./errors.ts";
import type { RateLimitRule } from "./settings.ts";

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export async function hitRateLimit(
  sql: Sql,
  bucket: string,
  rule: RateLimitRule,
): Promise<RateDecision> {
  const [row] = await sql<{ hits: number; reset_at: Date }[]>`
    select hits, reset_at from app_private.hit_rate_limit(${bucket}, ${rule.windowSeconds})`;
  const resetSeconds = Math.max(1, Math.ceil((row.reset_at.getTime() - Date.now()) / 1000));
  return {
    allowed: row.hits <= rule.limit,
    limit: rule.limit,
    remaining: Math.max(0, rule.limit - row.hits),
    resetSeconds,
  };
}

/** The IETF RateLimit headers (and Retry-After when refused) for a decision. */
export function rateHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Limit": String(decision.limit),
    "RateLimit-Remaining": String(decision.remaining),
    "RateLimit-Reset": String(decision.resetSeconds),
  };
  if (!decision.allowed) headers["Retry-After"] = String(decision.resetSeconds);
  return headers;
}

export function rateLimitedError(decision: RateDecision): ApiError {
  return new ApiError(
    "rate_limited",
    `Too many requests; try again in ${decision.resetSeconds} s.`,
    undefined,
    rateHeaders(decision),
  );
}
