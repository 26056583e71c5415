/** Small pieces every benchmark uses: latency summaries and a logger that only counts errors. */
import type { Logger } from "../../functions/_shared/logger.ts";

export interface Summary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentiles of a sample (milliseconds), or null when it is empty. */
export function summarize(values: ArrayLike<number>): Summary | null {
  if (!values.length) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  let total = 0;
  for (const v of sorted) total += v;
  return {
    count: sorted.length,
    p50: rank(0.5),
    p95: rank(0.95),
    p99: rank(0.99),
    max: sorted[sorted.length - 1],
    mean: total / sorted.length,
  };
}

/**
 * Silent logs, but errors counted: a run with server errors is a failed run, not a figure.
 * Keeps the first five for the report.
 */
export function countingLogger(): { log: Logger; errors: { count: number; samples: string[] } } {
  const errors = { count: 0, samples: [] as string[] };
  const log: Logger = (level, msg, fields) => {
    if (level !== "error") return;
    errors.count++;
    if (errors.samples.length < 5) errors.samples.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  };
  return { log, errors };
}
