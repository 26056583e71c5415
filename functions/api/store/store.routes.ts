/**
 * /api/store: the multi-vendor store. Each resource declares its lowest role itself: the catalog
 * and the vendor list are public; orders need SUBSCRIBER; vendor writes need SUBSCRIBER; the
 * webhook is authenticated by its signature. `features.store` off turns the store's routes off
 * (403) except the webhook (core/middleware/features.ts).
 */
import { router } from "../core/openapi.ts";
import { products } from "./products.routes.ts";
import { checkouts, orders } from "./orders.routes.ts";
import { vendors } from "./vendors.routes.ts";
import { webhooks } from "./webhooks.routes.ts";

export const store = router();

store.route("/products", products);
store.route("/orders", orders);
store.route("/checkouts", checkouts);
store.route("/vendors", vendors);
store.route("/webhooks", webhooks);
