/**
 * What the wallet page reads and keeps (wallet, balances, the live history) and hands to its
 * sections (Overview, Send, Tokens), with what they may ask of it.
 */
import type { Balance, Transaction, Wallet } from "./types.ts";

export interface WalletState {
  wallet: Wallet;
  balances: Balance[] | null;
  blockNumber: number | null;
  balanceError: string | null;
  /** The history as read, with live updates merged in (newest first). */
  transactions: Transaction[] | null;
  nextCursor: string | null;
  reloadBalances(): void;
  loadTransactions(filters: Record<string, string>, more?: boolean): Promise<void>;
  /** A transaction this page made or confirmed, merged in. */
  upsert(t: Transaction): void;
}
