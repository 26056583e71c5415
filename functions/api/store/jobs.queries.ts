/**
 * The SQL of the store's background jobs (store/jobs.ts), server paths on the pool's own
 * connection: they act for the payment provider or the schedule, never for a user, and what they
 * call lives in `app_private` (no API role may).
 */
import type { Sql } from "../../_shared/db.ts";

export async function storedEvent(sql: Sql, eventId: string) {
  const [row] = await sql<{ type: string; payload: Record<string, unknown> }[]>`
    select type, payload from app_private.stripe_events where id = ${eventId}`;
  return row ?? null;
}

export async function finishEvent(sql: Sql, eventId: string, outcome: string) {
  await sql`select app_private.finish_stripe_event(${eventId}, ${outcome})`;
}

/** Applies a payment intent's current state to its checkout; what it did. */
export async function applyPaymentIntent(
  sql: Sql,
  intent: { id: string; status: string; amount: number; currency: string; attemptFailed: boolean },
): Promise<string> {
  const [row] = await sql<{ outcome: string }[]>`
    select app_private.apply_payment_intent(
      ${intent.id}, ${intent.status}, ${intent.amount}::bigint, ${intent.currency},
      ${intent.attemptFailed}
    ) as outcome`;
  return row.outcome;
}

export async function applyPayoutAccount(sql: Sql, accountId: string, status: string) {
  const [row] = await sql<{ vendor: string | null }[]>`
    select app_private.apply_payout_account(${accountId}, ${status}::app.payouts_status)::text as vendor`;
  return row.vendor;
}

export async function refundToMake(sql: Sql, orderId: string) {
  const [row] = await sql<
    { payment_intent_id: string | null; amount: string; currency: string; status: string }[]
  >`
    select payment_intent_id, amount::text, currency, status::text
    from app_private.refund_to_make(${orderId}::uuid)`;
  return row ? { ...row, amount: Number(row.amount) } : null;
}

export async function recordRefundResult(
  sql: Sql,
  orderId: string,
  refundId: string | null,
  status: "pending" | "succeeded" | "failed",
  failure: string | null = null,
) {
  await sql`
    select app_private.record_refund_result(
      ${orderId}::uuid, ${refundId}, ${status}::app.refund_status, ${failure})`;
}

export async function checkoutIntent(sql: Sql, checkoutId: string) {
  const [row] = await sql<{ payment_intent_id: string | null; payment_status: string }[]>`
    select payment_intent_id, payment_status::text from app.checkouts where id = ${checkoutId}::uuid`;
  return row ?? null;
}

export async function payoutToMake(sql: Sql, settlementId: string) {
  const [row] = await sql<
    {
      status: string;
      net: string;
      currency: string;
      vendor_id: string;
      account_id: string | null;
      payouts_status: string;
    }[]
  >`
    select status::text, net::text, currency, vendor_id, account_id, payouts_status::text
    from app_private.payout_to_make(${settlementId}::uuid)`;
  return row ? { ...row, net: Number(row.net) } : null;
}

export async function recordPayout(sql: Sql, settlementId: string, transferId: string) {
  await sql`select app_private.record_payout(${settlementId}::uuid, ${transferId})`;
}

export async function holdSettlement(sql: Sql, settlementId: string, why: string) {
  await sql`select app_private.hold_settlement(${settlementId}::uuid, ${why})`;
}

export async function failSettlement(sql: Sql, settlementId: string, why: string) {
  await sql`select app_private.fail_settlement(${settlementId}::uuid, ${why})`;
}
