/**
 * The store's payment provider: Stripe through the official SDK (PaymentIntents with separate
 * charges and transfers, refunds, Connect accounts, account links and transfers), or, without a
 * Stripe key, the `dev` provider of dev-provider.ts, which keeps Stripe-shaped objects in
 * Postgres. Both verify webhooks with the SDK's `constructEventAsync` over the raw body, so the
 * webhook route and the jobs never know which one they talk to.
 *
 * Errors are told apart by what the caller can do: `PaymentProviderUnavailable` (no answer, a 5xx,
 * a 429: try again later; a request that needs an answer now is 503
 * `payment_provider_unavailable`) and `PaymentProviderRefused` (a 4xx: retrying the same request
 * cannot help). Every call that creates something carries an idempotency key derived from the
 * domain row it is for (`checkout:<id>`, `refund:<orderId>`, `settlement:<id>`), so a job or a
 * request that runs twice creates it once.
 */
import Stripe from "stripe";
import type { Settings } from "../../_shared/settings.ts";

declare module "../core/context.ts" {
  interface Deps {
    /** The store's payment provider: Stripe with AGORA_STRIPE_SECRET_KEY, else `dev`. */
    payments: PaymentProvider;
  }
}

export class PaymentProviderUnavailable extends Error {
  constructor(message: string, readonly retryAfterSeconds: number | null = null) {
    super(message);
    this.name = "PaymentProviderUnavailable";
  }
}

export class PaymentProviderRefused extends Error {
  constructor(message: string, readonly code: string | null, readonly status: number) {
    super(message);
    this.name = "PaymentProviderRefused";
  }
}

/** What the store reads of a PaymentIntent. */
export interface PaymentIntentState {
  id: string;
  status: string;
  amount: number;
  currency: string;
  clientSecret: string | null;
  /** The last attempt failed (Stripe's `last_payment_error` is set). */
  attemptFailed: boolean;
}

/** What the store reads of a Connect account: the status its payouts have here. */
export interface AccountState {
  id: string;
  payoutsStatus: "pending" | "active" | "restricted";
}

export interface RefundState {
  id: string;
  /** Stripe's refund status: pending, requires_action, succeeded, failed, canceled. */
  status: string;
  orderId: string | null;
}

/** A verified webhook event (the parts the store reads). */
export interface ProviderEvent {
  id: string;
  type: string;
  livemode: boolean;
  objectId: string | null;
  raw: unknown;
}

export interface PaymentProvider {
  readonly name: "stripe" | "dev";
  createPaymentIntent(
    input: { amount: number; currency: string; checkoutId: string; buyerId: string },
    idempotencyKey: string,
  ): Promise<PaymentIntentState>;
  retrievePaymentIntent(id: string): Promise<PaymentIntentState>;
  cancelPaymentIntent(id: string, idempotencyKey: string): Promise<PaymentIntentState>;
  createRefund(
    input: { paymentIntentId: string; amount: number; orderId: string },
    idempotencyKey: string,
  ): Promise<RefundState>;
  retrieveRefund(id: string): Promise<RefundState>;
  createAccount(
    input: { email: string; country: string; vendorId: string },
    idempotencyKey: string,
  ): Promise<{ id: string }>;
  retrieveAccount(id: string): Promise<AccountState>;
  createAccountLink(
    input: { account: string; refreshUrl: string; returnUrl: string },
  ): Promise<{ url: string }>;
  createTransfer(
    input: {
      amount: number;
      currency: string;
      destination: string;
      settlementId: string;
      vendorId: string;
    },
    idempotencyKey: string,
  ): Promise<{ id: string }>;
  /** Verifies `Stripe-Signature` over the raw body; throws `WebhookSignatureError`. */
  verifyWebhook(rawBody: string, signature: string): Promise<ProviderEvent>;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookSignatureError";
  }
}

/** A correctly signed body that is not an event: not an object, or without a string id or type. */
export class WebhookEventMalformed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookEventMalformed";
  }
}

/** The payouts status of a Connect account, from what Stripe says of it. */
export function payoutsStatusOf(account: {
  details_submitted?: boolean | null;
  payouts_enabled?: boolean | null;
  capabilities?: { transfers?: string | null } | null;
  requirements?: { disabled_reason?: string | null } | null;
}): AccountState["payoutsStatus"] {
  const transfers = account.capabilities?.transfers ?? null;
  if (account.payouts_enabled && (transfers === null || transfers === "active")) return "active";
  if (
    account.requirements?.disabled_reason || transfers === "inactive" && account.details_submitted
  ) {
    return "restricted";
  }
  return account.details_submitted ? "restricted" : "pending";
}

/** Signs and verifies webhook payloads with the SDK (no network, no key needed). */
const webhookHelper = new Stripe("sk_webhooks_only", { maxNetworkRetries: 0 });

/** Verifies a webhook with the SDK's `constructEventAsync` (HMAC over the raw body, tolerance 300 s). */
export async function verifyWithSdk(
  rawBody: string,
  signature: string,
  secret: string,
): Promise<ProviderEvent> {
  let event: Stripe.Event;
  try {
    event = await webhookHelper.webhooks.constructEventAsync(rawBody, signature, secret);
  } catch (err) {
    throw new WebhookSignatureError(err instanceof Error ? err.message : String(err));
  }
  // Signed is not well formed: the body is whatever the signer sent (`null`, an array, an event
  // without an id). Nothing is stored for it.
  const shape = event as unknown;
  if (typeof shape !== "object" || shape === null || Array.isArray(shape)) {
    throw new WebhookEventMalformed("The body is not a JSON object.");
  }
  const { id, type } = shape as { id?: unknown; type?: unknown };
  if (typeof id !== "string" || id.length === 0 || id.length > 255) {
    throw new WebhookEventMalformed("The event has no id.");
  }
  if (typeof type !== "string" || type.length === 0 || type.length > 255) {
    throw new WebhookEventMalformed("The event has no type.");
  }
  const data = (event as { data?: unknown }).data;
  const object =
    (typeof data === "object" && data !== null
      ? (data as { object?: unknown }).object ?? null
      : null) as { id?: unknown } | null;
  return {
    id: event.id,
    type: event.type,
    livemode: !!event.livemode,
    objectId: typeof object?.id === "string" ? object.id : null,
    raw: event,
  };
}

