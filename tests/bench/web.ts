/**
 * `npm run bench -- web [--rounds 50] [--loads 20] [--warmup 5]`: the web client in Chromium, on
 * loopback.
 *
 * - Bundle: what the first page loads before it runs (index.html, the entry script and the
 *   chunks it imports statically, the CSS), gzipped, as web/build.ts measures it. Target < 200 KB.
 *   Also what each page loaded on demand adds (the store, the vendor area, the wallet, the
 *   account, the admin area, wallet sign-in), beyond what the first page has.
 * - Time to an interactive chat: from the navigation's start (the page's own clock,
 *   performance.now() from timeOrigin) to the conversation's messages shown and its composer
 *   ready, for a signed-in user opening /chat/<id>: cold (a new browser context: nothing cached,
 *   the session cookies copied in) and warm (a reload, the hashed assets cached). Also the time
 *   until the conversation's live feed is up. Target < 1 s.
 * - Message round trip between two browsers: A's page sends "ping N" (its composer, Enter); B's
 *   page answers "pong N" the moment it sees it (a script in B's page, so no test driver sits in
 *   the loop); A's page times the pong. Also the one-way time, A's Enter to "ping N" on B's
 *   screen (both pages run on this machine's clock). Target p95 < 300 ms for the round trip.
 *
 * The stack server runs in this process (startBenchServer, as the other benchmarks); Chromium's
 * processes are the clients. The driver only starts the rounds and reads the pages' timings.
 * Figures are a measurement, not a gate: a missed target exits 0, a broken run 1.
 */
import { chromium, type Page } from "playwright-core";
import { freePort } from "../../stack/postgres.ts";
import { buildWeb } from "../../web/build.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "../web/browser.ts";
import { finish, parseOptions, say, withStack } from "./scaffold.ts";
import { signInByMagicLink, summarize, type Summary } from "./stats.ts";

const TARGET_BUNDLE_KB = 200;
const TARGET_INTERACTIVE_MS = 1_000;
const TARGET_ROUND_TRIP_P95_MS = 300;

const options = (args: string[]) =>
  parseOptions(args, import.meta.url, (a) => ({
    rounds: a.whole("--rounds", 50),
    loads: a.whole("--loads", 20),
    warmup: a.whole("--warmup", 5, 0),
  }));

const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
const line = (s: Summary | null) =>
  s ? `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, max ${ms(s.max)} (n=${s.count})` : "no sample";

/** Waits in the page until the chat is usable; the page's time since navigation start. */
async function interactiveAt(page: Page): Promise<{ interactive: number; live: number }> {
  return await page.evaluate(() =>
    new Promise<{ interactive: number; live: number }>((resolve) => {
      let interactive = 0;
      const check = () => {
        const ready = document.querySelector(".msg") &&
          document.querySelector<HTMLTextAreaElement>(".composer textarea");
        if (ready && !interactive) interactive = performance.now();
        const live = document.querySelector('[data-testid="live-status"]')
          ?.getAttribute("data-transport") === "websocket";
        if (interactive && live) {
          observer.disconnect();
          resolve({ interactive, live: performance.now() });
        }
      };
      const observer = new MutationObserver(check);
      observer.observe(document, { childList: true, subtree: true, attributes: true });
      check();
    })
  );
}

/** In B's page: answer every "ping N" with "pong N", and note when each ping showed. */
const ANSWER = `(() => {
  const seen = (globalThis.__pings = {});
  const box = () => document.querySelector(".composer textarea");
  const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set;
  const queue = [];
  let busy = false;
  async function reply(text) {
    queue.push(text);
    if (busy) return;
    busy = true;
    while (queue.length) {
      const t = queue.shift();
      setValue.call(box(), t);
      box().dispatchEvent(new Event("input", { bubbles: true }));
      // Let Preact render the new value before Enter reads it.
      await new Promise((r) => setTimeout(r, 0));
      box().dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
      // Wait for the composer to empty (the send answered) before the next one.
      while (box().value) await new Promise((r) => setTimeout(r, 1));
    }
    busy = false;
  }
  new MutationObserver(() => {
    for (const el of document.querySelectorAll(".msg:not(.mine) .content")) {
      const m = /^ping (\\d+)$/.exec(el.textContent);
      if (m && !seen[m[1]]) {
        seen[m[1]] = Date.now();
        void reply("pong " + m[1]);
      }
    }
  }).observe(document.body, { childList: true, subtree: true });
})()`;

