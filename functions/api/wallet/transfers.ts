/**
 * Transfers out, from request to receipt (docs/wallet.md, "Transfers"). Named server paths
 * (docs/authorization.md): they read the chain, and confirm opens the wallet's key.
 *
 * 1. `createTransfer`: the token and recipient resolved, balances read (one multicall), the gas
 *    estimated, then `app_private.create_wallet_transfer` checks the balances less what is still
 *    in flight (the wallet row locked) and writes a pending transfer that expires after
 *    `wallet.pendingTtlSeconds`. With an Idempotency-Key the key is claimed first in the same
 *    transaction: a duplicate waits for the first and replays its answer.
 * 2. `confirmTransfer`: in one transaction, the row locked, the wallet's next nonce allocated in
 *    Postgres (`app_private.allocate_wallet_nonce`: its row lock makes concurrent confirms of one
 *    wallet take turns, and a rollback gives the number back), the key opened and the transaction
 *    signed, then the signed bytes and hash stored and a `wallet.broadcast` job queued
 *    (`app_private.submit_wallet_transaction`). Nothing is sent before that commit.
 * 3. `broadcastTransfer` (the job): sends those bytes; a node that does not answer means a retry
 *    later with the same bytes, so nothing can go out twice. When a transaction sent outside the
 *    platform (an exported key) used the nonce before any node accepted the bytes, they can never
 *    be mined: the transfer is signed again with the wallet's next nonce (`signAgain`). Then the
 *    receipt is checked.
 *    A pending transfer can instead be cancelled by its owner (`cancelTransfer`); the confirm and
 *    the cancel both lock the row, and only a pending transfer is signed or cancelled.
 * 4. `watchTransfer` (the job `wallet.watch`): waits for the receipt and `wallet.confirmations`
 *    blocks, then records confirmed (or failed when it reverted) with the fee paid.
 */
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  InsufficientFundsError,
  keccak256,
  NonceTooLowError,
  parseTransaction,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
} from "viem";
import { type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import type { Sql, Tx } from "../../_shared/db.ts";
import { ApiError, conflict, notFound, unprocessable } from "../../_shared/errors.ts";
import type { Deps } from "../core/context.ts";
import { RetryJobAfter } from "../core/job-queue.ts";
import { asServer, serverSql } from "../core/doors.ts";
import {
  type ChainClient,
  type FeeQuote,
  isChainDown,
  isLoopbackUrl,
  onChain,
  platformContracts,
} from "./chain.ts";
import { withPrivateKey } from "./keys.ts";
import { readBalances } from "./balances.ts";
import {
  customTokensOf,
  platformTokens,
  resolveToken,
  type Token,
  walletNotConfigured,
} from "./tokens.ts";
import { sealedKeyOf, walletOf, walletsDisabled } from "./wallets.ts";
import { inWalletQueue } from "./wallet-queue.ts";

/** A transaction as the API shows it (built in SQL: `app.wallet_transaction_json`). */
export type TransactionJson = Record<string, unknown> & { id: string; status: string };

export interface TransferInput {
  to: Address | { userId: string };
  /** `native`, a symbol or a token address. */
  token: string;
  /** Base units, > 0. */
  amount: bigint;
}

/** Gas estimates get this much headroom (the state may change before the transfer is mined). */
const GAS_MARGIN_PERCENT = 120n;

/** A transfer's call: a plain value transfer (no token address), or an ERC-20 `transfer`. */
function callOf(tokenAddress: string | null, to: Address, amount: bigint) {
  if (tokenAddress === null) return { to, value: amount, data: undefined };
  return {
    to: tokenAddress as Address,
    value: 0n,
    data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, amount] }),
  };
}

function insufficient(token: Token, balance: bigint, amount: bigint): ApiError {
  return new ApiError(
    "insufficient_funds",
    "The balance does not cover this amount.",
    {
      token: token.address ?? "native",
      balance: balance.toString(),
      amount: amount.toString(),
    },
  );
}

