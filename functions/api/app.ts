/**
 * The `api` edge function's Hono app: middleware in the order a request meets it, one router per
 * resource, one error handler. `createApp` takes its dependencies so the local stack, the hosted
 * function and the tests build the same app.
 *
 * Role gates are not here: each resource router declares its lowest role where its routes are
 * (`conversations.use("*", requireRole("SUBSCRIBER"))`; the admin resources share the admin
 * gate of admin/admin.routes.ts). They run after the middleware below, before validation.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { HTTPException } from "hono/http-exception";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { AppEnv, Deps } from "./core/context.ts";
import { ApiError, errorBody, toApiError } from "../_shared/errors.ts";
import { requestContext } from "./core/middleware/request-context.ts";
import { sessionMiddleware } from "./auth/session.middleware.ts";
import { csrfProtection } from "./core/middleware/csrf.ts";
import { featureGate } from "./core/middleware/features.ts";
import { withCommonResponses } from "./core/openapi.ts";
import { auth } from "./auth/signin.routes.ts";
import { admin } from "./admin/admin.routes.ts";
import { publicConfig } from "./admin/public-config.routes.ts";
import { conversations } from "./messaging/conversations.routes.ts";
import { conversationSettings } from "./messaging/conversation-settings.routes.ts";
import { messages } from "./messaging/messages.routes.ts";
import { messageSearch } from "./messaging/search.routes.ts";
import { attachments } from "./messaging/attachments.routes.ts";
import { realtime } from "./realtime/realtime.routes.ts";
import { internal } from "./jobs/drain.routes.ts";
import { users } from "./people/users.routes.ts";
import { blocks } from "./people/blocks.routes.ts";
import { profile } from "./people/profile.routes.ts";
import { sessions } from "./auth/sessions.routes.ts";
import { identities } from "./auth/identities.routes.ts";
import { account } from "./account/account.routes.ts";
import { store } from "./store/store.routes.ts";
import { wallet } from "./wallet/wallet.routes.ts";
import { notifications } from "./notifications/notifications.routes.ts";
import { reports } from "./moderation/reports.routes.ts";
import { serverSql } from "./core/doors.ts";
import type { DevPaymentProvider } from "./store/dev-provider.ts";

export function createApp(deps: Deps): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  app.use("*", requestContext(deps));
  const corsPolicy = cors({
    origin: (origin) => (deps.settings.allowedOrigins.includes(origin) ? origin : null),
    credentials: true,
    allowHeaders: [
      "Authorization",
      "Content-Type",
      "X-CSRF-Token",
      "Idempotency-Key",
      "X-Request-Id",
      "Last-Event-ID",
    ],
    allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
    exposeHeaders: [
      "X-Request-Id",
      "Retry-After",
      "RateLimit-Limit",
      "RateLimit-Remaining",
      "RateLimit-Reset",
    ],
    maxAge: 600,
  });
  // CORS only concerns requests that carry an Origin (browsers always send one cross-origin);
  // the rest skip the middleware, which is on every request's path. Responses still say they
  // vary by Origin, so a cache never serves one origin's answer to another (added to the built
  // response, as the security headers are).
  app.use("/api/*", async (c, next) => {
    if (c.req.header("origin") !== undefined) return corsPolicy(c, next);
    await next();
    c.res.headers.append("Vary", "Origin");
  });
  const jsonBodyLimit = bodyLimit({
    maxSize: deps.settings.maxBodyBytes,
    onError: () => {
      throw new ApiError(
        "payload_too_large",
        `The body is larger than ${deps.settings.maxBodyBytes} bytes.`,
      );
    },
  });
  // Uploads have their own, configurable limit (messaging/attachments.routes.ts). GET and HEAD routes
  // never read a body, so they skip the check.
  app.use(
    "/api/*",
    (c, next) =>
      c.req.method === "GET" || c.req.method === "HEAD" || c.req.path === "/api/attachments"
        ? next()
        : jsonBodyLimit(c, next),
  );
  // Server-to-server (service key only, checked by the router): before the user middleware.
  app.route("/api/internal", internal);
  app.use("/api/*", sessionMiddleware());
  app.use("/api/*", csrfProtection());
  app.use("/api/*", featureGate());

  app.route("/api/auth/sessions", sessions);
  app.route("/api/auth/identities", identities);
  app.route("/api/auth", auth);
  app.route("/api/account", account);
  app.route("/api/admin", admin);
  app.route("/api/config", publicConfig);
  app.route("/api/conversations", conversations);
  app.route("/api/conversations", conversationSettings);
  // Before /api/messages, whose routes take an id in the same place.
  app.route("/api/messages/search", messageSearch);
  app.route("/api/messages", messages);
  app.route("/api/attachments", attachments);
  app.route("/api/realtime", realtime);
  // Before the directory, whose `/{id}` would take `/blocked` for an id.
  app.route("/api/users", blocks);
  app.route("/api/users", users);
  app.route("/api/profile", profile);
  app.route("/api/store", store);
  app.route("/api/wallet", wallet);
  app.route("/api/notifications", notifications);
  app.route("/api/reports", reports);

  app.get("/health", async (c) => {
    const sql = serverSql(deps, "health");
    try {
      await sql`select 1`;
      return c.json({ status: "ok" }, 200);
    } catch {
      return c.json(errorBody(new ApiError("unavailable", "The database does not answer.")), 503);
    }
  });

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "cookie", {
    type: "apiKey",
    in: "cookie",
    name: "agora-access-token",
  });
  app.get("/api/openapi.json", (c) => c.json(openApiDocument(app, deps.settings.siteUrl), 200));

  app.notFound((c) => c.json(errorBody(new ApiError("not_found", "No such endpoint.")), 404));

  app.onError((err, c) => {
    let apiError = toApiError(err);
    if (!apiError && err instanceof HTTPException) {
      // Hono's own refusals: malformed JSON and similar parse failures of the request.
      apiError = err.status === 413
        ? new ApiError("payload_too_large", "The body is too large.")
        : err.status === 415
        ? new ApiError("unsupported_media_type", "Send the body as application/json.")
        : err.status < 500
        ? new ApiError("invalid_request", err.message || "Malformed request.")
        : null;
    }
    if (!apiError) {
      deps.log("error", "unexpected error", {
        requestId: c.get("requestId"),
        error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
        stack: err instanceof Error ? err.stack : undefined,
      });
      apiError = new ApiError("internal", "Something went wrong.");
    }
    for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
    return c.json(errorBody(apiError), apiError.status as 400);
  });

  // The dev payment provider posts its events (and their redeliveries, store.dev_event_delivery)
  // to this app's webhook route, in process, as Stripe posts to a deployment's.
  if (deps.payments.name === "dev") {
    (deps.payments as DevPaymentProvider).connectEndpoint((request) =>
      Promise.resolve(app.fetch(request, LOOPBACK))
    );
  }

  return app;
}

/**
 * The OpenAPI document of an app made by `createApp` (what `GET /api/openapi.json` answers), for
 * the server and for what is generated from it without one (the web client's types,
 * web/api-schema.ts).
 */
export function openApiDocument(app: OpenAPIHono<AppEnv>, siteUrl: string) {
  return withCommonResponses(app.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Agora API",
      version: "0.1.0",
      description: "Errors always have the shape { error: { code, message, details? } }. " +
        "Cookie-authenticated unsafe requests need X-CSRF-Token (GET /api/auth/csrf).",
    },
    // The base URL without /api: the paths carry it.
    servers: [{ url: siteUrl, description: "This deployment (AGORA_SITE_URL)" }],
  }));
}

/** The connection a dev provider event arrives on: the process itself. */
const LOOPBACK = { remoteAddr: { hostname: "127.0.0.1", port: 0, transport: "tcp" } };
