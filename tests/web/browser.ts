/**
 * What the browser tests share: a real stack server on a free port against the test database
 * (the built web client at `/`), Debian's Chromium driven by playwright-core, sign-in through the
 * real pages (the magic link from the dev mailbox), axe-core scans and screenshots.
 *
 * Waits are for conditions (a selector, a state the page exposes), never fixed sleeps: the tests
 * run on a loaded two-core machine.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type CDPSession,
  chromium,
  type Page,
} from "playwright-core";
import { expectJson, testEnv } from "../support/helpers.ts";
import { closeDeps, createDeps } from "../../functions/api/deps.ts";
import { createTokenIssuer } from "../../functions/_shared/jwt.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";
import { type StackServer, startStackServer } from "../../stack/server.ts";
import { freePort } from "../../stack/postgres.ts";
import { ROOT } from "../../stack/database.ts";
import { buildWeb } from "../../web/build.ts";

export const CHROMIUM = Deno.env.get("AGORA_CHROMIUM") ?? "/usr/bin/chromium";
export const SCREENSHOTS = join(ROOT, "test-results", "screenshots");
/** The flags environment.md names for Chromium on this machine. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-dev-shm-usage",
];

export interface WebStack {
  base: string;
  /** The running server's dependencies (new ones after `startServer`). */
  deps: Deps;
  server: StackServer;
  browser: Browser;
  /** Stops the server as its process ending would: its sockets, pool and listener close. */
  stopServer(): Promise<void>;
  /** Starts a new server in its place (new pool, listener and gateway, the same address). */
  startServer(): Promise<void>;
  close(): Promise<void>;
}

/** Builds the client if needed, starts a stack server and a browser. */
export async function startWebStack(env: Record<string, string> = {}): Promise<WebStack> {
  await buildWeb();
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const env0 = testEnv({ AGORA_SITE_URL: base, AGORA_DB_POOL_SIZE: "8", ...env });
  // The anon key, derived from the secret as npm start does: supabase-js connects with it.
  const anonKey = await createTokenIssuer(env0.AGORA_JWT_SECRET, 60, "").apiKey("anon");
  const start = async () => {
    const deps = createDeps(loadSettings({ ...env0, AGORA_ANON_KEY: anonKey }));
    const server = startStackServer(deps, { port, hostname: "127.0.0.1" });
    await server.gateway.ready;
    return { deps, server };
  };
  const first = await start();
  let running = true;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  await Deno.mkdir(SCREENSHOTS, { recursive: true });
  // Under Deno, Playwright does not end its browser when the process exits, and a test file may
  // end early (a filter, a failure). So, as a backstop for close(): when this test file unloads,
  // the browser's process group (Playwright starts it detached) is killed.
  const cdp = await browser.newBrowserCDPSession();
  const info = await cdp.send("SystemInfo.getProcessInfo") as {
    processInfo: { type: string; id: number }[];
  };
  const browserPid = info.processInfo.find((p) => p.type === "browser")?.id;
  await cdp.detach();
  if (browserPid) {
    globalThis.addEventListener("unload", () => {
      try {
        Deno.kill(-browserPid, "SIGKILL");
      } catch {
        // already gone: close() ran
      }
    });
  }
  const stack: WebStack = {
    base,
    deps: first.deps,
    server: first.server,
    browser,
    async stopServer() {
      if (!running) return;
      running = false;
      await stack.server.shutdown().catch(() => {});
      await closeDeps(stack.deps).catch(() => {});
    },
    async startServer() {
      if (running) return;
      Object.assign(stack, await start());
      running = true;
    },
    async close() {
      await browser.close().catch(() => {});
      await stack.stopServer();
    },
  };
  return stack;
}

export interface Person {
  id: string;
  email: string;
  name: string;
}

/** A user made directly in the database (a trusted path), with a readable name. */
export async function createPerson(
  stack: WebStack,
  name: string,
  role: "SUBSCRIBER" | "MEMBER" | "CONFIDENTIAL" | "ADMIN" = "MEMBER",
): Promise<Person> {
  const email = `${name.toLowerCase().replace(/\W+/g, ".")}.${
    crypto.randomUUID().slice(0, 6)
  }@web.example`;
  const [row] = await stack.deps.sql<{ id: string }[]>`
    insert into app.users (email, name, role) values (${email}, ${name}, ${role}) returning id`;
  return { id: row.id, email, name };
}

