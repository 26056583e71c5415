/**
 * The store's jobs: everything that calls the payment provider in the background.
 *
 * - `store.stripe_event`: a verified webhook event (stored once by the webhook route). Events are
 *   only a hint: the job reads the PaymentIntent, refund or account from the provider again and
 *   applies its current state, so events may arrive late, twice or out of order.
 * - `store.refund`: the refund owed for an order, with the provider idempotency key
 *   `refund:<orderId>` (one refund per order, however often the job runs).
 * - `store.payment_intent_cancel`: cancels the PaymentIntent of a checkout cancelled before
 *   payment; if it was paid meanwhile, the payment is applied (and refunded, since its orders are
 *   cancelled).
 * - `store.payout`: a settlement's Stripe Connect transfer with the idempotency key
 *   `settlement:<id>`; a vendor whose payout account is not active is held, not lost.
 * - `store.dev_event_delivery`: the `dev` provider's side, Stripe's retries: posts one of its
 *   recorded events to the webhook route again until it answers 2xx (dev-provider.ts has the
 *   schedule); queued with the event, in the transaction of the change the event reports.
 *
 * A provider that does not answer is retried with the queue's backoff; a refusal (4xx) is
 * recorded and dead-letters the job for an operator.
 */
import { z } from "zod";
import { defineJob, PermanentJobFailure, RetryJobAfter } from "../core/job-queue.ts";
import {
  applyPaymentIntent,
  applyPayoutAccount,
  checkoutIntent,
  failSettlement,
  finishEvent,
  holdSettlement,
  payoutToMake,
  recordPayout,
  recordRefundResult,
  refundToMake,
  storedEvent,
} from "./jobs.queries.ts";
import { PaymentProviderRefused } from "./payments.ts";
import { type DevPaymentProvider, REDELIVERY, redeliveryDelaySeconds } from "./dev-provider.ts";
import { serverSql } from "../core/doors.ts";

const PAYMENT_INTENT_EVENTS = new Set([
  "payment_intent.succeeded",
  "payment_intent.payment_failed",
  "payment_intent.canceled",
  "payment_intent.processing",
  "payment_intent.requires_action",
  "payment_intent.amount_capturable_updated",
  "payment_intent.partially_funded",
]);

const REFUND_EVENTS = new Set([
  "refund.created",
  "refund.updated",
  "refund.failed",
  "charge.refund.updated",
]);

function objectId(payload: Record<string, unknown>): string | null {
  const data = payload.data as { object?: { id?: unknown } } | undefined;
  return typeof data?.object?.id === "string" ? data.object.id : null;
}

/** Stripe's refund statuses, as the store records them. */
function refundResult(status: string): "pending" | "succeeded" | "failed" {
  if (status === "succeeded") return "succeeded";
  if (status === "failed" || status === "canceled") return "failed";
  return "pending";
}

export const stripeEvent = defineJob({
  kind: "store.stripe_event",
  payload: z.object({ eventId: z.string().min(1).max(255) }),
  async run({ eventId }, { deps }) {
    const sql = serverSql(deps, "store jobs");
    const event = await storedEvent(sql, eventId);
    if (!event) throw new PermanentJobFailure(`no stored event ${eventId}`);
    const id = objectId(event.payload);
    let outcome = "ignored";
    if (PAYMENT_INTENT_EVENTS.has(event.type) && id) {
      const intent = await deps.payments.retrievePaymentIntent(id);
      outcome = await applyPaymentIntent(sql, intent);
      if (outcome === "mismatch") {
        await finishEvent(sql, eventId, outcome);
        throw new PermanentJobFailure(
          `payment intent ${intent.id} does not match its checkout's amount or currency`,
        );
      }
    } else if (event.type === "account.updated" && id) {
      const account = await deps.payments.retrieveAccount(id);
      const vendor = await applyPayoutAccount(sql, account.id, account.payoutsStatus);
      outcome = vendor ? `payouts ${account.payoutsStatus}` : "unknown account";
    } else if (REFUND_EVENTS.has(event.type) && id) {
      const refund = await deps.payments.retrieveRefund(id);
      if (refund.orderId) {
        await recordRefundResult(sql, refund.orderId, refund.id, refundResult(refund.status));
        outcome = `refund ${refund.status}`;
      } else {
        outcome = "refund of no order";
      }
    }
    await finishEvent(sql, eventId, outcome);
  },
});

