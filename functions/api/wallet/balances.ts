/**
 * Balances, read in one `eth_call` through viem: a Multicall3 `aggregate3` holding the block
 * number, the native balance (`getEthBalance`) and `balanceOf` of every token asked for. So a
 * balance request costs the node exactly one call, however many tokens.
 */
import {
  type Address,
  concatHex,
  decodeAbiParameters,
  encodeAbiParameters,
  formatUnits,
  getAbiItem,
  type Hex,
  multicall3Abi,
  toFunctionSelector,
} from "viem";
import type { Deps } from "../core/context.ts";
import { onChain } from "./chain.ts";
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
  // Each call is a selector and the holder's address: written out here, and the aggregate
  // encoded with its parameters only. viem's `multicall` and `encodeFunctionData` do the same
  // work but hash each function's signature again on every call (about a fifth of a balance
  // request's CPU).
  const argument = holder.slice(2).toLowerCase().padStart(64, "0");
  const calls = [
    { target: multicall3, allowFailure: true, callData: GET_BLOCK_NUMBER },
    ...tokens.map((token) => ({
      target: (token.address ?? multicall3) as Address,
      allowFailure: true,
      callData: `${token.address === null ? GET_ETH_BALANCE : BALANCE_OF}${argument}` as Hex,
    })),
  ];
  const { data } = await onChain(() =>
    client.call({
      to: multicall3,
      data: concatHex([AGGREGATE3, encodeAbiParameters(AGGREGATE3_INPUTS, [calls])]),
    })
  );
  if (!data || data === "0x") throw walletNotConfigured("wallet.contracts.multicall3 answers");
  const [results] = decodeAbiParameters(AGGREGATE3_OUTPUTS, data);
  const word = (r: { success: boolean; returnData: Hex }) =>
    r.success && r.returnData.length === 66 ? BigInt(r.returnData) : null;
  const block = word(results[0]);
  if (block === null) throw walletNotConfigured("wallet.contracts.multicall3 answers");
  return {
    blockNumber: Number(block),
    balances: tokens.map((token, i) => {
      const value = word(results[i + 1]);
      if (value === null) return { token, balance: null, formatted: null };
      return { token, balance: value.toString(), formatted: formatUnits(value, token.decimals) };
    }),
  };
}

/** Selectors, computed once: Multicall3's, and ERC-20 `balanceOf(address)`. */
const AGGREGATE3 = toFunctionSelector(getAbiItem({ abi: multicall3Abi, name: "aggregate3" }));
const AGGREGATE3_INPUTS = getAbiItem({ abi: multicall3Abi, name: "aggregate3" }).inputs;
const AGGREGATE3_OUTPUTS = getAbiItem({ abi: multicall3Abi, name: "aggregate3" }).outputs;
const GET_BLOCK_NUMBER = toFunctionSelector("getBlockNumber()");
const GET_ETH_BALANCE = toFunctionSelector("getEthBalance(address)");
const BALANCE_OF = toFunctionSelector("balanceOf(address)");
