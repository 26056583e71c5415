/**
 * The load generator of the wallet sign-in benchmark (tests/bench/auth.ts), run as a process of
 * its own so that it does not share the server's event loop: posts prepared, signed
 * Sign-In with Ethereum bodies (each nonce works once) to POST /api/auth/signin, `concurrency` at a
 * time over keep-alive connections, and prints one JSON line: elapsed time, statuses, latencies.
 *
 *   deno run --allow-net --allow-read tests/bench/siwe-load.ts <url> <bodies.json> <concurrency>
 */
const [url, file, concurrencyText] = Deno.args;
const bodies: string[] = JSON.parse(await Deno.readTextFile(file));
const concurrency = Number(concurrencyText) || 16;
const statuses: Record<string, number> = {};
const latencies: number[] = [];
let next = 0;

async function worker() {
  while (next < bodies.length) {
    const body = bodies[next++];
    const started = performance.now();
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    await response.body?.cancel();
    latencies.push(performance.now() - started);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsedMs = performance.now() - started;
latencies.sort((a, b) => a - b);
const at = (q: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
console.log(JSON.stringify({ elapsedMs, statuses, p50Ms: at(0.5), p99Ms: at(0.99) }));
