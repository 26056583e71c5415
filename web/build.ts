/**
 * Builds the web client (web/app) into static files in web/dist with esbuild: one entry
 * (`assets/app-<hash>.js` and its CSS), code-split chunks for the pages loaded on demand (the
 * admin area), and `index.html` naming them. Nothing is rebuilt when no input changed: the inputs
 * (web/app, web/realtime, this file, package-lock.json) are hashed and compared with the hash
 * written by the last build, so `npm start` and the tests pay a few milliseconds when nothing changed.
 * Every text file of 512 bytes or more also gets a gzip (`.gz`) and a brotli (`.br`) copy beside
 * it, which the server sends to browsers that accept them (stack/web-static.ts).
 *
 * `deno run -A web/build.ts [--force]` builds by hand. `AGORA_WEB_API_ORIGIN` (build time) names
 * the origin of the API when the files are served from elsewhere (docs/web.md, Deploying);
 * `AGORA_WEB_STRIPE_PUBLISHABLE_KEY` is Stripe's publishable key for the Payment Element (public by
 * design; only needed when the API has Stripe keys: docs/web.md, Payments).
 */
import * as esbuild from "esbuild";
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const WEB_DIST = join(ROOT, "web", "dist");
const APP = join(ROOT, "web", "app");
const INPUTS = [APP, join(ROOT, "web", "realtime"), fileURLToPath(import.meta.url)];
const MANIFEST = "build.json";

/** Text files worth compressing; the server sends the `.br` or `.gz` beside them (web-static.ts). */
export const COMPRESSIBLE = /\.(js|css|html|map|json|svg|txt)$/;
/** Smaller files are sent as they are: a compressed copy would save less than its headers. */
const COMPRESS_FROM = 512;

export interface BuiltFile {
  path: string;
  bytes: number;
  gzipBytes: number;
}

export interface WebBuild {
  dir: string;
  hash: string;
  /** True when the previous build was still current. */
  skipped: boolean;
  /** Every file under dist (paths relative to it). */
  files: BuiltFile[];
  /** What the first page loads before it runs: the entry script, its static imports, its CSS. */
  initial: { files: string[]; bytes: number; gzipBytes: number };
  /**
   * What each chunk loaded on demand (an `import()`: a domain's pages, the wallet sign-in) adds
   * to what the first page already has, keyed by its source file's name (`StorePage`, `siwe`).
   */
  onDemand?: Record<string, { files: string[]; bytes: number; gzipBytes: number }>;
}

async function* walk(path: string): AsyncGenerator<string> {
  const info = await Deno.stat(path);
  if (info.isFile) {
    yield path;
    return;
  }
  const entries = [];
  for await (const entry of Deno.readDir(path)) entries.push(entry.name);
  for (const name of entries.sort()) yield* walk(join(path, name));
}

async function inputHash(apiOrigin: string, stripeKey: string): Promise<string> {
  const parts: Uint8Array[] = [new TextEncoder().encode(`api:${apiOrigin}\nstripe:${stripeKey}\n`)];
  for (const input of [...INPUTS, join(ROOT, "package-lock.json")]) {
    for await (const file of walk(input)) {
      parts.push(new TextEncoder().encode(`${relative(ROOT, file)}\n`));
      parts.push(await Deno.readFile(file));
    }
  }
  const total = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    total.set(part, offset);
    offset += part.byteLength;
  }
  const digest = await crypto.subtle.digest("SHA-256", total);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function readManifest(dir: string): Promise<WebBuild | null> {
  try {
    return JSON.parse(await Deno.readTextFile(join(dir, MANIFEST)));
  } catch {
    return null;
  }
}

let running: Promise<unknown> = Promise.resolve();

/** Builds web/dist unless it is current; `force` builds anyway. One build at a time. */
export function buildWeb(
  opts: BuildOptions = {},
): Promise<WebBuild> {
  const next = running.catch(() => {}).then(() => build(opts));
  running = next;
  return next;
}

export interface BuildOptions {
  force?: boolean;
  outDir?: string;
  apiOrigin?: string;
  stripePublishableKey?: string;
}

