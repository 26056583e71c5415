/**
 * The chain follower (docs/wallet.md, "The indexer"): a named server path that reads new blocks
 * and records, for the platform's wallets,
 * - incoming transfers: ERC-20 `Transfer` logs of known tokens (the platform's three and every
 *   token a user added) and native value sent by a transaction to a wallet (internal transfers
 *   made by contracts are not seen: that needs a tracing node);
 * - NFT transfers of the configured ERC-721 and ERC-1155 collections (`Transfer`,
 *   `TransferSingle`, `TransferBatch`), from which holdings are computed, with token URI metadata.
 *
 * It resumes from its cursor (`app_private.chain_cursors`: last block indexed and its hash), so a
 * restart loses nothing. Reorganizations: before going on, the block under the cursor is compared
 * with the chain; each new range must link to it by parent hash. On a mismatch the follower walks
 * back through the stored hashes (the last 128 blocks) to the newest block the chain still has,
 * rolls back everything recorded above it (`app_private.rollback_chain_index`: incoming rows and
 * NFT logs deleted, holdings recomputed, outgoing transfers mined there watched again) and indexes
 * from there. The cursor moves by compare-and-set in the transaction that writes a range, so two
 * followers (several processes, or the stack's and a job) never record a range twice.
 */
import {
  type Address,
  type Block,
  decodeEventLog,
  erc1155Abi,
  erc20Abi,
  erc721Abi,
  getAddress,
  type Hex,
  type Log,
  parseAbi,
  toEventSelector,
} from "viem";
import type { Tx } from "../../_shared/db.ts";
import type { Deps } from "../core/context.ts";
import { type ChainClient, erc1155UriAbi, platformContracts } from "./chain.ts";
import { erc1155Uri, metadataFromUri } from "./nft-metadata.ts";
import { platformTokens, type TokenKind } from "./tokens.ts";
import { serverSql } from "../core/doors.ts";

/** Blocks fetched and written per step. */
const RANGE = 50;
/** Block fetches in flight at once. */
const FETCH_CONCURRENCY = 10;
/** Block hashes kept for finding a fork. */
const KEEP_BLOCKS = 128;
/** Where a follower with no cursor starts: this many blocks below the head. */
export const LOOKBACK = 256;

const TRANSFER = toEventSelector("Transfer(address,address,uint256)");
const TRANSFER_SINGLE = toEventSelector(
  "TransferSingle(address,address,address,uint256,uint256)",
);
const TRANSFER_BATCH = toEventSelector(
  "TransferBatch(address,address,address,uint256[],uint256[])",
);
const erc721NameAbi = parseAbi([
  "function name() view returns (string)",
  "function symbol() view returns (string)",
]);

export interface FollowResult {
  /** The cursor before and after. */
  from: number;
  to: number;
  head: number;
  /** Set when a reorganization was found: the block the follower went back to. */
  rolledBackTo: number | null;
  incoming: number;
  nftTransfers: number;
}

interface Cursor {
  number: number;
  hash: string | null;
}

interface KnownToken {
  kind: TokenKind;
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
}

type FullBlock = Block<bigint, true>;

export interface Incoming {
  walletId: string;
  userId: string;
  token: KnownToken | null; // null: native
  from: string;
  to: string;
  amount: bigint;
  hash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
}

interface NftTransfer {
  blockNumber: number;
  blockHash: string;
  hash: string;
  logIndex: number;
  batchIndex: number;
  standard: "ERC721" | "ERC1155";
  contract: Address;
  tokenId: bigint;
  from: Address;
  to: Address;
  amount: bigint;
}

async function readCursor(deps: Deps, chainId: number): Promise<Cursor | null> {
  const sql = serverSql(deps, "chain follower (indexer)");
  const [row] = await sql<{ block_number: string; block_hash: string | null }[]>`
    select block_number::text, block_hash from app_private.chain_cursors where chain_id = ${chainId}`;
  return row ? { number: Number(row.block_number), hash: row.block_hash } : null;
}

async function blockAt(client: ChainClient, number: number): Promise<FullBlock | null> {
  if (number < 0) return null;
  try {
    return await client.getBlock({ blockNumber: BigInt(number), includeTransactions: true });
  } catch (err) {
    if ((err as { name?: string }).name === "BlockNotFoundError") return null;
    throw err;
  }
}

