/**
 * Transfers under pressure: the funds check counts what is still in flight (and gas), the same
 * Idempotency-Key replays, concurrent confirms of one wallet get distinct gapless nonces, the
 * node going down and coming back loses nothing and sends nothing twice, and every status change
 * is a live event and a WALLET notification.
 */
import assert from "node:assert/strict";
import { type Address, createPublicClient, formatEther, http, parseEther } from "viem";
import { drain } from "../../functions/api/core/job-queue.ts";
import { broadcastTransfer, decodeRaw } from "../../functions/api/wallet/transfers.ts";
import { expectError, expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import {
  addressOfCaller,
  follow,
  fund,
  platform,
  rpcProxy,
  settle,
  statusOf,
  testRpcUrl,
  walletJobs,
} from "../support/wallet.ts";

const t = testApp();
const contracts = await platform(t.deps);
const chain = createPublicClient({ transport: http(testRpcUrl()) });

async function funded(nativeEther = "10", tokens = "1000") {
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await fund(contracts, address, {
    native: parseEther(nativeEther),
    tokens: parseEther(tokens),
    nfts: false,
  });
  return { token: me.accessToken, id: me.user.id, address };
}

const transfer = (token: string, body: unknown, headers?: Record<string, string>) =>
  t.request("POST", "/api/wallet/transfer", { token, body, headers });
const confirm = (token: string, id: string) =>
  t.request("POST", `/api/wallet/transactions/${id}/confirm`, { token });
const elsewhere = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

test("[wallet] insufficient_funds: over the balance, over the balance less pending transfers, and native less gas", async () => {
  const me = await funded("1", "100");
  const over = await expectError(
    await transfer(me.token, {
      to: elsewhere,
      token: "AGU",
      amount: parseEther("100.5").toString(),
    }),
    422,
    "insufficient_funds",
  );
  assert.equal((over.error.details as { balance: string }).balance, parseEther("100").toString());
  await expectJson(
    await transfer(me.token, { to: elsewhere, token: "AGU", amount: parseEther("60").toString() }),
    201,
  );
  const reserved = await expectError(
    await transfer(me.token, { to: elsewhere, token: "AGU", amount: parseEther("60").toString() }),
    422,
    "insufficient_funds",
  );
  assert.equal(
    (reserved.error.details as { reserved: string }).reserved,
    parseEther("60").toString(),
    "the pending 60 AGU are reserved",
  );
  await expectJson(
    await transfer(me.token, { to: elsewhere, token: "AGU", amount: parseEther("40").toString() }),
    201,
  );
  // Native: the whole balance leaves nothing for gas.
  await expectError(
    await transfer(me.token, {
      to: elsewhere,
      token: "native",
      amount: parseEther("1").toString(),
    }),
    422,
    "insufficient_funds",
  );
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.wallet_transactions where user_id = ${me.id}`;
  assert.equal(n, 2, "only the two covered transfers were written");
});

test("[wallet] Idempotency-Key: the same key and body replay the first transfer; another body is 409", async () => {
  const me = await funded();
  const key = `transfer-${crypto.randomUUID()}`;
  const body = { to: elsewhere, token: "AGV", amount: "1000" };
  const first = await expectJson(await transfer(me.token, body, { "idempotency-key": key }), 201);
  assert.deepEqual(Object.keys(first), ["transaction"], "201 { transaction }");
  assert.equal(first.transaction.status, "pending");
  const again = await expectJson(await transfer(me.token, body, { "idempotency-key": key }), 201);
  assert.deepEqual(again, first, "the first answer, replayed in the same shape");
  const racing = await Promise.all(
    Array.from({ length: 5 }, () => transfer(me.token, body, { "idempotency-key": key })),
  );
  for (const response of racing) {
    assert.equal((await expectJson(response, 201)).transaction.id, first.transaction.id);
  }
  await expectError(
    await transfer(me.token, { ...body, amount: "1001" }, { "idempotency-key": key }),
    409,
    "conflict",
  );
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.wallet_transactions where user_id = ${me.id}`;
  assert.equal(n, 1, "one transfer");
});

test("[wallet] a finished Idempotency-Key replays (or conflicts) with the node down: the chain is asked only for new work", async () => {
  const proxy = rpcProxy();
  const app = testApp({ AGORA_RPC_URL: proxy.url });
  try {
    const me = await signInAs(app, "SUBSCRIBER");
    const address = await addressOfCaller(app, me.accessToken);
    await fund(contracts, address, { nfts: false });
    const key = `down-${crypto.randomUUID()}`;
    const body = { to: elsewhere, token: "native", amount: "1000" };
    const send = (b: unknown) =>
      app.request("POST", "/api/wallet/transfer", {
        token: me.accessToken,
        body: b,
        headers: { "idempotency-key": key },
      });
    const first = await expectJson(await send(body), 201);
    await proxy.stop();
    assert.deepEqual(await expectJson(await send(body), 201), first, "replayed without the node");
    await expectError(await send({ ...body, amount: "1001" }), 409, "conflict");
    // New work still needs the node.
    await expectError(
      await app.request("POST", "/api/wallet/transfer", { token: me.accessToken, body }),
      503,
      "chain_unavailable",
    );
  } finally {
    await proxy.stop();
  }
});

test("[wallet] concurrent confirms from one wallet get distinct, gapless nonces; every transfer is mined once", async () => {
  const me = await funded("50");
  const count = 12;
  const pending: string[] = [];
  for (let i = 0; i < count; i++) {
    const { transaction: created } = await expectJson(
      await transfer(me.token, { to: elsewhere, token: "native", amount: String(1000 + i) }),
      201,
    );
    pending.push(created.id);
  }
  // All at once, each confirm twice: the race is on the nonce counter's row.
  const answers = await Promise.all(
    [...pending, ...pending].map(async (id) =>
      (await expectJson(await confirm(me.token, id), 200)).transaction
    ),
  );
  const byId = new Map<string, number>();
  for (const answer of answers) {
    const seen = byId.get(answer.id);
    if (seen !== undefined) assert.equal(answer.nonce, seen, "a transaction keeps its nonce");
    byId.set(answer.id, answer.nonce);
  }
  const nonces = [...byId.values()].sort((a, b) => a - b);
  assert.deepEqual(
    nonces,
    Array.from({ length: count }, (_, i) => i),
    "0 … n-1, no gap, no repeat",
  );
  for (const id of pending) assert.equal(await settle(t.deps, id), "confirmed");
  assert.equal(
    await chain.getTransactionCount({ address: me.address as Address }),
    count,
    "the chain saw exactly these transactions",
  );
});

test("[wallet] a broadcast sends the wallet's earlier unsent transactions first, so the node mines it at once", async () => {
  const me = await funded("50");
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { transaction: created } = await expectJson(
      await transfer(me.token, { to: elsewhere, token: "native", amount: String(2000 + i) }),
      201,
    );
    await expectJson(await confirm(me.token, created.id), 200);
    ids.push(created.id);
  }
  // The last nonce's job runs first (as side-by-side jobs may): nothing has been sent yet.
  await broadcastTransfer({ deps: t.deps, attempt: 1, maxAttempts: 25 }, ids[2]);
  assert.equal(
    await chain.getTransactionCount({ address: me.address as Address }),
    3,
    "nonces 0 and 1 went out before 2",
  );
  // The node mines it as it arrives; its receipt is usually there at once, and then no watch
  // round is queued. The node may answer the send a moment before it has mined (seen on a busy
  // machine): then one watch round settles it.
  const settledAtOnce = await statusOf(t.deps, ids[2]) === "confirmed";
  const [{ watches }] = await t.deps.sql<{ watches: number }[]>`
    select count(*)::int as watches from app_private.jobs
    where kind = 'wallet.watch' and payload ->> 'transactionId' = ${ids[2]}`;
  assert.equal(
    watches,
    settledAtOnce ? 0 : 1,
    "a watch round only when it was not settled at once",
  );
  // The earlier ones' own jobs find them known to the node and settle them; nothing twice.
  for (const id of ids) assert.equal(await settle(t.deps, id), "confirmed");
  assert.equal(await chain.getTransactionCount({ address: me.address as Address }), 3);
});

