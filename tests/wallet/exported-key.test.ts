/**
 * The owner spends with the exported key outside the platform: the wallet's address sends a
 * transaction the platform did not sign, so the chain's nonce moves past the platform's counter.
 * The platform's next transfers still go through: a confirm of an exported wallet reads the
 * chain's nonce first, and a transfer signed before the outside spend took its nonce is signed
 * again, once, with the next nonce free on both sides (docs/wallet.md, "Transfers and nonces").
 * Both failed before (the transfer ended `failed`, "its nonce was used by a transaction sent
 * outside the platform").
 */
import assert from "node:assert/strict";
import { type Address, createPublicClient, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { compactDecrypt, exportJWK, generateKeyPair } from "jose";
import { chainClients } from "../../stack/chain/deploy.ts";
import { decodeRaw } from "../../functions/api/wallet/transfers.ts";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { addressOfCaller, fund, platform, settle, testRpcUrl } from "../support/wallet.ts";

const t = testApp();
const contracts = await platform(t.deps);
const chain = createPublicClient({ transport: http(testRpcUrl()) });
const elsewhere = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** A funded wallet whose key the owner exported (POST /api/wallet/export, the JWE opened here). */
async function exportedWallet() {
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await fund(contracts, address, { nfts: false });
  const { publicKey, privateKey } = await generateKeyPair("ECDH-ES", {
    crv: "P-256",
    extractable: true,
  });
  const { jwe } = await expectJson(
    await t.request("POST", "/api/wallet/export", {
      token: me.accessToken,
      body: { publicKey: await exportJWK(publicKey) },
    }),
    200,
  );
  const key = new TextDecoder().decode((await compactDecrypt(jwe, privateKey)).plaintext) as Hex;
  const account = privateKeyToAccount(key);
  assert.equal(account.address, address, "the exported key is the wallet's");
  const outside = await chainClients(testRpcUrl(), account);
  /** A transaction the platform did not sign, from the wallet's address, mined. */
  const spendOutside = async (nonce?: number) => {
    const hash = await outside.walletClient.sendTransaction({
      to: elsewhere,
      value: 1n,
      nonce,
      account,
      chain: outside.walletClient.chain,
    });
    await outside.publicClient.waitForTransactionReceipt({ hash });
  };
  return { token: me.accessToken, address: address as Address, spendOutside };
}

async function create(token: string, amount: string) {
  const { transaction } = await expectJson(
    await t.request("POST", "/api/wallet/transfer", {
      token,
      body: { to: elsewhere, token: "native", amount },
    }),
    201,
  );
  return transaction as { id: string; status: string };
}

async function confirm(token: string, id: string) {
  const { transaction } = await expectJson(
    await t.request("POST", `/api/wallet/transactions/${id}/confirm`, { token }),
    200,
  );
  return transaction as { id: string; status: string; nonce: number; hash: Hex };
}

async function stored(id: string) {
  const [row] = await t.deps.sql<{ nonce: number; hash: Hex; raw: Hex; replaced: string[] }[]>`
    select t.nonce::int, t.hash, s.raw, s.replaced_hashes as replaced
    from app.wallet_transactions t
    join app_private.wallet_signed_transactions s on s.transaction_id = t.id
    where t.id = ${id}`;
  return row;
}

test("[wallet] after the owner spends with the exported key, the next platform transfer takes the chain's next nonce and is confirmed", async () => {
  const me = await exportedWallet();
  await me.spendOutside(); // nonce 0, sent outside the platform
  const first = await confirm(me.token, (await create(me.token, "5")).id);
  assert.equal(first.nonce, 1, "the confirm read the chain's nonce: 0 was used outside");
  assert.equal(await settle(t.deps, first.id), "confirmed");
  const second = await confirm(me.token, (await create(me.token, "6")).id);
  assert.equal(second.nonce, 2);
  assert.equal(await settle(t.deps, second.id), "confirmed");
  assert.equal(await chain.getTransactionCount({ address: me.address }), 3);
  for (const tx of [first, second]) {
    const mined = await chain.getTransaction({ hash: tx.hash });
    assert.equal(mined.nonce, tx.nonce, "mined with the nonce the platform recorded");
  }
});

test("[wallet] a transfer signed before the owner used its nonce outside is signed again with the next free nonce, once, and confirmed", async () => {
  const me = await exportedWallet();
  // Two transfers confirmed (nonces 0 and 1 signed and stored), nothing broadcast yet.
  const first = await confirm(me.token, (await create(me.token, "7")).id);
  const second = await confirm(me.token, (await create(me.token, "8")).id);
  assert.deepEqual([first.nonce, second.nonce], [0, 1]);
  // Meanwhile the owner spends nonce 0 outside the platform.
  await me.spendOutside(0);

  assert.equal(await settle(t.deps, first.id), "confirmed", "signed again, and mined");
  assert.equal(await settle(t.deps, second.id), "confirmed", "its own nonce was still free");
  const again = await stored(first.id);
  assert.equal(again.nonce, 2, "after the platform's own nonce 1: never two with one nonce");
  assert.notEqual(again.hash, first.hash);
  assert.deepEqual(again.replaced, [first.hash], "the replaced signature is kept on record");
  assert.equal(decodeRaw(again.raw).nonce, 2, "the stored bytes are the new signature");
  assert.equal((await stored(second.id)).nonce, 1, "the other transfer kept its nonce");
  const mined = await chain.getTransaction({ hash: again.hash });
  assert.equal(mined.nonce, 2);
  await assert.rejects(
    chain.getTransaction({ hash: first.hash }),
    "the first signature never reached the chain",
  );
  assert.equal(await chain.getTransactionCount({ address: me.address }), 3, "0 outside, 1, 2");
  const { items } = await expectJson(
    await t.request("GET", "/api/wallet/transactions?direction=out", { token: me.token }),
    200,
  );
  const shown = items.find((i: { id: string }) => i.id === first.id);
  assert.equal(shown.hash, again.hash, "the history shows the hash that was mined");
  assert.equal(shown.nonce, 2);

  // The counter follows: the next transfer takes 3.
  const third = await confirm(me.token, (await create(me.token, "9")).id);
  assert.equal(third.nonce, 3);
  assert.equal(await settle(t.deps, third.id), "confirmed");
  const [{ n }] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.wallet_transactions
    where direction = 'out' and from_address = ${me.address} and status = 'confirmed'`;
  assert.equal(n, 3, "every platform transfer once");
});
