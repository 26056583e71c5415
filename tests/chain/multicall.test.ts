/**
 * Our Multicall3 as viem uses it: `multicall` with `multicallAddress` set to our contract encodes
 * `aggregate3`, so native balances (`getEthBalance`) and token balances come back in one
 * `eth_call`, each result equal to its single read; a failing call is reported per call or, when
 * failures are not allowed, fails the batch. The legacy entry points answer too.
 */
import assert from "node:assert/strict";
import {
  type Address,
  createPublicClient,
  erc20Abi,
  http,
  multicall3Abi,
  parseEther,
  toFunctionSelector,
} from "viem";
import type { AbiFunction } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { compileContracts } from "../../stack/chain/compile.ts";
import { deployPlatform, fundAddresses, type PlatformContracts } from "../../stack/chain/deploy.ts";
import { test } from "../support/helpers.ts";
import { testRpcUrl } from "./support.ts";

/** A client that records the JSON-RPC methods it sends and where its calls go. */
function countingClient() {
  const methods: string[] = [];
  const targets: string[] = [];
  const client = createPublicClient({
    transport: http(testRpcUrl(), {
      onFetchRequest: async (request) => {
        const body = await request.clone().json();
        for (const call of Array.isArray(body) ? body : [body]) {
          methods.push(call.method);
          if (call.method === "eth_call") targets.push(call.params[0].to.toLowerCase());
        }
      },
    }),
  });
  return { client, methods, targets };
}

let deployed: Promise<{ contracts: PlatformContracts; holders: Address[] }> | null = null;
const setup = () =>
  deployed ??= (async () => {
    const contracts = await deployPlatform({ rpcUrl: testRpcUrl() });
    const holders = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey()).address);
    await fundAddresses({
      rpcUrl: testRpcUrl(),
      contracts,
      addresses: holders.slice(0, 2),
      native: parseEther("3"),
      tokens: parseEther("7"),
      erc721PerAddress: 0,
    });
    return { contracts, holders };
  })();

test("[chain] our Multicall3 has every function viem's multicall ABI names, with the same selectors", async () => {
  const { abi } = (await compileContracts()).artifacts.contracts.Multicall3;
  const ours = new Set(
    abi.filter((item): item is AbiFunction => item.type === "function").map((f) =>
      toFunctionSelector(f)
    ),
  );
  for (const fn of multicall3Abi.filter((item) => item.type === "function")) {
    assert.ok(ours.has(toFunctionSelector(fn as AbiFunction)), `${fn.name} is implemented`);
  }
  // The rest of the widely used Multicall3 interface.
  for (
    const signature of [
      "aggregate((address,bytes)[])",
      "tryAggregate(bool,(address,bytes)[])",
      "tryBlockAndAggregate(bool,(address,bytes)[])",
      "blockAndAggregate((address,bytes)[])",
      "aggregate3Value((address,bool,uint256,bytes)[])",
      "getBlockHash(uint256)",
      "getBlockNumber()",
      "getCurrentBlockCoinbase()",
      "getCurrentBlockDifficulty()",
      "getCurrentBlockGasLimit()",
      "getLastBlockHash()",
      "getBasefee()",
      "getChainId()",
    ]
  ) assert.ok(ours.has(toFunctionSelector(signature)), signature);
});

test("[chain] viem's multicall through our Multicall3 reads native and token balances in one eth_call", async () => {
  const { contracts, holders } = await setup();
  const { client, methods, targets } = countingClient();
  const tokens = [contracts.utility, contracts.governance, contracts.staking];
  const calls = holders.flatMap((holder) => [
    {
      address: contracts.multicall3,
      abi: multicall3Abi,
      functionName: "getEthBalance" as const,
      args: [holder] as const,
    },
    ...tokens.map((token) => ({
      address: token,
      abi: erc20Abi,
      functionName: "balanceOf" as const,
      args: [holder] as const,
    })),
  ]);
  const results = await client.multicall({
    contracts: calls,
    multicallAddress: contracts.multicall3,
  });
  assert.deepEqual(methods, ["eth_call"], "one request, one eth_call");
  assert.deepEqual(targets, [contracts.multicall3.toLowerCase()], "to our Multicall3");
  assert.equal(results.length, holders.length * 4);
  assert.ok(results.every((r) => r.status === "success"));
  const values = results.map((r) => r.result);
  assert.deepEqual(values.slice(0, 4), [parseEther("3"), ...tokens.map(() => parseEther("7"))]);
  assert.deepEqual(values.slice(4, 8), [parseEther("3"), ...tokens.map(() => parseEther("7"))]);
  assert.deepEqual(values.slice(8), [0n, 0n, 0n, 0n], "an unfunded address reads as zero");

  // Each batched result equals the same read made on its own.
  const plain = createPublicClient({ transport: http(testRpcUrl()) });
  assert.equal(results[0].result, await plain.getBalance({ address: holders[0] }));
  assert.equal(
    results[1].result,
    await plain.readContract({
      address: contracts.utility,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [holders[0]],
    }),
  );
});

test("[chain] a failing call in a multicall is reported on its own; with allowFailure false the batch fails", async () => {
  const { contracts, holders } = await setup();
  const { client, methods } = countingClient();
  const notAToken = contracts.multicall3; // has code, but no balanceOf
  const contractsToCall = [
    {
      address: contracts.utility,
      abi: erc20Abi,
      functionName: "balanceOf" as const,
      args: [holders[0]] as const,
    },
    {
      address: notAToken,
      abi: erc20Abi,
      functionName: "balanceOf" as const,
      args: [holders[0]] as const,
    },
  ];
  const results = await client.multicall({
    contracts: contractsToCall,
    multicallAddress: contracts.multicall3,
  });
  assert.equal(methods.length, 1);
  assert.equal(results[0].status, "success");
  assert.equal(results[0].result, parseEther("7"));
  assert.equal(results[1].status, "failure");

  await assert.rejects(
    client.multicall({
      contracts: contractsToCall,
      multicallAddress: contracts.multicall3,
      allowFailure: false,
    }),
  );

  // aggregate3 itself reverts when a call that may not fail fails.
  await assert.rejects(
    client.readContract({
      address: contracts.multicall3,
      abi: multicall3Abi,
      functionName: "aggregate3",
      args: [[{ target: notAToken, allowFailure: false, callData: "0x70a08231" }]],
    }),
  );
});

test("[chain] the legacy aggregate and the block getters answer", async () => {
  const { contracts } = await setup();
  const { abi } = (await compileContracts()).artifacts.contracts.Multicall3;
  const client = createPublicClient({ transport: http(testRpcUrl()) });
  const read = (functionName: string, args: unknown[] = []) =>
    client.readContract({ address: contracts.multicall3, abi, functionName, args });
  const head = await client.getBlockNumber();
  const [blockNumber, returnData] = await read("aggregate", [[{
    target: contracts.multicall3,
    callData: toFunctionSelector("getChainId()"),
  }]]) as [bigint, `0x${string}`[]];
  assert.ok(blockNumber >= head);
  assert.equal(BigInt(returnData[0]), 31337n);
  assert.equal(await read("getChainId"), 31337n);
  assert.ok((await read("getCurrentBlockTimestamp") as bigint) > 1_600_000_000n);
  assert.ok((await read("getCurrentBlockGasLimit") as bigint) > 0n);
});
