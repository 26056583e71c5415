/**
 * /api/store/vendors: the public list of approved vendors; applying (SUBSCRIBER and up, one live
 * application per user); the caller's own vendor with its balances, its settlements and the
 * payout account's onboarding link. Queries: store/vendors.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  anyone,
  errors,
  errorSchema,
  json,
  jsonBody,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { ApiError } from "../../_shared/errors.ts";
import { asAnonymous, asUser, serverSql } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import {
  applyForVendor,
  listPublicVendors,
  ownSettlements,
  ownVendor,
  setPayoutAccount,
} from "./vendors.queries.ts";
import { PaymentProviderRefused, PaymentProviderUnavailable } from "./payments.ts";
import { money, settlementSchema, vendorSchema } from "./store.schemas.ts";

export const vendors = router();

vendors.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listVendors",
    summary: "Approved vendors, newest first",
    description: "Public fields only; `search` is a case-insensitive substring of the name.",
    security: anyone,
    request: {
      query: z.object({
        search: z.string().trim().min(1).max(200).optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: { 200: json(pageOf(vendorSchema), "A page of vendors"), ...errors(400) },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    return c.json(await asAnonymous(c, (tx) => listPublicVendors(tx, { ...q, after })), 200);
  },
);

vendors.openapi(
  createRoute({
    method: "post",
    path: "/apply",
    operationId: "applyForVendor",
    summary: "Apply to sell",
    description: "Creates the caller's vendor with status `pending`, for an ADMIN to decide. " +
      "409 while the caller has a pending, approved or suspended vendor.",
    security: signedIn,
    middleware: [requireRole("SUBSCRIBER")] as const,
    request: {
      body: jsonBody(z.object({
        name: z.string().trim().min(2).max(100),
        description: z.string().trim().max(5000).default(""),
        contactEmail: z.email().max(320),
        country: z.string().regex(/^[A-Z]{2}$/, "an ISO 3166-1 alpha-2 code, e.g. US")
          .openapi({ example: "US" }),
      })),
    },
    responses: {
      201: json(vendorSchema, "The vendor, pending"),
      ...errors(400, 401, 403, 409, 413, 415),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    return c.json(await asUser(c, (tx) => applyForVendor(tx, body)), 201);
  },
);

vendors.openapi(
  createRoute({
    method: "get",
    path: "/me",
    operationId: "getOwnVendor",
    summary: "The caller's vendor, with its payouts and balances",
    description: "The live vendor (else the latest rejected application); 404 without one. " +
      "`balances.pending`: paid orders not settled yet (gross); `balances.settled`: paid out " +
      "(net); `balances.awaitingPayout`: settled, not transferred yet (net).",
    security: signedIn,
    middleware: [requireRole("SUBSCRIBER")] as const,
    responses: {
      200: json(
        vendorSchema.extend({
          balances: z.object({ pending: money, settled: money, awaitingPayout: money }),
        }),
        "The vendor",
      ),
      ...errors(401, 403, 404),
    },
  }),
  async (c) => {
    const currency = (await c.get("deps").config.get()).store.currency;
    const { vendor } = await asUser(c, (tx) => ownVendor(tx, { currency }));
    return c.json(vendor, 200);
  },
);

vendors.openapi(
  createRoute({
    method: "post",
    path: "/me/payouts",
    operationId: "createPayoutsLink",
    summary: "The payout account's onboarding link",
    description: "Creates the vendor's Stripe Connect account on first use and answers a fresh " +
      "onboarding link. With the `dev` provider the link is the local " +
      "`/_dev/accounts/<id>/onboard`. The account's status then follows `account.updated` " +
      "webhooks. 404 without a live vendor; 503 when the provider does not answer.",
    security: signedIn,
    middleware: [requireRole("SUBSCRIBER")] as const,
    responses: {
      200: json(z.object({ url: z.string() }), "The onboarding link"),
      ...errors(401, 403, 404, 422),
      503: json(errorSchema, "payment_provider_unavailable"),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const currency = (await deps.config.get()).store.currency;
    const { row } = await asUser(c, (tx) => ownVendor(tx, { currency, liveOnly: true }));
    try {
      let account = row.payout_account_id;
      if (!account) {
        account = (await deps.payments.createAccount(
          { email: row.contact_email, country: row.country, vendorId: row.id },
          `vendor-account:${row.id}`,
        )).id;
        await setPayoutAccount(serverSql(deps, "payout account"), row.id, account);
      }
      const back = `${deps.settings.siteUrl}/`;
      const link = await deps.payments.createAccountLink({
        account,
        refreshUrl: `${back}?payouts=refresh`,
        returnUrl: `${back}?payouts=done`,
      });
      return c.json({ url: link.url }, 200);
    } catch (err) {
      if (err instanceof PaymentProviderUnavailable) {
        throw new ApiError("payment_provider_unavailable", "The payment provider does not answer.");
      }
      if (err instanceof PaymentProviderRefused) {
        throw new ApiError("unprocessable", `The payment provider refused: ${err.message}`);
      }
      throw err;
    }
  },
);

vendors.openapi(
  createRoute({
    method: "get",
    path: "/me/settlements",
    operationId: "listOwnSettlements",
    summary: "The settlements of the caller's vendor, newest first",
    security: signedIn,
    middleware: [requireRole("SUBSCRIBER")] as const,
    request: {
      query: z.object({ limit: limitParam, cursor: z.string().max(500).optional() }),
    },
    responses: {
      200: json(pageOf(settlementSchema), "A page of settlements"),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    return c.json(await asUser(c, (tx) => ownSettlements(tx, { ...q, after })), 200);
  },
);
