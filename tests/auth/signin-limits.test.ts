/**
 * Rate limits on the new sign-in routes (one helper, functions/api/core/rate-limits.ts): starting a
 * Google or Apple sign-in and a wallet sign-in count per IP (`signin_ip`), wallet sign-ins also
 * per address (`signin_wallet`), nonces per IP (`nonce_ip`), the callbacks and the code exchange
 * per IP (`verify_ip`). A refusal is 429 with Retry-After and the RateLimit headers, recorded as
 * `rate_limit.exceeded` with its group.
 */
import assert from "node:assert/strict";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { expectError, expectJson, SITE, test, testApp } from "../support/helpers.ts";
import { startPeers } from "../support/oidc-peers.ts";

const peers = await startPeers();

const randomIp = () =>
  `198.19.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

async function exceeded(app: ReturnType<typeof testApp>, ip: string, group: string) {
  const [{ n }] = await app.deps.sql`
    select count(*)::int as n from app.security_events
    where type = 'rate_limit.exceeded' and ip = ${ip}::inet and details ->> 'group' = ${group}`;
  return n;
}

test("[limits] starting a Google or Apple sign-in counts per IP", async () => {
  const app = testApp({ ...peers.env, AGORA_RATE_SIGNIN_IP: "3/600" });
  const ip = randomIp();
  const statuses = [];
  for (const provider of ["google", "apple", "google", "apple"]) {
    const r = await app.request("POST", "/api/auth/signin", { body: { provider }, ip });
    statuses.push(r.status);
    await r.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  assert.equal(await exceeded(app, ip, "signin_ip"), 1);
});

test("[limits] callbacks and code exchanges count per IP", async () => {
  const app = testApp({ ...peers.env, AGORA_RATE_VERIFY_IP: "2/600" });
  const ip = randomIp();
  const statuses = [];
  const unknownState = await app.request("GET", "/api/auth/callback/google?state=x&code=y", {
    ip,
  });
  statuses.push(unknownState.status);
  statuses.push(
    (await app.request("POST", "/api/auth/exchange", {
      body: { code: "x", codeVerifier: "v".repeat(43) },
      ip,
    })).status,
  );
  const refused = await app.request("POST", "/api/auth/callback/apple", {
    headers: { "content-type": "application/x-www-form-urlencoded" },
    rawBody: "state=x&code=y",
    ip,
  });
  assert.deepEqual(statuses, [303, 401]);
  assert.match(unknownState.headers.get("location")!, /\/signin\?error=invalid_state$/);
  // A browser's callback over the limit lands on the sign-in page, which says to wait.
  assert.equal(refused.status, 303);
  assert.match(refused.headers.get("location")!, /\/signin\?error=rate_limited$/);
  assert.equal(await exceeded(app, ip, "verify_ip"), 1);
});

test("[limits] nonces count per IP", async () => {
  const app = testApp({ AGORA_RATE_NONCE_IP: "2/600" });
  const ip = randomIp();
  await expectJson(await app.request("GET", "/api/auth/nonce", { ip }), 200);
  const second = await app.request("GET", "/api/auth/nonce", { ip });
  assert.equal(second.headers.get("ratelimit-remaining"), "0");
  await expectJson(second, 200);
  const refused = await app.request("GET", "/api/auth/nonce", { ip });
  await expectError(refused, 429, "rate_limited");
  assert.equal(refused.headers.get("ratelimit-limit"), "2");
  assert.equal(await exceeded(app, ip, "nonce_ip"), 1);
  await expectJson(await app.request("GET", "/api/auth/nonce", { ip: randomIp() }), 200);
});

test("[limits] wallet sign-ins count per address, whatever the IP", async () => {
  const app = testApp({ AGORA_RATE_SIGNIN_WALLET: "2/600" });
  const signer = privateKeyToAccount(generatePrivateKey());
  const attempt = async () => {
    const { nonce } = await expectJson(await app.request("GET", "/api/auth/nonce"), 200);
    const message = createSiweMessage({
      address: signer.address,
      domain: new URL(SITE).host,
      uri: SITE,
      version: "1",
      chainId: 31337,
      nonce,
      issuedAt: new Date(),
    });
    return await app.request("POST", "/api/auth/signin", {
      body: { provider: "wallet", message, signature: await signer.signMessage({ message }) },
      ip: randomIp(),
    });
  };
  await expectJson(await attempt(), 200);
  await expectJson(await attempt(), 200);
  const refused = await attempt();
  await expectError(refused, 429, "rate_limited");
  const [event] = await app.deps.sql`
    select details from app.security_events where type = 'rate_limit.exceeded'
      and details ->> 'group' = 'signin_wallet' order by id desc limit 1`;
  assert.equal(event.details.address, signer.address);
});