/** A signature header for `payload` (how the dev provider and tests sign their events). */
export function signWebhook(payload: string, secret: string): Promise<string> {
  return webhookHelper.webhooks.generateTestHeaderStringAsync({ payload, secret });
}

function intentState(pi: Stripe.PaymentIntent): PaymentIntentState {
  return {
    id: pi.id,
    status: pi.status,
    amount: pi.amount,
    currency: pi.currency,
    clientSecret: pi.client_secret ?? null,
    attemptFailed: pi.last_payment_error !== null && pi.last_payment_error !== undefined,
  };
}

function refundState(refund: Stripe.Refund): RefundState {
  return {
    id: refund.id,
    status: refund.status ?? "pending",
    orderId: (refund.metadata?.orderId as string | undefined) ?? null,
  };
}

/** Turns the SDK's errors into the two kinds the store acts on. */
function providerError(err: unknown): Error {
  const e = err as { type?: string; statusCode?: number; code?: string; message?: string };
  const type = e?.type ?? "";
  const status = e?.statusCode ?? 0;
  const message = e?.message ?? String(err);
  if (
    type === "StripeConnectionError" || type === "StripeAPIError" ||
    type === "StripeRateLimitError" || status >= 500 || status === 429 || !status
  ) {
    return new PaymentProviderUnavailable(`payment provider: ${message}`);
  }
  return new PaymentProviderRefused(message, e.code ?? null, status);
}

async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    throw providerError(err);
  }
}

/** Stripe through the SDK, at `settings.stripe.apiUrl` (Stripe's, or a stand-in in tests). */
export function createStripeProvider(settings: Settings): PaymentProvider {
  const { secretKey, webhookSecret, apiUrl } = settings.stripe;
  if (!secretKey || !webhookSecret) {
    throw new Error("Stripe needs a secret key and a webhook secret");
  }
  const url = new URL(apiUrl);
  const stripe = new Stripe(secretKey, {
    host: url.hostname,
    port: url.port ? Number(url.port) : (url.protocol === "http:" ? 80 : 443),
    protocol: url.protocol === "http:" ? "http" : "https",
    // The jobs retry with their own backoff; a request that needs an answer now must not hang.
    maxNetworkRetries: 1,
    timeout: 10_000,
    telemetry: false,
  });
  return {
    name: "stripe",
    createPaymentIntent: (input, idempotencyKey) =>
      call(async () =>
        intentState(
          await stripe.paymentIntents.create({
            amount: input.amount,
            currency: input.currency.toLowerCase(),
            transfer_group: input.checkoutId,
            automatic_payment_methods: { enabled: true },
            metadata: { checkoutId: input.checkoutId, buyerId: input.buyerId },
          }, { idempotencyKey }),
        )
      ),
    retrievePaymentIntent: (id) =>
      call(async () => intentState(await stripe.paymentIntents.retrieve(id))),
    cancelPaymentIntent: (id, idempotencyKey) =>
      call(async () =>
        intentState(
          await stripe.paymentIntents.cancel(id, { cancellation_reason: "abandoned" }, {
            idempotencyKey,
          }),
        )
      ),
    createRefund: (input, idempotencyKey) =>
      call(async () =>
        refundState(
          await stripe.refunds.create({
            payment_intent: input.paymentIntentId,
            amount: input.amount,
            metadata: { orderId: input.orderId },
          }, { idempotencyKey }),
        )
      ),
    retrieveRefund: (id) => call(async () => refundState(await stripe.refunds.retrieve(id))),
    createAccount: (input, idempotencyKey) =>
      call(async () => {
        const account = await stripe.accounts.create({
          type: "express",
          email: input.email,
          country: input.country,
          capabilities: { transfers: { requested: true } },
          metadata: { vendorId: input.vendorId },
        }, { idempotencyKey });
        return { id: account.id };
      }),
    retrieveAccount: (id) =>
      call(async () => {
        const account = await stripe.accounts.retrieve(id);
        return { id: account.id, payoutsStatus: payoutsStatusOf(account) };
      }),
    createAccountLink: (input) =>
      call(async () => {
        const link = await stripe.accountLinks.create({
          account: input.account,
          refresh_url: input.refreshUrl,
          return_url: input.returnUrl,
          type: "account_onboarding",
        });
        return { url: link.url };
      }),
    createTransfer: (input, idempotencyKey) =>
      call(async () => {
        const transfer = await stripe.transfers.create({
          amount: input.amount,
          currency: input.currency.toLowerCase(),
          destination: input.destination,
          transfer_group: `settlement:${input.settlementId}`,
          metadata: { settlementId: input.settlementId, vendorId: input.vendorId },
        }, { idempotencyKey });
        return { id: transfer.id };
      }),
    verifyWebhook: (rawBody, signature) => verifyWithSdk(rawBody, signature, webhookSecret),
  };
}
