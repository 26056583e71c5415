/**
 * Wallet test helpers: the platform's contracts on the run's throwaway chain (deployed and
 * recorded in the test database once, as `npm start` does), funding an address, draining the
 * wallet's jobs until a transfer settles, a JSON-RPC proxy that can be stopped and started (the
 * node going down and coming back, and counting calls), and the keyring of the run.
 */
import { type Address, createPublicClient, createWalletClient, http, parseEther } from "viem";
import type { Deps } from "../../functions/api/core/context.ts";
import { ensurePlatformContracts } from "../../stack/chain/local.ts";
import { fundAddresses, type PlatformContracts } from "../../stack/chain/deploy.ts";
import { drain, JobRegistry } from "../../functions/api/core/job-queue.ts";
import { walletBroadcast, walletIndex, walletWatch } from "../../functions/api/wallet/jobs.ts";
import { followChain } from "../../functions/api/wallet/indexer.ts";
import { testRpcUrl } from "../chain/support.ts";
import { expectJson, type TestApp } from "./helpers.ts";

export { testRpcUrl };

/** The platform's contracts on the test chain, recorded in the test database's configuration. */
export async function platform(deps: Deps): Promise<PlatformContracts> {
  const { contracts } = await ensurePlatformContracts(deps.sql, testRpcUrl());
  deps.config.invalidate();
  return contracts;
}

/**
 * Gives `address` native currency and platform tokens (and, unless `nfts: false`, demo NFTs),
 * from the chain's development account.
 */
export async function fund(
  contracts: PlatformContracts,
  address: string,
  opts: { native?: bigint; tokens?: bigint; nfts?: boolean } = {},
): Promise<void> {
  await fundAddresses({
    rpcUrl: testRpcUrl(),
    contracts,
    addresses: [address as Address],
    native: opts.native ?? parseEther("10"),
    tokens: opts.tokens ?? parseEther("1000"),
    erc721PerAddress: opts.nfts === false ? 0 : 2,
    erc1155: opts.nfts === false ? { ids: [], amounts: [] } : undefined,
  });
}

/** Sends native currency from the development account (an outside sender) to `to`; mined. */
export async function sendNative(to: string, value: bigint): Promise<string> {
  const wallet = createWalletClient({ transport: http(testRpcUrl()) });
  const [from] = await wallet.getAddresses();
  const hash = await wallet.sendTransaction({
    account: from,
    to: to as Address,
    value,
    chain: null,
  });
  await createPublicClient({ transport: http(testRpcUrl()), pollingInterval: 20 })
    .waitForTransactionReceipt({ hash });
  return hash;
}

export const walletJobs = () => new JobRegistry([walletBroadcast, walletWatch, walletIndex]);

/** Runs the wallet's due jobs until `done()` holds (or throws after `ms`). */
export async function drainUntil(
  deps: Deps,
  done: () => Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  const registry = walletJobs();
  for (;;) {
    await drain(deps, { registry, maxJobs: 1000 });
    if (await done()) return;
    if (Date.now() > deadline) throw new Error("the wallet's jobs did not settle in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The status of a transaction, read directly. */
export async function statusOf(deps: Deps, id: string): Promise<string> {
  const [row] = await deps.sql<{ status: string }[]>`
    select status from app.wallet_transactions where id = ${id}`;
  return row?.status;
}

/** Confirms are settled: runs the jobs until the transaction is confirmed or failed. */
export async function settle(deps: Deps, id: string, ms = 10_000): Promise<string> {
  await drainUntil(
    deps,
    async () => ["confirmed", "failed"].includes(await statusOf(deps, id)),
    ms,
  );
  return await statusOf(deps, id);
}

/** Follows the chain up to its head. */
export async function follow(deps: Deps) {
  return await followChain(deps, { maxMs: 60_000 });
}

/** The caller's wallet address (GET /api/wallet). */
export async function addressOfCaller(t: TestApp, token: string): Promise<string> {
  const { wallet } = await expectJson(await t.request("GET", "/api/wallet", { token }), 200);
  return wallet.address;
}

/**
 * A JSON-RPC proxy in front of the run's chain on a fixed port: `stop()` makes the node
 * unreachable (connections refused), `start()` brings it back on the same port; `calls` counts
 * requests by method; `dropAnswers` forwards requests but answers 502 (the call happened, its
 * answer was lost).
 */
export interface RpcProxy {
  url: string;
  calls: Map<string, number>;
  dropAnswers: boolean;
  start(): void;
  stop(): Promise<void>;
  total(): number;
  reset(): void;
}

export function rpcProxy(target = testRpcUrl()): RpcProxy {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  let server: Deno.HttpServer | null = null;
  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${port}`,
    calls: new Map(),
    dropAnswers: false,
    start() {
      if (server) return;
      server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (request) => {
        const body = await request.text();
        try {
          const parsed = JSON.parse(body);
          for (const call of Array.isArray(parsed) ? parsed : [parsed]) {
            proxy.calls.set(call.method, (proxy.calls.get(call.method) ?? 0) + 1);
          }
        } catch {
          // not JSON: forwarded as is
        }
        const answer = await fetch(target, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        const text = await answer.text();
        if (proxy.dropAnswers) return new Response("bad gateway", { status: 502 });
        return new Response(text, { headers: { "content-type": "application/json" } });
      });
    },
    async stop() {
      const running = server;
      server = null;
      await running?.shutdown();
    },
    total() {
      return [...proxy.calls.values()].reduce((a, b) => a + b, 0);
    },
    reset() {
      proxy.calls.clear();
    },
  };
  proxy.start();
  return proxy;
}

/**
 * Master keys the rotation tests seal wallets with (besides the run's AGORA_WALLET_MASTER_KEY):
 * fixed, so the leak test can open every wallet of the run and look for each key.
 */
export const TEST_MASTER_KEYS = [
  "qE7n0yXTkz8kWhh5vZlm2VqH0mJxk2o3n1Fj6cX2Ypo",
  "Zl6U2b0Ww6vH5e2E1mY8yq3tq1o2dB4r9fKx7Jc0aQ8",
];