async function blocksIn(client: ChainClient, from: number, to: number): Promise<FullBlock[]> {
  const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const out: FullBlock[] = [];
  for (let i = 0; i < numbers.length; i += FETCH_CONCURRENCY) {
    const part = await Promise.all(
      numbers.slice(i, i + FETCH_CONCURRENCY).map((n) => blockAt(client, n)),
    );
    for (const block of part) {
      if (!block) throw new Error("a block below the head is missing (the chain moved): retry");
      out.push(block);
    }
  }
  return out;
}

/**
 * The newest stored block the chain still has (the fork point), walking back from the cursor;
 * below the stored window, the block just under it as the chain has it now.
 */
async function findFork(
  deps: Deps,
  client: ChainClient,
  chainId: number,
  head: number,
): Promise<Cursor> {
  const sql = serverSql(deps, "chain follower (indexer)");
  const stored = await sql<{ number: string; hash: string }[]>`
    select b.number::text, b.hash from app_private.chain_blocks b
    where b.chain_id = ${chainId} order by b.number desc`;
  for (const row of stored) {
    const number = Number(row.number);
    if (number > head) continue;
    const block = await blockAt(client, number);
    if (block?.hash === row.hash) return { number, hash: row.hash };
  }
  const lowest = stored.length ? Number(stored[stored.length - 1].number) - 1 : -1;
  const number = Math.min(lowest, head);
  const block = await blockAt(client, number);
  return { number: block ? number : -1, hash: block?.hash ?? null };
}

async function rollback(deps: Deps, chainId: number, fork: Cursor): Promise<void> {
  const sql = serverSql(deps, "chain follower (indexer)");
  await sql`
    select app_private.rollback_chain_index(${chainId}, ${fork.number}::bigint, ${fork.hash})`;
  deps.log("warn", "wallet: chain reorganization; rolled back to the fork", {
    chainId,
    block: fork.number,
  });
}

/** ERC-20s whose Transfer logs count: the platform's tokens and every token a user added. */
async function knownTokens(deps: Deps, chainId: number): Promise<KnownToken[]> {
  const sql = serverSql(deps, "chain follower (indexer)");
  const config = await deps.config.get();
  const platform = (await platformTokens(deps, config))
    .filter((t) => t.address !== null)
    .map((t) => ({ ...t, address: t.address as Address }));
  const custom = await sql<
    { address: string; symbol: string; name: string; decimals: number }[]
  >`
    select c.address, c.symbol, c.name, c.decimals from app.chain_tokens c
    where c.chain_id = ${chainId}
      and exists (select 1 from app.wallet_tokens t where t.chain_id = c.chain_id and t.address = c.address)`;
  const seen = new Set(platform.map((t) => t.address.toLowerCase()));
  return [
    ...platform,
    ...custom.filter((t) => !seen.has(t.address.toLowerCase())).map((t) => ({
      kind: "custom" as const,
      address: getAddress(t.address),
      symbol: t.symbol,
      name: t.name,
      decimals: t.decimals,
    })),
  ];
}

/** Decodes the logs of a range into ERC-20 transfers and NFT transfers. */
function decodeLogs(
  logs: Log[],
  erc20s: Map<string, KnownToken>,
  erc721s: Set<string>,
  erc1155s: Set<string>,
) {
  const fungible: { token: KnownToken; log: Log; from: Address; to: Address; value: bigint }[] = [];
  const nfts: NftTransfer[] = [];
  for (const log of logs) {
    const address = log.address.toLowerCase();
    const base = {
      blockNumber: Number(log.blockNumber),
      blockHash: log.blockHash!,
      hash: log.transactionHash!,
      logIndex: log.logIndex!,
      contract: getAddress(log.address),
    };
    try {
      if (erc20s.has(address) && log.topics[0] === TRANSFER && log.topics.length === 3) {
        const { args } = decodeEventLog({ abi: erc20Abi, eventName: "Transfer", ...log });
        if (args.value > 0n) {
          fungible.push({
            token: erc20s.get(address)!,
            log,
            from: args.from,
            to: args.to,
            value: args.value,
          });
        }
      } else if (erc721s.has(address) && log.topics[0] === TRANSFER && log.topics.length === 4) {
        const { args } = decodeEventLog({ abi: erc721Abi, eventName: "Transfer", ...log });
        nfts.push({
          ...base,
          batchIndex: 0,
          standard: "ERC721",
          tokenId: args.tokenId,
          from: args.from,
          to: args.to,
          amount: 1n,
        });
      } else if (erc1155s.has(address) && log.topics[0] === TRANSFER_SINGLE) {
        const { args } = decodeEventLog({ abi: erc1155Abi, eventName: "TransferSingle", ...log });
        nfts.push({
          ...base,
          batchIndex: 0,
          standard: "ERC1155",
          tokenId: args.id,
          from: args.from,
          to: args.to,
          amount: args.value,
        });
      } else if (erc1155s.has(address) && log.topics[0] === TRANSFER_BATCH) {
        const { args } = decodeEventLog({ abi: erc1155Abi, eventName: "TransferBatch", ...log });
        args.ids.forEach((id, i) =>
          nfts.push({
            ...base,
            batchIndex: i,
            standard: "ERC1155",
            tokenId: id,
            from: args.from,
            to: args.to,
            amount: args.values[i],
          })
        );
      }
    } catch {
      // A log that does not decode as its standard says (a non-conforming contract): skipped.
    }
  }
  return { fungible, nfts };
}

