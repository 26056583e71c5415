/**
 * A stand-in for the Stripe endpoints the store uses, for tests only, at the network boundary:
 * the real `stripe` SDK is pointed at it (`AGORA_STRIPE_API_URL`), so every request the app makes
 * goes through the SDK's own encoding, headers, retries and error classes.
 *
 * It answers as Stripe's API does for what the store calls:
 * - `POST /v1/payment_intents`, `GET /v1/payment_intents/:id`, `POST /v1/payment_intents/:id/cancel`
 * - `POST /v1/refunds`, `GET /v1/refunds/:id`
 * - `POST /v1/accounts`, `GET /v1/accounts/:id`, `POST /v1/account_links`
 * - `POST /v1/transfers`
 *
 * and checks what Stripe checks: the bearer secret key (401), form-encoded bodies with bracketed
 * keys, required and unknown parameters (400 `parameter_missing` / `parameter_unknown`), amounts
 * (positive integers, at least 50 minor units for a payment), object states (400
 * `payment_intent_unexpected_state`), unknown ids (404 `resource_missing`), the platform balance
 * for transfers (400 `balance_insufficient`) and the destination's transfers capability. Errors
 * have Stripe's shape, `{ error: { type, code, message, param } }`, with Stripe's statuses.
 * `Idempotency-Key`: the same key and parameters replay the first response (with
 * `Idempotent-Replayed: true`); the same key with other parameters is 400 `idempotency_error`.
 *
 * What a customer or a vendor does on Stripe's side (confirming a payment, a decline, finishing
 * onboarding) is done by the test through the methods below, and the webhook events that follow
 * are signed with the real SDK's `generateTestHeaderStringAsync`.
 */
import Stripe from "stripe";

type Json = Record<string, unknown>;

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  params: Json;
  status: number;
  replayed: boolean;
}

export interface StripeStandIn {
  url: string;
  secretKey: string;
  webhookSecret: string;
  requests: RecordedRequest[];
  /** Every object by id (payment intents, refunds, accounts, transfers). */
  objects: Map<string, Json>;
  /** The customer confirms the payment: it succeeds. Returns the PaymentIntent. */
  confirm(paymentIntentId: string): Json;
  /** The customer's card is declined: the PaymentIntent stays payable with an error. */
  decline(paymentIntentId: string): Json;
  /** The vendor finishes onboarding: payouts and transfers are enabled. */
  completeOnboarding(accountId: string): Json;
  /** A Stripe event around an object, and its `Stripe-Signature` header. */
  event(type: string, object: Json): Promise<{ id: string; body: string; signature: string }>;
  /** While down, every request answers 500 `api_error` (as Stripe does in an incident). */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

const API_VERSION = "2026-10-28.endive";

class StripeError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
  body(): Json {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code
          ? {
            code: this.code,
            doc_url: `https://stripe.com/docs/error-codes/${this.code.replace(/_/g, "-")}`,
          }
          : {}),
        ...(this.param ? { param: this.param } : {}),
      },
    };
  }
}

const invalid = (message: string, code: string | null = null, param: string | null = null) =>
  new StripeError(400, "invalid_request_error", message, code, param);
const missing = (param: string) =>
  invalid(`Missing required param: ${param}.`, "parameter_missing", param);
const noSuch = (object: string, id: string, param: string) =>
  new StripeError(
    404,
    "invalid_request_error",
    `No such ${object}: '${id}'`,
    "resource_missing",
    param,
  );

/** `a[b][c]=v` form fields into nested objects (arrays as `a[0]`/`a[]`), as Stripe reads them. */
function parseForm(text: string): Json {
  const out: Json = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.split("[").map((p, i) => (i === 0 ? p : p.replace(/\]$/, "")));
    let node: Json = out;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const name = part === "" ? String(Object.keys(node).length) : part;
      if (last) node[name] = value;
      else node = (node[name] ??= {}) as Json;
    });
  }
  return out;
}

function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  const entries = Object.entries(value as Json).sort(([a], [b]) => a.localeCompare(b));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}

function only(params: Json, allowed: string[]) {
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) {
      throw invalid(`Received unknown parameter: ${key}`, "parameter_unknown", key);
    }
  }
}

function integer(params: Json, name: string, { required = false, min = 0 } = {}): number | null {
  const raw = params[name];
  if (raw === undefined) {
    if (required) throw missing(name);
    return null;
  }
  if (typeof raw !== "string" || !/^\d+$/.test(raw)) {
    throw invalid(`Invalid integer: ${String(raw)}`, "parameter_invalid_integer", name);
  }
  const n = Number(raw);
  if (n < min) {
    throw invalid(
      `This value must be greater than or equal to ${min}.`,
      name === "amount" ? "amount_too_small" : "parameter_invalid_integer",
      name,
    );
  }
  return n;
}

