/**
 * The wallet's routes against the run's database and throwaway chain: wallets at first sign-in
 * and on request, balances in one RPC call, tokens (added and checked on the chain), transfers
 * from pending to confirmed with their events and notifications, idempotency, expiry, another
 * user's transaction, and the refusals of bad input with nothing written.
 */
import assert from "node:assert/strict";
import { type Address, createPublicClient, erc20Abi, http, parseEther } from "viem";
import { compileContracts } from "../../stack/chain/compile.ts";
import { chainClients, deployContract } from "../../stack/chain/deploy.ts";
import {
  createUser,
  expectError,
  expectJson,
  signIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { responseValidator } from "../support/openapi-validator.ts";
import {
  addressOfCaller,
  follow,
  fund,
  platform,
  rpcProxy,
  settle,
  statusOf,
  testRpcUrl,
} from "../support/wallet.ts";

const t = testApp();
const contracts = await platform(t.deps);
const chain = createPublicClient({ transport: http(testRpcUrl()) });

const tokenBalance = (token: Address, holder: string) =>
  chain.readContract({
    address: token,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [holder as Address],
  });

async function wallets(userId: string) {
  return await t.deps.sql<{ id: string; address: string }[]>`
    select id, address from app.wallets where user_id = ${userId}`;
}

test("[wallet] the first sign-in from SUBSCRIBER up creates a wallet; a VISITOR gets none", async () => {
  const member = await signInAs(t, "MEMBER");
  const [created] = await wallets(member.user.id);
  assert.ok(created, "a MEMBER has a wallet after signing in");
  assert.match(created.address, /^0x[0-9a-fA-F]{40}$/);
  const session = await expectJson(
    await t.request("GET", "/api/auth/session", { token: member.accessToken }),
    200,
  );
  assert.equal(session.user.walletAddress, created.address, "the session names it");
  const { wallet } = await expectJson(
    await t.request("GET", "/api/wallet", { token: member.accessToken }),
    200,
  );
  assert.deepEqual(Object.keys(wallet).sort(), [
    "address",
    "chainId",
    "createdAt",
    "exportedAt",
    "id",
  ]);
  assert.equal(wallet.id, created.id);
  assert.equal(wallet.chainId, 31337);
  assert.equal(wallet.exportedAt, null);

  // Signing in again keeps the same wallet.
  await signIn(t, (member.user as { email: string }).email);
  assert.equal((await wallets(member.user.id)).length, 1);

  const visitor = await signInAs(t, "VISITOR");
  assert.equal((await wallets(visitor.user.id)).length, 0, "a VISITOR has none");
  await expectError(
    await t.request("GET", "/api/wallet", { token: visitor.accessToken }),
    403,
    "forbidden",
  );
  await expectError(await t.request("GET", "/api/wallet"), 401, "unauthenticated");
});

test("[wallet] POST /api/wallet/create makes a wallet for a user without one, 409 after", async () => {
  const visitor = await signInAs(t, "VISITOR");
  await t.deps.sql`update app.users set role = 'SUBSCRIBER' where id = ${visitor.user.id}`;
  await expectError(
    await t.request("GET", "/api/wallet", { token: visitor.accessToken }),
    404,
    "not_found",
  );
  const { wallet } = await expectJson(
    await t.request("POST", "/api/wallet/create", { token: visitor.accessToken }),
    201,
  );
  assert.equal((await wallets(visitor.user.id))[0].address, wallet.address);
  await expectError(
    await t.request("POST", "/api/wallet/create", { token: visitor.accessToken }),
    409,
    "conflict",
  );
  assert.equal((await wallets(visitor.user.id)).length, 1);
});

test("[wallet] GET /api/wallet/balance: native, the platform's tokens and the caller's, in one RPC call", async () => {
  const proxy = rpcProxy();
  const counted = testApp({ AGORA_RPC_URL: proxy.url });
  try {
    const me = await signInAs(counted, "SUBSCRIBER");
    const address = await addressOfCaller(counted, me.accessToken);
    await fund(contracts, address, { nfts: false });
    // Warm: the client checks the node's chain id once per process, the tokens' metadata is read
    // once; then each balance request is one call.
    await expectJson(
      await counted.request("GET", "/api/wallet/balance", { token: me.accessToken }),
      200,
    );
    proxy.reset();
    const body = await expectJson(
      await counted.request("GET", "/api/wallet/balance", { token: me.accessToken }),
      200,
    );
    assert.deepEqual(Object.fromEntries(proxy.calls), { eth_call: 1 }, "exactly one eth_call");
    assert.equal(body.address, address);
    assert.equal(body.chainId, 31337);
    assert.ok(Number.isInteger(body.blockNumber) && body.blockNumber > 0);
    const kinds = body.balances.map((b: { token: { kind: string } }) => b.token.kind);
    assert.deepEqual(kinds, ["native", "utility", "governance", "staking"]);
    assert.equal(body.balances[0].balance, parseEther("10").toString());
    assert.equal(body.balances[0].formatted, "10");
    assert.equal(body.balances[1].balance, parseEther("1000").toString());
    assert.equal(body.balances[1].formatted, "1000");
    assert.equal(body.balances[1].token.symbol, "AGU");
    assert.equal(body.balances[1].token.address, contracts.utility);
  } finally {
    await proxy.stop();
  }
});

test("[wallet] transfer: pending with expiresAt, confirm → submitted with hash and nonce → confirmed, the chain moved the tokens", async () => {
  const sender = await signInAs(t, "MEMBER");
  const recipient = await signInAs(t, "SUBSCRIBER");
  const from = await addressOfCaller(t, sender.accessToken);
  const to = await addressOfCaller(t, recipient.accessToken);
  await fund(contracts, from, { nfts: false });

  const { transaction: created } = await expectJson(
    await t.request("POST", "/api/wallet/transfer", {
      token: sender.accessToken,
      body: {
        to: { userId: recipient.user.id },
        token: "AGU",
        amount: parseEther("12.5").toString(),
      },
    }),
    201,
  );
  assert.equal(created.status, "pending");
  assert.equal(created.direction, "out");
  // The recipient's address is shown before the confirm, on purpose (docs/wallet.md, "The
  // recipient's address before the confirm").
  assert.equal(created.to, to);
  assert.equal(created.from, from);
  assert.equal(created.token.symbol, "AGU");
  assert.equal(created.token.kind, "utility");
  assert.equal(created.hash, null);
  assert.equal(created.nonce, null);
  const ttl = (Date.parse(created.expiresAt) - Date.parse(created.createdAt)) / 1000;
  assert.ok(Math.abs(ttl - 600) < 2, `expires after wallet.pendingTtlSeconds (${ttl} s)`);

  const { transaction: confirmed } = await expectJson(
    await t.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
      token: sender.accessToken,
    }),
    200,
  );
  assert.equal(confirmed.status, "submitted");
  assert.match(confirmed.hash, /^0x[0-9a-f]{64}$/);
  assert.equal(confirmed.nonce, 0);
  const { transaction: again } = await expectJson(
    await t.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
      token: sender.accessToken,
    }),
    200,
  );
  assert.equal(again.hash, confirmed.hash, "confirming again answers the same");
  assert.equal(again.nonce, 0);

  assert.equal(await settle(t.deps, created.id), "confirmed");
  const listed = await expectJson(
    await t.request("GET", "/api/wallet/transactions?direction=out", { token: sender.accessToken }),
    200,
  );
  const done = listed.items.find((i: { id: string }) => i.id === created.id);
  assert.equal(done.status, "confirmed");
  assert.ok(BigInt(done.fee) > 0n, "the fee paid is recorded");
  assert.ok(done.blockNumber > 0 && done.confirmations >= 1);
  assert.equal(await tokenBalance(contracts.utility, to), parseEther("12.5"));
  assert.equal(await tokenBalance(contracts.utility, from), parseEther("987.5"));

  // The recipient sees it as an incoming transfer once the follower indexed the block.
  await follow(t.deps);
  const incoming = await expectJson(
    await t.request("GET", "/api/wallet/transactions?direction=in", {
      token: recipient.accessToken,
    }),
    200,
  );
  const received = incoming.items.find((i: { hash: string }) => i.hash === confirmed.hash);
  assert.ok(received, "the recipient's history has it");
  assert.equal(received.status, "confirmed");
  assert.equal(received.amount, parseEther("12.5").toString());
  assert.equal(received.from, from);
});