/** Reads the metadata of NFTs (and their collections) not seen before, into the caches. */
async function fetchNftMetadata(
  deps: Deps,
  client: ChainClient,
  chainId: number,
  multicall3: Address | null,
  transfers: NftTransfer[],
): Promise<void> {
  const sql = serverSql(deps, "chain follower (indexer)");
  const wanted = new Map<string, NftTransfer>();
  for (const t of transfers) wanted.set(`${t.contract}:${t.tokenId}`, t);
  if (!wanted.size) return;
  const [cached, collections] = await Promise.all([
    sql<{ contract: string; token_id: string }[]>`
      select contract, token_id::text from app_private.nft_tokens
      where chain_id = ${chainId} and (contract, token_id) in (
        select * from unnest(${[...wanted.values()].map((t) => t.contract)}::text[],
                             ${[...wanted.values()].map((t) => t.tokenId.toString())}::numeric[]))`,
    sql<{ contract: string }[]>`
      select contract from app_private.nft_collections where chain_id = ${chainId}`,
  ]);
  for (const row of cached) wanted.delete(`${row.contract}:${row.token_id}`);
  const knownCollections = new Set(collections.map((r) => r.contract));
  const newCollections = new Map<string, NftTransfer>();
  for (const t of transfers) {
    if (!knownCollections.has(t.contract)) newCollections.set(t.contract, t);
  }
  const tokens = [...wanted.values()];
  const calls = [
    ...tokens.map((t) =>
      t.standard === "ERC721"
        ? {
          address: t.contract,
          abi: erc721Abi,
          functionName: "tokenURI",
          args: [t.tokenId],
        } as const
        : {
          address: t.contract,
          abi: erc1155UriAbi,
          functionName: "uri",
          args: [t.tokenId],
        } as const
    ),
    ...[...newCollections.values()].flatMap((t) => [
      { address: t.contract, abi: erc721NameAbi, functionName: "name" } as const,
      { address: t.contract, abi: erc721NameAbi, functionName: "symbol" } as const,
    ]),
  ];
  const results = multicall3
    ? await client.multicall({
      multicallAddress: multicall3,
      allowFailure: true,
      batchSize: 0,
      contracts: calls,
    })
    : calls.map(() => ({ status: "failure" as const, result: undefined }));
  const uriOf = (i: number, t: NftTransfer) => {
    const r = results[i];
    if (r.status !== "success" || typeof r.result !== "string") return null;
    return t.standard === "ERC1155" ? erc1155Uri(r.result, t.tokenId) : r.result;
  };
  const rows = tokens.map((t, i) => {
    const uri = uriOf(i, t);
    return { t, uri, ...metadataFromUri(uri) };
  });
  const collectionRows = [...newCollections.values()].map((t, i) => {
    const name = results[tokens.length + 2 * i];
    const symbol = results[tokens.length + 2 * i + 1];
    const text = (r: typeof name) =>
      r.status === "success" && typeof r.result === "string" ? r.result.slice(0, 200) : null;
    return { t, name: text(name), symbol: text(symbol) };
  });
  if (rows.length) {
    await sql`
      insert into app_private.nft_tokens (chain_id, contract, token_id, token_uri, name, image)
      select ${chainId}, * from unnest(
        ${rows.map((r) => r.t.contract)}::text[], ${
      rows.map((r) => r.t.tokenId.toString())
    }::numeric[],
        ${rows.map((r) => r.uri)}::text[], ${rows.map((r) => r.name)}::text[],
        ${rows.map((r) => r.image)}::text[])
      on conflict do nothing`;
  }
  if (collectionRows.length) {
    await sql`
      insert into app_private.nft_collections (chain_id, contract, standard, name, symbol)
      select ${chainId}, c, s::app.nft_standard, n, y from unnest(
        ${collectionRows.map((r) => r.t.contract)}::text[],
        ${collectionRows.map((r) => r.t.standard)}::text[],
        ${collectionRows.map((r) => r.name)}::text[],
        ${collectionRows.map((r) => r.symbol)}::text[]) as x (c, s, n, y)
      on conflict do nothing`;
  }
}

