/**
 * Sign-In with Ethereum (EIP-4361) with viem's local accounts as the wallet, and an ERC-1271
 * contract wallet on the run's anvil chain: nonces, the browser and integrator answers, and each
 * refusal on its own (replayed nonce, unknown nonce, expired nonce, wrong domain, wrong URI,
 * wrong chain, expired message, not yet valid, issued in the future or too long ago, wrong
 * signer, tampered message, malformed input), linking, and concurrency.
 */
import assert from "node:assert/strict";
import { decodeJwt } from "jose";
import { type Address, getAddress, type Hex, type LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import {
  expectError,
  expectJson,
  setCookies,
  signIn,
  SITE,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { sha256Hex } from "../../functions/_shared/crypto.ts";
import { deployOwnerWallet } from "../../stack/chain/deploy.ts";
import { testRpcUrl } from "../chain/support.ts";

const t = testApp({ AGORA_RPC_URL: testRpcUrl() });
const DOMAIN = new URL(SITE).host;

const wallet = () => privateKeyToAccount(generatePrivateKey());

async function nonce(app = t): Promise<string> {
  return (await expectJson(await app.request("GET", "/api/auth/nonce"), 200)).nonce;
}

interface MessageOptions {
  address?: Address;
  domain?: string;
  uri?: string;
  chainId?: number;
  nonce?: string;
  issuedAt?: Date;
  expirationTime?: Date;
  notBefore?: Date;
}

/** An EIP-4361 message for this site, with a fresh server nonce unless told otherwise. */
async function message(account: { address: Address }, opts: MessageOptions = {}) {
  return createSiweMessage({
    address: opts.address ?? account.address,
    domain: opts.domain ?? DOMAIN,
    uri: opts.uri ?? SITE,
    version: "1",
    chainId: opts.chainId ?? 31337,
    nonce: opts.nonce ?? await nonce(),
    issuedAt: opts.issuedAt ?? new Date(),
    expirationTime: opts.expirationTime ?? new Date(Date.now() + 5 * 60_000),
    notBefore: opts.notBefore,
    statement: "Sign in to Agora.",
  });
}

function post(body: Record<string, unknown>, headers?: Record<string, string>, token?: string) {
  return t.request("POST", "/api/auth/signin", {
    body: { provider: "wallet", ...body },
    headers,
    token,
  });
}

async function signedBy(
  signer: LocalAccount,
  opts: MessageOptions = {},
  as?: { address: Address },
) {
  const text = await message(as ?? signer, opts);
  return { message: text, signature: await signer.signMessage({ message: text }) };
}

async function accountOf(address: Address) {
  return await t.deps.sql<{ user_id: string }[]>`
    select user_id from app.identities where provider = 'wallet' and provider_user_id = ${
    getAddress(address)
  }`;
}

async function refusedWith(body: { message: string; signature: Hex }, reason: string) {
  await expectError(await post(body), 401, "unauthenticated");
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.signin_failed'
    order by id desc limit 1`;
  assert.equal(event.details.provider, "wallet");
  assert.equal(event.details.reason, reason);
}

// --- nonces -----------------------------------------------------------------------------------

test("[wallet] GET /api/auth/nonce: 32 alphanumerics, ten minutes, stored as a hash, never cached", async () => {
  const response = await t.request("GET", "/api/auth/nonce");
  const body = await expectJson(response, 200);
  assert.match(body.nonce, /^[A-Za-z0-9]{32}$/);
  const ttl = (Date.parse(body.expiresAt) - Date.now()) / 1000;
  assert.ok(ttl > 590 && ttl <= 600, `${ttl} s`);
  assert.equal(response.headers.get("cache-control"), "no-store");
  const [row] = await t.deps.sql`
    select 1 from app_private.siwe_nonces where nonce_hash = ${await sha256Hex(body.nonce)}`;
  assert.ok(row);
  const [plain] = await t.deps.sql`
    select 1 from app_private.siwe_nonces where nonce_hash = ${body.nonce}`;
  assert.equal(plain, undefined);
  assert.notEqual(body.nonce, await nonce(), "every nonce is new");
});

// --- success ----------------------------------------------------------------------------------

test("[wallet] an account's EIP-191 signature signs an integrator in: tokens in the body, a new account without an address", async () => {
  const signer = wallet();
  const session = await expectJson(await post(await signedBy(signer)), 200);
  assert.ok(session.accessToken && session.refreshToken);
  assert.deepEqual(decodeJwt(session.accessToken).amr, ["wallet"]);
  assert.equal(session.user.email, null);
  assert.equal(session.user.name, `${signer.address.slice(0, 6)}…${signer.address.slice(-4)}`);
  assert.equal(session.user.role, "SUBSCRIBER");
  assert.equal((await accountOf(signer.address))[0].user_id, session.user.id);
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.signin' and user_id = ${session.user.id}`;
  assert.equal(event.details.provider, "wallet");
  assert.equal(event.details.address, signer.address);

  // The same wallet again: the same account.
  const again = await expectJson(await post(await signedBy(signer)), 200);
  assert.equal(again.user.id, session.user.id);
});

test("[wallet] a browser (allowed Origin) gets the session in cookies, not in the body", async () => {
  const signer = wallet();
  const response = await post(await signedBy(signer), { origin: SITE });
  const body = await expectJson(response, 200);
  assert.equal(body.accessToken, undefined);
  assert.equal(body.refreshToken, undefined);
  assert.ok(body.user.id);
  const cookies = setCookies(response);
  for (const name of ["agora-access-token", "agora-refresh-token", "agora-csrf"]) {
    assert.ok(cookies[name], `${name} set`);
  }
  assert.match(cookies["agora-access-token"].attributes, /HttpOnly/i);
  assert.equal(response.headers.get("cache-control"), "no-store");
});

test("[wallet] an ERC-1271 contract wallet signs in through the chain; another signer is refused", async () => {
  const owner = wallet();
  const contract = await deployOwnerWallet({ rpcUrl: testRpcUrl(), owner: owner.address });
  const session = await expectJson(
    await post(await signedBy(owner, {}, { address: contract })),
    200,
  );
  assert.equal((await accountOf(contract))[0].user_id, session.user.id);
  assert.equal(
    (await accountOf(owner.address)).length,
    0,
    "the owner's own key is not the account",
  );
  await refusedWith(await signedBy(wallet(), {}, { address: contract }), "bad_signature");
});

test("[wallet] a contract wallet's signature when the chain does not answer: 503 chain_unavailable", async () => {
  const down = testApp({ AGORA_RPC_URL: "http://127.0.0.1:9" });
  const owner = wallet();
  const text = await message({ address: "0x000000000000000000000000000000000000dEaD" }, {
    nonce: await nonce(down),
  });
  const response = await down.request("POST", "/api/auth/signin", {
    body: {
      provider: "wallet",
      message: text,
      signature: await owner.signMessage({ message: text }),
    },
  });
  await expectError(response, 503, "chain_unavailable");
  // An account's own signature needs no chain.
  const signer = wallet();
  const own = await message(signer, { nonce: await nonce(down) });
  await expectJson(
    await down.request("POST", "/api/auth/signin", {
      body: {
        provider: "wallet",
        message: own,
        signature: await signer.signMessage({ message: own }),
      },
    }),
    200,
  );
});

// --- refusals, one each ---------------------------------------------------------------------------

test("[wallet] refused: a replayed message (its nonce is spent) is 401", async () => {
  const signer = wallet();
  const body = await signedBy(signer);
  await expectJson(await post(body), 200);
  await refusedWith(body, "unknown_or_spent_nonce");
});

test("[wallet] refused: a nonce the server never issued is 401", async () => {
  await refusedWith(
    await signedBy(wallet(), { nonce: "NeverIssued12345" }),
    "unknown_or_spent_nonce",
  );
});

test("[wallet] refused: a nonce older than ten minutes is 401", async () => {
  const n = await nonce();
  await t.deps.sql`
    update app_private.siwe_nonces set expires_at = now() - interval '1 second'
    where nonce_hash = ${await sha256Hex(n)}`;
  await refusedWith(await signedBy(wallet(), { nonce: n }), "unknown_or_spent_nonce");
});

test("[wallet] refused: a message for another domain is 401", async () => {
  await refusedWith(
    await signedBy(wallet(), { domain: "evil.example", uri: "https://evil.example" }),
    "wrong_domain",
  );
});

test("[wallet] refused: a URI on another origin than the domain is 401", async () => {
  await refusedWith(await signedBy(wallet(), { uri: "https://evil.example/login" }), "wrong_uri");
});

test("[wallet] refused: a message for another chain is 401", async () => {
  await refusedWith(await signedBy(wallet(), { chainId: 1 }), "wrong_chain");
});

test("[wallet] refused: an expired message is 401", async () => {
  await refusedWith(
    await signedBy(wallet(), {
      issuedAt: new Date(Date.now() - 120_000),
      expirationTime: new Date(Date.now() - 60_000),
    }),
    "expired",
  );
});

test("[wallet] refused: a message not valid yet (notBefore) is 401", async () => {
  await refusedWith(
    await signedBy(wallet(), { notBefore: new Date(Date.now() + 120_000) }),
    "not_yet_valid",
  );
});

test("[wallet] refused: a message issued in the future, or longer ago than a nonce lives, is 401", async () => {
  await refusedWith(
    await signedBy(wallet(), { issuedAt: new Date(Date.now() + 5 * 60_000) }),
    "issued_in_future",
  );
  await refusedWith(
    await signedBy(wallet(), {
      issuedAt: new Date(Date.now() - 11 * 60_000),
      expirationTime: new Date(Date.now() + 60_000),
    }),
    "expired",
  );
});

test("[wallet] refused: a signature by another key than the message's address is 401, and the nonce stays usable", async () => {
  const owner = wallet();
  const thief = wallet();
  const text = await message(owner);
  await refusedWith(
    { message: text, signature: await thief.signMessage({ message: text }) },
    "bad_signature",
  );
  assert.equal((await accountOf(owner.address)).length, 0);
  // The refusal did not spend the nonce: the rightful signer still signs in with it.
  await expectJson(
    await post({ message: text, signature: await owner.signMessage({ message: text }) }),
    200,
  );
});

test("[wallet] refused: a signature of another message (tampered text) is 401", async () => {
  const signer = wallet();
  const text = await message(signer);
  const signature = await signer.signMessage({ message: text });
  await refusedWith(
    { message: text.replace("Sign in to Agora.", "Sign in to Agora!"), signature },
    "bad_signature",
  );
});

test("[wallet] malformed input is 400: not an EIP-4361 message, version 2, no issued-at, a bad date, a signature that is not hex", async () => {
  const signer = wallet();
  const good = await message(signer);
  const signature = await signer.signMessage({ message: good });
  const cases: [string, unknown][] = [
    ["plain text", { message: "hello", signature }],
    ["version 2", { message: good.replace("Version: 1", "Version: 2"), signature }],
    ["no issued-at", { message: good.replace(/\nIssued At: [^\n]+/, ""), signature }],
    ["a bad date", {
      message: good.replace(/Issued At: [^\n]+/, "Issued At: yesterday"),
      signature,
    }],
    ["a short nonce", { message: good.replace(/Nonce: \w+/, "Nonce: abc"), signature }],
    ["signature not hex", { message: good, signature: "not-hex" }],
    ["no signature", { message: good }],
    ["no message", { signature }],
  ];
  for (const [name, body] of cases) {
    const refused = await post(body as Record<string, unknown>);
    assert.equal(refused.status, 400, `${name}: ${refused.status}`);
    await expectError(refused, 400, "invalid_request");
  }
});

test("[wallet] concurrent uses of one signed message open exactly one session", async () => {
  const signer = wallet();
  const body = await signedBy(signer);
  const results = await Promise.all(Array.from({ length: 6 }, () => post(body)));
  const statuses = results.map((r) => r.status).sort();
  await Promise.all(results.map((r) => r.body?.cancel()));
  assert.deepEqual(statuses, [200, 401, 401, 401, 401, 401]);
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.sessions s join app.identities i on i.user_id = s.user_id
    where i.provider = 'wallet' and i.provider_user_id = ${signer.address}`;
  assert.equal(n, 1);
});

// --- linking --------------------------------------------------------------------------------------

test("[wallet] a wallet never links by itself; link: true attaches it to the signed-in user", async () => {
  const person = await signIn(t, uniqueEmail("holder"));
  const signer = wallet();
  // Without link: its own new account.
  const alone = await expectJson(await post(await signedBy(signer)), 200);
  assert.notEqual(alone.user.id, person.user.id);

  const other = wallet();
  const linked = await expectJson(
    await post({ ...(await signedBy(other)), link: true }, undefined, person.accessToken),
    200,
  );
  assert.equal(linked.user.id, person.user.id);
  assert.equal((await accountOf(other.address))[0].user_id, person.user.id);
  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'auth.identity_linked' and user_id = ${person.user.id}`;
  assert.deepEqual(event.details, { provider: "wallet", via: "explicit", address: other.address });
  // From now on the wallet signs in to that account.
  const later = await expectJson(await post(await signedBy(other)), 200);
  assert.equal(later.user.id, person.user.id);

  // A wallet that is another account's cannot be linked: 409.
  await expectError(
    await post({ ...(await signedBy(signer)), link: true }, undefined, person.accessToken),
    409,
    "conflict",
  );
  // link without a session: 401.
  await expectError(await post({ ...(await signedBy(wallet())), link: true }), 401);
});

test("[wallet] wallet sign-in turned off: the nonce and the sign-in are 400 provider_disabled", async () => {
  const admin = await signIn(t, uniqueEmail("walletadmin"));
  await t.deps.sql`update app.users set role = 'ADMIN' where id = ${admin.user.id}`;
  const set = (wallet: boolean) =>
    t.request("PUT", "/api/admin/config", {
      token: admin.accessToken,
      body: { config: { features: { signIn: { wallet } } }, reason: "test" },
    });
  const body = await signedBy(wallet());
  await expectJson(await set(false), 200);
  try {
    await expectError(await t.request("GET", "/api/auth/nonce"), 400, "provider_disabled");
    await expectError(await post(body), 400, "provider_disabled");
  } finally {
    await expectJson(await set(true), 200);
  }
});
