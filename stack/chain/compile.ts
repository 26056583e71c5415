/**
 * The platform's Solidity sources (contracts/*.sol) compiled in-process with the `solc` npm
 * package (the WebAssembly build of the compiler; nothing is downloaded) against the
 * OpenZeppelin Contracts package in node_modules.
 *
 * The artifacts (ABI and creation bytecode of each contract) are cached in one JSON file named by
 * a hash of everything that decides the output: every source file, the compiler's and
 * OpenZeppelin's versions and the compiler settings. A second start, test or benchmark reads the
 * file instead of compiling; changing any input changes the name, so a stale file is never used.
 */
import { createHash } from "node:crypto";
import { join, normalize } from "node:path";
import type { Abi, Hex } from "viem";
import { CONTRACTS_DIR, NODE_MODULES } from "./paths.ts";

/** Every contract the chain code deploys, by its Solidity name (each in contracts/<name>.sol). */
export const CONTRACT_NAMES = [
  "AgoraUtilityToken",
  "AgoraGovernanceToken",
  "AgoraStakingRewardToken",
  "AgoraCollectibles",
  "AgoraItems",
  "Multicall3",
  "OwnerWallet",
] as const;
export type ContractName = typeof CONTRACT_NAMES[number];

export interface Artifact {
  abi: Abi;
  /** Creation bytecode, 0x-prefixed. */
  bytecode: Hex;
}

export interface Artifacts {
  /** The compiler's full version, e.g. `0.8.37+commit.…`. */
  compiler: string;
  /** The cache key: a SHA-256 over sources, versions and settings. */
  key: string;
  contracts: Record<ContractName, Artifact>;
}

export interface CompileResult {
  artifacts: Artifacts;
  /** True when read from the cache. */
  cached: boolean;
  /** Wall time of this call, in milliseconds. */
  ms: number;
  cacheFile: string;
  /** The compiler's warnings (empty when read from the cache). */
  warnings: string[];
}

export const DEFAULT_CACHE_DIR = join(NODE_MODULES, ".cache", "agora-contracts");

/**
 * The compiler settings. `cancun` keeps the bytecode deployable on every network that has had
 * the 2024 upgrade (OpenZeppelin 5.x uses its `mcopy`); anvil runs a later fork, which is fine.
 */
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
};

const OPENZEPPELIN = "@openzeppelin/contracts/";

async function packageVersion(name: string): Promise<string> {
  const text = await Deno.readTextFile(join(NODE_MODULES, name, "package.json"));
  return (JSON.parse(text) as { version: string }).version;
}

/** contracts/<name>.sol for every contract, keyed by the source unit name the compiler sees. */
async function readSources(): Promise<Record<string, { content: string }>> {
  const sources: Record<string, { content: string }> = {};
  for (const name of CONTRACT_NAMES) {
    sources[`contracts/${name}.sol`] = {
      content: await Deno.readTextFile(join(CONTRACTS_DIR, `${name}.sol`)),
    };
  }
  return sources;
}

/**
 * The import callback: `@openzeppelin/contracts/...` from node_modules, nothing else (our own
 * sources are all passed in, so any other import is a mistake worth an error).
 */
function findImport(path: string): { contents: string } | { error: string } {
  const clean = normalize(path);
  if (!clean.startsWith(OPENZEPPELIN) || clean.includes("..")) {
    return { error: `only ${OPENZEPPELIN}* can be imported, not ${path}` };
  }
  try {
    return { contents: Deno.readTextFileSync(join(NODE_MODULES, clean)) };
  } catch {
    return { error: `${path} is not in node_modules (is @openzeppelin/contracts installed?)` };
  }
}

interface SolcOutput {
  errors?: { severity: "error" | "warning" | "info"; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

/**
 * The artifacts of every contract: from the cache when an entry for exactly these inputs exists,
 * else compiled (several seconds) and cached. Compiler errors throw with the compiler's messages.
 */
export async function compileContracts(
  opts: { cacheDir?: string; force?: boolean } = {},
): Promise<CompileResult> {
  const started = performance.now();
  const cacheDir = opts.cacheDir ?? DEFAULT_CACHE_DIR;
  const sources = await readSources();
  const [solcVersion, ozVersion] = await Promise.all([
    packageVersion("solc"),
    packageVersion("@openzeppelin/contracts"),
  ]);
  const key = createHash("sha256")
    .update(JSON.stringify({ solcVersion, ozVersion, settings: SETTINGS, sources }))
    .digest("hex");
  const cacheFile = join(cacheDir, `${key}.json`);
  if (!opts.force) {
    try {
      const artifacts = JSON.parse(await Deno.readTextFile(cacheFile)) as Artifacts;
      if (artifacts.key === key && CONTRACT_NAMES.every((n) => artifacts.contracts[n]?.bytecode)) {
        return {
          artifacts,
          cached: true,
          ms: performance.now() - started,
          cacheFile,
          warnings: [],
        };
      }
    } catch {
      // not cached yet (or unreadable): compile
    }
  }

  // Loading the compiler costs about half a second, so only when there is something to compile.
  const solc = (await import("solc")).default;
  const input = {
    language: "Solidity",
    sources,
    settings: {
      ...SETTINGS,
      outputSelection: Object.fromEntries(
        CONTRACT_NAMES.map((name) => [
          `contracts/${name}.sol`,
          { [name]: ["abi", "evm.bytecode.object"] },
        ]),
      ),
    },
  };
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), { import: findImport }),
  ) as SolcOutput;
  const problems = output.errors ?? [];
  const errors = problems.filter((e) => e.severity === "error");
  if (errors.length) {
    throw new Error(
      `the contracts did not compile:\n${errors.map((e) => e.formattedMessage).join("\n")}`,
    );
  }
  const contracts = {} as Record<ContractName, Artifact>;
  for (const name of CONTRACT_NAMES) {
    const out = output.contracts?.[`contracts/${name}.sol`]?.[name];
    if (!out?.evm.bytecode.object) throw new Error(`the compiler produced no bytecode for ${name}`);
    contracts[name] = { abi: out.abi, bytecode: `0x${out.evm.bytecode.object}` };
  }
  const artifacts: Artifacts = { compiler: solc.version(), key, contracts };

  // Written under a temporary name and renamed, so a concurrent reader never sees half a file.
  await Deno.mkdir(cacheDir, { recursive: true });
  const temp = `${cacheFile}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(artifacts));
  await Deno.rename(temp, cacheFile);
  return {
    artifacts,
    cached: false,
    ms: performance.now() - started,
    cacheFile,
    warnings: problems.filter((e) => e.severity === "warning").map((e) => e.formattedMessage),
  };
}