test("[wallet] statuses: another user's transaction is 404, an expired one 422", async () => {
  const owner = await signInAs(t, "SUBSCRIBER");
  const other = await signInAs(t, "SUBSCRIBER");
  const from = await addressOfCaller(t, owner.accessToken);
  await fund(contracts, from, { nfts: false });
  const { transaction: pending } = await expectJson(
    await t.request("POST", "/api/wallet/transfer", {
      token: owner.accessToken,
      body: { to: await addressOfCaller(t, other.accessToken), token: "native", amount: "1000" },
    }),
    201,
  );
  await expectError(
    await t.request("POST", `/api/wallet/transactions/${pending.id}/confirm`, {
      token: other.accessToken,
    }),
    404,
    "not_found",
  );
  await t.deps.sql`
    update app.wallet_transactions set expires_at = now() - interval '1 second'
    where id = ${pending.id}`;
  await expectError(
    await t.request("POST", `/api/wallet/transactions/${pending.id}/confirm`, {
      token: owner.accessToken,
    }),
    422,
    "unprocessable",
  );
  assert.equal(await statusOf(t.deps, pending.id), "expired");
  await expectError(
    await t.request("POST", `/api/wallet/transactions/${pending.id}/confirm`, {
      token: owner.accessToken,
    }),
    422,
    "unprocessable",
  );
});

