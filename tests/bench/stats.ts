/**
 * Small pieces every benchmark uses: latency summaries, a logger that only counts errors, the
 * settings that keep rate limits out of the load, the real magic-link sign-in, and the cluster's
 * postmaster (for CPU accounting).
 */
import type { Logger } from "../../functions/_shared/logger.ts";
import type { Sql } from "../../functions/_shared/db.ts";

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

/**
 * Rate limits a benchmark must not hit: every request comes from one IP, sign-ins by the dozen,
 * an admin account under load. Tokens last a day so that a long run or a sweep never refreshes.
 */
export const UNTHROTTLED_ENV: Record<string, string> = {
  AGORA_RATE_SIGNIN_IP: "100000/600",
  AGORA_RATE_SIGNIN_EMAIL: "100000/600",
  AGORA_RATE_VERIFY_IP: "100000/600",
  AGORA_RATE_REFRESH_SESSION: "100000/600",
  AGORA_RATE_ADMIN_USER: "100000000/60",
  AGORA_ACCESS_TOKEN_TTL: "86400",
};

/** What POST /api/auth/verify answers (the fields the benchmarks use). */
export interface VerifiedSession {
  accessToken: string;
  user: { id: string; role: string };
}

/**
 * The real magic-link flow over HTTP: the sign-in request, the link from the dev mailbox
 * (`dev.mail`, read through `sql`), then verify.
 */
export async function signInByMagicLink(
  base: string,
  sql: Sql,
  email: string,
): Promise<VerifiedSession> {
  const post = (path: string, body: unknown) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const sent = await post("/api/auth/signin", { provider: "email", email });
  if (sent.status !== 202) throw new Error(`signin ${email}: ${sent.status} ${await sent.text()}`);
  await sent.body?.cancel();
  const [mail] = await sql<{ links: string[] }[]>`
    select links from dev.mail where lower(to_address) = lower(${email}) order by id desc limit 1`;
  if (!mail) throw new Error(`signin: no mail for ${email} in dev.mail`);
  const token = new URL(mail.links[0]).searchParams.get("token");
  const verified = await post("/api/auth/verify", { token });
  if (verified.status !== 200) {
    throw new Error(`verify ${email}: ${verified.status} ${await verified.text()}`);
  }
  return await verified.json();
}

/** The throwaway cluster's postmaster, or null when /proc cannot tell (then Postgres shows 0). */
export async function postmasterPid(dataDir: string): Promise<number | null> {
  try {
    const pid = Number((await Deno.readTextFile(`${dataDir}/postmaster.pid`)).split("\n")[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
