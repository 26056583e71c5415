/**
 * /api/store/products: the public catalog (search, filters, sorts, facets, keyset cursors) and
 * vendors' products. Reads are public (anonymous callers run as `anon`; a signed-in caller as
 * themselves, so a vendor sees its own drafts with `vendorId` = its own); writes need SUBSCRIBER
 * and the ownership of an approved vendor (403 otherwise). Queries: store/products.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../core/context.ts";
import {
  anyone,
  decodeCursor,
  encodeCursor,
  errors,
  json,
  jsonBody,
  pageOf,
  router,
  signedIn,
} from "../core/openapi.ts";
import { badRequest, notFound } from "../../_shared/errors.ts";
import type { Tx } from "../../_shared/db.ts";
import { asAnonymous, asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import {
  createProduct,
  findProductImage,
  getProduct,
  PRODUCT_IMAGE_PATH,
  type ProductCursor,
  type ProductSort,
  searchProducts,
  updateProduct,
} from "./products.queries.ts";
import { money, productSchema } from "./store.schemas.ts";

export const products = router();

/** Public reads: as the caller when signed in (own drafts), else as `anon`. */
function asReader<T>(c: Context<AppEnv>, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return c.get("claims") ? asUser(c, fn) : asAnonymous(c, fn);
}

const SORTS = ["relevance", "newest", "price_asc", "price_desc"] as const;
const minorUnits = z.coerce.number().int().min(0).max(100_000_000_000);

const searchQuery = z.object({
  q: z.string().trim().min(1).max(200).optional(),
  category: z.string().trim().min(1).max(60).optional(),
  vendorId: z.uuid().optional(),
  minPrice: minorUnits.optional().openapi({ description: "Minor units, inclusive" }),
  maxPrice: minorUnits.optional().openapi({ description: "Minor units, inclusive" }),
  inStock: z.enum(["true", "false"]).transform((v) => v === "true").optional(),
  sort: z.enum(SORTS).default("relevance"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(1000).optional(),
});

const facetsSchema = z.object({
  categories: z.array(z.object({ value: z.string(), count: z.number().int() })),
  vendors: z.array(z.object({ id: z.uuid(), name: z.string(), count: z.number().int() })),
  price: z.object({ min: z.number().int().nullable(), max: z.number().int().nullable() }),
});

products.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "searchProducts",
    summary: "Search the catalog",
    description: "Active products of approved vendors (a vendor also sees its own drafts with " +
      "`vendorId` = its own). `q` is a full-text search (English stemming, ranked; when it " +
      "matches nothing, its misspelt words are corrected to the catalog's vocabulary and the " +
      "corrected search runs instead: `correctedQuery`). Prices are minor units, inclusive. Facets apply every filter but their own. " +
      "`relevance` without `q` sorts as `newest`. Cursors are keyset-based and belong to one sort.",
    security: anyone,
    request: { query: searchQuery },
    responses: {
      200: json(
        pageOf(productSchema).extend({
          facets: facetsSchema,
          correctedQuery: z.string().nullable().openapi({
            description: "When `q` matched nothing and its misspelt words were corrected to " +
              "the catalog's vocabulary: the search that was run instead",
          }),
        }),
        "A page of products with facets",
      ),
      ...errors(400, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    if (q.minPrice !== undefined && q.maxPrice !== undefined && q.minPrice > q.maxPrice) {
      throw badRequest("minPrice is above maxPrice.", [{
        path: "minPrice",
        message: "above maxPrice",
      }]);
    }
    let after: ProductCursor | null = null;
    if (q.cursor) {
      after = decodeCursor(q.cursor, ["string", "string", "string", "string"]) as ProductCursor;
      if (after[0] !== q.sort) {
        throw badRequest("The cursor belongs to another sort.", [{
          path: "cursor",
          message: `a cursor of sort ${after[0]}`,
        }]);
      }
    }
    const result = await asReader(c, (tx) =>
      searchProducts(tx, {
        q: q.q,
        category: q.category,
        vendorId: q.vendorId,
        minPrice: q.minPrice,
        maxPrice: q.maxPrice,
        inStock: q.inStock,
        sort: q.sort as ProductSort,
        after,
        limit: q.limit,
      }));
    return c.json({
      items: result.items,
      nextCursor: result.next ? encodeCursor(result.next) : null,
      facets: result.facets,
      correctedQuery: result.corrected,
    }, 200);
  },
);

products.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getProduct",
    summary: "One product",
    description:
      "A catalog product, or one of the caller's own vendor (any status); 404 otherwise.",
    security: anyone,
    request: { params: z.object({ id: z.uuid() }) },
    responses: { 200: json(productSchema, "The product"), ...errors(400, 403, 404) },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asReader(c, (tx) => getProduct(tx, id)), 200);
  },
);

