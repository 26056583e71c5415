/**
 * The chain of the local stack (`npm start`): anvil on 127.0.0.1:`AGORA_CHAIN_PORT` with its
 * state in `<local dir>/chain/state.json`, so balances and contracts survive a restart; the
 * platform's contracts deployed on the first start (and again whenever the recorded ones have no
 * code: the state file was lost) and their addresses recorded as a new configuration version.
 */
import { join } from "node:path";
import type { Address } from "viem";
import type { Listener, Sql } from "../../functions/_shared/db.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { ensureWallet } from "../../functions/api/wallet/wallets.ts";
import {
  applyPatch,
  type ConfigDocument,
  diffConfig,
} from "../../functions/_shared/config-document.ts";
import { currentConfig } from "../../functions/api/core/config-store.ts";
import { type Chain, rpc, startChain } from "./anvil.ts";
import { deployPlatform, fundAddresses, missingCode, type PlatformContracts } from "./deploy.ts";
import { compileContracts } from "./compile.ts";

/** The reason stored with the configuration version that records a deployment. */
export const DEPLOYED_REASON = "local chain deployed";

export const chainDir = (localDir: string) => join(localDir, "chain");

/** anvil for the stack, loading and saving `<localDir>/chain/state.json`. */
export async function startLocalChain(
  localDir: string,
  port: number,
  log?: (line: string) => void,
): Promise<Chain> {
  const dir = chainDir(localDir);
  await Deno.mkdir(dir, { recursive: true });
  return await startChain({ port, stateFile: join(dir, "state.json"), log });
}

/** `npm start -- --reset`: the chain starts empty again. */
export async function resetLocalChain(localDir: string): Promise<void> {
  await Deno.remove(chainDir(localDir), { recursive: true }).catch(() => {});
}

/** The contracts the configuration names for `chainId`, when every one of them is set. */
function recorded(
  config: ConfigDocument,
  chainId: number,
): PlatformContracts | null {
  const c = config.wallet.contracts;
  if (config.wallet.chainId !== chainId) return null;
  if (!c.multicall3 || !c.utility || !c.governance || !c.staking) return null;
  if (!c.erc721.length || !c.erc1155.length) return null;
  const address = (a: string) => a as Address;
  return {
    chainId,
    multicall3: address(c.multicall3),
    utility: address(c.utility),
    governance: address(c.governance),
    staking: address(c.staking),
    erc721: c.erc721.map(address),
    erc1155: c.erc1155.map(address),
  };
}

/** Every address of a deployment. */
export function contractAddresses(c: PlatformContracts): Address[] {
  return [c.multicall3, c.utility, c.governance, c.staking, ...c.erc721, ...c.erc1155];
}

/**
 * Writes `wallet.chainId` and `wallet.contracts` as a new configuration version (over the
 * current one, as an admin's change would be), through the server's own connection. Returns the
 * version, or the current one when nothing changed.
 */
export async function recordContracts(
  sql: Sql,
  contracts: PlatformContracts,
  reason = DEPLOYED_REASON,
): Promise<number> {
  const { chainId, ...addresses } = contracts;
  // Two writers cannot both take version N + 1 (its primary key): the loser reads again.
  for (let attempt = 1;; attempt++) {
    const written = await sql.begin(async (tx) => {
      const current = await currentConfig(tx);
      const next = applyPatch(current.config, { wallet: { chainId, contracts: addresses } });
      const diff = diffConfig(current.config, next);
      if (!Object.keys(diff).length) return current.version;
      const version = current.version + 1;
      const rows = await tx`
        insert into app.config_versions (version, config, diff, reason)
        values (${version}, ${tx.json(next as never)}, ${tx.json(diff as never)}, ${reason})
        on conflict (version) do nothing
        returning version`;
      return rows.length ? version : null;
    });
    if (written !== null) return written;
    if (attempt >= 5) {
      throw new Error("could not record the contracts: the configuration kept changing");
    }
  }
}

export interface EnsuredContracts {
  contracts: PlatformContracts;
  /** True when this call deployed them (a new chain, lost state, or changed sources). */
  deployed: boolean;
  /** The configuration version that holds them. */
  version: number;
}

/**
 * What was deployed from which sources (`<local dir>/chain/contracts.json`): lets a later start
 * see that contracts/*.sol changed since and deploy the new code.
 */
interface Stamp {
  key: string;
  contracts: PlatformContracts;
}

async function readStamp(file: string): Promise<Stamp | null> {
  try {
    return JSON.parse(await Deno.readTextFile(file)) as Stamp;
  } catch {
    return null;
  }
}

const sameAddresses = (a: PlatformContracts, b: PlatformContracts) =>
  a.chainId === b.chainId &&
  JSON.stringify(contractAddresses(a).map((x) => x.toLowerCase())) ===
    JSON.stringify(contractAddresses(b).map((x) => x.toLowerCase()));

export interface EnsureOptions {
  log?: (line: string) => void;
  /**
   * The stack's record of what it deployed from which sources. With it, contracts this stack
   * deployed from sources that have changed since are deployed again; contracts the
   * configuration names that it did not deploy (an admin pointed elsewhere) are left alone.
   */
  stampFile?: string;
}

/**
 * The platform's contracts on the stack's chain: the recorded ones when the configuration names
 * all of them for this chain id, each still has code, and (with a stamp file) they were not
 * deployed from older sources; otherwise freshly deployed (compiled from the cache when possible)
 * and recorded with the reason "local chain deployed".
 */
