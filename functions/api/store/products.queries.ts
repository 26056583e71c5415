/**
 * Queries of /api/store/products (store/products.routes.ts). The catalog is read through
 * `app.search_products` and `app.get_product` (visitors hold no privilege on app tables; the
 * functions decide visibility); vendors write their products under RLS (`products_insert_vendor`,
 * `products_update_vendor`: the owner of an approved vendor).
 */
import type { Tx } from "../../_shared/db.ts";
import { conflict, forbidden, notFound } from "../../_shared/errors.ts";
import type { ProductJson } from "./store.schemas.ts";

export type ProductSort = "relevance" | "newest" | "price_asc" | "price_desc";

/** A catalog cursor: the sort it belongs to, the search mode, the last row's key and id. */
export type ProductCursor = [sort: ProductSort, mode: string, key: string, id: string];

export interface SearchQuery {
  q?: string;
  category?: string;
  vendorId?: string;
  minPrice?: number;
  maxPrice?: number;
  inStock?: boolean;
  sort: ProductSort;
  after: ProductCursor | null;
  limit: number;
}

interface SearchResult {
  items: ProductJson[];
  next: ProductCursor | null;
  facets: {
    categories: { value: string; count: number }[];
    vendors: { id: string; name: string; count: number }[];
    price: { min: number | null; max: number | null };
  };
  mode: string;
  /** The search with its misspelt words corrected, when that is what was searched. */
  corrected: string | null;
}

/** One page of the catalog with its facets (`next` becomes the opaque cursor). */
export async function searchProducts(tx: Tx, q: SearchQuery): Promise<SearchResult> {
  const [row] = await tx<{ result: SearchResult }[]>`
    select app.search_products(
      ${q.q ?? null}, ${q.category ?? null}, ${q.vendorId ?? null}::uuid,
      ${q.minPrice ?? null}::bigint, ${q.maxPrice ?? null}::bigint, ${q.inStock ?? null}::boolean,
      ${q.sort}, ${q.after?.[1] ?? null}, ${q.after?.[2] ?? null}, ${q.after?.[3] ?? null}::uuid,
      ${q.limit}
    ) as result`;
  return row.result;
}

/** A product the caller may see (catalog, or its own vendor's), else 404. */
export async function getProduct(tx: Tx, id: string): Promise<ProductJson> {
  const [row] = await tx<{ product: ProductJson | null }[]>`
    select app.get_product(${id}::uuid) as product`;
  if (!row.product) throw notFound("No such product.");
  return row.product;
}

/** A product picture the vendor uploaded, as `images` lists it (GET /api/store/images/{id}). */
export const PRODUCT_IMAGE_PATH =
  /^\/api\/store\/images\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * Makes the uploads `images` lists (`/api/store/images/<id>`) the product's pictures
 * (`app.link_product_images`: the caller's own images, AG404/AG415 otherwise).
 */
async function linkImages(tx: Tx, productId: string, images: string[] | undefined) {
  const ids = (images ?? []).map((i) => PRODUCT_IMAGE_PATH.exec(i)?.[1]).filter(Boolean);
  if (!ids.length) return;
  await tx`select app.link_product_images(${productId}::uuid, ${ids as string[]}::uuid[])`;
}

/** The stored file of a product picture the caller may see, or null (`app.product_image`). */
export async function findProductImage(tx: Tx, attachmentId: string) {
  const [row] = await tx<{ content_type: string; storage_key: string }[]>`
    select content_type, storage_key from app.product_image(${attachmentId}::uuid)`;
  return row ?? null;
}

export interface ProductInput {
  title?: string;
  description?: string;
  category?: string;
  tags?: string[];
  images?: string[];
  price?: { amount: number; currency: string };
  stock?: number;
  /** With `stock`: the units on hand the change was based on (409 when they moved). */
  expectedStock?: number;
  status?: "draft" | "active" | "archived";
}

function columns(input: ProductInput): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  if (input.title !== undefined) values.title = input.title;
  if (input.description !== undefined) values.description = input.description;
  if (input.category !== undefined) values.category = input.category;
  if (input.tags !== undefined) values.tags = input.tags;
  if (input.images !== undefined) values.images = input.images;
  if (input.price !== undefined) {
    values.price_amount = input.price.amount;
    values.currency = input.price.currency;
  }
  if (input.stock !== undefined) values.stock = input.stock;
  if (input.status !== undefined) values.status = input.status;
  return values;
}

/** Creates a product for the caller's approved vendor (403 without one; RLS checks it again). */
export async function createProduct(tx: Tx, input: ProductInput): Promise<ProductJson> {
  const [vendor] = await tx<{ id: string }[]>`
    select v as id from app.my_selling_vendor_ids() v limit 1`;
  if (!vendor) throw forbidden("Only the owner of an approved vendor can sell products.");
  const values = { ...columns(input), vendor_id: vendor.id };
  const [row] = await tx<{ id: string }[]>`
    insert into app.products ${tx(values as never, Object.keys(values) as never)} returning id`;
  await linkImages(tx, row.id, input.images);
  return await getProduct(tx, row.id);
}

/**
 * Changes a product of the caller's approved vendor. RLS hides every other product from the
 * update: then a product the caller can see is 403 (not theirs, or their vendor is not approved
 * now), one they cannot is 404.
 */
export async function updateProduct(tx: Tx, id: string, input: ProductInput): Promise<ProductJson> {
  const values = columns(input);
  const expected = input.expectedStock ?? null;
  // The expected stock is checked by the update itself, on the row it locks: a sale or another
  // edit committed in between makes it match nothing.
  const rows = await tx<{ id: string }[]>`
    update app.products set ${tx(values as never, Object.keys(values) as never)}
    where id = ${id}::uuid and (${expected}::integer is null or stock = ${expected}::integer)
    returning id`;
  if (!rows.length) {
    if (expected !== null) {
      // Only a product the caller may change answers 409; any other goes on to 403 or 404.
      const [own] = await tx<{ stock: number }[]>`
        select stock from app.products
        where id = ${id}::uuid and vendor_id in (select app.my_selling_vendor_ids())`;
      if (own && own.stock !== expected) {
        throw conflict("The stock changed since it was read: read the product again.", {
          expectedStock: expected,
          currentStock: own.stock,
        });
      }
    }
    const [seen] = await tx<{ product: unknown }[]>`select app.get_product(${id}::uuid) as product`;
    if (seen.product) throw forbidden("Only the product's vendor can change it.");
    throw notFound("No such product.");
  }
  await linkImages(tx, id, input.images);
  return await getProduct(tx, id);
}