/** The wallet address of an active user, for `to: { userId }` (422 when there is none). */
async function recipientOf(sql: Sql, userId: string): Promise<Address> {
  const [row] = await sql<{ address: Address }[]>`
    select w.address from app.wallets w join app.users u on u.id = w.user_id
    where w.user_id = ${userId} and u.status = 'active'`;
  if (!row) {
    throw unprocessable("No active user with a wallet has this id.", { to: { userId } });
  }
  return row.address;
}

/**
 * Creates a pending transfer (201) or replays the first answer for the same Idempotency-Key and
 * body. The key stores the bare transaction (as it always has) and the route wraps it as
 * `{ transaction }`, fresh or replayed, so keys stored before the answer was wrapped replay in
 * the same shape as new ones. 404 without a wallet; 422 for an unknown token or recipient, `insufficient_funds` when the
 * balance less what is in flight (and gas) does not cover it; 503 `chain_unavailable`.
 */
export async function createTransfer(
  deps: Deps,
  userId: string,
  input: TransferInput,
  idempotency: { key: string; hash: string } | null,
): Promise<TransactionJson> {
  const sql = serverSql(deps, "wallet transfer");
  const config = await deps.config.get();
  const c = platformContracts(config);
  const wallet = await walletOf(sql, userId);
  if (!wallet) throw notFound("You have no wallet yet (POST /api/wallet/create).");
  const tokens = [
    ...await platformTokens(deps, config),
    ...await customTokensOf(sql, userId, c.chainId),
  ];
  const token = resolveToken(tokens, input.token);
  const toUserId = typeof input.to === "string" ? null : input.to.userId;
  const to = typeof input.to === "string" ? input.to : await recipientOf(sql, input.to.userId);
  if (!c.multicall3) throw walletNotConfigured("wallet.contracts.multicall3");

  // A key whose first request finished answers from the database alone, node or no node.
  if (idempotency) {
    const [{ answer }] = await sql<
      { answer: { conflict?: boolean; response?: TransactionJson | null } | null }[]
    >`
      select app_private.idempotent_answer(
        ${userId}, ${idempotency.key}, 'wallet.transfer', ${idempotency.hash}) as answer`;
    if (answer?.conflict) throw conflict("This Idempotency-Key was used with another request.");
    if (answer?.response) return answer.response;
  }

  // The chain first, with no connection held: the balances, the gas, the fee quote.
  const client = await deps.chain.client(c.chainId);
  const native = tokens.find((t) => t.kind === "native")!;
  const read = await readBalances(
    deps,
    c.chainId,
    c.multicall3,
    wallet.address as Address,
    token.kind === "native" ? [native] : [native, token],
  );
  const nativeBalance = BigInt(read.balances[0].balance ?? "0");
  const tokenBalance = token.kind === "native"
    ? nativeBalance
    : BigInt(read.balances[1].balance ?? "0");
  if (input.amount > tokenBalance) throw insufficient(token, tokenBalance, input.amount);
  const call = callOf(token.address, to, input.amount);
  const estimate = await onChain(() =>
    client.estimateGas({ account: wallet.address as Address, ...call })
  ).catch((err) => {
    if (err instanceof ApiError) throw err;
    if (err?.walk?.((e: unknown) => e instanceof InsufficientFundsError)) {
      throw insufficient(native, nativeBalance, token.kind === "native" ? input.amount : 0n);
    }
    throw unprocessable("The chain would refuse this transfer.", {
      reason: String(err?.shortMessage ?? err?.message ?? err).slice(0, 300),
    });
  });
  const gasLimit = (estimate * GAS_MARGIN_PERCENT + 99n) / 100n;
  const fees = await deps.chain.fees(c.chainId);

  // Then one short transaction: the key claimed (a concurrent request with the same key waits
  // for this one and replays it), and create_wallet_transfer, which locks the wallet and checks
  // these balances against the transfers still in flight. One wallet's creates queue in this
  // process first (wallet-queue.ts).
  return await inWalletQueue(wallet.id, () =>
    // The idempotency functions act for `auth.uid()`: the caller, in this transaction only.
    asServer(sql, { actingFor: userId }, async (tx) => {
      if (idempotency) {
        const [{ claimed }] = await tx<
          { claimed: { conflict?: boolean; response?: unknown } | null }[]
        >`
          select app.claim_idempotency_key(${idempotency.key}, 'wallet.transfer', ${idempotency.hash})
            as claimed`;
        if (claimed?.conflict) {
          throw conflict("This Idempotency-Key was used with another request.");
        }
        if (claimed?.response) return claimed.response as TransactionJson;
      }
      const [{ json }] = await tx<{ json: TransactionJson }[]>`
        select app.wallet_transaction_json(t) as json
        from app_private.create_wallet_transfer(
          ${userId}, ${c.chainId}, ${token.kind}, ${token.address}, ${token.symbol}, ${token.name},
          ${token.decimals}, ${to}, ${toUserId}, ${input.amount.toString()}::numeric,
          ${gasLimit.toString()}::numeric, ${fees.maxFeePerGas.toString()}::numeric,
          ${tokenBalance.toString()}::numeric, ${nativeBalance.toString()}::numeric) t`;
      if (idempotency) {
        await tx`select app.store_idempotent_response(${idempotency.key}, ${
          tx.json(json as never)
        })`;
      }
      return json;
    }));
}

