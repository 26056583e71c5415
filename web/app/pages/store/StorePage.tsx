/**
 * The store's pages, one chunk loaded when a store page is first opened (routes.ts): the catalog
 * (search, facets), a product, the cart, the checkout's payment step and the buyer's orders.
 */
export { CatalogPage } from "./Catalog.tsx";
export { ProductPage } from "./Product.tsx";
export { CartPage } from "./Cart.tsx";
export { CheckoutPage } from "./Checkout.tsx";
export { OrdersPage } from "./Orders.tsx";
