/**
 * anvil as the project runs it: a throwaway chain on loopback that starts in well under a second
 * and leaves nothing behind, a chain whose state file survives a restart, a clear refusal of a
 * port that is taken, and no anvil left when the process that started it is killed outright.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseEther } from "viem";
import { DEFAULT_CHAIN_ID, rpc, startChain, throwawayChain } from "../../stack/chain/anvil.ts";
import { ANVIL_BIN } from "../../stack/chain/paths.ts";
import { test } from "../support/helpers.ts";
import { portOpen, processAlive, publicClient, waitUntil } from "./support.ts";

test("[chain] a throwaway chain starts on 127.0.0.1 with funded accounts and stops with its process gone", async () => {
  const started = performance.now();
  const chain = await throwawayChain();
  const startMs = performance.now() - started;
  try {
    assert.equal(new URL(chain.url).hostname, "127.0.0.1");
    assert.equal(chain.chainId, DEFAULT_CHAIN_ID);
    assert.equal(Number(await rpc<string>(chain.url, "eth_chainId")), 31337);
    assert.equal(chain.accounts.length, 10);
    const balance = await publicClient(chain.url).getBalance({ address: chain.accounts[0] });
    assert.ok(balance >= parseEther("1000"), "the development accounts are funded");
    assert.ok(processAlive(chain.pid), "anvil runs");
    const cmdline = Deno.readTextFileSync(`/proc/${chain.pid}/cmdline`).split("\0");
    assert.equal(cmdline[0], ANVIL_BIN);
    assert.deepEqual(cmdline.slice(cmdline.indexOf("--host"), cmdline.indexOf("--host") + 2), [
      "--host",
      "127.0.0.1",
    ]);
    assert.ok(startMs < 5_000, `started in ${Math.round(startMs)} ms`);
  } finally {
    await chain.stop();
  }
  assert.equal(processAlive(chain.pid), false, "anvil is gone after stop()");
  assert.equal(await portOpen(chain.port), false, "its port is closed");
  await chain.stop(); // a second stop is harmless
});

test("[chain] a chain with a state file keeps balances across a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agora-chain-" });
  const stateFile = join(dir, "state.json");
  const recipient = "0x00000000000000000000000000000000000a6042" as const;
  try {
    let chain = await startChain({ stateFile });
    const hash = await rpc<string>(chain.url, "eth_sendTransaction", [{
      from: chain.accounts[0],
      to: recipient,
      value: "0x" + parseEther("1.5").toString(16),
    }]);
    assert.match(hash, /^0x[0-9a-f]{64}$/);
    // anvil mines as transactions arrive, but may answer the send a moment before it has mined.
    await publicClient(chain.url).waitForTransactionReceipt({
      hash: hash as `0x${string}`,
      pollingInterval: 20,
      timeout: 5_000,
    });
    assert.equal(
      await publicClient(chain.url).getBalance({ address: recipient }),
      parseEther("1.5"),
    );
    await chain.stop();
    assert.ok((await Deno.stat(stateFile)).size > 0, "the state was written on stop");

    chain = await startChain({ stateFile });
    try {
      assert.equal(
        await publicClient(chain.url).getBalance({ address: recipient }),
        parseEther("1.5"),
        "the balance survived the restart",
      );
      assert.equal(await publicClient(chain.url).getBlockNumber(), 1n, "and so did the block");
    } finally {
      await chain.stop();
    }

    // Without the state file the chain starts empty.
    const fresh = await throwawayChain();
    try {
      assert.equal(await publicClient(fresh.url).getBalance({ address: recipient }), 0n);
    } finally {
      await fresh.stop();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

test("[chain] a port that is already taken is refused with a clear error, not probed", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  try {
    await assert.rejects(startChain({ port }), /port \d+ on 127\.0\.0\.1 is in use/);
  } finally {
    listener.close();
  }
});

test("[chain] anvil does not outlive the process that started it, even one killed with SIGKILL", async () => {
  const script = `
    import { throwawayChain } from ${
    JSON.stringify(new URL("../../stack/chain/anvil.ts", import.meta.url).href)
  };
    const chain = await throwawayChain();
    console.log(chain.pid);
    await new Promise(() => {});
  `;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  await child.stdout.cancel();
  const pid = Number(text.trim());
  assert.ok(pid > 0 && processAlive(pid), `the child's anvil runs (${text.trim()})`);
  child.kill("SIGKILL");
  await child.status;
  assert.ok(await waitUntil(() => !processAlive(pid), 5_000), "anvil stopped with its parent");
});
