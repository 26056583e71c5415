/**
 * Queries of /api/notifications (notifications/notifications.routes.ts). The inbox, read marks and deletion run
 * as the caller under RLS (a user reaches only their own inbox): the list in one statement that
 * checks the session too (`app_private.inbox_page_for_session`), the rest through `asUser`;
 * creation, preferences, devices, bulk sends and analytics go through the SQL functions that
 * hold their rules (supabase/migrations/*_notifications.sql).
 */
import type { Sql, Tx } from "../../_shared/db.ts";
import type { SessionRef } from "../core/context.ts";
import { notFound } from "../../_shared/errors.ts";
import { likePattern, pageLimit, slicePage } from "../core/paging.ts";

export type NotificationType = "OPPORTUNITY" | "MESSAGE" | "ENTITY" | "SYSTEM" | "WALLET";
export type Priority = "low" | "normal" | "high" | "critical";

export interface NotificationJson {
  id: string;
  type: NotificationType;
  title: string;
  body: string;
  data: Record<string, unknown>;
  priority: Priority;
  readAt: string | null;
  createdAt: string;
}

/**
 * The caller's unread inbox notifications, as a piece of a query: one row of
 * `app.notification_counters`, kept by triggers (counting the rows cost as much as the page).
 */
const unread = (tx: Tx) =>
  tx`coalesce((select c.unread from app.notification_counters c
               where c.user_id = (select auth.uid())), 0)`;

async function unreadCount(tx: Tx): Promise<number> {
  const [row] = await tx<{ n: number }[]>`select ${unread(tx)} as n`;
  return row.n;
}

/**
 * A timestamptz as Postgres prints it (`2026-11-24 07:19:39.369221+00`) in the API's form, UTC
 * with microseconds (`2026-11-24T07:19:39.369221Z`), as `app.notification_json` writes it. The
 * list reads raw columns and formats here: building the JSON in SQL (jsonb and to_char per row)
 * cost four times the rest of the query.
 */
