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

/**
 * The Idempotency-Key of the checkout a person is placing: the same while the same checkout (the
 * same request body) is tried again, in this tab and across a reload (sessionStorage, else
 * memory). When an answer is lost on the way (the connection dropped after the server made the
 * checkout) and the buyer checks out again, the API then answers with the checkout it made
 * instead of making a second one that holds the stock twice. A changed cart or address is another
 * checkout: a new key.
 */
export function checkoutAttemptKey(userId: string, body: unknown): string {
  const name = attemptName(userId);
  const text = JSON.stringify(body);
  const kept = readAttempt(name);
  if (kept?.body === text) return kept.key;
  const attempt = { key: crypto.randomUUID(), body: text };
  attempts.set(name, attempt);
  try {
    sessionStorage.setItem(name, JSON.stringify(attempt));
  } catch {
    // Storage refused: the key lasts as long as the page.
  }
  return attempt.key;
}

/** The checkout was made, or refused for good (a 4xx): the next one gets a new key. */
export function forgetCheckoutAttempt(userId: string): void {
  const name = attemptName(userId);
  attempts.delete(name);
  try {
    sessionStorage.removeItem(name);
  } catch {
    // Storage refused: only the memory held it.
  }
}

interface Attempt {
  key: string;
  body: string;
}

const attempts = new Map<string, Attempt>();
const attemptName = (userId: string) => `agora-checkout-attempt:${userId}`;

function readAttempt(name: string): Attempt | null {
  try {
    const stored = JSON.parse(sessionStorage.getItem(name) ?? "null") as Attempt | null;
    if (stored && typeof stored.key === "string" && typeof stored.body === "string") return stored;
  } catch {
    // Unreadable or refused: memory, if anything.
  }
  return attempts.get(name) ?? null;
}
