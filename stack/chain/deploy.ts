/**
 * Deploying the platform's contracts and handing out test funds, through viem. The same code
 * deploys to the local anvil (from one of its unlocked, funded development accounts: no key in
 * this process) and to a real network (pass a viem account made from the deployer's key).
 *
 * The deployer owns the three tokens and the two collections, so it is also the account that
 * mints: `fundAddresses` gives addresses native currency, each platform token and demo NFTs.
 */
import {
  type Account,
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  parseEther,
  parseEventLogs,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from "viem";
import { type Artifacts, compileContracts, type ContractName } from "./compile.ts";

/** Where the platform's contracts live: the shape of the configuration's `wallet.contracts`, plus the chain. */
export interface PlatformContracts {
  chainId: number;
  multicall3: Address;
  utility: Address;
  governance: Address;
  staking: Address;
  erc721: Address[];
  erc1155: Address[];
}

export interface ChainClients {
  publicClient: PublicClient;
  walletClient: WalletClient;
  /** The sending account: a local account (signs here) or an address the node signs for. */
  account: Account | Address;
  chainId: number;
}

/**
 * Clients for `rpcUrl`. Without `account`, the node's first account (`eth_accounts`) sends: on
 * anvil that is a funded development account it signs for itself.
 */
export async function chainClients(
  rpcUrl: string,
  account?: Account | Address,
): Promise<ChainClients> {
  const loopback = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(rpcUrl);
  // A local node mines each transaction at once: poll receipts quickly there, gently elsewhere.
  const pollingInterval = loopback ? 20 : 2_000;
  const probe = createPublicClient({ transport: http(rpcUrl) });
  const chainId = await probe.getChainId();
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const publicClient = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval });
  let sender = account;
  if (!sender) {
    const probeWallet = createWalletClient({ chain, transport: http(rpcUrl) });
    const [first] = await probeWallet.getAddresses();
    if (!first) throw new Error(`the node at ${rpcUrl} has no account to send from; pass one`);
    sender = first;
  }
  const walletClient = createWalletClient({
    chain,
    transport: http(rpcUrl),
    account: sender,
    pollingInterval,
  });
  return { publicClient: publicClient as PublicClient, walletClient, account: sender, chainId };
}

