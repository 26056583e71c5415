/**
 * The `dev` payment provider: what the store uses when no Stripe key is configured (the local
 * default). Its payment intents, refunds, Connect accounts and transfers are Stripe-shaped JSON
 * objects kept in `app_private.dev_payment_objects` (so they survive restarts and are shared by
 * every process), created with the same idempotency keys the Stripe provider sends.
 *
 * Nothing pays a dev payment intent by itself: in local mode the stack serves
 * `POST /_dev/payments/<id>/succeed|fail` and `/_dev/accounts/<id>/onboard` (stack/dev-payments.ts),
 * which change the object here and send a Stripe-shaped event, signed with this provider's
 * webhook secret, through the real webhook route. The secret is derived from AGORA_JWT_SECRET
 * (an HMAC), so nobody without the server's secret can sign a dev event.
 */
import type { Sql } from "../../_shared/db.ts";
import { base64url, hmacSigner } from "../../_shared/crypto.ts";
import {
  type AccountState,
  type PaymentIntentState,
  type PaymentProvider,
  PaymentProviderRefused,
  payoutsStatusOf,
  type RefundState,
  verifyWithSdk,
} from "./payments.ts";

type Json = Record<string, unknown>;

/** The dev provider, plus what the local `/_dev` routes need. */
export interface DevPaymentProvider extends PaymentProvider {
  readonly name: "dev";
  /** The secret its events are signed with (`whsec_dev_…`). */
  webhookSecret(): Promise<string>;
  /** Marks a payment intent succeeded (or failed) and returns the event to send. */
  settleIntent(id: string, outcome: "succeed" | "fail"): Promise<Json>;
  /** Completes an account's onboarding and returns the `account.updated` event to send. */
  onboardAccount(id: string): Promise<Json>;
}

function randomId(prefix: string): string {
  return `${prefix}_dev_${
    base64url(crypto.getRandomValues(new Uint8Array(18))).replace(/[-_]/g, "x")
  }`;
}

const now = () => Math.floor(Date.now() / 1000);

