/**
 * The chain in `npm start`: anvil on AGORA_CHAIN_PORT; on a new chain the platform's contracts
 * are deployed and recorded as a configuration version ("local chain deployed"); a restart keeps
 * the chain's state and the recorded contracts (no new version); contracts deployed from older
 * sources, or missing because the chain's state file was lost, are deployed again and recorded;
 * `--reset` starts the chain empty; Ctrl-C leaves no anvil behind.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import postgres from "postgres";
import { type Address, createPublicClient, createWalletClient, http, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { freePort } from "../../stack/postgres.ts";
import { test } from "../support/helpers.ts";
import { portOpen, stackSettings, startStack, stopStack } from "./stack-process.ts";

interface Recorded {
  version: number;
  reason: string;
  chainId: number;
  contracts: {
    multicall3: Address;
    utility: Address;
    governance: Address;
    staking: Address;
    erc721: Address[];
    erc1155: Address[];
  };
}

test("[stack] npm start: the chain's contracts are deployed and recorded, kept on restart, redeployed after a source change or a lost chain state, reset by --reset", async () => {
  const localDir = await Deno.makeTempDir({ prefix: "agora-stack-" });
  await Deno.chmod(localDir, 0o755); // the database server runs as the postgres user
  const ports = { port: freePort(), dbPort: freePort(), chainPort: freePort() };
  const rpcUrl = `http://127.0.0.1:${ports.chainPort}`;
  const chain = createPublicClient({ transport: http(rpcUrl) });
  const marker = privateKeyToAccount(generatePrivateKey()).address;
  const db: { sql: ReturnType<typeof postgres> | null } = { sql: null };

  const recorded = async (): Promise<Recorded> => {
    const [row] = await db.sql!<
      { version: number; reason: string; wallet: Pick<Recorded, "chainId" | "contracts"> }[]
    >`
      select v.version, v.reason, app.effective_config() -> 'wallet' as wallet
      from app.config_versions v order by v.version desc limit 1`;
    const { chainId, contracts } = row.wallet;
    return { version: row.version, reason: row.reason, chainId, contracts };
  };
  const everyAddress = (r: Recorded) => [
    r.contracts.multicall3,
    r.contracts.utility,
    r.contracts.governance,
    r.contracts.staking,
    ...r.contracts.erc721,
    ...r.contracts.erc1155,
  ];
  const allHaveCode = async (r: Recorded) => {
    for (const address of everyAddress(r)) {
      const code = await chain.getCode({ address });
      if (!code || code === "0x") return false;
    }
    return true;
  };
  const sendMarker = async () => {
    const wallet = createWalletClient({ transport: http(rpcUrl) });
    const [from] = await wallet.getAddresses();
    const hash = await wallet.sendTransaction({
      account: from,
      to: marker,
      value: parseEther("1"),
      chain: null,
    });
    await chain.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  };
  const connect = async () => {
    const env = await stackSettings(localDir);
    db.sql = postgres(
      `postgresql://postgres:${env.AGORA_DB_PASSWORD}@127.0.0.1:${ports.dbPort}/postgres`,
      { max: 1, onnotice: () => {} },
    );
  };
  const stop = async (running: Awaited<ReturnType<typeof startStack>>) => {
    await db.sql?.end();
    db.sql = null;
    const status = await stopStack(running);
    assert.equal(status.code, 0, running.output());
    assert.equal(await portOpen(ports.chainPort), false, "the chain is down");
  };

  try {
    // First start: a new chain; the contracts are deployed and recorded.
    let running = await startStack(localDir, ports);
    assert.match(
      running.output(),
      /deployed the platform's contracts; recorded as configuration version \d+/,
    );
    assert.ok(running.output().includes(`Chain        ${rpcUrl}`), "the banner names the chain");
    await connect();
    const first = await recorded();
    assert.equal(first.reason, "local chain deployed");
    assert.equal(first.chainId, 31337);
    for (const address of everyAddress(first)) assert.match(address, /^0x[0-9a-fA-F]{40}$/);
    assert.equal(first.contracts.erc721.length, 1);
    assert.equal(first.contracts.erc1155.length, 1);
    assert.ok(await allHaveCode(first), "every recorded contract is on the chain");
    await sendMarker();
    await stop(running);
    assert.ok((await Deno.stat(join(localDir, "chain", "state.json"))).size > 0);

    // Restart: the chain's state is back; the recorded contracts are kept, no new version.
    running = await startStack(localDir, ports);
    assert.match(running.output(), /the platform's contracts are on the chain/);
    await connect();
    const second = await recorded();
    assert.deepEqual(second, first, "the same version and addresses");
    assert.ok(await allHaveCode(second));
    assert.equal(await chain.getBalance({ address: marker }), parseEther("1"), "state kept");
    await stop(running);

    // The sources changed since the deployment (the stamp says so): the new code is deployed on
    // the same chain, at new addresses, recorded as a new version; the chain's state is kept.
    const stampPath = join(localDir, "chain", "contracts.json");
    const stamp = JSON.parse(await Deno.readTextFile(stampPath));
    assert.equal(stamp.contracts.utility, first.contracts.utility);
    await Deno.writeTextFile(stampPath, JSON.stringify({ ...stamp, key: "older sources" }));
    running = await startStack(localDir, ports);
    assert.match(
      running.output(),
      /changed since the contracts were deployed: deploying the new code/,
    );
    await connect();
    const third = await recorded();
    assert.equal(third.version, first.version + 1);
    assert.equal(third.reason, "local chain deployed");
    assert.notEqual(third.contracts.utility, first.contracts.utility);
    assert.ok(await allHaveCode(third));
    assert.equal(await chain.getBalance({ address: marker }), parseEther("1"), "state kept");
    await stop(running);

    // The chain's state is lost (the database is not): deployed again and recorded. The same
    // account deploys at the same nonces on a new chain, so the addresses are the first ones.
    await Deno.remove(join(localDir, "chain", "state.json"));
    running = await startStack(localDir, ports);
    assert.match(running.output(), /have no code on the chain .*: deploying again/);
    await connect();
    const fourth = await recorded();
    assert.equal(fourth.version, third.version + 1);
    assert.deepEqual(fourth.contracts, first.contracts);
    assert.ok(await allHaveCode(fourth), "the contracts are on the new chain");
    assert.equal(await chain.getBalance({ address: marker }), 0n, "a new chain");
    await sendMarker();
    await stop(running);

    // --reset: a fresh database and an empty chain, deployed and recorded once more.
    running = await startStack(localDir, ports, ["--reset"]);
    await connect();
    const fifth = await recorded();
    assert.deepEqual(fifth, first, "the fresh database records the same deployment as at first");
    assert.ok(await allHaveCode(fifth));
    assert.equal(await chain.getBalance({ address: marker }), 0n, "the chain was reset");
    await stop(running);
  } finally {
    await db.sql?.end();
    await Deno.remove(localDir, { recursive: true }).catch(() => {});
  }
});
