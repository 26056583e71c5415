/**
 * Checkouts for the payment step. The checkout this tab just made (with the payment's intent id
 * and, with Stripe, its client secret) is kept in memory; anywhere else (another tab or device, a
 * reload, after the tab closed) the buyer's checkout is asked of the API
 * (POST /api/store/checkouts/:id/payment) while it awaits payment within its reservation.
 */
import { ApiError, client, data } from "../../lib/client.ts";
import type { Checkout } from "./types.ts";

const inMemory = new Map<string, Checkout>();

export function rememberCheckout(checkout: Checkout): void {
  inMemory.set(checkout.id, checkout);
}

export function forgetCheckout(id: string): void {
  inMemory.delete(id);
}

/**
 * The checkout with its payment, from memory or from the API; null when it can no longer be paid
 * (paid, cancelled, its reservation ran out) or is not the caller's.
 */
export async function recallCheckout(id: string): Promise<Checkout | null> {
  const known = inMemory.get(id);
  if (known) return known;
  try {
    const { checkout } = data(
      await client.POST("/api/store/checkouts/{id}/payment", { params: { path: { id } } }),
    );
    inMemory.set(id, checkout);
    return checkout;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 422)) return null;
    throw err;
  }
}
