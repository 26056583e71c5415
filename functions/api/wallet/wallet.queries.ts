/**
 * Queries of /api/wallet (wallet/wallet.routes.ts) that run as the caller: RLS shows each user their own
 * wallet, history and NFTs. The writes are server paths in functions/api/wallet/.
 */
import type { Tx } from "../../_shared/db.ts";
import { ifGiven, pageLimit, slicePage, where } from "../core/paging.ts";
import type { WalletRow } from "./wallets.ts";
import type { TransactionJson } from "./transfers.ts";

/** The caller's wallet row, or null. */
export async function myWallet(tx: Tx): Promise<WalletRow | null> {
  const [row] = await tx<WalletRow[]>`
    select id, user_id, address, created_at, exported_at from app.wallets
    where user_id = (select auth.uid())`;
  return row ?? null;
}

/**
 * The caller's wallet and their custom tokens on `chainId`, in one round trip (the balance route
 * needs both); null without a wallet.
 */
export async function myWalletAndTokens(tx: Tx, chainId: number) {
  const [row] = await tx<
    (WalletRow & {
      tokens: { address: string; symbol: string; name: string; decimals: number }[];
    })[]
  >`
    select w.id, w.user_id, w.address, w.created_at, w.exported_at,
           coalesce((select jsonb_agg(jsonb_build_object('address', t.address, 'symbol', c.symbol,
                                                         'name', c.name, 'decimals', c.decimals)
                                      order by t.created_at, t.id)
                     from app.wallet_tokens t
                     join app.chain_tokens c on c.chain_id = t.chain_id and c.address = t.address
                     where t.chain_id = ${chainId}), '[]'::jsonb) as tokens
    from app.wallets w where w.user_id = (select auth.uid())`;
  if (!row) return null;
  const { tokens, ...wallet } = row;
  return {
    wallet: wallet as WalletRow,
    tokens: tokens.map((t) => ({ kind: "custom" as const, ...t, chainId })),
  };
}

export type TransactionStatus =
  | "pending"
  | "submitted"
  | "confirmed"
  | "failed"
  | "expired"
  | "cancelled";

/**
 * A page of the caller's history, newest first: `status` as shown (a pending transfer past its
 * expiry counts as expired), `direction`, `token` (`native`, a symbol or an address).
 */
export async function listTransactions(
  tx: Tx,
  q: {
    status?: TransactionStatus;
    direction?: "in" | "out";
    token?: string;
    after: [string, string] | null;
    limit: number;
  },
) {
  const statusCondition = (status: TransactionStatus) =>
    status === "expired"
      ? tx`(t.status = 'expired' or (t.status = 'pending' and t.expires_at <= now()))`
      : status === "pending"
      ? tx`(t.status = 'pending' and t.expires_at > now())`
      : tx`t.status = ${status}::app.wallet_transaction_status`;
  const tokenCondition = (token: string) =>
    token === "native"
      ? tx`t.token_kind = 'native'`
      : token.startsWith("0x")
      ? tx`lower(t.token_address) = lower(${token})`
      : tx`t.token_symbol = ${token}`;
  const rows = await tx<{ json: TransactionJson; created_key: string; id: string }[]>`
    select app.wallet_transaction_json(t) as json, t.created_at::text as created_key, t.id::text
    from app.wallet_transactions t
    ${
    where(tx, [
      ifGiven(q.status, statusCondition),
      ifGiven(q.direction, (d) => tx`t.direction = ${d}::app.wallet_transaction_direction`),
      ifGiven(q.token, tokenCondition),
      ifGiven(
        q.after,
        ([created, id]) => tx`(t.created_at, t.id) < (${created}::timestamptz, ${id}::uuid)`,
      ),
    ])
  }
    order by t.created_at desc, t.id desc
    limit ${pageLimit(q.limit)}`;
  const page = slicePage(rows, q.limit, (last) => [last.created_key, last.id]);
  return { items: page.rows.map((r) => r.json), nextCursor: page.nextCursor };
}

/** One of the caller's transactions as the API shows it, or null. */
export async function transactionJson(tx: Tx, id: string): Promise<TransactionJson | null> {
  const [row] = await tx<{ json: TransactionJson }[]>`
    select app.wallet_transaction_json(t) as json from app.wallet_transactions t where t.id = ${id}`;
  return row?.json ?? null;
}

interface NftRow {
  contract: string;
  token_id: string;
  standard: "ERC721" | "ERC1155";
  balance: string;
  name: string | null;
  image: string | null;
  token_uri: string | null;
  collection_name: string | null;
  collection_symbol: string | null;
  created_key: string;
}

/** A page of the caller's NFTs, newest holdings first (then by contract and token id). */
export async function listNfts(
  tx: Tx,
  q: { chainId: number; after: [string, string, string] | null; limit: number },
) {
  const rows = await tx<NftRow[]>`
    select n.contract, n.token_id::text, n.standard, n.balance::text, n.name, n.image, n.token_uri,
           n.collection_name, n.collection_symbol, n.created_at::text as created_key
    from app.wallet_nfts n
    ${
    where(tx, [
      tx`n.chain_id = ${q.chainId}`,
      ifGiven(
        q.after,
        ([created, contract, tokenId]) =>
          tx`(n.created_at, n.contract, n.token_id) <
             (${created}::timestamptz, ${contract}::text, ${tokenId}::text::numeric)`,
      ),
    ])
  }
    order by n.created_at desc, n.contract desc, n.token_id desc
    limit ${pageLimit(q.limit)}`;
  const page = slicePage(rows, q.limit, (last) => [last.created_key, last.contract, last.token_id]);
  return {
    items: page.rows.map((r) => ({
      contract: r.contract,
      tokenId: r.token_id,
      standard: r.standard,
      balance: r.balance,
      name: r.name,
      image: r.image,
      tokenUri: r.token_uri,
      collection: { name: r.collection_name, symbol: r.collection_symbol },
    })),
    nextCursor: page.nextCursor,
  };
}
