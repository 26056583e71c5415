/**
 * The wallet pages' types, from the OpenAPI document (lib/api-schema.d.ts through lib/client.ts),
 * and what the pages keep in the query cache.
 */
import type { Answer, Schema } from "../../lib/client.ts";

export type Wallet = Schema<"Wallet">;
export type Token = Schema<"Token">;
export type Transaction = Schema<"WalletTransaction">;
export type TransactionStatus = Transaction["status"];
export type Nft = Schema<"Nft">;
export type Balance = Answer<"/api/wallet/balance", "get">["balances"][number];

/** The wallet's entries in the query cache. */
export const WALLET_KEY = ["wallet"] as const;
export const BALANCE_KEY = ["wallet", "balance"] as const;
export const TRANSACTIONS_KEY = ["wallet", "transactions"] as const;
export const TOKENS_KEY = ["wallet", "tokens"] as const;

/** The token's id for a transfer: `native`, or its address. */
export function tokenRef(token: Token): string {
  return token.kind === "native" || !token.address ? "native" : token.address;
}
