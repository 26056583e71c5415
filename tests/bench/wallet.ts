/**
 * `npm run bench -- wallet [options]`: the wallet against a throwaway cluster and chain (anvil),
 * the stack server in this process as `npm start` runs it.
 *
 * 1. `GET /api/wallet/balance` under load (wrk, signed-in wallets in turn): requests per second
 *    and latency, and the node's calls per request, counted at the server's JSON-RPC transport
 *    (every call it sent, by method) against the requests the access log recorded: exactly one,
 *    the multicall. The ceiling, in the same run: the same multicall `eth_call`s sent straight to
 *    anvil by wrk (what one balance costs the node, with no app in front).
 * 2. Transfers end to end: 10 wallets created at sign-in and funded, then 10 transfers each
 *    created (`POST /api/wallet/transfer`) and confirmed (`POST …/confirm`), all wallets at once;
 *    the clock stops when the last is `confirmed` (signed, broadcast by the server's job worker,
 *    mined, its receipt read). Then the nonces are checked: each wallet's are 0 to 9 with no gap
 *    and no repeat, and the chain counts exactly 10 transactions per wallet.
 *
 * Targets: transfers at least 100 per second end to end; one RPC call per balance request. A
 * missed target still exits 0; a broken run (non-2xx answers, server errors, a nonce gap, more
 * calls than requests) exits 1.
 *
 * Options:
 *   --duration 8        seconds measured per balance endpoint (after --warmup 2)
 *   --connections 32    wrk connections
 *   --wallets 16        signed-in wallets the balance load rotates through
 *   --transfers 10x10   wallets × transfers each for the end-to-end run
 */
import {
  type Address,
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  http,
  multicall3Abi,
  parseEther,
} from "viem";
import {
  bearerRequests,
  type CpuSample,
  cpuTable,
  type CpuUse,
  cpuUse,
  int,
  ms,
  postgresTicks,
  reapedTicksOf,
  removeWrkScript,
  sampleCpu,
  signUpByMagicLink,
  summarize,
  table,
  ticksOf,
  wrk,
  wrkScript,
} from "./stats.ts";
import type { BenchServer } from "./bench-server.ts";
import {
  busyWarning,
  figuresTable,
  finish,
  measureQuietly,
  parseOptions,
  postJson,
  say,
  sleep,
  type Stack,
  withStack,
} from "./scaffold.ts";
import { throwawayChain } from "../../stack/chain/anvil.ts";
import { ensurePlatformContracts } from "../../stack/chain/local.ts";
import { fundAddresses, type PlatformContracts } from "../../stack/chain/deploy.ts";
import { createChainAccess, multicallAbi } from "../../functions/api/wallet/chain.ts";
import { startChainFollower } from "../../functions/api/wallet/follower.ts";

const TRANSFER_TARGET_PER_SECOND = 100;
const POOL_SIZE = 10;

interface Options {
  duration: number;
  warmup: number;
  connections: number;
  wallets: number;
  transferWallets: number;
  transfersEach: number;
}

const options = (args: string[]): Options =>
  parseOptions(args, import.meta.url, (a) => {
    const [[transferWallets, transfersEach]] = a.pairs("--transfers", [[10, 10]]);
    return {
      duration: a.whole("--duration", 8),
      warmup: a.whole("--warmup", 2),
      connections: a.whole(["--connections", "-c"], 32),
      wallets: a.whole("--wallets", 16),
      transferWallets,
      transfersEach,
    };
  });

/** The calldata of one wallet's balance multicall, as the server builds it. */
function balanceCall(contracts: PlatformContracts, holder: Address) {
  const calls = [
    {
      target: contracts.multicall3,
      callData: encodeFunctionData({ abi: multicallAbi, functionName: "getBlockNumber" }),
    },
    {
      target: contracts.multicall3,
      callData: encodeFunctionData({
        abi: multicallAbi,
        functionName: "getEthBalance",
        args: [holder],
      }),
    },
    ...[contracts.utility, contracts.governance, contracts.staking].map((token) => ({
      target: token,
      callData: encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [holder] }),
    })),
  ].map((c) => ({ ...c, allowFailure: true }));
  return encodeFunctionData({ abi: multicall3Abi, functionName: "aggregate3", args: [calls] });
}

