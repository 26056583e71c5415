/**
 * No private key leaks: every wallet route is run (successes and refusals, the jobs and the
 * follower included) with the server's log at debug level captured, then the whole test database
 * is dumped with pg_dump; neither holds any wallet's private key (0x hex, bare hex in either
 * case, or base64), nor a master key.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair } from "jose";
import { parseMasterKey } from "../../functions/_shared/settings.ts";
import { createKeyring, openPrivateKey } from "../../functions/api/wallet/keys.ts";
import { sealedKeyOf } from "../../functions/api/wallet/wallets.ts";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import {
  addressOfCaller,
  follow,
  fund,
  platform,
  settle,
  TEST_MASTER_KEYS,
} from "../support/wallet.ts";

test("[wallet] no private key or master key in the server log or a dump of the database after every wallet route", async () => {
  const lines: string[] = [];
  const original = { log: console.log, error: console.error, warn: console.warn };
  const capture = (...args: unknown[]) =>
    void lines.push(args.map((a) => typeof a === "string" ? a : Deno.inspect(a)).join(" "));
  console.log = capture;
  console.error = capture;
  console.warn = capture;
  let dump = "";
  let ownAddress = "";
  try {
    const t = testApp({ AGORA_LOG_LEVEL: "debug" });
    const contracts = await platform(t.deps);
    const me = await signInAs(t, "MEMBER");
    const other = await signInAs(t, "SUBSCRIBER");
    const token = me.accessToken;
    const address = await addressOfCaller(t, token);
    ownAddress = address;
    await fund(contracts, address);
    const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      t.request(method, path, { token, body, headers });

    await call("GET", "/api/wallet");
    await call("POST", "/api/wallet/create");
    await call("GET", "/api/wallet/balance");
    await call("GET", "/api/wallet/tokens");
    await call("POST", "/api/wallet/tokens/add", { address: contracts.erc721[0] });
    await call("POST", "/api/wallet/tokens/add", { address: "0xNOPE" });
    await call("POST", "/api/wallet/transfer", {
      to: { userId: other.user.id },
      token: "native",
      amount: "1".repeat(40),
    });
    const { transaction: created } = await expectJson(
      await call("POST", "/api/wallet/transfer", {
        to: { userId: other.user.id },
        token: "AGU",
        amount: "1000",
      }, {
        "idempotency-key": "leak-test",
      }),
      201,
    );
    await call("POST", "/api/wallet/transfer", {
      to: { userId: other.user.id },
      token: "AGU",
      amount: "1000",
    }, {
      "idempotency-key": "leak-test",
    });
    await call("POST", `/api/wallet/transactions/${created.id}/confirm`);
    await call("POST", `/api/wallet/transactions/${created.id}/confirm`);
    await settle(t.deps, created.id);
    await follow(t.deps);
    await call("GET", "/api/wallet/transactions?limit=5");
    await call("GET", "/api/wallet/nfts");
    const { publicKey } = await generateKeyPair("ECDH-ES", { crv: "P-256", extractable: true });
    await call("POST", "/api/wallet/export", { publicKey: await exportJWK(publicKey) });
    await call("POST", "/api/wallet/export", {
      publicKey: { kty: "EC", crv: "P-256", x: "a", y: "b", d: "c" },
    });
    // A process that cannot open the keys fails with a logged 500: its log must not leak either.
    const keyless = testApp({
      AGORA_LOG_LEVEL: "debug",
      AGORA_WALLET_MASTER_KEY: TEST_MASTER_KEYS[0],
    });
    const { transaction: second } = await expectJson(
      await call("POST", "/api/wallet/transfer", {
        to: { userId: other.user.id },
        token: "AGV",
        amount: "5",
      }),
      201,
    );
    await keyless.request("POST", `/api/wallet/transactions/${second.id}/confirm`, {
      token,
      injectedFault: true,
    });
    await t.deps.accessLog.flush();

    const pgDump = await new Deno.Command("/usr/lib/postgresql/15/bin/pg_dump", {
      args: ["--no-owner", "--dbname", Deno.env.get("AGORA_TEST_DB_URL")!],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(pgDump.success, new TextDecoder().decode(pgDump.stderr));
    dump = new TextDecoder().decode(pgDump.stdout);
    assert.ok(dump.includes(address), "the dump holds the wallet data");
  } finally {
    Object.assign(console, original);
  }
  const log = lines.join("\n");
  assert.ok(lines.length > 20, `the server logged (${lines.length} lines)`);

  // Every wallet of the run with a key, opened with every master key the run used. (Other
  // test files share the database and insert bare wallet rows as fixtures, e.g. the analytics
  // race: a wallet without a key row has no secret to leak.)
  const t = testApp();
  const masters = [Deno.env.get("AGORA_WALLET_MASTER_KEY")!, ...TEST_MASTER_KEYS];
  const rings = await Promise.all(masters.map((m) => createKeyring(parseMasterKey("key", m))));
  const wallets = await t.deps.sql<{ id: string; address: string }[]>`
    select w.id, w.address from app.wallets w
    where exists (select 1 from app_private.wallet_keys k where k.wallet_id = w.id)`;
  const secrets: string[] = [...masters];
  for (const wallet of wallets) {
    const sealed = await sealedKeyOf(t.deps.sql, wallet.id);
    const ring = rings.find((r) => r.byId.has(sealed.keyId));
    assert.ok(ring, `wallet ${wallet.id} is sealed by a key of this run`);
    const key = await openPrivateKey(ring, wallet.id, wallet.address, sealed);
    const hex = Array.from(key, (b) => b.toString(16).padStart(2, "0")).join("");
    secrets.push(hex, `0x${hex}`, hex.toUpperCase(), btoa(String.fromCharCode(...key)));
    key.fill(0);
  }
  assert.ok(
    wallets.some((w) => w.address.toLowerCase() === ownAddress.toLowerCase()),
    "the wallet the routes used is among those opened",
  );
  const haystacks = { log: log.toLowerCase(), dump: dump.toLowerCase() };
  const found: string[] = [];
  for (const secret of secrets) {
    for (const [where, text] of Object.entries(haystacks)) {
      if (text.includes(secret.toLowerCase())) found.push(`${where}: ${secret.slice(0, 6)}…`);
    }
  }
  assert.deepEqual(found, [], `${secrets.length} secrets looked for in the log and the dump`);
});