export function isoMicros(text: string): string {
  // The common case, a UTC session (Postgres' own default here and hosted): no parsing at all.
  if (text.length >= 22 && text.endsWith("+00") && text[10] === " ") {
    const fraction = text.length > 22 ? text.slice(20, -3) : "";
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction.padEnd(6, "0")}Z`;
  }
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?([+-]\d{2})(?::?(\d{2}))?$/
    .exec(text);
  if (!m) throw new Error(`not a timestamp: ${text}`);
  const seconds = Date.parse(`${m[1]}T${m[2]}${m[4]}:${m[5] ?? "00"}`);
  return `${new Date(seconds).toISOString().slice(0, 19)}.${(m[3] ?? "").padEnd(6, "0")}Z`;
}

interface InboxRow {
  id: string;
  type: NotificationType;
  title: string;
  body: string;
  data: Record<string, unknown>;
  priority: Priority;
  read_at: string | null;
  created_at: string;
  unread: number;
}

/**
 * A page of the caller's inbox, newest first, with the unread count, in one statement that also
 * checks the caller's session (`app_private.inbox_page_for_session`: AG401, a 401, when it is not
 * live; see its comment). `caller` comes from `asSessionOf(c, …)`. `after` is the previous page's
 * last [created_at as text, id].
 */
export async function listNotifications(
  sql: Sql,
  caller: SessionRef,
  q: {
    type?: NotificationType;
    unread?: boolean;
    search?: string;
    since?: string;
    after: [string, string] | null;
    limit: number;
  },
) {
  const rows = await sql<InboxRow[]>`
    select * from app_private.inbox_page_for_session(
      ${caller.sessionId}::uuid, ${caller.userId}::uuid, ${q.type ?? null}::app.notification_type,
      ${q.unread ?? null}::boolean, ${likePattern(q.search)}, ${q.since ?? null}::timestamptz,
      ${q.after?.[0] ?? null}::timestamptz, ${q.after?.[1] ?? null}::uuid,
      ${pageLimit(q.limit)}
    )`;
  // An empty page is one row with a null id, there to carry the count.
  const found = rows[0].id === null ? [] : rows;
  const { rows: page, nextCursor } = slicePage(found, q.limit, (r) => [r.created_at, r.id]);
  return {
    items: page.map((r): NotificationJson => ({
      id: r.id,
      type: r.type,
      title: r.title,
      body: r.body,
      data: r.data,
      priority: r.priority,
      readAt: r.read_at === null ? null : isoMicros(r.read_at),
      createdAt: isoMicros(r.created_at),
    })),
    nextCursor,
    unreadCount: rows[0].unread,
  };
}

/** Marks one of the caller's notifications read (once: a read one keeps its time); 404 if none. */
export async function markRead(tx: Tx, id: string) {
  const [updated] = await tx<{ read_at: string }[]>`
    update app.notifications n set read_at = now()
    where n.id = ${id} and n.read_at is null
    returning app.notification_json(n) ->> 'readAt' as read_at`;
  let readAt = updated?.read_at;
  if (!readAt) {
    const [existing] = await tx<{ read_at: string }[]>`
      select app.notification_json(n) ->> 'readAt' as read_at from app.notifications n
      where n.id = ${id}`;
    if (!existing) throw notFound("Notification not found.");
    readAt = existing.read_at;
  }
  return { id, readAt, unreadCount: await unreadCount(tx) };
}

/**
 * Marks all of the caller's unread notifications read (`app.mark_all_notifications_read`): a
 * few hundred rows directly, more by one mark that every reader honours at once and the
 * `notifications.read_marks` job writes into the rows afterwards (docs/notifications.md).
 */
export async function markAllRead(tx: Tx) {
  const [row] = await tx<{ updated: number; unread: number }[]>`
    select updated, unread from app.mark_all_notifications_read()`;
  return { updated: row.updated, unreadCount: row.unread };
}

export async function deleteNotification(tx: Tx, id: string) {
  const [row] = await tx<{ result: { id: string; deleted: true } }[]>`
    select app.delete_notification(${id}) as result`;
  return row.result;
}

/** A notification for oneself or (ADMIN) anyone, through the one way in. */
export async function createNotification(
  tx: Tx,
  input: {
    userId: string | null;
    type: NotificationType;
    title: string;
    body: string;
    data: Record<string, unknown>;
    priority: Priority;
  },
) {
  const [row] = await tx<
    { result: NotificationJson & { userId: string; inbox: boolean } }[]
  >`
    select app.create_notification(
      ${input.userId}::uuid, ${input.type}::app.notification_type, ${input.title}, ${input.body},
      ${tx.json(input.data as never)}::jsonb, ${input.priority}::app.notification_priority
    ) as result`;
  return row.result;
}

export interface PreferencesDocument {
  types: Record<NotificationType, { inApp: boolean; push: boolean; email: boolean }>;
  quietHours: { start: string; end: string; timeZone: string } | null;
  updatedAt: string | null;
}

export async function readPreferences(tx: Tx): Promise<PreferencesDocument> {
  const [row] = await tx<{ doc: PreferencesDocument }[]>`
    select app.notification_preferences_document() as doc`;
  return row.doc;
}

export async function updatePreferences(tx: Tx, patch: unknown): Promise<PreferencesDocument> {
  const [row] = await tx<{ doc: PreferencesDocument }[]>`
    select app.update_notification_preferences(${tx.json(patch as never)}::jsonb) as doc`;
  return row.doc;
}

export async function registerDevice(
  tx: Tx,
  input: { token: string; platform: "web" | "ios" | "android"; deviceName: string | null },
) {
  const [row] = await tx<
    { device_id: string; platform: string; created_at: Date; created: boolean }[]
  >`
    select * from app.register_push_device(
      ${input.token}, ${input.platform}::app.push_platform, ${input.deviceName})`;
  return {
    device: { id: row.device_id, platform: row.platform, createdAt: row.created_at.toISOString() },
    created: row.created,
  };
}

export async function unregisterDevice(tx: Tx, token: string) {
  await tx`select app.unregister_push_device(${token})`;
  return { unregistered: true as const };
}

export interface BatchAccepted {
  id: string;
  status: "queued" | "sending" | "done";
  recipients: number;
  replayed: boolean;
}

export async function createBatch(
  tx: Tx,
  input: {
    audience: unknown;
    notification: unknown;
    channels: string[];
    idempotencyKey: string | null;
    requestHash: string | null;
  },
): Promise<BatchAccepted> {
  const [row] = await tx<{ result: BatchAccepted }[]>`
    select app.create_notification_batch(
      ${tx.json(input.audience as never)}::jsonb, ${tx.json(input.notification as never)}::jsonb,
      ${input.channels}::text[], ${input.idempotencyKey}, ${input.requestHash}
    ) as result`;
  return row.result;
}

export async function batchProgress(tx: Tx, id: string) {
  const [row] = await tx<{ result: Record<string, unknown> }[]>`
    select app.notification_batch_progress(${id}) as result`;
  return row.result;
}

export type AnalyticsInterval = "hour" | "day" | "week" | "month";

export interface NotificationAnalytics {
  totals: {
    created: number;
    read: number;
    pushSent: number;
    pushDelivered: number;
    pushFailed: number;
    emailSent: number;
  };
  byType: {
    type: NotificationType;
    created: number;
    read: number;
    pushSent: number;
    pushFailed: number;
  }[];
  byChannel: { channel: "inApp" | "push" | "email"; sent: number; failed: number }[];
  series: { t: string; created: number; read: number; pushSent: number; pushFailed: number }[];
  readRate: number;
  medianSecondsToRead: number | null;
}

/** The figures of GET /api/notifications/analytics and of the admin analytics' section. */
export async function notificationAnalytics(
  tx: Tx,
  q: { from: Date; to: Date; interval: AnalyticsInterval; type?: NotificationType },
): Promise<NotificationAnalytics> {
  const [row] = await tx<{ result: NotificationAnalytics }[]>`
    select app.notification_analytics(
      ${q.from}::timestamptz, ${q.to}::timestamptz, ${q.interval},
      ${q.type ?? null}::app.notification_type
    ) as result`;
  return row.result;
}
