/**
 * A list of orders kept current from the user's live order events (`order.created`,
 * `order.status_changed` on `user:<id>`), and the merging it rests on: the newer copy of each
 * order wins. Used by the checkout, the buyer's orders and the vendor's orders, with the order
 * calls they share (the typed client).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { userEvents } from "../../lib/user-events.ts";
import { client, data, FRESH, type Query, type RequestBody } from "../../lib/client.ts";
import type { Order } from "./types.ts";

/** A page of the caller's orders as buyer or as the shop's owner (newest first). */
export async function listOrders(query: Query<"/api/store/orders", "get">) {
  return data(await client.GET("/api/store/orders", { params: { query }, ...FRESH }));
}

/** One order (its buyer, its shop's owner, or an ADMIN). */
export async function readOrder(id: string): Promise<Order> {
  return data(await client.GET("/api/store/orders/{id}", { params: { path: { id } }, ...FRESH }));
}

/** Moves an order (the API says which moves the caller may make). */
export async function moveOrder(
  id: string,
  body: RequestBody<"/api/store/orders/{id}/status", "put">,
): Promise<Order> {
  return data(
    await client.PUT("/api/store/orders/{id}/status", { params: { path: { id } }, body }),
  );
}

/**
 * Keeps a list of orders current from the user's live order events. The setter merges what was
 * read with what arrived meanwhile (the newer copy of each order wins), so an event that lands
 * while a read is on its way is not lost.
 */
export function useLiveOrders(
  initial: Order[] | null,
  belongs: (order: Order) => boolean,
): [Order[] | null, (orders: Order[]) => void] {
  const [orders, setOrders] = useState<Order[] | null>(initial);
  const load = (fresh: Order[]) => setOrders((list) => mergeInto(list, fresh));
  const belongsRef = useRef(belongs);
  belongsRef.current = belongs;
  useEffect(() =>
    userEvents.on((e) => {
      if (e.event !== "order.created" && e.event !== "order.status_changed") return;
      const order = e.payload as Order;
      if (!order?.id || !belongsRef.current(order)) return;
      setOrders((list) => mergeOrder(list, order));
    }), []);
  return [orders, load];
}

/** `fresh` (in its order), each replaced by the copy in `list` when that one is newer. */
export function mergeInto(list: Order[] | null, fresh: Order[]): Order[] {
  const known = new Map((list ?? []).map((o) => [o.id, o]));
  const merged = fresh.map((o) => {
    const mine = known.get(o.id);
    return mine && Date.parse(mine.updatedAt) > Date.parse(o.updatedAt) ? mine : o;
  });
  const ids = new Set(fresh.map((o) => o.id));
  return [...(list ?? []).filter((o) => !ids.has(o.id)), ...merged];
}

/** The order replaced (or added, newest first), unless what we have is newer. */
export function mergeOrder(list: Order[] | null, order: Order): Order[] {
  const current = list ?? [];
  const index = current.findIndex((o) => o.id === order.id);
  if (index < 0) return [order, ...current];
  if (Date.parse(current[index].updatedAt) > Date.parse(order.updatedAt)) return current;
  const next = current.slice();
  next[index] = order;
  return next;
}
