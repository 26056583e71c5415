/**
 * The follower's lock order (issue 25, item 8: "deadlock detected" from the follower while
 * transfers ran). Everything that writes the chain index takes the cursor row
 * (`app_private.chain_cursors`) first: a range's transaction moves it by compare-and-set before
 * it writes a row, and `app_private.rollback_chain_index` locks it before it deletes or moves
 * one. Before the fix the rollback took the cursor last, after deleting the incoming rows of the
 * lost blocks: a second follower (every `npm start --processes N` server runs one, and the
 * `wallet.index` job joins them after an outage) recording the same transfer, sent again with the
 * same bytes and mined again, waited for that delete while holding the cursor: a cycle, and
 * Postgres killed one side with 40P01.
 *
 * The race is set up step by step on two connections, so it happens every run: follower B holds
 * the cursor (its range's compare-and-set), follower A starts the rollback, and B then writes
 * the incoming row with the follower's own statement.
 */
import assert from "node:assert/strict";
import type { Sql, Tx } from "../../functions/_shared/db.ts";
import { type Incoming, recordIncoming } from "../../functions/api/wallet/indexer.ts";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { addressOfCaller, follow, fund, platform, settle, statusOf } from "../support/wallet.ts";

const t = testApp();
const contracts = await platform(t.deps);

/** Waits until a backend running `pattern` waits for a lock; false after `ms`. */
async function waitingOnLock(sql: Sql, pattern: string, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where wait_event_type = 'Lock' and query like ${"%" + pattern + "%"}
        and pid <> pg_backend_pid()`;
    if (n > 0) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

test("[wallet] a rollback and another follower's range take the cursor first: no deadlock when both touch a transfer sent again after a reorganization", async () => {
  const sender = await signInAs(t, "SUBSCRIBER");
  const receiver = await signInAs(t, "SUBSCRIBER");
  const from = await addressOfCaller(t, sender.accessToken);
  await addressOfCaller(t, receiver.accessToken);
  await fund(contracts, from, { nfts: false });
  // A transfer between two of the platform's wallets: out for one, in for the other.
  const { transaction: created } = await expectJson(
    await t.request("POST", "/api/wallet/transfer", {
      token: sender.accessToken,
      body: { to: { userId: receiver.user.id }, token: "native", amount: "4321" },
    }),
    201,
  );
  await expectJson(
    await t.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
      token: sender.accessToken,
    }),
    200,
  );
  assert.equal(await settle(t.deps, created.id), "confirmed");
  await follow(t.deps);
  const [incoming] = await t.deps.sql<
    {
      wallet_id: string;
      user_id: string;
      from_address: string;
      to_address: string;
      amount: string;
      hash: string;
      block_number: string;
      block_hash: string;
      chain_id: number;
    }[]
  >`
    select wallet_id, user_id, from_address, to_address, amount::text, hash, block_number::text,
           block_hash, chain_id
    from app.wallet_transactions where direction = 'in' and user_id = ${receiver.user.id}`;
  assert.ok(incoming, "the follower recorded the receiver's side");
  const minedAt = Number(incoming.block_number);
  const [cursor] = await t.deps.sql<{ block_number: string; block_hash: string }[]>`
    select block_number::text, block_hash from app_private.chain_cursors
    where chain_id = ${incoming.chain_id}`;
  const [fork] = await t.deps.sql<{ hash: string }[]>`
    select hash from app_private.chain_blocks
    where chain_id = ${incoming.chain_id} and number = ${minedAt - 1}`;

  // Follower B: its range's transaction moves the cursor (the compare-and-set) and, a moment
  // later, records the re-mined transfer with the follower's statement.
  let bHolds!: () => void;
  const bHolding = new Promise<void>((r) => bHolds = r);
  let aWaiting!: () => void;
  const aStarted = new Promise<void>((r) => aWaiting = r);
  const again: Incoming = {
    walletId: incoming.wallet_id,
    userId: incoming.user_id,
    token: null,
    from: incoming.from_address,
    to: incoming.to_address,
    amount: BigInt(incoming.amount),
    hash: incoming.hash,
    logIndex: -1,
    blockNumber: minedAt,
    blockHash: incoming.block_hash,
  };
  const followerB = t.deps.sql.begin(async (tx: Tx) => {
    const moved = await tx`
      update app_private.chain_cursors
      set block_number = ${cursor.block_number}::bigint, block_hash = ${cursor.block_hash},
          updated_at = now()
      where chain_id = ${incoming.chain_id} and block_number = ${cursor.block_number}::bigint
        and block_hash is not distinct from ${cursor.block_hash}
      returning 1`;
    assert.equal(moved.length, 1);
    bHolds();
    await aStarted;
    await recordIncoming(tx, incoming.chain_id, Number(cursor.block_number), 1n, [again]);
  }).then(() => null, (err) => err as { code?: string });

  // Follower A: found the fork below the transfer's block and rolls back to it.
  await bHolding;
  const followerA = t.deps.sql`
    select app_private.rollback_chain_index(
      ${incoming.chain_id}, ${minedAt - 1}::bigint, ${fork.hash})`
    .then(() => null, (err) => err as { code?: string });
  assert.ok(await waitingOnLock(t.deps.sql, "rollback_chain_index"), "A waits for B's cursor");
  aWaiting();

  const [errB, errA] = await Promise.all([followerB, followerA]);
  assert.equal(errB?.code, undefined, `follower B: ${errB}`);
  assert.equal(errA?.code, undefined, `follower A: ${errA}`);

  // A ran after B committed: the rollback stands (the cursor at the fork, the receiver's row
  // gone, the sender's transfer back to submitted), and the next run records it all again.
  const [after] = await t.deps.sql<{ block_number: number }[]>`
    select block_number::int from app_private.chain_cursors where chain_id = ${incoming.chain_id}`;
  assert.equal(after.block_number, minedAt - 1);
  assert.equal(await statusOf(t.deps, created.id), "submitted");
  assert.equal(await settle(t.deps, created.id), "confirmed");
  await follow(t.deps);
  const [{ n }] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.wallet_transactions
    where direction = 'in' and user_id = ${receiver.user.id} and hash = ${incoming.hash}`;
  assert.equal(n, 1, "recorded once again");
});
