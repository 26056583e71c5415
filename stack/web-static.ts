/**
 * The web client's static files (web/dist, built by web/build.ts) at `/` on the local stack.
 *
 * - `/assets/*` are content-hashed: cached for a year, immutable.
 * - A text file is sent compressed when the browser accepts it: the brotli (`.br`) or gzip (`.gz`)
 *   copy the build wrote beside it, with `Content-Encoding` and `Vary: Accept-Encoding` (on every
 *   answer for a compressible file, compressed or not, so a cache keeps one per encoding).
 * - Any other GET of a path without a file extension is a page of the app: index.html (the app
 *   routes in the browser), never cached, with a Content-Security-Policy that allows only the
 *   page's own origin (scripts, styles, the API, the Realtime socket on the same host) plus
 *   https images (a white-label logo).
 * - `/api`, `/functions/v1`, `/realtime/v1`, `/_dev` and `/health` are not this module's: the
 *   server hands them on before asking it.
 */
import { extname, join, normalize } from "node:path";
import { COMPRESSIBLE, WEB_DIST } from "../web/build.ts";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

const RESERVED = /^\/(api|functions|realtime|_dev)(\/|$)|^\/health$/;

export interface PagePolicyOptions {
  /**
   * The API takes payments through Stripe: the checkout's Payment Element loads Stripe.js from
   * js.stripe.com, which frames pages of js.stripe.com and hooks.stripe.com (3-D Secure) and
   * calls api.stripe.com (Stripe's documented policy for Stripe.js).
   */
  stripe?: boolean;
}

/** The page's policy: its own origin, the Realtime socket of the same host, https images. */
export function pagePolicy(url: URL, opts: PagePolicyOptions = {}): string {
  const ws = `${url.protocol === "https:" ? "wss:" : "ws:"}//${url.host}`;
  const stripe = opts.stripe;
  return [
    "default-src 'self'",
    `script-src 'self'${stripe ? " https://js.stripe.com" : ""}`,
    "style-src 'self'",
    "img-src 'self' data: blob: https:",
    `connect-src 'self' ${ws}${stripe ? " https://api.stripe.com" : ""}`,
    ...(stripe ? ["frame-src https://js.stripe.com https://hooks.stripe.com"] : []),
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const PAGE_HEADERS = (url: URL, opts: PagePolicyOptions): Record<string, string> => ({
  "Content-Type": TYPES[".html"],
  "Cache-Control": "no-cache",
  "Content-Security-Policy": pagePolicy(url, opts),
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
  "X-Frame-Options": "DENY",
});

async function file(path: string): Promise<Deno.FsFile | null> {
  try {
    const info = await Deno.stat(path);
    return info.isFile ? await Deno.open(path) : null;
  } catch {
    return null;
  }
}

/** The encodings a request accepts (`Accept-Encoding`, those with q=0 left out). */
function accepted(request: Request): Set<string> {
  const out = new Set<string>();
  for (const part of (request.headers.get("accept-encoding") ?? "").split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (name && !(q && Number(q.slice(2)) === 0)) out.add(name);
  }
  return out;
}

/**
 * The file at `path`, or its brotli or gzip copy when the request accepts it and the build wrote
 * one: the open file, its size and the encoding (null: as it is). `vary` says whether the answer
 * depends on Accept-Encoding (a compressible type).
 */
async function variant(
  request: Request,
  path: string,
): Promise<{ found: Deno.FsFile; size: number; encoding: string | null; vary: boolean } | null> {
  const vary = COMPRESSIBLE.test(path);
  if (vary) {
    const accepts = accepted(request);
    for (const [encoding, suffix] of [["br", ".br"], ["gzip", ".gz"]]) {
      if (!accepts.has(encoding)) continue;
      const found = await file(path + suffix);
      if (found) return { found, size: (await found.stat()).size, encoding, vary };
    }
  }
  const found = await file(path);
  return found ? { found, size: (await found.stat()).size, encoding: null, vary } : null;
}

function encodingHeaders(
  v: { size: number; encoding: string | null; vary: boolean },
): Record<string, string> {
  return {
    "Content-Length": String(v.size),
    ...(v.encoding ? { "Content-Encoding": v.encoding } : {}),
    ...(v.vary ? { "Vary": "Accept-Encoding" } : {}),
  };
}

/**
 * The response for `request` if it is the web client's, else null. `dir` is the built client
 * (web/dist by default).
 */
export async function serveWebClient(
  request: Request,
  url: URL,
  dir = WEB_DIST,
  policy: PagePolicyOptions = {},
): Promise<Response | null> {
  if (request.method !== "GET" && request.method !== "HEAD") return null;
  if (RESERVED.test(url.pathname)) return null;
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return new Response("Bad path", { status: 400 });
  }
  const relative = normalize(path).replace(/^(\.\.(\/|$))+/, "");
  if (relative.split("/").includes("..") || path.includes("\0")) {
    return new Response("Bad path", { status: 400 });
  }
  const ext = extname(relative);
  const head = request.method === "HEAD";
  if (ext && relative !== "/index.html") {
    // The precompressed copies are the server's own: asked for by name, they are not files.
    if (/\.(br|gz)$/.test(relative)) return new Response("Not found", { status: 404 });
    const found = await variant(request, join(dir, relative));
    if (!found) return new Response("Not found", { status: 404 });
    const immutable = relative.startsWith("/assets/");
    if (head) found.found.close();
    return new Response(head ? null : found.found.readable, {
      headers: {
        "Content-Type": TYPES[ext] ?? "application/octet-stream",
        ...encodingHeaders(found),
        "Cache-Control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
        "X-Content-Type-Options": "nosniff",
      },
    });
  }
  const index = await variant(request, join(dir, "index.html"));
  if (!index) {
    return new Response(
      "The web client is not built. `npm start` builds it (web/build.ts); by hand: " +
        "deno run -A web/build.ts\n",
      { status: 503, headers: { "Content-Type": "text/plain; charset=utf-8" } },
    );
  }
  if (head) index.found.close();
  return new Response(head ? null : index.found.readable, {
    headers: { ...PAGE_HEADERS(url, policy), ...encodingHeaders(index) },
  });
}
