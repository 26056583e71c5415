/**
 * The shopping cart: product ids, titles, prices and quantities, kept in this browser's
 * localStorage (`agora-cart`) so it survives a reload. It never holds anything of the session;
 * it is emptied at sign-out (and when the session ends), after a checkout, and when the account
 * is deleted. Prices here are for showing only: the server prices every checkout itself.
 */
import type { Money } from "./format.ts";
import { onSignedOut } from "./session.ts";
import { createStore } from "./store.ts";

export interface CartLine {
  productId: string;
  title: string;
  vendor: { id: string; name: string };
  unitPrice: Money;
  quantity: number;
  /** Stock available when last seen (the checkout checks again). */
  available: number;
  image: string | null;
}

const KEY = "agora-cart";

function read(): CartLine[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

export const cart = createStore<CartLine[]>(read());

cart.subscribe((lines) => {
  try {
    if (lines.length) localStorage.setItem(KEY, JSON.stringify(lines));
    else localStorage.removeItem(KEY);
  } catch {
    // storage full or blocked: the cart lives as long as the page
  }
});

// Another tab changed it.
addEventListener("storage", (e) => {
  if (e.key === KEY) cart.set(read());
});

/**
 * What was last added, for the header's toast (Shell.tsx): a live region fixed to the viewport,
 * so the feedback shows wherever the button was (a card low on the catalog scrolls the
 * catalog's own message out of view). `at` tells two adds of the same thing apart.
 */
export const lastAdded = createStore<{ text: string; at: number } | null>(null);

export function addToCart(line: Omit<CartLine, "quantity">, quantity: number): void {
  lastAdded.set({
    text: `Added ${quantity > 1 ? `${quantity} × ` : ""}${line.title} to your cart.`,
    at: Date.now(),
  });
  cart.update((lines) => {
    const found = lines.find((l) => l.productId === line.productId);
    if (found) {
      return lines.map((l) =>
        l.productId === line.productId ? { ...line, quantity: l.quantity + quantity } : l
      );
    }
    return [...lines, { ...line, quantity }];
  });
}

export function setQuantity(productId: string, quantity: number): void {
  cart.update((lines) =>
    quantity <= 0
      ? lines.filter((l) => l.productId !== productId)
      : lines.map((l) => l.productId === productId ? { ...l, quantity } : l)
  );
}

export function clearCart(): void {
  lastAdded.set(null);
  cart.set([]);
}

export function cartCount(lines: CartLine[]): number {
  return lines.reduce((n, l) => n + l.quantity, 0);
}

onSignedOut(clearCart);
