/**
 * The payment step of a checkout. The checkout's orders (one per shop) follow their live events
 * (`order.created`, `order.status_changed` on `user:<id>`): the page shows "Paid" the moment the
 * payment's webhook has moved them, without a reload.
 *
 * How it pays depends on the checkout's `payment.provider`:
 * - `dev` (local mode, no Stripe keys): "Pay (dev)" asks the stack's stand-in customer
 *   (`POST /_dev/payments/<paymentIntentId>/succeed`), which sends a signed Stripe-shaped event
 *   through the real webhook; "Decline (dev)" fails the attempt (the orders stay payable).
 * - `stripe`: Stripe's Payment Element (stripe.ts) with the checkout's client secret.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, apiOrigin, describeError } from "../../lib/client.ts";
import { config } from "../../lib/config.ts";
import { fullTime, money } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { Pill } from "../../components/Pill.tsx";
import type { PageProps } from "../../lib/page.ts";
import { type Checkout, type Order, ORDER_STATUS, statusTone } from "./types.ts";
import { forgetCheckout, recallCheckout } from "./checkouts.ts";
import { StoreFrame } from "./common.tsx";
import { buyerOrders, moveOrder, readOrder, useCheckoutOrders } from "./live-orders.ts";

/**
 * The local stack's stand-in customer (`/_dev/payments`): not an endpoint of the API, so not in
 * its OpenAPI document, and only there in local mode; called by plain fetch.
 */
async function devPay(paymentIntentId: string, outcome: "succeed" | "fail"): Promise<void> {
  const response = await fetch(
    `${apiOrigin}/_dev/payments/${encodeURIComponent(paymentIntentId)}/${outcome}`,
    { method: "POST" },
  );
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new ApiError(
      response.status,
      body?.error?.code ?? "http_error",
      body?.error?.message ?? `HTTP ${response.status}`,
    );
  }
}

export function CheckoutPage({ params }: PageProps) {
  const id = params.checkoutId;
  // Read again at each visit: the payment may have gone through while the page was away.
  const read = useCheckoutOrders(id, async () => {
    const checkout: Checkout | null = await recallCheckout(id);
    const orders = checkout
      ? await Promise.all(checkout.orders.map((o) => readOrder(o.id)))
      : (await buyerOrders(100)).filter((o) => o.checkoutId === id);
    return { checkout, orders };
  });
  const checkout = read.data?.checkout;
  const orders = read.data?.orders ?? null;
  const [moveError, setError] = useState<string | null>(null);
  const error = moveError ?? (read.error ? describeError(read.error) : null);

  const paid = orders !== null && orders.length > 0 &&
    orders.every((o) => o.payment.status === "succeeded" || o.status !== "pending_payment");
  const cancelled = orders !== null && orders.length > 0 &&
    orders.every((o) => o.status === "cancelled");
  const declined = orders?.some((o) => o.payment.status === "failed");
  useEffect(() => {
    if (paid || cancelled) forgetCheckout(id);
  }, [paid, cancelled]);

  const total = checkout?.total ??
    (orders?.length
      ? {
        amount: orders.reduce((n, o) => n + o.total.amount, 0),
        currency: orders[0].total.currency,
      }
      : null);

  return (
    <StoreFrame>
      <h1>Checkout</h1>
      {error && <p class="error" role="alert">{error}</p>}
      {orders === null && !error && <p class="muted" role="status">Loading…</p>}
      {orders !== null && orders.length === 0 && (
        <p>
          No order belongs to this checkout. <Link href="/store/orders">Your orders</Link>
        </p>
      )}
      {orders && orders.length > 0 && (
        <>
          <div class="checkout-status" aria-live="polite" data-testid="checkout-status">
            {cancelled
              ? <p class="notice">This checkout was cancelled; its items went back on sale.</p>
              : paid
              ? (
                <p class="success big">
                  <strong>Paid. Thank you!</strong> The shop{orders.length > 1 ? "s" : ""}{" "}
                  will prepare your order. Follow it in{" "}
                  <Link href="/store/orders">your orders</Link>.
                </p>
              )
              : declined
              ? (
                <p class="error">
                  The payment was declined. You can try again until{" "}
                  {fullTime(checkout?.reservedUntil)}.
                </p>
              )
              : (
                <p>
                  Your items are reserved
                  {checkout?.reservedUntil ? ` until ${fullTime(checkout.reservedUntil)}` : ""}. Pay
                  to place the order.
                </p>
              )}
          </div>
          {orders.map((o) => <OrderSummary key={o.id} order={o} />)}
          <p class="cart-total">
            Total <strong>{money(total)}</strong>
          </p>
          {!paid && !cancelled && (
            <PaymentStep
              checkout={checkout ?? null}
              onCancel={async () => {
                try {
                  await moveOrder(orders[0].id, {
                    status: "cancelled",
                    reason: "Cancelled by the buyer at checkout",
                  });
                } catch (err) {
                  setError(describeError(err));
                }
              }}
            />
          )}
        </>
      )}
    </StoreFrame>
  );
}

