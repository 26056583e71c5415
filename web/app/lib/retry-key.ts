/**
 * The Idempotency-Key of a request a person may send again after its answer was lost: the same
 * while the same request (the same body) is tried again, in this tab and across a reload
 * (sessionStorage, else memory). When the connection dropped after the server did the work, the
 * API answers the retry with what it did the first time instead of doing it twice (a checkout
 * holding the stock twice, a second transfer holding the funds). Once the request succeeded or
 * was refused for good (a 4xx), `forgetRetryKey` lets the next one have a key of its own; a
 * changed body is another request and gets a new key anyway.
 */

interface Attempt {
  key: string;
  body: string;
}

const inMemory = new Map<string, Attempt>();
const storageName = (name: string) => `agora-retry-key:${name}`;

/** The key for `body` under `name` (e.g. `checkout:<user id>`): kept or new. */
export function retryKey(name: string, body: unknown): string {
  const text = JSON.stringify(body);
  const kept = read(name);
  if (kept?.body === text) return kept.key;
  const attempt = { key: crypto.randomUUID(), body: text };
  inMemory.set(name, attempt);
  try {
    sessionStorage.setItem(storageName(name), JSON.stringify(attempt));
  } catch {
    // Storage refused: the key lasts as long as the page.
  }
  return attempt.key;
}

/** The request under `name` succeeded or was refused for good: the next one gets a new key. */
export function forgetRetryKey(name: string): void {
  inMemory.delete(name);
  try {
    sessionStorage.removeItem(storageName(name));
  } catch {
    // Storage refused: only the memory held it.
  }
}

function read(name: string): Attempt | null {
  try {
    const stored = JSON.parse(sessionStorage.getItem(storageName(name)) ?? "null") as
      | Attempt
      | null;
    if (stored && typeof stored.key === "string" && typeof stored.body === "string") return stored;
  } catch {
    // Unreadable or refused: memory, if anything.
  }
  return inMemory.get(name) ?? null;
}