test("[wallet] tokens: add an ERC-20 read from the chain; 409 again or for a platform token; not_erc20 otherwise", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const { artifacts } = await compileContracts();
  const clients = await chainClients(testRpcUrl());
  const owner = typeof clients.account === "string" ? clients.account : clients.account.address;
  const custom = await deployContract(clients, artifacts, "AgoraUtilityToken", [owner]);
  const added = await expectJson(
    await t.request("POST", "/api/wallet/tokens/add", {
      token: me.accessToken,
      body: { address: custom },
    }),
    201,
  );
  assert.deepEqual(added, {
    kind: "custom",
    symbol: "AGU",
    name: "Agora Utility",
    decimals: 18,
    address: custom,
    chainId: 31337,
  });
  for (const again of [custom, custom.toLowerCase()]) {
    await expectError(
      await t.request("POST", "/api/wallet/tokens/add", {
        token: me.accessToken,
        body: { address: again },
      }),
      409,
      "conflict",
    );
  }
  await expectError(
    await t.request("POST", "/api/wallet/tokens/add", {
      token: me.accessToken,
      body: { address: contracts.governance },
    }),
    409,
    "conflict",
  );
  for (const address of [contracts.erc721[0], contracts.multicall3, owner, contracts.erc1155[0]]) {
    await expectError(
      await t.request("POST", "/api/wallet/tokens/add", {
        token: me.accessToken,
        body: { address },
      }),
      422,
      "not_erc20",
    );
  }
  const listed = await expectJson(
    await t.request("GET", "/api/wallet/tokens", { token: me.accessToken }),
    200,
  );
  assert.deepEqual(
    listed.items.map((i: { kind: string }) => i.kind),
    ["native", "utility", "governance", "staking", "custom"],
  );
});

test("[wallet] bad input is 400 and writes nothing: zero, negative, malformed or wrongly checksummed addresses", async () => {
  const me = await signInAs(t, "SUBSCRIBER");
  const target = await createUser(t.deps, "SUBSCRIBER");
  const [before] = await t.deps.sql`select count(*)::int as n from app.wallet_transactions`;
  const good = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  const badChecksum = "0x70997970c51812dc3A010C7d01b50e0d17dc79C8";
  for (
    const body of [
      { to: good, token: "native", amount: "0" },
      { to: good, token: "native", amount: "-1" },
      { to: good, token: "native", amount: "1.5" },
      { to: good, token: "native", amount: 5 },
      { to: "0x1234", token: "native", amount: "1" },
      { to: badChecksum, token: "native", amount: "1" },
      { to: { userId: "nope" }, token: "native", amount: "1" },
      { to: good, token: badChecksum, amount: "1" },
      { to: good, token: "", amount: "1" },
    ]
  ) {
    await expectError(
      await t.request("POST", "/api/wallet/transfer", { token: me.accessToken, body }),
      400,
      "invalid_request",
    );
  }
  await expectError(
    await t.request("POST", "/api/wallet/tokens/add", {
      token: me.accessToken,
      body: { address: badChecksum },
    }),
    400,
    "invalid_request",
  );
  // Well-formed, but unknown to the server: 422.
  await expectError(
    await t.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: { to: good, token: "NOPE", amount: "1" },
    }),
    422,
    "unprocessable",
  );
  await expectError(
    await t.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: { to: { userId: crypto.randomUUID() }, token: "native", amount: "1" },
    }),
    422,
    "unprocessable",
  );
  await expectError(
    await t.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: { to: { userId: target.id }, token: "native", amount: "1" },
    }),
    422,
    "unprocessable",
  );
  const [after] = await t.deps.sql`select count(*)::int as n from app.wallet_transactions`;
  assert.equal(after.n, before.n, "nothing was written");
});

