/**
 * The web client's files as the local stack serves them (stack/web-static.ts) over real HTTP
 * (Deno.serve on a free loopback port): precompressed brotli or gzip by Accept-Encoding, with
 * `Vary: Accept-Encoding`, long-cached hashed assets and a `no-cache` index.html; the decoded body
 * is byte for byte the built file. Also the first page's size (web/build.ts) against the 200 KB
 * gzipped of issue 27.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { test } from "../support/helpers.ts";
import { freePort } from "../../stack/postgres.ts";
import { serveWebClient } from "../../stack/web-static.ts";
import { buildWeb } from "../../web/build.ts";

const build = await buildWeb();
const port = freePort();
const server = Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => {} },
  async (request) =>
    await serveWebClient(request, new URL(request.url), build.dir) ??
      new Response("not the client's", { status: 404 }),
);

async function get(path: string, acceptEncoding: string): Promise<Response> {
  // Deno's fetch would add its own Accept-Encoding and decode the body: a raw request keeps both
  // as the browser sees them on the wire.
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head =
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept-Encoding: ${acceptEncoding}\r\n` +
    "Connection: close\r\n\r\n";
  await conn.write(new TextEncoder().encode(head));
  const raw = new Uint8Array(await new Response(conn.readable).arrayBuffer());
  const split = raw.findIndex((_, i) =>
    raw[i] === 13 && raw[i + 1] === 10 && raw[i + 2] === 13 && raw[i + 3] === 10
  );
  const lines = new TextDecoder().decode(raw.subarray(0, split)).split("\r\n");
  const status = Number(lines[0].split(" ")[1]);
  const headers = new Headers(
    lines.slice(1).map((l): [string, string] => [
      l.slice(0, l.indexOf(":")),
      l.slice(l.indexOf(":") + 1).trim(),
    ]),
  );
  let body: Uint8Array<ArrayBuffer> = raw.slice(split + 4);
  if (headers.get("transfer-encoding") === "chunked") body = dechunk(body);
  return new Response(status === 304 ? null : body, { status, headers });
}

function dechunk(body: Uint8Array): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf(13, at);
    const size = parseInt(new TextDecoder().decode(body.subarray(at, eol)), 16);
    if (!size) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

const entry = build.initial.files.find((f) => /^assets\/app-.*\.js$/.test(f))!;
const css = build.initial.files.find((f) => f.endsWith(".css"))!;

test("[web] scripts and styles are sent precompressed (brotli, else gzip) with Vary: Accept-Encoding, long-cached, and decode to the built file", async () => {
  for (const path of [entry, css]) {
    const original = await Deno.readFile(join(build.dir, path));
    const cases: [string, string | null, (b: Uint8Array) => Uint8Array][] = [
      ["gzip, deflate, br, zstd", "br", (b) => brotliDecompressSync(b)],
      ["gzip", "gzip", (b) => gunzipSync(b)],
      ["br;q=0, gzip;q=0.8", "gzip", (b) => gunzipSync(b)],
      ["identity", null, (b) => b],
    ];
    for (const [accept, encoding, decode] of cases) {
      const response = await get(`/${path}`, accept);
      assert.equal(response.status, 200, `${path} with ${accept}`);
      assert.equal(response.headers.get("content-encoding"), encoding, `${path} with ${accept}`);
      assert.match(response.headers.get("vary") ?? "", /Accept-Encoding/i);
      assert.equal(response.headers.get("cache-control"), "public, max-age=31536000, immutable");
      const body = new Uint8Array(await response.arrayBuffer());
      if (encoding) assert.ok(body.byteLength < original.byteLength * 0.6, `${path} compressed`);
      assert.deepEqual(new Uint8Array(decode(body)), original, `${path} with ${accept} decodes`);
    }
  }
});

test("[web] index.html (every page path) is compressed too, never cached, with its policy", async () => {
  const original = await Deno.readFile(join(build.dir, "index.html"));
  for (const path of ["/", "/signin", "/notifications"]) {
    const response = await get(path, "gzip, br");
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("cache-control"), "no-cache");
    assert.equal(response.headers.get("content-encoding"), "br");
    assert.match(response.headers.get("vary") ?? "", /Accept-Encoding/i);
    assert.ok(response.headers.get("content-security-policy"));
    const body = brotliDecompressSync(new Uint8Array(await response.arrayBuffer()));
    assert.deepEqual(new Uint8Array(body), original);
  }
  // The copies are not files of their own.
  assert.equal((await get(`/${entry}.gz`, "gzip")).status, 404);
});

test("[web] the first page (index.html, the entry, its static chunks, the CSS) stays under 200 KB gzipped", () => {
  const kb = build.initial.gzipBytes / 1024;
  assert.ok(kb < 200, `first page ${kb.toFixed(1)} KB gzipped`);
  // The transport (supabase-js) is a chunk loaded on demand, not the sign-in page's.
  assert.ok(kb < 80, `first page ${kb.toFixed(1)} KB gzipped: did the transport come back?`);
});

test("[web] teardown: this file's server stops", async () => {
  await server.shutdown();
});
