/**
 * The last shipping address a person checked out with, kept in this browser's localStorage
 * (`agora-address`) under their user id, so the next checkout starts from it. Like the cart, it
 * goes at sign-out (a shared computer keeps no one's address), and an address saved by one
 * account is never offered to another.
 */
import { onSignedOut } from "../../lib/session.ts";
import type { Address } from "./types.ts";

const KEY = "agora-address";

export function recallAddress(userId: string): Address | null {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? "null");
    return saved?.userId === userId && saved.address ? saved.address as Address : null;
  } catch {
    return null;
  }
}

export function rememberAddress(userId: string, address: Address): void {
  try {
    localStorage.setItem(KEY, JSON.stringify({ userId, address }));
  } catch {
    // storage full or blocked: the next checkout starts empty
  }
}

onSignedOut(() => {
  try {
    localStorage.removeItem(KEY);
  } catch {
    // nothing kept
  }
});
