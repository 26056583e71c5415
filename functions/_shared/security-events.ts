/**
 * Security events: written by the server's own connection (users cannot write them), read by
 * ADMINs through RLS. Recording never fails the request it describes: a failure is logged. The
 * text a request carried into an event is made storable first (storable.ts), so no NUL or lone
 * surrogate in a reason or a path can lose the event.
 */
import type { Sql } from "./db.ts";
import type { Logger } from "./logger.ts";
import { storable, storableText } from "./storable.ts";

export type SecuritySeverity = "info" | "warning" | "critical";

export interface SecurityEvent {
  type: string;
  severity?: SecuritySeverity;
  userId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  details?: Record<string, unknown>;
}

export type SecurityRecorder = (event: SecurityEvent) => Promise<void>;

export function createSecurityRecorder(sql: Sql, log: Logger): SecurityRecorder {
  return async (event) => {
    try {
      await sql`
        insert into app.security_events (type, severity, user_id, ip, user_agent, details)
        values (${event.type}, ${event.severity ?? "info"}, ${event.userId ?? null},
                ${event.ip ?? null},
                ${event.userAgent ? storableText(event.userAgent.slice(0, 1024)) : null},
                ${sql.json(storable(event.details ?? {}) as never)})`;
    } catch (err) {
      log("error", "security event not recorded", { type: event.type, error: String(err) });
    }
  };
}