/** The stack of one run: the server, the chain it talks to, and the node calls it made. */
interface WalletBench {
  bench: BenchServer;
  chain: Awaited<ReturnType<typeof throwawayChain>>;
  contracts: PlatformContracts;
  /** Every call the server sent to the node, by method. */
  calls: Map<string, number>;
  sample(): CpuSample;
  problems: string[];
}

interface Wallet {
  token: string;
  userId: string;
  address: Address;
}

interface Row {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  cpu: CpuUse;
}

interface Balances {
  rows: Row[];
  /** Balance answers the access log recorded, and the node calls made meanwhile. */
  served: number;
  calls: Map<string, number>;
}

interface Transfers {
  total: number;
  seconds: number;
  createdSeconds: number;
  submittedSeconds: number;
  cpu: CpuUse;
  latency: ReturnType<typeof summarize>;
  jobs: string;
  gapless: boolean;
}

export async function main(args: string[]): Promise<void> {
  const opts = options(args);
  const problems: string[] = [];
  await withStack(async (stack) => {
    const run = await startWalletBench(stack, problems);
    const balances = await measureBalances(run, opts);
    const transfers = await measureTransfers(stack, run, opts);
    if (run.bench.errors.count) {
      problems.push(
        `server errors: ${run.bench.errors.count} (${run.bench.errors.samples.join("; ")})`,
      );
    }
    printReport(opts, balances, transfers, problems);
  });
  finish(problems, "every answer was 2xx and every nonce in place");
}

/** A throwaway chain with the platform's contracts, and the server counting its node calls. */
async function startWalletBench(stack: Stack, problems: string[]): Promise<WalletBench> {
  say("throwaway chain (anvil)");
  const chain = await throwawayChain();
  stack.onStop(() => chain.stop());
  const calls = new Map<string, number>();
  const bench = await stack.startServer({
    pool: POOL_SIZE,
    options: (deps) => {
      deps.chain = createChainAccess(chain.url, {
        onRequest: (method) => calls.set(method, (calls.get(method) ?? 0) + 1),
      });
      // The follower is started for the transfers only: its reads would blur the count.
      return { follower: false };
    },
  });
  const { contracts } = await ensurePlatformContracts(bench.deps.sql, chain.url);
  bench.deps.config.invalidate();
  const postmaster = bench.postmasterPid;
  const sample = () =>
    sampleCpu({
      server: () => ticksOf("self"),
      postgres: () => postgresTicks(postmaster),
      anvil: () => ticksOf(chain.pid),
      wrk: () => reapedTicksOf("self"),
    });
  return { bench, chain, contracts, calls, sample, problems };
}

/** `count` wallets, each created at its user's first sign-in, then funded. */
async function fundedWallets(
  run: WalletBench,
  count: number,
  prefix: string,
  native?: bigint,
): Promise<Wallet[]> {
  const { bench } = run;
  const wallets: Wallet[] = [];
  for (let i = 0; i < count; i++) {
    const email = `${prefix}-${i}@bench.example`;
    const session = await signUpByMagicLink(bench.base, bench.deps.sql, email);
    const [wallet] = await bench.deps.sql<{ address: Address }[]>`
      select address from app.wallets where user_id = ${session.user.id}`;
    wallets.push({ token: session.accessToken, userId: session.user.id, address: wallet.address });
  }
  await fundAddresses({
    rpcUrl: run.chain.url,
    contracts: run.contracts,
    addresses: wallets.map((w) => w.address),
    ...(native === undefined ? {} : { native }),
    erc721PerAddress: 0,
    erc1155: { ids: [], amounts: [] },
  });
  return wallets;
}

