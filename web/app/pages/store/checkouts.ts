/**
 * Checkouts this tab started, for the payment step. The checkout's answer (with the payment's
 * intent id and, with Stripe, its client secret) is kept in memory only. To pay after a reload,
 * the tab keeps the request it sent (its Idempotency-Key and body, no secret) in sessionStorage:
 * sending it again replays the same checkout (the API replays an Idempotency-Key's first answer
 * for 24 hours). The entry goes once the checkout is paid or cancelled.
 */
import { type Checkout, storeApi } from "./api.ts";

interface SentRequest {
  key: string;
  body: Parameters<typeof storeApi.checkOut>[0];
}

const inMemory = new Map<string, Checkout>();
const storageKey = (id: string) => `agora-checkout:${id}`;

export function rememberCheckout(checkout: Checkout, sent: SentRequest): void {
  inMemory.set(checkout.id, checkout);
  try {
    sessionStorage.setItem(storageKey(checkout.id), JSON.stringify(sent));
  } catch {
    // storage blocked: paying after a reload will not be possible in this tab
  }
}

export function forgetCheckout(id: string): void {
  inMemory.delete(id);
  try {
    sessionStorage.removeItem(storageKey(id));
  } catch {
    // nothing kept
  }
}

/** The checkout, from memory or by replaying the request that made it; null when unknown. */
export async function recallCheckout(id: string): Promise<Checkout | null> {
  const known = inMemory.get(id);
  if (known) return known;
  let sent: SentRequest | null = null;
  try {
    sent = JSON.parse(sessionStorage.getItem(storageKey(id)) ?? "null");
  } catch {
    sent = null;
  }
  if (!sent) return null;
  const { checkout } = await storeApi.checkOut(sent.body, sent.key);
  if (checkout.id !== id) return null;
  inMemory.set(id, checkout);
  return checkout;
}
