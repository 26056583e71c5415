/**
 * `npm start` as a user runs it: the CLI in its own process, on its own ports and data directory.
 * A full magic-link sign-in through the dev mailbox over HTTP; Ctrl-C (SIGINT) stops everything
 * with no database server left; a restart keeps the data; `--reset` starts from a fresh seed.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { freePort } from "../../stack/postgres.ts";
import postgres from "postgres";
import { expectJson, setCookies, test } from "../support/helpers.ts";
import { RawClient } from "../realtime/raw-client.ts";
import { createTokenIssuer } from "../../functions/_shared/jwt.ts";
import { portOpen, stackSettings, startStack, stopStack } from "./stack-process.ts";

test("[stack] npm start: magic-link sign-in via /_dev/mail, clean Ctrl-C, data kept on restart, --reset", async () => {
  const localDir = await Deno.makeTempDir({ prefix: "agora-stack-" });
  await Deno.chmod(localDir, 0o755); // the database server runs as the postgres user
  const port = freePort();
  const dbPort = freePort();
  const base = `http://localhost:${port}`;
  try {
    // First start: a new cluster, migrated and seeded, secrets generated.
    let running = await startStack(localDir, { port, dbPort });
    assert.match(running.output(), /admin@example\.com \(ADMIN\)/);
    const envFile = await Deno.readTextFile(join(localDir, "agora.env"));
    assert.match(envFile, /^AGORA_JWT_SECRET=\S{32,}$/m);
    assert.equal((await Deno.stat(join(localDir, "agora.env"))).mode! & 0o777, 0o600);

    assert.equal(
      await fetch(`${base}/health`).then(async (r) => (await r.body?.cancel(), r.status)),
      200,
    );
    const sent = await fetch(`${base}/api/auth/signin`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        provider: "email",
        email: "admin@example.com",
        redirectTo: "/welcome",
      }),
    });
    assert.equal(sent.status, 202);
    await sent.body?.cancel();
    const mailbox = await expectJson(await fetch(`${base}/_dev/mail?to=admin@example.com`), 200);
    assert.equal(mailbox.items.length, 1);
    assert.equal(mailbox.items[0].to, "admin@example.com");
    const link: string = mailbox.items[0].links[0];
    assert.ok(link.startsWith(`${base}/api/auth/callback/email?token=`));

    const callback = await fetch(link, { redirect: "manual" });
    assert.equal(callback.status, 303);
    assert.equal(callback.headers.get("location"), `${base}/welcome`);
    await callback.body?.cancel();
    const cookies = Object.entries(setCookies(callback)).map(([k, v]) => `${k}=${v.value}`).join(
      "; ",
    );
    const session = await expectJson(
      await fetch(`${base}/api/auth/session`, { headers: { cookie: cookies } }),
      200,
    );
    assert.equal(session.user.email, "admin@example.com");
    assert.equal(session.user.role, "ADMIN");
    const landing = await fetch(`${base}/`);
    assert.equal(landing.status, 200, "a magic link without redirectTo lands on the front page");
    assert.match(landing.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(landing.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    const html = await landing.text();
    assert.match(html, /<div id="app">/, "the web client's page");
    const script = /<script type="module" src="([^"]+)"/.exec(html)?.[1];
    assert.ok(script, "the page names its script");
    const asset = await fetch(`${base}${script}`);
    assert.equal(asset.status, 200, "npm start built the web client");
    assert.match(asset.headers.get("content-type") ?? "", /javascript/);
    assert.match(asset.headers.get("cache-control") ?? "", /immutable/);
    await asset.body?.cancel();
    const page = await fetch(`${base}/chat/some-conversation`);
    assert.equal(page.status, 200, "a page path of the app is index.html too");
    await page.body?.cancel();

    // Ctrl-C: the process ends cleanly and no database server is left running.
    let status = await stopStack(running);
    assert.equal(status.code, 0, running.output());
    assert.equal(await portOpen(port), false, "the HTTP port is closed");
    assert.equal(await portOpen(dbPort), false, "the database server is down");

    // Second start: the data (and the session) are still there.
    running = await startStack(localDir, { port, dbPort });
    const again = await expectJson(
      await fetch(`${base}/api/auth/session`, { headers: { cookie: cookies } }),
      200,
    );
    assert.equal(again.user?.email, "admin@example.com", "the session survived the restart");
    status = await stopStack(running);
    assert.equal(status.code, 0);

    // --reset: a fresh, seeded database; the old session is gone, the seed is back.
    running = await startStack(localDir, { port, dbPort }, ["--reset"]);
    const reset = await expectJson(
      await fetch(`${base}/api/auth/session`, { headers: { cookie: cookies } }),
      200,
    );
    assert.equal(reset.user, null);
    const mailAfterReset = await expectJson(
      await fetch(`${base}/_dev/mail?to=admin@example.com`),
      200,
    );
    assert.deepEqual(mailAfterReset.items, []);
    status = await stopStack(running);
    assert.equal(status.code, 0);
    assert.equal(await portOpen(dbPort), false);
  } finally {
    await Deno.remove(localDir, { recursive: true }).catch(() => {});
  }
});

test("[stack] npm start -- --processes 2: two servers share the port and a database broadcast reaches clients on both", async () => {
  const localDir = await Deno.makeTempDir({ prefix: "agora-stack-" });
  await Deno.chmod(localDir, 0o755);
  const port = freePort();
  const dbPort = freePort();
  let sql: ReturnType<typeof postgres> | null = null;
  const clients: RawClient[] = [];
  try {
    const running = await startStack(localDir, { port, dbPort }, ["--processes", "2"]);
    assert.match(running.output(), /2 server processes share port/);
    const env = await stackSettings(localDir);
    sql = postgres(`postgresql://postgres:${env.AGORA_DB_PASSWORD}@127.0.0.1:${dbPort}/postgres`, {
      max: 1,
      onnotice: () => {},
    });
    // Each server process holds its own LISTEN connection for database broadcasts.
    let listeners = 0;
    for (let i = 0; i < 50 && listeners < 2; i++) {
      const [row] =
        await sql`select count(*)::int as n from pg_stat_activity where query ilike 'listen %'`;
      listeners = row.n;
      if (listeners < 2) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(listeners, 2, "two gateway processes listen to the database");
    const anonKey = await createTokenIssuer(env.AGORA_JWT_SECRET, 60, "").apiKey("anon");
    for (let i = 0; i < 8; i++) {
      const c = await RawClient.open(
        `ws://127.0.0.1:${port}/realtime/v1/websocket?apikey=${anonKey}&vsn=2.0.0`,
        "2.0.0",
      );
      clients.push(c);
      const joined = await c.join("realtime:lobby", String(i + 1), { config: { private: false } });
      assert.equal(joined?.payload.status, "ok");
    }
    await sql`select realtime.send('{"hello":"everyone"}'::jsonb, 'greeting', 'lobby', false)`;
    for (const c of clients) {
      const frame = await c.next((f) => f.event === "broadcast", 2_000);
      assert.deepEqual(
        frame?.payload.payload,
        { hello: "everyone" },
        "every client got the database broadcast",
      );
    }
    for (const c of clients) c.close();
    await sql.end();
    sql = null;
    const status = await stopStack(running);
    assert.equal(status.code, 0);
    assert.equal(await portOpen(port), false, "no server process is left on the port");
    assert.equal(await portOpen(dbPort), false);
  } finally {
    for (const c of clients) c.close();
    await sql?.end();
    await Deno.remove(localDir, { recursive: true }).catch(() => {});
  }
});
