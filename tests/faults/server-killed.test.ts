/**
 * The server killed with SIGKILL (a crash, the OOM killer) while people send wallet transfers and
 * an admin's bulk send goes out, then started again, as an operator would. The server is
 * `stack/cli.ts serve` in a process of its own (the app, its job worker and its chain follower),
 * on a database and a chain of its own; this process only plays the clients and reads the
 * database afterwards.
 *
 * Clients do what the contract tells them: a request that got no answer is sent again, with the
 * same Idempotency-Key, once the server answers. What must hold after the restart:
 * - every acknowledged transfer (confirmed: `submitted`) is on the chain once, the wallet's
 *   nonces are gapless and none is used twice;
 * - every e-mail of the bulk send is delivered once or marked `outcome_unknown` (at most the
 *   slice in flight), and the dev mailbox holds no mail twice;
 * - no job is left queued, running or dead: the restarted worker took back the jobs of the
 *   killed process at once, without waiting for their leases.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Address, createPublicClient, http, parseEther } from "viem";
import { throwawayCluster } from "../../stack/database.ts";
import { freePort } from "../../stack/postgres.ts";
import { type Chain, startChain } from "../../stack/chain/anvil.ts";
import { ensurePlatformContracts } from "../../stack/chain/local.ts";
import { fundAddresses } from "../../stack/chain/deploy.ts";
import { createTokenIssuer } from "../../functions/_shared/jwt.ts";
import { closeDeps } from "../../functions/api/deps.ts";
import { createUser, expectJson, signInAs, SITE, test, testApp } from "../support/helpers.ts";
import { addressOfCaller } from "../support/wallet.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CHAIN_ID = 31_339;
const elsewhere = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

const { cluster, dispose } = await throwawayCluster();
// Acknowledged commits are durable, as on a real database (the throwaway default is not).
await cluster.psql("alter system set synchronous_commit = on");
await cluster.psql("select pg_reload_conf()");
const chain: Chain = await startChain({ chainId: CHAIN_ID });
const port = freePort();
/** The server's attachment files: removed with the cluster at the end. */
const storageDir = await Deno.makeTempDir({ prefix: "agora-killed-storage-" });
const base = `http://127.0.0.1:${port}`;
const env = {
  ...Deno.env.toObject(),
  AGORA_DB_URL: cluster.url(),
  AGORA_RPC_URL: chain.url,
  AGORA_LOCAL_MODE: "true",
  // The site the test's tokens were issued for (their issuer), as in testApp.
  AGORA_SITE_URL: SITE,
  AGORA_PORT: String(port),
  AGORA_HOST: "127.0.0.1",
  AGORA_LOG_LEVEL: "warn",
  AGORA_ANON_KEY: await createTokenIssuer(Deno.env.get("AGORA_JWT_SECRET")!, 60, "")
    .apiKey("anon"),
  AGORA_STORAGE_DIR: storageDir,
  AGORA_RATE_SIGNIN_IP: "100000/600",
  AGORA_RATE_SIGNIN_EMAIL: "100000/600",
  AGORA_RATE_VERIFY_IP: "100000/600",
  NO_COLOR: "1",
};
// Sign-in and setup in this process, on the same database (the same secrets as the server).
const t = testApp({ AGORA_DB_URL: cluster.url(), AGORA_RPC_URL: chain.url });

interface Server {
  child: Deno.ChildProcess;
  output: string[];
}