export const refund = defineJob({
  kind: "store.refund",
  payload: z.object({ orderId: z.uuid() }),
  async run({ orderId }, { deps }) {
    const sql = serverSql(deps, "store jobs");
    const owed = await refundToMake(sql, orderId);
    if (!owed || owed.status === "succeeded") return;
    if (!owed.payment_intent_id) {
      await recordRefundResult(sql, orderId, null, "failed", "the order has no payment");
      throw new PermanentJobFailure(`order ${orderId} has no payment intent to refund`);
    }
    try {
      const made = await deps.payments.createRefund(
        { paymentIntentId: owed.payment_intent_id, amount: owed.amount, orderId },
        `refund:${orderId}`,
      );
      await recordRefundResult(sql, orderId, made.id, refundResult(made.status));
    } catch (err) {
      if (err instanceof PaymentProviderRefused) {
        await recordRefundResult(sql, orderId, null, "failed", err.message);
        throw new PermanentJobFailure(`refund refused: ${err.message}`);
      }
      throw err;
    }
  },
});

export const paymentIntentCancel = defineJob({
  kind: "store.payment_intent_cancel",
  payload: z.object({ checkoutId: z.uuid() }),
  async run({ checkoutId }, { deps }) {
    const sql = serverSql(deps, "store jobs");
    const checkout = await checkoutIntent(sql, checkoutId);
    if (!checkout?.payment_intent_id || checkout.payment_status === "succeeded") return;
    try {
      await deps.payments.cancelPaymentIntent(
        checkout.payment_intent_id,
        `pi-cancel:${checkoutId}`,
      );
    } catch (err) {
      if (!(err instanceof PaymentProviderRefused)) throw err;
      // Not cancellable: paid (or processing) meanwhile. Apply what it is now; a payment of
      // cancelled orders is refunded by apply_payment_intent.
      const intent = await deps.payments.retrievePaymentIntent(checkout.payment_intent_id);
      await applyPaymentIntent(sql, intent);
    }
  },
});

export const payout = defineJob({
  kind: "store.payout",
  payload: z.object({ settlementId: z.uuid() }),
  async run({ settlementId }, { deps }) {
    const sql = serverSql(deps, "store jobs");
    const due = await payoutToMake(sql, settlementId);
    if (!due || due.status !== "pending") return;
    if (!due.account_id || due.payouts_status !== "active") {
      await holdSettlement(sql, settlementId, "the vendor's payout account is not active");
      return;
    }
    try {
      const transfer = await deps.payments.createTransfer({
        amount: due.net,
        currency: due.currency,
        destination: due.account_id,
        settlementId,
        vendorId: due.vendor_id,
      }, `settlement:${settlementId}`);
      await recordPayout(sql, settlementId, transfer.id);
    } catch (err) {
      if (err instanceof PaymentProviderRefused) {
        await failSettlement(sql, settlementId, err.message);
        throw new PermanentJobFailure(`transfer refused: ${err.message}`);
      }
      throw err;
    }
  },
});

export const devEventDelivery = defineJob({
  kind: "store.dev_event_delivery",
  payload: z.object({ eventId: z.string().min(1).max(255) }),
  // One POST that waits at most REDELIVERY.timeoutSeconds.
  leaseSeconds: 30,
  maxAttempts: REDELIVERY.attempts,
  async run({ eventId }, { deps, job, signal }) {
    if (deps.payments.name !== "dev") {
      throw new PermanentJobFailure("the dev payment provider is not in use here");
    }
    const delivery = await (deps.payments as DevPaymentProvider).deliverEvent(eventId, { signal });
    if (delivery.missing) throw new PermanentJobFailure(`no dev payment event ${eventId}`);
    if (!delivery.delivered) {
      throw new RetryJobAfter(
        redeliveryDelaySeconds(job.attempt),
        `the webhook did not acknowledge ${eventId}: ${delivery.result}`,
      );
    }
  },
});

/** Every store job kind, for the registry. */
export const storeJobs = [stripeEvent, refund, paymentIntentCancel, payout, devEventDelivery];
