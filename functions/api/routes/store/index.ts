/**
 * /api/store: the multi-vendor store. Each resource declares its lowest role itself: the catalog
 * and the vendor list are public; orders need SUBSCRIBER; vendor writes need SUBSCRIBER; the
 * webhook is authenticated by its signature. `features.store` off turns the store's routes off
 * (403) except the webhook (middleware/features.ts).
 */
import { router } from "../../openapi.ts";
import { products } from "./products.ts";
import { orders } from "./orders.ts";
import { vendors } from "./vendors.ts";
import { webhooks } from "./webhooks.ts";

export const store = router();

store.route("/products", products);
store.route("/orders", orders);
store.route("/vendors", vendors);
store.route("/webhooks", webhooks);
