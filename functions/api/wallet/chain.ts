/**
 * The wallet's way to the chain: one viem public client per process and chain id, over
 * `AGORA_RPC_URL` (no retries inside viem: a failed call fails the request with 503
 * `chain_unavailable`, or the job, which the queue retries). The node's chain id is checked
 * against the configuration (`wallet.chainId`) once per client, so a client never signs for, or
 * reads from, another chain than the one configured.
 */
import {
  BaseError,
  type Chain,
  createPublicClient,
  custom,
  type CustomTransport,
  defineChain,
  getAddress,
  HttpRequestError,
  parseAbi,
  type PublicClient,
  RpcRequestError,
  TimeoutError,
} from "viem";
import { ApiError } from "../../_shared/errors.ts";
import type { ConfigDocument } from "../../_shared/config-document.ts";

declare module "../core/context.ts" {
  interface Deps {
    /** The EVM node (`AGORA_RPC_URL`) through viem. */
    chain: ChainAccess;
  }
}

/** Multicall3 functions the wallet uses (contracts/Multicall3.sol, the canonical interface). */
export const multicallAbi = parseAbi([
  "function getEthBalance(address addr) view returns (uint256 balance)",
  "function getBlockNumber() view returns (uint256 blockNumber)",
]);

export const erc1155UriAbi = parseAbi([
  "function uri(uint256 id) view returns (string)",
  "function name() view returns (string)",
  "function symbol() view returns (string)",
]);

/** A viem public client bound to one chain. */
export type ChainClient = PublicClient<CustomTransport, Chain>;

export interface FeeQuote {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface ChainAccess {
  /** The configured RPC endpoint, or null. */
  readonly url: string | null;
  /**
   * A client for `chainId` whose node is on that chain (checked once). Throws 503
   * `chain_unavailable` without an endpoint, when the node does not answer, or is on another chain.
   */
  client(chainId: number): Promise<ChainClient>;
  /** What to pay per gas now (EIP-1559), cached for a second or two per process. */
  fees(chainId: number): Promise<FeeQuote>;
}

const FEE_CACHE_MS = 2_000;

/** A node on this machine (the local stack's anvil): it mines as transactions arrive. */
export function isLoopbackUrl(url: string | null | undefined): boolean {
  return !!url && /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url);
}

/** True when an error means the node did not answer (connection refused, timeout, HTTP failure). */
export function isChainDown(err: unknown): boolean {
  if (err instanceof ApiError) return err.code === "chain_unavailable";
  if (err instanceof BaseError) {
    return !!err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError);
  }
  if (err instanceof TypeError) return true; // fetch failed
  const code = (err as { code?: string } | null)?.code;
  return code === "ECONNREFUSED" || code === "ECONNRESET";
}

export function chainUnavailable(detail?: string): ApiError {
  return new ApiError(
    "chain_unavailable",
    "The blockchain node does not answer; try again shortly.",
    detail ? { reason: detail } : undefined,
    { "Retry-After": "5" },
  );
}

/**
 * Runs chain calls for a request: a node that does not answer becomes 503 `chain_unavailable`;
 * any other error (a revert, a malformed answer) passes through.
 */
export async function onChain<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isChainDown(err)) throw chainUnavailable();
    throw err;
  }
}

const TIMEOUT_MS = 10_000;

/**
 * A lean JSON-RPC transport over fetch for viem's client: one POST per call, a timeout, and the
 * failures viem knows (`HttpRequestError`, `TimeoutError` for a node that does not answer,
 * `RpcRequestError` for a refusal, which viem then maps by code). viem's own `http` transport
 * does the same with more machinery (dedupe, retries, hooks), measured at about 0.4 ms of CPU a
 * call here: a third of a balance request's cost.
 */
