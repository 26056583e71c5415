/**
 * Key custody: keys are sealed under the master key's id, bound to their wallet (a sealed key
 * moved to another wallet's row does not open), and the rotation command re-seals every data key
 * under a new master key (the old key only needed meanwhile), after which the platform signs and
 * exports with the new key alone. No API role can read the sealed keys (tests/wallet/sql/501-*).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSettings, parseMasterKey } from "../../functions/_shared/settings.ts";
import {
  createKeyring,
  masterKeyId,
  openPrivateKey,
  type SealedKey,
} from "../../functions/api/wallet/keys.ts";
import { rotateWalletKeys } from "../../functions/api/wallet/rotation.ts";
import { sealedKeyOf } from "../../functions/api/wallet/wallets.ts";
import { addressOf } from "../../functions/api/wallet/keys.ts";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { addressOfCaller, fund, platform, settle, TEST_MASTER_KEYS } from "../support/wallet.ts";

const [OLD, NEW] = TEST_MASTER_KEYS;
const oldKey = parseMasterKey("old", OLD);
const newKey = parseMasterKey("new", NEW);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

test("[wallet] a sealed key opens only for its own wallet, with the master key its seal names", async () => {
  const t = testApp({ AGORA_WALLET_MASTER_KEY: OLD });
  const a = await signInAs(t, "SUBSCRIBER");
  const b = await signInAs(t, "SUBSCRIBER");
  const rows = await t.deps.sql<{ id: string; address: string; user_id: string }[]>`
    select id, address, user_id from app.wallets where user_id in (${a.user.id}, ${b.user.id})`;
  const [wa, wb] = [a, b].map((u) => rows.find((r) => r.user_id === u.user.id)!);
  const ring = await createKeyring(oldKey);
  const sealedA = await sealedKeyOf(t.deps.sql, wa.id);
  const sealedB = await sealedKeyOf(t.deps.sql, wb.id);
  assert.equal(sealedA.keyId, await masterKeyId(oldKey));
  const opened = await openPrivateKey(ring, wa.id, wa.address, sealedA);
  assert.equal(addressOf(opened), wa.address, "it opens to the wallet's own key");
  // A's ciphertexts under B's id and address, or with another wallet's data key: refused.
  await assert.rejects(openPrivateKey(ring, wb.id, wb.address, sealedA));
  const swapped: SealedKey = { ...sealedB, encryptedPrivateKey: sealedA.encryptedPrivateKey };
  await assert.rejects(openPrivateKey(ring, wb.id, wb.address, swapped));
  const tampered = { ...sealedA, encryptedPrivateKey: sealedA.encryptedPrivateKey.slice() };
  tampered.encryptedPrivateKey[20] ^= 1;
  await assert.rejects(openPrivateKey(ring, wa.id, wa.address, tampered));
  await assert.rejects(openPrivateKey(await createKeyring(newKey), wa.id, wa.address, sealedA));
});

test("[wallet] rotation re-seals every data key under the new master key; the platform then works with the new key alone", async () => {
  const before = testApp({ AGORA_WALLET_MASTER_KEY: OLD });
  const contracts = await platform(before.deps);
  const users = [];
  for (let i = 0; i < 3; i++) users.push(await signInAs(before, "SUBSCRIBER"));
  const ids = users.map((u) => u.user.id);
  const sealedBefore = await before.deps.sql<
    { wallet_id: string; encrypted_private_key: Uint8Array }[]
  >`
    select k.wallet_id, k.encrypted_private_key from app_private.wallet_keys k
    join app.wallets w on w.id = k.wallet_id where w.user_id = any(${ids}::uuid[])`;
  const ring = await createKeyring(newKey, [oldKey]);
  const result = await rotateWalletKeys(before.deps.sql, ring, { batch: 2 });
  assert.ok(result.rewrapped >= 3);
  assert.equal(result.currentKeyId, await masterKeyId(newKey));
  // The other tests' wallets are sealed by the run's key, which this ring lacks: named, untouched.
  const runKeyId = await masterKeyId(
    parseMasterKey("run", Deno.env.get("AGORA_WALLET_MASTER_KEY")!),
  );
  assert.ok(result.unopenable[runKeyId] > 0, "wallets under a key it lacks are named");
  assert.equal(result.byKeyId[await masterKeyId(oldKey)], undefined, "none left under the old key");
  const after = await before.deps.sql<
    { wallet_id: string; key_id: string; encrypted_private_key: Uint8Array; rewrapped_at: Date }[]
  >`
    select k.wallet_id, k.key_id, k.encrypted_private_key, k.rewrapped_at from app_private.wallet_keys k
    join app.wallets w on w.id = k.wallet_id where w.user_id = any(${ids}::uuid[])`;
  for (const row of after) {
    assert.equal(row.key_id, await masterKeyId(newKey));
    assert.ok(row.rewrapped_at);
    const was = sealedBefore.find((s) => s.wallet_id === row.wallet_id)!;
    assert.deepEqual(
      new Uint8Array(row.encrypted_private_key),
      new Uint8Array(was.encrypted_private_key),
      "the private key's ciphertext is unchanged: only its data key was re-sealed",
    );
  }
  assert.equal(
    (await rotateWalletKeys(before.deps.sql, ring)).rewrapped,
    0,
    "again: nothing to do",
  );

  // With only the new key, a transfer is signed and mined.
  const now = testApp({ AGORA_WALLET_MASTER_KEY: NEW });
  const me = users[0];
  const address = await addressOfCaller(now, me.accessToken);
  await fund(contracts, address, { nfts: false });
  const { transaction: created } = await expectJson(
    await now.request("POST", "/api/wallet/transfer", {
      token: me.accessToken,
      body: { to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", token: "native", amount: "1" },
    }),
    201,
  );
  await expectJson(
    await now.request("POST", `/api/wallet/transactions/${created.id}/confirm`, {
      token: me.accessToken,
    }),
    200,
  );
  assert.equal(await settle(now.deps, created.id), "confirmed");
});

test("[wallet] npm run wallet-keys: status and rotate from the command line", async () => {
  const seed = testApp({ AGORA_WALLET_MASTER_KEY: OLD });
  await signInAs(seed, "SUBSCRIBER");
  const run = async (...args: string[]) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        "--quiet",
        join(ROOT, "stack", "cli.ts"),
        "wallet-keys",
        ...args,
      ],
      env: {
        AGORA_DB_URL: Deno.env.get("AGORA_TEST_DB_URL")!,
        AGORA_WALLET_MASTER_KEY: NEW,
        AGORA_WALLET_PREVIOUS_MASTER_KEYS: `${OLD}`,
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
    return { ok: output.success, text };
  };
  const oldId = await masterKeyId(oldKey);
  const newId = await masterKeyId(newKey);
  const status = await run("status");
  assert.ok(status.ok, status.text);
  assert.match(status.text, new RegExp(`current master key: ${newId}`));
  assert.match(status.text, new RegExp(`${oldId}: \\d+ wallet\\(s\\) \\(previous key set\\)`));
  const rotated = await run("rotate");
  // Wallets sealed by the run's own key are not this command's to open: it names them and fails.
  const runKeyId = await masterKeyId(
    parseMasterKey("run", Deno.env.get("AGORA_WALLET_MASTER_KEY")!),
  );
  assert.match(rotated.text, new RegExp(runKeyId), rotated.text);
  assert.ok(!rotated.ok, "it does not claim success while wallets are left under a key it lacks");
  const [{ n }] = await seed.deps.sql`
    select count(*)::int as n from app_private.wallet_keys where key_id = ${oldId}`;
  assert.equal(n, 0, "every wallet under the old key was re-sealed");
});

test("[wallet] settings: the master key is required outside local mode and must be 32 bytes", () => {
  const base = {
    AGORA_DB_URL: "postgres://nobody@127.0.0.1:1/none",
    AGORA_JWT_SECRET: "j".repeat(32),
    AGORA_CSRF_SECRET: "c".repeat(32),
    AGORA_REFRESH_SECRET: "r".repeat(32),
  };
  assert.throws(() => loadSettings(base), /AGORA_WALLET_MASTER_KEY/);
  assert.equal(loadSettings({ ...base, AGORA_LOCAL_MODE: "true" }).walletMasterKey, null);
  for (const bad of ["short", "z".repeat(44), "0x" + "ab".repeat(31)]) {
    assert.throws(
      () => loadSettings({ ...base, AGORA_WALLET_MASTER_KEY: bad }),
      /AGORA_WALLET_MASTER_KEY must be 32 bytes/,
    );
  }
  const hex = loadSettings({ ...base, AGORA_WALLET_MASTER_KEY: "0x" + "ab".repeat(32) });
  assert.equal(hex.walletMasterKey?.length, 32);
  const b64 = loadSettings({
    ...base,
    AGORA_WALLET_MASTER_KEY: OLD,
    AGORA_WALLET_PREVIOUS_MASTER_KEYS: `${NEW}, ${OLD}`,
  });
  assert.deepEqual(b64.walletMasterKey, oldKey);
  assert.equal(b64.walletPreviousMasterKeys.length, 2);
});
