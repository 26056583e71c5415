/**
 * The notifications' jobs: sending push and e-mail deliveries, and bulk batches.
 *
 * - `notifications.deliver` { notificationIds }: queued by `app_private.notify_many` for each new
 *   notification with deliveries (due when its quiet hours end), and by `take_deliveries` for
 *   rows that quiet hours held back again.
 * - `notifications.batch` { batchId }: queued by `app.create_notification_batch`; splits the
 *   audience into user-id ranges and queues one chunk job per range (it writes no notification).
 * - `notifications.batch_chunk` { batchId, chunk }: writes the chunk's inbox rows and deliveries
 *   in a transaction of its own (once), then its live events (once) and its deliveries.
 * - `notifications.read_marks` { userId }: queued by a read-all that recorded a mark instead of
 *   updating every row (`app.mark_all_notifications_read`); writes the covered rows' read_at a
 *   batch at a time (`app_private.apply_read_marks`) until no mark of the user remains.
 * - `notifications.digest` { conversationId }: queued (a second later) by the first message of a
 *   quiet conversation; tells the other participants of every message since the last digest
 *   (`app_private.claim_message_digest`, then `app_private.digest_conversation`).
 *
 * Never twice: every delivery is a row keyed by notification and device (or notification, for
 * e-mail). `take_deliveries` claims the rows about to be sent (at most `pushConcurrency`, one
 * slice) before anything is sent; the slice's outcomes are recorded before the next slice is
 * claimed. A row a crashed attempt left claimed is never sent again (it fails as
 * `outcome_unknown`), so a crash costs at most one slice; a sent row is never taken again. A
 * send that may have reached the provider without an answer (a connection broken after the
 * request or the mail's data was written) fails as `outcome_unknown` too. 429 and 5xx (SMTP: 4xx
 * and anything before the data was handed over) put the row back for later, and the job is
 * retried after FCM's Retry-After (or the queue's backoff). An e-mail carries a Message-ID made
 * from its delivery row's id (`deliveryMessageId`), the same for every attempt.
 */
import { z } from "zod";
import type { Deps } from "../core/context.ts";
import { defineJob, RetryJobAfter } from "../core/job-queue.ts";
import type { PushResult } from "../../_shared/push.ts";
import { MailError } from "../../_shared/mailer.ts";
import { serverSql } from "../core/doors.ts";
import { notificationUrl } from "./links.ts";

interface DeliveryRow {
  delivery_id: string;
  attempt_token: string;
  channel: "push" | "email";
  device_token: string | null;
  platform: "web" | "ios" | "android" | null;
  email: string;
  notification: {
    id: string;
    type: string;
    title: string;
    body: string;
    data: Record<string, unknown>;
    priority: "low" | "normal" | "high" | "critical";
  };
  collapse_key: string | null;
}

interface Outcome {
  id: string;
  token: string;
  outcome: "sent" | "failed" | "pruned" | "retry";
  code?: string;
  message?: string;
  providerId?: string;
  retryAfter?: number | null;
}

/** What one round of deliveries left to do. */
export interface DeliveryRound {
  taken: number;
  sent: number;
  /** Rows put back for a retry; `retryAfter` is the longest delay FCM asked for, if any. */
  retries: number;
  retryAfter: number | null;
}

/**
 * The Message-ID of a delivery's e-mail: from the row's id and the site's host, so every attempt
 * (and any other path that sends it again) carries the same id.
 */
export function deliveryMessageId(deps: Deps, deliveryId: string): string {
  return `<notification-delivery-${deliveryId}@${new URL(deps.settings.siteUrl).hostname}>`;
}

