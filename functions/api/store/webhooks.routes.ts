/**
 * /api/store/webhooks/stripe: the payment provider's events. No session: the `Stripe-Signature`
 * over the raw body is the authentication (verified with the SDK's `constructEventAsync` and the
 * webhook secret; the `dev` provider signs with its own). A verified event is stored once under
 * its id and its work queued (a store.stripe_event job), so the answer is fast and a replay does
 * nothing. Queries: store/webhooks.queries.ts (a server path).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { anyone, errors, json, router } from "../core/openapi.ts";
import { badRequest } from "../../_shared/errors.ts";
import { unstorablePath } from "../../_shared/storable.ts";
import { serverSql } from "../core/doors.ts";
import { recordProviderEvent } from "./webhooks.queries.ts";
import { WebhookEventMalformed, WebhookSignatureError } from "./payments.ts";

export const webhooks = router();

webhooks.openapi(
  createRoute({
    method: "post",
    path: "/stripe",
    operationId: "receiveStripeEvent",
    summary: "Stripe webhook",
    description:
      "The body is Stripe's event, read raw (its bytes are what the signature covers). " +
      "A bad or missing signature is 400; a verified event is stored once by id and handled in " +
      "the background (the PaymentIntent or account is read again from the provider, so events " +
      "may arrive in any order); an event seen before answers 200 and does nothing again.",
    security: anyone,
    request: {
      headers: z.object({ "stripe-signature": z.string().min(1).max(2000) }),
    },
    responses: {
      200: json(
        z.object({ received: z.literal(true), duplicate: z.boolean() }),
        "Received (duplicate: seen before, nothing done)",
      ),
      ...errors(400, 403, 413),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const signature = c.req.valid("header")["stripe-signature"];
    const raw = await c.req.text();
    let event;
    try {
      event = await deps.payments.verifyWebhook(raw, signature);
    } catch (err) {
      if (err instanceof WebhookSignatureError) {
        throw badRequest("The webhook signature does not verify.", [{
          path: "Stripe-Signature",
          message: "not a valid signature of this body",
        }]);
      }
      if (err instanceof WebhookEventMalformed) {
        throw badRequest("The body is not a payment provider's event.", [{
          path: "body",
          message: err.message,
        }]);
      }
      throw err;
    }
    const unstorable = unstorablePath(event);
    if (unstorable !== null) {
      throw badRequest("The event holds text that cannot be stored.", [{
        path: unstorable || "(root)",
        message: "holds a NUL character or a lone UTF-16 surrogate",
      }]);
    }
    const fresh = await recordProviderEvent(serverSql(deps, "payment webhook"), event);
    return c.json({ received: true as const, duplicate: !fresh }, 200);
  },
);
