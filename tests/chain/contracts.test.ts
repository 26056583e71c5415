/**
 * The contracts compile (from the cache, and cold into an empty cache with the same result),
 * deploy on the run's chain, and behave: token metadata and minting by the owner only, funding
 * of given addresses, the ERC-721 token URIs and the ERC-1155 uri as self-contained data: URIs.
 */
import assert from "node:assert/strict";
import {
  type Address,
  createWalletClient,
  erc1155Abi,
  erc20Abi,
  erc721Abi,
  http,
  parseEther,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { compileContracts, CONTRACT_NAMES } from "../../stack/chain/compile.ts";
import { deployPlatform, fundAddresses, type PlatformContracts } from "../../stack/chain/deploy.ts";
import { test } from "../support/helpers.ts";
import { publicClient, testRpcUrl } from "./support.ts";

let deployed: Promise<PlatformContracts> | null = null;
/** One deployment for the tests in this file. */
const platform = () => deployed ??= deployPlatform({ rpcUrl: testRpcUrl() });

/** The JSON inside a `data:application/json;base64,` URI. */
function dataJson(uri: string): Record<string, unknown> {
  const prefix = "data:application/json;base64,";
  assert.ok(uri.startsWith(prefix), `a JSON data: URI, got ${uri.slice(0, 40)}`);
  return JSON.parse(atob(uri.slice(prefix.length)));
}

test("[chain] the contracts compile; a second compile comes from the cache; a cold compile gives the same bytecode", async () => {
  const first = await compileContracts();
  const second = await compileContracts();
  assert.equal(second.cached, true);
  assert.equal(second.artifacts.key, first.artifacts.key);
  assert.ok(second.ms < 1_000, `a cached compile takes ${Math.round(second.ms)} ms`);
  assert.match(second.artifacts.compiler, /^0\.8\.37\+commit\./);
  for (const name of CONTRACT_NAMES) {
    assert.match(second.artifacts.contracts[name].bytecode, /^0x[0-9a-f]{100,}$/, name);
    assert.ok(second.artifacts.contracts[name].abi.length > 0, name);
  }

  const cacheDir = await Deno.makeTempDir({ prefix: "agora-contracts-" });
  try {
    const cold = await compileContracts({ cacheDir });
    assert.equal(cold.cached, false);
    assert.equal(cold.artifacts.key, first.artifacts.key, "the key depends on the inputs only");
    for (const name of CONTRACT_NAMES) {
      assert.equal(
        cold.artifacts.contracts[name].bytecode,
        first.artifacts.contracts[name].bytecode,
      );
    }
    assert.deepEqual(
      cold.warnings.filter((w) => w.includes("--> contracts/")),
      [],
      "our sources compile without warnings",
    );
    const again = await compileContracts({ cacheDir });
    assert.equal(again.cached, true, "the cold compile filled the cache");
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
  }
});

test("[chain] deployPlatform deploys every contract; the tokens answer as ERC-20s owned by the deployer", async () => {
  const contracts = await platform();
  const client = publicClient();
  assert.equal(contracts.chainId, 31337);
  assert.equal(contracts.erc721.length, 1);
  assert.equal(contracts.erc1155.length, 1);
  const all = [
    contracts.multicall3,
    contracts.utility,
    contracts.governance,
    contracts.staking,
    ...contracts.erc721,
    ...contracts.erc1155,
  ];
  assert.equal(new Set(all).size, all.length);
  for (const address of all) {
    assert.match(address, /^0x[0-9a-fA-F]{40}$/);
    const code = await client.getCode({ address });
    assert.ok(code && code.length > 2, `code at ${address}`);
  }
  const expected: [Address, string, string][] = [
    [contracts.utility, "Agora Utility", "AGU"],
    [contracts.governance, "Agora Governance", "AGV"],
    [contracts.staking, "Agora Staking Reward", "AGS"],
  ];
  for (const [address, name, symbol] of expected) {
    const read = <T>(functionName: "name" | "symbol" | "decimals" | "totalSupply") =>
      client.readContract({ address, abi: erc20Abi, functionName }) as Promise<T>;
    assert.equal(await read<string>("name"), name);
    assert.equal(await read<string>("symbol"), symbol);
    assert.equal(await read<number>("decimals"), 18);
    assert.equal(typeof await read<bigint>("totalSupply"), "bigint");
  }

  // Only the owner mints: the same call from another account reverts with Ownable's error.
  const { abi } = (await compileContracts()).artifacts.contracts.AgoraUtilityToken;
  const [deployer] = await createWalletClient({ transport: http(testRpcUrl()) }).getAddresses();
  const stranger = privateKeyToAccount(generatePrivateKey()).address;
  const mint = (account: Address) =>
    client.simulateContract({
      address: contracts.utility,
      abi,
      functionName: "mint",
      args: [stranger, 1n],
      account,
    });
  await mint(deployer);
  await assert.rejects(mint(stranger), /OwnableUnauthorizedAccount/);
});

test("[chain] fundAddresses gives native currency, each token and NFTs; skipFunded funds an address once", async () => {
  const contracts = await platform();
  const client = publicClient();
  const a = privateKeyToAccount(generatePrivateKey()).address;
  const b = privateKeyToAccount(generatePrivateKey()).address;
  const result = await fundAddresses({
    rpcUrl: testRpcUrl(),
    contracts,
    addresses: [a, b],
    native: parseEther("2"),
    tokens: parseEther("50"),
    erc721PerAddress: 2,
  });
  assert.deepEqual(result.funded, [a, b]);
  assert.equal(result.erc721.length, 4);
  for (const address of [a, b]) {
    assert.equal(await client.getBalance({ address }), parseEther("2"));
    for (const token of [contracts.utility, contracts.governance, contracts.staking]) {
      const balance = await client.readContract({
        address: token,
        abi: erc20Abi,
        functionName: "balanceOf",
        args: [address],
      });
      assert.equal(balance, parseEther("50"));
    }
    const nfts = await client.readContract({
      address: contracts.erc721[0],
      abi: erc721Abi,
      functionName: "balanceOf",
      args: [address],
    });
    assert.equal(nfts, 2n);
    const badges = await client.readContract({
      address: contracts.erc1155[0],
      abi: erc1155Abi,
      functionName: "balanceOfBatch",
      args: [[address, address, address], [1n, 2n, 3n]],
    });
    assert.deepEqual(badges, [5n, 2n, 1n]);
  }
  for (const minted of result.erc721) {
    const owner = await client.readContract({
      address: minted.contract,
      abi: erc721Abi,
      functionName: "ownerOf",
      args: [minted.tokenId],
    });
    assert.equal(owner, minted.owner);
  }

  const again = await fundAddresses({
    rpcUrl: testRpcUrl(),
    contracts,
    addresses: [a],
    skipFunded: true,
  });
  assert.deepEqual(again, { funded: [], skipped: [a], erc721: [] });
  assert.equal(await client.getBalance({ address: a }), parseEther("2"), "nothing sent twice");
});

test("[chain] the ERC-721 tokenURI and the ERC-1155 uri answer self-contained JSON metadata", async () => {
  const contracts = await platform();
  const client = publicClient();
  const holder = privateKeyToAccount(generatePrivateKey()).address;
  const { erc721 } = await fundAddresses({
    rpcUrl: testRpcUrl(),
    contracts,
    addresses: [holder],
    native: 0n,
    tokens: 0n,
    erc721PerAddress: 1,
  });
  const tokenId = erc721[0].tokenId;
  const uri = await client.readContract({
    address: contracts.erc721[0],
    abi: erc721Abi,
    functionName: "tokenURI",
    args: [tokenId],
  });
  const meta = dataJson(uri);
  assert.equal(meta.name, `Agora Collectibles #${tokenId}`);
  assert.equal(typeof meta.description, "string");
  assert.match(String(meta.image), /^data:image\/svg\+xml;base64,/);
  const svg = atob(String(meta.image).slice("data:image/svg+xml;base64,".length));
  assert.match(svg, new RegExp(`^<svg [^>]*>.*#${tokenId}</text></svg>$`));
  await assert.rejects(
    client.readContract({
      address: contracts.erc721[0],
      abi: erc721Abi,
      functionName: "tokenURI",
      args: [999_999n],
    }),
    "no metadata for a token that does not exist",
  );

  const uriAbi = [{
    type: "function",
    name: "uri",
    stateMutability: "view",
    inputs: [{ name: "id", type: "uint256" }],
    outputs: [{ name: "", type: "string" }],
  }] as const;
  const gold = dataJson(
    await client.readContract({
      address: contracts.erc1155[0],
      abi: uriAbi,
      functionName: "uri",
      args: [3n],
    }),
  );
  assert.equal(gold.name, "Gold badge");
  assert.match(String(gold.image), /^data:image\/svg\+xml;base64,/);
  const other = dataJson(
    await client.readContract({
      address: contracts.erc1155[0],
      abi: uriAbi,
      functionName: "uri",
      args: [42n],
    }),
  );
  assert.equal(other.name, "Item #42");
});
