/** The shop's settlements: what each daily run settled (gross, commission, refunds, net). */
import { client, data, describeError, FRESH } from "../../lib/client.ts";
import { useInfiniteQuery } from "../../lib/query.ts";
import { fullTime, money } from "../../lib/format.ts";
import { Pill } from "../../components/Pill.tsx";
import { type OwnVendor, type Settlement, statusTone } from "../store/types.ts";

export function SettlementTable(
  { items, showVendor }: { items: Settlement[]; showVendor?: (id: string) => string },
) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Settlements table">
      <table data-testid="settlements">
        <caption class="visually-hidden">Settlements</caption>
        <thead>
          <tr>
            {showVendor && <th scope="col">Shop</th>}
            <th scope="col">Up to</th>
            <th scope="col">Orders</th>
            <th scope="col">Gross</th>
            <th scope="col">Commission</th>
            <th scope="col">Refunds</th>
            <th scope="col">Net</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {items.map((s) => (
            <tr key={s.id} data-settlement-id={s.id}>
              {showVendor && <td>{showVendor(s.vendorId)}</td>}
              <td>{fullTime(s.periodEnd)}</td>
              <td>{s.orderCount}</td>
              <td>{money(s.gross)}</td>
              <td>{money(s.commission)}</td>
              <td>{money(s.refunds)}</td>
              <td>
                <strong>{money(s.net)}</strong>
              </td>
              <td>
                <Pill tone={s.status === "paid" ? "done" : statusTone(s.status)}>{s.status}</Pill>
                {s.paidAt && <span class="muted small">{fullTime(s.paidAt)}</span>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function VendorSettlements({ vendor }: { vendor: OwnVendor }) {
  // Pages of the shop's settlements in the query cache ("Load more" asks for the next one).
  const list = useInfiniteQuery({
    queryKey: ["vendor", vendor.id, "settlements"],
    queryFn: async ({ pageParam }: { pageParam: string | null }) =>
      data(
        await client.GET("/api/store/vendors/me/settlements", {
          params: { query: { limit: 50, ...(pageParam ? { cursor: pageParam } : {}) } },
          ...FRESH,
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
  const items = list.data?.pages.flatMap((page) => page.items) ?? null;
  const error = list.error ? describeError(list.error) : null;
  return (
    <section>
      <h1>Settlements</h1>
      <p class="muted">
        Once a day, delivered and completed orders are settled: their total, less the platform's
        commission and any refunds, is paid out to your payout account.
      </p>
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading…</p>
        : items.length === 0
        ? <p>Nothing settled yet.</p>
        : <SettlementTable items={items} />}
      {list.hasNextPage && (
        <button
          type="button"
          class="secondary"
          disabled={list.isFetchingNextPage}
          onClick={() => void list.fetchNextPage()}
        >
          Load more
        </button>
      )}
    </section>
  );
}