async function sendOne(deps: Deps, row: DeliveryRow, signal: AbortSignal): Promise<Outcome> {
  const base = { id: row.delivery_id, token: row.attempt_token };
  if (signal.aborted) {
    // Claimed but not sent: put back, so the next attempt sends it.
    return { ...base, outcome: "retry", code: "stopped", message: "the worker stopped first" };
  }
  const n = row.notification;
  if (row.channel === "email") {
    const messageId = deliveryMessageId(deps, row.delivery_id);
    // The link leads to what the notification is about (links.ts), never just the home page.
    const link = notificationUrl(deps.settings.siteUrl, n.data);
    try {
      await deps.mailer.send({
        to: row.email,
        subject: n.title,
        text: n.body ? `${n.body}\n\n${link}` : link,
        links: [link],
        messageId,
      });
      return { ...base, outcome: "sent", providerId: messageId };
    } catch (err) {
      const message = String(err instanceof Error ? err.message : err).slice(0, 500);
      if (!(err instanceof MailError)) {
        return { ...base, outcome: "retry", code: "mail_error", message };
      }
      if (err.outcome === "outcome_unknown") {
        // The data was handed over and no answer came: it may have been taken; never again.
        return { ...base, outcome: "failed", code: "outcome_unknown", message };
      }
      return { ...base, outcome: err.outcome, code: `mail_${err.code}`, message };
    }
  }
  if (!deps.push) {
    return {
      ...base,
      outcome: "failed",
      code: "push_not_configured",
      message: "push is off: AGORA_FCM_SERVICE_ACCOUNT is not set",
    };
  }
  if (!row.device_token || !row.platform) {
    return { ...base, outcome: "failed", code: "device_gone", message: "the device was removed" };
  }
  const result: PushResult = await deps.push.send({
    token: row.device_token,
    platform: row.platform,
    title: n.title,
    body: n.body,
    data: { notificationId: n.id, type: n.type, data: JSON.stringify(n.data) },
    priority: n.priority,
    collapseKey: row.collapse_key,
  });
  switch (result.outcome) {
    case "sent":
      return { ...base, outcome: "sent", providerId: result.messageId };
    case "retry":
      return {
        ...base,
        outcome: "retry",
        code: result.code,
        message: result.message,
        retryAfter: result.retryAfterSeconds,
      };
    default:
      return { ...base, outcome: result.outcome, code: result.code, message: result.message };
  }
}

/**
 * One round for some notifications, in slices: claim at most `pushConcurrency` due deliveries
 * (`take_deliveries`), send them together, record their outcomes in one statement, and claim
 * the next slice, until none is due (rows a slice put back for a retry wait for the job's
 * retry). Only one slice is ever claimed and unrecorded, so an
 * attempt that dies costs at most that slice (see the module comment). A stopped worker
 * (`signal`) claims no further slice; what it left queued is counted as retries, so the job
 * comes back for it.
 */
export async function deliverNotifications(
  deps: Deps,
  notificationIds: string[],
  signal: AbortSignal,
): Promise<DeliveryRound> {
  const sql = serverSql(deps, "notification deliveries");
  const round: DeliveryRound = { taken: 0, sent: 0, retries: 0, retryAfter: null };
  if (!notificationIds.length) return round;
  const slice = Math.max(1, deps.settings.pushConcurrency);
  // Rows this round put back for a retry: not taken again before the job's retry.
  const tried: string[] = [];
  for (;;) {
    if (signal.aborted) {
      // Rows not yet claimed stay queued: one retry for the job to come back for them.
      round.retries++;
      return round;
    }
    const rows = await sql<DeliveryRow[]>`
      select delivery_id::text, attempt_token::text, channel::text, device_token, platform::text,
             email, notification, collapse_key
      from app_private.take_deliveries(${notificationIds}::uuid[], ${slice}, ${tried}::bigint[])`;
    round.taken += rows.length;
    if (!rows.length) return round;
    const outcomes = await Promise.all(rows.map((row) => sendOne(deps, row, signal)));
    await sql`select app_private.record_deliveries(${sql.json(outcomes as never)}::jsonb)`;
    for (const o of outcomes) {
      if (o.outcome === "sent") round.sent++;
      if (o.outcome === "retry") {
        round.retries++;
        tried.push(o.id);
        if (o.retryAfter !== undefined && o.retryAfter !== null) {
          round.retryAfter = Math.max(round.retryAfter ?? 0, o.retryAfter);
        }
      }
    }
    if (rows.length < slice) return round;
  }
}

/** Ends a job whose round put rows back: after FCM's Retry-After, else the queue's backoff. */
function retryIfNeeded(rounds: DeliveryRound[]): void {
  const retries = rounds.reduce((n, r) => n + r.retries, 0);
  if (!retries) return;
  const delays = rounds.map((r) => r.retryAfter).filter((d): d is number => d !== null);
  if (delays.length) {
    throw new RetryJobAfter(Math.max(...delays), `${retries} deliveries to retry (Retry-After)`);
  }
  throw new Error(`${retries} deliveries to retry`);
}

