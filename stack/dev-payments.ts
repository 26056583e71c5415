/**
 * The local stack's stand-in for a customer paying and a vendor onboarding, for the `dev` payment
 * provider (no Stripe key; local mode only, like /_dev/mail):
 *
 * - `POST /_dev/payments/<paymentIntentId>/succeed` or `/fail`: the PaymentIntent succeeds (or
 *   its attempt fails, staying payable), and a Stripe-shaped `payment_intent.succeeded` /
 *   `payment_intent.payment_failed` event, signed with the dev provider's webhook secret, goes
 *   through the real webhook route (`POST /api/store/webhooks/stripe`), exactly as Stripe's would.
 *   Answers 200 `{ eventId }`.
 * - `GET` or `POST /_dev/accounts/<accountId>/onboard` (the link `POST /api/store/vendors/me/payouts`
 *   answers with the dev provider): the Connect account is complete, and an `account.updated`
 *   event goes through the same route. Answers 200 `{ eventId }`.
 *
 * The webhook's job then reads the object again from the dev provider and applies it.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Deps } from "../functions/api/core/context.ts";
import type { DevPaymentProvider } from "../functions/api/store/dev-provider.ts";
import { PaymentProviderRefused, signWebhook } from "../functions/api/store/payments.ts";

const PAYMENT = /^\/_dev\/payments\/([A-Za-z0-9_]{1,255})\/(succeed|fail)$/;
const ACCOUNT = /^\/_dev\/accounts\/([A-Za-z0-9_]{1,255})\/onboard$/;

function error(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, {
    status,
    headers: { "Cache-Control": "no-store", "X-Request-Id": crypto.randomUUID() },
  });
}

/** The answer for a `/_dev/payments` or `/_dev/accounts` request, or null for other paths. */
export async function devPayments(
  deps: Deps,
  app: OpenAPIHono<AppEnv>,
  request: Request,
  info: Deno.ServeHandlerInfo,
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
  const body = JSON.stringify(event);
  const signature = await signWebhook(body, await provider.webhookSecret());
  const delivered = await app.fetch(
    new Request(new URL("/api/store/webhooks/stripe", url), {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body,
    }),
    info,
  );
  if (delivered.status !== 200) {
    return error(
      502,
      "internal",
      `The webhook answered ${delivered.status}: ${await delivered.text()}`,
    );
  }
  await delivered.body?.cancel();
  return Response.json({ eventId: event.id }, {
    headers: { "Cache-Control": "no-store", "X-Request-Id": crypto.randomUUID() },
  });
}
