/**
 * The vendor area (a chunk of its own): apply to sell; then, for the shop's owner, an overview
 * (status, balances, payouts), products and stock, orders to fulfil (start, ship with carrier and
 * tracking number, mark delivered, cancel with a refund) and settlements.
 *
 * Live: the shop's topic `vendor:<id>` (readable by its owner) carries `order.created` and
 * `order.status_changed` with the whole order, merged in as they arrive; a decision on the
 * application (`vendor.status_changed` on `user:<id>`) reloads the shop.
 */
import { useEffect } from "preact/hooks";
import { setTitle } from "../../lib/config.ts";
import { loadSession, session } from "../../lib/session.ts";
import { subscribe } from "../../lib/live.ts";
import { userEvents } from "../../lib/user-events.ts";
import { Area } from "../../components/SubNav.tsx";
import type { PageProps } from "../../lib/page.ts";
import type { Order, OwnVendor } from "../store/types.ts";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";
import { applyOrder, readShopOrdersAgain } from "../store/live-orders.ts";
import { ApplyForm, Overview } from "./Overview.tsx";
import { VendorProducts } from "./Products.tsx";
import { VendorOrders } from "./Orders.tsx";
import { VendorSettlements } from "./Settlements.tsx";

const SECTIONS = [
  { id: "overview", label: "Overview" },
  { id: "products", label: "Products" },
  { id: "orders", label: "Orders" },
  { id: "settlements", label: "Settlements" },
] as const;

const SHOP_KEY = ["vendor", "me"] as const;

/**
 * The caller's shop, or null without one. The session says whether there is one: without, nothing
 * to ask (the API's answer would be a 404, which the browser logs as an error).
 */
async function readShop(): Promise<OwnVendor | null> {
  if (session.get().user?.vendor === null) return null;
  try {
    return data(await client.GET("/api/store/vendors/me", FRESH));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** Reads the shop again (after an application or a decision, the session first: it names it). */
async function reloadShop(readSession: boolean): Promise<void> {
  if (readSession) await loadSession().catch(() => {});
  await queryClient.invalidateQueries({ queryKey: SHOP_KEY });
}

export function VendorPage({ params }: PageProps) {
  const section = SECTIONS.find((s) => s.id === (params.section ?? "overview"));
  // The shop, null without one, read at each visit (balances and payouts move behind the page).
  const shop = useQuery({ queryKey: SHOP_KEY, queryFn: readShop, staleTime: 0 });
  const vendor = shop.data;
  const error = shop.error ? describeError(shop.error) : null;

  useEffect(() =>
    userEvents.on((e) => {
      if (e.event === "vendor.status_changed") void reloadShop(true);
    }), []);

  useEffect(() => setTitle(section ? `${section.label} · Your shop` : "Your shop"), [section]);

  // The shop's live orders, while the area is open (its owner may read `vendor:<id>`).
  const live = vendor && vendor.status !== "pending" && vendor.status !== "rejected";
  useEffect(() => {
    if (!live || !vendor) return;
    return subscribe(`vendor:${vendor.id}`, (e) => {
      if (e.event === "order.created" || e.event === "order.status_changed") {
        applyOrder(e.payload as Order, "vendor");
        // Balances follow paid and delivered orders.
        if (e.event === "order.status_changed") void reloadShop(false);
      }
      // What happened before the feed came up is not in its events: the lists are read again.
    }, { main: true, onLive: readShopOrdersAgain });
  }, [live, vendor?.id]);

  if (vendor === undefined) {
    return (
      <div class="page">
        {error
          ? <p class="error" role="alert">{error}</p>
          : <p class="muted" role="status">Loading…</p>}
      </div>
    );
  }
  if (vendor === null || vendor.status === "rejected") {
    return (
      <div class="page narrow">
        <h1>Sell on this platform</h1>
        {vendor?.status === "rejected" && (
          <div class="notice" role="status">
            <p>
              Your application for <strong>{vendor.name}</strong> was not approved
              {vendor.decisions?.length
                ? `: “${vendor.decisions[vendor.decisions.length - 1].reason}”`
                : "."}
            </p>
            <p>You may apply again.</p>
          </div>
        )}
        <ApplyForm onApplied={() => void reloadShop(true)} />
      </div>
    );
  }
  const View = section?.id;
  return (
    <Area
      label="Your shop"
      current={section?.id}
      sections={SECTIONS.map((s) => ({ id: s.id, label: s.label, href: `/vendor/${s.id}` }))}
    >
      {error && <p class="error" role="alert">{error}</p>}
      {View === "overview" && <Overview vendor={vendor} onChanged={() => void reloadShop(false)} />}
      {View === "products" && <VendorProducts vendor={vendor} />}
      {View === "orders" && <VendorOrders focus={params.orderId} />}
      {View === "settlements" && <VendorSettlements vendor={vendor} />}
      {!section && (
        <>
          <h1>Not found</h1>
          <p>There is no section {params.section}.</p>
        </>
      )}
    </Area>
  );
}
