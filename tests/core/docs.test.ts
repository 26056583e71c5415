/**
 * The docs say what the code does: each statement below was once wrong. Each test measures the
 * behaviour and checks the page that describes it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@supabase/supabase-js";
import { test, testApp, testEnv, uniqueEmail } from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";

const ROOT = join(fileURLToPath(new URL("../..", import.meta.url)));
const read = (path: string) => Deno.readTextFile(join(ROOT, path));
/** A page's text with line breaks as spaces (the docs wrap lines). */
const flat = async (path: string) => (await read(path)).replace(/\s*\n\s*/g, " ");

const t = testApp();

test("[docs] README: the site root is the web app, not a JSON 404", async () => {
  const server = startStackServer(t.deps, { port: 0 });
  try {
    const root = await fetch(`http://127.0.0.1:${server.port}/`);
    assert.equal(root.status, 200);
    assert.match(root.headers.get("content-type") ?? "", /^text\/html/);
    await root.body?.cancel();
  } finally {
    await server.shutdown();
  }
  const readme = await flat("README.md");
  assert.doesNotMatch(readme, /JSON 404/, "the README never calls / a JSON 404");
  assert.match(readme, /site root, `http:\/\/localhost:54321\/`: the web app/);
});

test("[docs] sessions.md: RateLimit headers come on every answer of a limited group, not only 429s", async () => {
  const sent = await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: uniqueEmail() },
  });
  assert.equal(sent.status, 202);
  for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) {
    assert.ok(sent.headers.get(name), `a 202 carries ${name}`);
  }
  const sessions = await flat("docs/sessions.md");
  assert.doesNotMatch(sessions, /only with a 429/);
  assert.match(
    sessions,
    /Every answer of a request that counted against a limit carries the three `RateLimit-\*` headers, whatever its status/,
  );
});

test("[docs] realtime.md: what a supabase-js app sees when it asks the gateway for Postgres Changes", async () => {
  const server = startStackServer(t.deps, { port: 0 });
  await server.gateway.ready;
  const client = createClient(
    `http://127.0.0.1:${server.port}`,
    await t.deps.tokens.apiKey("anon"),
    { auth: { persistSession: false, autoRefreshToken: false } },
  );
  const seen: string[] = [];
  let error = "";
  try {
    const channel = client.channel(`changes-${crypto.randomUUID().slice(0, 8)}`)
      .on("postgres_changes", { event: "*", schema: "public", table: "anything" }, () => {})
      .on("system", {}, () => void seen.push("system"));
    await new Promise<void>((resolve) =>
      channel.subscribe((status, err) => {
        seen.push(status);
        if (status === "CHANNEL_ERROR") {
          error = err?.message ?? "";
          resolve();
        }
        if (status === "SUBSCRIBED" || status === "TIMED_OUT") resolve();
      })
    );
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    await client.removeAllChannels();
    await server.shutdown();
  }
  assert.deepEqual(seen, ["CLOSED", "CHANNEL_ERROR"], "no system message ever reaches the app");
  const realtime = await flat("docs/realtime.md");
  assert.ok(realtime.includes(`"${error}"`), `docs/realtime.md quotes: ${error}`);
  assert.match(realtime, /`CLOSED`, then `CHANNEL_ERROR`/);
});

test("[docs] realtime.md: the fan-out figures are benchmarks.md's (one table)", async () => {
  const realtime = await read("docs/realtime.md");
  const section = realtime.slice(realtime.indexOf("## Benchmark"));
  assert.doesNotMatch(section, /p50 \d|\d+ KB per connection/, "no figures of its own");
  assert.match(section, /\(benchmarks\.md\)/);
  const benchmarks = await read("docs/benchmarks.md");
  assert.match(benchmarks, /\| `realtime`: database broadcasts, 1,000 subscribers/);
  assert.match(benchmarks, /`npm run bench -- realtime`/);
});

test("[docs] operations.md: local storage is the default, supabase is what production sets", async () => {
  const env = testEnv();
  delete env.AGORA_STORAGE;
  assert.equal(loadSettings(env).storage.kind, "local");
  const row = (await read("docs/operations.md")).split("\n").find((l) =>
    l.startsWith("| `AGORA_STORAGE` |")
  );
  assert.ok(row);
  assert.match(row, /The default is `local`/);
  assert.doesNotMatch(row, /`supabase`\*\*: the default/);
});
