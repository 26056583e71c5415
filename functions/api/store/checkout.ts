/**
 * The checkout around the payment provider: the orders and the reservation are made in one
 * statement as the caller (`app_private.create_checkout_as` → `app.create_checkout`, committed on
 * the server at once), the PaymentIntent after it (so no product lock waits on the provider), then attached in a second transaction that stores the answer for the
 * Idempotency-Key. The provider's own idempotency key is `checkout:<id>`, so finishing an
 * interrupted checkout (a replayed key whose first request died between the two) finds the same
 * intent again. When the provider does not answer, the checkout is cancelled (its stock released)
 * and the key freed, and the caller gets 503 `payment_provider_unavailable`.
 *
 * `resumePayment`: the buyer pays their unpaid checkout from anywhere (another tab or device,
 * after the tab closed) while its reservation lasts: `app.checkout_payment` answers the checkout
 * with its client secret (404 for another's, 422 paid, cancelled or expired); a checkout whose
 * intent was never attached gets it now, with the same provider key `checkout:<id>` (so Stripe
 * answers the intent it may already have made), attached as at checkout.
 */
import type { Deps } from "../core/context.ts";
import type { DbClaims, Tx } from "../../_shared/db.ts";
import { ApiError } from "../../_shared/errors.ts";
import {
  abandonCheckout,
  attachPaymentIntent,
  checkoutPayment,
  createCheckoutAs,
} from "./orders.queries.ts";
import type { CheckoutJson } from "./store.schemas.ts";
import { PaymentProviderRefused, PaymentProviderUnavailable } from "./payments.ts";
import { serverSql } from "../core/doors.ts";

/**
 * The checkout's payment intent, made with the provider key `checkout:<id>`: asked again (a
 * resumed payment, a replayed key), the provider answers the intent it already made.
 */
function createIntent(
  deps: Deps,
  input: { amount: number; currency: string; checkoutId: string; buyerId: string },
) {
  return deps.payments.createPaymentIntent(input, `checkout:${input.checkoutId}`);
}

/** What the caller is told when the provider made no intent: 503 with Retry-After, or 422. */
function providerError(
  err: PaymentProviderUnavailable | PaymentProviderRefused,
  then: string,
): ApiError {
  if (err instanceof PaymentProviderUnavailable) {
    return new ApiError(
      "payment_provider_unavailable",
      `The payment provider does not answer; ${then}`,
      undefined,
      { "Retry-After": "5" },
    );
  }
  return new ApiError("unprocessable", `The payment provider refused the payment: ${err.message}`);
}

/** Runs a function in a transaction as the caller (the handler's `asUser`). */
export type AsCaller = <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>;

export async function checkout(
  deps: Deps,
  claims: DbClaims,
  asCaller: AsCaller,
  input: {
    buyerId: string;
    items: { productId: string; quantity: number }[];
    address: unknown;
    idempotencyKey: string | null;
    requestHash: string | null;
  },
): Promise<CheckoutJson> {
  const sql = serverSql(deps, "checkout");
  const provider = deps.payments;
  const start = await createCheckoutAs(sql, claims, {
    items: input.items,
    address: input.address,
    idempotencyKey: input.idempotencyKey,
    requestHash: input.requestHash,
    provider: provider.name,
  });
  if ("replay" in start) return start.replay;
  const checkoutId = "resume" in start ? start.resume : start.created;
  let intent;
  try {
    intent = await createIntent(deps, {
      amount: start.total,
      currency: start.currency,
      checkoutId,
      buyerId: input.buyerId,
    });
  } catch (err) {
    if (err instanceof PaymentProviderUnavailable || err instanceof PaymentProviderRefused) {
      deps.log("warn", "payment intent not created; checkout cancelled", {
        checkoutId,
        error: err.message,
      });
      await asCaller((tx) => abandonCheckout(tx, checkoutId, input.idempotencyKey));
      throw providerError(err, "nothing was ordered. Try again shortly.");
    }
    throw err;
  }
  return await asCaller((tx) => attachPaymentIntent(tx, checkoutId, intent, input.idempotencyKey));
}

/** The payment of the caller's own unpaid checkout, its intent made first when it has none. */
export async function resumePayment(
  deps: Deps,
  asCaller: AsCaller,
  input: { buyerId: string; checkoutId: string },
): Promise<CheckoutJson> {
  const found = await asCaller((tx) => checkoutPayment(tx, input.checkoutId));
  if (!found.needsIntent) return { checkout: found.checkout };
  let intent;
  try {
    intent = await createIntent(deps, {
      amount: found.amount,
      currency: found.currency,
      checkoutId: input.checkoutId,
      buyerId: input.buyerId,
    });
  } catch (err) {
    if (err instanceof PaymentProviderUnavailable || err instanceof PaymentProviderRefused) {
      throw providerError(err, "try again shortly.");
    }
    throw err;
  }
  return await asCaller((tx) => attachPaymentIntent(tx, input.checkoutId, intent, null));
}
