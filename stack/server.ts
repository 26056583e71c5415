/**
 * The local stack's HTTP server on one port (54321 by default), laid out like hosted Supabase:
 * `/api/*` and `/functions/v1/api/*` (the `api` function), `/realtime/v1/*` (the Realtime
 * gateway: WebSocket and HTTP broadcast), `/health`, in local mode `/_dev/mail` (the mail the
 * stack would have sent) and `/_dev/payments`, `/_dev/accounts` (the dev payment provider's
 * customer and vendor, dev-payments.ts), and the web client (web/dist, built by web/build.ts) at
 * `/` and every other page path (stack/web-static.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Deps } from "../functions/api/core/context.ts";
import { createApp } from "../functions/api/app.ts";
import { guardDriverFaults } from "../functions/_shared/db.ts";
import type { JobRegistry } from "../functions/api/core/job-queue.ts";
import { appJobs } from "../functions/api/jobs/registry.ts";
import { type JobWorker, startJobWorker } from "../functions/api/jobs/worker.ts";
import { type ChainFollower, startChainFollower } from "../functions/api/wallet/follower.ts";
import { createGateway, type Gateway } from "./realtime/gateway.ts";
import { type GatewayLimits, gatewayLimits } from "./realtime/settings.ts";
import { devPayments } from "./dev-payments.ts";
import { serveWebClient } from "./web-static.ts";

export interface StackServer {
  port: number;
  app: OpenAPIHono<AppEnv>;
  /** The Realtime gateway on /realtime/v1. */
  gateway: Gateway;
  /** The drain of the job queue (null with `jobs: false`). */
  jobs: JobWorker | null;
  /** The wallet's chain follower (null without AGORA_RPC_URL or with `follower: false`). */
  follower: ChainFollower | null;
  shutdown(): Promise<void>;
}

export interface StackServerOptions {
  port: number;
  hostname?: string;
  /** Extra routes (e.g. the benchmark's `select 1` ceiling), tried before the app. */
  extra?: (request: Request) => Promise<Response | null> | Response | null;
  /** Gateway limits; by default from the environment. */
  realtimeLimits?: GatewayLimits;
  /** Let several processes serve the same port (SO_REUSEPORT). */
  reusePort?: boolean;
  /** The job kinds this server drains (default: the app's); false: no drain. */
  jobs?: JobRegistry | false;
  /** The built web client; default web/dist. */
  webDir?: string;
  /** Follow the chain's new blocks for the wallet (default: when AGORA_RPC_URL is set). */
  follower?: boolean;
}

const FUNCTIONS_PREFIX = "/functions/v1";
/** How long a stopping server waits for responses still being written. */
const SHUTDOWN_GRACE_MS = 2_000;

/** `GET /_dev/mail?to=`: local mode only, newest first. */
async function devMail(deps: Deps, url: URL): Promise<Response> {
  const to = url.searchParams.get("to")?.trim().toLowerCase() || null;
  const rows = await deps.sql<
    { to_address: string; subject: string; text_body: string; links: string[]; created_at: Date }[]
  >`
    select to_address, subject, text_body, links, created_at from dev.mail
    where ${to}::text is null or lower(to_address) = ${to}
    order by created_at desc, id desc limit 100`;
  const items = rows.map((r) => ({
    to: r.to_address,
    subject: r.subject,
    text: r.text_body,
    links: r.links,
    createdAt: r.created_at.toISOString(),
  }));
  return Response.json({ items }, {
    headers: { "Cache-Control": "no-store", "X-Request-Id": crypto.randomUUID() },
  });
}

/**
 * Whether an absolute request URL's path is /api or under it, read without parsing the URL (the
 * raw path: a path that only normalizes to /api, like /x/../api, takes the long way and still
 * arrives).
 */
export function isApiPath(url: string): boolean {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0 || !url.startsWith("/api", start)) return false;
  const next = url.charCodeAt(start + 4);
  // "/", "?", "#" or the end; not /apis.
  return Number.isNaN(next) || next === 47 || next === 63 || next === 35;
}

export function startStackServer(deps: Deps, opts: StackServerOptions): StackServer {
  guardDriverFaults(deps.log);
  const app = createApp(deps);
  const gateway = createGateway({
    sql: deps.sql,
    listener: deps.listener,
    jwtSecret: deps.settings.jwtSecret,
    jwks: () => deps.tokens.jwks(),
    limits: opts.realtimeLimits ?? gatewayLimits(Deno.env.toObject()),
    log: deps.log,
  });
  const server = Deno.serve({
    port: opts.port,
    hostname: opts.hostname ?? "127.0.0.1",
    reusePort: opts.reusePort,
    onListen: () => {},
  }, async (request, info) => {
    if (opts.extra) {
      const response = await opts.extra(request);
      if (response) return response;
    }
    // The API first: most requests are its, and it needs nothing parsed here (Hono reads the
    // path itself).
    if (isApiPath(request.url)) return app.fetch(request, info);
    const url = new URL(request.url);
    const realtime = gateway.handle(request, info);
    if (realtime) return await realtime;
    if (url.pathname === "/_dev/mail" && deps.settings.localMode && request.method === "GET") {
      return devMail(deps, url);
    }
    if (deps.settings.localMode && url.pathname.startsWith("/_dev/")) {
      const response = await devPayments(deps, request);
      if (response) return response;
    }
    const page = await serveWebClient(request, url, opts.webDir, {
      stripe: deps.payments.name === "stripe",
    });
    if (page) return page;
    if (
      url.pathname.startsWith(`${FUNCTIONS_PREFIX}/api/`) ||
      url.pathname === `${FUNCTIONS_PREFIX}/api`
    ) {
      url.pathname = url.pathname.slice(FUNCTIONS_PREFIX.length);
      // Not `new Request(url, request)`: that reads request.signal, which makes Deno warn that
      // the signal aborts on successful responses (its legacy behaviour).
      const moved = new Request(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        redirect: request.redirect,
      });
      return app.fetch(moved, info);
    }
    return app.fetch(request, info);
  });
  // The job queue is drained here, woken by NOTIFY (hosted, pg_cron calls the drain route).
  const jobs = opts.jobs === false
    ? null
    : startJobWorker(deps, { registry: opts.jobs ?? appJobs() });
  // New blocks: incoming transfers, NFTs, reorganizations (hosted, a job once a minute does it).
  const follower = opts.follower !== false && deps.settings.rpcUrl
    ? startChainFollower(deps)
    : null;
  return {
    port: (server.addr as Deno.NetAddr).port,
    app,
    gateway,
    jobs,
    follower,
    async shutdown() {
      await follower?.stop();
      await jobs?.stop();
      await gateway.close();
      // SSE streams and long-polls end here; the server's shutdown waits for every response in
      // flight, so it would otherwise wait for streams that never finish.
      await deps.hub.close();
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        server.shutdown(),
        new Promise((resolve) => grace = setTimeout(resolve, SHUTDOWN_GRACE_MS)),
      ]);
      clearTimeout(grace);
    },
  };
}
