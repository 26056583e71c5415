/**
 * The tokens a wallet knows: the chain's native currency, the platform's three ERC-20s (their
 * addresses from `wallet.contracts`, their symbol, name and decimals read from the chain once and
 * kept in `app.chain_tokens`) and the ERC-20s a user added, each checked on the chain first.
 */
import { type Address, erc20Abi, getAddress, isAddress, zeroAddress } from "viem";
import type { Sql, Tx } from "../../_shared/db.ts";
import { ApiError, badRequest, conflict } from "../../_shared/errors.ts";
import type { ConfigDocument } from "../../_shared/config-document.ts";
import type { Deps } from "../core/context.ts";
import { type ChainClient, onChain, platformContracts } from "./chain.ts";
import { serverSql } from "../core/doors.ts";

export type TokenKind = "native" | "utility" | "governance" | "staking" | "custom";

/** A token as the API shows it (api-contract.md, Wallet). */
export interface Token {
  kind: TokenKind;
  symbol: string;
  name: string;
  decimals: number;
  address: string | null;
  chainId: number;
}

export interface TokenMetadata {
  symbol: string;
  name: string;
  decimals: number;
}

/**
 * The chain's native currency. Its symbol and name are not configurable yet: every chain the
 * platform targets today (anvil, Ethereum and its rollups) calls it ether.
 */
export function nativeToken(chainId: number): Token {
  return { kind: "native", symbol: "ETH", name: "Ether", decimals: 18, address: null, chainId };
}

/** Metadata read once per process (a contract's symbol, name and decimals never change). */
const known = new Map<string, TokenMetadata>();
const keyOf = (chainId: number, address: string) => `${chainId}:${address.toLowerCase()}`;

/**
 * Checks that a 0x address is well formed and, when it mixes cases, carries a correct EIP-55
 * checksum; returns it checksummed. 400 otherwise (`field` names the input).
 */
export function checkedAddress(value: string, field: string): Address {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) {
    throw badRequest("Invalid address.", [{
      path: field,
      message: "a 0x-prefixed 20-byte address",
    }]);
  }
  if (!isAddress(value, { strict: true })) {
    throw badRequest("Invalid address.", [{
      path: field,
      message: "the EIP-55 checksum is wrong",
    }]);
  }
  return getAddress(value);
}

/**
 * Reads an address as an ERC-20, in one multicall (plus one `eth_getCode`): code at the address,
 * and `decimals`, `symbol`, `name`, `totalSupply` and `balanceOf` all answering with values that
 * make sense. Null when it does not behave as one.
 */
export async function readErc20(
  client: ChainClient,
  multicall3: Address,
  address: Address,
): Promise<TokenMetadata | null> {
  const code = await onChain(() => client.getCode({ address }));
  if (!code || code === "0x") return null;
  const results = await onChain(() =>
    client.multicall({
      multicallAddress: multicall3,
      allowFailure: true,
      batchSize: 0,
      contracts: [
        { address, abi: erc20Abi, functionName: "decimals" },
        { address, abi: erc20Abi, functionName: "symbol" },
        { address, abi: erc20Abi, functionName: "name" },
        { address, abi: erc20Abi, functionName: "totalSupply" },
        { address, abi: erc20Abi, functionName: "balanceOf", args: [zeroAddress] },
      ],
    })
  );
  if (results.some((r) => r.status !== "success")) return null;
  const [decimals, symbol, name, totalSupply, balance] = results.map((r) => r.result) as [
    number,
    string,
    string,
    bigint,
    bigint,
  ];
  const printable = (text: string, max: number) =>
    text.length >= 1 && text.length <= max &&
    ![...text].some((ch) => ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127);
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 77) return null;
  if (!printable(symbol.trim(), 64) || !printable(name.trim(), 200)) return null;
  if (totalSupply < 0n || balance < 0n || balance > totalSupply) return null;
  return { symbol: symbol.trim(), name: name.trim(), decimals };
}

/** Stores a token's chain metadata (the first reading wins; it never changes). */
async function rememberToken(
  sql: Sql | Tx,
  chainId: number,
  address: Address,
  meta: TokenMetadata,
): Promise<void> {
  await sql`
    insert into app.chain_tokens (chain_id, address, symbol, name, decimals)
    values (${chainId}, ${address}, ${meta.symbol}, ${meta.name}, ${meta.decimals})
    on conflict (chain_id, address) do nothing`;
  known.set(keyOf(chainId, address), meta);
}

/** A platform token's metadata: from memory, the database, or the chain (then stored). */
async function platformMetadata(
  deps: Deps,
  chainId: number,
  multicall3: Address | null,
  address: Address,
): Promise<TokenMetadata> {
  const sql = serverSql(deps, "wallet tokens");
  const cached = known.get(keyOf(chainId, address));
  if (cached) return cached;
  const [row] = await sql<TokenMetadata[]>`
    select symbol, name, decimals from app.chain_tokens
    where chain_id = ${chainId} and address = ${address}`;
  if (row) {
    known.set(keyOf(chainId, address), row);
    return row;
  }
  if (!multicall3) throw walletNotConfigured("wallet.contracts.multicall3");
  const meta = await readErc20(await deps.chain.client(chainId), multicall3, address);
  if (!meta) {
    throw new ApiError(
      "unavailable",
      `The configured platform token ${address} does not behave as an ERC-20.`,
    );
  }
  await rememberToken(sql, chainId, address, meta);
  return meta;
}

