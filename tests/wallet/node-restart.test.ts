/**
 * Fault: the chain node stopped and started. A chain of its own (anvil with a state file, on
 * another chain id, so the run's chain and its follower cursor are left alone), stopped with
 * transfers in flight (confirmed, so acknowledged, but not broadcast yet) and started again on
 * the same port from its state file. While it is down a new transfer is 503 `chain_unavailable`
 * with `Retry-After`; afterwards every acknowledged transfer is on the chain once, the wallet's
 * nonces are gapless, no wallet job is left queued, running or dead, and the follower said once
 * that the node is back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Address, createPublicClient, http, parseEther } from "viem";
import { drain, enqueueJob, JobRegistry } from "../../functions/api/core/job-queue.ts";
import { walletIndex } from "../../functions/api/wallet/jobs.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { startChainFollower } from "../../functions/api/wallet/follower.ts";
import { type Chain, startChain } from "../../stack/chain/anvil.ts";
import { ensurePlatformContracts } from "../../stack/chain/local.ts";
import { fundAddresses } from "../../stack/chain/deploy.ts";
import { expectError, expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { addressOfCaller, walletJobs } from "../support/wallet.ts";

const CHAIN_ID = 31_338;
const elsewhere = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

test("[wallet] the chain node stopped and started: acknowledged transfers go out once, nonces gapless, jobs finish, the follower says once that it resumed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agora-chain-restart-" });
  const stateFile = join(dir, "state.json");
  let chain: Chain = await startChain({ chainId: CHAIN_ID, stateFile });
  const port = chain.port;
  const t = testApp({ AGORA_RPC_URL: chain.url });
  // The configuration records this chain's contracts for the test; the run's is put back after.
  const [saved] = await t.deps.sql<{ config: unknown }[]>`
    select config from app.config_versions order by version desc limit 1`;
  const logs: string[] = [];
  const deps: Deps = {
    ...t.deps,
    log: ((_level: string, message: string) => void logs.push(message)) as Deps["log"],
  };
  let follower: ReturnType<typeof startChainFollower> | null = null;
  try {
    const { contracts } = await ensurePlatformContracts(t.deps.sql, chain.url);
    t.deps.config.invalidate();
    const me = await signInAs(t, "SUBSCRIBER");
    const address = await addressOfCaller(t, me.accessToken);
    await fundAddresses({
      rpcUrl: chain.url,
      contracts,
      addresses: [address as Address],
      native: parseEther("10"),
      tokens: parseEther("100"),
      erc721PerAddress: 0,
      erc1155: { ids: [], amounts: [] },
    });
    follower = startChainFollower(deps, { intervalMs: 100 });

    const send = async (amount: number) => {
      const { transaction: created } = await expectJson(
        await t.request("POST", "/api/wallet/transfer", {
          token: me.accessToken,
          body: { to: elsewhere, token: "native", amount: String(amount) },
        }),
        201,
      );
      const { transaction: confirmed } = await expectJson(
        await t.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
          token: me.accessToken,
        }),
        200,
      );
      assert.equal(confirmed.status, "submitted", "acknowledged");
      return created.id as string;
    };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await send(1000 + i));
    await drain(t.deps, { registry: walletJobs(), maxJobs: 100 });
    for (let i = 3; i < 6; i++) ids.push(await send(1000 + i)); // in flight: not broadcast yet

    await chain.stop(); // anvil writes its state file on SIGTERM
    const down = await t.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: { to: elsewhere, token: "native", amount: "999" },
    });
    assert.ok(down.headers.get("retry-after"), "Retry-After while the node is down");
    await expectError(down, 503, "chain_unavailable");
    const outage = await drain(t.deps, { registry: walletJobs(), maxJobs: 100 });
    assert.ok(outage.retried >= 1 && outage.dead === 0, "broadcasts wait for the node");
    await new Promise((r) => setTimeout(r, 400)); // the follower notices

    chain = await startChain({ chainId: CHAIN_ID, stateFile, port });
    const client = createPublicClient({ transport: http(chain.url) });
    assert.equal(
      await client.getTransactionCount({ address: address as Address }),
      3,
      "the node kept its state: the three sent before it stopped",
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      await drain(t.deps, { registry: walletJobs(), maxJobs: 100 });
      const [{ open }] = await t.deps.sql<{ open: number }[]>`
        select count(*)::int as open from app.wallet_transactions
        where id = any(${ids}::uuid[]) and status <> 'confirmed'`;
      if (open === 0) break;
      assert.ok(Date.now() < deadline, `${open} transfers still not confirmed`);
      await new Promise((r) => setTimeout(r, 250));
    }

    const rows = await t.deps.sql<{ nonce: number; hash: string }[]>`
      select nonce::int, hash from app.wallet_transactions
      where wallet_id = (select id from app.wallets where user_id = ${me.user.id})
        and direction = 'out' and nonce is not null order by nonce`;
    assert.deepEqual(rows.map((r) => r.nonce), [0, 1, 2, 3, 4, 5], "gapless, none twice");
    assert.equal(new Set(rows.map((r) => r.hash)).size, 6);
    assert.equal(
      await client.getTransactionCount({ address: address as Address }),
      6,
      "each acknowledged transfer on the chain once",
    );
    for (const r of rows) {
      const receipt = await client.getTransactionReceipt({ hash: r.hash as `0x${string}` });
      assert.equal(receipt.status, "success");
    }
    const [{ stuck }] = await t.deps.sql<{ stuck: number }[]>`
      select count(*)::int as stuck from app_private.jobs
      where kind in ('wallet.broadcast', 'wallet.watch') and state <> 'done'
        and payload ->> 'transactionId' = any(${ids}::text[])`;
    assert.equal(stuck, 0, "no wallet job queued, running or dead");

    const resumedBy = Date.now() + 5_000;
    while (!logs.some((l) => l.includes("answers again")) && Date.now() < resumedBy) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(logs.filter((l) => l.includes("does not answer")).length, 1, logs.join("\n"));
    assert.equal(logs.filter((l) => l.includes("answers again")).length, 1, logs.join("\n"));
  } finally {
    await follower?.stop();
    await t.deps.sql`
      insert into app.config_versions (version, config, reason)
      select max(version) + 1, ${
      t.deps.sql.json(saved.config as never)
    }, 'test: the run''s chain again'
      from app.config_versions`;
    await chain.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

test("[wallet] a wallet.index job whose node stays down ends on its last attempt instead of dead-lettering", async () => {
  const down = testApp({ AGORA_RPC_URL: "http://127.0.0.1:1" });
  const id = await enqueueJob(down.deps.sql, walletIndex, {});
  try {
    // Its last attempt: the two before failed the same way (each a RetryJobAfter).
    await down.deps.sql`update app_private.jobs set attempts = max_attempts - 1 where id = ${id}`;
    const result = await drain(down.deps, { registry: new JobRegistry([walletIndex]) });
    assert.deepEqual([result.done, result.dead], [1, 0]);
    const [row] = await down.deps.sql<{ state: string }[]>`
      select state::text from app_private.jobs where id = ${id}`;
    assert.equal(row.state, "done");
  } finally {
    await down.deps.sql`delete from app_private.jobs where id = ${id}`;
  }
});
