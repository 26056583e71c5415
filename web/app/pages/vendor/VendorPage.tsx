/**
 * The vendor area (a chunk of its own): apply to sell; then, for the shop's owner, an overview
 * (status, balances, payouts), products and stock, orders to fulfil (start, ship with carrier and
 * tracking number, mark delivered, cancel with a refund) and settlements.
 *
 * Live: the shop's topic `vendor:<id>` (readable by its owner) carries `order.created` and
 * `order.status_changed` with the whole order, merged in as they arrive; a decision on the
 * application (`vendor.status_changed` on `user:<id>`) reloads the shop.
 */
import { useEffect, useState } from "preact/hooks";
import { setTitle } from "../../lib/config.ts";
import { loadSession, session } from "../../lib/session.ts";
import { subscribe } from "../../lib/live.ts";
import { userEvents } from "../../lib/user-events.ts";
import { Area } from "../../components/SubNav.tsx";
import type { PageProps } from "../../lib/page.ts";
import type { Order, OwnVendor } from "../store/types.ts";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { mergeOrder } from "../store/live-orders.ts";
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

export function VendorPage({ params }: PageProps) {
  const [vendor, setVendor] = useState<OwnVendor | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [orders, setOrders] = useState<Order[] | null>(null);
  // Bumped each time the shop's feed comes up: what happened before it is read again.
  const [feedUp, setFeedUp] = useState(0);
  const section = SECTIONS.find((s) => s.id === (params.section ?? "overview"));

  const load = async (fresh = true) => {
    // The session says whether there is a shop: without one, nothing to ask (the API's answer
    // would be a 404, which the browser logs as an error). The navigation has just read it; after
    // an application or a decision it is read again.
    const known = session.get();
    const state = fresh || known.status !== "signed-in" ? await loadSession() : known;
    if (state.user?.vendor === null) {
      setVendor(null);
      return;
    }
    await client.GET("/api/store/vendors/me", FRESH).then(data).then((v) => {
      setVendor(v);
      setError(null);
    }).catch((err) => {
      if (err instanceof ApiError && err.status === 404) setVendor(null);
      else setError(describeError(err));
    });
  };

  useEffect(() => {
    void load(false).catch((err) => setError(describeError(err)));
    return userEvents.on((e) => {
      if (e.event === "vendor.status_changed") void load().catch(() => {});
    });
  }, []);

  useEffect(() => setTitle(section ? `${section.label} · Your shop` : "Your shop"), [section]);

  // The shop's live orders, while the area is open (its owner may read `vendor:<id>`).
  const live = vendor && vendor.status !== "pending" && vendor.status !== "rejected";
  useEffect(() => {
    if (!live || !vendor) return;
    return subscribe(`vendor:${vendor.id}`, (e) => {
      if (e.event === "order.created" || e.event === "order.status_changed") {
        setOrders((list) => mergeOrder(list, e.payload as Order));
        // Balances follow paid and delivered orders.
        // (The shop exists: the session need not be read again.)
        if (e.event === "order.status_changed") void load(false).catch(() => {});
      }
    }, { main: true, onLive: () => setFeedUp((n) => n + 1) });
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
        <ApplyForm onApplied={() => void load()} />
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
      {View === "overview" && <Overview vendor={vendor} onChanged={() => void load(false)} />}
      {View === "products" && <VendorProducts vendor={vendor} />}
      {View === "orders" && (
        <VendorOrders
          vendor={vendor}
          orders={orders}
          setOrders={setOrders}
          feedUp={feedUp}
          focus={params.orderId}
        />
      )}
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