/** In A's page: send "ping n", resolve with the send time and the time "pong n" showed. */
async function ping(page: Page, n: number): Promise<{ sentAt: number; pongAt: number }> {
  return await page.evaluate((n) =>
    new Promise<{ sentAt: number; pongAt: number }>((resolve) => {
      const box = document.querySelector<HTMLTextAreaElement>(".composer textarea")!;
      const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value")!
        .set!;
      setValue.call(box, `ping ${n}`);
      box.dispatchEvent(new Event("input", { bubbles: true }));
      setTimeout(() => {
        const observer = new MutationObserver(() => {
          for (const el of document.querySelectorAll(".msg:not(.mine) .content")) {
            if (el.textContent === `pong ${n}`) {
              observer.disconnect();
              resolve({ sentAt, pongAt: Date.now() });
              return;
            }
          }
        });
        observer.observe(document.body, { childList: true, subtree: true });
        const sentAt = Date.now();
        box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
      }, 0);
    }), n);
}

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  say("building the web client");
  const build = await buildWeb();
  const problems: string[] = [];
  await withStack(async (stack) => {
    const port = freePort();
    const bench = await stack.startServer({ pool: 10, port });
    // The site's own origin (AGORA_SITE_URL), which the cookies and the CSRF check are bound to.
    const site = `http://localhost:${port}`;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    stack.onStop(() => browser.close());
    const sql = bench.deps.sql;
    const people = [];
    for (const name of ["Alice Bench", "Bob Bench"]) {
      const email = `${name.toLowerCase().replace(" ", ".")}@bench.example`;
      const [row] = await sql<{ id: string }[]>`
        insert into app.users (email, name, role) values (${email}, ${name}, 'MEMBER')
        returning id`;
      people.push({ id: row.id, email, name });
    }
    const owner = await signInByMagicLink(bench.base, sql, people[0].email);
    const created = await fetch(`${bench.base}/api/conversations`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${owner.accessToken}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ type: "direct", participantIds: [people[1].id] }),
    });
    const conversation = (await created.json()).id as string;
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${bench.base}/api/conversations/${conversation}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${owner.accessToken}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ content: `History ${i}` }),
      });
      await r.body?.cancel();
    }

    // Sign in through the pages, as a person would.
    const pages: Page[] = [];
    const states = [];
    for (const person of people) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${site}/signin`);
      await page.getByLabel("E-mail address").fill(person.email);
      await page.getByRole("button", { name: "Send me a sign-in link" }).click();
      await page.getByTestId("dev-magic-link").click();
      await page.waitForURL((url) => url.pathname === "/chat");
      states.push(await context.storageState());
      pages.push(page);
    }

    // Time to an interactive chat.
    const cold: number[] = [];
    const coldLive: number[] = [];
    const warm: number[] = [];
    const warmLive: number[] = [];
    const url = `${site}/chat/${conversation}`;
    // The first `--warmup` loads are not counted (as the round trips' first pings): they time
    // the server's first requests after its start (its code compiled, its pool's connections
    // opened and their plans made), which a person meets once per server, not per visit.
    for (let i = 0; i < opts.warmup + opts.loads; i++) {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        storageState: states[1],
      });
      const page = await context.newPage();
      await page.goto(url, { waitUntil: "commit" });
      const first = await interactiveAt(page);
      await page.reload({ waitUntil: "commit" });
      const again = await interactiveAt(page);
      await context.close();
      if (i < opts.warmup) continue;
      cold.push(first.interactive);
      coldLive.push(first.live);
      warm.push(again.interactive);
      warmLive.push(again.live);
    }

    // Round trips between the two browsers.
    const [a, b] = pages;
    for (const page of pages) {
      await page.goto(url);
      await interactiveAt(page);
    }
    await b.evaluate(ANSWER);
    const roundTrips: number[] = [];
    const oneWay: number[] = [];
    for (let n = 1; n <= opts.warmup + opts.rounds; n++) {
      const { sentAt, pongAt } = await ping(a, n);
      if (n <= opts.warmup) continue;
      roundTrips.push(pongAt - sentAt);
      const seenAt = await b.evaluate(
        (n) => (globalThis as unknown as { __pings: Record<string, number> }).__pings[n],
        n,
      );
      oneWay.push(seenAt - sentAt);
    }
    if (bench.errors.count) {
      problems.push(`server errors: ${bench.errors.count} ${bench.errors.samples.join(" | ")}`);
    }

    const kb = build.initial.gzipBytes / 1024;
    const coldS = summarize(cold)!;
    const warmS = summarize(warm)!;
    const rt = summarize(roundTrips)!;
    const verdict = (ok: boolean) => ok ? "met" : "MISSED";
    console.log(`
Web client in Chromium ${browser.version()} on loopback (${Deno.build.os}, ${navigator.hardwareConcurrency} cores)

  first page, gzipped         ${kb.toFixed(1)} KB (${
      (build.initial.bytes / 1024).toFixed(1)
    } KB raw; ${build.initial.files.join(", ")})
                              target < ${TARGET_BUNDLE_KB} KB: ${verdict(kb < TARGET_BUNDLE_KB)}
  loaded on demand, gzipped   ${
      Object.entries(build.onDemand ?? {}).map(([name, c]) =>
        `${name} ${(c.gzipBytes / 1024).toFixed(1)} KB`
      ).join(", ")
    }
  interactive chat, cold      ${line(coldS)}
  interactive chat, warm      ${line(warmS)}
                              target < ${TARGET_INTERACTIVE_MS} ms (cold p95): ${
      verdict(coldS.p95 < TARGET_INTERACTIVE_MS)
    }
  live feed up, cold / warm   ${line(summarize(coldLive))} / ${line(summarize(warmLive))}
  message round trip A→B→A    ${line(rt)}
                              target p95 < ${TARGET_ROUND_TRIP_P95_MS} ms: ${
      verdict(rt.p95 < TARGET_ROUND_TRIP_P95_MS)
    }
  one way, A's Enter to B     ${line(summarize(oneWay))}
`);
  }).catch((err) => {
    problems.push(`the run stopped: ${err instanceof Error ? err.stack : err}`);
  });
  finish(problems, "every page loaded and every round trip came back");
}
