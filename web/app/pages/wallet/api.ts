/** The wallet's API as the wallet pages use it (API contract, "Wallet"). */
import { api, query } from "../../lib/api.ts";

export interface Wallet {
  id: string;
  address: string;
  chainId: number;
  createdAt: string;
  exportedAt: string | null;
}

export interface Token {
  kind: "native" | "utility" | "governance" | "staking" | "custom";
  symbol: string;
  name: string;
  decimals: number;
  address: string | null;
  chainId: number;
}

export interface Balance {
  token: Token;
  balance: string | null;
  formatted: string | null;
}

export type TransactionStatus =
  | "pending"
  | "submitted"
  | "confirmed"
  | "failed"
  | "expired"
  | "cancelled";

export interface Transaction {
  id: string;
  direction: "out" | "in";
  status: TransactionStatus;
  token: Token;
  from: string;
  to: string;
  toUserId?: string | null;
  amount: string;
  hash: string | null;
  nonce: number | null;
  blockNumber: number | null;
  confirmations: number | null;
  fee: string | null;
  error: string | null;
  createdAt: string;
  expiresAt: string | null;
  confirmedAt: string | null;
}

export interface Nft {
  contract: string;
  tokenId: string;
  standard: "ERC721" | "ERC1155";
  balance: string;
  name: string | null;
  image: string | null;
  tokenUri: string | null;
  collection: { name: string | null; symbol: string | null };
}

type Params = Record<string, string | number | undefined | null>;

export const walletApi = {
  wallet: () => api.get<{ wallet: Wallet }>("/api/wallet", { fresh: true }),
  create: () => api.post<{ wallet: Wallet }>("/api/wallet/create"),
  balance: () =>
    api.get<{ address: string; chainId: number; blockNumber: number; balances: Balance[] }>(
      "/api/wallet/balance",
      { fresh: true },
    ),
  transactions: (params: Params) =>
    api.get<{ items: Transaction[]; nextCursor: string | null }>(
      `/api/wallet/transactions${query(params)}`,
      { fresh: true },
    ),
  /** 201 `{ transaction }`: the pending transfer. */
  transfer: async (
    body: { to: string | { userId: string }; token: string; amount: string },
    idempotencyKey: string,
  ) =>
    (await api.post<{ transaction: Transaction }>("/api/wallet/transfer", body, {
      headers: { "idempotency-key": idempotencyKey },
    })).transaction,
  /** 200 `{ transaction }`: submitted (or already confirmed), with its hash and nonce. */
  confirm: async (id: string) =>
    (await api.post<{ transaction: Transaction }>(`/api/wallet/transactions/${id}/confirm`))
      .transaction,
  /** 200 `{ transaction }`: cancelled ("Don't send"); its funds are no longer held. */
  cancel: async (id: string) =>
    (await api.post<{ transaction: Transaction }>(`/api/wallet/transactions/${id}/cancel`))
      .transaction,
  tokens: () => api.get<{ items: Token[] }>("/api/wallet/tokens", { fresh: true }),
  addToken: (address: string) => api.post<Token>("/api/wallet/tokens/add", { address }),
  nfts: (params: Params) =>
    api.get<{ items: Nft[]; nextCursor: string | null }>(`/api/wallet/nfts${query(params)}`, {
      fresh: true,
    }),
  exportKey: (publicKey: JsonWebKey) =>
    api.post<{ address: string; jwe: string }>("/api/wallet/export", { publicKey }),
};

/** The token's id for a transfer: `native`, or its address. */
export function tokenRef(token: Token): string {
  return token.kind === "native" || !token.address ? "native" : token.address;
}
