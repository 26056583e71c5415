/** What the wallet says about its chain, its transfers' other side, and look-alike tokens. */
import type { Token, Transaction } from "./types.ts";
import { shortHex } from "../../lib/format.ts";

/** Well-known chain ids by name; any other is "Chain N". */
const NETWORKS: Record<number, string> = {
  1: "Ethereum",
  10: "OP Mainnet",
  137: "Polygon",
  8453: "Base",
  31337: "Local test network (Anvil)",
  42161: "Arbitrum One",
  84532: "Base Sepolia",
  11155111: "Sepolia",
};

/** The network's name people know, e.g. 8453 → "Base". */
export function networkName(chainId: number): string {
  return NETWORKS[chainId] ?? `Chain ${chainId}`;
}

/** The other side of a transfer as a person reads it: a name, "minting", or a short address. */
export function counterpartyLabel(t: Transaction): string {
  const c = t.counterparty;
  if (c?.type === "user") return c.name;
  if (c?.type === "mint") return "minting";
  return shortHex(t.direction === "out" ? t.to : t.from);
}

/** A platform token (not native, not added by the person). */
export function isPlatformToken(t: Token): boolean {
  return t.kind !== "native" && t.kind !== "custom";
}

/**
 * For a custom token: the platform token it could be mistaken for (same symbol or same name,
 * case-insensitive), or null.
 */
export function lookAlike(
  t: Token,
  all: Token[],
): { token: Token; symbol: boolean } | null {
  if (t.kind !== "custom") return null;
  for (const p of all) {
    if (!isPlatformToken(p)) continue;
    const symbol = p.symbol.toLowerCase() === t.symbol.toLowerCase();
    const name = p.name.toLowerCase() === t.name.toLowerCase();
    if (symbol || name) return { token: p, symbol };
  }
  return null;
}