/** A bearer session for arranging data through the API (the real magic-link flow, over HTTP). */
export async function bearer(stack: WebStack, person: Person): Promise<string> {
  const sent = await fetch(`${stack.base}/api/auth/signin`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ provider: "email", email: person.email }),
  });
  assert.equal(sent.status, 202, await sent.text());
  const token = await magicToken(stack, person.email);
  const verified = await fetch(`${stack.base}/api/auth/verify`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token }),
  });
  return (await expectJson<{ accessToken: string }>(verified, 200)).accessToken;
}

async function magicToken(stack: WebStack, email: string): Promise<string> {
  const response = await fetch(`${stack.base}/_dev/mail?to=${encodeURIComponent(email)}`);
  const { items } = await response.json();
  return new URL(items[0].links[0]).searchParams.get("token")!;
}

/** An API call with a bearer token; the JSON answer, its status asserted. */
export async function apiCall<T>(
  stack: WebStack,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  status = method === "POST" ? 201 : 200,
): Promise<T> {
  const response = await fetch(`${stack.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, status, `${method} ${path}: ${text}`);
  return JSON.parse(text);
}

export interface Session {
  context: BrowserContext;
  page: Page;
  /** Errors the page raised: uncaught exceptions and console errors (CSP refusals among them). */
  errors: string[];
}

/**
 * Console noise that is expected: the browser reporting a 404 the pages ask for on purpose (a
 * signed-in user without a shop yet: GET /api/store/vendors/me; without a wallet: GET
 * /api/wallet) or that an older server answers (the sign-in providers, the people directory).
 */
function expectedConsole(text: string, url: string): boolean {
  return /Failed to load resource: the server responded with a status of 404/.test(text) &&
    /\/api\/(auth\/providers|users|wallet)(\?|$)/.test(url);
}

/** A fresh browser context (its own cookies and storage) with a page that records errors. */
export async function openContext(
  stack: WebStack,
  options: BrowserContextOptions = {},
): Promise<Session> {
  const context = await stack.browser.newContext({
    viewport: { width: 1280, height: 800 },
    ...options,
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() !== "error") return;
    const text = msg.text();
    const url = msg.location()?.url ?? "";
    if (!expectedConsole(text, url)) errors.push(`console: ${text} (${url})`);
  });
  return { context, page, errors };
}

/**
 * Signs in through the pages: the sign-in form, then the magic link the page shows from the dev
 * mailbox (local mode). Lands on `next` (default /chat).
 */
export async function signInThroughPages(
  stack: WebStack,
  session: Session,
  person: Person,
  next = "/chat",
): Promise<void> {
  const { page } = session;
  await page.goto(`${stack.base}/signin?next=${encodeURIComponent(next)}`);
  await page.getByLabel("E-mail address").fill(person.email);
  await page.getByRole("button", { name: "Send me a sign-in link" }).click();
  const link = page.getByTestId("dev-magic-link");
  await link.waitFor();
  await link.click();
  await page.waitForURL((url) => url.pathname === next.split("?")[0]);
  await page.getByTestId("who").getByText(person.name).waitFor();
}

const links = new WeakMap<Page, CDPSession>();

/**
 * The page's link gets `latencyMs` of delay each way from now on (Chromium's network emulation;
 * 0 ends it), as on a slow mobile connection: requests and answers arrive late, WebSockets too.
 */
export async function slowLink(page: Page, latencyMs: number): Promise<void> {
  // One session per page: conditions set through another session would not undo these.
  let cdp = links.get(page);
  if (!cdp) links.set(page, cdp = await page.context().newCDPSession(page));
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: latencyMs,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
}

/**
 * The answers to the page's requests whose URL matches `url` (and whose method is `method`, if
 * given) reach it `delayMs` after the server sent them, while its live feed stays prompt: as on a
 * slow link, where someone else's reaction to what the page just sent arrives before the page's
 * own answer does.
 */
export async function lateAnswers(
  page: Page,
  url: RegExp,
  delayMs: number,
  method?: string,
): Promise<void> {
  await page.route(url, async (route) => {
    if (method && route.request().method() !== method) return route.fallback();
    try {
      const response = await route.fetch({ maxRedirects: 0 });
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await route.fulfill({ response });
    } catch {
      // The page closed while the answer waited.
    }
  });
}

/**
 * The first answer to the page's `method` request matching `url` is lost on the way: the request
 * reaches the server, which does its work, and the connection then drops (the page sees no
 * answer). Later requests go through.
 */
export async function dropFirstAnswer(page: Page, url: RegExp, method = "POST"): Promise<void> {
  let dropped = false;
  await page.route(url, async (route) => {
    if (route.request().method() !== method || dropped) return route.fallback();
    dropped = true;
    await route.fetch();
    await route.abort("connectionreset");
  });
}

/**
 * For `context.addInitScript(lateFrames, ms)`: in the page, before its own scripts, every
 * animation frame comes `delayMs` late, as on a busy phone or a loaded machine. A page that
 * leaves work to the next frame shows the gap meanwhile.
 */
export function lateFrames(delayMs: number) {
  const frame = globalThis.requestAnimationFrame.bind(globalThis);
  const cancel = globalThis.cancelAnimationFrame.bind(globalThis);
  const pending = new Map<number, { timer: ReturnType<typeof setTimeout>; frame?: number }>();
  let last = 0;
  globalThis.requestAnimationFrame = (callback) => {
    const id = ++last;
    const timer = setTimeout(() => {
      const entry = pending.get(id);
      if (entry) entry.frame = frame((t) => (pending.delete(id), callback(t)));
    }, delayMs);
    pending.set(id, { timer });
    return id;
  };
  globalThis.cancelAnimationFrame = (id) => {
    const entry = pending.get(id);
    pending.delete(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    if (entry.frame !== undefined) cancel(entry.frame);
  };
}

/** Waits until the page's live indicator reports `kind` (websocket, sse or poll). */
export async function liveOver(page: Page, kind: string, timeout = 30_000): Promise<void> {
  await page.locator(`[data-testid="live-status"][data-transport="${kind}"]`).waitFor({ timeout });
}

const AXE = await Deno.readTextFile(join(ROOT, "node_modules", "axe-core", "axe.min.js"));

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[]; failureSummary: string }[];
}

/** axe-core on the page as it is now; the serious and critical violations. */
export async function axeScan(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not apply to.
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, {
      resultTypes: ["violations"],
      runOnly: {
        type: "tag",
        values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
      },
    });
    return result.violations;
  }) as AxeViolation[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** Fails with a readable list when the page has serious or critical violations. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  const violations = await axeScan(page);
  assert.deepEqual(
    violations.map((v) =>
      `${v.impact} ${v.id}: ${v.help} @ ${
        v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")
      }`
    ),
    [],
    `axe on ${what}`,
  );
}

export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

/** A small PNG (a coloured square), made without any image library. */
export function pngSquare(size = 48, rgb: [number, number, number] = [31, 111, 235]): Uint8Array {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Uint8Array) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Uint8Array) => {
    const out = new Uint8Array(12 + data.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, data.length);
    out.set(new TextEncoder().encode(type), 4);
    out.set(data, 8);
    view.setUint32(8 + data.length, crc(out.subarray(4, 8 + data.length)));
    return out;
  };
  const header = new Uint8Array(13);
  const hv = new DataView(header.buffer);
  hv.setUint32(0, size);
  hv.setUint32(4, size);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  // Stored (uncompressed) deflate blocks of the raw scanlines.
  const raw = new Uint8Array(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    raw[y * (1 + size * 3)] = 0;
    for (let x = 0; x < size; x++) raw.set(rgb, y * (1 + size * 3) + 1 + x * 3);
  }
  const blocks: number[] = [0x78, 0x01];
  for (let i = 0; i < raw.length; i += 65535) {
    const part = raw.subarray(i, i + 65535);
    const last = i + 65535 >= raw.length ? 1 : 0;
    blocks.push(
      last,
      part.length & 0xff,
      part.length >> 8,
      ~part.length & 0xff,
      (~part.length >> 8) & 0xff,
    );
    blocks.push(...part);
  }
  let a = 1, b = 0;
  for (const v of raw) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  blocks.push(b >> 8, b & 0xff, a >> 8, a & 0xff);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", new Uint8Array(blocks)),
    chunk("IEND", new Uint8Array()),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    png.set(p, offset);
    offset += p.length;
  }
  return png;
}