interface TransferRow {
  id: string;
  wallet_id: string;
  status: string;
  expired: boolean;
  chain_id: number;
  token_kind: string;
  token_address: string | null;
  from_address: string;
  to_address: string;
  amount: string;
  gas_limit: string;
  /** The owner exported the key: it may have been used outside the platform. */
  exported: boolean;
  json: TransactionJson;
}

async function transferRow(
  sql: Sql | Tx,
  userId: string,
  id: string,
  lock: boolean,
): Promise<TransferRow | null> {
  const [row] = await sql<TransferRow[]>`
    select t.id, t.wallet_id, t.status, t.expires_at <= now() as expired, t.chain_id,
           t.token_kind, t.token_address, t.from_address, t.to_address, t.amount::text,
           t.gas_limit::text,
           exists (select 1 from app.wallets w where w.id = t.wallet_id and w.exported_at is not null)
             as exported,
           app.wallet_transaction_json(t) as json
    from app.wallet_transactions t
    where t.id = ${id} and t.user_id = ${userId} and t.direction = 'out'
    ${lock ? sql`for update of t` : sql``}`;
  return row ?? null;
}

function cancelled(): ApiError {
  return new ApiError(
    "invalid_transition",
    "This transfer was cancelled; nothing was signed or sent.",
    { status: "cancelled" },
  );
}

function expired(): ApiError {
  return unprocessable("This transfer expired before it was confirmed; nothing was sent.");
}

/** A transfer's EIP-1559 transaction, signed with `nonce`. */
async function signTransfer(
  account: PrivateKeyAccount,
  row: {
    chain_id: number;
    token_address: string | null;
    to_address: string;
    amount: string;
    gas_limit: string;
  },
  nonce: string,
  fees: FeeQuote,
): Promise<Hex> {
  const call = callOf(row.token_address, row.to_address as Address, BigInt(row.amount));
  return await account.signTransaction({
    type: "eip1559",
    chainId: row.chain_id,
    nonce: Number(nonce),
    gas: BigInt(row.gas_limit),
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    ...call,
  });
}

/**
 * The confirm's transaction: the transfer locked and checked again, a nonce from the wallet's
 * counter (first moved up to `chainNonce`, the chain's count, when it was read), the signature,
 * the signed bytes stored with the `wallet.broadcast` job.
 */
