/**
 * Orders in the page's query cache, kept current by the live order events (`order.created`,
 * `order.status_changed` carry the whole order: the buyer's on `user:<id>`, the shop's on
 * `vendor:<id>`), with the order calls the checkout, the buyer's orders and the shop's orders
 * share (the typed client).
 *
 * Keys: `["store", "orders", id]` (one order), `["store", "orders", "list", { as, status }]` (a
 * list's pages, newest first), `["store", "orders", "checkout", id]` (a checkout's orders). An
 * event writes the order into each of them that holds it, and adds a new one on top of the lists
 * it belongs to. The newer copy of an order always wins (`updatedAt`), whichever arrives first:
 * every answer and every event goes through `newest`, so a read that was on its way while an
 * event came never puts the older copy back, and an order announced during the read of a list's
 * first page is added to it.
 */
import { onSignedOut } from "../../lib/session.ts";
import { userEvents } from "../../lib/user-events.ts";
import { ApiError, client, data, FRESH, type Query, type RequestBody } from "../../lib/client.ts";
import {
  queryClient,
  refreshPages,
  updatePages,
  useInfiniteQuery,
  useQuery,
} from "../../lib/query.ts";
import type { InfiniteData } from "@tanstack/query-core";
import type { Order } from "./types.ts";

type As = "buyer" | "vendor";
type OrderPage = { items: Order[]; nextCursor: string | null };

export const ORDERS_KEY = ["store", "orders"] as const;
const orderKey = (id: string) => [...ORDERS_KEY, id] as const;
const LISTS_KEY = [...ORDERS_KEY, "list"] as const;
const listKey = (as: As, status: string) => [...LISTS_KEY, { as, status }] as const;
const checkoutKey = (id: string) => [...ORDERS_KEY, "checkout", id] as const;

/** The newest copy of every order this page has seen, and when (a count) it was announced. */
const seen = new Map<string, { order: Order; as?: As; announced: number }>();
let announcements = 0;

/** The newer of `order` and the copy seen before (which it replaces when newer). */
function newest(order: Order, as?: As): Order {
  const known = seen.get(order.id);
  if (known && Date.parse(known.order.updatedAt) > Date.parse(order.updatedAt)) return known.order;
  seen.set(order.id, { order, as: as ?? known?.as, announced: known?.announced ?? 0 });
  return order;
}

/**
 * Moves an order (the API says which moves the caller may make); the cache gets the answer. An
 * order already where the move takes it is done, not an error: the person tried again after an
 * answer lost on the way (the first try moved it), or someone else made the same move first.
 */
export async function moveOrder(
  id: string,
  body: RequestBody<"/api/store/orders/{id}/status", "put">,
): Promise<Order> {
  let order: Order;
  try {
    order = data(
      await client.PUT("/api/store/orders/{id}/status", { params: { path: { id } }, body }),
    );
  } catch (err) {
    const from = err instanceof ApiError && err.code === "invalid_transition"
      ? (err.details as { from?: string } | undefined)?.from
      : undefined;
    if (from !== body.status) throw err;
    order = data(
      await client.GET("/api/store/orders/{id}", { params: { path: { id } }, ...FRESH }),
    );
  }
  applyOrder(order);
  return newest(order);
}

/** One order (its buyer, its shop's owner, or an ADMIN), read at each visit: it moves. */
export function useOrder(id: string | undefined) {
  return useQuery({
    queryKey: orderKey(id ?? ""),
    queryFn: async () =>
      newest(data(
        await client.GET("/api/store/orders/{id}", { params: { path: { id: id! } }, ...FRESH }),
      )),
    enabled: !!id,
    staleTime: 0,
  });
}

/**
 * The caller's orders as the buyer or as the shop's owner (`status` "": all), page by page ("Load
 * more": `fetchNextPage`), read at each visit.
 */