const productFields = {
  title: z.string().trim().min(1).max(200),
  description: z.string().max(10_000),
  category: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "lowercase words joined by -").max(60)
    .openapi({ example: "home-garden" }),
  tags: z.array(z.string().trim().min(1).max(40)).max(20),
  images: z.array(
    z.union([
      z.url().max(2048),
      z.string().regex(PRODUCT_IMAGE_PATH, "/api/store/images/<attachment id>").openapi({
        example: "/api/store/images/3f0c1a52-7e1b-4c5e-9a53-0c2d3b1e9f10",
        description: "A picture the vendor uploaded (POST /api/attachments: a PNG, JPEG, " +
          "GIF or WebP of the caller's own), served by GET /api/store/images/{id}",
      }),
    ]),
  ).max(10),
  price: money.extend({
    amount: z.number().int().min(1).max(100_000_000_000),
    currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code, e.g. USD")
      .openapi({ example: "USD" }),
  }),
  stock: z.number().int().min(0).max(1_000_000_000),
};

const createProductBody = z.object({
  ...productFields,
  tags: productFields.tags.optional(),
  images: productFields.images.optional(),
  status: z.enum(["draft", "active"]).default("active"),
});

products.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "createProduct",
    summary: "Create a product (owner of an approved vendor)",
    description: "The price's currency must be the store's (`store.currency`); `status` " +
      "defaults to `active`. 403 unless the caller owns an approved vendor.",
    security: signedIn,
    middleware: [requireRole("SUBSCRIBER")] as const,
    request: { body: jsonBody(createProductBody) },
    responses: {
      201: json(productSchema, "Created"),
      ...errors(400, 401, 403, 404, 413, 415, 422),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const product = await asUser(c, (tx) => createProduct(tx, body));
    return c.json(product, 201);
  },
);

const updateProductBody = z.object({
  title: productFields.title.optional(),
  description: productFields.description.optional(),
  category: productFields.category.optional(),
  tags: productFields.tags.optional(),
  images: productFields.images.optional(),
  price: productFields.price.optional(),
  stock: productFields.stock.optional().openapi({
    description: "The units on hand (`stock.onHand`, not `available`): what unpaid checkouts " +
      "hold is part of it. Leave it out to keep it as it is.",
  }),
  expectedStock: productFields.stock.optional().openapi({
    description: "With `stock`: the `onHand` the change was based on; 409 when it is no " +
      "longer that (a sale or another edit came between), and nothing is changed.",
  }),
  status: z.enum(["draft", "active", "archived"]).optional(),
}).refine(
  (b) => Object.entries(b).some(([k, v]) => k !== "expectedStock" && v !== undefined),
  "change at least one field",
).refine((b) => b.expectedStock === undefined || b.stock !== undefined, {
  message: "expectedStock goes with stock",
  path: ["expectedStock"],
});

products.openapi(
  createRoute({
    method: "put",
    path: "/{id}",
    operationId: "updateProduct",
    summary: "Change a product (its vendor's owner)",
    description: "Any of the creation fields, and `archived` as a status; fields left out keep " +
      "their value. `stock` is the units on hand (`stock.onHand` in the product its owner " +
      "reads), and may not go below what unpaid checkouts hold (422); with `expectedStock`, " +
      "a stock that moved since is 409 `conflict` (details: `expectedStock`, `currentStock`) " +
      "and nothing changes. 403 for a product of another vendor (or when the caller's vendor " +
      "is no longer approved), 404 for one the caller cannot see.",
    security: signedIn,
    middleware: [requireRole("SUBSCRIBER")] as const,
    request: { params: z.object({ id: z.uuid() }), body: jsonBody(updateProductBody) },
    responses: {
      200: json(productSchema, "The product"),
      ...errors(400, 401, 403, 404, 409, 413, 415, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    return c.json(await asUser(c, (tx) => updateProduct(tx, id, body)), 200);
  },
);

/** /api/store/images: the pictures vendors uploaded for their products. */
export const productImages = router();

productImages.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getProductImage",
    summary: "A product's uploaded picture",
    description: "A picture a vendor uploaded and lists among a product's `images` " +
      "(`/api/store/images/<id>`), for whoever may see that product (`app.product_image`: " +
      "catalog products for anyone, others for their vendor's owner and ADMINs); 404 " +
      "otherwise, and for an upload that is no product's picture.",
    security: anyone,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: {
        description: "The image, served with the type it was uploaded with (PNG, JPEG, GIF or " +
          "WebP)",
        content: { "image/*": { schema: { type: "string", format: "binary" } } },
      },
      ...errors(400, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const deps = c.get("deps");
    const row = await asReader(c, (tx) => findProductImage(tx, id));
    const file = row && await deps.storage.get(row.storage_key);
    if (!row || !file) {
      if (row) {
        deps.log("warn", "product image file missing from storage", {
          requestId: c.get("requestId"),
          attachmentId: id,
        });
      }
      throw notFound("Image not found.");
    }
    return new Response(file.body, {
      status: 200,
      headers: {
        "Content-Type": row.content_type,
        "Content-Length": String(file.size),
        "Content-Disposition": "inline",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        // Whether the caller may see it can change (a product hidden or archived): kept briefly,
        // and only by the browser.
        "Cache-Control": "private, max-age=300",
      },
    });
  },
);
