/**
 * Settlements: every shop's, with filters, and the daily settlement run now (it settles what was
 * delivered or completed and paid up to now; running it again settles nothing twice).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { client, data, describeError, FRESH, type Query } from "../../lib/client.ts";
import { money } from "../../lib/format.ts";
import { SettlementTable } from "../vendor/Settlements.tsx";
import type { Settlement, Vendor } from "./types.ts";

export function SettlementsSection({ refresh }: { refresh: number }) {
  const [status, setStatus] = useState("");
  const [vendorId, setVendorId] = useState("");
  const [vendors, setVendors] = useState<Vendor[]>([]);
  const [items, setItems] = useState<Settlement[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [run, setRun] = useState<{ busy: boolean; result?: string }>({ busy: false });
  const [tick, setTick] = useState(0);
  const statusId = useId();
  const vendorSelectId = useId();
  useEffect(() => {
    client.GET("/api/admin/vendors", {
      params: { query: { limit: 200 } as Query<"/api/admin/vendors", "get"> },
      ...FRESH,
    }).then(data).then((p) => setVendors(p.items)).catch(() => {});
  }, []);
  useEffect(() => {
    client.GET("/api/admin/settlements", {
      params: { query: { status, vendorId, limit: 50 } as Query<"/api/admin/settlements", "get"> },
      ...FRESH,
    }).then(data).then((page) => {
      setItems(page.items);
      setCursor(page.nextCursor);
      setError(null);
    }).catch((err) => setError(describeError(err)));
  }, [status, vendorId, refresh, tick]);
  const names = new Map(vendors.map((v) => [v.id, v.name]));
  return (
    <section>
      <div class="card-head">
        <h1>Settlements</h1>
        <button
          type="button"
          disabled={run.busy}
          onClick={async () => {
            setRun({ busy: true });
            try {
              const r = data(await client.POST("/api/admin/settlements/run", { body: {} }));
              const net = r.settlements.length
                ? money({
                  amount: r.settlements.reduce((n, s) => n + s.net.amount, 0),
                  currency: r.settlements[0].net.currency,
                })
                : null;
              setRun({
                busy: false,
                result: r.orders
                  ? `Settled ${r.orders} order${
                    r.orders === 1 ? "" : "s"
                  } for ${r.settlements.length} shop${r.settlements.length === 1 ? "" : "s"}${
                    net ? `, ${net} net` : ""
                  }.`
                  : "Nothing new to settle.",
              });
              setTick((n) => n + 1);
            } catch (err) {
              setRun({ busy: false, result: undefined });
              setError(describeError(err));
            }
          }}
        >
          {run.busy ? "Settling…" : "Run the settlement now"}
        </button>
      </div>
      {run.result && <p class="success" role="status" data-testid="run-result">{run.result}</p>}
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            {["pending", "paid", "held", "failed"].map((s) => <option key={s} value={s}>{s}
            </option>)}
          </select>
        </div>
        <div>
          <label for={vendorSelectId}>Shop</label>
          <select
            id={vendorSelectId}
            value={vendorId}
            onChange={(e) => setVendorId(e.currentTarget.value)}
          >
            <option value="">Any</option>
            {vendors.map((v) => <option key={v.id} value={v.id}>{v.name}</option>)}
          </select>
        </div>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading…</p>
        : items.length === 0
        ? <p>No settlements.</p>
        : <SettlementTable items={items} showVendor={(id) => names.get(id) ?? id.slice(0, 8)} />}
      {cursor && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            try {
              const page = await client.GET("/api/admin/settlements", {
                params: {
                  query: { status, vendorId, limit: 50, cursor } as Query<
                    "/api/admin/settlements",
                    "get"
                  >,
                },
                ...FRESH,
              }).then(data);
              setItems([...(items ?? []), ...page.items]);
              setCursor(page.nextCursor);
            } catch (err) {
              setError(describeError(err));
            }
          }}
        >
          Load more
        </button>
      )}
    </section>
  );
}