/** wrk against `url` after its warm-up, measured again while other work took the CPU. */
async function wrkRow(run: WalletBench, opts: Options, label: string, url: string, script: string) {
  await wrk(url, script, opts.connections, opts.warmup);
  const { kept } = await measureQuietly(label, async () => {
    const before = run.sample();
    const result = await wrk(url, script, opts.connections, opts.duration);
    return { result, cpu: cpuUse(before, run.sample()) };
  }, (r) => r.cpu.rest);
  const { result, cpu } = kept;
  if (result.non2xx) run.problems.push(`${label}: ${result.non2xx} answers outside 2xx`);
  if (result.socketErrors) run.problems.push(`${label}: socket errors ${result.socketErrors}`);
  return {
    label,
    rps: result.rps,
    p50: result.p50Ms,
    p99: result.p99Ms,
    requests: result.requests,
    cpu,
  } satisfies Row;
}

/**
 * 1. The balance endpoint under wrk, its node calls counted against the answers the access log
 * recorded; then the ceiling, the same multicalls straight to anvil.
 */
async function measureBalances(run: WalletBench, opts: Options): Promise<Balances> {
  const { bench, contracts, calls } = run;
  const readers = await fundedWallets(run, opts.wallets, "reader");
  say(`${readers.length} wallets created at sign-in and funded`);
  const balanceScript = await wrkScript(bearerRequests(readers.map((r) => r.token)));
  const ceilingScript = await wrkScript(readers.map((r, i) => ({
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: i,
      method: "eth_call",
      params: [{ to: contracts.multicall3, data: balanceCall(contracts, r.address) }, "latest"],
    }),
  })));
  try {
    // Warm the process (the chain-id check, the tokens' metadata), then count from zero.
    await fetch(`${bench.base}/api/wallet/balance`, {
      headers: { authorization: `Bearer ${readers[0].token}` },
    }).then((r) => r.body?.cancel());
    await bench.deps.accessLog.flush();
    const [{ mark }] = await bench.deps.sql<{ mark: string }[]>`
      select coalesce(max(id), 0)::text as mark from app.access_logs`;
    calls.clear();
    const rows = [
      await wrkRow(
        run,
        opts,
        "GET /api/wallet/balance",
        `${bench.base}/api/wallet/balance`,
        balanceScript,
      ),
    ];
    await sleep(500); // answers wrk stopped waiting for
    await bench.deps.accessLog.flush();
    const [{ served, failed }] = await bench.deps.sql<{ served: number; failed: number }[]>`
      select count(*)::int as served, count(*) filter (where status <> 200)::int as failed
      from app.access_logs where id > ${mark}::bigint and route = '/api/wallet/balance'`;
    const balanceCalls = new Map(calls);
    if (failed) run.problems.push(`GET /api/wallet/balance: ${failed} answers outside 200`);
    rows.push(
      await wrkRow(
        run,
        opts,
        "eth_call multicall straight to anvil (ceiling)",
        run.chain.url,
        ceilingScript,
      ),
    );
    return { rows, served, calls: balanceCalls };
  } finally {
    await removeWrkScript(balanceScript);
    await removeWrkScript(ceilingScript);
  }
}

/**
 * 2. Transfers end to end, all wallets at once: each creates its transfers, then confirms them
 * all; the clock stops when the last is confirmed (mined, its receipt read). Then the jobs that
 * got them there, and the nonces.
 */