/** A Stripe-shaped event around an object. */
function event(type: string, object: Json): Json {
  return {
    id: randomId("evt"),
    object: "event",
    api_version: "2026-10-28.endive",
    created: now(),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
}

function notFound(what: string, id: string): PaymentProviderRefused {
  return new PaymentProviderRefused(`No such ${what}: '${id}'`, "resource_missing", 404);
}

export function createDevProvider(
  sql: Sql,
  opts: { jwtSecret: string; siteUrl: string },
): DevPaymentProvider {
  const secret = hmacSigner(opts.jwtSecret)("agora dev payments webhook")
    .then((mac) => `whsec_dev_${mac}`);

  /** Creates an object once per idempotency key; the same key returns the first object. */
  async function create(
    object: string,
    prefix: string,
    idempotencyKey: string,
    build: (id: string) => Json,
  ): Promise<Json> {
    const id = randomId(prefix);
    const data = build(id);
    const key = `${object}:${idempotencyKey}`;
    const [row] = await sql<{ data: Json }[]>`
      with made as (
        insert into app_private.dev_payment_objects (id, object, data, idempotency_key)
        values (${id}, ${object}, ${sql.json(data as never)}, ${key})
        on conflict (idempotency_key) do nothing
        returning data
      )
      select data from made
      union all
      select data from app_private.dev_payment_objects where idempotency_key = ${key}
      limit 1`;
    if (row) return row.data;
    // A concurrent request with the same key inserted first: this statement waited for it to
    // commit, but its snapshot, taken before that, cannot see the row. A new statement can.
    const [made] = await sql<{ data: Json }[]>`
      select data from app_private.dev_payment_objects where idempotency_key = ${key}`;
    if (!made) throw new Error(`dev payments: no ${object} for idempotency key ${key}`);
    return made.data;
  }

  async function read(object: string, id: string): Promise<Json | null> {
    const [row] = await sql<{ data: Json }[]>`
      select data from app_private.dev_payment_objects where id = ${id} and object = ${object}`;
    return row?.data ?? null;
  }

  /** Changes an object's fields when its status is one of `from`; the new object, or null. */
  async function update(id: string, from: string[], changes: Json): Promise<Json | null> {
    const [row] = await sql<{ data: Json }[]>`
      update app_private.dev_payment_objects set data = data || ${sql.json(changes as never)}
      where id = ${id} and data ->> 'status' = any(${from})
      returning data`;
    return row?.data ?? null;
  }

  const intentState = (pi: Json): PaymentIntentState => ({
    id: pi.id as string,
    status: pi.status as string,
    amount: pi.amount as number,
    currency: pi.currency as string,
    clientSecret: (pi.client_secret as string | null) ?? null,
    attemptFailed: pi.last_payment_error !== null && pi.last_payment_error !== undefined,
  });
  const refundState = (r: Json): RefundState => ({
    id: r.id as string,
    status: r.status as string,
    orderId: ((r.metadata as Json | undefined)?.orderId as string | undefined) ?? null,
  });
  const accountState = (a: Json): AccountState => ({
    id: a.id as string,
    payoutsStatus: payoutsStatusOf(a as Parameters<typeof payoutsStatusOf>[0]),
  });

  return {
    name: "dev",
    webhookSecret: () => secret,

    async createPaymentIntent(input, idempotencyKey) {
      const pi = await create("payment_intent", "pi", idempotencyKey, (id) => ({
        id,
        object: "payment_intent",
        amount: input.amount,
        currency: input.currency.toLowerCase(),
        status: "requires_payment_method",
        client_secret: `${id}_secret_${base64url(crypto.getRandomValues(new Uint8Array(12)))}`,
        transfer_group: input.checkoutId,
        metadata: { checkoutId: input.checkoutId, buyerId: input.buyerId },
        last_payment_error: null,
        latest_charge: null,
        created: now(),
        livemode: false,
      }));
      return intentState(pi);
    },

    async retrievePaymentIntent(id) {
      const pi = await read("payment_intent", id);
      if (!pi) throw notFound("payment_intent", id);
      return intentState(pi);
    },

    async cancelPaymentIntent(id) {
      const pi = await update(id, [
        "requires_payment_method",
        "requires_confirmation",
        "requires_action",
      ], {
        status: "canceled",
        cancellation_reason: "abandoned",
        canceled_at: now(),
      });
      if (pi) return intentState(pi);
      const current = await read("payment_intent", id);
      if (!current) throw notFound("payment_intent", id);
      if (current.status === "canceled") return intentState(current);
      throw new PaymentProviderRefused(
        `You cannot cancel this PaymentIntent because it has a status of ${current.status}.`,
        "payment_intent_unexpected_state",
        400,
      );
    },

    async createRefund(input, idempotencyKey) {
      const pi = await read("payment_intent", input.paymentIntentId);
      if (!pi) throw notFound("payment_intent", input.paymentIntentId);
      if (pi.status !== "succeeded") {
        throw new PaymentProviderRefused(
          `PaymentIntent ${input.paymentIntentId} does not have a successful charge to refund.`,
          "charge_not_found",
          400,
        );
      }
      const refund = await create("refund", "re", idempotencyKey, (id) => ({
        id,
        object: "refund",
        amount: input.amount,
        currency: pi.currency,
        payment_intent: input.paymentIntentId,
        status: "succeeded",
        metadata: { orderId: input.orderId },
        created: now(),
      }));
      return refundState(refund);
    },

    async retrieveRefund(id) {
      const refund = await read("refund", id);
      if (!refund) throw notFound("refund", id);
      return refundState(refund);
    },

    async createAccount(input, idempotencyKey) {
      const account = await create("account", "acct", idempotencyKey, (id) => ({
        id,
        object: "account",
        type: "express",
        email: input.email,
        country: input.country,
        status: "onboarding",
        charges_enabled: false,
        payouts_enabled: false,
        details_submitted: false,
        capabilities: { transfers: "inactive" },
        requirements: { currently_due: ["external_account"], disabled_reason: null },
        metadata: { vendorId: input.vendorId },
        created: now(),
      }));
      return { id: account.id as string };
    },

    async retrieveAccount(id) {
      const account = await read("account", id);
      if (!account) throw notFound("account", id);
      return accountState(account);
    },

    async createAccountLink(input) {
      if (!(await read("account", input.account))) throw notFound("account", input.account);
      return { url: `${opts.siteUrl}/_dev/accounts/${encodeURIComponent(input.account)}/onboard` };
    },

    async createTransfer(input, idempotencyKey) {
      const account = await read("account", input.destination);
      if (!account) throw notFound("account", input.destination);
      if (!account.payouts_enabled) {
        throw new PaymentProviderRefused(
          "Your destination account needs to have at least one of the following capabilities enabled: transfers",
          "insufficient_capabilities_for_transfer",
          400,
        );
      }
      const transfer = await create("transfer", "tr", idempotencyKey, (id) => ({
        id,
        object: "transfer",
        amount: input.amount,
        currency: input.currency.toLowerCase(),
        destination: input.destination,
        transfer_group: `settlement:${input.settlementId}`,
        metadata: { settlementId: input.settlementId, vendorId: input.vendorId },
        status: "paid",
        created: now(),
      }));
      return { id: transfer.id as string };
    },

    async verifyWebhook(rawBody, signature) {
      return verifyWithSdk(rawBody, signature, await secret);
    },

    async settleIntent(id, outcome) {
      const payable = ["requires_payment_method", "requires_confirmation", "requires_action"];
      const pi = outcome === "succeed"
        ? await update(id, payable, {
          status: "succeeded",
          last_payment_error: null,
          latest_charge: randomId("ch"),
        })
        : await update(id, payable, {
          status: "requires_payment_method",
          last_payment_error: {
            type: "card_error",
            code: "card_declined",
            decline_code: "generic_decline",
            message: "Your card was declined.",
          },
        });
      if (!pi) {
        const current = await read("payment_intent", id);
        if (!current) throw notFound("payment_intent", id);
        throw new PaymentProviderRefused(
          `This PaymentIntent's status is ${current.status}; it cannot ${outcome} now.`,
          "payment_intent_unexpected_state",
          409,
        );
      }
      return event(
        outcome === "succeed" ? "payment_intent.succeeded" : "payment_intent.payment_failed",
        pi,
      );
    },

    async onboardAccount(id) {
      const account = await sql<{ data: Json }[]>`
        update app_private.dev_payment_objects
        set data = data || ${
        sql.json({
          status: "enabled",
          charges_enabled: true,
          payouts_enabled: true,
          details_submitted: true,
          capabilities: { transfers: "active" },
          requirements: { currently_due: [], disabled_reason: null },
        } as never)
      }
        where id = ${id} and object = 'account'
        returning data`;
      if (!account.length) throw notFound("account", id);
      return event("account.updated", account[0].data);
    },
  };
}