const uuid = z.uuid();

export const notificationsDeliver = defineJob({
  kind: "notifications.deliver",
  payload: z.object({ notificationIds: z.array(uuid).min(1).max(1000) }),
  // Up to 1,000 notifications' deliveries, a slice of AGORA_PUSH_CONCURRENCY at a time, each push
  // or mail waiting up to 15 s: longer than the default. A crash loses only the slice in flight.
  leaseSeconds: 120,
  maxAttempts: 12,
  async run({ notificationIds }, { deps, signal }) {
    retryIfNeeded([await deliverNotifications(deps, notificationIds, signal)]);
  },
});

export const notificationsDigest = defineJob({
  kind: "notifications.digest",
  payload: z.object({ conversationId: uuid }),
  async run({ conversationId }, { deps }) {
    const sql = serverSql(deps, "message digests");
    // Two statements, two transactions: the claim holds the conversation row (senders wait for
    // it) only as long as it takes to take the mark away. A crash between them leaves the job to
    // run again; the digest then covers what the first claim did (digested_seq says how far).
    const [{ upto }] = await sql<{ upto: string | null }[]>`
      select app_private.claim_message_digest(${conversationId}::uuid)::text as upto`;
    await sql`
      select app_private.digest_conversation(${conversationId}::uuid, ${upto}::bigint)`;
  },
});

/** Rows written per transaction by `notifications.read_marks` (about 47 ms each, docs/benchmarks.md). */
export const READ_MARKS_BATCH = 2000;

export const notificationsReadMarks = defineJob({
  kind: "notifications.read_marks",
  payload: z.object({ userId: uuid }),
  // A million covered rows are 500 batches of about 50 ms: past the default lease. Each batch
  // commits on its own, so a killed attempt loses nothing and the rerun goes on from there.
  leaseSeconds: 300,
  async run({ userId }, { deps, signal }) {
    const sql = serverSql(deps, "read-all marks");
    for (;;) {
      const [{ more }] = await sql<{ more: boolean }[]>`
        select app_private.apply_read_marks(${userId}::uuid, ${READ_MARKS_BATCH}) as more`;
      if (!more) return;
      if (signal.aborted) throw new Error("stopped with read-all marks left; the retry goes on");
    }
  },
});

/** Recipients per chunk job (events and deliveries). */
export const BATCH_CHUNK_SIZE = 1000;
/** Notifications per delivery round inside a chunk. */
const ROUND_SIZE = 500;

export const notificationsBatch = defineJob({
  kind: "notifications.batch",
  payload: z.object({ batchId: uuid }),
  // Reads the audience's ids and writes one row per chunk: a second at a million recipients.
  leaseSeconds: 120,
  maxAttempts: 5,
  async run({ batchId }, { deps }) {
    const sql = serverSql(deps, "notification batches");
    await sql`select app_private.write_notification_batch(${batchId}::uuid, ${BATCH_CHUNK_SIZE})`;
  },
});

export const notificationsBatchChunk = defineJob({
  kind: "notifications.batch_chunk",
  payload: z.object({ batchId: uuid, chunk: z.number().int().min(0) }),
  // 1,000 recipients' inbox rows (one commit), events and deliveries, sent a slice at a time like
  // notifications.deliver. Killed before the write commits, the rerun writes the chunk whole;
  // after it, the rerun finds it written and goes on with its events and deliveries.
  leaseSeconds: 300,
  maxAttempts: 12,
  async run({ batchId, chunk }, { deps, signal }) {
    const sql = serverSql(deps, "notification batches");
    await sql`select app_private.write_batch_chunk(${batchId}::uuid, ${chunk})`;
    const [{ ids }] = await sql<{ ids: string[] }[]>`
      select app_private.announce_batch_chunk(${batchId}::uuid, ${chunk})::text[] as ids`;
    const rounds: DeliveryRound[] = [];
    for (let i = 0; i < ids.length; i += ROUND_SIZE) {
      rounds.push(await deliverNotifications(deps, ids.slice(i, i + ROUND_SIZE), signal));
    }
    retryIfNeeded(rounds);
    await sql`select app_private.finish_batch_chunk(${batchId}::uuid, ${chunk})`;
  },
});
