/**
 * The store's shapes, shared by its routes and the OpenAPI document (contract, "Store"): money,
 * vendor, product, order, checkout and settlement.
 */
import { z } from "@hono/zod-openapi";

export const money = z.object({
  amount: z.number().int().openapi({ description: "Integer minor units (cents for USD)" }),
  currency: z.string().openapi({ example: "USD" }),
}).openapi("Money");

const time = z.string().openapi({ format: "date-time" });

export const vendorSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  logoUrl: z.string().nullable(),
  status: z.enum(["pending", "approved", "rejected", "suspended"]),
  payouts: z.object({ status: z.enum(["not_started", "pending", "active", "restricted"]) }),
  createdAt: time,
  // The owner and ADMINs also see:
  ownerId: z.uuid().nullable().optional(),
  contactEmail: z.string().optional(),
  country: z.string().optional(),
  commissionBps: z.number().int().optional().openapi({
    description: "The commission this vendor pays: its override or store.commissionBps",
  }),
  commissionOverride: z.boolean().optional(),
  updatedAt: time.optional(),
  decisions: z.array(z.object({
    from: z.string(),
    to: z.string(),
    reason: z.string(),
    commissionBps: z.number().int().nullable(),
    decidedBy: z.uuid().nullable(),
    at: time,
  })).optional().openapi({ description: "The ADMIN decisions, oldest first" }),
}).openapi("Vendor");

export const productSchema = z.object({
  id: z.uuid(),
  vendor: z.object({ id: z.uuid(), name: z.string(), slug: z.string() }),
  title: z.string(),
  description: z.string(),
  category: z.string(),
  tags: z.array(z.string()),
  images: z.array(z.string()),
  price: money,
  stock: z.object({
    available: z.number().int().openapi({ description: "Stock less what unpaid checkouts hold" }),
    onHand: z.number().int().optional().openapi({
      description: "The vendor's owner only: the units on hand, what `stock` sets in " +
        "PUT /api/store/products/{id} (available + reserved)",
    }),
    reserved: z.number().int().optional().openapi({
      description: "The vendor's owner only: units held by unpaid checkouts",
    }),
  }),
  status: z.enum(["draft", "active", "archived", "hidden"]).openapi({
    description: "`hidden`: taken out of the catalog by an ADMIN after a report (its vendor's " +
      "owner and ADMINs still see it)",
  }),
  createdAt: time,
  updatedAt: time,
}).openapi("Product");

export const orderStatus = z.enum([
  "pending_payment",
  "paid",
  "processing",
  "shipped",
  "delivered",
  "completed",
  "cancelled",
  "refunded",
]);

export const addressSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  line1: z.string().trim().min(1).max(200),
  line2: z.string().trim().max(200).optional(),
  city: z.string().trim().min(1).max(100),
  postalCode: z.string().trim().min(1).max(20),
  country: z.string().regex(/^[A-Z]{2}$/, "an ISO 3166-1 alpha-2 code, e.g. US")
    .openapi({ example: "US" }),
}).openapi("Address");

export const orderSchema = z.object({
  id: z.uuid(),
  checkoutId: z.uuid(),
  buyerId: z.uuid().nullable(),
  vendor: z.object({ id: z.uuid(), name: z.string() }),
  status: orderStatus,
  items: z.array(z.object({
    productId: z.uuid(),
    title: z.string(),
    unitPrice: money,
    quantity: z.number().int(),
    total: money,
  })),
  total: money,
  payment: z.object({
    status: z.enum(["pending", "succeeded", "failed", "refunded"]),
    refund: z.object({ status: z.enum(["pending", "succeeded", "failed"]), amount: money })
      .nullable(),
  }),
  shipping: z.object({
    address: addressSchema.nullable(),
    carrier: z.string().nullable(),
    trackingNumber: z.string().nullable(),
  }),
  history: z.array(z.object({
    from: orderStatus.nullable(),
    to: orderStatus,
    actor: z.enum(["buyer", "vendor", "admin", "system"]),
    reason: z.string().nullable(),
    at: time,
  })),
  createdAt: time,
  updatedAt: time,
}).openapi("Order");

export const checkoutSchema = z.object({
  checkout: z.object({
    id: z.uuid(),
    total: money,
    reservedUntil: time,
    orders: z.array(orderSchema),
    payment: z.object({
      provider: z.enum(["stripe", "dev"]),
      paymentIntentId: z.string(),
      clientSecret: z.string().nullable(),
      status: z.enum(["pending", "succeeded", "failed", "refunded"]),
    }),
  }),
}).openapi("Checkout");

export const settlementSchema = z.object({
  id: z.uuid(),
  vendorId: z.uuid(),
  runId: z.uuid(),
  periodEnd: time,
  orderCount: z.number().int(),
  gross: money,
  commission: money,
  refunds: money,
  net: money,
  status: z.enum(["pending", "paid", "held", "failed"]),
  transferId: z.string().nullable(),
  carriedInto: z.uuid().nullable(),
  createdAt: time,
  paidAt: time.nullable(),
}).openapi("Settlement");

export type VendorJson = z.infer<typeof vendorSchema>;
export type ProductJson = z.infer<typeof productSchema>;
export type OrderJson = z.infer<typeof orderSchema>;
export type CheckoutJson = z.infer<typeof checkoutSchema>;
export type SettlementJson = z.infer<typeof settlementSchema>;