async function mined(clients: ChainClients, hash: Hex, what: string): Promise<TransactionReceipt> {
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${what} reverted (transaction ${hash})`);
  return receipt;
}

/** Deploys one compiled contract and waits for it; returns its address. */
export async function deployContract(
  clients: ChainClients,
  artifacts: Artifacts,
  name: ContractName,
  args: unknown[],
): Promise<Address> {
  const { abi, bytecode } = artifacts.contracts[name];
  const hash = await clients.walletClient.deployContract({
    abi,
    bytecode,
    args,
    account: clients.account,
    chain: clients.walletClient.chain,
  });
  const receipt = await mined(clients, hash, `deploying ${name}`);
  if (!receipt.contractAddress) throw new Error(`deploying ${name} created no contract`);
  return getAddress(receipt.contractAddress);
}

/** Calls a state-changing function of one of our contracts and waits for it to be mined. */
async function write(
  clients: ChainClients,
  artifacts: Artifacts,
  name: ContractName,
  address: Address,
  functionName: string,
  args: unknown[],
): Promise<TransactionReceipt> {
  const hash = await clients.walletClient.writeContract({
    address,
    abi: artifacts.contracts[name].abi,
    functionName,
    args,
    account: clients.account,
    chain: clients.walletClient.chain,
  });
  return await mined(clients, hash, `${name}.${functionName}`);
}

function accountAddress(account: Account | Address): Address {
  return typeof account === "string" ? account : account.address;
}

export interface DeployOptions {
  /** The JSON-RPC endpoint. */
  rpcUrl: string;
  /** Who deploys and then owns (and mints) everything; default: the node's first account. */
  account?: Account | Address;
  /** Compiled contracts; default: `compileContracts()` (cached). */
  artifacts?: Artifacts;
  /** The demo collections to create; default one of each. */
  collections?: { erc721?: { name: string; symbol: string }[]; erc1155?: { name: string }[] };
  /** Addresses to fund right after deploying (see `fundAddresses`). */
  fund?: Omit<FundOptions, "rpcUrl" | "account" | "artifacts" | "contracts">;
}

/**
 * Deploys Multicall3, the utility, governance and staking-rewards tokens and the demo ERC-721
 * and ERC-1155 collections, in that order, each mined before the next is sent; then funds
 * `fund.addresses` if given. Returns the addresses.
 */
export async function deployPlatform(opts: DeployOptions): Promise<PlatformContracts> {
  const artifacts = opts.artifacts ?? (await compileContracts()).artifacts;
  const clients = await chainClients(opts.rpcUrl, opts.account);
  const owner = accountAddress(clients.account);
  const erc721s = opts.collections?.erc721 ?? [{ name: "Agora Collectibles", symbol: "AGC" }];
  const erc1155s = opts.collections?.erc1155 ?? [{ name: "Agora Items" }];

  const contracts: PlatformContracts = {
    chainId: clients.chainId,
    multicall3: await deployContract(clients, artifacts, "Multicall3", []),
    utility: await deployContract(clients, artifacts, "AgoraUtilityToken", [owner]),
    governance: await deployContract(clients, artifacts, "AgoraGovernanceToken", [owner]),
    staking: await deployContract(clients, artifacts, "AgoraStakingRewardToken", [owner]),
    erc721: [],
    erc1155: [],
  };
  for (const c of erc721s) {
    contracts.erc721.push(
      await deployContract(clients, artifacts, "AgoraCollectibles", [c.name, c.symbol, owner]),
    );
  }
  for (const c of erc1155s) {
    contracts.erc1155.push(await deployContract(clients, artifacts, "AgoraItems", [c.name, owner]));
  }
  if (opts.fund?.addresses.length) {
    await fundAddresses({
      ...opts.fund,
      rpcUrl: opts.rpcUrl,
      account: opts.account,
      artifacts,
      contracts,
    });
  }
  return contracts;
}

export interface FundOptions {
  rpcUrl: string;
  /** The account that deployed (and owns) the contracts; default: the node's first account. */
  account?: Account | Address;
  artifacts?: Artifacts;
  contracts: PlatformContracts;
  addresses: Address[];
  /** Native currency for each address, in wei (default 10 ETH; 0 for none). */
  native?: bigint;
  /** Of each platform token, in its smallest unit (default 1,000 tokens of 18 decimals). */
  tokens?: bigint;
  /** Tokens of each ERC-721 collection per address (default 2). */
  erc721PerAddress?: number;
  /** Items of each ERC-1155 collection per address (default 5 bronze, 2 silver, 1 gold badge). */
  erc1155?: { ids: bigint[]; amounts: bigint[] };
  /** Leave out addresses that already hold utility tokens (so a repeated call funds only once). */
  skipFunded?: boolean;
}

export interface FundResult {
  funded: Address[];
  skipped: Address[];
  /** The ERC-721 tokens minted: collection, id and holder. */
  erc721: { contract: Address; tokenId: bigint; owner: Address }[];
}

const erc20BalanceAbi = [{
  type: "function",
  name: "balanceOf",
  stateMutability: "view",
  inputs: [{ name: "account", type: "address" }],
  outputs: [{ name: "", type: "uint256" }],
}] as const;

/**
 * Gives each address native currency, each platform token (minted) and demo NFTs of every
 * configured collection (minted). Transactions go one after another from the owner account.
 */
export async function fundAddresses(opts: FundOptions): Promise<FundResult> {
  const artifacts = opts.artifacts ?? (await compileContracts()).artifacts;
  const clients = await chainClients(opts.rpcUrl, opts.account);
  const { contracts } = opts;
  const native = opts.native ?? parseEther("10");
  const tokens = opts.tokens ?? parseEther("1000");
  const perCollection = opts.erc721PerAddress ?? 2;
  const items = opts.erc1155 ?? { ids: [1n, 2n, 3n], amounts: [5n, 2n, 1n] };
  const result: FundResult = { funded: [], skipped: [], erc721: [] };

  for (const address of opts.addresses) {
    if (opts.skipFunded) {
      const held = await clients.publicClient.readContract({
        address: contracts.utility,
        abi: erc20BalanceAbi,
        functionName: "balanceOf",
        args: [address],
      });
      if (held > 0n) {
        result.skipped.push(address);
        continue;
      }
    }
    if (native > 0n) {
      const hash = await clients.walletClient.sendTransaction({
        to: address,
        value: native,
        account: clients.account,
        chain: clients.walletClient.chain,
      });
      await mined(clients, hash, `sending native currency to ${address}`);
    }
    if (tokens > 0n) {
      await write(clients, artifacts, "AgoraUtilityToken", contracts.utility, "mint", [
        address,
        tokens,
      ]);
      await write(clients, artifacts, "AgoraGovernanceToken", contracts.governance, "mint", [
        address,
        tokens,
      ]);
      await write(clients, artifacts, "AgoraStakingRewardToken", contracts.staking, "mint", [
        address,
        tokens,
      ]);
    }
    for (const collection of contracts.erc721) {
      for (let i = 0; i < perCollection; i++) {
        const receipt = await write(clients, artifacts, "AgoraCollectibles", collection, "mint", [
          address,
        ]);
        const [transfer] = parseEventLogs({
          abi: artifacts.contracts.AgoraCollectibles.abi,
          eventName: "Transfer",
          logs: receipt.logs,
        }) as unknown as { args: { tokenId: bigint } }[];
        result.erc721.push({
          contract: collection,
          tokenId: transfer.args.tokenId,
          owner: address,
        });
      }
    }
    if (items.ids.length) {
      for (const collection of contracts.erc1155) {
        await write(clients, artifacts, "AgoraItems", collection, "mintBatch", [
          address,
          items.ids,
          items.amounts,
        ]);
      }
    }
    result.funded.push(address);
  }
  return result;
}

/**
 * Deploys an ERC-1271 contract wallet (contracts/OwnerWallet.sol) whose signatures are its
 * `owner`'s; for tests of contract-wallet sign-in. Returns its address.
 */
export async function deployOwnerWallet(opts: {
  rpcUrl: string;
  owner: Address;
  account?: Account | Address;
  artifacts?: Artifacts;
}): Promise<Address> {
  const artifacts = opts.artifacts ?? (await compileContracts()).artifacts;
  const clients = await chainClients(opts.rpcUrl, opts.account);
  return await deployContract(clients, artifacts, "OwnerWallet", [opts.owner]);
}

/** The addresses among `addresses` that have no code on the chain (a lost or different chain). */
export async function missingCode(rpcUrl: string, addresses: Address[]): Promise<Address[]> {
  const client = createPublicClient({ transport: http(rpcUrl) });
  const codes = await Promise.all(addresses.map((address) => client.getCode({ address })));
  return addresses.filter((_, i) => !codes[i] || codes[i] === "0x");
}
