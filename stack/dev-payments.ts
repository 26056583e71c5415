/**
 * The local stack's stand-in for a customer paying and a vendor onboarding, for the `dev` payment
 * provider (no Stripe key; local mode only, like /_dev/mail):
 *
 * - `POST /_dev/payments/<paymentIntentId>/succeed` or `/fail`: the PaymentIntent succeeds (or
 *   its attempt fails, staying payable), and a Stripe-shaped `payment_intent.succeeded` /
 *   `payment_intent.payment_failed` event, signed with the dev provider's webhook secret, goes
 *   through the real webhook route (`POST /api/store/webhooks/stripe`), exactly as Stripe's would.
 *   `succeed` again for an intent that already succeeded changes nothing and sends the same event
 *   again (so a client's retry never dead-ends); `fail` of a succeeded intent is 409.
 * - `GET` or `POST /_dev/accounts/<accountId>/onboard` (the link `POST /api/store/vendors/me/payouts`
 *   answers with the dev provider): the Connect account is complete, and an `account.updated`
 *   event goes through the same route.
 *
 * Each answers 200 `{ eventId, delivered: true }` when the webhook acknowledged the event (2xx),
 * and 202 `{ eventId, delivered: false }` when it did not: the change is made and its event
 * recorded, and a store.dev_event_delivery job delivers it again with backoff, as Stripe retries
 * (functions/api/store/dev-provider.ts). The webhook's job then reads the object again from the
 * dev provider and applies it.
 */
import type { Deps } from "../functions/api/core/context.ts";
import type { DevPaymentProvider } from "../functions/api/store/dev-provider.ts";
import { PaymentProviderRefused } from "../functions/api/store/payments.ts";

const PAYMENT = /^\/_dev\/payments\/([A-Za-z0-9_]{1,255})\/(succeed|fail)$/;
const ACCOUNT = /^\/_dev\/accounts\/([A-Za-z0-9_]{1,255})\/onboard$/;

const HEADERS = () => ({ "Cache-Control": "no-store", "X-Request-Id": crypto.randomUUID() });

function error(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status, headers: HEADERS() });
}

/** The answer for a `/_dev/payments` or `/_dev/accounts` request, or null for other paths. */
export async function devPayments(
  deps: Deps,
  request: Request,
): Promise<Response | null> {
  const url = new URL(request.url);
  const payment = PAYMENT.exec(url.pathname);
  const account = ACCOUNT.exec(url.pathname);
  if (!payment && !account) return null;
  if (payment && request.method !== "POST") return error(405, "invalid_request", "Use POST.");
  if (account && request.method !== "POST" && request.method !== "GET") {
    return error(405, "invalid_request", "Use GET or POST.");
  }
  if (deps.payments.name !== "dev") {
    return error(404, "not_found", "Stripe is configured: the dev payment provider is not in use.");
  }
  const provider = deps.payments as DevPaymentProvider;
  let event: Record<string, unknown>;
  try {
    event = payment
      ? await provider.settleIntent(payment[1], payment[2] as "succeed" | "fail")
      : await provider.onboardAccount(account![1]);
  } catch (err) {
    if (err instanceof PaymentProviderRefused) {
      return err.status === 404
        ? error(404, "not_found", err.message)
        : error(409, "conflict", err.message);
    }
    throw err;
  }
  // The event is recorded with its redelivery queued; this is its first delivery, to the app's
  // own webhook route (createApp connected it), as the redelivery job's are.
  const delivery = await provider.deliverEvent(event.id as string);
  if (!delivery.delivered) {
    deps.log("warn", "dev payments: the webhook did not acknowledge the event; it is redelivered", {
      eventId: event.id,
      result: delivery.result,
    });
  }
  return Response.json({ eventId: event.id, delivered: delivery.delivered }, {
    status: delivery.delivered ? 200 : 202,
    headers: HEADERS(),
  });
}