/** What to do with a range once read: the platform's wallets among its addresses. */
async function walletsAmong(
  deps: Deps,
  addresses: Set<string>,
): Promise<Map<string, { id: string; user_id: string }>> {
  const sql = serverSql(deps, "chain follower (indexer)");
  if (!addresses.size) return new Map();
  const rows = await sql<{ id: string; user_id: string; address: string }[]>`
    select id, user_id, address from app.wallets where address = any(${[...addresses]}::text[])`;
  return new Map(rows.map((r) => [r.address, { id: r.id, user_id: r.user_id }]));
}

export interface FollowOptions {
  /** Stop after this many blocks (default: up to the head). */
  maxBlocks?: number;
  /** Stop starting new ranges after this long (default 20 s). */
  maxMs?: number;
  signal?: AbortSignal;
}

/**
 * Indexes from the cursor up to the chain's head (or the limits), handling reorganizations.
 * Throws when the node does not answer (the caller retries later; nothing is half-written: each
 * range is one transaction).
 */
export async function followChain(deps: Deps, opts: FollowOptions = {}): Promise<FollowResult> {
  const sql = serverSql(deps, "chain follower (indexer)");
  const config = await deps.config.get();
  const c = platformContracts(config);
  const chainId = c.chainId;
  const client = await deps.chain.client(chainId);
  const deadline = Date.now() + (opts.maxMs ?? 20_000);
  const head = Number(await client.getBlockNumber());
  await sql`select app_private.note_chain_head(${chainId}, ${head}::bigint)`;

  let cursor = await readCursor(deps, chainId);
  if (!cursor) {
    const start = Math.max(0, head - LOOKBACK);
    const before = await blockAt(client, start - 1);
    await sql`
      insert into app_private.chain_cursors (chain_id, block_number, block_hash)
      values (${chainId}, ${before ? start - 1 : -1}, ${before?.hash ?? null})
      on conflict (chain_id) do nothing`;
    cursor = (await readCursor(deps, chainId))!;
  }
  const result: FollowResult = {
    from: cursor.number,
    to: cursor.number,
    head,
    rolledBackTo: null,
    incoming: 0,
    nftTransfers: 0,
  };

  const tokens = await knownTokens(deps, chainId);
  const erc20s = new Map(tokens.map((t) => [t.address.toLowerCase(), t]));
  const erc721s = new Set(c.erc721.map((a) => a.toLowerCase()));
  const erc1155s = new Set(c.erc1155.map((a) => a.toLowerCase()));
  const watched = [...tokens.map((t) => t.address), ...c.erc721, ...c.erc1155];
  const required = BigInt(config.wallet.confirmations);
  let budget = opts.maxBlocks ?? Number.MAX_SAFE_INTEGER;

  // The block under the cursor must still be the chain's: otherwise go back to the fork first.
  const checkCursor = async () => {
    if (cursor!.number < 0 || cursor!.hash === null) return;
    const block = cursor!.number <= head ? await blockAt(client, cursor!.number) : null;
    if (block?.hash === cursor!.hash) return;
    const fork = await findFork(deps, client, chainId, head);
    await rollback(deps, chainId, fork);
    result.rolledBackTo = fork.number;
    cursor = fork;
  };
  await checkCursor();

  while (cursor.number < head && budget > 0 && Date.now() < deadline && !opts.signal?.aborted) {
    const from = cursor.number + 1;
    const to = Math.min(head, from + RANGE - 1, cursor.number + budget);
    const blocks = await blocksIn(client, from, to);
    const linked = blocks.every((b, i) =>
      i === 0
        ? cursor!.hash === null || b.parentHash === cursor!.hash
        : b.parentHash === blocks[i - 1].hash
    );
    if (!linked) {
      await checkCursor();
      continue;
    }
    const hashes = new Map(blocks.map((b) => [Number(b.number), b.hash]));
    const logs = watched.length
      ? await client.getLogs({ address: watched, fromBlock: BigInt(from), toBlock: BigInt(to) })
      : [];
    if (logs.some((l) => hashes.get(Number(l.blockNumber)) !== l.blockHash)) {
      // The chain changed between the two reads: read the range again.
      await checkCursor();
      continue;
    }
    const filtered = logs.filter((l) =>
      [TRANSFER, TRANSFER_SINGLE, TRANSFER_BATCH].includes(l.topics[0] as Hex)
    );
    const { fungible, nfts } = decodeLogs(filtered, erc20s, erc721s, erc1155s);
    const nativeSends = blocks.flatMap((b) =>
      b.transactions
        .filter((tx) => tx.to && tx.value > 0n)
        .map((tx) => ({ block: b, tx, to: getAddress(tx.to!), from: getAddress(tx.from) }))
    );
    const candidates = new Set<string>([
      ...fungible.map((f) => getAddress(f.to)),
      ...nfts.flatMap((n) => [getAddress(n.from), getAddress(n.to)]),
      ...nativeSends.map((n) => n.to),
    ]);
    const wallets = await walletsAmong(deps, candidates);

    const incoming: Incoming[] = [];
    for (const f of fungible) {
      const wallet = wallets.get(getAddress(f.to));
      if (!wallet) continue;
      incoming.push({
        walletId: wallet.id,
        userId: wallet.user_id,
        token: f.token,
        from: getAddress(f.from),
        to: getAddress(f.to),
        amount: f.value,
        hash: f.log.transactionHash!,
        logIndex: f.log.logIndex!,
        blockNumber: Number(f.log.blockNumber),
        blockHash: f.log.blockHash!,
      });
    }
    for (const n of nativeSends) {
      const wallet = wallets.get(n.to);
      if (!wallet) continue;
      // Value moves only when the transaction succeeded.
      const receipt = await client.getTransactionReceipt({ hash: n.tx.hash });
      if (receipt.status !== "success") continue;
      incoming.push({
        walletId: wallet.id,
        userId: wallet.user_id,
        token: null,
        from: n.from,
        to: n.to,
        amount: n.tx.value,
        hash: n.tx.hash,
        logIndex: -1,
        blockNumber: Number(n.block.number),
        blockHash: n.block.hash!,
      });
    }
    const ours = nfts.filter((n) =>
      wallets.has(getAddress(n.from)) || wallets.has(getAddress(n.to))
    );
    await fetchNftMetadata(deps, client, chainId, c.multicall3, ours);

    const last = blocks[blocks.length - 1];
    // The cursor first, before any other write (the lock order rollback_chain_index keeps too):
    // two followers then queue on the cursor row, never on each other's transaction rows.
    const moved = await sql.begin(async (tx: Tx) => {
      const advanced = await tx`
        update app_private.chain_cursors
        set block_number = ${to}, block_hash = ${last.hash}, updated_at = now()
        where chain_id = ${chainId} and block_number = ${cursor!.number}
          and block_hash is not distinct from ${cursor!.hash}
        returning 1`;
      if (!advanced.length) return false;
      await tx`
        insert into app_private.chain_blocks (chain_id, number, hash, parent_hash)
        select ${chainId}, * from unnest(
          ${blocks.map((b) => b.number!.toString())}::bigint[], ${
        blocks.map((b) => b.hash!)
      }::text[],
          ${blocks.map((b) => b.parentHash)}::text[])
        on conflict (chain_id, number) do update set hash = excluded.hash, parent_hash = excluded.parent_hash`;
      await tx`
        delete from app_private.chain_blocks where chain_id = ${chainId} and number <= ${
        to - KEEP_BLOCKS
      }`;
      if (incoming.length) await recordIncoming(tx, chainId, head, required, incoming);
      if (ours.length) await recordNfts(tx, chainId, ours);
      // Incoming transfers that now have enough confirmations.
      await tx`
        update app.wallet_transactions set status = 'confirmed', confirmed_at = now()
        where chain_id = ${chainId} and direction = 'in' and status = 'submitted'
          and block_number <= ${head}::bigint - ${required.toString()}::bigint + 1`;
      return true;
    });
    if (!moved) break; // another follower moved the cursor: it goes on from there
    result.incoming += incoming.length;
    result.nftTransfers += ours.length;
    budget -= to - cursor.number;
    cursor = { number: to, hash: last.hash };
    result.to = to;
  }
  return result;
}