async function startServer(): Promise<Server> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "--quiet", join(ROOT, "stack", "cli.ts"), "serve"],
    env,
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (chunk) => void output.push(chunk) }),
    ).catch(() => {});
  }
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(`${base}/health`).then(async (r) => {
      await r.body?.cancel();
      return r.ok;
    }, () => false);
    if (ok) return { child, output };
    if (Date.now() > deadline) throw new Error(`the server did not start:\n${output.join("")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A client's request: sent again (same body, same key) until the server answers it. */
async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
  key?: string,
): Promise<Response> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(key ? { "idempotency-key": key } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (response.status !== 503) return response;
      await response.body?.cancel();
    } catch {
      // no answer: the server is gone; the same request again once it is back
    }
    if (Date.now() > deadline) throw new Error(`${method} ${path}: no answer in 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function until(what: string, check: () => Promise<boolean>, limitMs = 60_000) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("[faults] the server killed with SIGKILL during transfers and a bulk send, then started again: each acknowledged transfer once, nonces gapless, every e-mail once or unknown, no job left", async () => {
  let server: Server | null = null;
  try {
    const { contracts } = await ensurePlatformContracts(t.deps.sql, chain.url);
    t.deps.config.invalidate();
    const admin = await signInAs(t, "ADMIN");
    const senders = await Promise.all([signInAs(t, "MEMBER"), signInAs(t, "MEMBER")]);
    const addresses = await Promise.all(senders.map((s) => addressOfCaller(t, s.accessToken)));
    await fundAddresses({
      rpcUrl: chain.url,
      contracts,
      addresses: addresses as Address[],
      native: parseEther("10"),
      tokens: parseEther("100"),
      erc721PerAddress: 0,
      erc1155: { ids: [], amounts: [] },
    });
    const recipients = await Promise.all(
      Array.from({ length: 1000 }, () => createUser(t.deps, "MEMBER")),
    );

    server = await startServer();
    let stopping = false;
    const acknowledged: string[] = [];
    const sender = async (who: (typeof senders)[number], n: number) => {
      for (let i = 0; !stopping; i++) {
        const key = `killed-${n}-${i}`;
        const { transaction: created } = await expectJson(
          await call(
            "POST",
            "/api/wallet/transfer",
            who.accessToken,
            { to: elsewhere, token: "native", amount: String(1000 + i) },
            key,
          ),
          201,
        );
        const { transaction: confirmed } = await expectJson(
          await call("POST", `/api/wallet/transactions/${created.id}/confirm`, who.accessToken),
          200,
        );
        assert.equal(confirmed.status, "submitted");
        acknowledged.push(created.id);
      }
    };
    // A sender that gives up ends the test with its error, after the others stop.
    let failed: unknown = null;
    const sending = senders.map((s, n) =>
      sender(s, n).catch((err) => {
        failed ??= err;
        stopping = true;
      })
    );
    const batch = await expectJson(
      await call("POST", "/api/notifications/bulk", admin.accessToken, {
        audience: { userIds: recipients.map((r) => r.id) },
        notification: { type: "SYSTEM", title: "To everyone", body: "through a crash" },
        channels: ["inApp", "email"],
      }, "killed-bulk"),
      202,
    );

    // Kill it while both are under way (part of the bulk send's e-mail is out, transfers are
    // being sent), then start it again.
    await until("the bulk send under way", async () => {
      const [{ n }] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from dev.mail
        where to_address = any(${recipients.map((r) => r.email)})`;
      return n > 0 && acknowledged.length > 0;
    }, 30_000);
    server.child.kill("SIGKILL");
    await server.child.status;
    const killedAfter = acknowledged.length;
    const [{ mailed }] = await t.deps.sql<{ mailed: number }[]>`
      select count(*)::int as mailed from dev.mail
      where to_address = any(${recipients.map((r) => r.email)})`;
    assert.ok(mailed < recipients.length, `killed mid-send (${mailed} of ${recipients.length})`);
    await new Promise((r) => setTimeout(r, 500));
    server = await startServer();
    await until(
      "transfers acknowledged after the restart",
      () => Promise.resolve(failed !== null || acknowledged.length >= killedAfter + 2),
    );
    stopping = true;
    await Promise.all(sending);
    if (failed) throw failed;

    const sql = t.deps.sql;
    await until("every acknowledged transfer confirmed on the chain", async () => {
      const [{ open }] = await sql<{ open: number }[]>`
        select count(*)::int as open from app.wallet_transactions
        where id = any(${acknowledged}::uuid[]) and status <> 'confirmed'`;
      return open === 0;
    });
    const client = createPublicClient({ transport: http(chain.url) });
    for (const [n, who] of senders.entries()) {
      const rows = await sql<{ nonce: number; hash: string }[]>`
        select nonce::int, hash from app.wallet_transactions
        where wallet_id = (select id from app.wallets where user_id = ${who.user.id})
          and direction = 'out' and nonce is not null and status <> 'failed' order by nonce`;
      assert.deepEqual(
        rows.map((r) => r.nonce),
        rows.map((_, i) => i),
        `sender ${n}: nonces gapless, none twice`,
      );
      assert.equal(new Set(rows.map((r) => r.hash)).size, rows.length);
      assert.equal(
        await client.getTransactionCount({ address: addresses[n] as Address }),
        rows.length,
        `sender ${n}: each transfer on the chain once`,
      );
    }

    await until("the bulk send done", async () => {
      const [row] = await sql<{ status: string }[]>`
        select status::text from app.notification_batches where id = ${batch.id}`;
      return row?.status === "done";
    });
    const deliveries = await sql<{ status: string; error_code: string | null; n: number }[]>`
      select d.status::text, d.error_code, count(*)::int as n
      from app_private.notification_deliveries d
      join app.notifications x on x.id = d.notification_id
      where x.batch_id = ${batch.id} and d.channel = 'email'
      group by 1, 2`;
    const count = (status: string, code: string | null = null) =>
      deliveries.find((d) => d.status === status && d.error_code === code)?.n ?? 0;
    const unknown = count("failed", "outcome_unknown");
    assert.equal(
      count("sent") + unknown,
      recipients.length,
      `every e-mail sent or unknown: ${JSON.stringify(deliveries)}`,
    );
    // One chunk job (1,000 recipients) was running: it had at most one slice in flight.
    const slice = t.deps.settings.pushConcurrency;
    assert.ok(unknown <= slice, `at most the slice in flight is unknown (${unknown} of ${slice})`);
    const [mail] = await sql<{ rows: number; distinct_ids: number }[]>`
      select count(*)::int as rows, count(distinct message_id)::int as distinct_ids
      from dev.mail where to_address = any(${recipients.map((r) => r.email)})`;
    assert.equal(mail.rows, mail.distinct_ids, "no mail twice in the mailbox");
    assert.ok(mail.rows >= count("sent"), "every sent e-mail is in the mailbox");

    await until("no job left", async () => {
      const [{ n }] = await sql<{ n: number }[]>`
        select count(*)::int as n from app_private.jobs
        where state in ('running', 'dead') or (state = 'queued' and run_at <= now())`;
      return n === 0;
    }, 30_000);
  } finally {
    if (server) {
      try {
        server.child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await server.child.status;
    }
    await closeDeps(t.deps).catch(() => {});
    await chain.stop();
    await dispose();
    await Deno.remove(storageDir, { recursive: true }).catch(() => {});
  }
});
