/**
 * The chain follower against the run's throwaway chain: incoming transfers (native and ERC-20)
 * and NFT holdings with their decoded metadata; resuming from its cursor after a restart; and
 * reorganizations (anvil_reorg replaces the last blocks): what was recorded from the lost blocks
 * is rolled back, holdings are recomputed, and an outgoing transfer whose block was lost is sent
 * again (the same bytes) and confirmed in the new chain.
 */
import assert from "node:assert/strict";
import { type Address, parseEther, toHex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { compileContracts } from "../../stack/chain/compile.ts";
import { chainClients } from "../../stack/chain/deploy.ts";
import { openPrivateKey } from "../../functions/api/wallet/keys.ts";
import { sealedKeyOf } from "../../functions/api/wallet/wallets.ts";
import { rpc } from "../../stack/chain/anvil.ts";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import {
  addressOfCaller,
  follow,
  fund,
  platform,
  sendNative,
  settle,
  statusOf,
  testRpcUrl,
} from "../support/wallet.ts";

const t = testApp();
const contracts = await platform(t.deps);

async function history(token: string, query = "") {
  return (await expectJson(
    await t.request("GET", `/api/wallet/transactions${query}`, { token }),
    200,
  )).items as { id: string; hash: string; status: string; direction: string; amount: string }[];
}

async function nfts(token: string) {
  return (await expectJson(await t.request("GET", "/api/wallet/nfts", { token }), 200)).items as {
    contract: string;
    tokenId: string;
    standard: string;
    balance: string;
    name: string | null;
    image: string | null;
    tokenUri: string | null;
    collection: { name: string | null; symbol: string | null };
  }[];
}

const head = async () => Number(await rpc<string>(testRpcUrl(), "eth_blockNumber"));

test("[wallet] the follower records incoming native and ERC-20 transfers and NFT holdings (Transfer, TransferSingle, TransferBatch, in and out) with their metadata", async () => {
  const me = await signInAs(t, "MEMBER");
  const address = await addressOfCaller(t, me.accessToken);
  await follow(t.deps);
  await fund(contracts, address);
  const hash = await sendNative(address, parseEther("0.5"));
  const result = await follow(t.deps);
  assert.ok(result.incoming >= 5, `incoming recorded (${result.incoming})`);

  const incoming = await history(me.accessToken, "?direction=in");
  const tokens = incoming.map((i) => (i as unknown as { token: { symbol: string } }).token.symbol)
    .sort();
  assert.deepEqual(
    tokens,
    ["AGS", "AGU", "AGV", "ETH", "ETH"],
    "10 ETH funding, 0.5 ETH, three mints",
  );
  assert.ok(incoming.every((i) => i.status === "confirmed"));
  assert.ok(incoming.some((i) => i.hash === hash && i.amount === parseEther("0.5").toString()));
  const filtered = await history(me.accessToken, "?direction=in&token=AGU");
  assert.equal(filtered.length, 1);

  const held = await nfts(me.accessToken);
  const erc721 = held.filter((n) => n.standard === "ERC721");
  const erc1155 = held.filter((n) => n.standard === "ERC1155");
  assert.equal(erc721.length, 2, "two collectibles");
  assert.deepEqual(
    erc1155.map((n) => [n.tokenId, n.balance]).sort(),
    [["1", "5"], ["2", "2"], ["3", "1"]],
    "5 bronze, 2 silver, 1 gold",
  );
  for (const n of held) {
    assert.match(n.tokenUri ?? "", /^data:application\/json;base64,/);
    assert.ok(n.name, "the name is decoded from the data: URI");
    assert.match(n.image ?? "", /^data:image\/svg\+xml;base64,/);
  }
  assert.equal(erc721[0].collection.name, "Agora Collectibles");
  assert.equal(erc721[0].collection.symbol, "AGC");
  assert.equal(erc1155[0].collection.name, "Agora Items");

  // TransferSingle in, and an ERC-721 sent away by the wallet itself (signed here with its key):
  // the holdings follow.
  const { artifacts } = await compileContracts();
  const owner = await chainClients(testRpcUrl());
  const minted = await owner.walletClient.writeContract({
    address: contracts.erc1155[0],
    abi: artifacts.contracts.AgoraItems.abi,
    functionName: "mint",
    args: [address, 2n, 3n],
    account: owner.account,
    chain: owner.walletClient.chain,
  });
  await owner.publicClient.waitForTransactionReceipt({ hash: minted });
  const [row] = await t.deps.sql<{ id: string }[]>`
    select id from app.wallets where address = ${address}`;
  const key = await openPrivateKey(
    await t.deps.walletKeys!,
    row.id,
    address,
    await sealedKeyOf(t.deps.sql, row.id),
  );
  const self = await chainClients(testRpcUrl(), privateKeyToAccount(toHex(key)));
  key.fill(0);
  const gone = erc721[0];
  const sent = await self.walletClient.writeContract({
    address: gone.contract as Address,
    abi: artifacts.contracts.AgoraCollectibles.abi,
    functionName: "transferFrom",
    args: [address, "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", BigInt(gone.tokenId)],
    account: self.account,
    chain: self.walletClient.chain,
  });
  await self.publicClient.waitForTransactionReceipt({ hash: sent });
  await follow(t.deps);
  const now = await nfts(me.accessToken);
  assert.equal(now.find((n) => n.standard === "ERC1155" && n.tokenId === "2")?.balance, "5");
  assert.ok(!now.some((n) => n.contract === gone.contract && n.tokenId === gone.tokenId));
  assert.equal(now.filter((n) => n.standard === "ERC721").length, 1);

  // Indexing again records nothing twice.
  await t.deps.sql`
    update app_private.chain_cursors set block_number = block_number - 10,
      block_hash = (select hash from app_private.chain_blocks b
                    where b.chain_id = 31337 and b.number = chain_cursors.block_number - 10)
    where chain_id = 31337`;
  await follow(t.deps);
  assert.equal((await history(me.accessToken, "?direction=in")).length, incoming.length);
  assert.equal((await nfts(me.accessToken)).length, now.length);
});

test("[wallet] the follower resumes from its last block after a restart", async () => {
  const first = await follow(t.deps);
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await sendNative(address, parseEther("0.1"));
  const restarted = testApp(); // a new process: nothing in memory
  const second = await follow(restarted.deps);
  assert.equal(second.from, first.to, "it starts where the last run ended");
  assert.equal(second.to, await head());
  assert.equal((await history(me.accessToken, "?direction=in")).length, 1);
});

test("[wallet] a reorganization rolls back incoming transfers and NFTs of the lost blocks", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await follow(t.deps);
  await fund(contracts, address); // the last block is the ERC-1155 batch mint
  const hash = await sendNative(address, parseEther("0.2"));
  await follow(t.deps);
  assert.ok((await history(me.accessToken)).some((i) => i.hash === hash));
  assert.equal((await nfts(me.accessToken)).filter((n) => n.standard === "ERC1155").length, 3);

  // Replace the last two blocks (the native send and the batch mint) with empty ones.
  const before = await head();
  await rpc(testRpcUrl(), "anvil_reorg", [2, []]);
  assert.equal(await head(), before, "the same height, other blocks");
  const result = await follow(t.deps);
  assert.equal(result.rolledBackTo, before - 2, "back to the last common block");

  assert.ok(!(await history(me.accessToken)).some((i) => i.hash === hash), "the lost send is gone");
  const held = await nfts(me.accessToken);
  assert.equal(held.filter((n) => n.standard === "ERC1155").length, 0, "the lost mint is gone");
  assert.equal(held.filter((n) => n.standard === "ERC721").length, 2, "earlier blocks stand");
  const [removed] = await t.deps.sql<{ payload: { status: string; error: string } }[]>`
    select payload from app.events
    where topic = ${"user:" + me.user.id} and event = 'wallet.transaction.updated'
      and payload ->> 'hash' = ${hash}
    order by id desc limit 1`;
  assert.equal(removed.payload.status, "failed", "the owner is told it is gone");
  assert.match(removed.payload.error, /reorganization/);
});