test("[wallet] real answers of every wallet route validate against the OpenAPI document", async () => {
  const validator = responseValidator(
    await expectJson(await t.request("GET", "/api/openapi.json"), 200),
  );
  const problems: string[] = [];
  const check = async (method: string, path: string, response: Response, status: number) => {
    if (response.status !== status) {
      problems.push(`${method} ${path}: ${response.status} ${await response.clone().text()}`);
    }
    problems.push(...await validator.check(method, path, response));
    return response.status < 300 ? await response.json() : null;
  };
  const me = await signInAs(t, "SUBSCRIBER");
  const token = me.accessToken;
  const address = await addressOfCaller(t, token);
  await fund(contracts, address);
  await follow(t.deps);
  const get = (path: string) => t.request("GET", path, { token });
  const post = (path: string, body?: unknown) => t.request("POST", path, { token, body });
  await check("GET", "/api/wallet", await get("/api/wallet"), 200);
  await check("POST", "/api/wallet/create", await post("/api/wallet/create"), 409);
  await check("GET", "/api/wallet/balance", await get("/api/wallet/balance"), 200);
  await check("GET", "/api/wallet/tokens", await get("/api/wallet/tokens"), 200);
  await check(
    "POST",
    "/api/wallet/tokens/add",
    await post("/api/wallet/tokens/add", { address: contracts.erc721[0] }),
    422,
  );
  const { transaction: created } = await check(
    "POST",
    "/api/wallet/transfer",
    await post("/api/wallet/transfer", { to: address, token: "AGV", amount: "10" }),
    201,
  );
  await check(
    "POST",
    "/api/wallet/transactions/{id}/confirm",
    await post(`/api/wallet/transactions/${created.id}/confirm`),
    200,
  );
  await settle(t.deps, created.id);
  await follow(t.deps);
  const page = await check(
    "GET",
    "/api/wallet/transactions",
    await get("/api/wallet/transactions"),
    200,
  );
  assert.ok(page.items.some((i: { direction: string }) => i.direction === "in"));
  assert.ok(page.items.some((i: { status: string }) => i.status === "confirmed"));
  await check("GET", "/api/wallet/nfts", await get("/api/wallet/nfts"), 200);
  const admin = await signInAs(t, "ADMIN");
  const analytics = await check(
    "GET",
    "/api/admin/analytics",
    await t.request("GET", "/api/admin/analytics", { token: admin.accessToken }),
    200,
  );
  assert.ok(analytics.wallet.totals.wallets >= 1);
  assert.ok(analytics.wallet.transactionsByStatus.confirmed >= 1);
  assert.ok(
    analytics.wallet.volume.some((v: { token: { symbol: string } }) => v.token.symbol === "AGV"),
  );
  assert.deepEqual(problems, []);
});

test("[wallet] features.wallet off: the wallet routes answer 403, and sign-in makes no wallet", async () => {
  const admin = await signInAs(t, "ADMIN");
  const member = await signInAs(t, "MEMBER");
  const put = (wallet: boolean) =>
    t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      body: { reason: "test: wallet switch", config: { features: { wallet } } },
    });
  await expectJson(await put(false), 200);
  t.deps.config.invalidate();
  try {
    await expectError(
      await t.request("GET", "/api/wallet", { token: member.accessToken }),
      403,
      "forbidden",
    );
    const newcomer = await signInAs(t, "SUBSCRIBER");
    assert.equal((await wallets(newcomer.user.id)).length, 0);
  } finally {
    await expectJson(await put(true), 200);
    t.deps.config.invalidate();
  }
  await expectJson(await t.request("GET", "/api/wallet", { token: member.accessToken }), 200);
});
