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
  cpuUse,
  int,
  ms,
  pct,
  postgresTicks,
  reapedTicksOf,
  removeWrkScript,
  sampleCpu,
  signInByMagicLink,
  summarize,
  table,
  ticksOf,
  verdict,
  wrk,
  wrkScript,
} from "./stats.ts";
import { type BenchServer, startBenchServer, stopBenchServer } from "./bench-server.ts";
import { freePort } from "../../stack/postgres.ts";
import { throwawayCluster } from "../../stack/database.ts";
import { throwawayChain } from "../../stack/chain/anvil.ts";
import { ensurePlatformContracts } from "../../stack/chain/local.ts";
import { fundAddresses, type PlatformContracts } from "../../stack/chain/deploy.ts";
import { createChainAccess, multicallAbi } from "../../functions/api/wallet/chain.ts";
import { startChainFollower } from "../../functions/api/wallet/follower.ts";

const TRANSFER_TARGET_PER_SECOND = 100;
/** Other work on the machine above this share of one core makes the figures unreliable. */
const BUSY_MACHINE_PCT = 15;
const POOL_SIZE = 10;

interface Options {
  duration: number;
  warmup: number;
  connections: number;
  wallets: number;
  transferWallets: number;
  transfersEach: number;
}

function parseOptions(args: string[]): Options {
  const opts: Options = {
    duration: 8,
    warmup: 2,
    connections: 32,
    wallets: 16,
    transferWallets: 10,
    transfersEach: 10,
  };
  for (let i = 0; i < args.length; i++) {
    const [name, inline] = args[i].split("=", 2);
    const value = () => inline ?? args[++i];
    const number = () => {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive whole number`);
      return n;
    };
    if (name === "--duration") opts.duration = number();
    else if (name === "--warmup") opts.warmup = number();
    else if (name === "--connections" || name === "-c") opts.connections = number();
    else if (name === "--wallets") opts.wallets = number();
    else if (name === "--transfers") {
      const match = /^(\d+)x(\d+)$/.exec(value() ?? "");
      if (!match) throw new Error("--transfers needs WALLETSxEACH, e.g. 10x10");
      opts.transferWallets = Number(match[1]);
      opts.transfersEach = Number(match[2]);
    } else throw new Error(`unknown option ${args[i]} (see tests/bench/wallet.ts)`);
  }
  return opts;
}

const say = (line: string) => console.log(`[bench] ${line}`);

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

interface Row {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  cpu: ReturnType<typeof cpuUse>;
}

export async function main(args: string[]): Promise<void> {
  const opts = parseOptions(args);
  say("throwaway cluster and chain");
  const cluster = await throwawayCluster();
  const chain = await throwawayChain();
  const calls = new Map<string, number>();
  let bench: BenchServer | null = null;
  let follower: { stop(): Promise<void> } | null = null;
  const problems: string[] = [];
  try {
    const port = freePort();
    bench = await startBenchServer(cluster, port, POOL_SIZE, (deps) => {
      // Every call the server sends to the node, counted by method.
      deps.chain = createChainAccess(chain.url, {
        onRequest: (method) => calls.set(method, (calls.get(method) ?? 0) + 1),
      });
      // The follower is started for the transfers only: its reads would blur the count.
      return { follower: false };
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

    // Wallets: each created at its user's first sign-in, then funded.
    const signIn = async (i: number, prefix: string) => {
      const email = `${prefix}-${i}@bench.example`;
      await bench!.deps
        .sql`insert into app.users (email, name, role) values (${email}, ${email}, 'MEMBER')`;
      const session = await signInByMagicLink(bench!.base, bench!.deps.sql, email);
      const [wallet] = await bench!.deps.sql<{ address: Address }[]>`
        select address from app.wallets where user_id = ${session.user.id}`;
      return { token: session.accessToken, userId: session.user.id, address: wallet.address };
    };
    const readers: { token: string; userId: string; address: Address }[] = [];
    for (let i = 0; i < opts.wallets; i++) readers.push(await signIn(i, "reader"));
    await fundAddresses({
      rpcUrl: chain.url,
      contracts,
      addresses: readers.map((r) => r.address),
      erc721PerAddress: 0,
      erc1155: { ids: [], amounts: [] },
    });
    say(`${readers.length} wallets created at sign-in and funded`);

    // 1. Balances ------------------------------------------------------------------------------
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
    const rows: Row[] = [];
    const run = async (label: string, url: string, script: string) => {
      await wrk(url, script, opts.connections, opts.warmup);
      let before = sample();
      let result = await wrk(url, script, opts.connections, opts.duration);
      let cpu = cpuUse(before, sample());
      // Other work on the machine lowers every figure: wait a little and measure again, twice at
      // most (the table shows what was left).
      for (let retry = 0; cpu.rest > BUSY_MACHINE_PCT && retry < 2; retry++) {
        say(`other work took ${cpu.rest.toFixed(0)}% of a core; measuring ${label} again in 5 s`);
        await new Promise((r) => setTimeout(r, 5_000));
        before = sample();
        result = await wrk(url, script, opts.connections, opts.duration);
        cpu = cpuUse(before, sample());
      }
      rows.push({
        label,
        rps: result.rps,
        p50: result.p50Ms,
        p99: result.p99Ms,
        requests: result.requests,
        non2xx: result.non2xx,
        cpu,
      });
      if (result.non2xx) problems.push(`${label}: ${result.non2xx} answers outside 2xx`);
      if (result.socketErrors) problems.push(`${label}: socket errors ${result.socketErrors}`);
    };
    // Warm the process (the chain-id check, the tokens' metadata), then count from zero.
    await fetch(`${bench.base}/api/wallet/balance`, {
      headers: { authorization: `Bearer ${readers[0].token}` },
    }).then((r) => r.body?.cancel());
    await bench.deps.accessLog.flush();
    const [{ mark }] = await bench.deps.sql<{ mark: string }[]>`
      select coalesce(max(id), 0)::text as mark from app.access_logs`;
    calls.clear();
    await run("GET /api/wallet/balance", `${bench.base}/api/wallet/balance`, balanceScript);
    await new Promise((r) => setTimeout(r, 500)); // answers wrk stopped waiting for
    await bench.deps.accessLog.flush();
    const [{ served, failed }] = await bench.deps.sql<{ served: number; failed: number }[]>`
      select count(*)::int as served, count(*) filter (where status <> 200)::int as failed
      from app.access_logs where id > ${mark}::bigint and route = '/api/wallet/balance'`;
    const rpcTotal = [...calls.values()].reduce((a, b) => a + b, 0);
    const balanceCalls = new Map(calls);
    if (failed) problems.push(`GET /api/wallet/balance: ${failed} answers outside 200`);
    await run("eth_call multicall straight to anvil (ceiling)", chain.url, ceilingScript);
    await removeWrkScript(balanceScript);
    await removeWrkScript(ceilingScript);

    // 2. Transfers end to end -------------------------------------------------------------------
    follower = startChainFollower(bench.deps);
    const senders: { token: string; userId: string; address: Address }[] = [];
    for (let i = 0; i < opts.transferWallets; i++) senders.push(await signIn(i, "sender"));
    await fundAddresses({
      rpcUrl: chain.url,
      contracts,
      addresses: senders.map((s) => s.address),
      native: parseEther("10"),
      erc721PerAddress: 0,
      erc1155: { ids: [], amounts: [] },
    });
    say(`${senders.length} sending wallets created at sign-in and funded`);
    const post = async (token: string, path: string, body?: unknown) => {
      const response = await fetch(`${bench!.base}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await response.json();
      if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };
    const total = opts.transferWallets * opts.transfersEach;
    const before = sample();
    const started = performance.now();
    const ids: string[] = [];
    let lastCreated = started;
    // Each wallet creates its transfers, then confirms them all at once; all wallets together.
    await Promise.all(senders.map(async (sender, i) => {
      const to = senders[(i + 1) % senders.length].address;
      const created = await Promise.all(
        Array.from(
          { length: opts.transfersEach },
          (_, n) =>
            post(sender.token, "/api/wallet/transfer", {
              to,
              token: "AGU",
              amount: String(1000 + n),
            }),
        ),
      );
      ids.push(...created.map((c) => c.id));
      lastCreated = Math.max(lastCreated, performance.now());
      await Promise.all(
        created.map((c) => post(sender.token, `/api/wallet/transactions/${c.id}/confirm`)),
      );
    }));
    const submittedAt = performance.now();
    for (;;) {
      const [{ done, failedTx }] = await bench.deps.sql<{ done: number; failedTx: number }[]>`
        select count(*) filter (where status = 'confirmed')::int as done,
               count(*) filter (where status = 'failed')::int as "failedTx"
        from app.wallet_transactions where id = any(${ids}::uuid[])`;
      if (failedTx) problems.push(`${failedTx} transfers failed`);
      if (done + failedTx >= total) break;
      if (performance.now() - started > 120_000) {
        problems.push(`only ${done} of ${total} transfers confirmed after 120 s`);
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const finished = performance.now();
    const transferCpu = cpuUse(before, sample());
    const latencies = await bench.deps.sql<{ ms: number }[]>`
      select extract(epoch from (confirmed_at - submitted_at)) * 1000 as ms
      from app.wallet_transactions where id = any(${ids}::uuid[]) and confirmed_at is not null`;
    const latency = summarize(latencies.map((r) => Number(r.ms)));
    // How the job worker got there: a broadcast each, and the receipt checks that had to wait.
    // (created_at is the enqueueing transaction's start; started_at the claim's.)
    const jobRows = await bench.deps.sql<
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
    const jobs = jobRows.map((r) =>
      `${r.kind} ${r.jobs} (p50 ${ms(r.waited)} due to claimed, ${ms(r.ran)} running)`
    ).join(", ");

    // Nonces: 0 … n-1 per wallet, each once, and the chain agrees.
    const nonceRows = await bench.deps.sql<{ user_id: string; nonces: number[] }[]>`
      select user_id, array_agg(nonce::int order by nonce) as nonces from app.wallet_transactions
      where id = any(${ids}::uuid[]) group by user_id`;
    const expected = Array.from({ length: opts.transfersEach }, (_, i) => i).join(",");
    const gapless = nonceRows.length === senders.length &&
      nonceRows.every((r) => r.nonces.join(",") === expected);
    if (!gapless) problems.push("nonces are not 0 … n-1 in every wallet");
    const client = createPublicClient({ transport: http(chain.url) });
    for (const sender of senders) {
      const count = await client.getTransactionCount({ address: sender.address });
      if (count !== opts.transfersEach) {
        problems.push(`${sender.address}: the chain counts ${count} transactions`);
      }
    }
    if (bench.errors.count) {
      problems.push(`server errors: ${bench.errors.count} (${bench.errors.samples.join("; ")})`);
    }

    // Printing ---------------------------------------------------------------------------------
    console.log(
      `\nwrk -t1 -c${opts.connections} -d${opts.duration}s (after ${opts.warmup} s warm-up), ${opts.wallets} wallets in turn, loopback\n`,
    );
    console.log(table([
      ["endpoint", "req/s", "p50", "p99", "requests"],
      ...rows.map((r) => [r.label, int(r.rps), ms(r.p50), ms(r.p99), int(r.requests)]),
    ]));
    console.log('\n  CPU while measuring, in % of one core ("rest": other processes)');
    console.log(table([
      ["run", "server", "postgres", "anvil", "wrk", "irq", "rest", "idle"],
      ...rows.map((r) => [
        r.label,
        pct(r.cpu.pct.server),
        pct(r.cpu.pct.postgres),
        pct(r.cpu.pct.anvil),
        pct(r.cpu.pct.wrk),
        pct(r.cpu.irq),
        pct(r.cpu.rest),
        pct(r.cpu.idle),
      ]),
      [
        "transfers end to end",
        pct(transferCpu.pct.server),
        pct(transferCpu.pct.postgres),
        pct(transferCpu.pct.anvil),
        "-",
        pct(transferCpu.irq),
        pct(transferCpu.rest),
        pct(transferCpu.idle),
      ],
    ]));
    const perRequest = served ? rpcTotal / served : 0;
    const methods = [...balanceCalls.entries()].map(([m, n]) => `${m} ${int(n)}`).join(", ");
    console.log(
      `\n  node calls during the balance run: ${methods || "none"}; balance answers ${int(served)}`,
    );
    const seconds = (finished - started) / 1000;
    const rate = total / seconds;
    console.log(
      `\n  ${total} transfers (${opts.transferWallets} wallets × ${opts.transfersEach}): all created after ` +
        `${((lastCreated - started) / 1000).toFixed(2)} s, all confirmed by their owners after ` +
        `${((submittedAt - started) / 1000).toFixed(2)} s, all mined and confirmed after ` +
        `${seconds.toFixed(2)} s\n  jobs run for them: ${jobs}\n  confirm → confirmed: p50 ${
          ms(latency?.p50)
        }, ` +
        `p99 ${ms(latency?.p99)}, max ${ms(latency?.max)}; nonces ${
          gapless ? "gapless" : "NOT gapless"
        }`,
    );
    const balance = rows[0];
    const ceiling = rows[1];
    console.log("\n  targets");
    console.log(table([
      [
        "one node call per balance request",
        `${perRequest.toFixed(3)} calls/request`,
        verdict(perRequest === 1),
      ],
      [
        `transfers end to end at least ${TRANSFER_TARGET_PER_SECOND}/s`,
        `${rate.toFixed(0)}/s`,
        verdict(rate >= TRANSFER_TARGET_PER_SECOND),
      ],
      [
        `balance against the bare multicall ceiling (${int(ceiling.rps)} req/s)`,
        `${((balance.rps / ceiling.rps) * 100).toFixed(0)}%`,
        "",
      ],
    ]));
    if (perRequest !== 1) problems.push(`${perRequest.toFixed(3)} node calls per balance request`);
    const busy = [
      ...rows.map((r) => [r.label, r.cpu] as const),
      ["transfers", transferCpu] as const,
    ]
      .filter(([, cpu]) => cpu.rest > BUSY_MACHINE_PCT).map(([label]) => label);
    if (busy.length) {
      console.log(
        `  WARNING other work used the CPU during ${busy.join(", ")}: those figures are low; ` +
          "rerun on a quiet machine",
      );
    }
    for (const p of problems) console.log(`  FAILED ${p}`);
  } finally {
    await follower?.stop();
    if (bench) await stopBenchServer(bench);
    await chain.stop();
    await cluster.dispose();
  }
  if (problems.length) Deno.exit(1);
}