function jsonRpc(url: string, onRequest?: (method: string) => void) {
  let id = 0;
  return custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      onRequest?.(method);
      const body = { jsonrpc: "2.0", id: ++id, method, params: params ?? [] };
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (err) {
        if ((err as Error).name === "TimeoutError") throw new TimeoutError({ body, url });
        throw new HttpRequestError({ body, url, cause: err as Error, details: String(err) });
      }
      let answer: { result?: unknown; error?: { code: number; message: string; data?: unknown } };
      try {
        answer = await response.json();
      } catch (err) {
        throw new HttpRequestError({
          body,
          url,
          status: response.status,
          cause: err as Error,
          details: "the answer is not JSON",
        });
      }
      if (answer?.error) throw new RpcRequestError({ body, error: answer.error, url });
      if (!response.ok) throw new HttpRequestError({ body, url, status: response.status });
      return answer.result;
    },
  }, { retryCount: 0 });
}

export interface ChainAccessOptions {
  /** Sees every JSON-RPC request sent (its method): for measurements (`npm run bench -- wallet`). */
  onRequest?: (method: string) => void;
}

export function createChainAccess(
  url: string | undefined,
  opts: ChainAccessOptions = {},
): ChainAccess {
  const clients = new Map<number, Promise<ChainClient>>();
  const fees = new Map<number, { at: number; quote: Promise<FeeQuote> }>();
  const loopback = isLoopbackUrl(url);

  const build = async (chainId: number): Promise<ChainClient> => {
    if (!url) throw chainUnavailable("AGORA_RPC_URL is not set");
    const chain = defineChain({
      id: chainId,
      name: `chain ${chainId}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [url] } },
    });
    const client = createPublicClient({
      chain,
      transport: jsonRpc(url, opts.onRequest),
      pollingInterval: loopback ? 50 : 2_000,
      // Every read asks the node: a cached block number would hide the blocks just mined.
      cacheTime: 0,
      // Several calls made at once by one request stay separate requests (counted, retried alone).
      batch: { multicall: false },
    }) as ChainClient;
    const actual = await onChain(() => client.getChainId());
    if (actual !== chainId) {
      throw new ApiError(
        "chain_unavailable",
        `The node is on chain ${actual}; the configuration says ${chainId}.`,
      );
    }
    return client;
  };

  const client = (chainId: number): Promise<ChainClient> => {
    let pending = clients.get(chainId);
    if (!pending) {
      pending = build(chainId);
      clients.set(chainId, pending);
      // A failed check is not kept: the next call tries again (the node may be back).
      pending.catch(() => clients.delete(chainId));
    }
    return pending;
  };

  return {
    url: url ?? null,
    client,
    fees(chainId) {
      const cached = fees.get(chainId);
      if (cached && Date.now() - cached.at < FEE_CACHE_MS) return cached.quote;
      const quote = (async () => {
        const publicClient = await client(chainId);
        const estimate = await onChain(() => publicClient.estimateFeesPerGas({ type: "eip1559" }));
        return {
          maxFeePerGas: estimate.maxFeePerGas,
          maxPriorityFeePerGas: estimate.maxPriorityFeePerGas,
        };
      })();
      fees.set(chainId, { at: Date.now(), quote });
      quote.catch(() => fees.delete(chainId));
      return quote;
    },
  };
}

/** The addresses of a configuration document, checksummed once (the cache keeps one document). */
const checksummed = new WeakMap<ConfigDocument, ReturnType<typeof readContracts>>();

/** The platform's contract addresses from the configuration, as viem addresses (null when unset). */
export function platformContracts(config: ConfigDocument) {
  let contracts = checksummed.get(config);
  if (!contracts) {
    contracts = readContracts(config);
    checksummed.set(config, contracts);
  }
  return contracts;
}

function readContracts(config: ConfigDocument) {
  const c = config.wallet.contracts;
  const address = (a: string | null) => (a ? getAddress(a) : null);
  return {
    chainId: config.wallet.chainId,
    multicall3: address(c.multicall3),
    utility: address(c.utility),
    governance: address(c.governance),
    staking: address(c.staking),
    erc721: c.erc721.map((a) => getAddress(a)),
    erc1155: c.erc1155.map((a) => getAddress(a)),
  };
}

export type PlatformContracts = ReturnType<typeof readContracts>;