async function measureTransfers(
  stack: Stack,
  run: WalletBench,
  opts: Options,
): Promise<Transfers> {
  const { bench } = run;
  const follower = startChainFollower(bench.deps);
  stack.onStop(() => follower.stop());
  const senders = await fundedWallets(run, opts.transferWallets, "sender", parseEther("10"));
  say(`${senders.length} sending wallets created at sign-in and funded`);
  const total = opts.transferWallets * opts.transfersEach;
  const before = run.sample();
  const started = performance.now();
  const ids: string[] = [];
  let lastCreated = started;
  await Promise.all(senders.map(async (sender, i) => {
    const to = senders[(i + 1) % senders.length].address;
    const created = await Promise.all(
      Array.from(
        { length: opts.transfersEach },
        (_, n) =>
          postJson(bench.base, sender.token, "/api/wallet/transfer", {
            to,
            token: "AGU",
            amount: String(1000 + n),
          }),
      ),
    );
    ids.push(...created.map((c) => c.transaction.id));
    lastCreated = Math.max(lastCreated, performance.now());
    await Promise.all(
      created.map((c) =>
        postJson(bench.base, sender.token, `/api/wallet/transactions/${c.transaction.id}/confirm`)
      ),
    );
  }));
  const submittedAt = performance.now();
  await waitForConfirmations(run, ids, total, started);
  const finished = performance.now();
  const cpu = cpuUse(before, run.sample());
  const latencies = await bench.deps.sql<{ ms: number }[]>`
    select extract(epoch from (confirmed_at - submitted_at)) * 1000 as ms
    from app.wallet_transactions where id = any(${ids}::uuid[]) and confirmed_at is not null`;
  return {
    total,
    seconds: (finished - started) / 1000,
    createdSeconds: (lastCreated - started) / 1000,
    submittedSeconds: (submittedAt - started) / 1000,
    cpu,
    latency: summarize(latencies.map((r) => Number(r.ms))),
    jobs: await transferJobs(run, ids),
    gapless: await checkNonces(run, senders, ids, opts),
  };
}

/** Until every transfer is confirmed or failed, 120 s at most. */
async function waitForConfirmations(
  run: WalletBench,
  ids: string[],
  total: number,
  started: number,
): Promise<void> {
  for (;;) {
    const [{ done, failedTx }] = await run.bench.deps.sql<{ done: number; failedTx: number }[]>`
      select count(*) filter (where status = 'confirmed')::int as done,
             count(*) filter (where status = 'failed')::int as "failedTx"
      from app.wallet_transactions where id = any(${ids}::uuid[])`;
    if (failedTx) run.problems.push(`${failedTx} transfers failed`);
    if (done + failedTx >= total) return;
    if (performance.now() - started > 120_000) {
      run.problems.push(`only ${done} of ${total} transfers confirmed after 120 s`);
      return;
    }
    await sleep(10);
  }
}

/**
 * How the job worker got there: a broadcast each, and the receipt checks that had to wait.
 * (created_at is the enqueueing transaction's start; started_at the claim's.)
 */
async function transferJobs(run: WalletBench, ids: string[]): Promise<string> {
  const jobRows = await run.bench.deps.sql<
    { kind: string; jobs: number; waited: number; ran: number }[]
  >`
    select kind, count(*)::int as jobs,
           percentile_cont(0.5) within group (
             order by extract(epoch from started_at - greatest(created_at, run_at)))
             * 1000 as waited,
           percentile_cont(0.5) within group (
             order by extract(epoch from finished_at - started_at)) * 1000 as ran
    from app_private.jobs
    where kind like 'wallet.%' and payload ->> 'transactionId' = any(${ids}::text[])
    group by kind order by kind`;
  return jobRows.map((r) =>
    `${r.kind} ${r.jobs} (p50 ${ms(r.waited)} due to claimed, ${ms(r.ran)} running)`
  ).join(", ");
}