async function build(opts: BuildOptions): Promise<WebBuild> {
  const dir = opts.outDir ?? WEB_DIST;
  const apiOrigin = opts.apiOrigin ?? Deno.env.get("AGORA_WEB_API_ORIGIN") ?? "";
  const stripeKey = opts.stripePublishableKey ??
    Deno.env.get("AGORA_WEB_STRIPE_PUBLISHABLE_KEY") ?? "";
  if (stripeKey && !/^pk_(test|live)_[A-Za-z0-9]+$/.test(stripeKey)) {
    throw new Error(
      "AGORA_WEB_STRIPE_PUBLISHABLE_KEY is not a publishable key (pk_test_… or pk_live_…)",
    );
  }
  const hash = await inputHash(apiOrigin, stripeKey);
  const previous = await readManifest(dir);
  if (!opts.force && previous?.hash === hash) return { ...previous, skipped: true };

  // Built next to the target and swapped in, so a running server never serves half a build.
  const staging = `${dir}.staging-${crypto.randomUUID().slice(0, 8)}`;
  try {
    const result = await esbuild.build({
      entryPoints: { app: join(APP, "main.tsx") },
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "browser",
      target: ["chrome111", "firefox115", "safari16.4"],
      outdir: staging,
      entryNames: "assets/[name]-[hash]",
      chunkNames: "assets/[name]-[hash]",
      assetNames: "assets/[name]-[hash]",
      minify: true,
      sourcemap: "linked",
      jsx: "automatic",
      jsxImportSource: "preact",
      metafile: true,
      legalComments: "linked",
      logLevel: "silent",
      define: { "process.env.NODE_ENV": '"production"' },
    });
    const outputs = result.metafile!.outputs;
    // With splitting, every `import()` target is an entry point too: the app's is main.tsx.
    const entry = Object.keys(outputs).find((p) =>
      outputs[p].entryPoint?.endsWith("web/app/main.tsx") && p.endsWith(".js")
    )!;
    const initial = new Set<string>();
    const visit = (path: string) => {
      if (initial.has(path)) return;
      initial.add(path);
      for (const dep of outputs[path].imports) {
        if (dep.kind === "import-statement" && outputs[dep.path]) visit(dep.path);
      }
    };
    visit(entry);
    const css = outputs[entry].cssBundle;
    if (css) initial.add(css);
    const url = (path: string) => `/${relative(staging, join(ROOT, path))}`;
    const scripts = [...initial].filter((p) => p.endsWith(".js"));
    const tags = [
      `<meta name="agora-api-origin" content="${apiOrigin.replace(/"/g, "&quot;")}">`,
      ...(stripeKey ? [`<meta name="agora-stripe-key" content="${stripeKey}">`] : []),
      ...(css ? [`<link rel="stylesheet" href="${url(css)}">`] : []),
      ...scripts.filter((p) => p !== entry).map((p) =>
        `<link rel="modulepreload" href="${url(p)}">`
      ),
      `<script type="module" src="${url(entry)}"></script>`,
    ];
    const template = await Deno.readTextFile(join(APP, "index.html"));
    if (!template.includes("<!-- assets -->")) throw new Error("index.html lacks <!-- assets -->");
    await Deno.writeTextFile(
      join(staging, "index.html"),
      template.replace("<!-- assets -->", tags.join("\n    ")),
    );
    initial.add(relative(ROOT, join(staging, "index.html")));

    const files: BuiltFile[] = [];
    for await (const file of walk(staging)) {
      const bytes = await Deno.readFile(file);
      const gzip = gzipSync(bytes, { level: 9 });
      files.push({
        path: relative(staging, file),
        bytes: bytes.byteLength,
        gzipBytes: gzip.byteLength,
      });
      // Precompressed once here, so the server never compresses on a request.
      if (COMPRESSIBLE.test(file) && bytes.byteLength >= COMPRESS_FROM) {
        await Deno.writeFile(`${file}.gz`, gzip);
        await Deno.writeFile(
          `${file}.br`,
          brotliCompressSync(bytes, {
            params: {
              [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
              [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
            },
          }),
        );
      }
    }
    const initialFiles = [...initial].map((p) => relative(staging, join(ROOT, p)));
    const picked = files.filter((f) => initialFiles.includes(f.path));
    const sizes = new Map(files.map((f) => [f.path, f]));
    const onDemand: WebBuild["onDemand"] = {};
    for (const [path, output] of Object.entries(outputs)) {
      if (path === entry || !output.entryPoint || !path.endsWith(".js")) continue;
      // Modules a library loads only on a path the app never takes (viem's) are left out.
      if (!output.entryPoint.startsWith("web/")) continue;
      const own = new Set<string>();
      const add = (p: string) => {
        if (own.has(p) || initial.has(p)) return;
        own.add(p);
        for (const dep of outputs[p].imports) {
          if (dep.kind === "import-statement" && outputs[dep.path]) add(dep.path);
        }
      };
      add(path);
      const list = [...own].map((p) => relative(staging, join(ROOT, p)));
      const name = output.entryPoint.split("/").pop()!.replace(/\.[jt]sx?$/, "");
      onDemand[name] = {
        files: list,
        bytes: list.reduce((n, f) => n + (sizes.get(f)?.bytes ?? 0), 0),
        gzipBytes: list.reduce((n, f) => n + (sizes.get(f)?.gzipBytes ?? 0), 0),
      };
    }
    const built: WebBuild = {
      dir,
      hash,
      skipped: false,
      files,
      initial: {
        files: initialFiles,
        bytes: picked.reduce((n, f) => n + f.bytes, 0),
        gzipBytes: picked.reduce((n, f) => n + f.gzipBytes, 0),
      },
      onDemand,
    };
    await Deno.writeTextFile(join(staging, MANIFEST), JSON.stringify(built, null, 2) + "\n");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    try {
      await Deno.rename(staging, dir);
    } catch (err) {
      // Another process finished the same build first: theirs is as good as ours.
      if ((await readManifest(dir))?.hash !== hash) throw err;
      await Deno.remove(staging, { recursive: true }).catch(() => {});
    }
    return built;
  } catch (err) {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
    throw err;
  } finally {
    // esbuild keeps a service process; stopping it lets the caller's process exit.
    await esbuild.stop();
  }
}

/** One line for logs: sizes of the first page. */
export function describeBuild(build: WebBuild): string {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  return `${build.skipped ? "web client current" : "built the web client"} in ${
    relative(ROOT, build.dir)
  }/: first page ${kb(build.initial.gzipBytes)} gzipped (${kb(build.initial.bytes)})`;
}

if (import.meta.main) {
  const build = await buildWeb({ force: Deno.args.includes("--force") });
  console.log(describeBuild(build));
}
