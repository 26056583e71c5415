/**
 * Balances, read in one `eth_call`: a Multicall3 `aggregate3` (through viem's `multicall`, one
 * chunk) holding the block number, the native balance (`getEthBalance`) and `balanceOf` of every
 * token asked for. So a balance request costs the node exactly one call, however many tokens.
 */
import { type Address, erc20Abi, formatUnits } from "viem";
import type { Deps } from "../context.ts";
import { multicallAbi, onChain } from "./chain.ts";
import { type Token, walletNotConfigured } from "./tokens.ts";

export interface Balance {
  token: Token;
  /** Base units as a decimal string; null when the token's contract did not answer. */
  balance: string | null;
  /** The same in whole tokens; null with `balance`. */
  formatted: string | null;
}

export interface Balances {
  blockNumber: number;
  balances: Balance[];
}

/** The balances of `holder` in `tokens` (native included as a token), at one block. */
export async function readBalances(
  deps: Deps,
  chainId: number,
  multicall3: Address | null,
  holder: Address,
  tokens: Token[],
): Promise<Balances> {
  if (!multicall3) throw walletNotConfigured("wallet.contracts.multicall3");
  const client = await deps.chain.client(chainId);
  const calls = [
    { address: multicall3, abi: multicallAbi, functionName: "getBlockNumber" } as const,
    ...tokens.map((token) =>
      token.address === null
        ? {
          address: multicall3,
          abi: multicallAbi,
          functionName: "getEthBalance",
          args: [holder],
        } as const
        : {
          address: token.address as Address,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [holder],
        } as const
    ),
  ];
  const results = await onChain(() =>
    client.multicall({
      multicallAddress: multicall3,
      allowFailure: true,
      // One chunk, so one eth_call, however many tokens.
      batchSize: 0,
      contracts: calls,
    })
  );
  const [block, ...rest] = results;
  if (block.status !== "success") throw walletNotConfigured("wallet.contracts.multicall3 answers");
  return {
    blockNumber: Number(block.result as bigint),
    balances: tokens.map((token, i) => {
      const r = rest[i];
      if (r.status !== "success") return { token, balance: null, formatted: null };
      const value = r.result as bigint;
      return { token, balance: value.toString(), formatted: formatUnits(value, token.decimals) };
    }),
  };
}
