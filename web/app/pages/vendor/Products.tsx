/**
 * The shop's products (its drafts included: the catalog shows a vendor its own with
 * `vendorId` = its own), a form to add or change one, and stock changed in place.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { useFormReset } from "../../lib/form-reset.ts";
import { upload } from "../../lib/files.ts";
import { minorDigits, money, toMinor } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { Dialog } from "../../components/Dialog.tsx";
import { Pill } from "../../components/Pill.tsx";
import {
  type OwnVendor,
  type Product,
  type ProductInput,
  type ProductPage,
  searchProducts,
} from "../store/types.ts";
import {
  ApiError,
  apiOrigin,
  client,
  data,
  describeError,
  type RequestBody,
} from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";

const ANOTHER = "__another__";

/** A category as people read it: "tea-sets" is "Tea sets". */
export function categoryLabel(slug: string): string {
  const words = slug.replace(/-/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The images field's lines: https URLs and uploaded pictures' paths. */
function imagesOf(text: string): string[] {
  return text.split(/\s+/).map((t) => t.trim()).filter(Boolean);
}

/** The slug the API keeps for a category typed in words ("Tea Sets!" is "tea-sets"). */
function slugOf(text: string): string {
  return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

type NewProduct = RequestBody<"/api/store/products", "post">;

/** Changes a product of the caller's shop (`stock` with `expectedStock`: 409 when it moved). */
async function updateProduct(id: string, body: ProductInput): Promise<Product> {
  return data(await client.PUT("/api/store/products/{id}", { params: { path: { id } }, body }));
}

export function VendorProducts({ vendor }: { vendor: OwnVendor }) {
  // The shop's products in the query cache; a save writes its answer in (the stock) or reads the
  // list again (a product added or edited). Read at each visit: checkouts move the stock.
  const key = ["store", "products", { vendorId: vendor.id }];
  const list = useQuery({
    queryKey: key,
    queryFn: () => searchProducts({ vendorId: vendor.id, sort: "newest", limit: 200 }),
    staleTime: 0,
  });
  const items = list.data?.items ?? null;
  const error = list.error ? describeError(list.error) : null;
  const [editing, setEditing] = useState<Product | "new" | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const currency = vendor.balances.pending.currency;
  const load = () => queryClient.invalidateQueries({ queryKey: key });
  const approved = vendor.status === "approved";
  return (
    <section>
      <div class="card-head">
        <h1>Products</h1>
        <button type="button" disabled={!approved} onClick={() => setEditing("new")}>
          Add a product
        </button>
      </div>
      {!approved && <p class="notice">Products can be added once the shop is approved.</p>}
      {notice && <p class="success" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading…</p>
        : items.length === 0
        ? <p>No products yet.</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Products table">
            <table data-testid="vendor-products">
              <caption class="visually-hidden">Your products</caption>
              <thead>
                <tr>
                  <th scope="col">Product</th>
                  <th scope="col">Status</th>
                  <th scope="col">Price</th>
                  <th scope="col">On hand</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((p) => (
                  <tr key={p.id} data-product-id={p.id}>
                    <td>
                      <Link href={`/store/products/${p.id}`}>{p.title}</Link>
                      <br />
                      <span class="muted small">{p.category}</span>
                    </td>
                    <td>
                      <Pill tone={p.status === "active" ? "ok" : "wait"}>{p.status}</Pill>
                    </td>
                    <td>{money(p.price)}</td>
                    <td>
                      <StockEditor
                        product={p}
                        onSaved={(next) => {
                          queryClient.setQueryData<ProductPage>(
                            key,
                            (page) =>
                              page && {
                                ...page,
                                items: page.items.map((x) => x.id === next.id ? next : x),
                              },
                          );
                          setNotice(`Stock of ${next.title} saved.`);
                        }}
                      />
                    </td>
                    <td>
                      <button
                        type="button"
                        class="secondary small"
                        aria-label={`Edit ${p.title}`}
                        onClick={() => setEditing(p)}
                      >
                        Edit
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      <ProductDialog
        product={editing}
        currency={currency}
        own={items?.map((p) => p.category) ?? []}
        onClose={() => setEditing(null)}
        onSaved={(p) => {
          setEditing(null);
          setNotice(`${p.title} saved.`);
          void load();
        }}
      />
    </section>
  );
}

/** The units on hand of a product its owner reads (the catalog's answers to anyone else lack it). */
const onHand = (p: Product) => p.stock.onHand ?? p.stock.available;

/** The stock on hand a refused stock change (409) reports, when it does. */
function currentStock(err: unknown): number | undefined {
  if (!(err instanceof ApiError) || err.code !== "conflict") return undefined;
  const now = (err.details as { currentStock?: unknown } | undefined)?.currentStock;
  return typeof now === "number" ? now : undefined;
}

/**
 * Why a stock change was refused, in words: a stock that moved since it was read (a sale, or an
 * edit in another tab) says what it is now; anything else as the API says it.
 */
function stockError(err: unknown): string {
  if (err instanceof ApiError && err.code === "conflict") {
    const now = currentStock(err);
    return `The stock changed while you edited it${
      now === undefined ? "" : ` (now ${now} on hand)`
    }. Check the number and save again.`;
  }
  return describeError(err);
}

/**
 * The stock field sets the units on hand, which include what unpaid checkouts hold (shown
 * beside it): the number edited is the number written, and a sale or another edit since it was
 * read is refused (409, `expectedStock`) instead of being overwritten. The API refuses (422) to
 * go below what is held.
 */
function StockEditor({ product, onSaved }: { product: Product; onSaved: (p: Product) => void }) {
  // What the vendor typed, until saved, and the stock it was typed over (what a save expects:
  // a change read meanwhile is refused, not overwritten); untouched, the field shows the stock
  // as last read.
  const [typed, setTyped] = useState<{ value: string; over: number } | null>(null);
  const value = typed?.value ?? String(onHand(product));
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const reserved = product.stock.reserved ?? 0;
  return (
    <form
      class="stock-editor"
      onSubmit={async (e) => {
        e.preventDefault();
        const stock = Number(value);
        if (!Number.isInteger(stock) || stock < 0) return setError("A whole number, 0 or more.");
        try {
          onSaved(
            await updateProduct(product.id, {
              stock,
              expectedStock: typed?.over ?? onHand(product),
            }),
          );
          setTyped(null);
          setError(null);
        } catch (err) {
          setError(stockError(err));
          // Told what the stock is now, the vendor saves again over that number.
          const now = currentStock(err);
          if (now !== undefined) setTyped((t) => t && { ...t, over: now });
        }
      }}
    >
      <label for={id} class="visually-hidden">Stock of {product.title}</label>
      <input
        id={id}
        type="number"
        min={0}
        value={value}
        onInput={(e) => {
          const value = e.currentTarget.value;
          setTyped((now) => ({ value, over: now?.over ?? onHand(product) }));
        }}
      />
      <button
        type="submit"
        class="secondary small"
        disabled={value === String(onHand(product))}
      >
        Save
      </button>
      <span class="muted small" data-testid="stock-detail">
        {product.stock.available} available{reserved ? `, ${reserved} in checkouts` : ""}
      </span>
      {error && <span class="error small" role="alert">{error}</span>}
    </form>
  );
}

function ProductDialog(
  { product, currency, own, onClose, onSaved }: {
    product: Product | "new" | null;
    currency: string;
    /** The categories of the shop's own products (drafts included). */
    own: string[];
    onClose: () => void;
    onSaved: (p: Product) => void;
  },
) {
  const existing = product && product !== "new" ? product : null;
  const ids = {
    title: useId(),
    description: useId(),
    category: useId(),
    newCategory: useId(),
    tags: useId(),
    price: useId(),
    stock: useId(),
    status: useId(),
    images: useId(),
    upload: useId(),
  };
  const blank = {
    title: "",
    description: "",
    category: "",
    tags: "",
    price: "",
    stock: "0",
    status: "active",
    images: "",
  };
  const [form, setForm] = useState(blank);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The categories the API knows: the catalog's (its facet) and the shop's own; a new one is
  // "Another category…", typed in words and made a slug here.
  const [known, setKnown] = useState<string[]>([]);
  const [another, setAnother] = useState(false);
  const [uploading, setUploading] = useState<number | null>(null);
  // Pictures uploaded in this dialog are shown from the file itself: the API serves one only once
  // a saved product lists it.
  const [local, setLocal] = useState<Record<string, string>>({});
  const categories = [...new Set([...known, ...own, ...(existing ? [existing.category] : [])])]
    .sort((a, b) => categoryLabel(a).localeCompare(categoryLabel(b)));
  useEffect(() => {
    if (!product) return;
    searchProducts({ limit: 1 })
      .then((page) => setKnown(page.facets.categories.map((c) => c.value)))
      .catch(() => {});
  }, [product]);
  useFormReset(() => {
    if (!product) return;
    setError(null);
    setAnother(false);
    setForm(
      existing
        ? {
          title: existing.title,
          description: existing.description,
          category: existing.category,
          tags: existing.tags.join(", "),
          price: (existing.price.amount / 10 ** minorDigits(existing.price.currency)).toFixed(
            minorDigits(existing.price.currency),
          ),
          stock: String(onHand(existing)),
          status: existing.status,
          images: existing.images.join("\n"),
        }
        : blank,
    );
  }, [product]);
  const set = (key: keyof typeof form) => (e: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: e.currentTarget.value });
  return (
    <Dialog
      open={product !== null}
      title={existing ? `Edit ${existing.title}` : "Add a product"}
      onClose={onClose}
      wide
    >
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const amount = toMinor(form.price, currency);
          const stock = Number(form.stock);
          const category = slugOf(form.category);
          if (!form.title.trim()) return setError("Give the product a title.");
          if (!category) {
            return setError(
              another
                ? "Name the new category in letters and digits, e.g. Tea sets."
                : "Choose a category.",
            );
          }
          if (amount === null || amount < 1) return setError(`Give a price in ${currency}.`);
          if (!Number.isInteger(stock) || stock < 0) return setError("Stock is a whole number.");
          const input: ProductInput = {
            title: form.title.trim(),
            description: form.description,
            category,
            tags: form.tags.split(",").map((t) => t.trim()).filter(Boolean),
            images: imagesOf(form.images),
            price: { amount, currency },
            status: form.status as ProductInput["status"],
          };
          // An edit sends the stock only when it was changed, with the units it was based on:
          // a checkout or a sale meanwhile is never overwritten.
          if (!existing) input.stock = stock;
          else if (stock !== onHand(existing)) {
            input.stock = stock;
            input.expectedStock = onHand(existing);
          }
          setBusy(true);
          try {
            onSaved(
              existing
                ? await updateProduct(existing.id, input)
                : data(await client.POST("/api/store/products", { body: input as NewProduct })),
            );
          } catch (err) {
            setError(stockError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <div class="fields-grid">
          <div class="span-2">
            <label for={ids.title}>Title</label>
            <input id={ids.title} value={form.title} onInput={set("title")} maxLength={200} />
          </div>
          <div class="span-2">
            <label for={ids.description}>Description</label>
            <textarea id={ids.description} value={form.description} onInput={set("description")} />
          </div>
          <div>
            <label for={ids.category}>Category</label>
            <select
              id={ids.category}
              value={another ? ANOTHER : form.category}
              onChange={(e) => {
                const value = e.currentTarget.value;
                setAnother(value === ANOTHER);
                setForm({ ...form, category: value === ANOTHER ? "" : value });
              }}
            >
              <option value="">Choose a category</option>
              {categories.map((c) => <option key={c} value={c}>{categoryLabel(c)}</option>)}
              <option value={ANOTHER}>Another category…</option>
            </select>
            {another && (
              <>
                <label for={ids.newCategory}>New category</label>
                <input
                  id={ids.newCategory}
                  value={form.category}
                  placeholder="Tea sets"
                  onInput={set("category")}
                />
              </>
            )}
          </div>
          <div>
            <label for={ids.tags}>Tags (comma-separated)</label>
            <input id={ids.tags} value={form.tags} onInput={set("tags")} />
          </div>
          <div>
            <label for={ids.price}>Price ({currency})</label>
            <input id={ids.price} inputMode="decimal" value={form.price} onInput={set("price")} />
          </div>
          <div>
            <label for={ids.stock}>Stock on hand</label>
            <input
              id={ids.stock}
              type="number"
              min={0}
              value={form.stock}
              onInput={set("stock")}
              aria-describedby={existing ? `${ids.stock}-hint` : undefined}
            />
            {existing && (
              <p id={`${ids.stock}-hint`} class="muted small">
                {existing.stock.reserved
                  ? `${existing.stock.reserved} of these are in unpaid checkouts.`
                  : "None are in unpaid checkouts."}
              </p>
            )}
          </div>
          <div>
            <label for={ids.status}>Status</label>
            <select id={ids.status} value={form.status} onChange={set("status")}>
              <option value="active">Active (in the catalog)</option>
              <option value="draft">Draft (only you see it)</option>
              {existing && <option value="archived">Archived</option>}
            </select>
          </div>
          <div class="span-2">
            <label for={ids.upload}>Upload a picture (PNG, JPEG, GIF or WebP)</label>
            <input
              id={ids.upload}
              type="file"
              accept="image/png,image/jpeg,image/gif,image/webp"
              disabled={uploading !== null}
              onChange={async (e) => {
                const input = e.currentTarget;
                const file = input.files?.[0];
                if (!file) return;
                setUploading(0);
                setError(null);
                try {
                  const done = await upload<{ id: string }>(
                    "/api/attachments",
                    file,
                    (fraction) => setUploading(fraction),
                  );
                  // Listed among the images; it becomes the product's picture when saved.
                  const path = `/api/store/images/${done.id}`;
                  setLocal((l) => ({ ...l, [path]: URL.createObjectURL(file) }));
                  setForm((f) => ({
                    ...f,
                    images: [path, ...imagesOf(f.images)].join("\n"),
                  }));
                  input.value = "";
                } catch (err) {
                  setError(describeError(err));
                } finally {
                  setUploading(null);
                }
              }}
            />
            {uploading !== null && (
              <progress max={1} value={uploading} aria-label="Uploading the picture" />
            )}
            {imagesOf(form.images).length > 0 && (
              <ul class="image-previews" aria-label="Pictures">
                {imagesOf(form.images).map((src) => (
                  <li key={src}>
                    <img
                      src={local[src] ?? (src.startsWith("/") ? `${apiOrigin}${src}` : src)}
                      alt=""
                    />
                    <button
                      type="button"
                      class="link small"
                      onClick={() =>
                        setForm((f) => ({
                          ...f,
                          images: imagesOf(f.images).filter((i) => i !== src).join("\n"),
                        }))}
                    >
                      Remove<span class="visually-hidden">this picture</span>
                    </button>
                  </li>
                ))}
              </ul>
            )}
            <label for={ids.images}>
              Pictures by address (https, one per line; uploads show as /api/store/images/…)
            </label>
            <textarea id={ids.images} value={form.images} onInput={set("images")} />
          </div>
        </div>
        {error && <p class="error" role="alert">{error}</p>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
          <button type="submit" disabled={busy}>{busy ? "Saving…" : "Save"}</button>
        </div>
      </form>
    </Dialog>
  );
}
