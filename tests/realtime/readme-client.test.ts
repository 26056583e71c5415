/**
 * The Node.js Realtime client of docs/realtime.md ("A client in Node.js"), run as written with this
 * machine's Node.js against a real stack server: with Node 22 or newer as is, with Node 20 with the
 * flag the page names. It must print its own broadcast back and exit.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test, testApp } from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { freePort } from "../../stack/postgres.ts";

const ROOT = join(fileURLToPath(new URL("../..", import.meta.url)));

test("[readme] the Node.js client example connects with createClient(realtime.url, anonKey) and gets its broadcast", async () => {
  const page = await Deno.readTextFile(join(ROOT, "docs", "realtime.md"));
  const block = /```js\n(\/\/ client\.mjs[^\n]*\n[\s\S]*?)```/.exec(page)?.[1];
  assert.ok(block, "docs/realtime.md shows a Node.js client (client.mjs)");
  assert.match(block, /Node 22\+/, "it names Node 22");
  assert.match(block, /--experimental-websocket/, "and the flag Node 20 needs");

  const version = new TextDecoder().decode(
    (await new Deno.Command("node", { args: ["--version"] }).output()).stdout,
  );
  const major = Number(/^v(\d+)/.exec(version)?.[1]);
  const flags = major >= 22 ? [] : ["--experimental-websocket"];

  const port = freePort();
  const anonKey = await testApp().deps.tokens.apiKey("anon");
  const app = testApp({ AGORA_SITE_URL: `http://localhost:${port}`, AGORA_ANON_KEY: anonKey });
  const server = startStackServer(app.deps, { port });
  await server.gateway.ready;
  // Inside the checkout, so `@supabase/supabase-js` resolves from its node_modules.
  const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".readme-client-" });
  try {
    await Deno.writeTextFile(join(dir, "client.mjs"), block);
    const child = new Deno.Command("node", {
      args: [...flags, "client.mjs"],
      cwd: dir,
      env: { AGORA_URL: `http://localhost:${port}` },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const out = await child.output();
    clearTimeout(timer);
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, `node ${flags.join(" ")} (${version.trim()}):\n${text}`);
    assert.match(text, /received \{"hi":1\}/);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await server.shutdown();
  }
});
