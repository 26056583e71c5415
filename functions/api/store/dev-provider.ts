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
 *
 * Events are delivered as Stripe delivers them: each is a row of `app_private.dev_payment_events`
 * written in the transaction of the change it reports, with a store.dev_event_delivery job
 * queued (store/jobs.ts) that posts it again, signed anew each time, until the webhook answers
 * 2xx: first `REDELIVERY.firstDelaySeconds` after the change, then with `redeliveryDelaySeconds`
 * between attempts, `REDELIVERY.attempts` times (about three days, Stripe's span). The request
 * that made the change delivers it at once; the job covers a webhook that failed and a process
 * that died in between. The webhook stores each event id once, so a second delivery does nothing.
 *
 * Where events go: `connectEndpoint` (createApp connects its own webhook route, in process);
 * before any app is built, a POST to `<AGORA_SITE_URL>/api/store/webhooks/stripe`.
 */
import type { Sql, Tx } from "../../_shared/db.ts";
import { base64url, hmacSigner } from "../../_shared/crypto.ts";
import {
  type AccountState,
  type PaymentIntentState,
  type PaymentProvider,
  PaymentProviderRefused,
  payoutsStatusOf,
  type RefundState,
  signWebhook,
  verifyWithSdk,
} from "./payments.ts";

type Json = Record<string, unknown>;

/** The dev provider, plus what the local `/_dev` routes need. */
export interface DevPaymentProvider extends PaymentProvider {
  readonly name: "dev";
  /** The secret its events are signed with (`whsec_dev_…`). */
  webhookSecret(): Promise<string>;
  /**
   * Marks a payment intent succeeded (or its attempt failed) and returns the event, recorded in
   * the same transaction with its redelivery queued. `succeed` of an intent that already
   * succeeded changes nothing and returns the event that reported it (queued again if it was
   * never acknowledged), so a client's retry gets the same event; `fail` of one is refused (409).
   */
  settleIntent(id: string, outcome: "succeed" | "fail"): Promise<Json>;
  /** Completes an account's onboarding and returns the `account.updated` event, recorded likewise. */
  onboardAccount(id: string): Promise<Json>;
  /**
   * Posts a recorded event, signed now, to the connected webhook endpoint once, and records the
   * attempt. `delivered`: acknowledged (2xx) now or before.
   */
  deliverEvent(eventId: string, opts?: DeliverOptions): Promise<Delivery>;
  /** Where events are posted: the deployment's own webhook route (createApp connects it). */
  connectEndpoint(endpoint: WebhookEndpoint): void;
}

/** Stripe's side of a webhook endpoint: posts the request and returns the answer. */
export type WebhookEndpoint = (request: Request) => Promise<Response>;

export interface DeliverOptions {
  /** Stops waiting for the webhook (a job's lease running out). */
  signal?: AbortSignal;
}

export interface Delivery {
  /** No such event. */
  missing?: true;
  /** Acknowledged by the webhook, at this attempt or before. */
  delivered: boolean;
  /** What this attempt got: `HTTP 200`, `HTTP 500`, or the error. */
  result: string;
}

/**
 * The redelivery schedule, Stripe's shape on a local scale: the job's first run this long after
 * the change (the request's own delivery came first), then `redeliveryDelaySeconds(n)` after its
 * n-th failed run, for `attempts` runs.
 */
export const REDELIVERY = {
  firstDelaySeconds: 5,
  attempts: 20,
  /** How long one delivery may wait for the webhook's answer. */
  timeoutSeconds: 10,
} as const;

/** 15 s, 45 s, 2¼ min, 6¾ min, 20 min, 1 h, 3 h, then every 6 h: 20 runs span about 3 days. */
export function redeliveryDelaySeconds(failedRuns: number): number {
  return Math.min(5 * 3 ** Math.max(1, failedRuns), 6 * 3600);
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

const WEBHOOK_PATH = "/api/store/webhooks/stripe";

function notFound(what: string, id: string): PaymentProviderRefused {
  return new PaymentProviderRefused(`No such ${what}: '${id}'`, "resource_missing", 404);
}

export function createDevProvider(
  sql: Sql,
  opts: { jwtSecret: string; siteUrl: string },
): DevPaymentProvider {
  const secret = hmacSigner(opts.jwtSecret)("agora dev payments webhook")
    .then((mac) => `whsec_dev_${mac}`);
  let webhookEndpoint: WebhookEndpoint = (request) => fetch(request);

  /** Stores the event with its delivery queued, in `tx` (the change's transaction). */
  async function record(tx: Tx, made: Json, objectId: string): Promise<Json> {
    await tx`
      select app_private.record_dev_event(
        ${made.id as string}, ${made.type as string}, ${objectId}, ${tx.json(made as never)}::jsonb,
        make_interval(secs => ${REDELIVERY.firstDelaySeconds}), ${REDELIVERY.attempts}
      )`;
    return made;
  }

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

  /**
   * The event that reported an intent's success (recorded now if it has none: an intent made
   * succeeded some other way), its delivery queued again when it was never acknowledged.
   */
  async function succeeded(id: string): Promise<Json> {
    return await sql.begin(async (tx) => {
      const [intent] = await tx<{ data: Json }[]>`
        select data from app_private.dev_payment_objects
        where id = ${id} and object = 'payment_intent' for update`;
      const [known] = await tx<{ id: string; payload: Json }[]>`
        select id, payload from app_private.dev_payment_events
        where object_id = ${id} and type = 'payment_intent.succeeded'
        order by created_at desc, id desc limit 1`;
      if (!known) {
        return await record(tx, event("payment_intent.succeeded", intent.data), id);
      }
      await tx`
        select app_private.queue_dev_event_delivery(
          ${known.id}, make_interval(secs => ${REDELIVERY.firstDelaySeconds}), ${REDELIVERY.attempts}
        )`;
      return known.payload;
    });
  }

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
      const changes = outcome === "succeed"
        ? { status: "succeeded", last_payment_error: null, latest_charge: randomId("ch") }
        : {
          status: "requires_payment_method",
          last_payment_error: {
            type: "card_error",
            code: "card_declined",
            decline_code: "generic_decline",
            message: "Your card was declined.",
          },
        };
      const type = outcome === "succeed"
        ? "payment_intent.succeeded"
        : "payment_intent.payment_failed";
      const made = await sql.begin(async (tx) => {
        const [row] = await tx<{ data: Json }[]>`
          update app_private.dev_payment_objects set data = data || ${sql.json(changes as never)}
          where id = ${id} and object = 'payment_intent' and data ->> 'status' = any(${payable})
          returning data`;
        return row ? await record(tx, event(type, row.data), id) : null;
      });
      if (made) return made;
      const current = await read("payment_intent", id);
      if (!current) throw notFound("payment_intent", id);
      if (outcome === "succeed" && current.status === "succeeded") return await succeeded(id);
      throw new PaymentProviderRefused(
        `This PaymentIntent's status is ${current.status}; it cannot ${outcome} now.`,
        "payment_intent_unexpected_state",
        409,
      );
    },

    async onboardAccount(id) {
      const made = await sql.begin(async (tx) => {
        const [row] = await tx<{ data: Json }[]>`
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
        return row ? await record(tx, event("account.updated", row.data), id) : null;
      });
      if (!made) throw notFound("account", id);
      return made;
    },

    connectEndpoint(endpoint) {
      webhookEndpoint = endpoint;
    },

    async deliverEvent(eventId, deliver = {}) {
      const [found] = await sql<{ payload: Json }[]>`
        select payload from app_private.dev_payment_events where id = ${eventId}`;
      if (!found) return { missing: true, delivered: false, result: "no such event" };
      const body = JSON.stringify(found.payload);
      const signature = await signWebhook(body, await secret);
      const request = new Request(`${opts.siteUrl}${WEBHOOK_PATH}`, {
        method: "POST",
        headers: {
          "content-type": "application/json; charset=utf-8",
          "stripe-signature": signature,
          "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks) agora-dev",
        },
        body,
      });
      let result: string;
      let acknowledged = false;
      const timeout = AbortSignal.timeout(REDELIVERY.timeoutSeconds * 1000);
      const stop = deliver.signal ? AbortSignal.any([deliver.signal, timeout]) : timeout;
      try {
        const response = await Promise.race([
          webhookEndpoint(request),
          new Promise<never>((_, reject) => {
            if (stop.aborted) reject(stop.reason);
            stop.addEventListener("abort", () => reject(stop.reason), { once: true });
          }),
        ]);
        await response.body?.cancel();
        acknowledged = response.status >= 200 && response.status < 300;
        result = `HTTP ${response.status}`;
      } catch (err) {
        result = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
      const [kept] = await sql<{ delivered: boolean }[]>`
        update app_private.dev_payment_events
        set attempts = attempts + 1, last_attempt_at = now(), last_result = left(${result}, 500),
            delivered_at = case when ${acknowledged} then coalesce(delivered_at, now())
                                else delivered_at end
        where id = ${eventId}
        returning delivered_at is not null as delivered`;
      return { delivered: kept?.delivered ?? acknowledged, result };
    },
  };
}