async function signAndSubmit(
  deps: Deps,
  userId: string,
  id: string,
  account: PrivateKeyAccount,
  fees: FeeQuote,
  chainNonce: number | null,
): Promise<{ json: TransactionJson } | { expired: true }> {
  const sql = serverSql(deps, "wallet confirm");
  return await sql.begin(async (tx) => {
    const row = await transferRow(tx, userId, id, true);
    if (!row) throw notFound("No such transaction.");
    // Cancelled while this confirm waited for the row: the cancel won, nothing is signed.
    if (row.status === "cancelled") throw cancelled();
    if (row.status !== "pending") return { json: row.json };
    if (row.expired) return { expired: true } as const;
    if (chainNonce !== null) {
      await tx`select app_private.sync_wallet_nonce(${row.wallet_id}, ${chainNonce})`;
    }
    const [{ nonce }] = await tx<{ nonce: string }[]>`
      select app_private.allocate_wallet_nonce(${row.wallet_id})::text as nonce`;
    const raw = await signTransfer(account, row, nonce, fees);
    const [{ json }] = await tx<{ json: TransactionJson }[]>`
      select app.wallet_transaction_json(t) as json
      from app_private.submit_wallet_transaction(
        ${id}, ${nonce}::bigint, ${keccak256(raw)}, ${raw},
        ${fees.maxFeePerGas.toString()}::numeric,
        ${fees.maxPriorityFeePerGas.toString()}::numeric) t`;
    return { json };
  });
}

/**
 * Confirms a pending transfer: signed with the wallet's next nonce and queued for broadcast (200,
 * `submitted`). Confirming again answers the transaction as it is now; another user's transfer is
 * 404; an expired one 422; a node that does not answer 503 with nothing written.
 */
export async function confirmTransfer(
  deps: Deps,
  userId: string,
  id: string,
): Promise<TransactionJson> {
  const sql = serverSql(deps, "wallet confirm");
  const seen = await transferRow(sql, userId, id, false);
  if (!seen) throw notFound("No such transaction.");
  if (seen.status === "expired" || (seen.status === "pending" && seen.expired)) {
    await sql`
      update app.wallet_transactions set status = 'expired'
      where id = ${id} and status = 'pending' and expires_at <= now()`;
    throw expired();
  }
  if (seen.status === "cancelled") throw cancelled();
  if (seen.status !== "pending") return seen.json;
  if (!deps.walletKeys) throw walletsDisabled();
  const ring = await deps.walletKeys;
  // The fee quote needs the node: without it, nothing is written and the caller gets 503.
  const fees = await deps.chain.fees(seen.chain_id);
  // A key that was exported may have been used outside the platform: its nonces are then taken
  // on the chain, and the counter moves up to the chain's count before this one takes its number.
  // (Only exported wallets pay this call; a use between this read and the broadcast is caught
  // there: broadcastTransfer signs again.)
  let chainNonce: number | null = null;
  if (seen.exported) {
    const client = await deps.chain.client(seen.chain_id);
    chainNonce = await onChain(() =>
      client.getTransactionCount({ address: seen.from_address as Address, blockTag: "latest" })
    );
  }

  // The key is opened and its account derived (elliptic-curve work, milliseconds of CPU) before
  // the confirm queues behind the wallet's others (wallet-queue.ts) and takes its nonce lock, so
  // only the signature is made in turn. The key is zeroed when done.
  const sealed = await sealedKeyOf(sql, seen.wallet_id);
  const outcome = await withPrivateKey(ring, seen.wallet_id, seen.from_address, sealed, (key) => {
    const account = privateKeyToAccount(key);
    return inWalletQueue(
      seen.wallet_id,
      () => signAndSubmit(deps, userId, id, account, fees, chainNonce),
    );
  });
  if ("expired" in outcome) {
    await sql`
      update app.wallet_transactions set status = 'expired'
      where id = ${id} and status = 'pending' and expires_at <= now()`;
    throw expired();
  }
  return outcome.json;
}