export function useOrderList(as: As, status: string) {
  return useInfiniteQuery({
    queryKey: listKey(as, status),
    queryFn: async ({ pageParam }) => {
      const since = announcements;
      const query = { as, status, limit: as === "vendor" ? 50 : 25, cursor: pageParam ?? "" };
      const page = data(
        await client.GET("/api/store/orders", {
          params: { query: query as Query<"/api/store/orders", "get"> },
          ...FRESH,
        }),
      );
      const items = page.items.map((o) => newest(o, as));
      if (pageParam) return { ...page, items };
      // Orders announced while the first page was on its way, and not in it.
      const ids = new Set(items.map((o) => o.id));
      const arrived = [...seen.values()]
        .filter((s) => s.announced > since && s.as === as && !ids.has(s.order.id))
        .map((s) => s.order)
        .filter((o) => !status || o.status === status);
      return { ...page, items: [...arrived, ...items] };
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last: OrderPage) => last.nextCursor,
    staleTime: 0,
  });
}

/** A checkout (what `read` says of it: its payment) and its orders (the buyer's). */
export function useCheckoutOrders<C>(
  checkoutId: string,
  read: () => Promise<{ checkout: C; orders: Order[] }>,
) {
  return useQuery({
    queryKey: checkoutKey(checkoutId),
    queryFn: async () => {
      const { checkout, orders } = await read();
      return { checkout, orders: orders.map((o) => newest(o, "buyer")) };
    },
    staleTime: 0,
  });
}

/** A page of the buyer's orders (the checkout's fallback when the tab has no checkout). */
export async function buyerOrders(limit: number): Promise<Order[]> {
  const query = { as: "buyer", limit } as Query<"/api/store/orders", "get">;
  return data(await client.GET("/api/store/orders", { params: { query }, ...FRESH })).items;
}

/** One order read now (not cached: the checkout reads its orders into its own key). */
export async function readOrder(id: string): Promise<Order> {
  return data(await client.GET("/api/store/orders/{id}", { params: { path: { id } }, ...FRESH }));
}

/**
 * An order as an event or an answer tells it, written into every cached place that shows it (the
 * newer copy wins); announced (`as`: the topic it came on), it is also added on top of the lists of
 * that side it belongs to.
 */
export function applyOrder(incoming: Order, announcedAs?: As): void {
  if (announcedAs) {
    newest(incoming, announcedAs);
    const known = seen.get(incoming.id)!;
    known.announced = ++announcements;
  }
  const order = newest(incoming);
  if (queryClient.getQueryData(orderKey(order.id))) {
    queryClient.setQueryData(orderKey(order.id), order);
  }
  queryClient.setQueriesData<{ orders: Order[] }>(
    { queryKey: checkoutKey(order.checkoutId) },
    (held) =>
      held && {
        ...held,
        orders: held.orders.some((o) => o.id === order.id)
          ? held.orders.map((o) => o.id === order.id ? order : o)
          : [...held.orders, order],
      },
  );
  updatePages<OrderPage>(LISTS_KEY, (page) => ({
    ...page,
    items: page.items.map((o) => o.id === order.id ? order : o),
  }));
  if (!announcedAs) return;
  for (
    const [key, list] of queryClient.getQueriesData<InfiniteData<OrderPage>>({
      queryKey: LISTS_KEY,
    })
  ) {
    const { as, status } = key[3] as { as: As; status: string };
    if (!list || as !== announcedAs || (status && status !== order.status)) continue;
    if (list.pages.some((p) => p.items.some((o) => o.id === order.id))) continue;
    const [first, ...rest] = list.pages;
    queryClient.setQueryData<InfiniteData<OrderPage>>(key, {
      ...list,
      pages: [{ ...first, items: [order, ...first.items] }, ...rest],
    });
  }
}

/** The shop's lists read again (its feed came up: what happened before is not in the events). */
export function readShopOrdersAgain(): void {
  void refreshPages([...LISTS_KEY, { as: "vendor" }]);
}

// What one person saw is not kept for the next (the cache is emptied the same way).
onSignedOut(() => seen.clear());

// Every order event on the user's topic is one of theirs as the buyer.
userEvents.on((e) => {
  if (e.event !== "order.created" && e.event !== "order.status_changed") return;
  const order = e.payload as Order;
  if (order?.id) applyOrder(order, "buyer");
});