export function walletNotConfigured(what: string): ApiError {
  return new ApiError("unavailable", `The wallet is not configured on this platform (${what}).`);
}

/** Native currency and the platform's tokens that the configuration names, in that order. */
export async function platformTokens(deps: Deps, config: ConfigDocument): Promise<Token[]> {
  const c = platformContracts(config);
  const tokens: Token[] = [nativeToken(c.chainId)];
  for (const kind of ["utility", "governance", "staking"] as const) {
    const address = c[kind];
    if (!address) continue;
    const meta = await platformMetadata(deps, c.chainId, c.multicall3, address);
    tokens.push({ kind, ...meta, address, chainId: c.chainId });
  }
  return tokens;
}

/** The caller's custom tokens on this chain (as the caller: RLS shows their own list). */
export async function customTokens(tx: Tx, chainId: number): Promise<Token[]> {
  const rows = await tx<{ address: string; symbol: string; name: string; decimals: number }[]>`
    select t.address, c.symbol, c.name, c.decimals
    from app.wallet_tokens t
    join app.chain_tokens c on c.chain_id = t.chain_id and c.address = t.address
    where t.chain_id = ${chainId}
    order by t.created_at, t.id`;
  return rows.map((r) => ({
    kind: "custom" as const,
    symbol: r.symbol,
    name: r.name,
    decimals: r.decimals,
    address: r.address,
    chainId,
  }));
}

/** A user's custom tokens on this chain, for a server path (same rows as `customTokens`). */
export async function customTokensOf(sql: Sql, userId: string, chainId: number): Promise<Token[]> {
  const rows = await sql<{ address: string; symbol: string; name: string; decimals: number }[]>`
    select t.address, c.symbol, c.name, c.decimals
    from app.wallet_tokens t
    join app.chain_tokens c on c.chain_id = t.chain_id and c.address = t.address
    where t.user_id = ${userId} and t.chain_id = ${chainId}
    order by t.created_at, t.id`;
  return rows.map((r) => ({
    kind: "custom" as const,
    symbol: r.symbol,
    name: r.name,
    decimals: r.decimals,
    address: r.address,
    chainId,
  }));
}

/**
 * Adds an ERC-20 to a user's list (server path: the metadata is the chain's, never the caller's):
 * 409 when it is already there (the platform's tokens are always there), 422 `not_erc20` when the
 * address does not behave as one.
 */
export async function addCustomToken(
  deps: Deps,
  userId: string,
  given: Address,
): Promise<Token> {
  const sql = serverSql(deps, "wallet tokens");
  // One spelling per token: an address in lower case is the same token as its checksummed form.
  const address = getAddress(given.toLowerCase());
  const config = await deps.config.get();
  const c = platformContracts(config);
  const platform = [c.utility, c.governance, c.staking].filter((a) => a !== null) as Address[];
  if (platform.some((a) => a.toLowerCase() === address.toLowerCase())) {
    throw conflict("This is one of the platform's tokens, already in every wallet.");
  }
  const [listed] = await sql`
    select 1 from app.wallet_tokens
    where user_id = ${userId} and chain_id = ${c.chainId} and lower(address) = ${address.toLowerCase()}`;
  if (listed) throw conflict("This token is already in your list.");
  if (!c.multicall3) throw walletNotConfigured("wallet.contracts.multicall3");
  let meta: TokenMetadata | null | undefined = known.get(keyOf(c.chainId, address));
  if (!meta) {
    meta = await readErc20(await deps.chain.client(c.chainId), c.multicall3, address);
    if (!meta) {
      throw new ApiError("not_erc20", "This address does not behave as an ERC-20 token.", {
        address,
      });
    }
  }
  const inserted = await sql.begin(async (tx) => {
    await rememberToken(tx, c.chainId, address, meta);
    return await tx`
      insert into app.wallet_tokens (user_id, chain_id, address)
      values (${userId}, ${c.chainId}, ${address})
      on conflict (user_id, chain_id, address) do nothing
      returning id`;
  });
  if (!inserted.length) throw conflict("This token is already in your list.");
  return { kind: "custom", ...meta, address, chainId: c.chainId };
}

/**
 * The token a transfer names: `native`, a symbol (the platform's tokens first, then the caller's
 * own; a symbol two of the caller's tokens share must be given by address) or an address among
 * them. 422 for one the wallet does not know.
 */
export function resolveToken(tokens: Token[], named: string): Token {
  if (named === "native") return tokens.find((t) => t.kind === "native")!;
  if (named.startsWith("0x")) {
    const address = checkedAddress(named, "token");
    const found = tokens.find((t) => t.address?.toLowerCase() === address.toLowerCase());
    if (!found) {
      throw new ApiError("unprocessable", "This wallet does not know that token; add it first.", {
        token: named,
      });
    }
    return found;
  }
  const bySymbol = tokens.filter((t) => t.kind !== "native" && t.symbol === named);
  const platform = bySymbol.find((t) => t.kind !== "custom");
  if (platform) return platform;
  if (bySymbol.length === 1) return bySymbol[0];
  if (bySymbol.length > 1) {
    throw new ApiError(
      "unprocessable",
      "Several of your tokens have this symbol; name the token by its address.",
      { token: named, addresses: bySymbol.map((t) => t.address) },
    );
  }
  throw new ApiError("unprocessable", "This wallet does not know that token.", { token: named });
}