/**
 * Cancels a pending transfer of the caller (`app.cancel_wallet_transfer`, as the caller: the row
 * locked, pending -> cancelled), so its amount and gas are no longer reserved. A confirm locks the
 * same row before it signs and signs only a pending transfer: of the two racing, exactly one
 * wins. Another user's: 404; submitted, confirmed, failed or expired: 422 `invalid_transition`;
 * cancelled already: the transaction as it is.
 */
export async function cancelTransfer(tx: Tx, id: string): Promise<TransactionJson> {
  const [{ json }] = await tx<{ json: TransactionJson }[]>`
    select app.cancel_wallet_transfer(${id}::uuid) as json`;
  return json;
}

// ---------------------------------------------------------------------------------------------
// The jobs' side: broadcasting and watching
// ---------------------------------------------------------------------------------------------

interface SubmittedRow {
  id: string;
  status: string;
  chain_id: number;
  wallet_id: string;
  from_address: string;
  hash: Hex;
  nonce: string;
  raw: Hex;
}

async function submittedRow(sql: Sql, id: string): Promise<SubmittedRow | null> {
  const [row] = await sql<SubmittedRow[]>`
    select t.id, t.status, t.chain_id, t.wallet_id, t.from_address, t.hash, t.nonce::text, s.raw
    from app.wallet_transactions t
    join app_private.wallet_signed_transactions s on s.transaction_id = t.id
    where t.id = ${id}`;
  return row ?? null;
}

/** Seconds before the next try after the node did not answer: 2, 4, 8, 16, then 30. */
export function outageDelay(attempt: number): number {
  return Math.min(30, 2 ** Math.min(Math.max(attempt, 1), 5));
}

/**
 * Seconds before receipt check number `round` (1 is the first after the broadcast): about a
 * block, growing slowly for slow chains. A node on this machine (anvil) mines as a transaction
 * arrives, but its receipt can lag the send by a moment: look again a tenth of a second later.
 */
function watchDelay(round: number, loopback: boolean): number {
  if (loopback) return round <= 1 ? 0.1 : Math.min(5, 0.5 * (round - 1));
  return round <= 1 ? 0.5 : Math.min(60, 1 + round);
}

/** A node on this machine (the local stack's anvil). */
const onLoopback = (deps: Deps) => isLoopbackUrl(deps.chain.url);

/** Receipt checks of one transfer before the watch gives up (hours on any chain). */
export const WATCH_ROUNDS = 400;

/**
 * Queues receipt check number `round` of a transfer in `seconds`. Each check is a job of its own
 * (so waiting for blocks is not a failed attempt); a rollback of its block queues round 1 again.
 */
async function queueWatch(sql: Sql, id: string, round: number, seconds: number): Promise<void> {
  await sql`
    select app_private.enqueue_job(
      'wallet.watch', ${sql.json({ transactionId: id, round } as never)}::jsonb,
      now() + make_interval(secs => ${seconds}), null, 100)`;
}

/**
 * The wallet's submitted transactions below `nonce` that no attempt has broadcast yet, lowest
 * nonce first: the confirms of one wallet commit in nonce order, but their broadcast jobs run
 * side by side, and a node holds a transaction whose predecessor it has not seen (it is mined,
 * and its receipt can be read, only once the gap is filled).
 */
async function unsentBefore(sql: Sql, row: SubmittedRow): Promise<{ id: string; raw: Hex }[]> {
  return await sql<{ id: string; raw: Hex }[]>`
    select t.id, s.raw
    from app.wallet_transactions t
    join app_private.wallet_signed_transactions s on s.transaction_id = t.id
    where t.wallet_id = ${row.wallet_id} and t.chain_id = ${row.chain_id}
      and t.status = 'submitted' and t.nonce < ${row.nonce}::bigint and s.broadcasts = 0
    order by t.nonce`;
}

