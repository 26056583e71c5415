/** Test helpers for the chain: the run's throwaway anvil (started by `npm test`) and process checks. */
import { createPublicClient, http, type PublicClient } from "viem";

/** The JSON-RPC URL of the run's throwaway chain (AGORA_TEST_RPC_URL, set by `npm test`). */
export function testRpcUrl(): string {
  const url = Deno.env.get("AGORA_TEST_RPC_URL");
  if (!url) throw new Error("AGORA_TEST_RPC_URL is not set: run the tests with `npm test`");
  return url;
}

export function publicClient(url = testRpcUrl()): PublicClient {
  return createPublicClient({ transport: http(url), pollingInterval: 20 }) as PublicClient;
}

/** True while process `pid` exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

export async function portOpen(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}
