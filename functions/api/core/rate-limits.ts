/**
 * The one way a request is counted against a rate limit (sign-in, verification, refresh, the
 * admin API): count the hit in Postgres, report the decision (the RateLimit headers of the
 * answer, core/rate-headers.ts), and on refusal record a `rate_limit.exceeded` security event and throw
 * 429 with Retry-After.
 */
import type { Deps } from "./context.ts";
import type { RateRecorder } from "./rate-headers.ts";
import { hitRateLimit, rateLimitedError } from "../../_shared/rate-limit.ts";
import type { RateLimitRule } from "../../_shared/settings.ts";
import { serverSql } from "./doors.ts";

/** Who is asking, for the security event; `rate` receives every decision (headers). */
export interface RateContext {
  ip: string | null;
  userAgent: string | null;
  rate?: RateRecorder;
}

export interface RateLimitCheck {
  /** The counter, e.g. `signin:ip:<ip>`. */
  bucket: string;
  rule: RateLimitRule;
  /** The group named in the security event (`signin_ip`, `refresh`, `admin`, ...). */
  group: string;
  userId?: string | null;
  /** More for the security event (never secrets). */
  details?: Record<string, unknown>;
}

/**
 * Counts one hit; throws `rate_limited` (429) when over the limit.
 *
 * @example
 * await enforceRateLimit(deps, { ip, userAgent, rate: rateRecorder(c) }, {
 *   bucket: `admin:user:${user.id}`, rule: deps.settings.rateLimits.adminPerUser,
 *   group: "admin", userId: user.id,
 * });
 */
export async function enforceRateLimit(
  deps: Deps,
  ctx: RateContext,
  check: RateLimitCheck,
): Promise<void> {
  const sql = serverSql(deps, "rate limits");
  const decision = await hitRateLimit(sql, check.bucket, check.rule);
  ctx.rate?.(decision);
  if (decision.allowed) return;
  await deps.security({
    type: "rate_limit.exceeded",
    severity: "warning",
    userId: check.userId ?? null,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    details: { group: check.group, ...check.details },
  });
  throw rateLimitedError(decision);
}