export async function ensurePlatformContracts(
  sql: Sql,
  rpcUrl: string,
  opts: EnsureOptions = {},
): Promise<EnsuredContracts> {
  const log = opts.log ?? (() => {});
  const { version, config } = await currentConfig(sql);
  const chainId = Number(await rpc<string>(rpcUrl, "eth_chainId"));
  // From the cache this takes milliseconds; it is compiled only when the sources are new.
  const compiled = await compileContracts();
  const existing = recorded(config, chainId);
  if (existing) {
    const missing = await missingCode(rpcUrl, contractAddresses(existing));
    const stamp = opts.stampFile ? await readStamp(opts.stampFile) : null;
    const outdated = stamp !== null && sameAddresses(stamp.contracts, existing) &&
      stamp.key !== compiled.artifacts.key;
    if (!missing.length && !outdated) return { contracts: existing, deployed: false, version };
    log(
      missing.length
        ? "the recorded contracts have no code on the chain (its state was lost): deploying again"
        : "contracts/*.sol changed since the contracts were deployed: deploying the new code",
    );
  }
  if (!compiled.cached) {
    log(
      `contracts: compiled with solc ${compiled.artifacts.compiler} in ${
        (compiled.ms / 1000).toFixed(1)
      } s (cached in ${compiled.cacheFile})`,
    );
  }
  const contracts = await deployPlatform({ rpcUrl, artifacts: compiled.artifacts });
  const written = await recordContracts(sql, contracts);
  if (opts.stampFile) {
    const stamp: Stamp = { key: compiled.artifacts.key, contracts };
    await Deno.writeTextFile(opts.stampFile, JSON.stringify(stamp, null, 2) + "\n");
  }
  return { contracts, deployed: true, version: written };
}

/** Where the stack keeps its record of what it deployed (see `EnsureOptions.stampFile`). */
export const stampFile = (localDir: string) => join(chainDir(localDir), "contracts.json");

/** The four documented accounts of supabase/seed.sql. */
export const SEEDED_ACCOUNTS = [
  "admin@example.com",
  "confidential@example.com",
  "member@example.com",
  "subscriber@example.com",
];

/**
 * The seeded accounts' wallets, created now when they have none (the seed cannot: a key is
 * sealed by the master key, which only the server holds). Returns how many were created.
 */
export async function createSeededWallets(deps: Deps): Promise<number> {
  const users = await deps.sql<{ id: string; has_wallet: boolean }[]>`
    select u.id, exists (select 1 from app.wallets w where w.user_id = u.id) as has_wallet
    from app.users u where lower(u.email) = any(${SEEDED_ACCOUNTS}::text[])`;
  let created = 0;
  for (const user of users) {
    if (user.has_wallet) continue;
    if (await ensureWallet(deps, user.id)) created++;
  }
  return created;
}

/** The addresses of the seeded accounts' wallets that exist, to be funded on the local chain. */
export async function seededWalletAddresses(sql: Sql): Promise<Address[]> {
  const rows = await sql<{ address: Address }[]>`
    select w.address from app.wallets w join app.users u on u.id = w.user_id
    where lower(u.email) = any(${SEEDED_ACCOUNTS}::text[])
    order by u.email`;
  return rows.map((r) => r.address);
}

/**
 * Funds, once each, the seeded accounts' wallets that exist: native currency, each platform
 * token and demo NFTs, from the chain's first development account (the contracts' owner).
 * An address that already holds utility tokens is left alone, so every start may call this.
 */
export async function fundSeededWallets(
  sql: Sql,
  rpcUrl: string,
  contracts: PlatformContracts,
): Promise<Address[]> {
  const addresses = await seededWalletAddresses(sql);
  if (!addresses.length) return [];
  const { funded } = await fundAddresses({ rpcUrl, contracts, addresses, skipFunded: true });
  return funded;
}

export interface LocalFunding {
  stop(): Promise<void>;
}

/**
 * Local stack only: every wallet created while the stack runs (a first sign-in, `POST
 * /api/wallet/create`) is funded on the development chain like the seeded ones (native currency,
 * each platform token, demo NFTs), once (`skipFunded`). The database announces each new wallet
 * with NOTIFY `agora_wallets` (trigger `wallets_announce`); funding runs one wallet at a time,
 * from the chain's first development account. It listens on the process's session connection
 * (`deps.listener`).
 */
export async function startLocalFunding(
  listener: Pick<Listener, "listen">,
  rpcUrl: string,
  contracts: PlatformContracts,
  log: (line: string) => void,
): Promise<LocalFunding> {
  let queue: Promise<void> = Promise.resolve();
  const fund = (address: string) => {
    queue = queue.then(async () => {
      try {
        const { funded } = await fundAddresses({
          rpcUrl,
          contracts,
          addresses: [address as Address],
          skipFunded: true,
        });
        if (funded.length) log(`funded the new wallet ${address} on the local chain`);
      } catch (err) {
        log(
          `could not fund the new wallet ${address}: ${err instanceof Error ? err.message : err}`,
        );
      }
    });
  };
  const listening = await listener.listen("agora_wallets", (address) => fund(address));
  return {
    async stop() {
      await listening.unlisten().catch(() => {});
      await queue;
    },
  };
}