/** Writes incoming transfers (the range's transaction; exported for the lock-order test). */
export async function recordIncoming(
  tx: Tx,
  chainId: number,
  head: number,
  required: bigint,
  rows: Incoming[],
): Promise<void> {
  const confirmed = rows.map((r) => BigInt(head - r.blockNumber + 1) >= required);
  await tx`
    insert into app.wallet_transactions (
      wallet_id, user_id, direction, status, chain_id, token_kind, token_address, token_symbol,
      token_name, token_decimals, from_address, to_address, amount, hash, log_index, block_number,
      block_hash, confirmed_at)
    select w, u, 'in', s::app.wallet_transaction_status, ${chainId}, k::app.wallet_token_kind, a,
           sy, n, d, f, t, amt, h, li, bn, bh, case when s = 'confirmed' then now() end
    from unnest(
      ${rows.map((r) => r.walletId)}::uuid[], ${rows.map((r) => r.userId)}::uuid[],
      ${confirmed.map((c) => c ? "confirmed" : "submitted")}::text[],
      ${rows.map((r) => r.token?.kind ?? "native")}::text[],
      ${rows.map((r) => r.token?.address ?? null)}::text[],
      ${rows.map((r) => r.token?.symbol ?? "ETH")}::text[],
      ${rows.map((r) => r.token?.name ?? "Ether")}::text[],
      ${rows.map((r) => r.token?.decimals ?? 18)}::smallint[],
      ${rows.map((r) => r.from)}::text[], ${rows.map((r) => r.to)}::text[],
      ${rows.map((r) => r.amount.toString())}::numeric[], ${rows.map((r) => r.hash)}::text[],
      ${rows.map((r) => r.logIndex)}::int[], ${rows.map((r) => r.blockNumber)}::bigint[],
      ${rows.map((r) => r.blockHash)}::text[]
    ) as x (w, u, s, k, a, sy, n, d, f, t, amt, h, li, bn, bh)
    on conflict (wallet_id, hash, log_index) where direction = 'in' do nothing`;
}

