/**
 * How the stack records its chain's contracts in the configuration (against the run's database
 * and chain): recorded contracts with code are kept; recorded ones without code are deployed
 * again and the new addresses recorded as a version with a diff; concurrent recorders each get
 * their own version.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { getAddress } from "viem";
import {
  contractAddresses,
  DEPLOYED_REASON,
  ensurePlatformContracts,
  recordContracts,
} from "../../stack/chain/local.ts";
import { compileContracts } from "../../stack/chain/compile.ts";
import { deployPlatform, missingCode, type PlatformContracts } from "../../stack/chain/deploy.ts";
import { test } from "../support/helpers.ts";
import { testRpcUrl } from "./support.ts";

function database() {
  const url = Deno.env.get("AGORA_TEST_DB_URL");
  if (!url) throw new Error("AGORA_TEST_DB_URL is not set: run the tests with `npm test`");
  return postgres(url, { max: 2, onnotice: () => {} });
}

/** Addresses of the right shape where nothing is deployed. */
function nowhere(seed: number): PlatformContracts {
  const at = (i: number) =>
    getAddress(`0x${(seed * 100 + i).toString(16).padStart(4, "0")}${"ee".repeat(18)}`);
  return {
    chainId: 31337,
    multicall3: at(1),
    utility: at(2),
    governance: at(3),
    staking: at(4),
    erc721: [at(5)],
    erc1155: [at(6)],
  };
}

const latest = async (sql: postgres.Sql) =>
  (await sql<{ version: number; reason: string; diff: Record<string, unknown> }[]>`
    select version, reason, diff from app.config_versions order by version desc limit 1`)[0];

test("[chain] recorded contracts without code are deployed again and the new addresses recorded; with code they are kept", async () => {
  const sql = database();
  try {
    const stale = nowhere(1);
    const staleVersion = await recordContracts(sql, stale, "test: contracts that are not there");
    assert.equal((await missingCode(testRpcUrl(), contractAddresses(stale))).length, 6);

    const lines: string[] = [];
    const ensured = await ensurePlatformContracts(sql, testRpcUrl(), {
      log: (l) => lines.push(l),
    });
    assert.equal(ensured.deployed, true);
    assert.equal(ensured.version, staleVersion + 1);
    assert.ok(lines.some((l) => l.includes("no code on the chain")), lines.join("\n"));
    assert.deepEqual(await missingCode(testRpcUrl(), contractAddresses(ensured.contracts)), []);
    const row = await latest(sql);
    assert.equal(row.version, ensured.version);
    assert.equal(row.reason, DEPLOYED_REASON);
    assert.deepEqual(row.diff["wallet.contracts.utility"], {
      from: stale.utility,
      to: ensured.contracts.utility,
    });
    const [{ wallet }] = await sql`select app.effective_config() -> 'wallet' as wallet`;
    assert.equal(wallet.chainId, 31337);
    assert.deepEqual(wallet.contracts, {
      multicall3: ensured.contracts.multicall3,
      utility: ensured.contracts.utility,
      governance: ensured.contracts.governance,
      staking: ensured.contracts.staking,
      erc721: ensured.contracts.erc721,
      erc1155: ensured.contracts.erc1155,
    });

    const again = await ensurePlatformContracts(sql, testRpcUrl());
    assert.deepEqual(again, { ...ensured, deployed: false }, "kept, no new version");
    assert.equal((await latest(sql)).version, ensured.version);
  } finally {
    await sql.end();
  }
});

test("[chain] recording the same contracts again writes nothing; concurrent recorders each get their own version", async () => {
  const sql = database();
  try {
    const contracts = await deployPlatform({ rpcUrl: testRpcUrl() });
    const version = await recordContracts(sql, contracts);
    assert.equal(await recordContracts(sql, contracts), version, "no change, no version");
    assert.equal((await latest(sql)).version, version);

    const [a, b] = await Promise.all([
      recordContracts(sql, nowhere(2), "test: first writer"),
      recordContracts(sql, nowhere(3), "test: second writer"),
    ]);
    assert.deepEqual([a, b].sort(), [version + 1, version + 2]);
    // Whatever the order, the configuration ends up naming the last writer's contracts.
    const last = a > b ? nowhere(2) : nowhere(3);
    const [{ utility }] = await sql`
      select app.effective_config() #>> '{wallet,contracts,utility}' as utility`;
    assert.equal(utility, last.utility);
    await recordContracts(sql, contracts, "test: back to real contracts");
  } finally {
    await sql.end();
  }
});

test("[chain] with a stamp file, contracts deployed from older sources are deployed again; others are kept", async () => {
  const sql = database();
  const dir = await Deno.makeTempDir({ prefix: "agora-chain-stamp-" });
  const stamp = join(dir, "contracts.json");
  try {
    const current = await ensurePlatformContracts(sql, testRpcUrl());
    // No stamp: the stack cannot know it deployed them, so they are kept.
    assert.equal(
      (await ensurePlatformContracts(sql, testRpcUrl(), { stampFile: stamp })).deployed,
      false,
    );
    // A stamp of these contracts from other sources: deployed again, recorded, stamp renewed.
    await Deno.writeTextFile(
      stamp,
      JSON.stringify({ key: "older sources", contracts: current.contracts }),
    );
    const lines: string[] = [];
    const renewed = await ensurePlatformContracts(sql, testRpcUrl(), {
      stampFile: stamp,
      log: (l) => lines.push(l),
    });
    assert.equal(renewed.deployed, true);
    assert.ok(lines.some((l) => l.includes("changed since the contracts were deployed")));
    assert.notEqual(renewed.contracts.utility, current.contracts.utility, "new contracts");
    assert.equal(renewed.version, current.version + 1);
    const written = JSON.parse(await Deno.readTextFile(stamp));
    assert.equal(written.key, (await compileContracts()).artifacts.key);
    assert.deepEqual(written.contracts, renewed.contracts);
    assert.equal(
      (await ensurePlatformContracts(sql, testRpcUrl(), { stampFile: stamp })).deployed,
      false,
    );
    // A stamp of other contracts than the recorded ones (the configuration was pointed elsewhere): kept.
    await Deno.writeTextFile(
      stamp,
      JSON.stringify({ key: "older sources", contracts: nowhere(4) }),
    );
    assert.equal(
      (await ensurePlatformContracts(sql, testRpcUrl(), { stampFile: stamp })).deployed,
      false,
    );
  } finally {
    await sql.end();
    await Deno.remove(dir, { recursive: true });
  }
});