/** Marks transactions as broadcast once more (the node accepted them, or had them already). */
async function noteBroadcast(sql: Sql, ids: string[]): Promise<void> {
  await sql`
    update app_private.wallet_signed_transactions
    set broadcasts = broadcasts + 1, last_broadcast_at = now()
    where transaction_id = any(${ids}::uuid[])`;
}

/** Is the transaction known to the node (pending or mined)? */
async function known(client: ChainClient, hash: Hex): Promise<boolean> {
  try {
    await client.getTransaction({ hash });
    return true;
  } catch (err) {
    if (err instanceof TransactionNotFoundError) return false;
    throw err;
  }
}

/**
 * Checks the receipt and records the outcome once `wallet.confirmations` blocks are on it.
 * Returns true when the transfer is finished, false to look again later.
 */
async function settle(deps: Deps, client: ChainClient, row: SubmittedRow): Promise<boolean> {
  const sql = serverSql(deps, "wallet broadcast and watch");
  let receipt;
  try {
    receipt = await client.getTransactionReceipt({ hash: row.hash });
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError) return false;
    throw err;
  }
  const config = await deps.config.get();
  const required = BigInt(config.wallet.confirmations);
  // One confirmation is the receipt itself: no need to ask for the head.
  if (required > 1n) {
    const head = await client.getBlockNumber();
    await sql`select app_private.note_chain_head(${row.chain_id}, ${head.toString()}::bigint)`;
    if (head - receipt.blockNumber + 1n < required) return false;
  }
  const fee = receipt.gasUsed * receipt.effectiveGasPrice;
  await sql`
    select app_private.finish_wallet_transaction(
      ${row.id}, ${receipt.status === "success" ? "confirmed" : "failed"},
      ${receipt.blockNumber.toString()}::bigint, ${receipt.blockHash},
      ${fee.toString()}::numeric, ${
    receipt.status === "success" ? null : "reverted on the chain"
  })`;
  return true;
}

export interface TransferJobContext {
  deps: Deps;
  attempt: number;
  maxAttempts: number;
}

/** How many times one broadcast run signs a transfer again before it leaves it to a retry. */
const SIGN_AGAIN_PER_RUN = 3;

/**
 * A transfer whose nonce a transaction the platform did not send has used (the key was exported
 * and used elsewhere), signed again with the wallet's next nonce. Only when the stored bytes can
 * never be mined and were never out: the chain's mined count is past their nonce (so it is used
 * in a block, not merely pending somewhere) and no node ever accepted them (`broadcasts = 0`;
 * bytes a node once held may still be mined by it, and a second signature could then pay twice).
 * In one transaction, in the wallet's queue: the transfer locked and checked again (still
 * submitted with the same hash), the counter moved up to the chain's count, the next number
 * taken (never one another platform transfer holds), the new signature stored and the old hash
 * kept (`app_private.resign_wallet_transaction`). Answers `signed again`, `was out` (a node
 * accepted the old bytes once: the caller fails the transfer), or `not mined` (the nonce is not
 * yet used in a block: the caller retries later).
 */
