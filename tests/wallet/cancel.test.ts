/**
 * Cancelling a pending transfer ("Don't send"): the owner's cancel frees the funds it held at
 * once, a stranger gets 404, a transfer that was confirmed (signed) cannot be cancelled (422) and
 * a cancelled one cannot be confirmed (422); a confirm and a cancel racing on one transfer: exactly
 * one wins, every time, and nothing is signed for a cancelled transfer.
 */
import assert from "node:assert/strict";
import { parseEther } from "viem";
import { expectError, expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { addressOfCaller, fund, platform, settle } from "../support/wallet.ts";

const t = testApp();
const contracts = await platform(t.deps);

async function funded(nativeEther = "10", tokens = "100") {
  const me = await signInAs(t, "SUBSCRIBER");
  const address = await addressOfCaller(t, me.accessToken);
  await fund(contracts, address, {
    native: parseEther(nativeEther),
    tokens: parseEther(tokens),
    nfts: false,
  });
  return { token: me.accessToken, id: me.user.id, address };
}

const elsewhere = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const transfer = (token: string, amount: string, tokenRef = "AGU") =>
  t.request("POST", "/api/wallet/transfer", {
    token,
    body: { to: elsewhere, token: tokenRef, amount },
  });
const confirm = (token: string, id: string) =>
  t.request("POST", `/api/wallet/transactions/${id}/confirm`, { token });
const cancel = (token: string, id: string) =>
  t.request("POST", `/api/wallet/transactions/${id}/cancel`, { token });

test("[wallet] cancel: the owner's cancel frees the held funds at once; a stranger 404; cancelled cannot be confirmed", async () => {
  const me = await funded("1", "100");
  const all = parseEther("100").toString();
  const { transaction: first } = await expectJson(await transfer(me.token, all), 201);
  // Held: the same amount again is refused while the first is pending.
  await expectError(await transfer(me.token, all), 422, "insufficient_funds");

  const stranger = await signInAs(t, "SUBSCRIBER");
  await expectError(await cancel(stranger.accessToken, first.id), 404, "not_found");
  await expectError(await cancel(me.token, crypto.randomUUID()), 404, "not_found");

  const { transaction: cancelled } = await expectJson(await cancel(me.token, first.id), 200);
  assert.equal(cancelled.status, "cancelled");
  assert.equal(cancelled.hash, null);
  // Again: the transaction as it is.
  const again = await expectJson(await cancel(me.token, first.id), 200);
  assert.equal(again.transaction.status, "cancelled");
  // Not signed after all.
  const refused = await expectError(await confirm(me.token, first.id), 422, "invalid_transition");
  assert.deepEqual(refused.error.details, { status: "cancelled" });

  // The funds are free: the whole balance can be sent now.
  const { transaction: second } = await expectJson(await transfer(me.token, all), 201);
  assert.equal(second.status, "pending");
  const [row] = await t.deps.sql<{ status: string; hash: string | null; nonce: string | null }[]>`
    select status::text, hash, nonce::text from app.wallet_transactions where id = ${first.id}`;
  assert.deepEqual(row, { status: "cancelled", hash: null, nonce: null });
  // Listed, and filterable, as cancelled.
  const page = await expectJson(
    await t.request("GET", "/api/wallet/transactions?status=cancelled", { token: me.token }),
    200,
  );
  assert.deepEqual(page.items.map((i: { id: string }) => i.id), [first.id]);
});

test("[wallet] cancel: a confirmed transfer is 422 invalid_transition and stays as it is", async () => {
  const me = await funded("1", "100");
  const { transaction } = await expectJson(
    await transfer(me.token, parseEther("1").toString()),
    201,
  );
  await expectJson(await confirm(me.token, transaction.id), 200);
  const refused = await expectError(
    await cancel(me.token, transaction.id),
    422,
    "invalid_transition",
  );
  assert.equal((refused.error.details as { status: string }).status, "submitted");
  assert.equal(await settle(t.deps, transaction.id), "confirmed");
  await expectError(await cancel(me.token, transaction.id), 422, "invalid_transition");
});

test("[wallet] cancel: the notification of a cancelled transfer says it was cancelled and nothing was sent", async () => {
  const me = await funded("1", "100");
  const { transaction } = await expectJson(
    await transfer(me.token, parseEther("2").toString()),
    201,
  );
  await expectJson(await cancel(me.token, transaction.id), 200);
  const [note] = await t.deps.sql<{ title: string; body: string }[]>`
    select title, body from app.notifications
    where user_id = ${me.id} and data ->> 'transactionId' = ${transaction.id}`;
  assert.equal(note.title, "Transfer cancelled");
  assert.match(note.body, /nothing was sent/);
});

test("[wallet] cancel racing confirm on one transfer: exactly one wins, every round; a cancelled transfer is never signed", async () => {
  const me = await funded("10", "100");
  const winners = { confirm: 0, cancel: 0 };
  for (let round = 0; round < 8; round++) {
    const { transaction } = await expectJson(await transfer(me.token, String(1000 + round)), 201);
    // Both requests queue on the transfer's row lock, held here, then race for it.
    const held = Promise.withResolvers<void>();
    const locked = Promise.withResolvers<void>();
    const holder = t.deps.sql.begin(async (tx) => {
      await tx`select 1 from app.wallet_transactions where id = ${transaction.id} for update`;
      locked.resolve();
      await held.promise;
    });
    await locked.promise;
    const racing = round % 2 === 0
      ? [confirm(me.token, transaction.id), cancel(me.token, transaction.id)]
      : [cancel(me.token, transaction.id), confirm(me.token, transaction.id)];
    const answers = Promise.all(racing);
    // Both waiting for the lock (or the confirm still opening the key: it then comes second).
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const [{ n }] = await t.deps.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query ilike '%wallet_transactions%'`;
      if (n >= 2) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    held.resolve();
    await holder;
    const [a, b] = await answers;
    const [confirmed, cancelled] = round % 2 === 0 ? [a, b] : [b, a];
    const statuses = [confirmed.status, cancelled.status].sort();
    assert.deepEqual(statuses, [200, 422], `round ${round}: one 200 and one 422`);
    const [row] = await t.deps.sql<{ status: string; hash: string | null; signed: boolean }[]>`
      select t.status::text, t.hash,
             exists (select 1 from app_private.wallet_signed_transactions s
                     where s.transaction_id = t.id) as signed
      from app.wallet_transactions t where t.id = ${transaction.id}`;
    if (confirmed.status === 200) {
      winners.confirm++;
      assert.equal((await confirmed.json()).transaction.status, "submitted");
      await expectError(cancelled, 422, "invalid_transition");
      assert.notEqual(row.hash, null);
      assert.equal(await settle(t.deps, transaction.id), "confirmed");
    } else {
      winners.cancel++;
      assert.equal((await cancelled.json()).transaction.status, "cancelled");
      await expectError(confirmed, 422, "invalid_transition");
      assert.deepEqual(row, { status: "cancelled", hash: null, signed: false });
    }
  }
  assert.equal(winners.confirm + winners.cancel, 8);
  // The nonces stay gapless: only the winning confirms took one.
  const nonces = await t.deps.sql<{ nonce: string }[]>`
    select nonce::text from app.wallet_transactions
    where user_id = ${me.id} and direction = 'out' and nonce is not null order by nonce`;
  assert.deepEqual(
    nonces.map((n) => Number(n.nonce)),
    Array.from({ length: winners.confirm }, (_, i) => i),
  );
});
