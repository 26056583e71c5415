/**
 * /api/internal: server-to-server routes, for the project's own infrastructure only. Each needs
 * `Authorization: Bearer <service_role key>`: an HS256 JWT with `role: "service_role"` signed
 * with AGORA_JWT_SECRET (what hosted Supabase's service key is). No key, or one that is not ours:
 * 401; one of our keys for another role (the anon key, a user's access token): 403. Mounted
 * before the session, CSRF and feature middleware (app.ts), which concern users: the drain runs
 * in maintenance mode too, since the work it does was accepted before.
 *
 * POST /api/internal/jobs/drain runs due jobs (functions/api/core/job-queue.ts). Hosted, pg_cron
 * calls it every few seconds through pg_net (docs/operations.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../core/context.ts";
import { errors, json, router } from "../core/openapi.ts";
import { forbidden, unauthenticated } from "../../_shared/errors.ts";
import { bearerToken } from "../../_shared/jwt.ts";
import { drain } from "../core/job-queue.ts";
import { appJobs } from "./registry.ts";

export const internal = router();

const jobs = appJobs();

internal.openAPIRegistry.registerComponent("securitySchemes", "serviceRole", {
  type: "http",
  scheme: "bearer",
  bearerFormat: "JWT",
  description: "The project's service_role key (never given to clients).",
});

/** 401 without one of our JWTs, 403 for one of another role. */
function serviceRoleOnly(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    const role = token ? await c.get("deps").tokens.roleOf(token) : null;
    if (role === null) throw unauthenticated("Send the service role key as a Bearer token.");
    if (role !== "service_role") throw forbidden("This needs the service role key.");
    await next();
  };
}

internal.use("*", serviceRoleOnly());

const drainBody = z.object({
  maxJobs: z.number().int().min(1).max(1000).optional().openapi({
    description: "Stop claiming after this many jobs (default 100)",
  }),
  maxMs: z.number().int().min(100).max(120_000).optional().openapi({
    description: "Stop claiming after this many milliseconds (default 20000); claimed jobs finish",
  }),
}).strict();

const drainResult = z.object({
  claimed: z.number().int(),
  done: z.number().int(),
  retried: z.number().int(),
  dead: z.number().int(),
  lost: z.number().int(),
}).openapi("DrainResult");

internal.openapi(
  createRoute({
    method: "post",
    path: "/jobs/drain",
    operationId: "drainJobs",
    summary: "Run due background jobs (service key only)",
    description: "Claims due jobs of every kind this deployment handles (`for update skip " +
      "locked`: concurrent calls share the work, never a job), runs them and records each " +
      "outcome: done, queued again with backoff, or dead-lettered. The body is optional.",
    security: [{ serviceRole: [] }],
    request: {
      body: { required: false, content: { "application/json": { schema: drainBody } } },
    },
    responses: {
      200: json(drainResult, "What this call did"),
      ...errors(400, 401, 403, 413, 415),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const result = await drain(c.get("deps"), {
      registry: jobs,
      maxJobs: body.maxJobs,
      maxMs: body.maxMs,
    });
    return c.json(result, 200);
  },
);