async function signAgain(
  deps: Deps,
  client: ChainClient,
  row: SubmittedRow,
): Promise<"signed again" | "was out" | "not mined"> {
  const sql = serverSql(deps, "wallet broadcast and watch");
  const mined = await client.getTransactionCount({
    address: row.from_address as Address,
    blockTag: "latest",
  });
  if (BigInt(mined) <= BigInt(row.nonce)) return "not mined";
  const [signed] = await sql<{ broadcasts: number }[]>`
    select broadcasts from app_private.wallet_signed_transactions where transaction_id = ${row.id}`;
  if (!signed || signed.broadcasts > 0) return "was out";
  if (!deps.walletKeys) throw walletsDisabled();
  const ring = await deps.walletKeys;
  const fees = await deps.chain.fees(row.chain_id);
  const sealed = await sealedKeyOf(sql, row.wallet_id);
  return await withPrivateKey(ring, row.wallet_id, row.from_address, sealed, (key) => {
    const account = privateKeyToAccount(key);
    return inWalletQueue(row.wallet_id, () =>
      sql.begin(async (tx) => {
        const [now] = await tx<
          {
            status: string;
            hash: string;
            broadcasts: number;
            chain_id: number;
            token_address: string | null;
            to_address: string;
            amount: string;
            gas_limit: string;
          }[]
        >`
          select t.status, t.hash, s.broadcasts, t.chain_id, t.token_address, t.to_address,
                 t.amount::text, t.gas_limit::text
          from app.wallet_transactions t
          join app_private.wallet_signed_transactions s on s.transaction_id = t.id
          where t.id = ${row.id}
          for update of t, s`;
        // Another run got here first (it signed again, sent it, or the transfer ended).
        if (!now || now.status !== "submitted" || now.hash !== row.hash) return "signed again";
        if (now.broadcasts > 0) return "was out";
        await tx`select app_private.sync_wallet_nonce(${row.wallet_id}, ${mined})`;
        const [{ nonce }] = await tx<{ nonce: string }[]>`
          select app_private.allocate_wallet_nonce(${row.wallet_id})::text as nonce`;
        const raw = await signTransfer(account, now, nonce, fees);
        await tx`
          select app_private.resign_wallet_transaction(
            ${row.id}, ${row.hash}, ${nonce}::bigint, ${keccak256(raw)}, ${raw},
            ${fees.maxFeePerGas.toString()}::numeric,
            ${fees.maxPriorityFeePerGas.toString()}::numeric)`;
        deps.log("info", "wallet: a transfer's nonce was used outside the platform; signed again", {
          transactionId: row.id,
          replacedNonce: Number(row.nonce),
          nonce: Number(nonce),
        });
        return "signed again" as const;
      }));
  });
}

/**
 * `wallet.broadcast`: sends the stored bytes, after the wallet's earlier transactions that are
 * still unsent (so the node receives a wallet's transactions in nonce order). A node that does
 * not answer: retried later with the same bytes. A refusal from the node: if the node already
 * has the transaction (a previous attempt got through, its answer lost) that is success; a nonce
 * already taken by a transaction the platform did not send (the key was exported and used): the
 * transfer is signed again with the wallet's next nonce and sent (`signAgain`), or, when a node
 * had accepted its bytes once, failed with the counter moved past the chain's; any other refusal
 * is retried, and fails the transfer on the last attempt. Then the receipt: settled at once when
 * it is there (anvil mines as transactions arrive), otherwise a `wallet.watch` job.
 */