/** Nonces: 0 … n-1 per wallet, each once, and the chain agrees. */
async function checkNonces(
  run: WalletBench,
  senders: Wallet[],
  ids: string[],
  opts: Options,
): Promise<boolean> {
  const nonceRows = await run.bench.deps.sql<{ user_id: string; nonces: number[] }[]>`
    select user_id, array_agg(nonce::int order by nonce) as nonces from app.wallet_transactions
    where id = any(${ids}::uuid[]) group by user_id`;
  const expected = Array.from({ length: opts.transfersEach }, (_, i) => i).join(",");
  const gapless = nonceRows.length === senders.length &&
    nonceRows.every((r) => r.nonces.join(",") === expected);
  if (!gapless) run.problems.push("nonces are not 0 … n-1 in every wallet");
  const client = createPublicClient({ transport: http(run.chain.url) });
  for (const sender of senders) {
    const count = await client.getTransactionCount({ address: sender.address });
    if (count !== opts.transfersEach) {
      run.problems.push(`${sender.address}: the chain counts ${count} transactions`);
    }
  }
  return gapless;
}

function printReport(
  opts: Options,
  balances: Balances,
  transfers: Transfers,
  problems: string[],
): void {
  const { rows } = balances;
  console.log(
    `\nwrk -t1 -c${opts.connections} -d${opts.duration}s (after ${opts.warmup} s warm-up), ${opts.wallets} wallets in turn, loopback\n`,
  );
  console.log(table([
    ["endpoint", "req/s", "p50", "p99", "requests"],
    ...rows.map((r) => [r.label, int(r.rps), ms(r.p50), ms(r.p99), int(r.requests)]),
  ]));
  console.log('\n  CPU while measuring, in % of one core ("rest": other processes)');
  // No wrk during the transfers: "-" rather than its 0%.
  const { wrk: _, ...transferPct } = transfers.cpu.pct;
  console.log(cpuTable(
    "run",
    { server: "server", postgres: "postgres", anvil: "anvil", wrk: "wrk" },
    [
      ...rows.map((r) => [r.label, r.cpu] as const),
      ["transfers end to end", { ...transfers.cpu, pct: transferPct }] as const,
    ],
  ));
  const rpcTotal = [...balances.calls.values()].reduce((a, b) => a + b, 0);
  const perRequest = balances.served ? rpcTotal / balances.served : 0;
  const methods = [...balances.calls.entries()].map(([m, n]) => `${m} ${int(n)}`).join(", ");
  console.log(
    `\n  node calls during the balance run: ${methods || "none"}; balance answers ${
      int(balances.served)
    }`,
  );
  const t = transfers;
  const rate = t.total / t.seconds;
  console.log(
    `\n  ${t.total} transfers (${opts.transferWallets} wallets × ${opts.transfersEach}): all created after ` +
      `${t.createdSeconds.toFixed(2)} s, all confirmed by their owners after ` +
      `${t.submittedSeconds.toFixed(2)} s, all mined and confirmed after ` +
      `${t.seconds.toFixed(2)} s\n  jobs run for them: ${t.jobs}\n  confirm → confirmed: p50 ${
        ms(t.latency?.p50)
      }, ` +
      `p99 ${ms(t.latency?.p99)}, max ${ms(t.latency?.max)}; nonces ${
        t.gapless ? "gapless" : "NOT gapless"
      }`,
  );
  const [balance, ceiling] = rows;
  console.log("\n  targets");
  console.log(figuresTable([
    {
      label: "one node call per balance request",
      value: `${perRequest.toFixed(3)} calls/request`,
      ok: perRequest === 1,
    },
    {
      label: `transfers end to end at least ${TRANSFER_TARGET_PER_SECOND}/s`,
      value: `${rate.toFixed(0)}/s`,
      ok: rate >= TRANSFER_TARGET_PER_SECOND,
    },
    {
      label: `balance against the bare multicall ceiling (${int(ceiling.rps)} req/s)`,
      value: `${((balance.rps / ceiling.rps) * 100).toFixed(0)}%`,
    },
  ]));
  if (perRequest !== 1) problems.push(`${perRequest.toFixed(3)} node calls per balance request`);
  const warning = busyWarning([
    ...rows.map((r) => [r.label, r.cpu] as const),
    ["transfers", t.cpu] as const,
  ]);
  if (warning) console.log(warning);
}
