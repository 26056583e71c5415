/**
 * Structured JSON logs on stdout, one object per line. Callers pass facts, never secrets:
 * tokens, cookies and authorization headers are not logged anywhere in the code base, and
 * `redact` strips any key that looks like one as a second line of defence.
 */
import type { Settings } from "./settings.ts";

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
const SECRET_KEY = /(token|secret|password|authorization|cookie|key)/i;

export type Logger = (
  level: "debug" | "info" | "warn" | "error",
  msg: string,
  fields?: Record<string, unknown>,
) => void;

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = SECRET_KEY.test(key) ? "[redacted]" : value;
  }
  return out;
}

export function createLogger(level: Settings["logLevel"]): Logger {
  const min = LEVELS[level];
  return (lvl, msg, fields = {}) => {
    if (LEVELS[lvl] < min) return;
    console.log(
      JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...redact(fields) }),
    );
  };
}
