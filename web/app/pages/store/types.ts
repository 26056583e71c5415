/**
 * The store's shapes, from the API's OpenAPI document (`Schema<...>`, `Answer<...>` of
 * lib/client.ts: never typed by hand), and how the store, vendor and admin pages word them.
 */
import {
  type Answer,
  client,
  data,
  type Query,
  type RequestBody,
  type Schema,
} from "../../lib/client.ts";
import type { Money } from "../../lib/format.ts";

export type { Money };
export type Product = Schema<"Product">;
export type ProductPage = Answer<"/api/store/products", "get">;
/** A product's fields as the vendor sends them (`stock`: on hand, with `expectedStock`). */
export type ProductInput = RequestBody<"/api/store/products/{id}", "put">;
export type Order = Schema<"Order">;
export type OrderStatus = Order["status"];
/** A shipping address (the schema allows none: an order without shipping). */
export type Address = NonNullable<Schema<"Address">>;
export type Checkout = Schema<"Checkout">["checkout"];
export type Vendor = Schema<"Vendor">;
/** The caller's own shop, with its balances. */
export type OwnVendor = Answer<"/api/store/vendors/me", "get">;
export type Settlement = Schema<"Settlement">;

/**
 * A page of the catalog (or of the caller's own shop's products, `vendorId`), with its facets.
 * The catalog's filters come from the address as text: the API reads them as its query says.
 */
export async function searchProducts(
  query: Query<"/api/store/products", "get"> | Record<string, string | number | undefined>,
): Promise<ProductPage> {
  return data(
    await client.GET("/api/store/products", {
      params: { query: query as Query<"/api/store/products", "get"> },
    }),
  );
}

/** An order's number as people read it (the e-mails say "Your order 1a2b3c4d"). */
export function orderNumber(order: { id: string }): string {
  return order.id.slice(0, 8);
}

/** Words for an order's status. */
export const ORDER_STATUS: Record<OrderStatus, string> = {
  pending_payment: "Awaiting payment",
  paid: "Paid",
  processing: "Being prepared",
  shipped: "Shipped",
  delivered: "Delivered",
  completed: "Completed",
  cancelled: "Cancelled",
  refunded: "Refunded",
};

/** The class of an order's status pill (the colour never carries the meaning alone). */
export function statusTone(status: string): string {
  if (
    ["paid", "processing", "shipped", "approved", "active", "succeeded", "confirmed"].includes(
      status,
    )
  ) {
    return "ok";
  }
  if (["cancelled", "refunded", "rejected", "suspended", "failed", "expired"].includes(status)) {
    return "bad";
  }
  if (["delivered", "completed"].includes(status)) return "done";
  return "wait";
}