test("[wallet] a confirmed transfer whose block is lost is watched again, sent again and confirmed in the new chain", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await fund(contracts, address, { nfts: false });
  const { transaction: created } = await expectJson(
    await t.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: { to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", token: "native", amount: "777" },
    }),
    201,
  );
  const { transaction: submitted } = await expectJson(
    await t.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
      token: me.accessToken,
    }),
    200,
  );
  assert.equal(await settle(t.deps, created.id), "confirmed");
  await follow(t.deps);
  const [{ block_number: minedAt }] = await t.deps.sql`
    select block_number::int from app.wallet_transactions where id = ${created.id}`;

  await rpc(testRpcUrl(), "anvil_reorg", [await head() - minedAt + 1, []]);
  const result = await follow(t.deps);
  assert.equal(result.rolledBackTo, minedAt - 1);
  assert.equal(await statusOf(t.deps, created.id), "submitted", "back to submitted");
  assert.equal(await settle(t.deps, created.id), "confirmed", "sent again and mined");
  const [after] = await t.deps.sql`
    select block_number::int, hash from app.wallet_transactions where id = ${created.id}`;
  assert.ok(after.block_number > minedAt, "in a new block");
  assert.equal(after.hash, submitted.hash, "the same signed transaction");
});

test("[wallet] a transfer that reverts on the chain ends failed, its fee recorded", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await fund(contracts, address, { nfts: false, tokens: parseEther("10") });
  const { transaction: created } = await expectJson(
    await t.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: {
        to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        token: "AGU",
        amount: parseEther("10").toString(),
      },
    }),
    201,
  );
  // Meanwhile the tokens leave by another way (the key used outside the platform): the transfer,
  // valid when it was checked, now reverts.
  const [row] = await t.deps.sql<
    { id: string }[]
  >`select id from app.wallets where address = ${address}`;
  const key = await openPrivateKey(
    await t.deps.walletKeys!,
    row.id,
    address,
    await sealedKeyOf(t.deps.sql, row.id),
  );
  const outside = await chainClients(testRpcUrl(), privateKeyToAccount(toHex(key)));
  key.fill(0);
  const { artifacts } = await compileContracts();
  const spent = await outside.walletClient.writeContract({
    address: contracts.utility,
    abi: artifacts.contracts.AgoraUtilityToken.abi,
    functionName: "transfer",
    args: ["0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", parseEther("5")],
    account: outside.account,
    chain: outside.walletClient.chain,
  });
  await outside.publicClient.waitForTransactionReceipt({ hash: spent });
  await t.deps.sql`select app_private.sync_wallet_nonce(${row.id}, 1)`;
  await expectJson(
    await t.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
      token: me.accessToken,
    }),
    200,
  );
  assert.equal(await settle(t.deps, created.id), "failed");
  const [failed] = await t.deps.sql`
    select error, fee::text, block_number from app.wallet_transactions where id = ${created.id}`;
  assert.match(failed.error, /reverted/);
  assert.ok(BigInt(failed.fee) > 0n, "the gas was paid");
  assert.ok(failed.block_number > 0);
});