export async function broadcastTransfer(
  ctx: TransferJobContext,
  id: string,
  signedAgain = 0,
): Promise<void> {
  const { deps } = ctx;
  const sql = serverSql(deps, "wallet broadcast and watch");
  const row = await submittedRow(sql, id);
  if (!row || row.status !== "submitted") return;
  try {
    const client = await deps.chain.client(row.chain_id);
    // The wallet's earlier transactions first, in nonce order, when their own jobs have not sent
    // them yet (their jobs still run: the node answers that it knows them). Only an outage stops
    // this; any other refusal is for their own jobs to judge.
    const earlier = await unsentBefore(sql, row);
    const sent: string[] = [];
    for (const tx of earlier) {
      try {
        await client.sendRawTransaction({ serializedTransaction: tx.raw });
        sent.push(tx.id);
      } catch (err) {
        if (isChainDown(err)) throw err;
      }
    }
    if (sent.length) await noteBroadcast(sql, sent);
    try {
      await client.sendRawTransaction({ serializedTransaction: row.raw });
    } catch (err) {
      if (isChainDown(err)) throw err;
      if (!await known(client, row.hash)) {
        // sendRawTransaction passes the node's refusal on as it came: read its words.
        const said = `${(err as { details?: string }).details ?? ""} ${String(err)}`;
        const nonceTaken = err instanceof NonceTooLowError || /nonce too low/i.test(said);
        const outcome = nonceTaken ? await signAgain(deps, client, row) : null;
        if (outcome === "signed again") {
          if (signedAgain + 1 >= SIGN_AGAIN_PER_RUN) {
            throw new RetryJobAfter(1, "signed again: its nonce was used outside the platform");
          }
          return await broadcastTransfer(ctx, id, signedAgain + 1);
        }
        if (outcome === "was out") {
          const chainNonce = await client.getTransactionCount({
            address: row.from_address as Address,
            blockTag: "pending",
          });
          await sql`select app_private.sync_wallet_nonce(${row.wallet_id}, ${chainNonce})`;
          await finishFailed(
            deps,
            row.id,
            "its nonce was used by a transaction sent outside the platform",
          );
          return;
        }
        const reason = String((err as { shortMessage?: string }).shortMessage ?? err).slice(0, 300);
        if (ctx.attempt >= ctx.maxAttempts) {
          await finishFailed(deps, row.id, `the node refused it: ${reason}`);
          await releaseNonce(sql, row);
          return;
        }
        throw new RetryJobAfter(outageDelay(ctx.attempt), `the node refused it: ${reason}`);
      }
    }
    await noteBroadcast(sql, [row.id]);
    if (!await settle(deps, client, row)) {
      await queueWatch(sql, row.id, 1, watchDelay(1, onLoopback(deps)));
    }
  } catch (err) {
    if (isChainDown(err)) {
      throw new RetryJobAfter(outageDelay(ctx.attempt), "the chain node does not answer");
    }
    throw err;
  }
}

/**
 * `wallet.watch`: checks a submitted transfer's receipt until it has enough confirmations. A
 * transaction the node no longer knows (dropped, or a node that lost its state) is sent again,
 * the same bytes.
 */
export async function watchTransfer(
  ctx: TransferJobContext,
  id: string,
  round: number,
): Promise<void> {
  const { deps } = ctx;
  const sql = serverSql(deps, "wallet broadcast and watch");
  const row = await submittedRow(sql, id);
  if (!row || row.status !== "submitted") return;
  try {
    const client = await deps.chain.client(row.chain_id);
    if (await settle(deps, client, row)) return;
    if (!await known(client, row.hash)) {
      await client.sendRawTransaction({ serializedTransaction: row.raw }).catch((err) => {
        if (isChainDown(err)) throw err;
      });
    }
  } catch (err) {
    if (isChainDown(err)) {
      throw new RetryJobAfter(outageDelay(ctx.attempt), "the chain node does not answer");
    }
    throw err;
  }
  if (round >= WATCH_ROUNDS) {
    deps.log("error", "wallet: a submitted transfer is still not confirmed; stopped watching", {
      transactionId: id,
      rounds: round,
    });
    return;
  }
  await queueWatch(sql, id, round + 1, watchDelay(round + 1, onLoopback(deps)));
}

async function finishFailed(deps: Deps, id: string, error: string): Promise<void> {
  const sql = serverSql(deps, "wallet broadcast and watch");
  await sql`
    select app_private.finish_wallet_transaction(${id}, 'failed', null, null, null, ${error})`;
}

/**
 * A transfer the node never took gives its nonce back when no later one was allocated, so the
 * wallet's next transfer does not wait behind a gap.
 */
async function releaseNonce(sql: Sql, row: SubmittedRow): Promise<void> {
  await sql`
    update app_private.wallet_nonces set next_nonce = ${row.nonce}::bigint, updated_at = now()
    where wallet_id = ${row.wallet_id} and next_nonce = ${row.nonce}::bigint + 1`;
}

/** The decoded fields of a stored raw transaction (for tests and operators). */
export function decodeRaw(raw: Hex) {
  return parseTransaction(raw);
}
