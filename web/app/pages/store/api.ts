/** The store's API as the store, vendor and admin pages use it (API contract, "Store"). */
import { api, query } from "../../lib/api.ts";
import type { Money } from "../../lib/format.ts";

export type { Money };

export interface VendorRef {
  id: string;
  name: string;
  slug?: string;
}

export interface Product {
  id: string;
  vendor: { id: string; name: string; slug: string };
  title: string;
  description: string;
  category: string;
  tags: string[];
  images: string[];
  price: Money;
  /** `onHand` and `reserved`: only in the answers to the vendor's owner. */
  stock: { available: number; onHand?: number; reserved?: number };
  status: "draft" | "active" | "archived" | "hidden";
  createdAt: string;
  updatedAt: string;
}

export interface Facets {
  categories: { value: string; count: number }[];
  vendors: { id: string; name: string; count: number }[];
  price: { min: number | null; max: number | null };
}

export interface ProductPage {
  items: Product[];
  nextCursor: string | null;
  facets: Facets;
  correctedQuery?: string | null;
}

export type OrderStatus =
  | "pending_payment"
  | "paid"
  | "processing"
  | "shipped"
  | "delivered"
  | "completed"
  | "cancelled"
  | "refunded";

export interface Address {
  name: string;
  line1: string;
  line2?: string;
  city: string;
  postalCode: string;
  country: string;
}

export interface Order {
  id: string;
  checkoutId: string;
  buyerId: string | null;
  vendor: { id: string; name: string };
  status: OrderStatus;
  items: { productId: string; title: string; unitPrice: Money; quantity: number; total: Money }[];
  total: Money;
  payment: { status: "pending" | "succeeded" | "failed" | "refunded" };
  shipping: { address?: Address | null; carrier?: string | null; trackingNumber?: string | null };
  history: {
    from: OrderStatus | null;
    to: OrderStatus;
    actor: "buyer" | "vendor" | "admin" | "system";
    reason: string | null;
    at: string;
  }[];
  createdAt: string;
  updatedAt: string;
}

export interface Checkout {
  id: string;
  total: Money;
  reservedUntil?: string;
  orders: Order[];
  payment: {
    provider: "stripe" | "dev";
    paymentIntentId: string;
    clientSecret: string | null;
    status: "pending" | "succeeded" | "failed" | "refunded";
  };
}

export interface Vendor {
  id: string;
  name: string;
  slug: string;
  description: string;
  logoUrl: string | null;
  status: "pending" | "approved" | "rejected" | "suspended";
  payouts: { status: "not_started" | "pending" | "active" | "restricted" };
  createdAt: string;
  ownerId?: string | null;
  contactEmail?: string;
  country?: string;
  commissionBps?: number;
  decisions?: {
    from: string;
    to: string;
    reason: string;
    commissionBps: number | null;
    decidedBy: string | null;
    at: string;
  }[];
}

export interface OwnVendor extends Vendor {
  balances: { pending: Money; settled: Money; awaitingPayout: Money };
}

export interface Settlement {
  id: string;
  vendorId: string;
  runId: string;
  periodEnd: string;
  orderCount: number;
  gross: Money;
  commission: Money;
  refunds: Money;
  net: Money;
  status: "pending" | "paid" | "held" | "failed";
  transferId: string | null;
  createdAt: string;
  paidAt: string | null;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

type Params = Record<string, string | number | boolean | null | undefined>;

export interface ProductInput {
  title?: string;
  description?: string;
  category?: string;
  tags?: string[];
  images?: string[];
  price?: Money;
  /** The units on hand (available + reserved); left out, the stock stays as it is. */
  stock?: number;
  /** With `stock`: the units on hand it was based on (409 when they moved). */
  expectedStock?: number;
  status?: "draft" | "active" | "archived";
}

export const storeApi = {
  products: (params: Params) => api.get<ProductPage>(`/api/store/products${query(params)}`),
  product: (id: string) => api.get<Product>(`/api/store/products/${id}`, { fresh: true }),
  createProduct: (input: ProductInput) => api.post<Product>("/api/store/products", input),
  updateProduct: (id: string, input: ProductInput) =>
    api.put<Product>(`/api/store/products/${id}`, input),
  orders: (params: Params) =>
    api.get<Page<Order>>(`/api/store/orders${query(params)}`, { fresh: true }),
  order: (id: string) => api.get<Order>(`/api/store/orders/${id}`, { fresh: true }),
  checkOut: (
    body: { items: { productId: string; quantity: number }[]; shipping?: { address: Address } },
    idempotencyKey: string,
  ) =>
    api.post<{ checkout: Checkout }>("/api/store/orders", body, {
      headers: { "idempotency-key": idempotencyKey },
    }),
  /**
   * The payment of one's own unpaid checkout, from any tab or device while it is reserved
   * (404 another's; 422 paid, cancelled or expired).
   */
  resumePayment: (checkoutId: string) =>
    api.post<{ checkout: Checkout }>(`/api/store/checkouts/${checkoutId}/payment`),
  moveOrder: (
    id: string,
    body: { status: OrderStatus; reason?: string; trackingNumber?: string; carrier?: string },
  ) => api.put<Order>(`/api/store/orders/${id}/status`, body),
  myVendor: () => api.get<OwnVendor>("/api/store/vendors/me", { fresh: true }),
  apply: (body: { name: string; description: string; contactEmail: string; country: string }) =>
    api.post<Vendor>("/api/store/vendors/apply", body),
  payoutsLink: () => api.post<{ url: string }>("/api/store/vendors/me/payouts"),
  mySettlements: (params: Params) =>
    api.get<Page<Settlement>>(`/api/store/vendors/me/settlements${query(params)}`, {
      fresh: true,
    }),
};

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