test("[wallet] the node down and back: confirm is 503 with nothing signed; a broadcast waits and is sent once, the same bytes", async () => {
  const proxy = rpcProxy();
  const app = testApp({ AGORA_RPC_URL: proxy.url });
  try {
    const me = await signInAs(app, "SUBSCRIBER");
    const address = await addressOfCaller(app, me.accessToken);
    await fund(contracts, address, { nfts: false });
    const body = { to: elsewhere, token: "native", amount: parseEther("0.25").toString() };
    const { transaction: first } = await expectJson(
      await app.request("POST", "/api/wallet/transfer", { token: me.accessToken, body }),
      201,
    );
    const { transaction: second } = await expectJson(
      await app.request("POST", "/api/wallet/transfer", { token: me.accessToken, body }),
      201,
    );

    // Down before the confirm: a fresh process has no fee quote, so it needs the node now.
    await proxy.stop();
    const cold = testApp({ AGORA_RPC_URL: proxy.url });
    const refused = await cold.request(
      "POST",
      `/api/wallet/transactions/${first.id}/confirm`,
      { token: me.accessToken },
    );
    await expectError(refused, 503, "chain_unavailable");
    assert.ok(refused.headers.get("retry-after"));
    assert.equal(await statusOf(t.deps, first.id), "pending", "nothing was signed");
    await expectError(
      await cold.request("POST", "/api/wallet/transfer", { token: me.accessToken, body }),
      503,
      "chain_unavailable",
    );

    // The process that has a fresh fee quote signs and queues; the broadcast cannot get out.
    proxy.start();
    await expectJson(
      await app.request("GET", "/api/wallet/balance", { token: me.accessToken }),
      200,
    );
    await app.deps.chain.fees(31337);
    await proxy.stop();
    const { transaction: submitted } = await expectJson(
      await app.request("POST", `/api/wallet/transactions/${first.id}/confirm`, {
        token: me.accessToken,
      }),
      200,
    );
    assert.equal(submitted.status, "submitted");
    const [{ raw }] = await t.deps.sql<{ raw: `0x${string}` }[]>`
      select raw from app_private.wallet_signed_transactions where transaction_id = ${first.id}`;
    assert.equal(decodeRaw(raw).nonce, submitted.nonce, "the signed bytes are stored");
    const down = await drain(app.deps, { registry: walletJobs() });
    assert.equal(down.retried, 1, "the broadcast failed and waits for a retry");
    assert.equal(await statusOf(t.deps, first.id), "submitted");
    assert.equal(await chain.getTransactionCount({ address: address as Address }), 0);

    // Back, but the answer to the send is lost: the retry sends the same bytes again, and the
    // transaction is mined once.
    proxy.start();
    proxy.dropAnswers = true;
    await t.deps.sql`
      update app_private.jobs set run_at = now()
      where kind = 'wallet.broadcast' and payload ->> 'transactionId' = ${first.id}`;
    await drain(app.deps, { registry: walletJobs() });
    assert.equal(await statusOf(t.deps, first.id), "submitted", "its answer was lost");
    assert.equal(
      await chain.getTransactionCount({ address: address as Address }),
      1,
      "yet the node has it",
    );
    proxy.dropAnswers = false;
    await t.deps.sql`
      update app_private.jobs set run_at = now()
      where kind = 'wallet.broadcast' and payload ->> 'transactionId' = ${first.id}`;
    assert.equal(await settle(app.deps, first.id), "confirmed");
    const [{ broadcasts }] = await t.deps.sql`
      select broadcasts from app_private.wallet_signed_transactions
      where transaction_id = ${first.id}`;
    assert.equal(broadcasts, 1, "one send was answered");

    // The second transfer goes through normally, with the next nonce.
    const { transaction: next } = await expectJson(
      await app.request("POST", `/api/wallet/transactions/${second.id}/confirm`, {
        token: me.accessToken,
      }),
      200,
    );
    assert.equal(next.nonce, submitted.nonce + 1);
    assert.equal(await settle(app.deps, second.id), "confirmed");
    assert.equal(await chain.getTransactionCount({ address: address as Address }), 2);
    const spent = parseEther("10") - await chain.getBalance({ address: address as Address });
    assert.ok(
      spent > parseEther("0.5") && spent < parseEther("0.51"),
      `spent ${formatEther(spent)}`,
    );
  } finally {
    await proxy.stop();
  }
});