function OrderSummary({ order }: { order: Order }) {
  return (
    <section class="card" aria-label={`Order from ${order.vendor.name}`} data-order-id={order.id}>
      <div class="card-head">
        <h2>From {order.vendor.name}</h2>
        <Pill tone={statusTone(order.status)} testId="order-status">
          {ORDER_STATUS[order.status]}
        </Pill>
      </div>
      <ul class="plain-list items">
        {order.items.map((i) => (
          <li key={i.productId} class="row-item">
            <span>{i.quantity} × {i.title}</span>
            <span>{money(i.total)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function PaymentStep(
  { checkout, onCancel }: { checkout: Checkout | null; onCancel: () => void },
) {
  const [state, setState] = useState<{ busy: boolean; sent?: string; error?: string }>({
    busy: false,
  });
  if (!checkout) {
    return (
      <section class="card payment">
        <h2>Payment</h2>
        <p data-testid="payment-unavailable">
          This checkout can no longer be paid: its reservation ran out. Cancel it and check out
          again.
        </p>
        <button type="button" class="secondary" onClick={onCancel}>Cancel the checkout</button>
      </section>
    );
  }
  const pay = async (outcome: "succeed" | "fail") => {
    setState({ busy: true });
    try {
      await devPay(checkout.payment.paymentIntentId, outcome);
      setState({
        busy: false,
        sent: outcome === "succeed"
          ? "Payment sent. Waiting for the confirmation…"
          : "The test card was declined.",
      });
    } catch (err) {
      setState({ busy: false, error: describeError(err) });
    }
  };
  return (
    <section class="card payment" aria-labelledby="payment-h">
      <h2 id="payment-h">Payment</h2>
      {checkout.payment.provider === "dev"
        ? (
          <>
            <p class="dev-mail">
              <strong>Local mode:</strong> payments go through the stack's <code>dev</code>{" "}
              provider. “Pay (dev)” plays a customer whose payment succeeds; the confirmation then
              arrives as Stripe's would, through the webhook.
            </p>
            <div class="actions">
              <button type="button" disabled={state.busy} onClick={() => pay("succeed")}>
                Pay {money(checkout.total)} (dev)
              </button>
              <button
                type="button"
                class="secondary"
                disabled={state.busy}
                onClick={() => pay("fail")}
              >
                Decline (dev)
              </button>
            </div>
          </>
        )
        : <StripePayment checkout={checkout} />}
      {state.sent && <p role="status">{state.sent}</p>}
      {state.error && <p class="error" role="alert">{state.error}</p>}
      <p>
        <button type="button" class="link" onClick={onCancel}>Cancel this checkout</button>
      </p>
    </section>
  );
}

function StripePayment({ checkout }: { checkout: Checkout }) {
  const target = useRef<HTMLDivElement>(null);
  const [mounted, setMounted] = useState<import("./stripe.ts").MountedPayment | null>(null);
  const [state, setState] = useState<{ busy: boolean; error?: string; sent?: boolean }>({
    busy: false,
  });
  useEffect(() => {
    let payment: import("./stripe.ts").MountedPayment | null = null;
    let live = true;
    const secret = checkout.payment.clientSecret;
    if (!secret || !target.current) {
      setState({ busy: false, error: "The payment provider gave no client secret." });
      return;
    }
    import("./stripe.ts")
      .then((m) =>
        m.mountPaymentElement(
          target.current!,
          secret,
          config.get()?.whiteLabel.primaryColor ?? "#1f6feb",
        )
      )
      .then((p) => {
        payment = p;
        if (live) setMounted(p);
        else p.destroy();
      })
      .catch((err) => live && setState({ busy: false, error: describeError(err) }));
    return () => {
      live = false;
      payment?.destroy();
    };
  }, [checkout.id]);
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        if (!mounted) return;
        setState({ busy: true });
        const problem = await mounted.confirm(`${location.origin}/store/checkout/${checkout.id}`);
        setState({ busy: false, error: problem ?? undefined, sent: !problem });
      }}
    >
      <div ref={target} class="stripe-element" />
      {state.error && <p class="error" role="alert">{state.error}</p>}
      {state.sent && <p role="status">Payment sent. Waiting for the confirmation…</p>}
      <button type="submit" disabled={!mounted || state.busy}>
        {state.busy ? "Paying…" : `Pay ${money(checkout.total)}`}
      </button>
    </form>
  );
}
