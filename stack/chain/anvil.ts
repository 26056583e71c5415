/**
 * anvil (from the `@foundry-rs/anvil` npm package) as a child of the process that needs it: the
 * stack (`npm start`, with its state kept in a file between runs) or a test run and a benchmark
 * (a throwaway chain on a free port). It listens on 127.0.0.1 only.
 *
 * anvil runs under a small `sh` guard that holds the read end of a pipe from this process: the
 * guard stops anvil (SIGTERM, on which anvil writes its state file) when that pipe closes. So
 * `stop()` is only "close the pipe and wait", and a parent that dies in any way, even SIGKILL,
 * still takes its chain with it: no anvil is ever left behind.
 */
import type { Address } from "viem";
import { ANVIL_BIN } from "./paths.ts";

export interface ChainOptions {
  /** TCP port on 127.0.0.1; a free one when omitted. */
  port?: number;
  /** Load the chain from this file if it exists, and write it there on stop. */
  stateFile?: string;
  /** The chain id (anvil's default, 31337, unless told otherwise). */
  chainId?: number;
  /** Seconds between blocks; by default a block is mined for each transaction at once. */
  blockTime?: number;
  /** Where anvil's own error output goes, line by line (kept for the error message otherwise). */
  log?: (line: string) => void;
}

export interface Chain {
  /** The JSON-RPC endpoint, e.g. http://127.0.0.1:8545. */
  url: string;
  port: number;
  chainId: number;
  /** The anvil process (for tests that check it is gone). */
  pid: number;
  /** anvil's funded development accounts, unlocked: `eth_sendTransaction` from them needs no key. */
  accounts: Address[];
  /** Stops anvil (writing the state file if there is one) and waits until it is gone. */
  stop(): Promise<void>;
}

export const DEFAULT_CHAIN_ID = 31337;

// $@ is anvil and its arguments. The guard prints anvil's pid, then waits for its stdin to close
// (stop(), or this process gone); a SIGTERM, SIGINT or SIGHUP to the guard itself also stops anvil.
const GUARD = `"$@" </dev/null >/dev/null &
child=$!
echo "$child"
trap 'kill -TERM "$child" 2>/dev/null; wait "$child"; exit $?' TERM INT HUP
read -r _ || true
kill -TERM "$child" 2>/dev/null
wait "$child"`;

/** One JSON-RPC request; throws on a transport error or an RPC error. */
export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = await response.json() as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

function portFree(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch {
    return false;
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Starts anvil and resolves once it answers JSON-RPC (typically well under 100 ms). */
export async function startChain(opts: ChainOptions = {}): Promise<Chain> {
  const port = opts.port ?? freePort();
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID;
  // Without this check a node already on the port would answer the readiness probe.
  if (!portFree(port)) {
    throw new Error(`port ${port} on 127.0.0.1 is in use, so anvil cannot listen there`);
  }
  const args = [
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    "--chain-id",
    String(chainId),
    "--quiet",
    ...(opts.stateFile ? ["--state", opts.stateFile] : []),
    ...(opts.blockTime ? ["--block-time", String(opts.blockTime)] : []),
  ];
  const child = new Deno.Command("sh", {
    args: ["-c", GUARD, "anvil-guard", ANVIL_BIN, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdin = child.stdin.getWriter();

  let errorText = "";
  const decoder = new TextDecoder();
  const drainErrors = (async () => {
    let pending = "";
    for await (const chunk of child.stderr) {
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        if (opts.log) opts.log(line);
        errorText = (errorText + line + "\n").slice(-8_000);
      }
    }
  })().catch(() => {});
  const pidLine = (async () => {
    let text = "";
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes("\n")) break;
    }
    return Number(text.trim().split("\n")[0]);
  })();
  const exited = child.status.then((status) => status.code);

  let anvilPid = 0;
  let stopped: Promise<void> | null = null;
  const stop = () =>
    stopped ??= (async () => {
      await stdin.close().catch(() => {});
      const timeout = new Promise<"timeout">((r) => {
        const timer = setTimeout(() => r("timeout"), 15_000);
        Deno.unrefTimer(timer);
      });
      if (await Promise.race([exited, timeout]) === "timeout") {
        for (const pid of [anvilPid, child.pid]) {
          try {
            if (pid) Deno.kill(pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
        await exited;
      }
      await drainErrors;
    })();

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  try {
    anvilPid = await pidLine;
    for (;;) {
      const gone = await Promise.race([exited, new Promise((r) => setTimeout(r, 20, null))]);
      if (gone !== null) {
        throw new Error(`anvil exited (${gone}) before it answered:\n${errorText.trim()}`);
      }
      try {
        const answered = Number(await rpc<string>(url, "eth_chainId"));
        if (answered !== chainId) {
          throw new Error(`the node on ${url} says chain id ${answered}, expected ${chainId}`);
        }
        break;
      } catch (err) {
        if (err instanceof Error && err.message.includes("chain id")) throw err;
        if (Date.now() > deadline) throw new Error(`anvil did not answer on ${url} within 15 s`);
      }
    }
    const accounts = await rpc<Address[]>(url, "eth_accounts");
    return { url, port, chainId, pid: anvilPid, accounts, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A fresh, empty chain on a free port for a test run or a benchmark; nothing is written to disk. */
export async function throwawayChain(opts: Omit<ChainOptions, "port" | "stateFile"> = {}) {
  // Another process may take the free port between the probe and anvil's bind: try again.
  for (let attempt = 1;; attempt++) {
    try {
      return await startChain(opts);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}