test("[wallet] every status change is wallet.transaction.updated on user:<id> and a WALLET notification", async () => {
  const me = await funded();
  const { transaction: created } = await expectJson(
    await transfer(me.token, { to: elsewhere, token: "AGS", amount: "5" }),
    201,
  );
  await expectJson(await confirm(me.token, created.id), 200);
  await settle(t.deps, created.id);
  const events = await t.deps.sql<{ payload: { id: string; status: string } }[]>`
    select payload from app.events
    where topic = ${"user:" + me.id} and event = 'wallet.transaction.updated'
      and payload ->> 'id' = ${created.id}
    order by id`;
  assert.deepEqual(events.map((e) => e.payload.status), ["pending", "submitted", "confirmed"]);
  const notifications = await t.deps.sql<{ title: string; type: string; collapse_key: string }[]>`
    select title, type::text, collapse_key from app.notifications
    where user_id = ${me.id} and data ->> 'transactionId' = ${created.id}`;
  assert.equal(notifications.length, 1, "one notification per transfer, updated at each change");
  assert.equal(notifications[0].type, "WALLET");
  assert.equal(notifications[0].title, "Transfer confirmed");
});

test("[wallet] a transfer names the person it goes to and the most its gas can cost; the recipient's history names the sender", async () => {
  const me = await funded();
  const friend = await signInAs(t, "MEMBER");
  await addressOfCaller(t, friend.accessToken);
  await t.deps.sql`update app.users set name = 'Wallet Friend' where id = ${friend.user.id}`;
  await t.deps.sql`update app.users set name = 'Wallet Sender' where id = ${me.id}`;
  const { transaction: created } = await expectJson(
    await transfer(me.token, { to: { userId: friend.user.id }, token: "AGU", amount: "7" }),
    201,
  );
  assert.deepEqual(created.counterparty, {
    type: "user",
    userId: friend.user.id,
    name: "Wallet Friend",
  });
  assert.ok(BigInt(created.maxFee) > 0n, `maxFee ${created.maxFee}`);
  const { transaction: outside } = await expectJson(
    await transfer(me.token, { to: elsewhere, token: "AGU", amount: "1" }),
    201,
  );
  assert.equal(outside.counterparty, null, "an address outside the platform names nobody");
  await expectJson(await confirm(me.token, created.id), 200);
  await settle(t.deps, created.id);
  await follow(t.deps);
  const incoming = await expectJson(
    await t.request("GET", "/api/wallet/transactions?direction=in", { token: friend.accessToken }),
    200,
  );
  const arrived = incoming.items.find((i: { amount: string }) => i.amount === "7");
  assert.ok(arrived, "the recipient's history has the transfer");
  assert.deepEqual(arrived.counterparty, { type: "user", userId: me.id, name: "Wallet Sender" });
  assert.equal(arrived.maxFee, null);
});

test("[wallet] concurrent transfers of one wallet never reserve more than the balance", async () => {
  const me = await funded("10", "100");
  const answers = await Promise.all(
    Array.from(
      { length: 10 },
      () =>
        transfer(me.token, { to: elsewhere, token: "AGU", amount: parseEther("30").toString() }),
    ),
  );
  const statuses = answers.map((r) => r.status).sort();
  for (const r of answers) await r.body?.cancel();
  assert.deepEqual(
    statuses,
    [201, 201, 201, 422, 422, 422, 422, 422, 422, 422],
    "three of 30 fit in 100; the others are refused",
  );
  const [{ reserved }] = await t.deps.sql`
    select sum(amount)::text as reserved from app.wallet_transactions
    where user_id = ${me.id} and status = 'pending'`;
  assert.equal(reserved, parseEther("90").toString());
});