function text(params: Json, name: string, required = false): string | null {
  const raw = params[name];
  if (raw === undefined || raw === "") {
    if (required) throw missing(name);
    return null;
  }
  if (typeof raw !== "string") {
    throw invalid(`Invalid string: ${name}`, "parameter_invalid_string", name);
  }
  return raw;
}

function currency(params: Json): string {
  const value = text(params, "currency", true)!;
  if (!/^[a-z]{3}$/.test(value)) {
    throw invalid(`Invalid currency: ${value}.`, "parameter_invalid", "currency");
  }
  return value;
}

function metadata(params: Json): Record<string, string> {
  const raw = params.metadata;
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null) throw invalid("Invalid object", null, "metadata");
  return raw as Record<string, string>;
}

export function startStripeStandIn(): StripeStandIn {
  const secretKey = `sk_test_standin_${crypto.randomUUID().replace(/-/g, "")}`;
  const webhookSecret = `whsec_standin_${crypto.randomUUID().replace(/-/g, "")}`;
  const signer = new Stripe("sk_test_signing_only");
  const objects = new Map<string, Json>();
  const requests: RecordedRequest[] = [];
  const idempotency = new Map<string, { fingerprint: string; status: number; body: string }>();
  let down = false;
  let counter = 0;
  const newId = (prefix: string) =>
    `${prefix}_${(++counter).toString(36).padStart(4, "0")}${
      crypto.randomUUID().replace(/-/g, "").slice(0, 20)
    }`;
  const now = () => Math.floor(Date.now() / 1000);

  function find(prefix: string, object: string, id: string, param: string): Json {
    const found = objects.get(id);
    if (!found || found.object !== object || !id.startsWith(prefix)) {
      throw noSuch(object, id, param);
    }
    return found;
  }

  /** What the platform may transfer: charges received, less refunds and transfers. */
  function balance(currencyCode: string): number {
    let total = 0;
    for (const o of objects.values()) {
      if (o.currency !== currencyCode) continue;
      if (o.object === "payment_intent" && o.status === "succeeded") {
        total += o.amount_received as number;
      }
      if (o.object === "refund" && o.status === "succeeded") total -= o.amount as number;
      if (o.object === "transfer") total -= o.amount as number;
    }
    return total;
  }

  function refunded(paymentIntentId: string): number {
    let total = 0;
    for (const o of objects.values()) {
      if (
        o.object === "refund" && o.payment_intent === paymentIntentId && o.status === "succeeded"
      ) {
        total += o.amount as number;
      }
    }
    return total;
  }

  function route(method: string, path: string, params: Json): Json {
    let m: RegExpExecArray | null;
    if (method === "POST" && path === "/v1/payment_intents") {
      only(params, [
        "amount",
        "currency",
        "transfer_group",
        "metadata",
        "automatic_payment_methods",
        "description",
        "payment_method_types",
      ]);
      const amount = integer(params, "amount", { required: true, min: 50 })!;
      const id = newId("pi");
      const pi: Json = {
        id,
        object: "payment_intent",
        amount,
        amount_received: 0,
        currency: currency(params),
        status: "requires_payment_method",
        client_secret: `${id}_secret_${crypto.randomUUID().replace(/-/g, "")}`,
        transfer_group: text(params, "transfer_group"),
        description: text(params, "description"),
        metadata: metadata(params),
        automatic_payment_methods: params.automatic_payment_methods
          ? { enabled: true, allow_redirects: "always" }
          : null,
        capture_method: "automatic_async",
        confirmation_method: "automatic",
        last_payment_error: null,
        latest_charge: null,
        canceled_at: null,
        cancellation_reason: null,
        created: now(),
        livemode: false,
      };
      objects.set(id, pi);
      return pi;
    }
    if (method === "GET" && (m = /^\/v1\/payment_intents\/([^/]+)$/.exec(path))) {
      only(params, ["expand"]);
      return find("pi_", "payment_intent", m[1], "intent");
    }
    if (method === "POST" && (m = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(path))) {
      only(params, ["cancellation_reason"]);
      const pi = find("pi_", "payment_intent", m[1], "intent");
      const reason = text(params, "cancellation_reason");
      if (
        reason &&
        !["duplicate", "fraudulent", "requested_by_customer", "abandoned"].includes(reason)
      ) {
        throw invalid(
          `Invalid cancellation_reason: ${reason}`,
          "parameter_invalid",
          "cancellation_reason",
        );
      }
      const cancellable = [
        "requires_payment_method",
        "requires_capture",
        "requires_confirmation",
        "requires_action",
        "processing",
      ];
      if (!cancellable.includes(pi.status as string)) {
        throw invalid(
          `You cannot cancel this PaymentIntent because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${
            cancellable.join(", ")
          }.`,
          "payment_intent_unexpected_state",
        );
      }
      Object.assign(pi, { status: "canceled", canceled_at: now(), cancellation_reason: reason });
      return pi;
    }
    if (method === "POST" && path === "/v1/refunds") {
      only(params, ["payment_intent", "charge", "amount", "metadata", "reason"]);
      const piId = text(params, "payment_intent");
      if (!piId) throw missing("payment_intent");
      const pi = find("pi_", "payment_intent", piId, "payment_intent");
      if (pi.status !== "succeeded") {
        throw invalid(
          `This PaymentIntent (${piId}) does not have a successful charge to refund.`,
          "charge_not_found",
          "payment_intent",
        );
      }
      const left = (pi.amount_received as number) - refunded(piId);
      const amount = integer(params, "amount", { min: 1 }) ?? left;
      if (left <= 0) {
        throw invalid(
          `Charge ${pi.latest_charge} has already been refunded.`,
          "charge_already_refunded",
        );
      }
      if (amount > left) {
        throw invalid(
          `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
          "amount_too_large",
          "amount",
        );
      }
      const id = newId("re");
      const refund: Json = {
        id,
        object: "refund",
        amount,
        currency: pi.currency,
        payment_intent: piId,
        charge: pi.latest_charge,
        reason: text(params, "reason"),
        status: "succeeded",
        metadata: metadata(params),
        created: now(),
      };
      objects.set(id, refund);
      return refund;
    }
    if (method === "GET" && (m = /^\/v1\/refunds\/([^/]+)$/.exec(path))) {
      return find("re_", "refund", m[1], "refund");
    }
    if (method === "POST" && path === "/v1/accounts") {
      only(params, ["type", "email", "country", "capabilities", "metadata", "business_type"]);
      const type = text(params, "type", true)!;
      if (!["express", "standard", "custom"].includes(type)) {
        throw invalid(
          `Invalid type: must be one of custom, express, or standard`,
          "parameter_invalid",
          "type",
        );
      }
      const country = text(params, "country");
      if (country !== null && !/^[A-Z]{2}$/.test(country)) {
        throw invalid(`Country '${country}' is unknown.`, "country_unsupported", "country");
      }
      const id = newId("acct");
      const account: Json = {
        id,
        object: "account",
        type,
        email: text(params, "email"),
        country: country ?? "US",
        charges_enabled: false,
        payouts_enabled: false,
        details_submitted: false,
        capabilities: { transfers: "inactive" },
        requirements: {
          currently_due: ["business_type", "external_account", "tos_acceptance.date"],
          disabled_reason: "requirements.past_due",
        },
        metadata: metadata(params),
        created: now(),
      };
      objects.set(id, account);
      return account;
    }
    if (method === "GET" && (m = /^\/v1\/accounts\/([^/]+)$/.exec(path))) {
      return find("acct_", "account", m[1], "account");
    }
    if (method === "POST" && path === "/v1/account_links") {
      only(params, ["account", "refresh_url", "return_url", "type", "collect"]);
      const account = text(params, "account", true)!;
      const refresh = text(params, "refresh_url", true)!;
      const back = text(params, "return_url", true)!;
      const type = text(params, "type", true)!;
      if (!["account_onboarding", "account_update"].includes(type)) {
        throw invalid(`Invalid type: ${type}`, "parameter_invalid", "type");
      }
      for (const [name, value] of [["refresh_url", refresh], ["return_url", back]]) {
        if (!/^https?:\/\//.test(value)) throw invalid(`Not a valid URL`, "url_invalid", name);
      }
      find("acct_", "account", account, "account");
      return {
        object: "account_link",
        created: now(),
        expires_at: now() + 300,
        url: `https://connect.stripe.com/setup/e/${account}/${
          crypto.randomUUID().replace(/-/g, "")
        }`,
      };
    }
    if (method === "POST" && path === "/v1/transfers") {
      only(params, [
        "amount",
        "currency",
        "destination",
        "transfer_group",
        "metadata",
        "source_transaction",
        "description",
      ]);
      const amount = integer(params, "amount", { required: true, min: 1 })!;
      const code = currency(params);
      const destination = text(params, "destination", true)!;
      const account = find("acct_", "account", destination, "destination");
      if ((account.capabilities as Json).transfers !== "active") {
        throw invalid(
          "Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments",
          "insufficient_capabilities_for_transfer",
          "destination",
        );
      }
      if (balance(code) < amount) {
        throw invalid(
          "You have insufficient available funds in your Stripe account. Try adding funds directly to your available balance by creating Charges using the 4000000000000077 test card.",
          "balance_insufficient",
        );
      }
      const id = newId("tr");
      const transfer: Json = {
        id,
        object: "transfer",
        amount,
        currency: code,
        destination,
        transfer_group: text(params, "transfer_group"),
        metadata: metadata(params),
        reversed: false,
        created: now(),
      };
      objects.set(id, transfer);
      return transfer;
    }
    throw new StripeError(
      404,
      "invalid_request_error",
      `Unrecognized request URL (${method}: ${path}).`,
    );
  }

  function respond(status: number, body: string, replayed = false): Response {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "request-id": `req_${crypto.randomUUID().replace(/-/g, "").slice(0, 14)}`,
      "stripe-version": API_VERSION,
    };
    if (replayed) headers["idempotent-replayed"] = "true";
    if (status >= 500) headers["stripe-should-retry"] = "true";
    return new Response(body, { status, headers });
  }

  async function handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const method = request.method;
    const raw = method === "GET" ? url.search.slice(1) : await request.text();
    const key = request.headers.get("idempotency-key");
    let params: Json = {};
    const record = (status: number, replayed = false) =>
      requests.push({ method, path: url.pathname, idempotencyKey: key, params, status, replayed });
    try {
      const auth = request.headers.get("authorization") ?? "";
      if (auth !== `Bearer ${secretKey}`) {
        const shown = auth.startsWith("Bearer ") ? auth.slice(7, 15) + "****" : "";
        throw new StripeError(
          401,
          "invalid_request_error",
          shown ? `Invalid API Key provided: ${shown}` : "You did not provide an API key.",
        );
      }
      if (down) throw new StripeError(500, "api_error", "An unknown error occurred");
      if (method === "POST") {
        const type = request.headers.get("content-type") ?? "";
        if (!type.startsWith("application/x-www-form-urlencoded")) {
          throw invalid("Invalid request: the body must be application/x-www-form-urlencoded.");
        }
      }
      params = parseForm(raw);
      if (method === "POST" && key) {
        if (key.length > 255) {
          throw invalid("Idempotency-Key is too long (255 characters at most).");
        }
        const fingerprint = `${method} ${url.pathname} ${canonical(params)}`;
        const seen = idempotency.get(key);
        if (seen) {
          if (seen.fingerprint !== fingerprint) {
            throw new StripeError(
              400,
              "idempotency_error",
              `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            );
          }
          record(seen.status, true);
          return respond(seen.status, seen.body, true);
        }
        let status = 200;
        let body: string;
        try {
          body = JSON.stringify(route(method, url.pathname, params));
        } catch (err) {
          if (!(err instanceof StripeError)) throw err;
          status = err.status;
          body = JSON.stringify(err.body());
        }
        // Stripe saves the result once the endpoint ran, failures included.
        idempotency.set(key, { fingerprint, status, body });
        record(status);
        return respond(status, body);
      }
      const body = JSON.stringify(route(method, url.pathname, params));
      record(200);
      return respond(200, body);
    } catch (err) {
      if (!(err instanceof StripeError)) throw err;
      record(err.status);
      return respond(err.status, JSON.stringify(err.body()));
    }
  }

  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, handle);
  const port = (server.addr as Deno.NetAddr).port;

  function intent(id: string): Json {
    const pi = objects.get(id);
    if (!pi || pi.object !== "payment_intent") throw new Error(`no payment intent ${id}`);
    return pi;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    secretKey,
    webhookSecret,
    requests,
    objects,
    confirm(id) {
      const pi = intent(id);
      if (
        !["requires_payment_method", "requires_confirmation", "requires_action"].includes(
          pi.status as string,
        )
      ) {
        throw new Error(`payment intent ${id} is ${pi.status}`);
      }
      return Object.assign(pi, {
        status: "succeeded",
        amount_received: pi.amount,
        latest_charge: newId("ch"),
        last_payment_error: null,
      });
    },
    decline(id) {
      const pi = intent(id);
      return Object.assign(pi, {
        status: "requires_payment_method",
        last_payment_error: {
          type: "card_error",
          code: "card_declined",
          decline_code: "generic_decline",
          message: "Your card was declined.",
        },
      });
    },
    completeOnboarding(id) {
      const account = objects.get(id);
      if (!account || account.object !== "account") throw new Error(`no account ${id}`);
      return Object.assign(account, {
        charges_enabled: true,
        payouts_enabled: true,
        details_submitted: true,
        capabilities: { transfers: "active" },
        requirements: { currently_due: [], disabled_reason: null },
      });
    },
    async event(type, object) {
      const id = newId("evt");
      const body = JSON.stringify({
        id,
        object: "event",
        api_version: API_VERSION,
        created: now(),
        data: { object: structuredClone(object) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      });
      const signature = await signer.webhooks.generateTestHeaderStringAsync({
        payload: body,
        secret: webhookSecret,
      });
      return { id, body, signature };
    },
    setDown(value) {
      down = value;
    },
    async close() {
      await server.shutdown();
    },
  };
}
