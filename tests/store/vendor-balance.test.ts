/**
 * The maintained vendor balance (issue 30): `pending` on GET /api/store/vendors/me is no longer
 * a sum of every order anti-joined to the ledger but what the writes on app.orders appended
 * (app_private.vendor_balance_changes), folded into app_private.vendor_balances. Raced here: 20
 * connections pay, deliver, complete and refund orders of one vendor while settlement runs and
 * folds go on; at the end the maintained figure equals the sum computed from the orders and the
 * ledger, every order is settled at most once, and each order's settled flags agree with the
 * ledger.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { approvedVendor } from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");

/** The pending balance as it used to be computed on every request: the truth to compare with. */
async function computedPending(vendorId: string): Promise<number> {
  const [row] = await t.deps.sql<{ pending: string }[]>`
    select coalesce(sum(o.total), 0)::text as pending from app.orders o
    where o.vendor_id = ${vendorId} and o.payment_status = 'succeeded'
      and o.status in ('paid', 'processing', 'shipped', 'delivered', 'completed')
      and not exists (select 1 from app.settlement_lines l
                      where l.order_id = o.id and l.kind = 'sale')`;
  return Number(row.pending);
}

async function maintainedPending(vendorId: string): Promise<number> {
  const [row] = await t.deps.sql<{ pending: string }[]>`
    select (coalesce((select pending from app_private.vendor_balances where vendor_id = ${vendorId}), 0)
          + coalesce((select sum(delta) from app_private.vendor_balance_changes
                      where vendor_id = ${vendorId}), 0))::text as pending`;
  return Number(row.pending);
}

test("[store] race: 20 connections pay, deliver, refund and settle one vendor's orders; the maintained pending balance equals the orders' sum, each order settled once", async () => {
  const vendor = await approvedVendor(t, admin);
  const [buyer] = await t.deps.sql<{ id: string }[]>`
    insert into app.users (email, name) values (${`race-${crypto.randomUUID()}@test.example`}, 'Race buyer')
    returning id`;
  const url = Deno.env.get("AGORA_TEST_DB_URL")!;
  const sql = postgres(url, { max: 24, onnotice: () => {} });
  try {
    const worker = async (w: number) => {
      for (let i = 0; i < 12; i++) {
        const total = 1000 + w * 100 + i;
        // A checkout and its order, as the checkout makes them (unpaid)...
        const [order] = await sql<{ id: string }[]>`
          with c as (
            insert into app.checkouts (buyer_id, total, currency, provider, reserved_until)
            values (${buyer.id}, ${total}, 'USD', 'dev', now() + interval '15 minutes')
            returning id)
          insert into app.orders (checkout_id, buyer_id, vendor_id, vendor_name, total, currency)
          select c.id, ${buyer.id}, ${vendor.id}, ${vendor.name}, ${total}, 'USD' from c
          returning id`;
        // ...paid, then delivered (settleable), some completed, some refunded, some left paid.
        await sql`update app.orders set status = 'paid', payment_status = 'succeeded', paid_at = now()
                  where id = ${order.id}`;
        if (i % 4 === 3) continue;
        await sql`update app.orders set status = 'delivered', delivered_at = now() - interval '1 second'
                  where id = ${order.id}`;
        if (i % 4 === 1) {
          await sql`update app.orders set status = 'completed', completed_at = now() where id = ${order.id}`;
        } else if (i % 4 === 2) {
          await sql.begin(async (tx) => {
            await tx`update app.orders set status = 'refunded', refunded_at = now() where id = ${order.id}`;
            await tx`update app.orders set payment_status = 'refunded' where id = ${order.id}`;
          });
        }
      }
    };
    const settler = async () => {
      for (let i = 0; i < 6; i++) {
        await sql`select app_private.settle(now(), null, true)`;
        await sql`select app_private.fold_vendor_balances()`;
      }
    };
    await Promise.all([
      ...Array.from({ length: 20 }, (_, w) => worker(w)),
      settler(),
      settler(),
    ]);

    const computed = await computedPending(vendor.id);
    assert.ok(computed > 0, "some orders are still pending (paid, not settled)");
    assert.equal(await maintainedPending(vendor.id), computed, "maintained = computed, unfolded");
    await sql`select app_private.fold_vendor_balances()`;
    assert.equal(await maintainedPending(vendor.id), computed, "maintained = computed, folded");

    // Each order settled at most once, and the flags say exactly what the ledger holds.
    const [ledger] = await t.deps.sql<{ twice: number; disagree: number; settled: number }[]>`
      select
        -- Sale and refund lines per order and kind; carry lines (no order) per settlement
        -- carried: several carries of one vendor are not one order settled twice.
        (select count(*) from (select coalesce(order_id, source_settlement_id), kind
                               from app.settlement_lines
                               where vendor_id = ${vendor.id}
                               group by 1, 2 having count(*) > 1) x)::int as twice,
        (select count(*) from app.orders o where o.vendor_id = ${vendor.id}
           and (o.sale_settled <> exists (select 1 from app.settlement_lines l
                                          where l.order_id = o.id and l.kind = 'sale')
             or o.refund_settled <> exists (select 1 from app.settlement_lines l
                                            where l.order_id = o.id and l.kind = 'refund')))::int
          as disagree,
        (select count(*) from app.settlement_lines
         where vendor_id = ${vendor.id} and kind = 'sale')::int as settled`;
    assert.deepEqual([ledger.twice, ledger.disagree], [0, 0]);
    assert.ok(ledger.settled > 0, "the runs settled some orders");

    // A last run settles every delivered order left; nothing is pending but the paid ones.
    await sql`select app_private.settle(now(), null, true)`;
    const [paid] = await t.deps.sql<{ sum: string }[]>`
      select coalesce(sum(total), 0)::text as sum from app.orders
      where vendor_id = ${vendor.id} and status = 'paid'`;
    assert.equal(await maintainedPending(vendor.id), Number(paid.sum));
    assert.equal(await computedPending(vendor.id), Number(paid.sum));

    // And the owner's page shows it.
    const me = await expectJson(
      await t.request("GET", "/api/store/vendors/me", { token: vendor.owner.accessToken }),
      200,
    );
    assert.equal(me.balances.pending.amount, Number(paid.sum));
  } finally {
    await sql.end();
  }
});