async function recordNfts(tx: Tx, chainId: number, rows: NftTransfer[]): Promise<void> {
  await tx`
    insert into app_private.nft_transfers (
      chain_id, block_number, block_hash, transaction_hash, log_index, batch_index, standard,
      contract, token_id, from_address, to_address, amount)
    select ${chainId}, bn, bh, h, li, bi, s::app.nft_standard, c, tid, f, t, amt from unnest(
      ${rows.map((r) => r.blockNumber)}::bigint[], ${rows.map((r) => r.blockHash)}::text[],
      ${rows.map((r) => r.hash)}::text[], ${rows.map((r) => r.logIndex)}::int[],
      ${rows.map((r) => r.batchIndex)}::int[], ${rows.map((r) => r.standard)}::text[],
      ${rows.map((r) => r.contract)}::text[], ${rows.map((r) => r.tokenId.toString())}::numeric[],
      ${rows.map((r) => getAddress(r.from))}::text[], ${rows.map((r) => getAddress(r.to))}::text[],
      ${rows.map((r) => r.amount.toString())}::numeric[]
    ) as x (bn, bh, h, li, bi, s, c, tid, f, t, amt)
    on conflict do nothing`;
  const holders: string[] = [];
  const contracts: string[] = [];
  const ids: string[] = [];
  for (const r of rows) {
    for (const holder of [getAddress(r.from), getAddress(r.to)]) {
      holders.push(holder);
      contracts.push(r.contract);
      ids.push(r.tokenId.toString());
    }
  }
  await tx`
    select app_private.refresh_wallet_nfts(
      ${chainId}, ${holders}::text[], ${contracts}::text[], ${ids}::numeric[])`;
}
